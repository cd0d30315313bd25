/*
 * Rewrite stage tests: hand-made findings on small sources in
 * tests/rewrite/, rewrite_plan() output compared byte for byte with
 * *.expected files; failure isolation with a fake spatch; writefile.
 * Independent of the scan engine.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "fix/rewrite.h"
#include "util/spawn.h"
#include "fix/textdiff.h"
#include "util/writefile.h"

static char *slurp(const char *path)
{
	char *s = NULL;
	size_t n;
	if (read_file(path, &s, &n) < 0)
		return xstrdup("<unreadable>");
	return s;
}

static char *data_path(const char *name)
{
	return xasprintf("%s/%s", REWRITE_TEST_DIR, name);
}

/* ---- building findings by hand ---------------------------------------- */

static struct finding *add_finding(struct scan_result *sr, const char *file, enum rule_id r,
				   enum fix_kind k)
{
	struct finding f = {0};
	f.rule = r;
	f.file = xstrdup(file);
	f.message = xstrdup("test");
	f.fix = k;
	/* planned on the file as it is now, as a scan would have read it */
	char *text = NULL;
	if (read_file(file, &text, &f.file_len) == 0)
		f.file_hash = hash_bytes(text, f.file_len);
	free(text);
	vec_push(&sr->findings, f);
	return &sr->findings.items[sr->findings.len - 1];
}

static struct srcpos pos_of(const char *src, size_t off)
{
	struct srcpos p = {1, 1, off};
	for (size_t i = 0; i < off; i++) {
		if (src[i] == '\n')
			p.line++, p.column = 1;
		else
			p.column++;
	}
	return p;
}

/* An edit on the NTH (1-based) occurrence of NEEDLE in SRC. */
static void add_edit(struct finding *f, const char *src, enum edit_op op, const char *needle,
		     int nth, const char *node, const char *text)
{
	const char *p = src;
	for (int i = 0; i < nth; i++) {
		p = strstr(i ? p + 1 : p, needle);
		if (!p) {
			fprintf(stderr, "test setup: '%s' #%d not found\n", needle, nth);
			exit(2);
		}
	}
	struct edit e;
	memset(&e, 0, sizeof e); /* wrap, in_define, indent: off unless a test sets them */
	e.op = op;
	e.start = pos_of(src, (size_t)(p - src));
	e.end = pos_of(src, (size_t)(p - src) + strlen(needle));
	e.node = node;
	e.text = xstrdup(text);
	vec_push(&f->edits, e);
	if (f->edits.len == 1)
		f->pos = e.start;
}

static const struct file_change *change_for(const struct rewrite_result *rr, const char *path)
{
	for (size_t i = 0; i < rr->files.len; i++)
		if (strcmp(rr->files.items[i].path, path) == 0)
			return &rr->files.items[i];
	return NULL;
}

static void check_expected(const struct file_change *c, const char *expected_name)
{
	char *ep = data_path(expected_name);
	char *want = slurp(ep);
	CHECK(c != NULL, "%s: no file_change", expected_name);
	if (c) {
		bool same = c->new_len == strlen(want) && memcmp(c->new_text, want, c->new_len) == 0;
		CHECK(same, "%s: output differs; got:\n%.*s", expected_name, (int)c->new_len,
		      c->new_text);
	}
	free(ep);
	free(want);
}

static bool has_refusal(const struct file_change *c, int line, const char *needle)
{
	for (size_t i = 0; c && i < c->refused.len; i++)
		if ((line < 0 || c->refused.items[i].finding->pos.line == (unsigned)line) &&
		    strstr(c->refused.items[i].reason, needle))
			return true;
	return false;
}

static void dump_refusals(const struct file_change *c)
{
	for (size_t i = 0; c && i < c->refused.len; i++)
		fprintf(stderr, "  refused line %u: %s\n", c->refused.items[i].finding->pos.line,
			c->refused.items[i].reason);
	if (c && c->error)
		fprintf(stderr, "  error: %s\n", c->error);
}

/* scan.c is not linked here (the test does not depend on the scan engine). */
static void free_scan(struct scan_result *sr)
{
	for (size_t i = 0; i < sr->findings.len; i++)
		finding_release(&sr->findings.items[i]);
	vec_release(&sr->findings);
}

