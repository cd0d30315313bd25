/*
 * test_repo: the git stage's test tool (like git's test-tool).
 *
 *   test_repo unit                       unit tests of the message module
 *   test_repo message [--prefix P] [--signoff ID] SPEC
 *                                        prints the message for all of SPEC as one commit
 *   test_repo commit [--repo DIR] [--branch B] [--force] [--group file|dir]
 *                    [--prefix P] [--signoff] [--dry-run] [--skip-dirty] SPEC
 *   test_repo series [--repo DIR] [--range R] [--subject-prefix P] [--signoff] [--force]
 *                    [--no-cover] [--to A]... [--cc A]... [--reroll-count N] [--base REV] OUTDIR
 *
 * SPEC fabricates what the rewrite stage would hand over, one line each:
 *   file PATH NEWFILE [OLDFILE]  a change; old text read from PATH now (or
 *                             from OLDFILE: what the rewrite "read"), new
 *                             text from NEWFILE ("-": unchanged)
 *   fixed RULE FIX LINE MESSAGE [| EVIDENCE]
 *   refused RULE FIX LINE MESSAGE | REASON
 *   error TEXT                the rewrite of this file failed
 * Lines starting with '#' and blank lines are skipped.
 *
 * commit prints "commit ID SUBJECT" (ID "-" in a dry run) then "  PATH" per
 * file, and "unchanged PATH"; failures print "error: ..." and exit 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "git/message.h"
#include "git/repo.h"

/* ---- spec files ---- */

struct spec {
	VEC(struct file_change) changes;
	VEC(struct finding *) findings; /* owned here; changes point at them */
};

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

static struct finding *spec_finding(struct spec *sp, char *rest, char **tail)
{
	char *rule = strtok(rest, " "), *fix = strtok(NULL, " "), *line = strtok(NULL, " ");
	char *text = strtok(NULL, "");
	if (!rule || !fix || !line || rule_parse(rule) < 0 || fix_parse(fix) < 0)
		return NULL;
	struct finding *f = xcalloc(1, sizeof *f);
	f->rule = (enum rule_id)rule_parse(rule);
	f->fix = (enum fix_kind)fix_parse(fix);
	f->pos.line = (unsigned)atoi(line);
	f->pos.column = 1;
	char *bar = text ? strchr(text, '|') : NULL;
	if (bar)
		*bar = '\0';
	f->message = xstrdup(text ? trim(text) : "");
	*tail = bar ? xstrdup(trim(bar + 1)) : NULL;
	vec_push(&sp->findings, f);
	return f;
}

static int spec_read(const char *path, struct spec *sp)
{
	FILE *in = fopen(path, "r");
	if (!in) {
		fprintf(stderr, "error: %s: cannot open\n", path);
		return -1;
	}
	char line[4096];
	int rc = 0;
	while (rc == 0 && fgets(line, sizeof line, in)) {
		char *s = trim(line);
		if (!*s || *s == '#')
			continue;
		char *kw = strtok(s, " ");
		char *rest = strtok(NULL, "");
		struct file_change *c = sp->changes.len ? &sp->changes.items[sp->changes.len - 1] : NULL;
		if (strcmp(kw, "file") == 0 && rest) {
			char *p = strtok(rest, " "), *nf = strtok(NULL, " "), *of = strtok(NULL, " ");
			struct file_change fc;
			memset(&fc, 0, sizeof fc);
			if (!p || !nf || read_file(of ? of : p, &fc.old_text, &fc.old_len) < 0) {
				fprintf(stderr, "error: spec: %s\n", p && nf ? error_last() : "file PATH NEWFILE");
				rc = -1;
				break;
			}
			fc.path = xstrdup(p);
			if (strcmp(nf, "-") == 0) {
				fc.new_text = xstrndup(fc.old_text, fc.old_len);
				fc.new_len = fc.old_len;
			} else if (read_file(nf, &fc.new_text, &fc.new_len) < 0) {
				fprintf(stderr, "error: spec: %s\n", error_last());
				free(fc.path);
				free(fc.old_text);
				rc = -1;
				break;
			}
			vec_push(&sp->changes, fc);
		} else if (c && (strcmp(kw, "fixed") == 0 || strcmp(kw, "refused") == 0) && rest) {
			char *tail = NULL;
			struct finding *f = spec_finding(sp, rest, &tail);
			if (!f) {
				fprintf(stderr, "error: spec: bad %s line\n", kw);
				rc = -1;
				break;
			}
			f->file = xstrdup(c->path);
			if (kw[0] == 'f') {
				f->evidence = tail;
				vec_push(&c->fixed, f);
			} else {
				struct refusal r = {f, tail ? tail : xstrdup("")};
				vec_push(&c->refused, r);
			}
		} else if (c && strcmp(kw, "error") == 0) {
			c->error = xstrdup(rest ? rest : "failed");
		} else {
			fprintf(stderr, "error: spec: unknown line '%s'\n", kw);
			rc = -1;
		}
	}
	fclose(in);
	return rc;
}

