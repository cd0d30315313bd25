/* test-tool: scan files and print findings in a stable, compact form (analysis tests). */
#include <stdio.h>
#include <string.h>

#include "scan.h"

int main(int argc, char **argv)
{
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
	scan_result_free(&r);
	return 0;
}