/* ---- the per-kind fixtures ---------------------------------------------- */

static void build_get_cpu(struct scan_result *sr, const char *path, const char *src)
{
	struct finding *f = add_finding(sr, path, RULE_P003, FIX_GET_CPU);
	add_edit(f, src, EDIT_REPLACE, "smp_processor_id()", 1, "call_expression", "get_cpu()");
	add_edit(f, src, EDIT_INSERT_AFTER, "d->last = cpu;", 1, "expression_statement",
		 "put_cpu();");
	add_edit(f, src, EDIT_INSERT_BEFORE, "return -1;", 1, "return_statement", "put_cpu();");
	f->edits.items[f->edits.len - 1].wrap = true; /* the lone body of `if (!d)` */
}

static void build_multi(struct scan_result *sr, const char *path, const char *src)
{
	struct finding *f = add_finding(sr, path, RULE_P001, FIX_DEFINE_PER_CPU);
	add_edit(f, src, EDIT_REPLACE, "pkts[smp_processor_id()]", 1, "subscript_expression",
		 "get_cpu_var(pkts)");
	add_edit(f, src, EDIT_REPLACE, "static int pkts[NR_CPUS];", 1, "declaration",
		 "static DEFINE_PER_CPU(int, pkts);");
	add_edit(f, src, EDIT_INSERT_AFTER, "pkts[smp_processor_id()]++;", 1,
		 "expression_statement", "put_cpu_var(pkts);");
	/* A second finding sharing the declaration edit: applied once. */
	f = add_finding(sr, path, RULE_P001, FIX_DEFINE_PER_CPU);
	add_edit(f, src, EDIT_REPLACE, "pkts[i]", 1, "subscript_expression", "per_cpu(pkts, i)");
	add_edit(f, src, EDIT_REPLACE, "static int pkts[NR_CPUS];", 1, "declaration",
		 "static DEFINE_PER_CPU(int, pkts);");

	f = add_finding(sr, path, RULE_P002, FIX_GET_CPU_VAR);
	add_edit(f, src, EDIT_REPLACE, "__get_cpu_var(rx_count)", 1, "call_expression",
		 "get_cpu_var(rx_count)");
	add_edit(f, src, EDIT_INSERT_AFTER, "__get_cpu_var(rx_count) += d->n;", 1,
		 "expression_statement", "put_cpu_var(rx_count);");

	f = add_finding(sr, path, RULE_P004, FIX_COND_RESCHED);
	add_edit(f, src, EDIT_REPLACE, "if (current->need_resched)\n\t\t\tschedule();", 1,
		 "if_statement", "cond_resched();");

	f = add_finding(sr, path, RULE_P004, FIX_NEED_RESCHED_CALL);
	add_edit(f, src, EDIT_REPLACE, "current->need_resched", 2, "field_expression",
		 "need_resched()");

	f = add_finding(sr, path, RULE_P004, FIX_YIELD);
	add_edit(f, src, EDIT_REPLACE, "current->policy |= SCHED_YIELD;", 1,
		 "expression_statement", "");
	add_edit(f, src, EDIT_REPLACE, "schedule()", 2, "call_expression", "yield()");

	f = add_finding(sr, path, RULE_P005, FIX_CHECK_RESCHED);
	add_edit(f, src, EDIT_INSERT_AFTER, "preempt_enable_no_resched();", 1,
		 "expression_statement", "preempt_check_resched();");
}

static void build_move(struct scan_result *sr, const char *path, const char *src)
{
	struct finding *f = add_finding(sr, path, RULE_P003, FIX_MOVE_INSIDE);
	add_edit(f, src, EDIT_REPLACE, "cpu = smp_processor_id()", 1, "init_declarator", "cpu");
	add_edit(f, src, EDIT_INSERT_AFTER, "spin_lock_irqsave(&d->lock, flags);", 1,
		 "expression_statement", "cpu = smp_processor_id();");
}

