/*
 * Unit tests for the CLI plumbing: emit (text, JSON, SARIF, summary) on a
 * fabricated scan_result, option parsing, the directory walk and the
 * thread pool. Independent of what the analysis finds.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/emit.h"
#include "util/parallel.h"
#include "parse/walk.h"

static void check_str(const char *got, const char *want, const char *what)
{
	if (strcmp(got, want) == 0) {
		check_passed++;
		return;
	}
	check_failed++;
	printf("FAIL %s\n--- want\n%s\n--- got\n%s\n", what, want, got);
}

/* ---- a fabricated result ------------------------------------------------- */

static struct finding make_finding(const char *file, unsigned line, unsigned col, enum rule_id rule,
				   enum severity sev, enum fix_kind fix, const char *msg, const char *evidence)
{
	struct finding f;
	memset(&f, 0, sizeof f);
	f.rule = rule;
	f.file = xstrdup(file);
	f.pos.line = line;
	f.pos.column = col;
	f.function = xstrdup("drv_xmit");
	f.message = xstrdup(msg);
	f.severity = sev;
	f.confidence = CONF_HIGH;
	f.fix = fix;
	f.evidence = xstrdup(evidence);
	return f;
}

static void add_edit(struct finding *f, enum edit_op op, unsigned l1, unsigned c1, unsigned l2, unsigned c2,
		     const char *node, const char *text)
{
	struct edit e = {op, {l1, c1, 0}, {l2, c2, 0}, node, xstrdup(text), false, false, "", {0, 0, 0}, false};
	vec_push(&f->edits, e);
}

static void add_diag(struct scan_result *r, enum diag_kind kind, const char *file, unsigned line, unsigned col,
		     const char *msg)
{
	struct diagnostic d = {kind, xstrdup(file), line, col, xstrdup(msg), 0};
	vec_push(&r->diagnostics, d);
}

static void fabricate(struct scan_result *r)
{
	struct finding f = make_finding("drivers/net/a.c", 12, 9, RULE_P003, SEV_WARNING, FIX_GET_CPU,
					"CPU number cpu used in preemptible code",
					"no lock held on every path\nused at line 14");
	f.end = (struct srcpos){12, 27, 218};
	add_edit(&f, EDIT_REPLACE, 12, 9, 12, 27, "call_expression", "get_cpu()");
	f.edits.items[0].start.offset = 200, f.edits.items[0].end.offset = 218;
	add_edit(&f, EDIT_INSERT_AFTER, 14, 2, 14, 20, "expression_statement", "put_cpu();");
	f.edits.items[1].start.offset = 242, f.edits.items[1].end.offset = 260;
	strcpy(f.edits.items[1].indent, "\t");
	vec_push(&r->findings, f);
	f = make_finding("drivers/net/a.c", 30, 2, RULE_P004, SEV_WARNING, FIX_NONE, "2.4 \"reschedule\" check",
			 "tab\there");
	f.fix_note = xstrdup("use need_resched() by hand");
	free(f.function);
	f.function = NULL;
	vec_push(&r->findings, f);
	f = make_finding("drivers/net/a.c", 40, 5, RULE_P003, SEV_NOTE, FIX_NONE, "CPU number read under a lock",
			 "spin_lock(&lp->lock) held on every path");
	f.protected_site = true;
	vec_push(&r->findings, f);
	f = make_finding("drivers/scsi/b.c", 7, 1, RULE_P006, SEV_ERROR, FIX_NONE, "kmalloc(GFP_KERNEL) may sleep",
			 "irq handler");
	vec_push(&r->findings, f);
	add_diag(r, DIAG_UNPARSED, "drivers/net/a.c", 20, 3, "unparsed: `NR_CPUS` lies in code the C grammar could not parse");
	r->diagnostics.items[r->diagnostics.len - 1].end_column = 10;
	add_diag(r, DIAG_IO, "missing.c", 0, 0, "missing.c: cannot access: No such file or directory");
	r->stats.files = 3;
	r->stats.bytes = 1000;
	r->stats.parsed = 2;
}

/* Runs emit into a string. */
static char *emit_to_string(enum output_format fmt, const struct scan_result *r, bool verbose, bool summary)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	if (summary)
		emit_summary(f, r);
	else
		emit_result(f, fmt, r, verbose);
	fclose(f);
	return out;
}

