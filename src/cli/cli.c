/*
 * Option tables: one table per command both parses argv and prints --help.
 *
 * Accepted forms: `--name VALUE`, `--name=VALUE`, `-x VALUE`, `-xVALUE`,
 * bundled short flags (`-vq`), `--` to end options. Options and positional
 * arguments may be interleaved. Every error is one line on stderr naming the
 * command and the option.
 */
#include "cli/cli.h"
#include "cli/cache.h"
#include "cli/commands.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *cmd_name(const struct cli_command *cmd)
{
	return cmd && cmd->name ? cmd->name : "preemptify";
}

static void cli_error(const struct cli_command *cmd, const char *fmt, ...) PRINTF_LIKE(2, 3);

static void cli_error(const struct cli_command *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "preemptify %s: ", cmd_name(cmd));
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'preemptify %s --help')\n", cmd_name(cmd));
}

static const struct cli_option *find_long(const struct cli_option *opts, const char *name, size_t len)
{
	for (const struct cli_option *o = opts; o->name; o++)
		if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
			return o;
	return NULL;
}

int cli_color(const struct cli_command *cmd, const char *when, int fd)
{
	if (strcmp(when, "always") == 0)
		return 1;
	if (strcmp(when, "never") == 0)
		return 0;
	if (strcmp(when, "auto") != 0) {
		cli_error(cmd, "option '--color' must be auto, always or never");
		return -1;
	}
	const char *nc = getenv("NO_COLOR");
	return !(nc && *nc) && fd >= 0 && cache_terminal_fd(fd) >= 0;
}

/* The long option closest to the mistyped NAME[0..len), if close enough to be what was meant. */
static const struct cli_option *nearest_long(const struct cli_option *opts, const char *name, size_t len)
{
	VEC(const char *) names = VEC_INIT;
	for (const struct cli_option *o = opts; o->name; o++)
		vec_push(&names, o->name);
	const char *near = nearest_word(name, len, names.items, names.len);
	vec_release(&names);
	for (const struct cli_option *o = opts; near && o->name; o++)
		if (o->name == near)
			return o;
	return NULL;
}

static const struct cli_option *find_short(const struct cli_option *opts, char c)
{
	for (const struct cli_option *o = opts; o->name; o++)
		if (o->short_name && o->short_name == c)
			return o;
	return NULL;
}

/* Splits VALUE on commas; empty items (a trailing comma) are dropped. */
static void list_add_csv(struct strvec *l, const char *value)
{
	const char *p = value;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (n)
			vec_push(l, xstrndup(p, n));
		if (!comma)
			break;
		p = comma + 1;
	}
}

/*
 * Stores VALUE for O. SPELLED is how the user named the option ("--jobs"
 * or "-j"), for the error message. Returns 0 or -1 (message printed).
 */
static int store(const struct cli_command *cmd, const struct cli_option *o, const char *spelled,
		 const char *value)
{
	switch (o->type) {
	case OPT_FLAG:
		*(bool *)o->dest = true;
		return 0;
	case OPT_STRING:
		*(const char **)o->dest = value;
		return 0;
	case OPT_INT: {
		char *end;
		errno = 0;
		long v = strtol(value, &end, 10);
		if (*value == '\0' || *end != '\0' || errno || v < INT_MIN || v > INT_MAX) {
			cli_error(cmd, "option '%s' expects an integer, got '%s'", spelled, value);
			return -1;
		}
		*(int *)o->dest = (int)v;
		return 0;
	}
	case OPT_LIST:
		list_add_csv(o->dest, value);
		return 0;
	case OPT_TARGET: {
		enum target t = target_parse(value);
		if (t == TARGET_UNSET) {
			cli_error(cmd, "option '%s' must be 2.6 or modern, got '%s'", spelled, value);
			return -1;
		}
		*(enum target *)o->dest = t;
		return 0;
	}
	}
	return 0;
}

static bool takes_arg(const struct cli_option *o)
{
	return o->type != OPT_FLAG;
}

static cli_options_fn capture;
static void *capture_ctx;

void cli_capture_options(cli_options_fn fn, void *ctx)
{
	capture = fn;
	capture_ctx = ctx;
}