static void build_refuse(struct scan_result *sr, const char *path, const char *src)
{
	/* Inside a #define body. */
	struct finding *f = add_finding(sr, path, RULE_P003, FIX_GET_CPU);
	add_edit(f, src, EDIT_REPLACE, "smp_processor_id()", 1, "call_expression", "get_cpu()");
	/* Anchor split by #ifdef. */
	f = add_finding(sr, path, RULE_P003, FIX_GET_CPU);
	add_edit(f, src, EDIT_REPLACE, "smp_processor_id()", 2, "call_expression", "get_cpu()");
	add_edit(f, src, EDIT_INSERT_AFTER,
		 "if (d->foo)\n#else\n\tif (d->bar)\n#endif\n\t\td->last = cpu;", 1,
		 "if_statement", "put_cpu();");
	/* A site the semantic patch does not match: spatch leaves it alone. */
	f = add_finding(sr, path, RULE_P004, FIX_NEED_RESCHED_CALL);
	add_edit(f, src, EDIT_REPLACE, "smp_processor_id()", 3, "field_expression",
		 "need_resched()");
	/* A switch cannot anchor an insertion. */
	f = add_finding(sr, path, RULE_P005, FIX_CHECK_RESCHED);
	add_edit(f, src, EDIT_INSERT_AFTER, "d->n = cpu;", 1, "switch_statement",
		 "preempt_check_resched();");
}

struct fixture {
	const char *name, *expected;
	void (*build)(struct scan_result *, const char *, const char *);
};

static const struct fixture fixtures[] = {
	{"get-cpu.c", "get-cpu.expected", build_get_cpu},
	{"multi.c", "multi.expected", build_multi},
	{"move.c", "move.expected", build_move},
	{"refuse.c", "refuse.c", build_refuse},
};

static void build_all(struct scan_result *sr, char **srcs)
{
	for (size_t i = 0; i < ARRAY_SIZE(fixtures); i++) {
		char *p = data_path(fixtures[i].name);
		srcs[i] = slurp(p);
		fixtures[i].build(sr, p, srcs[i]);
		free(p);
	}
}

static void test_fixtures(void)
{
	struct scan_result sr = SCAN_RESULT_INIT;
	struct rewrite_result rr = REWRITE_RESULT_INIT;
	struct rewrite_options o = REWRITE_OPTIONS_INIT;
	char *srcs[ARRAY_SIZE(fixtures)];

	o.jobs = 2;
	build_all(&sr, srcs);
	int r = rewrite_plan(&sr, &o, &rr);
	CHECK(r == 0, "rewrite_plan returned %d (%s)", r, error_last());
	CHECK(rr.files.len == ARRAY_SIZE(fixtures), "files: %zu", rr.files.len);
	for (size_t i = 0; i < ARRAY_SIZE(fixtures); i++) {
		char *p = data_path(fixtures[i].name);
		const struct file_change *c = change_for(&rr, p);
		check_expected(c, fixtures[i].expected);
		if (c && strcmp(fixtures[i].name, "refuse.c") != 0) {
			CHECK(c->refused.len == 0, "%s: unexpected refusals", fixtures[i].name);
			dump_refusals(c);
		}
		if (c && strcmp(fixtures[i].name, "multi.c") == 0)
			CHECK(c->fixed.len == 7, "multi.c: %zu fixed", c->fixed.len);
		if (c && strcmp(fixtures[i].name, "refuse.c") == 0) {
			CHECK(c->fixed.len == 0 && c->refused.len == 4, "refuse.c: %zu fixed %zu refused",
			      c->fixed.len, c->refused.len);
			CHECK(has_refusal(c, 1, "#define body"), "no #define refusal");
			CHECK(has_refusal(c, 5, "preprocessor conditional"), "no #ifdef refusal");
			CHECK(has_refusal(c, 17, "spatch did not change"), "no unchanged refusal");
			CHECK(has_refusal(c, 12, "insert after the switch_statement"),
			      "no anchor refusal");
			CHECK(c->error == NULL, "refuse.c: error %s", c->error);
			if (check_failed)
				dump_refusals(c);
		}
		free(p);
	}
	rewrite_result_release(&rr);
	for (size_t i = 0; i < ARRAY_SIZE(fixtures); i++)
		free(srcs[i]);
	free_scan(&sr);
}

/* ---- failure isolation with a fake spatch ------------------------------- */

