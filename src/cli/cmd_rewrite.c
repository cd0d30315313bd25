/* The diff and apply commands: scan, plan the rewrite with spatch, show or write it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cache.h"
#include "cli/account.h"
#include "cli/commands.h"
#include "fix/rewrite.h"
#include "fix/textdiff.h"
#include "util/interrupt.h"
#include "util/writefile.h"

/* Prints the files rewrite_plan() could not rewrite; their sites are in the account (account.h). */
static void print_file_errors(const struct rewrite_result *rr)
{
	for (size_t i = 0; i < rr->files.len; i++) {
		const struct file_change *c = &rr->files.items[i];
		if (c->error)
			fprintf(stderr, "%s: error: %s\n", c->path, after_path(c->error, c->path));
	}
}

int rewrite_cli_run(const struct cli_command *cmd, struct rewrite_cmd *c)
{
	const struct rewrite_cli *o = &c->rewrite;
	struct rewrite_options ro = REWRITE_OPTIONS_INIT;
	c->scan.target = o->target;
	if (scan_cli_config(cmd, &c->scan, &c->paths) != EXIT_OK)
		return EXIT_USAGE;
	struct scan_cli sa = c->scan;
	if (o->timeout <= 0) {
		fprintf(stderr, "preemptify %s: option '--timeout' must be > 0\n", cmd->name);
		return EXIT_USAGE;
	}
	c->scan.progress = sa.progress = cli_progress(c->scan.quiet);
	int rc = scan_cli_run(cmd, &sa, &c->paths, &c->sr);
	c->scan.hidden_baseline = sa.hidden_baseline;
	c->scan.hidden_config = sa.hidden_config;
	if (rc == EXIT_USAGE || interrupted())
		return rc == EXIT_USAGE ? rc : EXIT_FAILED;
	for (size_t i = 0; i < c->sr.diagnostics.len; i++) {
		const struct diagnostic *d = &c->sr.diagnostics.items[i];
		if (d->line) {
			if (!c->scan.quiet)
				fprintf(stderr, "%s:%u:%u: note: %s\n", d->file, d->line, d->column, d->message);
		} else
			fprintf(stderr, "%s: error: %s\n", d->file, after_path(d->message, d->file));
	}
	struct scan_options so;
	if (scan_cli_options(cmd, &sa, &so) < 0)
		return EXIT_USAGE;
	so.tree = c->sr.tree; /* the verdicts the plan is verified against */
	so.want = false;
	ro.scan = &so;
	ro.jobs = c->scan.jobs;
	ro.timeout_sec = o->timeout;
	ro.spatch = o->spatch;
	ro.no_slice = o->no_slice;
	ro.no_batch = o->no_batch;
	ro.progress = sa.progress;
	/* spatch steps seen before are answered from the cache (cache.h) */
	struct step_store *steps = c->scan.no_cache ? NULL : step_store_open(c->scan.cache_dir, o->spatch);
	ro.memo = step_store_memo(steps);
	ro.validated = file_store_memo(steps); /* the same store, asked for validations */
	int nfail = rewrite_plan(&c->sr, &ro, &c->rr);
	step_store_counts(steps, STORE_VALIDATIONS, &c->validations_asked, &c->validations_reused);
	step_store_close(steps);
	progress_clear(sa.progress);
	if (interrupted())
		return EXIT_FAILED; /* nothing of an interrupted plan is shown or written */
	if (nfail < 0) {
		size_t n = 0;
		for (size_t i = 0; i < c->sr.findings.len; i++)
			n += c->sr.findings.items[i].fix != FIX_NONE && !c->sr.findings.items[i].protected_site;
		fprintf(stderr, "preemptify %s: %s\n", cmd->name, error_last());
		fprintf(stderr, "preemptify %s: nothing rewritten; %zu fixable site%s left as %s\n", cmd->name, n,
			n == 1 ? "" : "s", n == 1 ? "it is" : "they are");
		c->no_rewrite = true;
		return EXIT_FAILED;
	}
	print_file_errors(&c->rr);
	return nfail > 0 || rc == EXIT_FAILED ? EXIT_FAILED : EXIT_OK;
}

