/* realpath() is XSI. */
#define _XOPEN_SOURCE 700

#include "git/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Said for libgit2's "unsupported mandatory extension: 'sdir'". */
#define SPARSE_INDEX_SENTENCE                                                                                 \
	"the index is a sparse index (git sparse-checkout --sparse-index), which libgit2 cannot read: "       \
	"make it a full index with git sparse-checkout set --no-sparse-index (or git sparse-checkout "         \
	"disable to leave the sparse checkout)"

int repo_git_fail(const char *what)
{
	const git_error *e = git_error_last();
	const char *m = e && e->message && *e->message ? e->message : "libgit2 error";
	if (strstr(m, "extension: 'sdir'"))
		return error_set("%s: %s", what, SPARSE_INDEX_SENTENCE);
	size_t n = strlen(m);
	/* libgit2 ends some messages with ": " and no reason (a lock file that exists) */
	while (n && (m[n - 1] == ' ' || m[n - 1] == ':'))
		n--;
	if (n < strlen(m))
		return error_set("%s: %.*s: %s", what, (int)n, m,
				 strstr(m, ".lock") ? "the lock file exists: another git process is running, "
						      "or one crashed (remove the .lock file if none runs)"
						    : "no reason given");
	return error_set("%s: %s", what, m);
}

/* VAR's value when set and not empty, else NULL. */
static const char *env_nonempty(const char *var)
{
	const char *v = getenv(var);
	return v && *v ? v : NULL;
}

int repo_identity(git_repository *g, enum repo_role role, git_signature **out)
{
	/* git's order: GIT_<ROLE>_NAME/EMAIL, then user.name/user.email, then $EMAIL */
	const char *name = env_nonempty(role == REPO_AUTHOR ? "GIT_AUTHOR_NAME" : "GIT_COMMITTER_NAME");
	const char *email = env_nonempty(role == REPO_AUTHOR ? "GIT_AUTHOR_EMAIL" : "GIT_COMMITTER_EMAIL");
	git_config *cfg = NULL;
	git_buf cname = {0}, cemail = {0};
	if ((!name || !email) && git_repository_config_snapshot(&cfg, g) == 0) {
		if (!name && git_config_get_string_buf(&cname, cfg, "user.name") == 0 && cname.size)
			name = cname.ptr;
		if (!email && git_config_get_string_buf(&cemail, cfg, "user.email") == 0 && cemail.size)
			email = cemail.ptr;
	}
	if (!email)
		email = env_nonempty("EMAIL");
	int rc = 0;
	if (!name || !email)
		rc = error_set("no identity to commit with: set one with "
			       "git config user.name \"Your Name\" and "
			       "git config user.email you@example.com");
	else if (git_signature_now(out, name, email) < 0)
		rc = repo_git_fail("the identity to commit with");
	git_buf_dispose(&cname);
	git_buf_dispose(&cemail);
	git_config_free(cfg);
	return rc;
}

/* The directory part of PATH as a path to open: "/" at the root, "." for a bare name. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
}

/*
 * The nearest directory above DIR holding a .git that another user owns,
 * or NULL (owned). libgit2 1.5 reports that case as "config value
 * 'safe.directory' was not found", so it is looked for here.
 */
static char *foreign_repo(const char *dir)
{
	char *d = realpath(dir, NULL);
	while (d) {
		char *dotgit = xasprintf("%s/.git", d);
		struct stat st;
		int found = lstat(dotgit, &st);
		free(dotgit);
		if (found == 0) {
			if (st.st_uid != geteuid())
				return d;
			break;
		}
		char *slash = strrchr(d, '/');
		if (!slash || slash == d)
			break;
		*slash = '\0';
	}
	free(d);
	return NULL;
}

