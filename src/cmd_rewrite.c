/* The diff and apply commands: scan, plan the rewrite with spatch, show or write it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "rewrite.h"
#include "scan.h"
#include "textdiff.h"
#include "walk.h"
#include "writefile.h"

int cmd_diff(int argc, char **argv);
int cmd_apply(int argc, char **argv);

struct rewrite_cli {
	int timeout, jobs;
	const char *target, *color, *backup;
	bool stat;
	struct cli_list exclude, ignore;
};

static bool want_color(const char *mode)
{
	if (!mode || strcmp(mode, "auto") == 0) {
		const char *nc = getenv("NO_COLOR");
		return !(nc && *nc) && isatty(STDOUT_FILENO);
	}
	return strcmp(mode, "always") == 0;
}

static int run(const struct cli_command *cmd, bool apply, int argc, char **argv)
{
	struct rewrite_cli o = {60, 0, "2.6", "auto", NULL, false, {0}, {0}};
	struct cli_list paths = {0};
	path_vec files = VEC_INIT;
	diagnostic_vec diags = VEC_INIT;
	struct scan_result sr = SCAN_RESULT_INIT;
	struct rewrite_result rr = REWRITE_RESULT_INIT;
	struct buf out = BUF_INIT;
	int code = EXIT_FAILED;

	const struct cli_option opts[] = {
		{"timeout", 0, OPT_INT, &o.timeout, "SEC", "per-file spatch time limit (default 60)"},
		{"jobs", 'j', OPT_INT, &o.jobs, "N", "parallel spatch processes (default: CPUs)"},
		{"target", 0, OPT_STRING, &o.target, "2.6|modern", "API generation to port to"},
		{"color", 0, OPT_STRING, &o.color, "WHEN", "auto, always or never (NO_COLOR honoured)"},
		{"stat", 0, OPT_FLAG, &o.stat, NULL, "show changed-line counts per file, not the diff"},
		{"backup", 0, OPT_STRING, &o.backup, "SUFFIX",
		 apply ? "keep each original as FILE+SUFFIX" : "(apply only)"},
		{"exclude", 0, OPT_LIST, &o.exclude, "GLOB", "skip paths matching GLOB"},
		{"ignore", 0, OPT_LIST, &o.ignore, "RULE", "do not fix findings of RULE (P003, cpu-id)"},
		{NULL, 0, 0, NULL, NULL, NULL},
	};
	int r = cli_parse(cmd, opts, argc, argv, &paths);
	if (r != 0) {
		code = r > 0 ? EXIT_OK : EXIT_USAGE;
		goto done;
	}
	if (paths.len == 0) {
		cli_usage(stderr, cmd, opts);
		code = EXIT_USAGE;
		goto done;
	}
	struct rewrite_options ro = REWRITE_OPTIONS_INIT;
	if (strcmp(o.target, "2.6") == 0) {
		ro.target = TARGET_26;
	} else if (strcmp(o.target, "modern") == 0) {
		/* this_cpu_inc/add/write and preempt_enable() rewrites: not built yet. */
		fprintf(stderr, "preemptify: --target modern is not implemented yet\n");
		code = EXIT_USAGE;
		goto done;
	} else {
		fprintf(stderr, "preemptify: --target must be 2.6 or modern\n");
		code = EXIT_USAGE;
		goto done;
	}
	if (strcmp(o.color, "auto") && strcmp(o.color, "always") && strcmp(o.color, "never")) {
		fprintf(stderr, "preemptify: --color must be auto, always or never\n");
		code = EXIT_USAGE;
		goto done;
	}
	if (o.timeout <= 0 || o.jobs < 0) {
		fprintf(stderr, "preemptify: --timeout must be > 0 and -j >= 0\n");
		code = EXIT_USAGE;
		goto done;
	}
	struct scan_options so = SCAN_OPTIONS_INIT;
	for (size_t i = 0; i < o.ignore.len; i++) {
		int rule = rule_parse(o.ignore.items[i]);
		if (rule < 0) {
			fprintf(stderr, "preemptify: unknown rule '%s'\n", o.ignore.items[i]);
			code = EXIT_USAGE;
			goto done;
		}
		so.rules &= ~(1u << rule);
	}
	so.jobs = o.jobs;
	ro.jobs = o.jobs;
	ro.timeout_sec = o.timeout;

	struct walk_options wo = {o.exclude.items, o.exclude.len};
	bool failed = walk_paths(paths.items, paths.len, &wo, &files, &diags) < 0;
	for (size_t i = 0; i < diags.len; i++)
		fprintf(stderr, "preemptify: %s: %s\n", diags.items[i].file, diags.items[i].message);
	failed |= scan_files(files.items, files.len, &so, &sr) > 0;

	int nfail = rewrite_plan(&sr, &ro, &rr);
	if (nfail < 0) {
		fprintf(stderr, "preemptify: %s\n", error_last());
		code = EXIT_FAILED;
		goto done;
	}
	failed |= nfail > 0;

	struct textdiff_options dopt = TEXTDIFF_OPTIONS_INIT;
	dopt.color = want_color(o.color);
	size_t changed = 0;
	for (size_t i = 0; i < rr.files.len; i++) {
		const struct file_change *c = &rr.files.items[i];
		for (size_t k = 0; k < c->refused.len; k++)
			fprintf(stderr, "%s:%u:%u: not fixed (%s): %s\n", c->path,
				c->refused.items[k].finding->pos.line,
				c->refused.items[k].finding->pos.column,
				rule_code(c->refused.items[k].finding->rule), c->refused.items[k].reason);
		if (c->error)
			fprintf(stderr, "preemptify: %s: %s\n", c->path, c->error);
		if (c->new_len == c->old_len && memcmp(c->new_text, c->old_text, c->old_len) == 0)
			continue;
		changed++;
		if (o.stat) {
			size_t add = 0, del = 0;
			textdiff_count(c->old_text, c->old_len, c->new_text, c->new_len, &add, &del);
			char *p = textdiff_display_path(c->path);
			buf_printf(&out, " %s | %zu +%zu -%zu\n", p, add + del, add, del);
			free(p);
		} else if (!apply) {
			if (textdiff_unified(&out, c->path, c->old_text, c->old_len, c->new_text,
					     c->new_len, &dopt) < 0) {
				fprintf(stderr, "preemptify: %s: %s\n", c->path, error_last());
				failed = true;
			}
		}
		if (apply) {
			if (writefile_replace(c->path, c->old_text, c->old_len, c->new_text, c->new_len,
					      o.backup) < 0) {
				fprintf(stderr, "preemptify: %s\n", error_last());
				failed = true;
				changed--;
			} else if (!o.stat) {
				buf_printf(&out, "fixed %s (%zu finding%s)\n", c->path, c->fixed.len,
					   c->fixed.len == 1 ? "" : "s");
			}
		}
	}
	fputs(buf_cstr(&out), stdout);
	if (o.stat)
		printf(" %zu file%s changed\n", changed, changed == 1 ? "" : "s");
	code = failed ? EXIT_FAILED : changed ? EXIT_FOUND : EXIT_OK;
done:
	buf_free(&out);
	rewrite_result_free(&rr);
	scan_result_free(&sr);
	path_vec_free(&files);
	for (size_t i = 0; i < diags.len; i++)
		diagnostic_free(&diags.items[i]);
	vec_free(&diags);
	cli_list_free(&paths);
	cli_list_free(&o.exclude);
	cli_list_free(&o.ignore);
	return code;
}

int cmd_diff(int argc, char **argv)
{
	static const struct cli_command cmd = {"diff", "[options] PATH...",
		"show the fixes as a unified diff (nothing is written)", cmd_diff};
	return run(&cmd, false, argc, argv);
}

int cmd_apply(int argc, char **argv)
{
	static const struct cli_command cmd = {"apply", "[options] PATH...",
		"write the fixes into the files (atomically, unchanged files only)", cmd_apply};
	return run(&cmd, true, argc, argv);
}