static void spec_free(struct spec *sp)
{
	for (size_t i = 0; i < sp->changes.len; i++) {
		struct file_change *c = &sp->changes.items[i];
		free(c->path);
		free(c->old_text);
		free(c->new_text);
		free(c->error);
		vec_release(&c->fixed);
		for (size_t k = 0; k < c->refused.len; k++)
			free(c->refused.items[k].reason);
		vec_release(&c->refused);
	}
	vec_release(&sp->changes);
	for (size_t i = 0; i < sp->findings.len; i++) {
		finding_release(sp->findings.items[i]);
		free(sp->findings.items[i]);
	}
	vec_release(&sp->findings);
}

/* ---- unit tests ---- */

static void check_str(const char *what, char *got, const char *want)
{
	if (strcmp(got, want) != 0) {
		fprintf(stderr, "%s: got '%s', want '%s'\n", what, got, want);
		check_failed++;
	}
	free(got);
}

static struct finding mkfinding(enum rule_id r, enum fix_kind fx, unsigned line, const char *msg,
				const char *evidence)
{
	struct finding f;
	memset(&f, 0, sizeof f);
	f.rule = r;
	f.fix = fx;
	f.pos.line = line;
	f.message = (char *)msg;
	f.evidence = (char *)evidence;
	return f;
}

static char *summary_of(struct finding *fs, size_t n, size_t budget)
{
	struct file_change c;
	memset(&c, 0, sizeof c);
	for (size_t i = 0; i < n; i++)
		vec_push(&c.fixed, &fs[i]);
	const struct file_change *cp = &c;
	char *s = message_summary(&cp, 1, budget);
	vec_release(&c.fixed);
	return s;
}

static void unit_prefix(void)
{
	check_str("net", message_prefix("drivers/net/foo.c"), "net: foo");
	check_str("char", message_prefix("drivers/char/lp.c"), "char: lp");
	check_str("usb", message_prefix("drivers/usb/serial/x.c"), "usb: x");
	check_str("media", message_prefix("drivers/media/video/c-qcam.c"), "media: c-qcam");
	check_str("jbd", message_prefix("fs/jbd/commit.c"), "jbd: commit");
	check_str("dot", message_prefix("./drivers/net/foo.c"), "net: foo");
	check_str("deep", message_prefix("drivers/net/wireless/orinoco/hermes.c"), "net: hermes");
	check_str("repeat", message_prefix("fs/jbd/jbd.c"), "jbd");
	check_str("top", message_prefix("foo.c"), "foo");
	check_str("kernel", message_prefix("kernel/sched.c"), "kernel: sched");
	check_str("arch", message_prefix("arch/i386/kernel/smp.c"), "i386: smp");
	const char *same[] = {"drivers/net/a.c", "drivers/net/b.c"};
	check_str("common", message_common_prefix(same, 2), "net");
	const char *none[] = {"drivers/net/a.c", "fs/jbd/b.c"};
	check_str("common none", message_common_prefix(none, 2), "");
	const char *deep[] = {"drivers/usb/serial/a.c", "drivers/usb/serial/b.c"};
	check_str("common deep", message_common_prefix(deep, 2), "usb");
}