int repo_open(struct repo **out, const char *path)
{
	int rc = -1;
	git_repository *g = NULL;
	char *dir = NULL, *real = NULL;
	*out = NULL;
	git_libgit2_init();
	struct stat st;
	if (stat(path, &st) < 0) {
		error_set("%s: %s", path, strerror(errno));
		goto done;
	}
	dir = S_ISDIR(st.st_mode) ? xstrdup(path) : dir_of(path);
	int e = git_repository_open_ext(&g, dir, 0, NULL);
	char *owner_dir = e < 0 ? foreign_repo(dir) : NULL;
	if (e == GIT_EOWNER || owner_dir) {
		error_set("%s: the repository %s is owned by another user, which git refuses: run as its "
			  "owner, or mark it safe with git config --global --add safe.directory %s", path,
			  owner_dir ? owner_dir : dir, owner_dir ? owner_dir : dir);
		free(owner_dir);
		goto done;
	}
	if (e < 0) {
		error_set("%s: not inside a git repository", path);
		goto done;
	}
	if (git_repository_is_bare(g)) {
		error_set("%s: the repository is bare; preemptify needs a working tree", path);
		goto done;
	}
	real = realpath(git_repository_workdir(g), NULL);
	if (!real) {
		error_set("%s: %s", git_repository_workdir(g), strerror(errno));
		goto done;
	}
	struct repo *r = xcalloc(1, sizeof *r);
	r->git = g;
	r->workdir = strcmp(real, "/") == 0 ? xstrdup("/") : xasprintf("%s/", real);
	g = NULL;
	*out = r;
	rc = 0;
done:
	git_repository_free(g);
	if (rc < 0)
		git_libgit2_shutdown();
	free(dir);
	free(real);
	return rc;
}

void repo_free(struct repo *r)
{
	if (!r)
		return;
	git_repository_free(r->git);
	free(r->workdir);
	free(r);
	git_libgit2_shutdown();
}

const char *repo_workdir(const struct repo *r)
{
	return r->workdir;
}

/*
 * URL as a URI without credentials, or NULL (a relative path, say). Owned.
 * The user information of a URL goes (it may be a token: https://TOKEN@host),
 * except a plain user name of ssh.
 */
static char *remote_uri(const char *url)
{
	const char *scheme_end = strstr(url, "://");
	if (scheme_end) {
		const char *host = scheme_end + 3;
		const char *path = host + strcspn(host, "/");
		const char *at = memchr(host, '@', (size_t)(path - host));
		bool ssh = strncmp(url, "ssh://", 6) == 0 && at && !memchr(host, ':', (size_t)(at - host));
		if (at && !ssh)
			return xasprintf("%.*s%s", (int)(host - url), url, at + 1);
		return xstrdup(url);
	}
	if (url[0] == '/')
		return xasprintf("file://%s", url);
	const char *colon = strchr(url, ':'), *slash = strchr(url, '/');
	if (colon && colon != url && (!slash || colon < slash)) /* scp-like [user@]host:path */
		return xasprintf("ssh://%.*s/%s", (int)(colon - url), url, colon[1] == '/' ? colon + 2 : colon + 1);
	return NULL;
}

int repo_provenance_get(struct repo *r, struct repo_provenance *out)
{
	git_remote *remote = NULL;
	git_reference *head = NULL;
	git_oid id;
	*out = (struct repo_provenance)REPO_PROVENANCE_INIT;
	if (git_remote_lookup(&remote, r->git, "origin") == 0 && git_remote_url(remote))
		out->remote_uri = remote_uri(git_remote_url(remote));
	git_remote_free(remote);
	if (git_reference_name_to_id(&id, r->git, "HEAD") == 0)
		git_oid_tostr(out->head, sizeof out->head, &id);
	if (git_reference_lookup(&head, r->git, "HEAD") == 0 && git_reference_type(head) == GIT_REFERENCE_SYMBOLIC) {
		const char *target = git_reference_symbolic_target(head);
		if (strncmp(target, "refs/heads/", 11) == 0)
			out->branch = xstrdup(target + 11);
	}
	git_reference_free(head);
	return 0;
}

void repo_provenance_release(struct repo_provenance *p)
{
	free(p->remote_uri);
	free(p->branch);
	p->remote_uri = p->branch = NULL;
}

int repo_group_parse(const char *s)
{
	if (strcmp(s, "file") == 0)
		return REPO_GROUP_FILE;
	if (strcmp(s, "dir") == 0)
		return REPO_GROUP_DIR;
	return -1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int repo_changed_since(struct repo *r, const char *rev, struct strvec *out)
{
	git_object *obj = NULL;
	git_tree *tree = NULL;
	git_diff *diff = NULL;
	git_diff_options o;
	size_t first = out->len;
	int rc = REPO_EUSAGE;
	if (git_revparse_single(&obj, r->git, rev) < 0 ||
	    git_object_peel((git_object **)&tree, obj, GIT_OBJECT_TREE) < 0) {
		error_set("'%s' does not name a commit in %s", rev, r->workdir);
		goto done;
	}
	rc = -1;
	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS;
	if (git_diff_tree_to_workdir_with_index(&diff, r->git, tree, &o) < 0) {
		repo_git_fail(rev);
		goto done;
	}
	for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		if (d->status != GIT_DELTA_DELETED)
			strvec_push(out, d->new_file.path);
	}
	qsort(out->items + first, out->len - first, sizeof *out->items, cmp_str);
	rc = 0;
done:
	git_diff_free(diff);
	git_tree_free(tree);
	git_object_free(obj);
	return rc;
}

