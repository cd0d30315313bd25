/*
 * Git: commit planned file changes one file (or one directory) per commit,
 * and turn those commits into a numbered mbox patch series. Built on
 * libgit2; never runs git, never touches paths other than the ones changed.
 *
 * Safety contract of repo_commit_changes():
 *   - Every check runs before anything is written: a locked index
 *     (index.lock), an unfinished merge, revert, cherry-pick, bisect, rebase
 *     or git am, commit.gpgsign without no_gpg_sign, a detached HEAD without
 *     a branch name, an existing branch without force, a missing identity,
 *     a file with uncommitted changes (worktree or index differs from HEAD,
 *     or marked assume-unchanged or skip-worktree; with skip_dirty it is
 *     left out of the run instead) other than its own planned change
 *     already applied (below), a file that is not tracked, any file
 *     while HEAD is unborn, a file in a submodule, a file whose
 *     .gitattributes filter driver or working-tree-encoding libgit2 cannot
 *     apply, or a file whose contents no longer match what the rewrite
 *     read: any of these fails the whole run and leaves repository, index
 *     and worktree as they were.
 *   - Blobs go through the eol/text/ident conversions of .gitattributes,
 *     as git add stores them.
 *   - Unless no_verify, the pre-commit and commit-msg hooks run for each
 *     commit while it is built, before any file is written or ref moved;
 *     a hook that fails stops the run with nothing written.
 *   - Each commit's tree is the parent commit's tree with only the
 *     committed files replaced (git_tree_create_updated), never the user's
 *     index: whatever else is staged stays staged and out of our commits.
 *   - Afterwards the index entries of exactly the committed paths point at
 *     the new blobs, so `git status` shows what it showed before.
 *   - Files are written atomically (temporary file in the same directory,
 *     fsync, rename) keeping their mode.
 *   - A file whose index equals HEAD and whose working tree already holds
 *     exactly the change planned from HEAD's text (repo_overlay_head(),
 *     then an earlier `preemptify apply`) is committed as that change and
 *     not written; it is listed in the report's `applied`.
 */
#ifndef PREEMPTIFY_REPO_H
#define PREEMPTIFY_REPO_H

#include "fix/rewrite.h"

/* The ref and the one after it that record the last commit run. */
#define REPO_BASE_REF "refs/preemptify/base" /* HEAD before the run */
#define REPO_TIP_REF "refs/preemptify/tip"   /* the last commit the run made */

struct repo;

/*
 * Opens the repository containing PATH (a file or directory; discovery
 * walks up as git does). Bare repositories are refused. *OUT is freed with
 * repo_free(). Returns 0, or -1 with the error slot set.
 */
int repo_open(struct repo **out, const char *path);

void repo_free(struct repo *r);

/* The working tree root, with a trailing '/'. Owned by R. */
const char *repo_workdir(const struct repo *r);

/* Where a scan ran, for SARIF's versionControlProvenance. */
/*
 * PATH (relative to the current directory, or absolute) as a path relative
 * to R's working tree, in *OUT (owned). 0, or -1 with the error slot set
 * (PATH outside the working tree, or in .git).
 */
int repo_relpath(const struct repo *r, const char *path, char **out);

/*
 * The files that differ between REV's tree and the work tree, the index
 * included (git diff REV), plus the untracked files not ignored: their
 * repository-relative paths, sorted, appended to OUT (deleted files are not
 * listed). Returns 0; REPO_EUSAGE with the error slot naming REV when it
 * does not name a commit or tree; -1 with the error slot set otherwise.
 */
int repo_changed_since(struct repo *r, const char *rev, struct strvec *out);

/*
 * Puts HEAD's text of every tracked .c/.h file under PATHS (as walked:
 * relative to the current directory, or absolute) whose working tree
 * differs from HEAD while its index does not in the source overlay
 * (util/overlay.h), as a checkout writes it (eol, ident), so a run plans
 * from what HEAD holds: the same plan before and after `preemptify apply`.
 * Files with a filter driver or working-tree-encoding are left out. Their
 * repository-relative paths are appended to OUT. Nothing while HEAD is
 * unborn. 0, or -1 with the error slot set. The caller clears the overlay.
 */
int repo_overlay_head(struct repo *r, const struct strvec *paths, struct strvec *out);

struct repo_provenance {
	char *remote_uri; /* the "origin" remote as a URI, credentials removed; NULL if none or not a URI */
	char head[41];    /* HEAD's commit id; "" while HEAD is unborn */
	char *branch;     /* HEAD's branch ("refs/heads/" stripped); NULL when detached */
};
#define REPO_PROVENANCE_INIT {NULL, "", NULL}

