/*
 * What repo.c (opening, the safety checks), commit.c and series.c share.
 * Not part of the git module's API: only the .c files of src/git include it.
 */
#ifndef PREEMPTIFY_GIT_INTERNAL_H
#define PREEMPTIFY_GIT_INTERNAL_H

#include <git2.h>

#include "git/repo.h"

struct repo {
	git_repository *git;
	char *workdir; /* resolved (realpath), with a trailing '/' */
};

/* Sets the error slot from libgit2's last error, prefixed by WHAT; returns -1. */
int repo_git_fail(const char *what);

enum repo_role { REPO_AUTHOR, REPO_COMMITTER };

/*
 * The identity git would use for ROLE: GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL
 * (GIT_COMMITTER_* for the committer) when set, else user.name and
 * user.email, else $EMAIL for the address; the time is now. -1 with a
 * how-to-set-it message if there is none.
 */
int repo_identity(git_repository *g, enum repo_role role, git_signature **out);

/* One file to commit. */
struct item {
	const struct file_change *change;
	char *rel;            /* repository-relative path */
	git_filemode_t mode;  /* blob or blob-executable */
	size_t group;
	bool applied;         /* the working tree already holds the change (repo_applied_match()): not written */
};

typedef VEC(struct item) item_vec;

/* repo_check_item(): the file has uncommitted changes (error slot set). */
#define REPO_EDIRTY (-3)

/*
 * Refuses anything we could not commit cleanly: a path with uncommitted
 * changes (but one whose working tree is exactly its planned change, which
 * sets IT->applied), or marked assume-unchanged or skip-worktree (REPO_EDIRTY);
 * untracked; any file while HEAD is unborn (HEAD_TREE NULL): its first
 * commit would hold the user's whole file; inside a submodule or nested
 * repository; with a filter driver or working-tree-encoding libgit2 cannot
 * apply; not a regular file; or whose contents are no longer what the
 * rewrite read. Sets IT->mode. 0, or -1 with the error slot set.
 */
int repo_check_item(struct repo *r, git_tree *head_tree, struct item *it);

/*
 * Was IT's change planned from HEAD's text (repo_overlay_head()), and does
 * the working tree hold exactly what that plan makes (an earlier apply)?
 * Both compared as git add stores them (the eol/text/ident conversions of
 * .gitattributes), as the commit would write them. 1 yes, 0 no, -1 with
 * the error slot set.
 */
int repo_applied_match(git_repository *g, git_tree *head_tree, const struct item *it);

/*
 * Refuses a repository in the middle of a merge, revert, cherry-pick,
 * bisect, rebase or git am, naming the git commands that end it.
 */
int repo_check_idle(git_repository *g);

/* The note of COMMIT when preemptify wrote it (repo_note_add()), owned, or NULL. */
char *repo_note_read(git_repository *g, const git_oid *commit);

/* Refuses a locked index (index.lock exists). */
int repo_check_unlocked(git_repository *g);

/* Checks the branch option; sets *CREATE when it must be created (or reset). */
int repo_check_branch(git_repository *g, const char *branch, bool force, bool unborn, bool *create);

/*
 * Refuses commit.gpgsign = true unless NO_GPG_SIGN: libgit2 does not sign,
 * and an unsigned commit where the user asked for signed ones is a surprise.
 */
int repo_check_signing(git_repository *g, bool no_gpg_sign);

/* The hooks git commit runs that preemptify runs too: executable paths, or NULL. */
struct repo_hooks {
	char *pre_commit;
	char *commit_msg;
};
#define REPO_HOOKS_INIT {NULL, NULL}

/*
 * Finds the hooks as git does: in core.hooksPath (relative to WORKDIR, the
 * work tree's top, where they run) or the repository's hooks directory;
 * only executable files count. 0, or -1 with the error slot set.
 */
int repo_hooks_find(git_repository *g, const char *workdir, struct repo_hooks *out);

void repo_hooks_release(struct repo_hooks *h);

/*
 * Runs the hooks H has for one commit of TREE with *MESSAGE, as git commit
 * does: pre-commit, then commit-msg on .git/COMMIT_EDITMSG (what it leaves
 * there replaces *MESSAGE, owned), both from WORKDIR with GIT_INDEX_FILE
 * naming a temporary index holding TREE and GIT_EDITOR=":". A hook's output
 * is appended to LOG. 0; -1 with the error slot set when a hook fails (its
 * output included), cannot run, or a pre-commit hook changes that index.
 */
int repo_hooks_run(const struct repo_hooks *h, git_repository *g, const char *workdir, git_tree *tree,
		   char **message, struct buf *log);

typedef VEC(git_oid) oid_vec;

/*
 * The commits a shallow clone has without their parents (.git/shallow, one
 * hex id a line): there its history ends. Appends them to OUT; none when
 * the repository is not shallow.
 */
void repo_shallow_boundary(git_repository *g, oid_vec *out);

/* Is ID one of IDS[0..n)? */
bool repo_oid_in(const git_oid *id, const git_oid *ids, size_t n);

/* The last commits touching a file that its subject prefix is learned from. */
#define REPO_HISTORY_COMMITS 20
/* At most this many commits of HEAD's first-parent history are looked at for them. */
#define REPO_HISTORY_WALK_MAX 2000

/*
 * The subject prefix the history of PATHS (repository-relative) uses: of
 * the last REPO_HISTORY_COMMITS non-merge commits reachable from HEAD
 * (first parents, newest first) that change one of PATHS, the most common
 * prefix of the subject: its leading "word: " components, words without
 * spaces ("char: lp: fix x" -> "char: lp"; subjects without one, merges and
 * reverts do not count; a tie goes to the most recent). *OUT (owned) is
 * NULL when there is none (HEAD NULL: unborn). 0, or -1 with the error slot set.
 */
int repo_history_prefix(git_repository *g, git_commit *head, const char *const *paths, size_t n, char **out);

#endif