static void test_emit_text(void)
{
	struct scan_result r = SCAN_RESULT_INIT;
	fabricate(&r);
	char *s = emit_to_string(FORMAT_TEXT, &r, false, false);
	check_str(s,
		  "drivers/net/a.c:12:9: warning: CPU number cpu used in preemptible code [P003, fixable]\n"
		  "drivers/net/a.c:20:3: note: unparsed: `NR_CPUS` lies in code the C grammar could not parse\n"
		  "drivers/net/a.c:30:2: warning: 2.4 \"reschedule\" check [P004]\n"
		  "drivers/scsi/b.c:7:1: error: kmalloc(GFP_KERNEL) may sleep [P006]\n"
		  "missing.c: error: cannot access: No such file or directory\n",
		  "text output");
	free(s);
	s = emit_to_string(FORMAT_TEXT, &r, true, false);
	check_str(s,
		  "drivers/net/a.c:12:9: warning: CPU number cpu used in preemptible code [P003, fixable]\n"
		  "drivers/net/a.c:12:9: note: why: no lock held on every path\n"
		  "drivers/net/a.c:12:9: note:      used at line 14\n"
		  "drivers/net/a.c:12:9: note: fix: get-cpu\n"
		  "drivers/net/a.c:20:3: note: unparsed: `NR_CPUS` lies in code the C grammar could not parse\n"
		  "drivers/net/a.c:30:2: warning: 2.4 \"reschedule\" check [P004]\n"
		  "drivers/net/a.c:30:2: note: why: tab\there\n"
		  "drivers/net/a.c:30:2: note: fix: none - use need_resched() by hand\n"
		  "drivers/net/a.c:40:5: note: protected: CPU number read under a lock [P003]\n"
		  "drivers/net/a.c:40:5: note: why: spin_lock(&lp->lock) held on every path\n"
		  "drivers/scsi/b.c:7:1: error: kmalloc(GFP_KERNEL) may sleep [P006]\n"
		  "drivers/scsi/b.c:7:1: note: why: irq handler\n"
		  "drivers/scsi/b.c:7:1: note: fix: none\n"
		  "missing.c: error: cannot access: No such file or directory\n",
		  "verbose text output");
	free(s);
	s = emit_to_string(FORMAT_TEXT, &r, false, true);
	check_str(s, "preemptify: 3 findings in 3 files (2 analysed, the other holds no preemption word): "
		  "1 fixable by preemptify diff, 2 need hand work; 2 diagnostics\n", "summary");
	free(s);
	scan_result_release(&r);

	struct scan_result empty = SCAN_RESULT_INIT;
	empty.stats.files = 1;
	s = emit_to_string(FORMAT_TEXT, &empty, false, true);
	check_str(s, "preemptify: 0 findings in 1 file (not analysed: it holds no preemption word)\n",
		  "summary of nothing");
	free(s);
	s = emit_to_string(FORMAT_TEXT, &empty, false, false);
	check_str(s, "", "text of nothing");
	free(s);
}

