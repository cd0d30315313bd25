/*
 * Series: what series.c (the range, the patches), series_cover.c (the cover
 * letter) and series_split.c (one series per subsystem) share. Internal to
 * src/git.
 */
#ifndef PREEMPTIFY_SERIES_H
#define PREEMPTIFY_SERIES_H

#include "git/internal.h"
#include "git/series_cc.h"

/*
 * The state of a series run. The first part holds for the whole run; the
 * second is one series' (--split-by writes several in turn, and
 * series_part_reset() empties it between them).
 */
struct series {
	git_repository *g;
	const struct repo_series_options *opts;
	char *prefix;                /* the subject prefix, "PATCH" by default, " vN" added */
	char *headers;               /* the To: and Cc: header lines, or "" */
	char *trailer;               /* the base-commit block for the first mail, or NULL */
	git_signature *sig;          /* with signoff or a cover letter */
	char *signoff;               /* "Name <email>" of sig */
	const char *workdir;         /* the work tree's top, where address commands run */
	struct series_cc maint;      /* --cc-from-maintainers: the tree's MAINTAINERS */
	oid_vec ids;                 /* the commits, oldest first (of the one series being written) */
	char *note;                  /* the account for the cover letter (repo_note_add()), or NULL */

	const char *outdir;
	const char *subsystem;       /* the subsystem of a --split-by series; NULL: the whole range */
	struct buf extra;            /* cover letter paragraphs after its list of files, or empty */
	struct buf shortlog;
	git_tree *first_parent_tree, *last_tree; /* the whole series' diff, for the diffstat */
	struct strvec paths;         /* the files its patches change */
	struct strvec all_to, all_cc; /* every patch's own addresses, for the cover letter */
};
#define SERIES_INIT {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, SERIES_CC_INIT, VEC_INIT, NULL, \
		     NULL, NULL, BUF_INIT, BUF_INIT, NULL, NULL, STRVEC_INIT, STRVEC_INIT, STRVEC_INIT}

/* Empties the second part of S (one series' state), keeping the run's. */
void series_part_reset(struct series *s);

/*
 * Writes the series S->ids into OUTDIR (created if missing): its cover
 * letter (with opts->cover_letter) and its patches, numbered 1/N on their
 * own; the paths go into out->files, the cover letter before its patches,
 * and out->patches counts them. 0, or -1 with the error slot set.
 */
int series_write(struct series *s, const char *outdir, struct repo_series_report *out);

/* The newest note of a commit run among S->ids into s->note (kept when there is none). */
void series_read_note(struct series *s);

/*
 * Creates PATH with DATA: never through a symbolic link, never over an
 * existing file unless FORCE. 0, or -1 with the error slot set.
 */
int series_write_file(const char *path, const char *data, size_t len, bool force);

/* Appends "NAME: a,\n    b\n" for ADDRS[0..n), as git format-patch writes --to and --cc. */
void series_address_header(struct buf *b, const char *name, char *const *addrs, size_t n);

/* The cover letter of S at PATH: its files, the account, the shortlog and the diffstat (series_cover.c). */
int series_cover_write(const struct series *s, const char *path);

/*
 * --split-by subsystem: the commits of S->ids, one series per subsystem
 * (series_subsystem()), each in its own directory under OUTDIR
 * (series_split.c). out->parts gets one entry per subsystem. 0, or -1 with
 * the error slot set.
 */
int series_split(struct series *s, const char *outdir, struct repo_series_report *out);

#endif