/*
 * Runs the fake spatch in MODE (timeout TIMEOUT) over every test file: the
 * fake misbehaves on VICTIM only, which must be refused with a reason
 * containing WHAT (and, when ERRORED, with a file error saying so) and
 * left unchanged; every other file must come out right. RC is what
 * rewrite_plan() must return (files that failed).
 */
static void with_fake_on(const char *mode, int timeout, const char *victim, int rc, bool errored,
			 const char *what)
{
	struct scan_result sr = SCAN_RESULT_INIT;
	struct rewrite_result rr = REWRITE_RESULT_INIT;
	struct rewrite_options o = REWRITE_OPTIONS_INIT;
	char *srcs[ARRAY_SIZE(fixtures)];
	char *fake = data_path("fake-spatch");

	setenv("FAKE_SPATCH_MODE", mode, 1);
	o.spatch = fake;
	o.timeout_sec = timeout;
	build_all(&sr, srcs);
	int r = rewrite_plan(&sr, &o, &rr);
	CHECK(r == rc, "%s: rewrite_plan returned %d", mode, r);
	for (size_t i = 0; i < ARRAY_SIZE(fixtures); i++) {
		char *p = data_path(fixtures[i].name);
		const struct file_change *c = change_for(&rr, p);
		if (strcmp(fixtures[i].name, victim) == 0) {
			CHECK(!errored || (c && c->error && strstr(c->error, what)), "%s: error '%s'",
			      mode, c && c->error ? c->error : "(none)");
			CHECK(c && c->fixed.len == 0 && c->refused.len == 1 &&
				      strstr(c->refused.items[0].reason, what),
			      "%s: %s refusal: %s", mode, victim,
			      c && c->refused.len ? c->refused.items[0].reason : "(none)");
			CHECK(c && c->new_len == c->old_len &&
				      memcmp(c->new_text, c->old_text, c->old_len) == 0,
			      "%s: %s changed", mode, victim);
		} else {
			check_expected(c, fixtures[i].expected);
		}
		free(p);
	}
	rewrite_result_release(&rr);
	for (size_t i = 0; i < ARRAY_SIZE(fixtures); i++)
		free(srcs[i]);
	free_scan(&sr);
	free(fake);
	unsetenv("FAKE_SPATCH_MODE");
}

/* spatch crashes, fails or hangs on move.c: that file's error, the others fine. */
static void with_fake(const char *mode, int timeout, const char *what)
{
	with_fake_on(mode, timeout, "move.c", 1, true, what);
}

/* spatch returns a wrong rewrite of get-cpu.c: the validator refuses it. */
static void with_wrong_rewrite(const char *mode, const char *what)
{
	with_fake_on(mode, 60, "get-cpu.c", 0, false, what);
}

/*
 * An array converted across files (finding.array) whose part fails in one
 * file (spatch fails on move.c): the other file's part is refused too and
 * that file keeps its text; get-cpu.c's findings of no array still apply.
 */
static void test_array_together(void)
{
	struct scan_result sr = SCAN_RESULT_INIT;
	struct rewrite_result rr = REWRITE_RESULT_INIT;
	struct rewrite_options o = REWRITE_OPTIONS_INIT;
	char *fake = data_path("fake-spatch");
	char *pg = data_path("get-cpu.c"), *pm = data_path("move.c"), *pl = data_path("multi.c");
	char *sg = slurp(pg), *sm = slurp(pm), *sl = slurp(pl);

	build_get_cpu(&sr, pg, sg);
	sr.findings.items[sr.findings.len - 1].array = xstrdup("hits");
	build_move(&sr, pm, sm);
	sr.findings.items[sr.findings.len - 1].array = xstrdup("hits");
	build_multi(&sr, pl, sl); /* no array: unaffected */
	setenv("FAKE_SPATCH_MODE", "exit255", 1);
	o.spatch = fake;
	o.timeout_sec = 30;
	rewrite_plan(&sr, &o, &rr);
	const struct file_change *c = change_for(&rr, pg);
	CHECK(c && c->fixed.len == 0 && c->refused.len == 1 &&
		      strstr(c->refused.items[0].reason, "conversion of hits is refused in") &&
		      strstr(c->refused.items[0].reason, "move.c"),
	      "get-cpu.c refused with the array: %s", c && c->refused.len ? c->refused.items[0].reason : "(none)");
	CHECK(c && c->new_len == c->old_len && memcmp(c->new_text, c->old_text, c->old_len) == 0,
	      "get-cpu.c left as it is");
	const struct file_change *m = change_for(&rr, pl);
	CHECK(m && m->fixed.len > 0 && m->refused.len == 0, "multi.c, of no array, still fixed");
	rewrite_result_release(&rr);
	free_scan(&sr);
	free(fake);
	free(pg), free(pm), free(pl), free(sg), free(sm), free(sl);
	unsetenv("FAKE_SPATCH_MODE");
}