static void test_emit_json(void)
{
	struct scan_result r = SCAN_RESULT_INIT;
	fabricate(&r);
	char *s = emit_to_string(FORMAT_JSON, &r, false, false);
	char *want = xasprintf(
		"{\n"
		"  \"version\": 1,\n"
		"  \"tool\": {\"name\": \"preemptify\", \"version\": \"%s\"},\n"
		"  \"findings\": [\n"
		"    {\"file\": \"drivers/net/a.c\", \"line\": 12, \"column\": 9, \"function\": \"drv_xmit\", "
		"\"rule\": \"P003\", \"rule_name\": \"cpu-id\", \"severity\": \"warning\", \"confidence\": \"high\", "
		"\"fixable\": true, \"fix\": \"get-cpu\", \"message\": \"CPU number cpu used in preemptible code\", "
		"\"evidence\": \"no lock held on every path\\nused at line 14\", \"fix_note\": null, \"edits\": ["
		"{\"op\": \"replace\", \"line\": 12, \"column\": 9, \"end_line\": 12, \"end_column\": 27, "
		"\"node\": \"call_expression\", \"text\": \"get_cpu()\"}, "
		"{\"op\": \"insert-after\", \"line\": 14, \"column\": 2, \"end_line\": 14, \"end_column\": 20, "
		"\"node\": \"expression_statement\", \"text\": \"put_cpu();\"}]},\n"
		"    {\"file\": \"drivers/net/a.c\", \"line\": 30, \"column\": 2, \"function\": null, "
		"\"rule\": \"P004\", \"rule_name\": \"resched\", \"severity\": \"warning\", \"confidence\": \"high\", "
		"\"fixable\": false, \"fix\": \"none\", \"message\": \"2.4 \\\"reschedule\\\" check\", "
		"\"evidence\": \"tab\\there\", \"fix_note\": \"use need_resched() by hand\", \"edits\": []},\n"
		"    {\"file\": \"drivers/scsi/b.c\", \"line\": 7, \"column\": 1, \"function\": \"drv_xmit\", "
		"\"rule\": \"P006\", \"rule_name\": \"sleep-in-atomic\", \"severity\": \"error\", \"confidence\": \"high\", "
		"\"fixable\": false, \"fix\": \"none\", \"message\": \"kmalloc(GFP_KERNEL) may sleep\", "
		"\"evidence\": \"irq handler\", \"fix_note\": null, \"edits\": []}\n"
		"  ],\n"
		"  \"diagnostics\": [\n"
		"    {\"kind\": \"unparsed\", \"file\": \"drivers/net/a.c\", \"line\": 20, \"column\": 3, "
		"\"message\": \"unparsed: `NR_CPUS` lies in code the C grammar could not parse\"},\n"
		"    {\"kind\": \"io\", \"file\": \"missing.c\", \"line\": null, \"column\": null, "
		"\"message\": \"missing.c: cannot access: No such file or directory\"}\n"
		"  ],\n"
		"  \"stats\": {\"files\": 3, \"bytes\": 1000, \"parsed\": 2, \"findings\": 3, \"fixable\": 1, \"diagnostics\": 2, "
		"\"per_rule\": {\"P001\": 0, \"P002\": 0, \"P003\": 1, \"P004\": 1, \"P005\": 0, \"P006\": 1, \"P007\": 0, \"P008\": 0}}\n"
		"}\n", PREEMPTIFY_VERSION);
	check_str(s, want, "json output");
	free(want);
	free(s);
	/* verbose: the protected site appears, marked, and every finding says whether it is one */
	s = emit_to_string(FORMAT_JSON, &r, true, false);
	CHECK(strstr(s, "\"line\": 40, \"column\": 5") != NULL);
	CHECK(strstr(s, "\"protected\": true") != NULL);
	CHECK(strstr(s, "\"protected\": false") != NULL);
	CHECK(strstr(s, "\"findings\": 3, \"fixable\": 1, \"protected\": 1,") != NULL);
	free(s);
	/* nothing to say is null, as fix_note is: never "" */
	free(r.findings.items[0].evidence);
	r.findings.items[0].evidence = NULL;
	free(r.findings.items[1].fix_note);
	r.findings.items[1].fix_note = xstrdup("");
	s = emit_to_string(FORMAT_JSON, &r, false, false);
	CHECK(strstr(s, "\"evidence\": null, \"fix_note\": null, \"edits\": [{") != NULL, "%s", s);
	CHECK(strstr(s, "\"evidence\": \"tab\\there\", \"fix_note\": null") != NULL, "%s", s);
	CHECK(strstr(s, "\"\"") == NULL, "an empty string: %s", s);
	free(s);
	s = emit_to_string(FORMAT_SARIF, &r, false, false);
	CHECK(strstr(s, "\"properties\": {\"confidence\": \"high\", \"fix\": \"get-cpu\"}") != NULL);
	CHECK(strstr(s, "\"evidence\": \"\"") == NULL && strstr(s, "\"fixNote\": \"\"") == NULL);
	free(s);
	scan_result_release(&r);

	struct scan_result empty = SCAN_RESULT_INIT;
	s = emit_to_string(FORMAT_JSON, &empty, false, false);
	CHECK(strstr(s, "\"findings\": [],\n  \"diagnostics\": [],\n") != NULL);
	free(s);
}

/* A rule whose results include a warning defaults to "warning" (Multitool reads an explicit warning as absent). */
static void test_emit_sarif_default_level(void)
{
	struct scan_result r = SCAN_RESULT_INIT;
	fabricate(&r);
	char *s = emit_to_string(FORMAT_SARIF, &r, false, false);
	const char *p6 = strstr(s, "{\"id\": \"P006\"");
	const char *err = p6 ? strstr(p6, "\"defaultConfiguration\": {\"level\": \"error\"}") : NULL;
	CHECK(err && err < strstr(p6, "{\"id\": \"P007\""));
	free(s);
	for (size_t i = 0; i < r.findings.len; i++)
		if (r.findings.items[i].rule == RULE_P006)
			r.findings.items[i].severity = SEV_WARNING; /* an irq-only sleeping call */
	s = emit_to_string(FORMAT_SARIF, &r, false, false);
	p6 = strstr(s, "{\"id\": \"P006\"");
	const char *lvl = p6 ? strstr(p6, "\"defaultConfiguration\": {\"level\": \"") : NULL;
	CHECK(lvl && strncmp(lvl + strlen("\"defaultConfiguration\": {\"level\": \""), "warning\"", 8) == 0);
	CHECK(strstr(s, "{\"ruleId\": \"P006\", \"ruleIndex\": 5, \"kind\": \"fail\", \"level\": \"warning\"") != NULL);
	free(s);
	scan_result_release(&r);
}

