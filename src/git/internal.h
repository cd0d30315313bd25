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
};

typedef VEC(struct item) item_vec;

/* repo_check_item(): the file has uncommitted changes (error slot set). */
#define REPO_EDIRTY (-3)

/*
 * Refuses anything we could not commit cleanly: a path with uncommitted
 * changes (REPO_EDIRTY), untracked (once HEAD exists; HEAD_TREE is NULL while it is
 * unborn), not a regular file, or whose contents are no longer what the
 * rewrite read. Sets IT->mode. 0, or -1 with the error slot set.
 */
int repo_check_item(struct repo *r, git_tree *head_tree, struct item *it);

/* Refuses a locked index (index.lock exists). */
int repo_check_unlocked(git_repository *g);

/* Checks the branch option; sets *CREATE when it must be created (or reset). */
int repo_check_branch(git_repository *g, const char *branch, bool force, bool unborn, bool *create);

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
