/* The scan, explain and rules commands. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "emit.h"
#include "parallel.h"
#include "scan.h"
#include "walk.h"

struct scan_args {
	const char *format;
	int jobs;
	bool verbose, no_prefilter;
	struct cli_list exclude, ignore;
};

/* Shared by scan and explain: the rule mask from --ignore. */
static int rules_mask(const struct cli_command *cmd, const struct cli_list *ignore, unsigned *out)
{
	*out = (1u << RULE_COUNT) - 1;
	for (size_t i = 0; i < ignore->len; i++) {
		int r = rule_parse(ignore->items[i]);
		if (r < 0) {
			fprintf(stderr, "preemptify %s: --ignore: unknown rule '%s' (see preemptify rules)\n",
				cmd->name, ignore->items[i]);
			return -1;
		}
		*out &= ~(1u << r);
	}
	return 0;
}

int cmd_scan(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_rules(int argc, char **argv);

static const struct cli_command scan_cmd = {"scan", "[options] PATH...",
	"Report code that is not preempt-safe in 2.6 (rules P001-P007).", cmd_scan};

int cmd_scan(int argc, char **argv)
{
	struct scan_args a = {"text", 0, false, false, {0}, {0}};
	const struct cli_option opts[] = {
		{"format", 'f', OPT_STRING, &a.format, "FMT", "output format: text (default), json, sarif"},
		{"jobs", 'j', OPT_INT, &a.jobs, "N", "files analysed in parallel (default: online CPUs)"},
		{"exclude", 0, OPT_LIST, &a.exclude, "GLOB", "skip paths matching GLOB (repeatable)"},
		{"ignore", 0, OPT_LIST, &a.ignore, "RULES", "skip rules, e.g. P006,P007 (repeatable)"},
		{"verbose", 'v', OPT_FLAG, &a.verbose, NULL, "also list protected sites, with the reason"},
		{"no-prefilter", 0, OPT_FLAG, &a.no_prefilter, NULL,
		 "analyse files without preemption tokens too (P006/P007 everywhere; slower)"},
		{NULL, 0, 0, NULL, NULL, NULL},
	};
	struct cli_list paths = {0};
	int rc = EXIT_USAGE;
	path_vec files = VEC_INIT;
	struct scan_result r = SCAN_RESULT_INIT;
	int p = cli_parse(&scan_cmd, opts, argc, argv, &paths);
	if (p != 0) {
		rc = p > 0 ? EXIT_OK : EXIT_USAGE;
		goto done;
	}
	int fmt = output_format_parse(a.format);
	if (fmt < 0) {
		fprintf(stderr, "preemptify scan: --format: unknown format '%s' (text, json, sarif)\n", a.format);
		goto done;
	}
	if (paths.len == 0) {
		fprintf(stderr, "preemptify scan: no PATH given (see --help)\n");
		goto done;
	}
	struct scan_options so = SCAN_OPTIONS_INIT;
	if (rules_mask(&scan_cmd, &a.ignore, &so.rules) < 0)
		goto done;
	so.verbose = a.verbose;
	so.jobs = a.jobs;
	so.no_prefilter = a.no_prefilter;
	struct walk_options wo = {a.exclude.items, a.exclude.len};
	int walk_failed = walk_paths(paths.items, paths.len, &wo, &files, &r.diagnostics) < 0;
	int failed = scan_files(files.items, files.len, &so, &r);
	emit_result(stdout, (enum output_format)fmt, &r, a.verbose);
	emit_summary(stderr, &r);
	size_t total = 0;
	for (int k = 0; k < RULE_COUNT; k++)
		total += r.stats.per_rule[k];
	rc = walk_failed || failed ? EXIT_FAILED : total ? EXIT_FOUND : EXIT_OK;
done:
	cli_list_free(&paths);
	cli_list_free(&a.exclude);
	cli_list_free(&a.ignore);
	path_vec_free(&files);
	scan_result_free(&r);
	return rc;
}

static const struct cli_command explain_cmd = {"explain", "[options] FILE:LINE",
	"Explain the verdict for every site on one line: rule, reasoning, context and planned fix.",
	cmd_explain};

int cmd_explain(int argc, char **argv)
{
	struct cli_list ignore = {0};
	const struct cli_option opts[] = {
		{"ignore", 0, OPT_LIST, &ignore, "RULES", "skip rules"},
		{NULL, 0, 0, NULL, NULL, NULL},
	};
	struct cli_list args = {0};
	int rc = EXIT_USAGE;
	char *file = NULL;
	struct scan_result r = SCAN_RESULT_INIT;
	int p = cli_parse(&explain_cmd, opts, argc, argv, &args);
	if (p != 0) {
		rc = p > 0 ? EXIT_OK : EXIT_USAGE;
		goto done;
	}
	const char *colon = args.len == 1 ? strrchr(args.items[0], ':') : NULL;
	char *end = NULL;
	long line = colon ? strtol(colon + 1, &end, 10) : 0;
	if (!colon || !end || *end || line <= 0) {
		fprintf(stderr, "preemptify explain: expected FILE:LINE (see --help)\n");
		goto done;
	}
	file = xstrndup(args.items[0], (size_t)(colon - args.items[0]));
	struct scan_options so = SCAN_OPTIONS_INIT;
	if (rules_mask(&explain_cmd, &ignore, &so.rules) < 0)
		goto done;
	so.verbose = true;
	so.jobs = 1;
	if (scan_files(&file, 1, &so, &r) > 0) {
		for (size_t i = 0; i < r.diagnostics.len; i++)
			fprintf(stderr, "preemptify explain: %s\n", r.diagnostics.items[i].message);
		rc = EXIT_FAILED;
		goto done;
	}
	static const char *const ops[] = {"replace", "insert before", "insert after"};
	size_t shown = 0;
	for (size_t i = 0; i < r.findings.len; i++) {
		const struct finding *f = &r.findings.items[i];
		if (f->pos.line != (unsigned)line)
			continue;
		shown++;
		printf("%s:%u:%u: %s %s (%s)\n", f->file, f->pos.line, f->pos.column, rule_code(f->rule),
		       rule_name(f->rule), rule_summary(f->rule));
		printf("  function:   %s\n", f->function ? f->function : "(file scope)");
		printf("  verdict:    %s\n", f->protected_site ? "protected: not a finding" : f->message);
		if (!f->protected_site)
			printf("  severity:   %s, confidence %s\n", severity_name(f->severity),
			       confidence_name(f->confidence));
		printf("  reasoning:  %s\n", f->evidence ? f->evidence : "");
		if (!f->protected_site) {
			printf("  fix:        %s\n", f->fix == FIX_NONE ? "none (report only or refused)" : fix_name(f->fix));
			if (f->fix_note)
				printf("  note:       %s\n", f->fix_note);
			for (size_t k = 0; k < f->edits.len; k++) {
				const struct edit *e = &f->edits.items[k];
				printf("  edit:       %s %s at %u:%u-%u:%u: \"%s\"\n", ops[e->op], e->node,
				       e->start.line, e->start.column, e->end.line, e->end.column, e->text);
			}
		}
	}
	if (!shown) {
		printf("%s:%ld: no candidate site on this line\n", file, line);
		for (size_t i = 0; i < r.diagnostics.len; i++)
			if (r.diagnostics.items[i].line == (unsigned)line)
				printf("  %s\n", r.diagnostics.items[i].message);
	}
	rc = EXIT_OK;
done:
	free(file);
	cli_list_free(&args);
	cli_list_free(&ignore);
	scan_result_free(&r);
	return rc;
}

static const struct cli_command rules_cmd = {"rules", "", "List the rules with a paragraph each.", cmd_rules};

int cmd_rules(int argc, char **argv)
{
	const struct cli_option opts[] = {{NULL, 0, 0, NULL, NULL, NULL}};
	struct cli_list args = {0};
	int p = cli_parse(&rules_cmd, opts, argc, argv, &args);
	cli_list_free(&args);
	if (p != 0)
		return p > 0 ? EXIT_OK : EXIT_USAGE;
	for (int k = 0; k < RULE_COUNT; k++)
		printf("%s %s: %s\n\n    %s\n\n", rule_code(k), rule_name(k), rule_summary(k), rule_help(k));
	return EXIT_OK;
}