static void test_emit_sarif(void)
{
	struct scan_result r = SCAN_RESULT_INIT;
	fabricate(&r);
	/* paths as users give them: ./ prefixes, absolute, with characters a URI must encode */
	free(r.findings.items[3].file);
	r.findings.items[3].file = xstrdup("/abs/dir with space/b#1.c");
	free(r.findings.items[1].file);
	r.findings.items[1].file = xstrdup("./drivers/net/a.c");
	char *s = emit_to_string(FORMAT_SARIF, &r, false, false);
	CHECK(strstr(s, "\"version\": \"2.1.0\"") != NULL);
	CHECK(strstr(s, "{\"id\": \"P001\", \"name\": \"percpu-array\", \"shortDescription\": {\"text\": ") != NULL);
	CHECK(strstr(s, "{\"id\": \"P006\", \"name\": \"sleep-in-atomic\"") != NULL);
	CHECK(strstr(s, "\"defaultConfiguration\": {\"level\": \"error\"}") != NULL);
	CHECK(strstr(s, "\"defaultConfiguration\": {\"level\": \"note\"}") != NULL); /* P008: no result */
	CHECK(strstr(s, "{\"ruleId\": \"P003\", \"ruleIndex\": 2, \"kind\": \"fail\", \"level\": \"warning\"") != NULL);
	CHECK(strstr(s, "{\"ruleId\": \"P006\", \"ruleIndex\": 5, \"kind\": \"fail\", \"level\": \"error\"") != NULL);
	/* an unknown end (line 0): the rest of the start line */
	CHECK(strstr(s, "{\"uri\": \"drivers/net/a.c\", \"uriBaseId\": \"%SRCROOT%\"}, "
			"\"region\": {\"startLine\": 30, \"startColumn\": 2, \"endLine\": 30}}") != NULL);
	/* the site's node, end exclusive */
	CHECK(strstr(s, "\"region\": {\"startLine\": 12, \"startColumn\": 9, \"endLine\": 12, \"endColumn\": 27}}") != NULL);
	/* a diagnostic with its end on the line */
	CHECK(strstr(s, "\"region\": {\"startLine\": 20, \"startColumn\": 3, \"endLine\": 20, \"endColumn\": 10}}") != NULL);
	/* rules link to their section of the installed docs/rules.md and carry their help;
	 * no made-up home page, and no informationUri of this machine's files */
	CHECK(strstr(s, "\"helpUri\": \"file://" PREEMPTIFY_DOCDIR "/rules.md#P003\"") != NULL);
	CHECK(strstr(s, "informationUri") == NULL);
	CHECK(strstr(s, "\"fullDescription\": {\"text\": \"") != NULL && strstr(s, "\"help\": {\"text\": \"") != NULL);
	CHECK(strstr(s, ".invalid") == NULL);
	/* the planned edits as a fix: a replacement and an insertion after the statement, indented like it */
	CHECK(strstr(s, "\"fixes\": [{\"description\": {\"text\": ") != NULL);
	CHECK(strstr(s, "\"replacements\": [{\"deletedRegion\": {\"startLine\": 12, \"startColumn\": 9, "
			"\"endLine\": 12, \"endColumn\": 27, \"byteOffset\": 200, \"byteLength\": 18}, "
			"\"insertedContent\": {\"text\": \"get_cpu()\"}}, "
			"{\"deletedRegion\": {\"startLine\": 14, \"startColumn\": 20, \"endLine\": 14, \"endColumn\": 20, "
			"\"byteOffset\": 260, \"byteLength\": 0}, \"insertedContent\": {\"text\": \"\\n\\tput_cpu();\"}}]") != NULL);
	/* no fix for a finding without edits */
	const char *p004 = strstr(s, "{\"ruleId\": \"P004\"");
	CHECK(p004 && strstr(p004, "\"fixes\"") == NULL);
	/* the reasoning's places as a code flow: "used at line 14", then the site */
	CHECK(strstr(s, "\"codeFlows\": [{\"threadFlows\": [{\"locations\": [\n"
			"          {\"location\": {\"physicalLocation\": {\"artifactLocation\": {\"uri\": \"drivers/net/a.c\", "
			"\"uriBaseId\": \"%SRCROOT%\"}, \"region\": {\"startLine\": 14, \"endLine\": 14}}, "
			"\"message\": {\"text\": \"used at line 14\"}}, \"nestingLevel\": 0},\n") != NULL);
	/* without a run, no base is defined */
	CHECK(strstr(s, "originalUriBaseIds") == NULL && strstr(s, "versionControlProvenance") == NULL);
	CHECK(strstr(s, "{\"uri\": \"file:///abs/dir%20with%20space/b%231.c\"}") != NULL);
	CHECK(strstr(s, "\"logicalLocations\": [{\"name\": \"drv_xmit\", \"kind\": \"function\"}]") != NULL);
	CHECK(strstr(s, "\"properties\": {\"confidence\": \"high\", \"fix\": \"get-cpu\", "
			"\"evidence\": \"no lock held on every path\\nused at line 14\"}") != NULL);
	CHECK(strstr(s, "\"fixNote\": \"use need_resched() by hand\"") != NULL);
	CHECK(strstr(s, "\"kind\": \"pass\"") == NULL);
	CHECK(strstr(s, "\"executionSuccessful\": false") != NULL); /* the I/O diagnostic */
	free(s);
	s = emit_to_string(FORMAT_SARIF, &r, true, false);
	CHECK(strstr(s, "{\"ruleId\": \"P003\", \"ruleIndex\": 2, \"kind\": \"pass\", \"level\": \"none\"") != NULL);
	free(s);
	scan_result_release(&r);

	struct scan_result empty = SCAN_RESULT_INIT;
	s = emit_to_string(FORMAT_SARIF, &empty, false, false);
	CHECK(strstr(s, "\"results\": [],") != NULL);
	CHECK(strstr(s, "\"executionSuccessful\": true") != NULL);
	free(s);
	CHECK(output_format_parse("sarif") == FORMAT_SARIF);
	CHECK(output_format_parse("json") == FORMAT_JSON);
	CHECK(output_format_parse("text") == FORMAT_TEXT);
	CHECK(output_format_parse("xml") == -1);
}