/*
 * A file whose name is shell syntax: spatch must never see it (it runs
 * `sh -c "cp ... <name>"`); the rewrite is still made and nothing runs.
 */
static void test_hostile_name(void)
{
	char dir[] = "/tmp/preemptify-name-XXXXXX";
	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	char *src = slurp(REWRITE_TEST_DIR "/get-cpu.c");
	/* `cd` goes to $HOME: were the name run, PWNED would appear in DIR */
	char *home = getenv("HOME") ? xstrdup(getenv("HOME")) : NULL;
	setenv("HOME", dir, 1);
	char *path = xasprintf("%s/y$(cd;touch PWNED) it's a.c", dir);
	char *pwned = xasprintf("%s/PWNED", dir);
	CHECK(write_file(path, src, strlen(src)) == 0, "write %s", path);
	struct scan_result sr = SCAN_RESULT_INIT;
	struct rewrite_result rr = REWRITE_RESULT_INIT;
	struct rewrite_options o = REWRITE_OPTIONS_INIT;
	build_get_cpu(&sr, path, src);
	int r = rewrite_plan(&sr, &o, &rr);
	CHECK(r == 0, "hostile name: rewrite_plan returned %d", r);
	CHECK(rr.files.len == 1, "hostile name: %zu files", rr.files.len);
	if (rr.files.len == 1) {
		CHECK(rr.files.items[0].fixed.len == 1, "hostile name: not fixed");
		dump_refusals(&rr.files.items[0]);
		check_expected(&rr.files.items[0], "get-cpu.expected");
	}
	CHECK(access(pwned, F_OK) != 0, "hostile name: the file name ran as a command");
	if (home)
		setenv("HOME", home, 1);
	free(home);
	unlink(path);
	unlink(pwned);
	rmdir(dir);
	rewrite_result_release(&rr);
	free_scan(&sr);
	free(src);
	free(path);
	free(pwned);
}

/*
 * Lines inserted into the file between the scan and the rewrite: the
 * planned offsets no longer hold, so the file is refused as changed, not
 * half rewritten or blamed on spatch.
 */
static void test_changed_after_scan(void)
{
	char dir[] = "/tmp/preemptify-changed-XXXXXX";
	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	char *src = slurp(REWRITE_TEST_DIR "/get-cpu.c");
	char *path = xasprintf("%s/a.c", dir);
	CHECK(write_file(path, src, strlen(src)) == 0, "write %s", path);
	struct scan_result sr = SCAN_RESULT_INIT;
	struct rewrite_result rr = REWRITE_RESULT_INIT;
	struct rewrite_options o = REWRITE_OPTIONS_INIT;
	build_get_cpu(&sr, path, src);
	char *edited = xasprintf("/* a new first line */\n%s", src);
	CHECK(write_file(path, edited, strlen(edited)) == 0, "rewrite %s", path);
	rewrite_plan(&sr, &o, &rr);
	CHECK(rr.files.len == 1, "changed after scan: %zu files", rr.files.len);
	if (rr.files.len == 1) {
		const struct file_change *c = &rr.files.items[0];
		CHECK(c->fixed.len == 0 && c->refused.len == 1, "changed after scan: %zu fixed, %zu refused",
		      c->fixed.len, c->refused.len);
		CHECK(c->refused.len == 1 && strstr(c->refused.items[0].reason, "changed since it was scanned"),
		      "changed after scan: reason '%s'", c->refused.len ? c->refused.items[0].reason : "");
		CHECK(c->new_len == c->old_len && memcmp(c->new_text, c->old_text, c->old_len) == 0,
		      "changed after scan: a rewrite was still made");
	}
	unlink(path);
	rmdir(dir);
	rewrite_result_release(&rr);
	free_scan(&sr);
	free(src);
	free(edited);
	free(path);
}

