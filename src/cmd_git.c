/* The commit and series commands: the rewrite's changes as git commits and patches. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "repo.h"
#include "rewrite.h"
#include "scan.h"
#include "walk.h"

int cmd_commit(int argc, char **argv);
int cmd_series(int argc, char **argv);

static const struct cli_command commit_cmd = {"commit", "[options] PATH...",
	"Rewrite the fixable sites and commit each file (or directory) separately, "
	"with a kernel-style message; other staged or unstaged work is left alone.", cmd_commit};

/* The rule mask from --ignore (same meaning as for scan). */
static int ignore_mask(const struct cli_list *ignore, unsigned *out)
{
	*out = (1u << RULE_COUNT) - 1;
	for (size_t i = 0; i < ignore->len; i++) {
		int r = rule_parse(ignore->items[i]);
		if (r < 0) {
			fprintf(stderr, "preemptify commit: --ignore: unknown rule '%s' (see preemptify rules)\n",
				ignore->items[i]);
			return -1;
		}
		*out &= ~(1u << r);
	}
	return 0;
}

int cmd_commit(int argc, char **argv)
{
	struct repo_commit_options co = REPO_COMMIT_OPTIONS_INIT;
	const char *group = "file", *target = "2.6", *spatch = "spatch";
	int jobs = 0, timeout = 60;
	struct cli_list exclude = {0}, ignore = {0}, paths = {0};
	const struct cli_option opts[] = {
		{"branch", 'b', OPT_STRING, &co.branch, "NAME", "create branch NAME from HEAD and commit there"},
		{"force", 0, OPT_FLAG, &co.force, NULL, "with --branch: reset an existing branch to HEAD"},
		{"group", 0, OPT_STRING, &group, "HOW", "one commit per 'file' (default) or per 'dir'"},
		{"prefix", 0, OPT_STRING, &co.prefix, "TEXT", "subject prefix instead of the path-derived one"},
		{"signoff", 's', OPT_FLAG, &co.signoff, NULL, "add a Signed-off-by trailer"},
		{"dry-run", 'n', OPT_FLAG, &co.dry_run, NULL, "show the commits that would be made; write nothing"},
		{"target", 0, OPT_STRING, &target, "T", "2.6 (default) or modern"},
		{"jobs", 'j', OPT_INT, &jobs, "N", "files analysed in parallel (default: online CPUs)"},
		{"timeout", 0, OPT_INT, &timeout, "SEC", "per-file spatch timeout (default 60)"},
		{"spatch", 0, OPT_STRING, &spatch, "PROG", "the Coccinelle spatch program"},
		{"exclude", 0, OPT_LIST, &exclude, "GLOB", "skip paths matching GLOB"},
		{"ignore", 0, OPT_LIST, &ignore, "RULES", "skip rules, e.g. P003"},
		{NULL, 0, 0, NULL, NULL, NULL},
	};
	int rc = EXIT_USAGE;
	path_vec files = VEC_INIT;
	struct scan_result scan = SCAN_RESULT_INIT;
	struct rewrite_result rw = REWRITE_RESULT_INIT;
	struct repo_commit_report rep = REPO_COMMIT_REPORT_INIT;
	struct repo *repo = NULL;
	int p = cli_parse(&commit_cmd, opts, argc, argv, &paths);
	if (p != 0) {
		rc = p > 0 ? EXIT_OK : EXIT_USAGE;
		goto done;
	}
	if (paths.len == 0) {
		fprintf(stderr, "preemptify commit: no PATH given (see --help)\n");
		goto done;
	}
	int g = repo_group_parse(group);
	if (g < 0) {
		fprintf(stderr, "preemptify commit: --group: expected 'file' or 'dir', not '%s'\n", group);
		goto done;
	}
	co.group = (enum repo_group)g;
	struct rewrite_options ro = REWRITE_OPTIONS_INIT;
	if (strcmp(target, "2.6") == 0)
		ro.target = TARGET_26;
	else if (strcmp(target, "modern") == 0)
		ro.target = TARGET_MODERN;
	else {
		fprintf(stderr, "preemptify commit: --target: expected '2.6' or 'modern', not '%s'\n", target);
		goto done;
	}
	ro.jobs = jobs;
	ro.timeout_sec = timeout;
	ro.spatch = spatch;
	struct scan_options so = SCAN_OPTIONS_INIT;
	if (ignore_mask(&ignore, &so.rules) < 0)
		goto done;
	so.jobs = jobs;

	/* Open the repository first: a wrong place is cheaper to learn before the analysis. */
	rc = EXIT_FAILED;
	if (repo_open(&repo, paths.items[0]) < 0) {
		fprintf(stderr, "preemptify commit: %s\n", error_last());
		goto done;
	}
	struct walk_options wo = {exclude.items, exclude.len};
	bool failed = walk_paths(paths.items, paths.len, &wo, &files, &scan.diagnostics) < 0;
	failed |= scan_files(files.items, files.len, &so, &scan) > 0;
	for (size_t i = 0; i < scan.diagnostics.len; i++)
		if (scan.diagnostics.items[i].kind == DIAG_IO)
			fprintf(stderr, "preemptify commit: %s\n", scan.diagnostics.items[i].message);
	int bad = rewrite_plan(&scan, &ro, &rw);
	if (bad < 0) {
		fprintf(stderr, "preemptify commit: %s\n", error_last());
		goto done;
	}
	for (size_t i = 0; i < rw.files.len; i++)
		if (rw.files.items[i].error)
			fprintf(stderr, "preemptify commit: %s: not rewritten: %s\n", rw.files.items[i].path,
				rw.files.items[i].error);
	failed |= bad > 0;

	int e = repo_commit_changes(repo, &co, rw.files.items, rw.files.len, &rep);
	size_t refused = 0;
	for (size_t i = 0; i < rw.files.len; i++)
		refused += rw.files.items[i].refused.len;
	for (size_t i = 0; i < rep.commits.len; i++) {
		const struct repo_commit *c = &rep.commits.items[i];
		printf("[%s %.7s] %s\n", co.dry_run ? "dry-run" : rep.branch ? rep.branch : "detached",
		       c->id[0] ? c->id : "-------", c->subject);
		for (size_t k = 0; k < c->paths.len; k++)
			printf("  %s\n", c->paths.items[k]);
	}
	if (e < 0) {
		fprintf(stderr, "preemptify commit: %s\n", error_last());
		goto done;
	}
	if (rep.commits.len == 0)
		fprintf(stderr, "preemptify commit: nothing to change\n");
	else
		fprintf(stderr, "preemptify commit: %zu commit%s%s; %zu site%s left for manual review%s\n",
			rep.commits.len, rep.commits.len == 1 ? "" : "s", co.dry_run ? " planned" : "",
			refused, refused == 1 ? "" : "s",
			co.dry_run || rep.commits.len == 0 ? "" : " (preemptify series makes the patches)");
	rc = failed ? EXIT_FAILED : rep.commits.len ? EXIT_FOUND : EXIT_OK;
done:
	repo_commit_report_free(&rep);
	repo_free(repo);
	rewrite_result_free(&rw);
	scan_result_free(&scan);
	path_vec_free(&files);
	cli_list_free(&paths);
	cli_list_free(&exclude);
	cli_list_free(&ignore);
	return rc;
}