void rewrite_cmd_release(struct rewrite_cmd *c)
{
	rewrite_result_release(&c->rr);
	scan_result_release(&c->sr);
	strvec_release(&c->paths);
	progress_free(c->scan.progress);
	c->scan.progress = NULL;
	scan_cli_release(&c->scan);
}

/* How diff or apply shows its changes. */
struct emit_opts {
	bool apply;         /* write the files (apply), else show the diff */
	bool stat;          /* changed-line counts instead of the diff or the "fixed" lines */
	const char *backup; /* apply --backup SUFFIX, or NULL */
	bool force;         /* apply --force: a backup may replace a file that exists */
	struct textdiff_options diff;
};

/* What diff or apply did, for the closing line. */
struct stat_row {
	char *path; /* as diff shows it, owned */
	size_t add, del;
};

struct totals {
	size_t changed, fixed;
	size_t per_fix[FIX_COUNT];
	bool failed;
	VEC(struct stat_row) rows; /* --stat: one per changed file, printed at the end */
	struct strvec unwritten;   /* apply: files whose write failed (their fixes are left) */
};

/* Shows (into OUT) or writes one changed file. */
static void emit_change(const struct file_change *c, const struct emit_opts *e, struct buf *out,
			struct totals *t)
{
	if (e->stat) {
		size_t add = 0, del = 0;
		textdiff_count(c->old_text, c->old_len, c->new_text, c->new_len, &add, &del);
		struct stat_row r = {textdiff_display_path(c->path), add, del};
		vec_push(&t->rows, r);
	} else if (!e->apply) {
		if (textdiff_unified(out, c->path, c->old_text, c->old_len, c->new_text,
				     c->new_len, &e->diff) < 0) {
			fprintf(stderr, "%s: error: %s\n", c->path, after_path(error_last(), c->path));
			t->failed = true;
		}
	}
	if (e->apply) {
		if (writefile_replace(c->path, c->old_text, c->old_len, c->new_text, c->new_len,
				      e->backup, e->force) < 0) {
			fprintf(stderr, "%s: error: %s\n", c->path, after_path(error_last(), c->path));
			t->failed = true;
			strvec_push(&t->unwritten, c->path);
			return;
		}
		/* one line per file as it is written, so an interrupted run says what it did */
		if (!e->stat) {
			printf("fixed %s (%zu site%s)\n", c->path, c->fixed.len, c->fixed.len == 1 ? "" : "s");
			fflush(stdout);
		}
	}
	t->changed++;
	t->fixed += c->fixed.len;
	for (size_t k = 0; k < c->fixed.len; k++)
		t->per_fix[c->fixed.items[k]->fix]++;
}

/* After an interruption of apply: which changed files were not written. */
static void print_unwritten(const struct rewrite_result *rr, size_t from)
{
	size_t n = 0;
	for (size_t i = from; i < rr->files.len; i++) {
		const struct file_change *c = &rr->files.items[i];
		if (c->new_len == c->old_len && memcmp(c->new_text, c->old_text, c->old_len) == 0)
			continue;
		fprintf(stderr, "%s: not written (interrupted)\n", c->path);
		n++;
	}
	fprintf(stderr, "preemptify apply: interrupted; %zu file%s not written, every file is either "
		"unchanged or completely rewritten\n", n, n == 1 ? "" : "s");
}

/*
 * --stat as `git diff --stat` writes it: names padded to one column, the
 * count, a +/- graph scaled to fit 80 columns, then the summary line.
 */