static void unit_summary(void)
{
	static const struct {
		enum fix_kind fix;
		const char *want;
	} one[] = {
		{FIX_DEFINE_PER_CPU, "make per-CPU statistics preempt-safe"},
		{FIX_GET_CPU_VAR, "make per-CPU statistics preempt-safe"},
		{FIX_GET_CPU, "use get_cpu()/put_cpu() around CPU number use"},
		{FIX_COND_RESCHED, "use cond_resched()"},
		{FIX_NEED_RESCHED_CALL, "use need_resched()"},
		{FIX_YIELD, "use yield()"},
		{FIX_CHECK_RESCHED, "call preempt_check_resched() after preempt_enable_no_resched()"},
		{FIX_RESCHED_FLAG, "use set_tsk_need_resched()/clear_tsk_need_resched()"},
		{FIX_PREEMPT_REGION, "hold preemption off where the CPU number is read"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(one); i++) {
		struct finding f = mkfinding(RULE_P004, one[i].fix, 1, "m", NULL);
		check_str(fix_name(one[i].fix), summary_of(&f, 1, 70), one[i].want);
	}
	/* the same kind twice reads as one */
	struct finding two[] = {mkfinding(RULE_P004, FIX_COND_RESCHED, 1, "m", NULL),
				mkfinding(RULE_P004, FIX_COND_RESCHED, 9, "m", NULL)};
	check_str("twice", summary_of(two, 2, 70), "use cond_resched()");
	struct finding pc[] = {mkfinding(RULE_P001, FIX_DEFINE_PER_CPU, 1, "m", NULL),
			       mkfinding(RULE_P002, FIX_GET_CPU_VAR, 9, "m", NULL)};
	check_str("per-cpu pair", summary_of(pc, 2, 70), "make per-CPU statistics preempt-safe");
	struct finding mix[] = {mkfinding(RULE_P004, FIX_YIELD, 1, "m", NULL),
				mkfinding(RULE_P004, FIX_COND_RESCHED, 2, "m", NULL)};
	check_str("use pair", summary_of(mix, 2, 70), "use cond_resched() and yield()");
	struct finding mix3[] = {mkfinding(RULE_P001, FIX_DEFINE_PER_CPU, 1, "m", NULL),
				 mkfinding(RULE_P004, FIX_COND_RESCHED, 2, "m", NULL),
				 mkfinding(RULE_P003, FIX_GET_CPU, 3, "m", NULL)};
	check_str("three", summary_of(mix3, 3, 90),
		  "make per-CPU statistics preempt-safe, use get_cpu()/put_cpu() and cond_resched()");
	check_str("three compact", summary_of(mix3, 3, 65),
		  "make preempt-safe: get_cpu(), per-CPU data and cond_resched()");
	check_str("three tight", summary_of(mix3, 3, 40), "make preempt-safe (3 kinds of fix)");
	struct finding cr = mkfinding(RULE_P005, FIX_CHECK_RESCHED, 1, "m", NULL);
	check_str("tight", summary_of(&cr, 1, 40), "add preempt_check_resched()");
	check_str("none", summary_of(NULL, 0, 70), "make preempt-safe for 2.6");
}

static void unit_message(void)
{
	struct finding f1 = mkfinding(RULE_P004, FIX_COND_RESCHED, 120,
		"manual reschedule check: current->need_resched polled and schedule() called",
		"2.6 removed the need_resched field. cond_resched() does the test and the call.");
	f1.function = "foo_poll";
	struct finding f2 = mkfinding(RULE_P003, FIX_GET_CPU, 88,
		"CPU number cpu from smp_processor_id() used in preemptible code", NULL);
	struct file_change c;
	memset(&c, 0, sizeof c);
	vec_push(&c.fixed, &f1);
	struct refusal rf = {&f2, "a get_cpu()/put_cpu() region would contain kmalloc(GFP_KERNEL) at line 95"};
	vec_push(&c.refused, rf);
	const struct file_change *cp = &c;
	const char *path = "drivers/net/foo.c";
	struct message_options mo = {NULL, "A U Thor <author@example.com>"};
	char *m = message_build(&cp, &path, 1, &mo);
	char *want = xasprintf(
		"net: foo: use cond_resched()\n"
		"\n"
		"2.6 keeps need_resched in the thread flags and offers cond_resched() as\n"
		"the voluntary reschedule point. Replace the open-coded 2.4 check in\n"
		"foo_poll(), which tests current->need_resched and calls schedule(), with\n"
		"cond_resched(). This is an API conversion: the code still reschedules at\n"
		"the same place.\n"
		"\n"
		"Generated by: preemptify %s (cond-resched)\n"
		"Signed-off-by: A U Thor <author@example.com>\n", PREEMPTIFY_VERSION);
	if (strcmp(m, want) != 0) {
		fprintf(stderr, "message:\n--- got\n%s--- want\n%s---\n", m, want);
		check_failed++;
	}
	free(want);
	/* every body line fits in 72 columns; no rule code, no line number, no refusal */
	for (const char *l = strchr(m, '\n') + 1; *l; ) {
		size_t len = strcspn(l, "\n");
		CHECK(len <= MESSAGE_BODY_WIDTH);
		l += len + (l[len] == '\n');
	}
	CHECK(strstr(m, "P004") == NULL && strstr(m, "line 120") == NULL && strstr(m, "kmalloc") == NULL);
	free(m);
	for (int k = 1; k < FIX_COUNT; k++)
		CHECK(message_has_paragraph((enum fix_kind)k));

	/* prefix override, with or without its colon; no signoff -> no trailer */
	struct message_options ov = {"net: e100:", NULL};
	m = message_build(&cp, &path, 1, &ov);
	CHECK(strncmp(m, "net: e100: use cond_resched()\n", 30) == 0);
	CHECK(strstr(m, "Signed-off-by") == NULL);
	free(m);
	ov.prefix = "";
	m = message_build(&cp, &path, 1, &ov);
	CHECK(strncmp(m, "use cond_resched()\n", 19) == 0);
	free(m);

	/* a long path keeps the subject within 75 columns */
	struct finding f3 = mkfinding(RULE_P005, FIX_CHECK_RESCHED, 7, "no check", NULL);
	struct file_change c3;
	memset(&c3, 0, sizeof c3);
	vec_push(&c3.fixed, &f3);
	const struct file_change *c3p = &c3;
	const char *lp = "drivers/usb/serial/a_very_long_driver_file_name_for_testing.c";
	m = message_build(&c3p, &lp, 1, NULL);
	size_t sl = strcspn(m, "\n");
	CHECK(sl <= MESSAGE_SUBJECT_MAX);
	CHECK(strncmp(m, "usb: a_very_long_driver_file_name_for_testing: add preempt_check_resched()\n",
		      sl + 1) == 0);
	free(m);

	/* two files: common prefix, one paragraph per kind of change, the kinds on the Generated-by line */
	const struct file_change *both[] = {&c, &c3};
	const char *paths[] = {"drivers/net/foo.c", "drivers/net/bar.c"};
	m = message_build(both, paths, 2, NULL);
	CHECK(strncmp(m, "net: use cond_resched() and preempt_check_resched()\n", 52) == 0);
	CHECK(strstr(m, "\nReplace the open-coded") == NULL && strstr(m, "\n2.6 keeps need_resched") != NULL);
	CHECK(strstr(m, "\npreempt_enable_no_resched() turns preemption back on") != NULL);
	CHECK(strstr(m, "(cond-resched, check-resched)\n") != NULL);
	free(m);

	/* a per-CPU array is named from its DEFINE_PER_CPU edit */
	struct finding f4 = mkfinding(RULE_P001, FIX_DEFINE_PER_CPU, 5, "m", NULL);
	struct edit e4;
	memset(&e4, 0, sizeof e4);
	e4.text = "DEFINE_PER_CPU(struct foo_stats, foo_stats)";
	vec_push(&f4.edits, e4);
	struct file_change c4;
	memset(&c4, 0, sizeof c4);
	vec_push(&c4.fixed, &f4);
	const struct file_change *c4p = &c4;
	m = message_build(&c4p, &path, 1, NULL);
	CHECK(strstr(m, "\nThe 2.4 per-CPU array foo_stats, indexed by the running CPU's number,\nbecomes") != NULL);
	free(m);
	vec_release(&f4.edits);
	vec_release(&c4.fixed);
	vec_release(&c.fixed);
	vec_release(&c.refused);
	vec_release(&c3.fixed);
}

/* series --split-by subsystem: the one rule that names a file's subsystem */
static void unit_subsystem(void)
{
	static const char *const cases[][2] = {
		{"drivers/net/foo.c", "drivers/net"},
		{"drivers/net/tulip/de4x5.c", "drivers/net"},
		{"drivers/char/lp.c", "drivers/char"},
		{"drivers/scsi/aic7xxx/aic7xxx.c", "drivers/scsi"},
		{"drivers/Makefile", "drivers"},
		{"net/ipv4/tcp.c", "net/ipv4"},
		{"net/socket.c", "net"},
		{"arch/i386/kernel/smp.c", "arch/i386"},
		{"fs/jbd/commit.c", "fs/jbd"},
		{"fs/buffer.c", "fs"},
		{"kernel/sched.c", "kernel"},
		{"include/linux/sched.h", "include"},
		{"include/asm-i386/smp.h", "include"},
		{"mm/slab.c", "mm"},
		{"Makefile", "Makefile"},
		{"driversx/a/b.c", "driversx"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got = repo_subsystem(cases[i][0]);
		CHECK(strcmp(got, cases[i][1]) == 0, "%s: subsystem %s, want %s", cases[i][0], got, cases[i][1]);
		free(got);
	}
}

static int run_unit(void)
{
	unit_prefix();
	unit_summary();
	unit_message();
	unit_subsystem();
	if (check_failed)
		fprintf(stderr, "%d check(s) failed\n", check_failed);
	else
		printf("message: all checks passed\n");
	return check_failed ? 1 : 0;
}

/* ---- commands ---- */

static const char *arg_value(int *i, int argc, char **argv)
{
	if (*i + 1 >= argc) {
		fprintf(stderr, "error: %s needs a value\n", argv[*i]);
		exit(2);
	}
	return argv[++*i];
}

static int run_message(int argc, char **argv)
{
	struct message_options mo = MESSAGE_OPTIONS_INIT;
	const char *specpath = NULL;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--prefix") == 0)
			mo.prefix = arg_value(&i, argc, argv);
		else if (strcmp(argv[i], "--signoff") == 0)
			mo.signoff = arg_value(&i, argc, argv);
		else
			specpath = argv[i];
	}
	struct spec sp = {VEC_INIT, VEC_INIT};
	if (!specpath || spec_read(specpath, &sp) < 0)
		return 2;
	VEC(const struct file_change *) cs = VEC_INIT;
	VEC(const char *) ps = VEC_INIT;
	for (size_t i = 0; i < sp.changes.len; i++) {
		vec_push(&cs, &sp.changes.items[i]);
		vec_push(&ps, sp.changes.items[i].path);
	}
	char *m = message_build(cs.items, ps.items, cs.len, &mo);
	fputs(m, stdout);
	free(m);
	vec_release(&cs);
	vec_release(&ps);
	spec_free(&sp);
	return 0;
}

static int run_commit(int argc, char **argv)
{
	struct repo_commit_options o = REPO_COMMIT_OPTIONS_INIT;
	const char *dir = ".", *specpath = NULL;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--repo") == 0)
			dir = arg_value(&i, argc, argv);
		else if (strcmp(argv[i], "--branch") == 0)
			o.branch = arg_value(&i, argc, argv);
		else if (strcmp(argv[i], "--force") == 0)
			o.force = true;
		else if (strcmp(argv[i], "--group") == 0) {
			int g = repo_group_parse(arg_value(&i, argc, argv));
			if (g < 0) {
				fprintf(stderr, "error: --group: file or dir\n");
				return 2;
			}
			o.group = (enum repo_group)g;
		} else if (strcmp(argv[i], "--prefix") == 0)
			o.prefix = arg_value(&i, argc, argv);
		else if (strcmp(argv[i], "--signoff") == 0)
			o.signoff = true;
		else if (strcmp(argv[i], "--dry-run") == 0)
			o.dry_run = true;
		else if (strcmp(argv[i], "--skip-dirty") == 0)
			o.skip_dirty = true;
		else
			specpath = argv[i];
	}
	struct spec sp = {VEC_INIT, VEC_INIT};
	struct repo *r = NULL;
	struct repo_commit_report rep = REPO_COMMIT_REPORT_INIT;
	int rc = 1;
	if (!specpath || spec_read(specpath, &sp) < 0) {
		rc = 2;
		goto done;
	}
	if (repo_open(&r, dir) < 0) {
		fprintf(stderr, "error: %s\n", error_last());
		goto done;
	}
	int e = repo_commit_changes(r, &o, sp.changes.items, sp.changes.len, &rep);
	for (size_t i = 0; i < rep.commits.len; i++) {
		const struct repo_commit *c = &rep.commits.items[i];
		printf("commit %s %s\n", c->id[0] ? c->id : "-", c->subject);
		for (size_t k = 0; k < c->paths.len; k++)
			printf("  %s\n", c->paths.items[k]);
	}
	for (size_t i = 0; i < rep.unchanged.len; i++)
		printf("unchanged %s\n", rep.unchanged.items[i]);
	for (size_t i = 0; i < rep.skipped.len; i++)
		printf("skipped %s\n", rep.skipped.items[i]);
	if (e < 0) {
		fprintf(stderr, "error: %s\n", error_last());
		goto done;
	}
	rc = 0;
done:
	repo_commit_report_release(&rep);
	repo_free(r);
	spec_free(&sp);
	return rc;
}