/* With a run: URIs relative to the root wherever the paths were given from, provenance, ends of lines. */
static void test_emit_sarif_run(void)
{
	struct scan_result r = SCAN_RESULT_INIT;
	fabricate(&r);
	free(r.findings.items[1].file);
	r.findings.items[1].file = xstrdup("../net/./a.c");  /* from /repo/drivers/scsi */
	free(r.findings.items[3].file);
	r.findings.items[3].file = xstrdup("/elsewhere/b.c"); /* outside the root */
	free(r.findings.items[0].evidence);
	r.findings.items[0].evidence = xstrdup("pm_idle() is called with preemption off: from cpu_idle() at "
					       "arch/x/idle.c:51 (the idle loop (installed as pm_idle at line 92))");
	struct sarif_run run = {"/repo/", "/repo/drivers/scsi", true, "https://example.org/r.git",
				"0123456789012345678901234567890123456789", "main"};
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	emit_sarif(f, &r, false, &run);
	fclose(f);
	CHECK(strstr(s, "\"originalUriBaseIds\": {\"%SRCROOT%\": {\"uri\": \"file:///repo/\"") != NULL);
	CHECK(strstr(s, "\"versionControlProvenance\": [{\"repositoryUri\": \"https://example.org/r.git\", "
			"\"revisionId\": \"0123456789012345678901234567890123456789\", \"branch\": \"main\", "
			"\"mappedTo\": {\"uriBaseId\": \"%SRCROOT%\"}}]") != NULL);
	CHECK(strstr(s, "{\"uri\": \"drivers/scsi/drivers/net/a.c\", \"uriBaseId\": \"%SRCROOT%\"}") != NULL);
	CHECK(strstr(s, "{\"uri\": \"drivers/net/a.c\", \"uriBaseId\": \"%SRCROOT%\"}") != NULL);
	CHECK(strstr(s, "{\"uri\": \"file:///elsewhere/b.c\"}") != NULL);
	/* the callers chain: another file's place, then a nested group of the same file */
	CHECK(strstr(s, "{\"uri\": \"drivers/scsi/arch/x/idle.c\", \"uriBaseId\": \"%SRCROOT%\"}, "
			"\"region\": {\"startLine\": 51, \"endLine\": 51}}, "
			"\"message\": {\"text\": \"from cpu_idle() at arch/x/idle.c:51\"}}, \"nestingLevel\": 0}") != NULL);
	CHECK(strstr(s, "\"region\": {\"startLine\": 92, \"endLine\": 92}}, "
			"\"message\": {\"text\": \"the idle loop (installed as pm_idle at line 92)\"}}, "
			"\"nestingLevel\": 2}") != NULL);
	free(s);
	scan_result_release(&r);
}

/* ---- cli_parse ----------------------------------------------------------- */

struct parsed {
	bool verbose, quiet;
	const char *format;
	int jobs;
	struct strvec list;
	struct strvec pos;
	char err[512];
	char *words; /* argv storage: string options point into it */
};

/* Parses the words of LINE with a scan-like table; stderr is captured in p->err. */
static int parse(struct parsed *p, const char *line)
{
	static const struct cli_command cmd = {"test", "[options] PATH...", "A test command.", NULL};
	memset(p, 0, sizeof *p);
	p->format = "text";
	const struct cli_option opts[] = {
		{"format", 'f', OPT_STRING, &p->format, "FMT", "output format"},
		{"jobs", 'j', OPT_INT, &p->jobs, "N", "threads"},
		{"exclude", 0, OPT_LIST, &p->list, "GLOB", "skip"},
		{"verbose", 'v', OPT_FLAG, &p->verbose, NULL, "more"},
		{"quiet", 'q', OPT_FLAG, &p->quiet, NULL, "less"},
		{NULL, 0, 0, NULL, NULL, NULL},
	};
	p->words = xstrdup(line);
	char *argv[32] = {"test"};
	int argc = 1;
	for (char *w = strtok(p->words, " "); w && argc < 31; w = strtok(NULL, " "))
		argv[argc++] = w;
	fflush(stderr);
	FILE *tmp = tmpfile();
	int saved = dup(2);
	dup2(fileno(tmp), 2);
	int rc = cli_parse(&cmd, opts, argc, argv, &p->pos);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	size_t n = fread(p->err, 1, sizeof p->err - 1, tmp);
	p->err[n] = '\0';
	fclose(tmp);
	return rc;
}

