/* test-tool: scan files and print findings in a stable, compact form (analysis tests). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/scan.h"

/*
 * FILE's findings (not protected sites) scanned with the option OPT
 * (--modernize, --fix-sleep) or none (NULL),
 * against EXP_PATH, lines "LINE:COL RULE FIX"; prints the differences.
 * Returns 1 on a difference, 0 when they agree.
 */
static int check_one(const char *file, const char *exp_path, const char *opt)
{
	struct scan_options opts = SCAN_OPTIONS_INIT;
	opts.jobs = 1;
	opts.modernize = opt && strcmp(opt, "--modernize") == 0;
	opts.fix_sleep = opt && strcmp(opt, "--fix-sleep") == 0;
	struct scan_result r = SCAN_RESULT_INIT;
	char *path = xstrdup(file);
	scan_files(&path, 1, &opts, &r);
	free(path);
	struct buf got = BUF_INIT;
	for (size_t k = 0; k < r.findings.len; k++) {
		const struct finding *f = &r.findings.items[k];
		buf_printf(&got, "%u:%u %s %s\n", f->pos.line, f->pos.column, rule_code(f->rule), fix_name(f->fix));
	}
	for (size_t k = 0; k < r.diagnostics.len; k++)
		buf_printf(&got, "%u:%u diag %s\n", r.diagnostics.items[k].line, r.diagnostics.items[k].column,
			   r.diagnostics.items[k].message);
	char *want = NULL;
	size_t want_len = 0;
	int bad = 0;
	if (read_file(exp_path, &want, &want_len) < 0) {
		printf("%s: %s\n", file, error_last());
		bad = 1;
	} else if (strcmp(want, buf_cstr(&got)) != 0) {
		printf("MISMATCH %s%s%s%s\n--- expected\n%s--- got\n%s", file, opt ? " (" : "", opt ? opt : "",
		       opt ? ")" : "", want,
		       buf_cstr(&got));
		bad = 1;
	}
	free(want);
	buf_release(&got);
	scan_result_release(&r);
	return bad;
}

/*
 * --check: compares each FILE.c's findings with FILE.expect, and with
 * --modernize with FILE.modernize.expect where there is one (a fixture
 * that also shows what --modernize converts), and with --fix-sleep with
 * FILE.fix-sleep.expect likewise.
 */
static int check_expect(char **files, int n)
{
	int bad = 0, checks = 0;
	for (int i = 0; i < n; i++) {
		size_t len = strlen(files[i]);
		int stem = (int)(len > 2 ? len - 2 : len);
		char *exp_path = xasprintf("%.*s.expect", stem, files[i]);
		char *modern = xasprintf("%.*s.modernize.expect", stem, files[i]);
		char *sleep = xasprintf("%.*s.fix-sleep.expect", stem, files[i]);
		bad += check_one(files[i], exp_path, NULL);
		checks++;
		if (access(modern, F_OK) == 0) {
			bad += check_one(files[i], modern, "--modernize");
			checks++;
		}
		if (access(sleep, F_OK) == 0) {
			bad += check_one(files[i], sleep, "--fix-sleep");
			checks++;
		}
		free(exp_path);
		free(modern);
		free(sleep);
	}
	printf("%d passed, %d failed\n", checks - bad, bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--check") == 0)
		return check_expect(argv + 2, argc - 2);
	struct scan_options opts = SCAN_OPTIONS_INIT;
	int first = 1;
	if (argc > 1 && strcmp(argv[1], "-v") == 0) {
		opts.verbose = true;
		first = 2;
	}
	opts.jobs = 1;
	struct scan_result r = SCAN_RESULT_INIT;
	scan_files(argv + first, (size_t)(argc - first), &opts, &r);
	for (size_t i = 0; i < r.findings.len; i++) {
		const struct finding *f = &r.findings.items[i];
		printf("%s:%u:%u %s %s%s [%s] %s\n    why: %s\n", f->file, f->pos.line, f->pos.column,
		       rule_code(f->rule), fix_name(f->fix), f->protected_site ? " (protected)" : "",
		       f->function ? f->function : "-", f->message, f->evidence ? f->evidence : "");
		if (f->fix_note)
			printf("    note: %s\n", f->fix_note);
		for (size_t k = 0; k < f->edits.len; k++) {
			const struct edit *e = &f->edits.items[k];
			static const char *const ops[] = {"replace", "insert-before", "insert-after"};
			printf("    edit: %s %u:%u-%u:%u %s \"%s\"\n", ops[e->op], e->start.line, e->start.column,
			       e->end.line, e->end.column, e->node, e->text);
		}
	}
	for (size_t i = 0; i < r.diagnostics.len; i++)
		printf("%s:%u:%u diag %s\n", r.diagnostics.items[i].file, r.diagnostics.items[i].line,
		       r.diagnostics.items[i].column, r.diagnostics.items[i].message);
	scan_result_release(&r);
	return 0;
}