static void print_stat(const struct totals *t)
{
	size_t namew = 0, maxc = 0, adds = 0, dels = 0;
	for (size_t i = 0; i < t->rows.len; i++) {
		const struct stat_row *r = &t->rows.items[i];
		namew = strlen(r->path) > namew ? strlen(r->path) : namew;
		maxc = r->add + r->del > maxc ? r->add + r->del : maxc;
		adds += r->add;
		dels += r->del;
	}
	int countw = snprintf(NULL, 0, "%zu", maxc);
	long graphw = 80 - (long)(1 + namew + 3 + (size_t)countw + 1);
	if (graphw < 10)
		graphw = 10;
	for (size_t i = 0; i < t->rows.len; i++) {
		const struct stat_row *r = &t->rows.items[i];
		size_t a = r->add, d = r->del;
		if (maxc > (size_t)graphw) { /* git's scale_linear() */
			a = a ? 1 + a * (size_t)(graphw - 1) / maxc : 0;
			d = d ? 1 + d * (size_t)(graphw - 1) / maxc : 0;
		}
		printf(" %-*s | %*zu ", (int)namew, r->path, countw, r->add + r->del);
		for (size_t k = 0; k < a; k++)
			putchar('+');
		for (size_t k = 0; k < d; k++)
			putchar('-');
		putchar('\n');
	}
	printf(" %zu file%s changed", t->rows.len, t->rows.len == 1 ? "" : "s");
	if (adds)
		printf(", %zu insertion%s(+)", adds, adds == 1 ? "" : "s");
	if (dels)
		printf(", %zu deletion%s(-)", dels, dels == 1 ? "" : "s");
	putchar('\n');
}

/*
 * The end of the run: --stat's table on stdout, then the account on stderr
 * (what was fixed, what is left for the porter; -q keeps only the counts),
 * and with -v the fixes per kind. Returns the number of findings left.
 */
static size_t print_totals(const struct totals *t, const struct emit_opts *e, const struct rewrite_cmd *rw)
{
	struct account acc = ACCOUNT_INIT;
	if (e->stat)
		print_stat(t);
	fflush(stdout); /* the summary after the diff when both streams go to one file */
	account_build(&rw->sr, &rw->rr, &t->unwritten, "the file could not be written", &acc);
	scan_cli_story(&rw->scan, &rw->paths, &rw->sr);
	account_print(&acc, e->apply ? "fixed" : "to fix", rw->scan.quiet);
	if (rw->scan.verbose && !rw->scan.quiet && t->fixed) {
		const char *sep = "preemptify: fixes: ";
		for (int k = 1; k < FIX_COUNT; k++)
			if (t->per_fix[k]) {
				fprintf(stderr, "%s%s: %zu", sep, fix_name(k), t->per_fix[k]);
				sep = ", ";
			}
		fputc('\n', stderr);
	}
	size_t left = acc.left;
	account_release(&acc);
	return left;
}

/*
 * apply --backup: is any backup it would write a file that exists (without
 * --force) or one this run reads (even with it)? Each is named; then
 * nothing is written at all.
 */
static bool backups_clobber(const struct rewrite_cmd *rw, const struct emit_opts *e)
{
	size_t bad = 0;
	for (size_t i = 0; i < rw->rr.files.len; i++) {
		const struct file_change *c = &rw->rr.files.items[i];
		if (c->new_len == c->old_len && memcmp(c->new_text, c->old_text, c->old_len) == 0)
			continue;
		char *bak = xasprintf("%s%s", c->path, e->backup);
		char *why = cli_output_is_input(bak, &rw->paths, NULL, 0);
		struct stat st;
		if (why)
			fprintf(stderr, "%s: error: its backup %s; not overwritten\n", c->path, why);
		else if (!e->force && lstat(bak, &st) == 0)
			fprintf(stderr, "%s: error: its backup '%s' exists; not overwritten "
				"(--force replaces it)\n", c->path, bak);
		bad += why || (!e->force && lstat(bak, &st) == 0);
		free(why);
		free(bak);
	}
	if (bad)
		fprintf(stderr, "preemptify apply: %zu backup%s would replace a file; no file was written\n",
			bad, bad == 1 ? "" : "s");
	return bad > 0;
}