static void test_missing_spatch(void)
{
	struct scan_result sr = SCAN_RESULT_INIT;
	struct rewrite_result rr = REWRITE_RESULT_INIT;
	struct rewrite_options o = REWRITE_OPTIONS_INIT;
	o.spatch = "preemptify-no-such-spatch";
	int r = rewrite_plan(&sr, &o, &rr);
	CHECK(r == -1 && strstr(error_last(), "not found"), "missing spatch: %d %s", r,
	      error_last());
	rewrite_result_release(&rr);
}

/* ---- spawn -------------------------------------------------------------- */

static void test_spawn(void)
{
	struct spawn_result res;
	char *echo_both[] = {"sh", "-c", "echo out; echo err >&2; exit 7", NULL};
	CHECK(spawn_run(echo_both, NULL, 5, &res) == 0, "spawn sh");
	CHECK(res.exit_code == 7 && strstr(res.output, "out") && strstr(res.output, "err"),
	      "spawn: exit %d output '%s'", res.exit_code, res.output);
	spawn_result_release(&res);

	char *sleeper[] = {"sleep", "30", NULL};
	CHECK(spawn_run(sleeper, NULL, 1, &res) == 0 && res.timed_out && res.signal == SIGKILL,
	      "spawn timeout");
	spawn_result_release(&res);

	char *missing[] = {"preemptify-no-such-program", NULL};
	CHECK(spawn_run(missing, NULL, 1, &res) < 0 && strstr(error_last(), "not found"),
	      "spawn missing: %s", error_last());
	spawn_result_release(&res);

	char *notexec[] = {"/etc/passwd", NULL};
	CHECK(spawn_run(notexec, NULL, 1, &res) < 0, "spawn non-executable");
	spawn_result_release(&res);
}

/* ---- writefile and textdiff --------------------------------------------- */

static void test_writefile(void)
{
	char dir[] = "/tmp/preemptify-wf-XXXXXX";
	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	char *path = xasprintf("%s/a.c", dir);
	char *bak = xasprintf("%s/a.c.orig", dir);
	FILE *f = fopen(path, "w");
	fputs("old\n", f);
	fclose(f);
	chmod(path, 0640);

	CHECK(writefile_replace(path, "old\n", 4, "new\n", 4, ".orig", false) == 0, "write: %s",
	      error_last());
	char *got = slurp(path), *gotbak = slurp(bak);
	CHECK(strcmp(got, "new\n") == 0, "content '%s'", got);
	CHECK(strcmp(gotbak, "old\n") == 0, "backup '%s'", gotbak);
	struct stat st;
	stat(path, &st);
	CHECK((st.st_mode & 0777) == 0640, "mode %o", (unsigned)(st.st_mode & 0777));
	free(got);
	free(gotbak);

	/* The file changed since it was read: refused, untouched. */
	CHECK(writefile_replace(path, "old\n", 4, "newer\n", 6, NULL, false) < 0 &&
		      strstr(error_last(), "changed since"),
	      "changed-since-read not refused: %s", error_last());
	got = slurp(path);
	CHECK(strcmp(got, "new\n") == 0, "file touched after refusal: '%s'", got);
	free(got);

	/* A write that fails (the fault hook stands in for a full disk): refused, untouched. */
	setenv("PREEMPTIFY_TEST_FAULT", "write-fail=1", 1);
	CHECK(writefile_replace(path, "new\n", 4, "newest\n", 7, NULL, false) < 0 &&
		      strstr(error_last(), "No space left"),
	      "failed write not reported: %s", error_last());
	got = slurp(path);
	CHECK(strcmp(got, "new\n") == 0, "file touched after a failed write: '%s'", got);
	free(got);

	/* Another writer changes the file while the new one is being written: refused, theirs kept. */
	setenv("PREEMPTIFY_TEST_FAULT", "write-delay-ms=400", 1);
	pid_t other = fork();
	if (other == 0) {
		nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
		FILE *o = fopen(path, "a");
		fputs("theirs\n", o);
		fclose(o);
		_exit(0);
	}
	CHECK(writefile_replace(path, "new\n", 4, "ours\n", 5, NULL, false) < 0 &&
		      strstr(error_last(), "changed since"),
	      "a change in the write window was not seen: %s", error_last());
	waitpid(other, NULL, 0);
	unsetenv("PREEMPTIFY_TEST_FAULT");
	got = slurp(path);
	CHECK(strcmp(got, "new\ntheirs\n") == 0, "the other writer's change was lost: '%s'", got);
	free(got);

	/* No temp files left behind. */
	char *cmd[] = {"sh", "-c", "ls \"$0\" | grep -c preemptify- || true", dir, NULL};
	struct spawn_result res;
	spawn_run(cmd, NULL, 5, &res);
	CHECK(res.output && atoi(res.output) == 0, "temp files left: %s", res.output);
	spawn_result_release(&res);

	unlink(path);
	unlink(bak);
	rmdir(dir);
	free(path);
	free(bak);
}