static void parsed_free(struct parsed *p)
{
	strvec_release(&p->list);
	strvec_release(&p->pos);
	free(p->words);
}

static bool one_line(const char *s)
{
	const char *nl = strchr(s, '\n');
	return nl && nl[1] == '\0';
}

static void test_cli_parse(void)
{
	struct parsed p;
	CHECK(parse(&p, "--format json --jobs=4 a.c -v b.c") == 0);
	CHECK(strcmp(p.format, "json") == 0 && p.jobs == 4 && p.verbose && !p.quiet);
	CHECK(p.pos.len == 2 && strcmp(p.pos.items[0], "a.c") == 0 && strcmp(p.pos.items[1], "b.c") == 0);
	CHECK(p.err[0] == '\0');
	parsed_free(&p);

	CHECK(parse(&p, "-j4 -fsarif -vq x") == 0);
	CHECK(p.jobs == 4 && strcmp(p.format, "sarif") == 0 && p.verbose && p.quiet && p.pos.len == 1);
	parsed_free(&p);

	CHECK(parse(&p, "-j 8 --format=text") == 0);
	CHECK(p.jobs == 8 && strcmp(p.format, "text") == 0 && p.pos.len == 0);
	parsed_free(&p);

	CHECK(parse(&p, "--exclude a/*,b.c, --exclude c.h x") == 0);
	CHECK(p.list.len == 3 && strcmp(p.list.items[0], "a/*") == 0 && strcmp(p.list.items[1], "b.c") == 0 &&
	      strcmp(p.list.items[2], "c.h") == 0);
	parsed_free(&p);

	/* "--" ends options; "-" alone is an operand */
	CHECK(parse(&p, "x -- -v --jobs=2 -") == 0);
	CHECK(!p.verbose && p.jobs == 0 && p.pos.len == 4 && strcmp(p.pos.items[1], "-v") == 0 &&
	      strcmp(p.pos.items[3], "-") == 0);
	parsed_free(&p);
	CHECK(parse(&p, "- a") == 0 && p.pos.len == 2);
	parsed_free(&p);

	/* errors: one line on stderr naming the option */
	CHECK(parse(&p, "--bogus x") == -1);
	CHECK(one_line(p.err) && strstr(p.err, "preemptify test: unknown option '--bogus'") == p.err);
	parsed_free(&p);
	CHECK(parse(&p, "-x") == -1);
	CHECK(one_line(p.err) && strstr(p.err, "unknown option '-x'") != NULL);
	parsed_free(&p);
	CHECK(parse(&p, "--jobs") == -1);
	CHECK(one_line(p.err) && strstr(p.err, "option '--jobs' needs an argument (N)") != NULL);
	parsed_free(&p);
	CHECK(parse(&p, "-j") == -1);
	CHECK(one_line(p.err) && strstr(p.err, "option '-j' needs an argument") != NULL);
	parsed_free(&p);
	CHECK(parse(&p, "--jobs=four") == -1);
	CHECK(one_line(p.err) && strstr(p.err, "option '--jobs' expects an integer, got 'four'") != NULL);
	parsed_free(&p);
	CHECK(parse(&p, "-j4x") == -1);
	CHECK(one_line(p.err) && strstr(p.err, "option '-j' expects an integer, got '4x'") != NULL);
	parsed_free(&p);
	CHECK(parse(&p, "--jobs=99999999999") == -1);
	parsed_free(&p);
	CHECK(parse(&p, "--verbose=yes") == -1);
	CHECK(one_line(p.err) && strstr(p.err, "option '--verbose' takes no argument") != NULL);
	parsed_free(&p);
	CHECK(parse(&p, "--verb") == -1); /* no abbreviations */
	parsed_free(&p);

	/* --help prints the table to stdout and returns 1 */
	fflush(stdout);
	FILE *tmp = tmpfile();
	int saved = dup(1);
	dup2(fileno(tmp), 1);
	int rc = parse(&p, "a --help");
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	char help[2048];
	rewind(tmp);
	size_t n = fread(help, 1, sizeof help - 1, tmp);
	help[n] = '\0';
	fclose(tmp);
	CHECK(rc == 1);
	CHECK(strstr(help, "usage: preemptify test [options] PATH...\n\nA test command.\n\noptions:\n") == help);
	CHECK(strstr(help, "  -f, --format FMT") != NULL);
	CHECK(strstr(help, "      --exclude GLOB[,...]") != NULL);
	CHECK(strstr(help, "(repeatable)") != NULL);
	CHECK(strstr(help, "  -h, --help") != NULL);
	parsed_free(&p);

	/* an unregistered command still gets a usable row */
	const struct cli_command *c = cli_command_find("nosuch");
	CHECK(c && strcmp(c->name, "nosuch") == 0 && c->run == NULL);
}

