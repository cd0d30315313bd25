/* The commit and series commands: the rewrite's changes as git commits and patches. */
#include <stdlib.h>
#include <string.h>

#include "cli/account.h"
#include "cli/commands.h"
#include "git/repo.h"
#include "util/interrupt.h"
#include "util/overlay.h"

/* One line per commit made (or planned), then its paths. */
static void print_commits(const struct repo_commit_options *co, const struct repo_commit_report *rep)
{
	for (size_t i = 0; i < rep->commits.len; i++) {
		const struct repo_commit *c = &rep->commits.items[i];
		printf("[%s %.7s] %s\n", co->dry_run ? "dry-run" : rep->branch ? rep->branch : "detached",
		       c->id[0] ? c->id : "-------", c->subject);
		for (size_t k = 0; k < c->paths.len; k++)
			printf("  %s\n", c->paths.items[k]);
	}
	for (size_t i = 0; i < rep->applied.len; i++)
		printf("applied %s: already in the working tree (recognised as the planned change)\n",
		       rep->applied.items[i]);
	for (size_t i = 0; i < rep->skipped.len; i++)
		printf("skipped %s: uncommitted changes\n", rep->skipped.items[i]);
}

#ifndef PREEMPTIFY_VERSION
#define PREEMPTIFY_VERSION "0"
#endif

/*
 * The account of the run (account.h): the hand work listed (unless QUIET)
 * and counted on stderr, and, when commits were made, the same as the git
 * note of the last one, where series finds it for the cover letter.
 * Returns the number of findings left, or -1 (message printed) when the
 * note could not be written.
 */
static long commit_account(struct repo *repo, const struct repo_commit_options *co,
			   const struct repo_commit_report *rep, const struct rewrite_cmd *rw)
{
	struct account acc = ACCOUNT_INIT;
	struct buf note = BUF_INIT;
	long rc = 0;
	account_build(&rw->sr, &rw->rr, &rep->skipped, "the file has uncommitted changes (--skip-dirty)", &acc);
	scan_cli_story(&rw->scan, &rw->paths, &rw->sr);
	account_print(&acc, co->dry_run ? "to commit" : "committed", rw->scan.quiet);
	if (!rw->scan.quiet) {
		size_t n = rep->commits.len, skipped = rep->skipped.len, applied = rep->applied.len;
		if (n)
			fprintf(stderr, "preemptify commit: %zu commit%s %s%s%s", n, n == 1 ? "" : "s",
				co->dry_run ? "planned" : "made on ", co->dry_run ? "" : rep->branch ? rep->branch
				: "a detached HEAD", co->dry_run ? "" : " (preemptify series makes the patches)");
		else if (!skipped && acc.left) /* not "done": the account above lists what is left */
			fprintf(stderr, "preemptify commit: nothing to commit; the %zu finding%s left need%s hand work",
				acc.left, acc.left == 1 ? "" : "s", acc.left == 1 ? "s" : "");
		else
			fprintf(stderr, "preemptify commit: nothing %s", skipped ? "committed" : "to change");
		if (applied)
			fprintf(stderr, "; %zu file%s already applied in the working tree %s recognised and %s", applied,
				applied == 1 ? "" : "s", applied == 1 ? "was" : "were",
				co->dry_run ? "would be committed" : "committed");
		if (skipped)
			fprintf(stderr, "; %zu file%s with uncommitted changes skipped", skipped, skipped == 1 ? "" : "s");
		fputc('\n', stderr);
	}
	if (rep->commits.len && !co->dry_run) {
		buf_printf(&note, REPO_NOTE_HEAD "%s: ", PREEMPTIFY_VERSION);
		account_sentence(&acc, "committed", &note);
		buf_puts(&note, ".\n");
		if (acc.items.len)
			buf_puts(&note, "\n");
		account_list(&acc, &note);
		if (repo_note_add(repo, rep->commits.items[rep->commits.len - 1].id, buf_cstr(&note)) < 0) {
			fprintf(stderr, "preemptify commit: committed, but the account was not noted: %s\n", error_last());
			rc = -1;
		}
	}
	if (rc == 0)
		rc = (long)acc.left;
	buf_release(&note);
	account_release(&acc);
	return rc;
}