/* ---- the safety checks ---- */

/*
 * The directory is resolved, the last component kept, so a symlinked file
 * is judged by where it is, not where it points.
 */
int repo_relpath(const struct repo *r, const char *path, char **out)
{
	const char *slash = strrchr(path, '/');
	char *dir = dir_of(path), *full = NULL;
	const char *base = slash ? slash + 1 : path;
	char *real = realpath(dir, NULL);
	int rc = -1;
	if (!real) {
		error_set("%s: %s", path, strerror(errno));
		goto done;
	}
	full = strcmp(real, "/") == 0 ? xasprintf("/%s", base) : xasprintf("%s/%s", real, base);
	size_t wl = strlen(r->workdir);
	if (strncmp(full, r->workdir, wl) != 0 || !full[wl] || !*base) {
		error_set("%s: not a file inside the repository at %s", path, r->workdir);
		goto done;
	}
	if (strncmp(full + wl, ".git/", 5) == 0) {
		error_set("%s: inside the .git directory", path);
		goto done;
	}
	*out = xstrdup(full + wl);
	rc = 0;
done:
	free(full);
	free(dir);
	free(real);
	return rc;
}

/*
 * A tracked file (HEAD exists): unchanged against HEAD, or changed in the
 * working tree only and exactly as planned (already applied), and a
 * regular file there. Refused with the commands that resolve it.
 */
static int check_tracked(git_repository *g, git_tree *head_tree, struct item *it, unsigned flags)
{
	const char *p = it->change->path;
	git_tree_entry *ent = NULL;
	if (flags & GIT_STATUS_WT_NEW)
		return error_set("%s: not tracked by git; add and commit it first, preemptify commits only its own changes", p);
	if (flags == GIT_STATUS_WT_MODIFIED) {
		int a = repo_applied_match(g, head_tree, it);
		if (a < 0)
			return -1;
		it->applied = a == 1;
	}
	bool staged = flags & (GIT_STATUS_INDEX_NEW | GIT_STATUS_INDEX_MODIFIED | GIT_STATUS_INDEX_DELETED |
			       GIT_STATUS_INDEX_RENAMED | GIT_STATUS_INDEX_TYPECHANGE);
	if (flags != GIT_STATUS_CURRENT && !it->applied) {
		if (staged)
			error_set("%s: has uncommitted changes (staged); commit or stash them first (git commit, "
				  "git stash), preemptify never mixes its changes with yours", p);
		else
			error_set("%s: has uncommitted changes (in the working tree) that are not the change "
				  "preemptify plans (git diff -- %s shows them); commit or stash them first (git stash), "
				  "or drop them (git checkout -- %s) to commit preemptify's change alone; preemptify "
				  "never mixes its changes with yours", p, p, p);
		return REPO_EDIRTY;
	}
	if (git_tree_entry_bypath(&ent, head_tree, it->rel) < 0)
		return repo_git_fail(p);
	it->mode = git_tree_entry_filemode(ent);
	git_tree_entry_free(ent);
	if (it->mode != GIT_FILEMODE_BLOB && it->mode != GIT_FILEMODE_BLOB_EXECUTABLE)
		return error_set("%s: not a regular file in HEAD; refusing to commit it", p);
	return 0;
}

/*
 * Unborn HEAD: the file has never been committed, so a commit of it would
 * put the user's whole file into history already fixed, their original
 * never recorded. Refused: preemptify commits only its own changes.
 */
static int check_unborn(const struct item *it)
{
	return error_set("%s: the branch has no commit yet, so committing it would add your whole file, "
			 "already changed, and your original would never be in history; commit the original "
			 "first (git add, git commit), then run preemptify again", it->change->path);
}

/* The file still holds what the rewrite read. */
static int check_unchanged(const struct item *it)
{
	const char *p = it->change->path;
	char *text = NULL;
	size_t len = 0;
	if (read_file(p, &text, &len) < 0)
		return -1;
	bool same = len == it->change->old_len && memcmp(text, it->change->old_text, len) == 0;
	free(text);
	return same ? 0 : error_set("%s: changed since it was read; run preemptify again", p);
}

/*
 * A path below a directory that holds a repository of its own (a
 * submodule, or a repository nested without being one): libgit2 only says
 * "nonexistent file". Named here, with where to commit instead.
 */