static void test_textdiff(void)
{
	struct buf b = BUF_INIT;
	struct textdiff_options o = TEXTDIFF_OPTIONS_INIT;
	const char *a = "a\nb\nc\n", *c = "a\nB\nc\n";
	CHECK(textdiff_unified(&b, "./x/y.c", a, strlen(a), c, strlen(c), &o) == 0, "diff");
	const char *want = "diff --git a/x/y.c b/x/y.c\n--- a/x/y.c\n+++ b/x/y.c\n"
			   "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n";
	CHECK(strcmp(buf_cstr(&b), want) == 0, "diff text:\n%s", buf_cstr(&b));
	buf_clear(&b);
	CHECK(textdiff_unified(&b, "x.c", a, strlen(a), a, strlen(a), &o) == 0 && b.len == 0,
	      "equal texts give no diff");
	const char *nonl = "a\nb";
	CHECK(textdiff_unified(&b, "x.c", a, strlen(a), nonl, strlen(nonl), &o) == 0 &&
		      strstr(buf_cstr(&b), "\\ No newline at end of file\n"),
	      "no-newline marker:\n%s", buf_cstr(&b));
	buf_release(&b);
}

/*
 * spatch is given only the functions that hold the sites of each run (the
 * others blanked, lines kept), the runs of several files share a process,
 * and the results are exactly what whole files, one process each, give.
 */