int cmd_commit(int argc, char **argv)
{
	const struct cli_command *cmd = cli_command_find("commit");
	struct repo_commit_options co = REPO_COMMIT_OPTIONS_INIT;
	struct rewrite_cmd rw = REWRITE_CMD_INIT;
	const char *group = "file";
	const struct cli_option opts[] = {
		{"branch", 'b', OPT_STRING, &co.branch, "NAME", "create branch NAME from HEAD, commit there and switch HEAD to it"},
		{"force", 0, OPT_FLAG, &co.force, NULL, "with --branch: reset an existing branch to HEAD"},
		{"group", 0, OPT_STRING, &group, "file|dir", "one commit per file (default) or per directory"},
		{"prefix", 0, OPT_STRING, &co.prefix, "TEXT", "subject prefix instead of the path-derived one"},
		{"signoff", 's', OPT_FLAG, &co.signoff, NULL, "add a Signed-off-by trailer"},
		{"dry-run", 'n', OPT_FLAG, &co.dry_run, NULL, "show the commits that would be made; write nothing"},
		{"skip-dirty", 0, OPT_FLAG, &co.skip_dirty, NULL,
		 "skip files with uncommitted changes (listed) and commit the others, instead of stopping"},
		{"no-verify", 0, OPT_FLAG, &co.no_verify, NULL, "do not run the pre-commit and commit-msg hooks"},
		{"no-gpg-sign", 0, OPT_FLAG, &co.no_gpg_sign, NULL,
		 "commit unsigned although commit.gpgsign is set (preemptify cannot sign)"},
		REWRITE_CLI_OPTIONS(&rw.rewrite),
		SCAN_CLI_OPTIONS(&rw.scan),
		{NULL, 0, 0, NULL, NULL, NULL},
	};
	int rc = EXIT_USAGE;
	struct repo_commit_report rep = REPO_COMMIT_REPORT_INIT;
	struct repo *repo = NULL;
	struct strvec applied = STRVEC_INIT;
	int p = cli_parse(cmd, opts, argc, argv, &rw.paths);
	if (p != 0) {
		rc = p > 0 ? EXIT_OK : EXIT_USAGE;
		goto done;
	}
	if (rw.paths.len == 0) {
		fprintf(stderr, "preemptify commit: no PATH given (see 'preemptify commit --help')\n");
		goto done;
	}
	int g = repo_group_parse(group);
	if (g < 0) {
		fprintf(stderr, "preemptify commit: option '--group' expects 'file' or 'dir', not '%s'\n", group);
		goto done;
	}
	co.group = (enum repo_group)g;

	/* Open the repository first: a wrong place is cheaper to learn before the analysis. */
	if (repo_open(&repo, rw.paths.items[0]) < 0) {
		fprintf(stderr, "preemptify commit: %s\n", error_last());
		rc = EXIT_FAILED;
		goto done;
	}
	/* files an earlier apply changed: planned from HEAD's text, as before the apply */
	if (repo_overlay_head(repo, &rw.paths, &applied) < 0) {
		fprintf(stderr, "preemptify commit: %s\n", error_last());
		rc = EXIT_FAILED;
		goto done;
	}
	rc = rewrite_cli_run(cmd, &rw);
	if (rc == EXIT_USAGE || interrupted() || rw.no_rewrite)
		goto done; /* nothing is committed of an interrupted or impossible plan */
	bool failed = rc == EXIT_FAILED;
	rc = EXIT_FAILED;
	int e = repo_commit_changes(repo, &co, rw.rr.files.items, rw.rr.files.len, &rep);
	if (rep.hook_output) /* as git commit shows it, before the commit lines */
		fputs(rep.hook_output, stderr);
	print_commits(&co, &rep);
	fflush(stdout); /* messages and summary after the commit lines when both streams go to one file */
	if (e < 0) {
		fprintf(stderr, "preemptify commit: %s\n", error_last());
		goto done;
	}
	long left = commit_account(repo, &co, &rep, &rw);
	/* success, commits or none: the sites left are in the account, not the status (but --require-done) */
	rc = failed || left < 0 ? EXIT_FAILED : rw.rewrite.require_done && left ? EXIT_LEFT : EXIT_OK;
done:
	overlay_clear();
	strvec_release(&applied);
	repo_commit_report_release(&rep);
	repo_free(repo);
	rewrite_cmd_release(&rw);
	return rc;
}

/*
 * The files written, one a line; with --split-by, one line per subsystem,
 * its series' directory first. Then (unless QUIET) the patches without a
 * sign-off, which a maintainer would refuse and checkpatch flags.
 */
static void print_series(const struct repo_series_options *so, const struct repo_series_report *rep, bool quiet)
{
	if (rep->unsigned_patches && !quiet)
		fprintf(stderr, "preemptify series: %zu of %zu patch%s carr%s no Signed-off-by: line (-s adds yours)\n",
			rep->unsigned_patches, rep->patches, rep->patches == 1 ? "" : "es",
			rep->unsigned_patches == 1 ? "ies" : "y");
	if (!so->split_subsystem)
		for (size_t i = 0; i < rep->files.len; i++)
			printf("%s\n", rep->files.items[i]);
	for (size_t i = 0; i < rep->parts.len; i++) {
		const struct repo_series_part *p = &rep->parts.items[i];
		if (p->dir)
			printf("%s/: %s, %zu patch%s", p->dir, p->subsystem, p->patches, p->patches == 1 ? "" : "es");
		else
			printf("%s: no patch", p->subsystem);
		if (p->left)
			printf(", %zu finding%s left for hand work", p->left, p->left == 1 ? "" : "s");
		if (p->after)
			printf(", applies after %zu other series", p->after);
		putchar('\n');
	}
}

