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

int repo_git_fail(const char *what)
{
	const git_error *e = git_error_last();
	const char *m = e && e->message && *e->message ? e->message : "libgit2 error";
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

/* A tracked file (HEAD exists): unchanged against HEAD, and a regular file there. */
static int check_tracked(git_tree *head_tree, struct item *it, unsigned flags)
{
	const char *p = it->change->path;
	git_tree_entry *ent = NULL;
	if (flags & GIT_STATUS_WT_NEW)
		return error_set("%s: not tracked by git; add and commit it first, preemptify commits only its own changes", p);
	if (flags != GIT_STATUS_CURRENT) {
		error_set("%s: has uncommitted changes (%s); commit or stash them first, "
			  "preemptify never mixes its changes with yours", p,
			  flags & (GIT_STATUS_INDEX_NEW | GIT_STATUS_INDEX_MODIFIED | GIT_STATUS_INDEX_DELETED |
				   GIT_STATUS_INDEX_RENAMED | GIT_STATUS_INDEX_TYPECHANGE) ? "staged" : "in the working tree");
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

/* Unborn HEAD: the file is new either way; it must not differ between index and worktree. */
static int check_unborn(struct item *it, unsigned flags, mode_t st_mode)
{
	if (flags != GIT_STATUS_WT_NEW && flags != GIT_STATUS_INDEX_NEW) {
		error_set("%s: has unstaged changes on top of staged ones; commit or stash them first",
			  it->change->path);
		return REPO_EDIRTY;
	}
	it->mode = st_mode & 0111 ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
	return 0;
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

int repo_check_item(struct repo *r, git_tree *head_tree, struct item *it)
{
	unsigned flags = 0;
	const char *p = it->change->path;
	struct stat st;
	if (lstat(p, &st) < 0)
		return error_set("%s: %s", p, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return error_set("%s: not a regular file; refusing to commit it", p);
	if (git_status_file(&flags, r->git, it->rel) < 0)
		return repo_git_fail(p);
	if (flags & GIT_STATUS_IGNORED)
		return error_set("%s: ignored by git (.gitignore); refusing to commit it", p);
	int e = head_tree ? check_tracked(head_tree, it, flags) : check_unborn(it, flags, st.st_mode);
	if (e < 0)
		return e;
	return check_unchanged(it);
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