static void test_slice(void)
{
	char rec[] = "/tmp/preemptify-slice-XXXXXX";
	int fd = mkstemp(rec);
	if (!CHECK(fd >= 0, "mkstemp"))
		return;
	close(fd);
	setenv("FAKE_SPATCH_MODE", "record", 1);
	setenv("FAKE_SPATCH_RECORD", rec, 1);
	struct scan_result sr = SCAN_RESULT_INIT;
	struct rewrite_result rr = REWRITE_RESULT_INIT;
	struct rewrite_options o = REWRITE_OPTIONS_INIT;
	char *srcs[ARRAY_SIZE(fixtures)];
	char *fake = data_path("fake-spatch");
	o.spatch = fake;
	build_all(&sr, srcs);
	CHECK(rewrite_plan(&sr, &o, &rr) == 0, "sliced rewrite_plan");
	for (size_t i = 0; i < ARRAY_SIZE(fixtures); i++) {
		char *p = data_path(fixtures[i].name);
		check_expected(change_for(&rr, p), fixtures[i].expected);
		free(p);
	}
	/* these four files need different fix kinds: no run can share a process (tests/cli/tree.sh has files that do) */
	CHECK(rr.spatch_processes > 0 && rr.spatch_batched == 0, "%u processes, %u runs shared one",
	      rr.spatch_processes, rr.spatch_batched);
	/* one process per run: the same results */
	struct rewrite_result alone = REWRITE_RESULT_INIT;
	o.no_batch = true;
	CHECK(rewrite_plan(&sr, &o, &alone) == 0, "rewrite_plan without batches");
	for (size_t i = 0; i < ARRAY_SIZE(fixtures); i++) {
		char *p = data_path(fixtures[i].name);
		check_expected(change_for(&alone, p), fixtures[i].expected);
		free(p);
	}
	rewrite_result_release(&alone);
	char *seen = slurp(rec);
	/* spatch is told which Python to start (the interpreter python3 resolves to), when there is one */
	char *py = NULL;
	if (spawn_find_program("python3", &py) == 0)
		CHECK(strstr(seen, "=== args --python /") != NULL, "spatch runs get --python PATH");
	free(py);
	/*
	 * the yield run of multi.c: give_up() and the declarations; rx() and
	 * unlock_fast() blanked, unlock_fast()'s directives kept but the line
	 * in a comment that starts with one
	 */
	bool sliced = false;
	for (char *in = seen, *end; in && *in; in = end + 8) {
		end = strstr(in, "=== end\n");
		if (!end)
			break;
		*end = '\0';
		if (strstr(in, "SCHED_YIELD") && strstr(in, "void give_up(void)\n{"))
			sliced = strstr(in, "pkts") && !strstr(in, "unlock_fast") && !strstr(in, "d->busy") &&
				 strstr(in, "\n \n") && strstr(in, "\n#ifdef CONFIG_SMP\n") &&
				 strstr(in, "\n#else\n") && strstr(in, "\n#endif\n") && !strstr(in, "#endif at");
	}
	CHECK(sliced, "the yield run on multi.c saw give_up(), the declarations and the directives, the rest blanked");
	free(seen);
	rewrite_result_release(&rr);
	for (size_t i = 0; i < ARRAY_SIZE(fixtures); i++)
		free(srcs[i]);
	free_scan(&sr);
	free(fake);
	unlink(rec);
	unsetenv("FAKE_SPATCH_MODE");
	unsetenv("FAKE_SPATCH_RECORD");
}

/* Parts that run the real spatch (some wrap it in tests/rewrite/fake-spatch). */
static const char *const needs_spatch[] = {
	"fixtures", "fake-crash", "fake-exit255", "fake-hang", "fake-unbalanced", "fake-comment",
	"fake-extra", "fake-lose", "array-together", "hostile-name", "changed-after-scan", "slice",
};

/* Can PART run here? A part whose tool is missing says so and is skipped, never passed. */
static bool can_run(const char *part, int *skipped)
{
	for (size_t i = 0; i < ARRAY_SIZE(needs_spatch); i++) {
		if (strcmp(needs_spatch[i], part) != 0)
			continue;
		char *path = NULL;
		bool found = spawn_find_program("spatch", &path) == 0;
		free(path);
		if (!found) {
			printf("SKIP (%s): spatch is not installed\n", part);
			++*skipped;
		}
		return found;
	}
	return true;
}

int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : "all";
	bool all = strcmp(only, "all") == 0;
	int skipped = 0;
#define PART(name) ((all || strcmp(only, name) == 0) && can_run(name, &skipped))

	if (PART("spawn"))
		test_spawn();
	if (PART("writefile"))
		test_writefile();
	if (PART("textdiff"))
		test_textdiff();
	if (PART("fixtures"))
		test_fixtures();
	if (PART("missing"))
		test_missing_spatch();
	if (PART("fake-crash"))
		with_fake("crash", 30, "signal 11");
	if (PART("fake-exit255"))
		with_fake("exit255", 30, "exit 255");
	if (PART("fake-hang"))
		with_fake("hang", 8, "timed out");
	if (PART("fake-unbalanced"))
		with_wrong_rewrite("unbalanced", "not the planned change");
	if (PART("fake-comment"))
		with_wrong_rewrite("comment", "the comment `/* count it */`");
	if (PART("fake-extra"))
		with_wrong_rewrite("extra", "not the planned change");
	if (PART("fake-lose"))
		with_wrong_rewrite("lose", "did not");
	if (PART("array-together"))
		test_array_together();
	if (PART("hostile-name"))
		test_hostile_name();
	if (PART("changed-after-scan"))
		test_changed_after_scan();
	if (PART("slice"))
		test_slice();
#undef PART
	int rc = check_summary();
	return rc == 0 && skipped ? 77 : rc; /* ctest's SKIP_RETURN_CODE (tests/rewrite.cmake) */
}
