/*
 * Series: the cover letter. What the series does (its files, with
 * --split-by its subsystem and what it shares with the others), the account
 * of the commit run, the shortlog and the diffstat, as git format-patch
 * --cover-letter lays them out.
 */
#include "git/series.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void cover_date(struct buf *b)
{
	char day[8], rest[48];
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	/* RFC 2822 as git writes it: day of month without padding */
	strftime(day, sizeof day, "%a", &tm);
	strftime(rest, sizeof rest, "%b %Y %H:%M:%S %z", &tm);
	buf_printf(b, "Date: %s, %d %s\n", day, tm.tm_mday, rest);
}

/* The cover letter's mail header and its first paragraph, with the files of DIFF. */
static void cover_head(struct buf *cover, const struct series *s, git_diff *diff)
{
	size_t nfiles = git_diff_num_deltas(diff);
	buf_printf(cover, "From %s Mon Sep 17 00:00:00 2001\n", "0000000000000000000000000000000000000000");
	buf_printf(cover, "From: %s\n", s->signoff);
	cover_date(cover);
	buf_printf(cover, "Subject: [%s%s0/%zu] %s%smake %zu file%s preempt-safe for 2.6\n", s->prefix,
		   s->prefix[0] ? " " : "", s->ids.len, s->subsystem ? s->subsystem : "", s->subsystem ? ": " : "",
		   nfiles, nfiles == 1 ? "" : "s");
	buf_puts(cover, s->headers);
	series_address_header(cover, "To: ", s->all_to.items, s->all_to.len);
	series_address_header(cover, "Cc: ", s->all_cc.items, s->all_cc.len);
	char *what = s->subsystem ? xasprintf(" for %s", s->subsystem) : xstrdup("");
	char *intro = xasprintf("This series ports %zu file%s%s to the 2.6 preemptible kernel, one commit per "
				"change. The changes were found and made by preemptify.", nfiles,
				nfiles == 1 ? "" : "s", what);
	buf_putc(cover, '\n');
	buf_add_wrapped(cover, intro, "", "", 72);
	free(intro);
	free(what);
	buf_puts(cover, "\nFiles:\n");
	for (size_t i = 0; i < nfiles; i++)
		buf_printf(cover, "  %s\n", git_diff_get_delta(diff, i)->new_file.path);
	if (s->extra.len)
		buf_printf(cover, "\n%s", buf_cstr(&s->extra));
}

/*
 * The account of the commit run (its note): the counts in a paragraph, and
 * the findings left for hand work, one line each, as commit listed them.
 */
static void cover_account(struct buf *cover, const char *note)
{
	if (!note)
		return;
	const char *list = strstr(note, "\n\n");
	size_t head = list ? (size_t)(list - note) : strcspn(note, "\n");
	char *text = xstrndup(note, head);
	buf_puts(cover, "\n");
	buf_add_wrapped(cover, text, "", "", 72);
	free(text);
	if (!list)
		return;
	buf_puts(cover, "\nLeft for hand work:\n");
	for (const char *l = list + 2; *l;) {
		size_t n = strcspn(l, "\n");
		if (n)
			buf_printf(cover, "  %.*s\n", (int)n, l);
		l += n + (l[n] == '\n');
	}
}

int series_cover_write(const struct series *s, const char *path)
{
	git_diff *diff = NULL;
	git_diff_stats *stats = NULL;
	git_buf statbuf = GIT_BUF_INIT;
	struct buf cover = BUF_INIT;
	int rc = -1;
	git_diff_options dopt;
	git_diff_options_init(&dopt, GIT_DIFF_OPTIONS_VERSION);
	if (s->subsystem) { /* its commits are not consecutive: only its files count */
		dopt.pathspec.strings = s->paths.items;
		dopt.pathspec.count = s->paths.len;
		dopt.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
	}
	if (git_diff_tree_to_tree(&diff, s->g, s->first_parent_tree, s->last_tree, &dopt) < 0 ||
	    git_diff_get_stats(&stats, diff) < 0 ||
	    git_diff_stats_to_buf(&statbuf, stats, GIT_DIFF_STATS_FULL | GIT_DIFF_STATS_INCLUDE_SUMMARY, 72) < 0) {
		repo_git_fail("diffstat");
		goto done;
	}
	cover_head(&cover, s, diff);
	cover_account(&cover, s->note);
	buf_printf(&cover, "\n%s (%zu):\n%s\n", s->sig->name, s->ids.len, buf_cstr(&s->shortlog));
	buf_add(&cover, statbuf.ptr, statbuf.size);
	buf_putc(&cover, '\n');
	if (s->trailer)
		buf_printf(&cover, "\n%s", s->trailer);
	buf_printf(&cover, "-- \npreemptify %s\n\n", PREEMPTIFY_VERSION);
	if (series_write_file(path, cover.ptr, cover.len, s->opts->force) < 0)
		goto done;
	rc = 0;
done:
	git_diff_stats_free(stats);
	git_diff_free(diff);
	git_buf_dispose(&statbuf);
	buf_release(&cover);
	return rc;
}