static const struct cli_command series_cmd = {"series", "[options] [RANGE]",
	"Write the commits of RANGE (default: the last commit run) as numbered mbox patches "
	"with a cover letter, ready for git send-email.", cmd_series};

int cmd_series(int argc, char **argv)
{
	struct repo_series_options so = REPO_SERIES_OPTIONS_INIT;
	const char *outdir = ".", *repo_path = ".";
	bool no_cover = false;
	struct cli_list args = {0};
	const struct cli_option opts[] = {
		{"output-directory", 'o', OPT_STRING, &outdir, "DIR", "write the patches in DIR (default: .)"},
		{"subject-prefix", 0, OPT_STRING, &so.subject_prefix, "TEXT", "instead of PATCH, e.g. \"PATCH v2\""},
		{"signoff", 's', OPT_FLAG, &so.signoff, NULL, "add a Signed-off-by trailer where missing"},
		{"no-cover-letter", 0, OPT_FLAG, &no_cover, NULL, "do not write 0000-cover-letter.patch"},
		{"repo", 'C', OPT_STRING, &repo_path, "PATH", "the repository (default: the current directory)"},
		{NULL, 0, 0, NULL, NULL, NULL},
	};
	int rc = EXIT_USAGE;
	struct repo *repo = NULL;
	struct repo_series_report rep = REPO_SERIES_REPORT_INIT;
	int p = cli_parse(&series_cmd, opts, argc, argv, &args);
	if (p != 0) {
		rc = p > 0 ? EXIT_OK : EXIT_USAGE;
		goto done;
	}
	if (args.len > 1) {
		fprintf(stderr, "preemptify series: at most one RANGE (see --help)\n");
		goto done;
	}
	so.cover_letter = !no_cover;
	rc = EXIT_FAILED;
	if (repo_open(&repo, repo_path) < 0 ||
	    repo_series(repo, &so, args.len ? args.items[0] : NULL, outdir, &rep) < 0) {
		fprintf(stderr, "preemptify series: %s\n", error_last());
		goto done;
	}
	for (size_t i = 0; i < rep.files.len; i++)
		printf("%s\n", rep.files.items[i]);
	rc = EXIT_OK;
done:
	repo_series_report_free(&rep);
	repo_free(repo);
	cli_list_free(&args);
	return rc;
}