/* ---- walk ---------------------------------------------------------------- */

static char tmp_root[256];

static void put_file(const char *rel, const char *text)
{
	char *p = xasprintf("%s/%s", tmp_root, rel);
	write_file(p, text, strlen(text));
	free(p);
}

static void make_dir(const char *rel)
{
	char *p = xasprintf("%s/%s", tmp_root, rel);
	mkdir(p, 0755);
	free(p);
}

static char *walk_joined(char **roots, size_t n, char **excludes, size_t n_ex, int *out_rc, diagnostic_vec *diags)
{
	struct walk_options wo = {excludes, n_ex, NULL};
	struct strvec out = VEC_INIT;
	*out_rc = walk_paths(roots, n, &wo, &out, diags);
	struct buf b = BUF_INIT;
	size_t skip = strlen(tmp_root) + 1;
	for (size_t i = 0; i < out.len; i++)
		buf_printf(&b, "%s\n", strncmp(out.items[i], tmp_root, skip - 1) == 0 ? out.items[i] + skip : out.items[i]);
	strvec_release(&out);
	return buf_detach(&b);
}

static void test_walk(void)
{
	snprintf(tmp_root, sizeof tmp_root, "%s/preemptify-walk-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!CHECK(mkdtemp(tmp_root) != NULL))
		return;
	make_dir("tree");
	make_dir("tree/sub");
	make_dir("tree/sub/deeper");
	make_dir("tree/skipme");
	make_dir("outside");
	put_file("tree/b.c", "");
	put_file("tree/a.h", "");
	put_file("tree/README", "");
	put_file("tree/x.cpp", "");
	put_file("tree/sub/z.c", "");
	put_file("tree/sub/deeper/y.c", "");
	put_file("tree/sub/gen.c", "");
	put_file("tree/skipme/q.c", "");
	put_file("tree/Z.c", "");
	put_file("outside/evil.c", "");
	char *t;
	t = xasprintf("%s/outside", tmp_root);
	char *l1 = xasprintf("%s/tree/link-dir", tmp_root), *l2 = xasprintf("%s/tree/link.c", tmp_root);
	char *evil = xasprintf("%s/outside/evil.c", tmp_root), *l3 = xasprintf("%s/treelink", tmp_root);
	char *tree = xasprintf("%s/tree", tmp_root);
	CHECK(symlink(t, l1) == 0);
	CHECK(symlink(evil, l2) == 0);
	CHECK(symlink(tree, l3) == 0);

	diagnostic_vec diags = VEC_INIT;
	int rc;
	char *roots[] = {tree};
	char *got = walk_joined(roots, 1, NULL, 0, &rc, &diags);
	/* byte order (Z before a), depth first, only .c/.h, symlinks inside not followed */
	check_str(got, "tree/Z.c\ntree/a.h\ntree/b.c\ntree/skipme/q.c\ntree/sub/deeper/y.c\ntree/sub/gen.c\ntree/sub/z.c\n",
		  "walk of a tree");
	CHECK(rc == 0 && diags.len == 0);
	free(got);

	char *ex[] = {"skipme", "sub/gen.c"};
	got = walk_joined(roots, 1, ex, 2, &rc, &diags);
	check_str(got, "tree/Z.c\ntree/a.h\ntree/b.c\ntree/sub/deeper/y.c\ntree/sub/z.c\n", "walk with excludes");
	free(got);
	char *ex2[] = {"*.h", "deeper"};
	got = walk_joined(roots, 1, ex2, 2, &rc, &diags);
	check_str(got, "tree/Z.c\ntree/b.c\ntree/skipme/q.c\ntree/sub/gen.c\ntree/sub/z.c\n", "walk with * excludes");
	free(got);

	/* a symlink named as a root is followed; a file root is taken whatever its suffix */
	char *readme = xasprintf("%s/tree/README", tmp_root);
	char *missing = xasprintf("%s/nope", tmp_root);
	char *roots2[] = {l3, missing, readme};
	got = walk_joined(roots2, 3, NULL, 0, &rc, &diags);
	CHECK(strstr(got, "treelink/sub/z.c\n") != NULL);
	CHECK(strstr(got, "outside") == NULL && strstr(got, "evil") == NULL);
	CHECK(strstr(got, "tree/README\n") != NULL); /* other roots still walked after the missing one */
	CHECK(rc == -1);
	if (CHECK(diags.len == 1)) {
		CHECK(diags.items[0].kind == DIAG_IO);
		CHECK(strcmp(diags.items[0].file, missing) == 0);
		CHECK(strstr(diags.items[0].message, missing) != NULL);
		CHECK(strstr(diags.items[0].message, "No such file") != NULL);
	}
	free(got);
	for (size_t i = 0; i < diags.len; i++)
		diagnostic_release(&diags.items[i]);
	vec_release(&diags);

	/* clean up the tree (bottom-up) */
	const char *files[] = {"tree/b.c", "tree/a.h", "tree/README", "tree/x.cpp", "tree/sub/z.c",
			       "tree/sub/deeper/y.c", "tree/sub/gen.c", "tree/skipme/q.c", "tree/Z.c",
			       "outside/evil.c", "tree/link-dir", "tree/link.c", "treelink"};
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char *p = xasprintf("%s/%s", tmp_root, files[i]);
		unlink(p);
		free(p);
	}
	const char *dirs[] = {"tree/sub/deeper", "tree/sub", "tree/skipme", "tree", "outside", ""};
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		char *p = xasprintf("%s/%s", tmp_root, dirs[i]);
		rmdir(p);
		free(p);
	}
	free(t);
	free(l1);
	free(l2);
	free(l3);
	free(evil);
	free(tree);
	free(readme);
	free(missing);
}