static int check_not_nested(struct repo *r, const struct item *it)
{
	int rc = 0;
	for (const char *slash = strchr(it->rel, '/'); slash && rc == 0; slash = strchr(slash + 1, '/')) {
		char *dir = xstrndup(it->rel, (size_t)(slash - it->rel));
		char *dotgit = xasprintf("%s%s/.git", r->workdir, dir);
		struct stat st;
		if (lstat(dotgit, &st) == 0) {
			git_submodule *sm = NULL;
			bool sub = git_submodule_lookup(&sm, r->git, dir) == 0;
			git_submodule_free(sm);
			rc = error_set("%s: belongs to %s '%s', a repository of its own: run preemptify commit "
				       "there (cd %s%s), separately from this repository", it->change->path,
				       sub ? "the submodule" : "the git repository nested at", dir, r->workdir, dir);
		}
		free(dotgit);
		free(dir);
	}
	return rc;
}

/*
 * assume-unchanged and skip-worktree make git stop looking at the file, so
 * the status says clean whatever the user changed: refused as dirty.
 */
static int check_index_marks(struct repo *r, const struct item *it)
{
	git_index *index = NULL;
	if (git_repository_index(&index, r->git) < 0)
		return repo_git_fail(it->change->path);
	const git_index_entry *e = git_index_get_bypath(index, it->rel, 0);
	const char *mark = !e ? NULL
			   : e->flags & GIT_INDEX_ENTRY_VALID ? "assume-unchanged"
			   : e->flags_extended & GIT_INDEX_ENTRY_SKIP_WORKTREE ? "skip-worktree" : NULL;
	git_index_free(index);
	if (!mark)
		return 0;
	error_set("%s: marked %s in the index, so git does not look at it and you may have edits here; "
		  "clear the mark (git update-index --no-%s %s), then commit or stash your edits first",
		  it->change->path, mark, mark, it->change->path);
	return REPO_EDIRTY;
}

/* The string value of config KEY into B; false when unset. */
static bool config_string(git_config *cfg, const char *key, git_buf *b)
{
	return git_config_get_string_buf(b, cfg, key) == 0;
}

/*
 * What .gitattributes asks of the file that libgit2 cannot do: a filter
 * driver (filter.NAME.clean or .process: external programs git runs, such
 * as a redacting filter or git-lfs) or a working-tree-encoding. Committing
 * the raw text would undo it, so the file is refused. The eol and text
 * attributes and ident libgit2 does apply (blob_of() in commit.c).
 */
static int check_filters(struct repo *r, const struct item *it)
{
	const char *p = it->change->path, *filter = NULL, *enc = NULL;
	git_config *cfg = NULL;
	git_buf cmd = GIT_BUF_INIT;
	int rc = 0, required = 0;
	if (git_attr_get(&enc, r->git, GIT_ATTR_CHECK_FILE_THEN_INDEX, it->rel, "working-tree-encoding") < 0 ||
	    git_attr_get(&filter, r->git, GIT_ATTR_CHECK_FILE_THEN_INDEX, it->rel, "filter") < 0)
		return repo_git_fail(p);
	if (git_attr_value(enc) == GIT_ATTR_VALUE_STRING)
		return error_set("%s: .gitattributes gives it working-tree-encoding=%s, a conversion libgit2 "
				 "cannot make; commit this file with git itself", p, enc);
	if (git_attr_value(filter) != GIT_ATTR_VALUE_STRING)
		return 0;
	if (git_repository_config_snapshot(&cfg, r->git) < 0)
		return repo_git_fail(p);
	char *clean = xasprintf("filter.%s.clean", filter), *process = xasprintf("filter.%s.process", filter);
	char *req = xasprintf("filter.%s.required", filter);
	const char *key = config_string(cfg, clean, &cmd) ? clean : config_string(cfg, process, &cmd) ? process : NULL;
	if (key || (git_config_get_bool(&required, cfg, req) == 0 && required))
		rc = error_set("%s: .gitattributes passes it through the filter '%s' (%s%s%s), a program git runs "
			       "and libgit2 cannot; committing the unfiltered text would undo what the filter does "
			       "(redact, convert, store elsewhere), so the file is refused: commit it with git itself",
			       p, filter, key ? key : req, key ? " = " : " = true", key ? cmd.ptr : "");
	free(clean);
	free(process);
	free(req);
	git_buf_dispose(&cmd);
	git_config_free(cfg);
	return rc;
}

