/* The diff and apply commands: scan, plan the rewrite with spatch, show or write it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "fix/rewrite.h"
#include "fix/textdiff.h"
#include "util/writefile.h"

static bool want_color(const char *mode)
{
	if (!mode || strcmp(mode, "auto") == 0) {
		const char *nc = getenv("NO_COLOR");
		return !(nc && *nc) && isatty(STDOUT_FILENO);
	}
	return strcmp(mode, "always") == 0;
}

int rewrite_cli_run(const struct cli_command *cmd, const struct scan_cli *a, const struct rewrite_cli *o,
		    const struct cli_list *paths, struct scan_result *sr, struct rewrite_result *rr)
{
	struct rewrite_options ro = REWRITE_OPTIONS_INIT;
	struct scan_cli sa = *a;
	if (strcmp(o->target, "2.6") == 0) {
		ro.target = TARGET_26;
	} else if (strcmp(o->target, "modern") == 0) {
		ro.target = TARGET_MODERN;
		sa.modern = true;
	} else {
		fprintf(stderr, "preemptify %s: option '--target' must be 2.6 or modern, got '%s'\n",
			cmd->name, o->target);
		return EXIT_USAGE;
	}
	if (o->timeout <= 0) {
		fprintf(stderr, "preemptify %s: option '--timeout' must be > 0\n", cmd->name);
		return EXIT_USAGE;
	}
	int rc = scan_cli_run(cmd, &sa, paths, sr);
	if (rc == EXIT_USAGE)
		return rc;
	for (size_t i = 0; i < sr->diagnostics.len; i++) {
		const struct diagnostic *d = &sr->diagnostics.items[i];
		if (d->line)
			fprintf(stderr, "%s:%u:%u: note: %s\n", d->file, d->line, d->column, d->message);
		else
			fprintf(stderr, "%s: error: %s\n", d->file, d->message);
	}
	ro.jobs = a->jobs;
	ro.timeout_sec = o->timeout;
	ro.spatch = o->spatch;
	int nfail = rewrite_plan(sr, &ro, rr);
	if (nfail < 0) {
		fprintf(stderr, "preemptify %s: %s\n", cmd->name, error_last());
		return EXIT_FAILED;
	}
	for (size_t i = 0; i < rr->files.len; i++) {
		const struct file_change *c = &rr->files.items[i];
		for (size_t k = 0; k < c->refused.len; k++)
			fprintf(stderr, "%s:%u:%u: not fixed (%s): %s\n", c->path,
				c->refused.items[k].finding->pos.line,
				c->refused.items[k].finding->pos.column,
				rule_code(c->refused.items[k].finding->rule), c->refused.items[k].reason);
		if (c->error)
			fprintf(stderr, "%s: error: %s\n", c->path, c->error);
	}
	return nfail > 0 || rc == EXIT_FAILED ? EXIT_FAILED : EXIT_OK;
}

static int run(const char *name, bool apply, int argc, char **argv)
{
	const struct cli_command *cmd = cli_command_find(name);
	struct scan_cli a = SCAN_CLI_INIT;
	struct rewrite_cli o = REWRITE_CLI_INIT;
	const char *color = "auto", *backup = NULL;
	bool stat = false;
	struct cli_list paths = {0};
	struct scan_result sr = SCAN_RESULT_INIT;
	struct rewrite_result rr = REWRITE_RESULT_INIT;
	struct buf out = BUF_INIT;
	int code = EXIT_USAGE;

	const struct cli_option diff_opts[] = {
		REWRITE_CLI_OPTIONS(&o),
		{"color", 0, OPT_STRING, &color, "WHEN", "auto, always or never (NO_COLOR honoured)"},
		{"stat", 0, OPT_FLAG, &stat, NULL, "show changed-line counts per file, not the diff"},
		SCAN_CLI_OPTIONS(&a),
		{NULL, 0, 0, NULL, NULL, NULL},
	};
	const struct cli_option apply_opts[] = {
		REWRITE_CLI_OPTIONS(&o),
		{"backup", 0, OPT_STRING, &backup, "SUFFIX", "keep each original as FILE+SUFFIX"},
		{"stat", 0, OPT_FLAG, &stat, NULL, "show changed-line counts per file"},
		SCAN_CLI_OPTIONS(&a),
		{NULL, 0, 0, NULL, NULL, NULL},
	};
	int r = cli_parse(cmd, apply ? apply_opts : diff_opts, argc, argv, &paths);
	if (r != 0) {
		code = r > 0 ? EXIT_OK : EXIT_USAGE;
		goto done;
	}
	if (strcmp(color, "auto") && strcmp(color, "always") && strcmp(color, "never")) {
		fprintf(stderr, "preemptify %s: option '--color' must be auto, always or never\n", name);
		goto done;
	}
	int rc = rewrite_cli_run(cmd, &a, &o, &paths, &sr, &rr);
	if (rc == EXIT_USAGE)
		goto done;
	bool failed = rc == EXIT_FAILED;

	struct textdiff_options dopt = TEXTDIFF_OPTIONS_INIT;
	dopt.color = want_color(color);
	size_t changed = 0, fixed = 0, refused = 0;
	size_t per_fix[FIX_COUNT] = {0};
	for (size_t i = 0; i < rr.files.len; i++) {
		const struct file_change *c = &rr.files.items[i];
		refused += c->refused.len;
		if (c->new_len == c->old_len && memcmp(c->new_text, c->old_text, c->old_len) == 0)
			continue;
		changed++;
		fixed += c->fixed.len;
		for (size_t k = 0; k < c->fixed.len; k++)
			per_fix[c->fixed.items[k]->fix]++;
		if (stat) {
			size_t add = 0, del = 0;
			textdiff_count(c->old_text, c->old_len, c->new_text, c->new_len, &add, &del);
			char *p = textdiff_display_path(c->path);
			buf_printf(&out, " %s | %zu +%zu -%zu\n", p, add + del, add, del);
			free(p);
		} else if (!apply) {
			if (textdiff_unified(&out, c->path, c->old_text, c->old_len, c->new_text,
					     c->new_len, &dopt) < 0) {
				fprintf(stderr, "%s: error: %s\n", c->path, error_last());
				failed = true;
			}
		}
		if (apply) {
			if (writefile_replace(c->path, c->old_text, c->old_len, c->new_text, c->new_len,
					      backup) < 0) {
				fprintf(stderr, "%s: error: %s\n", c->path, error_last());
				failed = true;
				changed--;
			} else if (!stat) {
				buf_printf(&out, "fixed %s (%zu site%s)\n", c->path, c->fixed.len,
					   c->fixed.len == 1 ? "" : "s");
			}
		}
	}
	fputs(buf_cstr(&out), stdout);
	if (stat)
		printf(" %zu file%s changed\n", changed, changed == 1 ? "" : "s");
	fprintf(stderr, "preemptify: %zu file%s %s, %zu site%s fixed", changed, changed == 1 ? "" : "s",
		apply ? "changed" : "to change", fixed, fixed == 1 ? "" : "s");
	const char *sep = " (";
	for (int k = 1; k < FIX_COUNT; k++)
		if (per_fix[k]) {
			fprintf(stderr, "%s%s: %zu", sep, fix_name(k), per_fix[k]);
			sep = ", ";
		}
	fprintf(stderr, "%s, %zu not fixed\n", fixed ? ")" : "", refused);
	code = failed ? EXIT_FAILED : changed ? EXIT_FOUND : EXIT_OK;
done:
	buf_free(&out);
	rewrite_result_free(&rr);
	scan_result_free(&sr);
	cli_list_free(&paths);
	scan_cli_free(&a);
	return code;
}

int cmd_diff(int argc, char **argv)
{
	return run("diff", false, argc, argv);
}

int cmd_apply(int argc, char **argv)
{
	return run("apply", true, argc, argv);
}