static int run_series(int argc, char **argv)
{
	struct repo_series_options o = REPO_SERIES_OPTIONS_INIT;
	const char *dir = ".", *range = NULL, *outdir = NULL;
	struct strvec to = STRVEC_INIT, cc = STRVEC_INIT;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--to") == 0)
			strvec_push(&to, arg_value(&i, argc, argv));
		else if (strcmp(argv[i], "--cc") == 0)
			strvec_push(&cc, arg_value(&i, argc, argv));
		else if (strcmp(argv[i], "--reroll-count") == 0)
			o.reroll_count = atoi(arg_value(&i, argc, argv));
		else if (strcmp(argv[i], "--base") == 0)
			o.base = arg_value(&i, argc, argv);
		else
		if (strcmp(argv[i], "--repo") == 0)
			dir = arg_value(&i, argc, argv);
		else if (strcmp(argv[i], "--range") == 0)
			range = arg_value(&i, argc, argv);
		else if (strcmp(argv[i], "--subject-prefix") == 0)
			o.subject_prefix = arg_value(&i, argc, argv);
		else if (strcmp(argv[i], "--signoff") == 0)
			o.signoff = true;
		else if (strcmp(argv[i], "--no-cover") == 0)
			o.cover_letter = false;
		else if (strcmp(argv[i], "--force") == 0)
			o.force = true;
		else
			outdir = argv[i];
	}
	o.to = to.items;
	o.nto = to.len;
	o.cc = cc.items;
	o.ncc = cc.len;
	struct repo *r = NULL;
	struct repo_series_report rep = REPO_SERIES_REPORT_INIT;
	int rc = 2, e;
	if (!outdir) {
		fprintf(stderr, "error: no OUTDIR\n");
		goto done;
	}
	rc = 1;
	if ((e = repo_open(&r, dir)) < 0 || (e = repo_series(r, &o, range, outdir, &rep)) < 0) {
		fprintf(stderr, "error: %s\n", error_last());
		if (e == REPO_EUSAGE)
			rc = 2;
		goto done;
	}
	for (size_t i = 0; i < rep.files.len; i++)
		printf("%s\n", rep.files.items[i]);
	rc = 0;
done:
	repo_series_report_release(&rep);
	repo_free(r);
	strvec_release(&to);
	strvec_release(&cc);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "unit") == 0)
		return run_unit();
	if (argc >= 2 && strcmp(argv[1], "message") == 0)
		return run_message(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "commit") == 0)
		return run_commit(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "series") == 0)
		return run_series(argc, argv);
	fprintf(stderr, "usage: test_repo unit | message SPEC | commit [opts] SPEC | series [opts] OUTDIR\n");
	return 2;
}
