/*
 * Hooks and signing: what `git commit` does around a commit that libgit2
 * leaves out. The pre-commit and commit-msg hooks run as git runs them
 * (found in core.hooksPath or the hooks directory, executable, from the top
 * of the work tree, GIT_INDEX_FILE naming the index of the commit);
 * commit.gpgsign is honoured by refusing, since libgit2 does not sign.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "git/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/spawn.h"

int repo_check_signing(git_repository *g, bool no_gpg_sign)
{
	git_config *cfg = NULL;
	int sign = 0;
	if (!no_gpg_sign && git_repository_config_snapshot(&cfg, g) == 0 &&
	    git_config_get_bool(&sign, cfg, "commit.gpgsign") < 0)
		sign = 0;
	git_config_free(cfg);
	error_clear();
	if (!sign)
		return 0;
	return error_set("commit.gpgsign is set, and preemptify cannot sign commits (libgit2 does not): "
			 "commit unsigned with --no-gpg-sign, then sign them with git rebase --force-rebase "
			 "--gpg-sign %s", REPO_BASE_REF);
}

/* The path of hook NAME in DIR when it is an executable file (git skips the others), or NULL. */
static char *hook_path(const char *dir, const char *name)
{
	char *p = xasprintf("%s%s%s", dir, dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", name);
	if (access(p, X_OK) == 0)
		return p;
	free(p);
	return NULL;
}

int repo_hooks_find(git_repository *g, const char *workdir, struct repo_hooks *out)
{
	git_config *cfg = NULL;
	git_buf set = GIT_BUF_INIT;
	char *dir = NULL;
	*out = (struct repo_hooks)REPO_HOOKS_INIT;
	if (git_repository_config_snapshot(&cfg, g) < 0)
		return repo_git_fail("reading the configuration");
	/* core.hooksPath: "~/" is the home directory; a relative path is from where hooks run */
	if (git_config_get_path(&set, cfg, "core.hooksPath") == 0 && set.size)
		dir = set.ptr[0] == '/' ? xstrdup(set.ptr) : xasprintf("%s%s", workdir, set.ptr);
	else
		dir = xasprintf("%shooks", git_repository_commondir(g));
	error_clear();
	out->pre_commit = hook_path(dir, "pre-commit");
	out->commit_msg = hook_path(dir, "commit-msg");
	free(dir);
	git_buf_dispose(&set);
	git_config_free(cfg);
	return 0;
}

void repo_hooks_release(struct repo_hooks *h)
{
	free(h->pre_commit);
	free(h->commit_msg);
	h->pre_commit = h->commit_msg = NULL;
}

/* An environment variable's value to put back after a hook ran. */
struct env_saved {
	const char *name;
	char *value; /* NULL: was unset */
};

static struct env_saved env_push(const char *name, const char *value)
{
	const char *old = getenv(name);
	struct env_saved s = {name, old ? xstrdup(old) : NULL};
	setenv(name, value, 1);
	return s;
}

static void env_pop(struct env_saved *s)
{
	if (s->value)
		setenv(s->name, s->value, 1);
	else
		unsetenv(s->name);
	free(s->value);
}

/*
 * Runs HOOK (with ARG, or none) from the top of the work tree, as git runs
 * it for a commit: GIT_INDEX_FILE names INDEX_FILE, GIT_EDITOR is ":" (no
 * editor: the message is given). Its output is appended to LOG. 0 when it
 * exits 0; -1 with the error slot holding the refusal and the output.
 */
static int run_hook(const char *hook, const char *arg, const char *workdir, const char *index_file, struct buf *log)
{
	char *argv[] = {(char *)hook, (char *)arg, NULL};
	struct spawn_result res = SPAWN_RESULT_INIT;
	const char *name = strrchr(hook, '/') ? strrchr(hook, '/') + 1 : hook;
	/* spawn_run() takes the environment from us: set what git sets, for the child only */
	struct env_saved idx = env_push("GIT_INDEX_FILE", index_file), ed = env_push("GIT_EDITOR", ":");
	int e = spawn_run(argv, workdir, 0, &res);
	env_pop(&ed);
	env_pop(&idx);
	int rc = 0;
	if (e < 0) {
		rc = error_set("the %s hook %s could not be run (%s): nothing was committed; "
			       "--no-verify skips the hooks", name, hook, error_last());
	} else if (res.exit_code != 0) {
		char *how = spawn_describe(&res);
		size_t n = res.output_len;
		while (n && res.output[n - 1] == '\n')
			n--;
		rc = error_set("the %s hook %s refused the commit (%s), so nothing was committed and no file was "
			       "changed (--no-verify skips the hooks)%s%.*s", name, hook, how,
			       n ? "; it said:\n" : "", (int)n, n ? res.output : "");
		free(how);
	} else if (res.output_len) {
		buf_add(log, res.output, res.output_len);
	}
	spawn_result_release(&res);
	return rc;
}

/* Writes an index holding TREE at PATH, for the hooks' GIT_INDEX_FILE. */
static int write_index(git_tree *tree, const char *path)
{
	git_index *index = NULL;
	int rc = git_index_open(&index, path) < 0 || git_index_read_tree(index, tree) < 0 || git_index_write(index) < 0
			 ? repo_git_fail("writing the index for the hooks")
			 : 0;
	git_index_free(index);
	return rc;
}

/* After pre-commit: the index at PATH still holds TREE (a hook may stage fixes of its own). */
static int check_index_kept(git_repository *g, const char *hook, git_tree *tree, const char *path)
{
	git_index *index = NULL;
	git_oid after;
	int rc = 0;
	if (git_index_open(&index, path) < 0 || git_index_write_tree_to(&after, index, g) < 0)
		rc = repo_git_fail("reading the index the pre-commit hook left");
	else if (!git_oid_equal(&after, git_tree_id(tree)))
		rc = error_set("the pre-commit hook %s changed the files to commit; preemptify commits only its own "
			       "changes, so nothing was committed (--no-verify skips the hooks)", hook);
	git_index_free(index);
	return rc;
}

/*
 * commit-msg, on .git/COMMIT_EDITMSG holding *MESSAGE. What the hook leaves
 * there becomes the message (cleaned up as git commit -m does: trailing
 * spaces and extra blank lines go, comments stay); an empty one is refused.
 */
static int commit_msg(const char *hook, git_repository *g, const char *workdir, const char *index_file,
		      char **message, struct buf *log)
{
	char *path = xasprintf("%sCOMMIT_EDITMSG", git_repository_path(g)), *text = NULL;
	size_t len = 0;
	git_buf clean = GIT_BUF_INIT;
	int rc = -1;
	if (write_file(path, *message, strlen(*message)) < 0 || run_hook(hook, path, workdir, index_file, log) < 0 ||
	    read_file(path, &text, &len) < 0)
		goto done;
	if (len == strlen(*message) && memcmp(text, *message, len) == 0) {
		rc = 0;
		goto done;
	}
	if (git_message_prettify(&clean, text, 0, '#') < 0 || clean.size == 0) {
		error_set("the commit-msg hook %s left an empty message, so nothing was committed", hook);
		goto done;
	}
	free(*message);
	*message = xstrndup(clean.ptr, clean.size);
	rc = 0;
done:
	git_buf_dispose(&clean);
	free(text);
	free(path);
	return rc;
}

/*
 * Both hooks see a temporary index holding TREE (git commit -- PATHS does
 * the same), so what they inspect is what the commit holds.
 */
int repo_hooks_run(const struct repo_hooks *h, git_repository *g, const char *workdir, git_tree *tree,
		   char **message, struct buf *log)
{
	if (!h->pre_commit && !h->commit_msg)
		return 0;
	char *index_file = xasprintf("%spreemptify-index.%ld", git_repository_path(g), (long)getpid());
	int rc = write_index(tree, index_file);
	if (rc == 0 && h->pre_commit)
		rc = run_hook(h->pre_commit, NULL, workdir, index_file, log) < 0 ||
				     check_index_kept(g, h->pre_commit, tree, index_file) < 0
			     ? -1
			     : 0;
	if (rc == 0 && h->commit_msg)
		rc = commit_msg(h->commit_msg, g, workdir, index_file, message, log);
	unlink(index_file);
	free(index_file);
	return rc;
}