/*
 * Fills *OUT for R. An scp-like remote ("git@host:path") becomes
 * "ssh://git@host/path", an absolute path a file:// URI; the user
 * information of a URL (a password, a token) is never copied, except an
 * ssh user name. What git cannot tell is left empty. Returns 0; OUT is
 * released with repo_provenance_release().
 */
int repo_provenance_get(struct repo *r, struct repo_provenance *out);

void repo_provenance_release(struct repo_provenance *p);

enum repo_group {
	REPO_GROUP_FILE, /* one commit per file */
	REPO_GROUP_DIR,  /* one commit per directory */
};

/* Parses "file" or "dir"; -1 otherwise. */
int repo_group_parse(const char *s);

struct repo_commit_options {
	const char *branch; /* create from HEAD and commit there (HEAD follows); NULL: current branch */
	bool force;         /* reset an existing BRANCH to HEAD instead of refusing */
	enum repo_group group;
	const char *prefix; /* subject prefix override (message_options.prefix), or NULL */
	bool signoff;       /* add Signed-off-by: <committer> */
	bool dry_run;       /* check and plan, write nothing */
	bool skip_dirty;    /* a file with uncommitted changes is skipped (report->skipped), not fatal */
	bool no_verify;     /* do not run the pre-commit and commit-msg hooks (git commit --no-verify) */
	bool no_gpg_sign;   /* commit unsigned although commit.gpgsign is set (else refused) */
};
#define REPO_COMMIT_OPTIONS_INIT {NULL, false, REPO_GROUP_FILE, NULL, false, false, false, false, false}

/* One commit made (or, in a dry run, that would be made). */
struct repo_commit {
	char id[41];        /* hex object id; "" in a dry run */
	char *subject;      /* first line of the message */
	char *message;      /* whole message */
	struct strvec paths; /* repository-relative paths it changes */
};

struct repo_commit_report {
	VEC(struct repo_commit) commits; /* in the order made */
	struct strvec unchanged;         /* given paths skipped: nothing to change, or a rewrite error */
	struct strvec skipped;           /* with skip_dirty: paths not committed, having uncommitted changes */
	struct strvec applied;           /* paths committed (or to commit) whose working tree already held the change */
	char base[41];                   /* HEAD before the run; "" when unborn */
	char *branch;                    /* branch committed on ("refs/heads/..." stripped); NULL if detached */
	char *hook_output;               /* what the hooks that passed printed, or NULL */
};
#define REPO_COMMIT_REPORT_INIT {VEC_INIT, STRVEC_INIT, STRVEC_INIT, STRVEC_INIT, "", NULL, NULL}

/*
 * Commits CHANGES[0..n) (paths as walked, relative to the current
 * directory or absolute, inside R's working tree) as described above.
 * Changes whose new text equals the old one, or that carry a rewrite
 * error, are skipped and listed in out->unchanged; with opts->skip_dirty so
 * are files with uncommitted changes (worktree or index differs from HEAD),
 * in out->skipped, the others still committed. A change whose file already
 * holds it (repo_overlay_head() before the plan) is committed, not written,
 * and listed in out->applied. Nothing to change is
 * success with no commits. Records REPO_BASE_REF / REPO_TIP_REF for
 * repo_series(). OUT is filled as far as the run got, also on failure;
 * free it with repo_commit_report_release(). Returns 0, or -1 with the error
 * slot set (naming the file or the git state at fault).
 */
int repo_commit_changes(struct repo *r, const struct repo_commit_options *opts,
			const struct file_change *changes, size_t n, struct repo_commit_report *out);

void repo_commit_report_release(struct repo_commit_report *rep);

struct repo_series_options {
	const char *subject_prefix; /* default "PATCH" */
	bool signoff;               /* add Signed-off-by: <identity> where missing */
	bool cover_letter;          /* write 0000-cover-letter.patch (default true) */
	bool force;                 /* replace existing patch files (never through a link) */
	char *const *to;            /* To: addresses, in every mail (git format-patch --to) */
	size_t nto;
	char *const *cc;            /* Cc: addresses, in every mail (--cc) */
	size_t ncc;
	int reroll_count;           /* N > 0: "[PATCH vN m/n]", files vN-0001-...; 0: none */
	const char *base;           /* REV: a base-commit trailer (--base); NULL: none */
	const char *to_cmd;         /* run on each patch file: the To: addresses it prints (git send-email --to-cmd) */
	const char *cc_cmd;         /* ... the Cc: addresses (--cc-cmd) */
	bool cc_from_maintainers;   /* Cc each patch to the MAINTAINERS entries whose F: patterns cover its files */
	bool split_subsystem;       /* one series per subsystem (repo_subsystem()), each in OUTDIR/<its name>/ */
};
#define REPO_SERIES_OPTIONS_INIT {"PATCH", false, true, false, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, false, false}

