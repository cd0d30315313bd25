#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct cli_option *find_long(const struct cli_option *opts, const char *name, size_t len)
{
	for (const struct cli_option *o = opts; o->name; o++)
		if (strlen(o->name) == len && memcmp(o->name, name, len) == 0)
			return o;
	return NULL;
}

static const struct cli_option *find_short(const struct cli_option *opts, char c)
{
	for (const struct cli_option *o = opts; o->name; o++)
		if (o->short_name == c)
			return o;
	return NULL;
}

static int set_value(const struct cli_command *cmd, const struct cli_option *o, const char *val)
{
	switch (o->type) {
	case OPT_FLAG:
		*(bool *)o->dest = true;
		return 0;
	case OPT_STRING:
		*(const char **)o->dest = val;
		return 0;
	case OPT_INT: {
		char *end;
		errno = 0;
		long v = strtol(val, &end, 10);
		if (errno || *end || end == val || v < 0 || v > 1000000) {
			fprintf(stderr, "preemptify %s: --%s: not a number: '%s'\n", cmd->name, o->name, val);
			return -1;
		}
		*(int *)o->dest = (int)v;
		return 0;
	}
	case OPT_LIST: {
		struct cli_list *l = o->dest;
		const char *p = val;
		while (*p) {
			const char *comma = strchr(p, ',');
			size_t n = comma ? (size_t)(comma - p) : strlen(p);
			if (n) {
				vec_reserve(l, 1);
				l->items[l->len++] = xstrndup(p, n);
			}
			p += n + (comma ? 1 : 0);
		}
		return 0;
	}
	}
	return -1;
}

int cli_parse(const struct cli_command *cmd, const struct cli_option *opts, int argc, char **argv,
	      struct cli_list *positional)
{
	bool options_done = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (options_done || a[0] != '-' || a[1] == '\0') {
			vec_reserve(positional, 1);
			positional->items[positional->len++] = xstrdup(a);
			continue;
		}
		if (strcmp(a, "--") == 0) {
			options_done = true;
			continue;
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			cli_usage(stdout, cmd, opts);
			return 1;
		}
		const struct cli_option *o;
		const char *val = NULL;
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			o = find_long(opts, a + 2, len);
			if (!o) {
				fprintf(stderr, "preemptify %s: unknown option '%s' (see --help)\n", cmd->name, a);
				return -1;
			}
			if (eq)
				val = eq + 1;
		} else {
			o = find_short(opts, a[1]);
			if (!o) {
				fprintf(stderr, "preemptify %s: unknown option '%s' (see --help)\n", cmd->name, a);
				return -1;
			}
			if (a[2])
				val = a + 2;
		}
		if (o->type == OPT_FLAG) {
			if (val) {
				fprintf(stderr, "preemptify %s: --%s takes no value\n", cmd->name, o->name);
				return -1;
			}
		} else if (!val) {
			if (i + 1 >= argc) {
				fprintf(stderr, "preemptify %s: --%s needs a value (%s)\n", cmd->name, o->name, o->arg);
				return -1;
			}
			val = argv[++i];
		}
		if (set_value(cmd, o, val) < 0)
			return -1;
	}
	return 0;
}

void cli_usage(FILE *out, const struct cli_command *cmd, const struct cli_option *opts)
{
	fprintf(out, "usage: preemptify %s %s\n\n%s\n\noptions:\n", cmd->name, cmd->synopsis, cmd->summary);
	for (const struct cli_option *o = opts; o->name; o++) {
		char left[64];
		if (o->short_name)
			snprintf(left, sizeof left, "-%c, --%s%s%s", o->short_name, o->name, o->arg ? " " : "",
				 o->arg ? o->arg : "");
		else
			snprintf(left, sizeof left, "    --%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
		fprintf(out, "  %-28s %s\n", left, o->help);
	}
	fprintf(out, "  %-28s %s\n", "-h, --help", "show this help");
}

void cli_list_free(struct cli_list *l)
{
	for (size_t i = 0; i < l->len; i++)
		free(l->items[i]);
	free(l->items);
	l->items = NULL;
	l->len = l->cap = 0;
}