static int run(const char *name, bool apply, int argc, char **argv)
{
	const struct cli_command *cmd = cli_command_find(name);
	struct rewrite_cmd rw = REWRITE_CMD_INIT;
	struct emit_opts e = {apply, false, NULL, false, TEXTDIFF_OPTIONS_INIT};
	const char *color = "auto";
	struct buf out = BUF_INIT;
	int code = EXIT_USAGE;

	/* diff and apply differ in a few options and one help line */
	const struct cli_option apply_opts[] = {
		REWRITE_CLI_OPTIONS(&rw.rewrite),
		{"backup", 0, OPT_STRING, &e.backup, "SUFFIX", "keep each original as FILE+SUFFIX (never over a file that exists)"},
		{"force", 0, OPT_FLAG, &e.force, NULL, "with --backup: replace backups that exist (never a file scanned)"},
		{"stat", 0, OPT_FLAG, &e.stat, NULL, "show changed-line counts per file (as git diff --stat)"},
		SCAN_CLI_OPTIONS(&rw.scan),
		{NULL, 0, 0, NULL, NULL, NULL},
	};
	const struct cli_option diff_opts[] = {
		REWRITE_CLI_OPTIONS(&rw.rewrite),
		{"color", 0, OPT_STRING, &color, "auto|always|never", "colour the diff (default auto: on a terminal, unless NO_COLOR)"},
		{"stat", 0, OPT_FLAG, &e.stat, NULL, "show changed-line counts per file (as git diff --stat), not the diff"},
		SCAN_CLI_OPTIONS(&rw.scan),
		{NULL, 0, 0, NULL, NULL, NULL},
	};
	int r = cli_parse(cmd, apply ? apply_opts : diff_opts, argc, argv, &rw.paths);
	if (r != 0) {
		code = r > 0 ? EXIT_OK : EXIT_USAGE;
		goto done;
	}
	int paint = cli_color(cmd, color, STDOUT_FILENO);
	if (paint < 0)
		goto done;
	int status = rewrite_cli_run(cmd, &rw);
	if (status == EXIT_USAGE || interrupted() || rw.no_rewrite) {
		code = status;
		goto done;
	}
	if (apply && e.backup && *e.backup && backups_clobber(&rw, &e)) {
		code = EXIT_FAILED;
		goto done;
	}
	struct totals t = {0, 0, {0}, status == EXIT_FAILED, VEC_INIT, STRVEC_INIT};
	e.diff.color = paint;
	for (size_t i = 0; i < rw.rr.files.len; i++) {
		const struct file_change *c = &rw.rr.files.items[i];
		if (c->new_len == c->old_len && memcmp(c->new_text, c->old_text, c->old_len) == 0)
			continue;
		if (apply && interrupted()) {
			fputs(buf_cstr(&out), stdout);
			buf_release(&out);
			print_unwritten(&rw.rr, i);
			vec_release(&t.rows);
			strvec_release(&t.unwritten);
			goto done;
		}
		emit_change(c, &e, &out, &t);
	}
	fputs(buf_cstr(&out), stdout);
	size_t left = print_totals(&t, &e, &rw);
	for (size_t i = 0; i < t.rows.len; i++)
		free(t.rows.items[i].path);
	vec_release(&t.rows);
	strvec_release(&t.unwritten);
	if (rw.scan.verbose && !rw.scan.quiet)
		fprintf(stderr, "preemptify: %u spatch process%s (%u file runs shared a process, %u answered by the cache)\n",
			rw.rr.spatch_processes, rw.rr.spatch_processes == 1 ? "" : "es", rw.rr.spatch_batched,
			rw.rr.spatch_reused);
	if (rw.scan.verbose && !rw.scan.quiet && rw.validations_asked)
		fprintf(stderr, "preemptify: cache: %zu of %zu validations of rewritten files reused from earlier runs, "
			"the others made\n", rw.validations_reused, rw.validations_asked);
	/* diff answers "are there changes?" (as diff(1)); apply answers "did it work?" */
	code = t.failed ? EXIT_FAILED : !apply && t.changed ? EXIT_FOUND : EXIT_OK;
	if (rw.rewrite.require_done && left && code != EXIT_FAILED)
		code = EXIT_LEFT; /* CI: hand work is left */
done:
	buf_release(&out);
	rewrite_cmd_release(&rw);
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