int cli_parse(const struct cli_command *cmd, const struct cli_option *opts,
	      int argc, char **argv, struct strvec *positional)
{
	if (capture) {
		capture(cmd, opts, capture_ctx);
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			for (i++; i < argc; i++)
				strvec_push(positional, argv[i]);
			break;
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			cli_usage(stdout, cmd, opts);
			return 1;
		}
		if (a[0] != '-' || a[1] == '\0') { /* "-" alone is an operand */
			strvec_push(positional, a);
			continue;
		}
		if (a[1] == '-') {
			const char *name = a + 2;
			const char *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			const struct cli_option *o = find_long(opts, name, len);
			char *spelled = xasprintf("--%.*s", (int)len, name);
			int rc = 0;
			const struct cli_option *near = o ? NULL : nearest_long(opts, name, len);
			if (!o && near) {
				fprintf(stderr, "preemptify %s: unknown option '%s'; did you mean '--%s'? (see 'preemptify "
					"%s --help')\n", cmd_name(cmd), spelled, near->name, cmd_name(cmd));
				rc = -1;
			} else if (!o) {
				cli_error(cmd, "unknown option '%s'", spelled);
				rc = -1;
			} else if (!takes_arg(o) && eq) {
				cli_error(cmd, "option '%s' takes no argument", spelled);
				rc = -1;
			} else if (takes_arg(o) && !eq && i + 1 >= argc) {
				cli_error(cmd, "option '%s' needs an argument (%s)", spelled, o->arg ? o->arg : "VALUE");
				rc = -1;
			} else {
				rc = store(cmd, o, spelled, !takes_arg(o) ? NULL : eq ? eq + 1 : argv[++i]);
			}
			free(spelled);
			if (rc < 0)
				return -1;
			continue;
		}
		/* One or more short options: flags bundle, the first one taking an
		 * argument consumes the rest of the word or the next word. */
		for (const char *p = a + 1; *p; p++) {
			char spelled[3] = {'-', *p, '\0'};
			const struct cli_option *o = find_short(opts, *p);
			if (!o) {
				cli_error(cmd, "unknown option '%s'", spelled);
				return -1;
			}
			if (!takes_arg(o)) {
				store(cmd, o, spelled, NULL);
				continue;
			}
			const char *value = p[1] ? p + 1 : (i + 1 < argc ? argv[++i] : NULL);
			if (!value) {
				cli_error(cmd, "option '%s' needs an argument (%s)", spelled, o->arg ? o->arg : "VALUE");
				return -1;
			}
			if (store(cmd, o, spelled, value) < 0)
				return -1;
			break;
		}
	}
	return 0;
}

void cli_usage(FILE *out, const struct cli_command *cmd, const struct cli_option *opts)
{
	fprintf(out, "usage: preemptify %s %s\n", cmd_name(cmd), cmd && cmd->synopsis ? cmd->synopsis : "");
	if (cmd && cmd->summary)
		fprintf(out, "\n%s\n", cmd->summary);
	fputs("\noptions:\n", out);
	struct buf left = BUF_INIT;
	for (const struct cli_option *o = opts; ; o++) {
		const char *name = o->name ? o->name : "help";
		char short_name = o->name ? o->short_name : 'h';
		buf_clear(&left);
		if (short_name)
			buf_printf(&left, "-%c, ", short_name);
		else
			buf_puts(&left, "    ");
		buf_printf(&left, "--%s", name);
		if (o->name && takes_arg(o))
			buf_printf(&left, " %s%s", o->arg ? o->arg : "VALUE", o->type == OPT_LIST ? "[,...]" : "");
		const char *help = o->name ? o->help : "show this help";
		if (left.len <= 26)
			fprintf(out, "  %-26s  %s", buf_cstr(&left), help);
		else
			fprintf(out, "  %s\n  %-26s  %s", buf_cstr(&left), "", help);
		if (o->name && o->type == OPT_LIST)
			fputs(" (repeatable)", out);
		fputc('\n', out);
		if (!o->name)
			break;
	}
	buf_release(&left);
}

static const struct cli_command *registered;
static size_t n_registered;

void cli_commands_set(const struct cli_command *table, size_t n)
{
	registered = table;
	n_registered = n;
}

const struct cli_command *cli_commands(size_t *n)
{
	*n = n_registered;
	return registered;
}

const struct cli_command *cli_command_find(const char *name)
{
	static struct cli_command unregistered;
	for (size_t i = 0; i < n_registered; i++)
		if (strcmp(registered[i].name, name) == 0)
			return &registered[i];
	unregistered.name = name;
	unregistered.synopsis = "[options]";
	return &unregistered;
}