int repo_check_item(struct repo *r, git_tree *head_tree, struct item *it)
{
	unsigned flags = 0;
	const char *p = it->change->path;
	struct stat st;
	if (lstat(p, &st) < 0)
		return error_set("%s: %s", p, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return error_set("%s: not a regular file; refusing to commit it", p);
	if (check_not_nested(r, it) < 0)
		return -1;
	if (git_status_file(&flags, r->git, it->rel) < 0)
		return repo_git_fail(p);
	if (flags & GIT_STATUS_IGNORED)
		return error_set("%s: ignored by git (.gitignore); refusing to commit it", p);
	int e = head_tree ? check_tracked(r->git, head_tree, it, flags) : check_unborn(it);
	if (e == 0)
		e = check_index_marks(r, it);
	if (e == 0)
		e = check_filters(r, it);
	/* an applied file was just compared with what it holds */
	return e < 0 || it->applied ? e : check_unchanged(it);
}

static const char *const state_words[][2] = {
	[GIT_REPOSITORY_STATE_MERGE] = {"a merge", "finish it with git commit, or abort it with git merge --abort"},
	[GIT_REPOSITORY_STATE_REVERT] = {"a revert", "git revert --continue, or git revert --abort"},
	[GIT_REPOSITORY_STATE_REVERT_SEQUENCE] = {"a revert", "git revert --continue, or git revert --abort"},
	[GIT_REPOSITORY_STATE_CHERRYPICK] = {"a cherry-pick", "git cherry-pick --continue, or git cherry-pick --abort"},
	[GIT_REPOSITORY_STATE_CHERRYPICK_SEQUENCE] = {"a cherry-pick",
						      "git cherry-pick --continue, or git cherry-pick --abort"},
	[GIT_REPOSITORY_STATE_BISECT] = {"a bisect", "end it with git bisect reset"},
	[GIT_REPOSITORY_STATE_REBASE] = {"a rebase", "git rebase --continue, or git rebase --abort"},
	[GIT_REPOSITORY_STATE_REBASE_INTERACTIVE] = {"a rebase", "git rebase --continue, or git rebase --abort"},
	[GIT_REPOSITORY_STATE_REBASE_MERGE] = {"a rebase", "git rebase --continue, or git rebase --abort"},
	[GIT_REPOSITORY_STATE_APPLY_MAILBOX] = {"a git am", "git am --continue, or git am --abort"},
	[GIT_REPOSITORY_STATE_APPLY_MAILBOX_OR_REBASE] = {"a git am or rebase",
							  "git am --abort or git rebase --abort"},
};

int repo_check_idle(git_repository *g)
{
	int state = git_repository_state(g);
	if (state == GIT_REPOSITORY_STATE_NONE)
		return 0;
	if (state < 0 || (size_t)state >= ARRAY_SIZE(state_words) || !state_words[state][0])
		return error_set("the repository is in the middle of an operation git has not finished; finish it first");
	return error_set("%s is in progress in this repository; preemptify will not commit in the middle of "
			 "it: %s, then run preemptify again", state_words[state][0], state_words[state][1]);
}

int repo_check_unlocked(git_repository *g)
{
	char *lockpath = xasprintf("%sindex.lock", git_repository_path(g));
	int rc = 0;
	if (access(lockpath, F_OK) == 0)
		rc = error_set("%s exists: another git process is running, or one crashed "
			       "(remove the file if no git process is running)", lockpath);
	free(lockpath);
	return rc;
}

int repo_check_branch(git_repository *g, const char *branch, bool force, bool unborn, bool *create)
{
	int valid = 0, rc = -1;
	git_reference *ref = NULL;
	*create = false;
	if (git_branch_name_is_valid(&valid, branch) < 0 || !valid)
		return error_set("'%s' is not a valid branch name", branch);
	int e = git_branch_lookup(&ref, g, branch, GIT_BRANCH_LOCAL);
	if (e == GIT_ENOTFOUND) {
		*create = true;
		rc = 0;
		goto done;
	}
	if (e < 0) {
		repo_git_fail(branch);
		goto done;
	}
	if (git_branch_is_head(ref) == 1) {
		rc = 0; /* already on it: commit there */
		goto done;
	}
	if (!force) {
		error_set("branch '%s' already exists; use --force to reset it to HEAD, or pick another name", branch);
		goto done;
	}
	if (unborn) {
		error_set("branch '%s' already exists and HEAD has no commit to reset it to", branch);
		goto done;
	}
	*create = true;
	rc = 0;
done:
	git_reference_free(ref);
	return rc;
}