int cmd_series(int argc, char **argv)
{
	struct repo_series_options so = REPO_SERIES_OPTIONS_INIT;
	const char *outdir = ".", *repo_path = ".", *split_by = "none";
	bool no_cover = false, quiet = false; /* quiet: no word on patches without a sign-off */
	struct strvec args = STRVEC_INIT, to = STRVEC_INIT, cc = STRVEC_INIT;
	const struct cli_option opts[] = {
		{"output-directory", 'o', OPT_STRING, &outdir, "DIR", "write the patches in DIR (default: .)"},
		{"subject-prefix", 0, OPT_STRING, &so.subject_prefix, "TEXT", "instead of PATCH, e.g. \"RFC PATCH\""},
		{"reroll-count", 'v', OPT_INT, &so.reroll_count, "N", "version N of the series: [PATCH vN m/n], files vN-0001-..."},
		{"to", 0, OPT_LIST, &to, "ADDR", "a To: header in every mail"},
		{"cc", 0, OPT_LIST, &cc, "ADDR", "a Cc: header in every mail"},
		{"to-cmd", 0, OPT_STRING, &so.to_cmd, "CMD", "run CMD PATCH for each patch: its output's addresses go in To:"},
		{"cc-cmd", 0, OPT_STRING, &so.cc_cmd, "CMD",
		 "run CMD PATCH for each patch (e.g. scripts/get_maintainer.pl): its output's addresses go in Cc:"},
		{"cc-from-maintainers", 0, OPT_FLAG, &so.cc_from_maintainers, NULL,
		 "Cc each patch to the MAINTAINERS entries (M:, L:) whose F: patterns cover its files"},
		{"split-by", 0, OPT_STRING, &split_by, "subsystem|none",
		 "subsystem: one series per subsystem (drivers/net, fs/jbd, kernel...), each in its own DIR/drivers-net/...; "
		 "none: one series (the default)"},
		{"base", 0, OPT_STRING, &so.base, "REV", "end the first mail with base-commit: REV (as git format-patch --base)"},
		{"signoff", 's', OPT_FLAG, &so.signoff, NULL, "add a Signed-off-by trailer where missing"},
		{"no-cover-letter", 0, OPT_FLAG, &no_cover, NULL, "do not write 0000-cover-letter.patch"},
		{"force", 'f', OPT_FLAG, &so.force, NULL, "replace patch files that exist (never through a symbolic link)"},
		{"repo", 'C', OPT_STRING, &repo_path, "PATH", "the repository (default: the current directory)"},
		CLI_QUIET_OPTION(&quiet),
		{NULL, 0, 0, NULL, NULL, NULL},
	};
	int rc = EXIT_USAGE;
	struct repo *repo = NULL;
	struct repo_series_report rep = REPO_SERIES_REPORT_INIT;
	int p = cli_parse(cli_command_find("series"), opts, argc, argv, &args);
	if (p != 0) {
		rc = p > 0 ? EXIT_OK : EXIT_USAGE;
		goto done;
	}
	if (args.len > 1) {
		fprintf(stderr, "preemptify series: at most one RANGE (see --help)\n");
		goto done;
	}
	if (so.reroll_count < 0) {
		fprintf(stderr, "preemptify series: option '--reroll-count' must be a positive number, got %d\n",
			so.reroll_count);
		goto done;
	}
	if (strcmp(split_by, "subsystem") != 0 && strcmp(split_by, "none") != 0) {
		fprintf(stderr, "preemptify series: option '--split-by' expects 'subsystem' or 'none', not '%s'\n",
			split_by);
		goto done;
	}
	so.split_subsystem = strcmp(split_by, "subsystem") == 0;
	so.cover_letter = !no_cover;
	so.to = to.items;
	so.nto = to.len;
	so.cc = cc.items;
	so.ncc = cc.len;
	rc = EXIT_FAILED;
	int e = repo_open(&repo, repo_path);
	if (e == 0)
		e = repo_series(repo, &so, args.len ? args.items[0] : NULL, outdir, &rep);
	if (e < 0) {
		fprintf(stderr, "preemptify series: %s\n", error_last());
		/* asked for something that does not exist (no run, no RANGE): a usage error, not a failure */
		if (e == REPO_EUSAGE)
			rc = EXIT_USAGE;
		goto done;
	}
	print_series(&so, &rep, quiet);
	rc = EXIT_OK;
done:
	repo_series_report_release(&rep);
	repo_free(repo);
	strvec_release(&args);
	strvec_release(&to);
	strvec_release(&cc);
	return rc;
}