/* With split_subsystem: one subsystem of the run. */
struct repo_series_part {
	char *subsystem; /* "drivers/net" (repo_subsystem()) */
	char *dir;       /* OUTDIR/drivers-net, where its series is; NULL: no commit (hand work only) */
	size_t patches;  /* its commits */
	size_t left;     /* the findings of the run's note left for hand work in its files */
	size_t after;    /* its series applies after that many others (they change a file it changes too) */
};

struct repo_series_report {
	struct strvec files; /* paths written, cover letter first (with split_subsystem: per series) */
	size_t patches;     /* number of commits in the series (in all of them) */
	VEC(struct repo_series_part) parts; /* with split_subsystem: by subsystem name; else empty */
	size_t unsigned_patches; /* patches with no Signed-off-by: line (checkpatch's MISSING_SIGN_OFF) */
};
#define REPO_SERIES_REPORT_INIT {STRVEC_INIT, 0, VEC_INIT, 0}

/*
 * Writes the commits of RANGE as OUTDIR/0001-<subject>.patch ... (mbox, as
 * git format-patch; git am applies them) and, with cover_letter,
 * OUTDIR/0000-cover-letter.patch: the files touched, the sites fixed per
 * rule and the sites left for review (read back from the commit messages),
 * the shortlog and the diffstat. To:/Cc: headers (opts->to, opts->cc) go in
 * every mail; with opts->reroll_count N the subject prefix gains " vN" and
 * the file names a "vN-" prefix; with opts->base the first mail (the cover
 * letter, else the first patch) ends, before its signature, with
 * "base-commit: <id>" and one "prerequisite-patch-id: <id>" per commit
 * between the base and the series, as git format-patch --base writes them
 * (the base must be an ancestor of the series; REPO_EUSAGE otherwise, and
 * for a REV that does not resolve). RANGE is "A..B", or "A" (A..HEAD), or
 * NULL: the last commit run, REPO_BASE_REF..HEAD (the whole history of
 * HEAD when no base is recorded). In a shallow clone the history ends at
 * its boundary. OUTDIR is created if
 * missing. Merge commits and an empty range are errors, found before
 * anything is written. Returns 0, or -1
 * with the error slot set; REPO_EUSAGE (error slot set) when the request
 * itself cannot be answered: no RANGE and no commit run recorded, or a
 * symmetric range.
 *
 * With opts->split_subsystem the commits are grouped by the subsystem of
 * their first file (repo_subsystem()), and each group is written as a
 * series of its own, numbered 1/n on its own, with its own cover letter
 * (its subsystem's share of the run's account, the files of other
 * subsystems a patch also changes, the series it must follow when they
 * change a file it changes too) and its own addresses, into
 * OUTDIR/<subsystem with '/' as '-'>/; out->parts lists the subsystems.
 */
#define REPO_EUSAGE (-2)
int repo_series(struct repo *r, const struct repo_series_options *opts, const char *range,
		const char *outdir, struct repo_series_report *out);

void repo_series_report_release(struct repo_series_report *rep);

/*
 * The subsystem of the repository-relative PATH, as --split-by names it:
 * under drivers/, net/, arch/ and fs/ the top directory and the one below
 * (drivers/net/tulip/de4x5.c: "drivers/net"; arch/i386/kernel/smp.c:
 * "arch/i386"), elsewhere the first component (kernel/sched.c: "kernel",
 * include/linux/sched.h: "include"); a file directly under one of those four
 * or at the top gives its first component too. Owned by the caller.
 */
char *repo_subsystem(const char *path);

/* The first words of the note of a commit run, by which series knows its own notes. */
#define REPO_NOTE_HEAD "preemptify "

/*
 * Attaches TEXT (which starts with REPO_NOTE_HEAD) as the git note of the
 * commit COMMIT_HEX (refs/notes/commits, replacing a note it had), by the
 * committer. 0, or -1 with the error slot set.
 */
int repo_note_add(struct repo *r, const char *commit_hex, const char *text);

#endif