/* ---- parallel ------------------------------------------------------------ */

struct par_ctx {
	size_t *slots;
	atomic_int calls;
	pthread_t caller;
	atomic_int on_caller;
};

static void par_fn(size_t i, void *arg)
{
	struct par_ctx *c = arg;
	c->slots[i] = i * i + 1;
	atomic_fetch_add(&c->calls, 1);
	if (pthread_equal(pthread_self(), c->caller))
		atomic_fetch_add(&c->on_caller, 1);
}

static void test_parallel(void)
{
	CHECK(parallel_default_jobs() >= 1);
	const int jobs[] = {1, 8, 0, 300};
	for (size_t j = 0; j < ARRAY_SIZE(jobs); j++) {
		size_t n = 1000;
		struct par_ctx c = {xcalloc(n, sizeof(size_t)), 0, pthread_self(), 0};
		parallel_for(n, jobs[j], par_fn, &c);
		bool all = true;
		for (size_t i = 0; i < n; i++)
			all &= c.slots[i] == i * i + 1;
		CHECK(all);
		CHECK(atomic_load(&c.calls) == (int)n); /* each index exactly once */
		CHECK(atomic_load(&c.on_caller) == 0);  /* always on workers (stack size contract) */
		free(c.slots);
	}
	struct par_ctx none = {NULL, 0, pthread_self(), 0};
	parallel_for(0, 4, par_fn, &none);
	CHECK(atomic_load(&none.calls) == 0);
}

/* The whole pipeline's output does not depend on the number of threads. */
static void test_scan_deterministic(void)
{
	char dir[256];
	snprintf(dir, sizeof dir, "%s/preemptify-det-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!CHECK(mkdtemp(dir) != NULL))
		return;
	enum { N = 24 };
	char *paths[N];
	for (int i = 0; i < N; i++) {
		paths[i] = xasprintf("%s/f%02d.c", dir, i);
		FILE *f = fopen(paths[i], "w");
		if (!f)
			continue;
		/* a mix of files with and without trigger tokens, of different sizes */
		fprintf(f, "static int hits[NR_CPUS];\n");
		for (int k = 0; k <= i % 5; k++)
			fprintf(f, "void fn%d_%d(void)\n{\n\tint cpu = smp_processor_id();\n\thits[cpu]++;\n"
				"\tif (current->need_resched)\n\t\tschedule();\n}\n", i, k);
		if (i % 7 == 0)
			fprintf(f, "int broken( {\n");
		fclose(f);
	}
	char *out[2];
	const int jobs[2] = {1, 8};
	for (int j = 0; j < 2; j++) {
		struct scan_options so = SCAN_OPTIONS_INIT;
		so.jobs = jobs[j];
		so.verbose = true;
		struct scan_result r = SCAN_RESULT_INIT;
		CHECK(scan_files(paths, N, &so, &r) == 0);
		out[j] = emit_to_string(FORMAT_JSON, &r, true, false);
		scan_result_release(&r);
	}
	CHECK(strlen(out[0]) > 1000);
	check_str(out[1], out[0], "scan output with -j 8 equals -j 1");
	free(out[0]);
	free(out[1]);
	for (int i = 0; i < N; i++) {
		unlink(paths[i]);
		free(paths[i]);
	}
	rmdir(dir);
}

int main(void)
{
	test_emit_text();
	test_emit_json();
	test_emit_sarif();
	test_emit_sarif_default_level();
	test_emit_sarif_run();
	test_cli_parse();
	test_walk();
	test_parallel();
	test_scan_deterministic();
	return check_summary();
}
