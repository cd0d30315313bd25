/* realpath() is XSI. */
#define _XOPEN_SOURCE 700

#include "git/repo.h"
#include "util/writefile.h"
#include "git/message.h"

#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct repo {
	git_repository *git;
	char *workdir; /* resolved (realpath), with a trailing '/' */
};

/* Sets the error slot from libgit2's last error, prefixed by WHAT. */
static int git_fail(const char *what)
{
	const git_error *e = git_error_last();
	return error_set("%s: %s", what, e && e->message ? e->message : "libgit2 error");
}

static char *oid_hex(const git_oid *id)
{
	char hex[GIT_OID_HEXSZ + 1];
	git_oid_tostr(hex, sizeof hex, id);
	return xstrdup(hex);
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
	if (S_ISDIR(st.st_mode)) {
		dir = xstrdup(path);
	} else {
		const char *slash = strrchr(path, '/');
		dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
	}
	if (git_repository_open_ext(&g, dir, 0, NULL) < 0) {
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

int repo_group_parse(const char *s)
{
	if (strcmp(s, "file") == 0)
		return REPO_GROUP_FILE;
	if (strcmp(s, "dir") == 0)
		return REPO_GROUP_DIR;
	return -1;
}

/*
 * PATH (relative to the current directory, or absolute) as a path relative
 * to the working tree. The directory is resolved, the last component kept,
 * so a symlinked file is judged by where it is, not where it points.
 */
static int relpath(const struct repo *r, const char *path, char **out)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
	const char *base = slash ? slash + 1 : path;
	char *real = realpath(dir, NULL);
	int rc = -1;
	if (!real) {
		error_set("%s: %s", path, strerror(errno));
		goto done;
	}
	char *full = strcmp(real, "/") == 0 ? xasprintf("/%s", base) : xasprintf("%s/%s", real, base);
	size_t wl = strlen(r->workdir);
	if (strncmp(full, r->workdir, wl) != 0 || !full[wl] || !*base) {
		error_set("%s: not a file inside the repository at %s", path, r->workdir);
		free(full);
		goto done;
	}
	if (strncmp(full + wl, ".git/", 5) == 0) {
		error_set("%s: inside the .git directory", path);
		free(full);
		goto done;
	}
	*out = xstrdup(full + wl);
	free(full);
	rc = 0;
done:
	free(dir);
	free(real);
	return rc;
}

/* One file to commit. */
struct item {
	const struct file_change *change;
	char *rel;            /* repository-relative path */
	git_filemode_t mode;  /* blob or blob-executable */
	size_t group;
};

typedef VEC(struct item) item_vec;

static void items_free(item_vec *v)
{
	for (size_t i = 0; i < v->len; i++)
		free(v->items[i].rel);
	vec_free(v);
}

/*
 * Refuses anything we could not commit cleanly: a path with uncommitted
 * changes, untracked (once HEAD exists), not a regular file, or whose
 * contents are no longer what the rewrite read.
 */
static int check_item(struct repo *r, git_tree *head_tree, struct item *it)
{
	unsigned flags = 0;
	const char *p = it->change->path;
	git_tree_entry *ent = NULL;
	char *text = NULL;
	size_t len = 0;
	int rc = -1;
	struct stat st;
	if (lstat(p, &st) < 0) {
		error_set("%s: %s", p, strerror(errno));
		goto done;
	}
	if (!S_ISREG(st.st_mode)) {
		error_set("%s: not a regular file; refusing to commit it", p);
		goto done;
	}
	if (git_status_file(&flags, r->git, it->rel) < 0) {
		git_fail(p);
		goto done;
	}
	if (flags & GIT_STATUS_IGNORED) {
		error_set("%s: ignored by git (.gitignore); refusing to commit it", p);
		goto done;
	}
	if (head_tree) {
		if (flags & GIT_STATUS_WT_NEW) {
			error_set("%s: not tracked by git; add and commit it first, preemptify commits only its own changes", p);
			goto done;
		}
		if (flags != GIT_STATUS_CURRENT) {
			error_set("%s: has uncommitted changes (%s); commit or stash them first, "
				  "preemptify never mixes its changes with yours", p,
				  flags & (GIT_STATUS_INDEX_NEW | GIT_STATUS_INDEX_MODIFIED | GIT_STATUS_INDEX_DELETED |
					  GIT_STATUS_INDEX_RENAMED | GIT_STATUS_INDEX_TYPECHANGE) ? "staged" : "in the working tree");
			goto done;
		}
		if (git_tree_entry_bypath(&ent, head_tree, it->rel) < 0) {
			git_fail(p);
			goto done;
		}
		it->mode = git_tree_entry_filemode(ent);
		if (it->mode != GIT_FILEMODE_BLOB && it->mode != GIT_FILEMODE_BLOB_EXECUTABLE) {
			error_set("%s: not a regular file in HEAD; refusing to commit it", p);
			goto done;
		}
	} else {
		/* Unborn HEAD: the file is new either way; it must not differ between index and worktree. */
		if (flags != GIT_STATUS_WT_NEW && flags != GIT_STATUS_INDEX_NEW) {
			error_set("%s: has unstaged changes on top of staged ones; commit or stash them first", p);
			goto done;
		}
		it->mode = st.st_mode & 0111 ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
	}
	if (read_file(p, &text, &len) < 0)
		goto done;
	if (len != it->change->old_len || memcmp(text, it->change->old_text, len) != 0) {
		error_set("%s: changed since it was read; run preemptify again", p);
		goto done;
	}
	rc = 0;
done:
	git_tree_entry_free(ent);
	free(text);
	return rc;
}

static void commit_entry_free(struct repo_commit *c)
{
	free(c->subject);
	free(c->message);
	for (size_t i = 0; i < c->paths.len; i++)
		free(c->paths.items[i]);
	vec_free(&c->paths);
}

void repo_commit_report_free(struct repo_commit_report *rep)
{
	for (size_t i = 0; i < rep->commits.len; i++)
		commit_entry_free(&rep->commits.items[i]);
	vec_free(&rep->commits);
	for (size_t i = 0; i < rep->unchanged.len; i++)
		free(rep->unchanged.items[i]);
	vec_free(&rep->unchanged);
	free(rep->branch);
	rep->branch = NULL;
	rep->base[0] = '\0';
}

static int identity(git_repository *g, git_signature **out)
{
	if (git_signature_default(out, g) < 0)
		return error_set("no identity to commit with: set one with "
				 "git config user.name \"Your Name\" and "
				 "git config user.email you@example.com");
	return 0;
}

/* The directory part of a repository-relative path ("" at the top). */
static size_t dir_len(const char *rel)
{
	const char *slash = strrchr(rel, '/');
	return slash ? (size_t)(slash - rel) : 0;
}

/* Checks the branch option; sets *create when it must be created (or reset). */
static int check_branch(git_repository *g, const char *branch, bool force, bool unborn, bool *create)
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
		git_fail(branch);
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

/* Makes an empty tree, the parent tree of a first commit. */
static int empty_tree(git_repository *g, git_tree **out)
{
	git_treebuilder *tb = NULL;
	git_oid id;
	int rc = -1;
	if (git_treebuilder_new(&tb, g, NULL) < 0 || git_treebuilder_write(&id, tb) < 0 ||
	    git_tree_lookup(out, g, &id) < 0) {
		git_fail("empty tree");
		goto done;
	}
	rc = 0;
done:
	git_treebuilder_free(tb);
	return rc;
}

/* Makes the commit of one group on top of *PARENT (NULL: root commit); advances *PARENT. */
static int commit_group(git_repository *g, git_index *index, const git_signature *sig,
			item_vec *items, size_t group, const char *message,
			git_commit **parent, git_tree **parent_tree, git_oid *out)
{
	VEC(git_tree_update) updates = VEC_INIT;
	git_tree *tree = NULL;
	git_commit *commit = NULL;
	git_oid tree_id;
	int rc = -1;
	for (size_t i = 0; i < items->len; i++) {
		struct item *it = &items->items[i];
		if (it->group != group)
			continue;
		/* atomic, mode kept, and refused if the file changed since it was read */
		if (writefile_replace(it->change->path, it->change->old_text, it->change->old_len,
				      it->change->new_text, it->change->new_len, NULL) < 0)
			goto done;
		git_tree_update u = {GIT_TREE_UPDATE_UPSERT, {{0}}, it->mode, it->rel};
		/* Through the repository's filters, as git add would store it. */
		if (git_blob_create_from_workdir(&u.id, g, it->rel) < 0) {
			git_fail(it->change->path);
			goto done;
		}
		vec_push(&updates, u);
	}
	if (git_tree_create_updated(&tree_id, g, *parent_tree, updates.len, updates.items) < 0 ||
	    git_tree_lookup(&tree, g, &tree_id) < 0) {
		git_fail("building the commit's tree");
		goto done;
	}
	const git_commit *parents[1] = {*parent};
	if (git_commit_create(out, g, "HEAD", sig, sig, NULL, message, tree, *parent ? 1 : 0, parents) < 0) {
		git_fail("creating the commit");
		goto done;
	}
	/* Only our paths move in the index: the user's other staged changes stay. */
	if (git_index_read(index, 0) < 0) {
		git_fail("reading the index");
		goto done;
	}
	for (size_t i = 0; i < updates.len; i++)
		if (git_index_add_bypath(index, updates.items[i].path) < 0) {
			git_fail(updates.items[i].path);
			goto done;
		}
	if (git_index_write(index) < 0) {
		git_fail("writing the index");
		goto done;
	}
	if (git_commit_lookup(&commit, g, out) < 0) {
		git_fail("reading the new commit");
		goto done;
	}
	git_commit_free(*parent);
	git_tree_free(*parent_tree);
	*parent = commit;
	*parent_tree = tree;
	commit = NULL;
	tree = NULL;
	rc = 0;
done:
	vec_free(&updates);
	git_tree_free(tree);
	git_commit_free(commit);
	return rc;
}

int repo_commit_changes(struct repo *r, const struct repo_commit_options *opts,
			const struct file_change *changes, size_t n, struct repo_commit_report *out)
{
	git_repository *g = r->git;
	git_reference *head = NULL, *newref = NULL;
	git_commit *parent = NULL;
	git_tree *parent_tree = NULL;
	git_signature *sig = NULL;
	git_index *index = NULL;
	item_vec items = VEC_INIT;
	VEC(size_t) group_first = VEC_INIT; /* item index opening each group */
	char *lockpath = NULL, *signoff = NULL, *refname = NULL;
	int rc = -1;
	struct repo_commit_options defaults = REPO_COMMIT_OPTIONS_INIT;
	if (!opts)
		opts = &defaults;

	/* 1. Every check first: nothing is written until all have passed. */
	lockpath = xasprintf("%sindex.lock", git_repository_path(g));
	if (access(lockpath, F_OK) == 0) {
		error_set("%s exists: another git process is running, or one crashed "
			  "(remove the file if no git process is running)", lockpath);
		goto done;
	}
	bool unborn = git_repository_head_unborn(g) == 1;
	bool detached = git_repository_head_detached(g) == 1;
	if (detached && !opts->branch) {
		error_set("HEAD is detached; give a branch name (--branch NAME) to commit on a new branch");
		goto done;
	}
	if (!unborn) {
		if (git_repository_head(&head, g) < 0 ||
		    git_reference_peel((git_object **)&parent, head, GIT_OBJECT_COMMIT) < 0 ||
		    git_commit_tree(&parent_tree, parent) < 0) {
			git_fail("reading HEAD");
			goto done;
		}
		git_oid_tostr(out->base, sizeof out->base, git_commit_id(parent));
	} else if (empty_tree(g, &parent_tree) < 0) {
		goto done;
	}
	bool create_branch = false;
	if (opts->branch && check_branch(g, opts->branch, opts->force, unborn, &create_branch) < 0)
		goto done;
	if (identity(g, &sig) < 0)
		goto done;
	for (size_t i = 0; i < n; i++) {
		const struct file_change *c = &changes[i];
		if (c->error || !c->new_text ||
		    (c->new_len == c->old_len && memcmp(c->new_text, c->old_text, c->old_len) == 0)) {
			vec_push(&out->unchanged, xstrdup(c->path));
			continue;
		}
		struct item it = {c, NULL, 0, 0};
		if (relpath(r, c->path, &it.rel) < 0)
			goto done;
		vec_push(&items, it);
		if (check_item(r, unborn ? NULL : parent_tree, &items.items[items.len - 1]) < 0)
			goto done;
		for (size_t k = 0; k + 1 < items.len; k++)
			if (strcmp(items.items[k].rel, it.rel) == 0) {
				error_set("%s: given twice", c->path);
				goto done;
			}
	}
	if (items.len == 0) {
		rc = 0; /* nothing to change: no commit, no branch */
		goto done;
	}

	/* 2. Plan the commits: groups in order of first appearance. */
	for (size_t i = 0; i < items.len; i++) {
		struct item *it = &items.items[i];
		size_t gi = group_first.len;
		if (opts->group == REPO_GROUP_DIR)
			for (size_t k = 0; k < group_first.len; k++) {
				const char *other = items.items[group_first.items[k]].rel;
				size_t dl = dir_len(it->rel);
				if (dir_len(other) == dl && strncmp(other, it->rel, dl) == 0) {
					gi = k;
					break;
				}
			}
		if (gi == group_first.len)
			vec_push(&group_first, i);
		it->group = gi;
	}
	if (opts->signoff)
		signoff = xasprintf("%s <%s>", sig->name, sig->email);
	struct message_options mo = {opts->prefix, signoff};
	for (size_t gi = 0; gi < group_first.len; gi++) {
		VEC(const struct file_change *) gc = VEC_INIT;
		VEC(const char *) gp = VEC_INIT;
		struct repo_commit c = {"", NULL, NULL, VEC_INIT};
		for (size_t i = 0; i < items.len; i++)
			if (items.items[i].group == gi) {
				vec_push(&gc, items.items[i].change);
				vec_push(&gp, items.items[i].rel);
				vec_push(&c.paths, xstrdup(items.items[i].rel));
			}
		c.message = message_build(gc.items, gp.items, gc.len, &mo);
		c.subject = xstrndup(c.message, strcspn(c.message, "\n"));
		vec_push(&out->commits, c);
		vec_free(&gc);
		vec_free(&gp);
	}
	if (opts->dry_run) {
		rc = 0;
		goto done;
	}

	/* 3. Write: branch, run record, then one commit per group. */
	if (opts->branch) {
		refname = xasprintf("refs/heads/%s", opts->branch);
		if (create_branch && !unborn &&
		    git_branch_create(&newref, g, opts->branch, parent, opts->force) < 0) {
			git_fail(opts->branch);
			goto done;
		}
		if (git_repository_set_head(g, refname) < 0) {
			git_fail(refname);
			goto done;
		}
		out->branch = xstrdup(opts->branch);
	} else if (!detached) {
		git_reference *h = NULL;
		if (git_reference_lookup(&h, g, "HEAD") == 0 && git_reference_type(h) == GIT_REFERENCE_SYMBOLIC) {
			const char *t = git_reference_symbolic_target(h);
			out->branch = xstrdup(strncmp(t, "refs/heads/", 11) == 0 ? t + 11 : t);
		}
		git_reference_free(h);
	}
	git_reference *tmp = NULL;
	if (git_reference_lookup(&tmp, g, REPO_TIP_REF) == 0)
		git_reference_delete(tmp);
	git_reference_free(tmp);
	tmp = NULL;
	if (unborn) {
		if (git_reference_lookup(&tmp, g, REPO_BASE_REF) == 0)
			git_reference_delete(tmp);
	} else if (git_reference_create(&tmp, g, REPO_BASE_REF, git_commit_id(parent), 1,
					"preemptify: base of a commit run") < 0) {
		git_fail(REPO_BASE_REF);
		goto done;
	}
	git_reference_free(tmp);
	tmp = NULL;
	if (git_repository_index(&index, g) < 0) {
		git_fail("opening the index");
		goto done;
	}
	for (size_t gi = 0; gi < group_first.len; gi++) {
		struct repo_commit *c = &out->commits.items[gi];
		git_oid id;
		if (commit_group(g, index, sig, &items, gi, c->message, &parent, &parent_tree, &id) < 0) {
			/* Later entries were never made: drop them from the report. */
			while (out->commits.len > gi)
				commit_entry_free(&out->commits.items[--out->commits.len]);
			goto done;
		}
		git_oid_tostr(c->id, sizeof c->id, &id);
		if (git_reference_create(&tmp, g, REPO_TIP_REF, &id, 1, "preemptify: commit run") < 0) {
			git_fail(REPO_TIP_REF);
			goto done;
		}
		git_reference_free(tmp);
		tmp = NULL;
	}
	rc = 0;
done:
	git_reference_free(head);
	git_reference_free(newref);
	git_commit_free(parent);
	git_tree_free(parent_tree);
	git_signature_free(sig);
	git_index_free(index);
	items_free(&items);
	vec_free(&group_first);
	free(lockpath);
	free(signoff);
	free(refname);
	return rc;
}

/* ---- series ---- */

void repo_series_report_free(struct repo_series_report *rep)
{
	for (size_t i = 0; i < rep->files.len; i++)
		free(rep->files.items[i]);
	vec_free(&rep->files);
	rep->patches = 0;
}

/* mkdir -p */
static int make_dirs(const char *path)
{
	char *p = xstrdup(path);
	int rc = 0;
	for (char *s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, 0777) < 0 && errno != EEXIST) {
				rc = error_set("%s: cannot create: %s", p, strerror(errno));
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	struct stat st;
	if (rc == 0 && (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)))
		rc = error_set("%s: not a directory", path);
	free(p);
	return rc;
}

/* A file name from a subject, as format-patch makes them: 0003-net-foo-use-yield.patch */
static char *patch_name(size_t num, const char *subject)
{
	struct buf b = BUF_INIT;
	buf_printf(&b, "%04zu-", num);
	size_t start = b.len;
	bool dash = false;
	for (const char *p = subject; *p && b.len - start < 52; p++) {
		char ch = *p;
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
			  ch == '_' || ch == '.';
		if (ok) {
			if (dash && b.len > start)
				buf_putc(&b, '-');
			dash = false;
			buf_putc(&b, ch);
		} else {
			dash = true;
		}
	}
	while (b.len > start && b.ptr[b.len - 1] == '.')
		b.ptr[--b.len] = '\0';
	buf_puts(&b, ".patch");
	return buf_detach(&b);
}

/* Resolves RANGE (see repo_series()) to the commits to hide and the tip. */
static int series_range(git_repository *g, const char *range, git_oid *from, bool *has_from, git_oid *to)
{
	git_reference *ref = NULL;
	git_revspec spec = {NULL, NULL, 0};
	int rc = -1;
	*has_from = false;
	if (!range) {
		if (git_reference_lookup(&ref, g, REPO_TIP_REF) < 0) {
			error_set("no commit run recorded in this repository; give a range (A..B)");
			goto done;
		}
		git_reference_free(ref);
		ref = NULL;
		if (git_reference_name_to_id(from, g, REPO_BASE_REF) == 0)
			*has_from = true;
		if (git_reference_name_to_id(to, g, "HEAD") < 0) {
			git_fail("HEAD");
			goto done;
		}
		rc = 0;
		goto done;
	}
	if (strstr(range, "...")) {
		error_set("%s: symmetric ranges (A...B) are not supported; use A..B", range);
		goto done;
	}
	if (git_revparse(&spec, g, range) < 0) {
		git_fail(range);
		goto done;
	}
	if (spec.flags & GIT_REVSPEC_SINGLE) {
		git_oid_cpy(from, git_object_id(spec.from));
		*has_from = true;
		if (git_reference_name_to_id(to, g, "HEAD") < 0) {
			git_fail("HEAD");
			goto done;
		}
	} else {
		if (spec.from) {
			git_oid_cpy(from, git_object_id(spec.from));
			*has_from = true;
		}
		if (spec.to)
			git_oid_cpy(to, git_object_id(spec.to));
		else if (git_reference_name_to_id(to, g, "HEAD") < 0) {
			git_fail("HEAD");
			goto done;
		}
	}
	rc = 0;
done:
	git_object_free(spec.from);
	git_object_free(spec.to);
	git_reference_free(ref);
	return rc;
}

/* The body of COMMIT (after the summary), with a Signed-off-by added when asked and missing. */
static char *patch_body(const git_commit *commit, const char *signoff)
{
	const char *body = git_commit_body((git_commit *)commit);
	struct buf b = BUF_INIT;
	if (body)
		buf_puts(&b, body);
	while (b.len && b.ptr[b.len - 1] == '\n')
		b.ptr[--b.len] = '\0';
	if (signoff) {
		char *line = xasprintf("Signed-off-by: %s", signoff);
		if (!strstr(buf_cstr(&b), line))
			buf_printf(&b, "%s%s", b.len ? "\n\n" : "", line);
		free(line);
	}
	if (b.len)
		buf_putc(&b, '\n');
	return buf_detach(&b);
}

static int commit_trees(git_repository *g, git_commit *c, git_tree **parent_tree, git_tree **tree)
{
	git_commit *p = NULL;
	if (git_commit_tree(tree, c) < 0)
		return git_fail("reading a commit's tree");
	if (git_commit_parentcount(c) == 0) {
		*parent_tree = NULL;
		return 0;
	}
	int rc = git_commit_parent(&p, c, 0) < 0 || git_commit_tree(parent_tree, p) < 0 ? -1 : 0;
	git_commit_free(p);
	(void)g;
	return rc < 0 ? git_fail("reading a parent's tree") : 0;
}

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

int repo_series(struct repo *r, const struct repo_series_options *opts, const char *range,
		const char *outdir, struct repo_series_report *out)
{
	git_repository *g = r->git;
	git_revwalk *walk = NULL;
	git_signature *sig = NULL;
	git_diff *diff = NULL;
	git_diff_stats *stats = NULL;
	git_tree *first_parent_tree = NULL, *last_tree = NULL;
	git_buf mail = GIT_BUF_INIT, statbuf = GIT_BUF_INIT;
	VEC(git_oid) ids = VEC_INIT;
	struct buf cover = BUF_INIT, shortlog = BUF_INIT;
	char *signoff = NULL, *path = NULL, *body = NULL;
	struct message_sites sites = {{0}, {0}};
	int rc = -1;
	struct repo_series_options defaults = REPO_SERIES_OPTIONS_INIT;
	if (!opts)
		opts = &defaults;
	const char *prefix = opts->subject_prefix ? opts->subject_prefix : "PATCH";

	git_oid from, to, id;
	bool has_from;
	if (series_range(g, range, &from, &has_from, &to) < 0)
		goto done;
	if (git_revwalk_new(&walk, g) < 0 || git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE) < 0 ||
	    git_revwalk_push(walk, &to) < 0 || (has_from && git_revwalk_hide(walk, &from) < 0)) {
		git_fail("walking the range");
		goto done;
	}
	int e;
	while ((e = git_revwalk_next(&id, walk)) == 0)
		vec_push(&ids, id);
	if (e != GIT_ITEROVER) {
		git_fail("walking the range");
		goto done;
	}
	if (ids.len == 0) {
		error_set("%s: no commits in the range", range ? range : "the last commit run");
		goto done;
	}
	if (opts->signoff || opts->cover_letter) {
		if (identity(g, &sig) < 0)
			goto done;
		signoff = xasprintf("%s <%s>", sig->name, sig->email);
	}
	if (make_dirs(outdir) < 0)
		goto done;
	if (opts->cover_letter)
		vec_push(&out->files, xasprintf("%s/0000-cover-letter.patch", outdir));

	for (size_t i = 0; i < ids.len; i++) {
		git_commit *c = NULL;
		git_tree *pt = NULL, *t = NULL;
		int ok = -1;
		if (git_commit_lookup(&c, g, &ids.items[i]) < 0) {
			git_fail("reading a commit");
			goto next;
		}
		if (git_commit_parentcount(c) > 1) {
			char *hex = oid_hex(&ids.items[i]);
			error_set("%s is a merge commit; a patch series cannot contain merges", hex);
			free(hex);
			goto next;
		}
		if (commit_trees(g, c, &pt, &t) < 0)
			goto next;
		/* GIT_EMAIL_CREATE_OPTIONS_INIT, spelled out (its braces trip -Wextra) */
		git_email_create_options eo;
		memset(&eo, 0, sizeof eo);
		eo.version = GIT_EMAIL_CREATE_OPTIONS_VERSION;
		git_diff_options_init(&eo.diff_opts, GIT_DIFF_OPTIONS_VERSION);
		eo.diff_opts.flags = GIT_DIFF_SHOW_BINARY;
		git_diff_find_options_init(&eo.diff_find_opts, GIT_DIFF_FIND_OPTIONS_VERSION);
		eo.subject_prefix = prefix;
		if (opts->cover_letter)
			eo.flags |= GIT_EMAIL_CREATE_ALWAYS_NUMBER;
		git_diff_free(diff);
		diff = NULL;
		if (git_diff_tree_to_tree(&diff, g, pt, t, &eo.diff_opts) < 0) {
			git_fail("diffing a commit");
			goto next;
		}
		free(body);
		body = patch_body(c, opts->signoff ? signoff : NULL);
		git_buf_dispose(&mail);
		if (git_email_create_from_diff(&mail, diff, i + 1, ids.len, &ids.items[i], git_commit_summary(c),
					       body, git_commit_author(c), &eo) < 0) {
			git_fail("formatting a patch");
			goto next;
		}
		char *name = patch_name(i + 1, git_commit_summary(c));
		free(path);
		path = xasprintf("%s/%s", outdir, name);
		free(name);
		if (write_file(path, mail.ptr, mail.size) < 0)
			goto next;
		vec_push(&out->files, xstrdup(path));
		message_count_sites(git_commit_message(c), &sites);
		buf_printf(&shortlog, "  %s\n", git_commit_summary(c));
		if (i == 0) {
			first_parent_tree = pt;
			pt = NULL;
		}
		if (i + 1 == ids.len) {
			last_tree = t;
			t = NULL;
		}
		ok = 0;
next:
		git_tree_free(pt);
		git_tree_free(t);
		git_commit_free(c);
		if (ok < 0)
			goto done;
	}
	out->patches = ids.len;
	if (!opts->cover_letter) {
		rc = 0;
		goto done;
	}

	/* The cover letter: what the series does, per rule, and its diffstat. */
	git_diff_free(diff);
	diff = NULL;
	if (git_diff_tree_to_tree(&diff, g, first_parent_tree, last_tree, NULL) < 0 ||
	    git_diff_get_stats(&stats, diff) < 0 ||
	    git_diff_stats_to_buf(&statbuf, stats, GIT_DIFF_STATS_FULL | GIT_DIFF_STATS_INCLUDE_SUMMARY, 72) < 0) {
		git_fail("diffstat");
		goto done;
	}
	size_t nfiles = git_diff_num_deltas(diff);
	buf_printf(&cover, "From %s Mon Sep 17 00:00:00 2001\n", "0000000000000000000000000000000000000000");
	buf_printf(&cover, "From: %s\n", signoff);
	cover_date(&cover);
	buf_printf(&cover, "Subject: [%s%s0/%zu] make %zu file%s preempt-safe for 2.6\n\n", prefix,
		   prefix[0] ? " " : "", ids.len, nfiles, nfiles == 1 ? "" : "s");
	buf_printf(&cover, "This series ports %zu file%s to the 2.6 preemptible kernel, one\n"
		   "commit per change. The changes were found and made by preemptify.\n\n",
		   nfiles, nfiles == 1 ? "" : "s");
	buf_puts(&cover, "Files:\n");
	for (size_t i = 0; i < nfiles; i++)
		buf_printf(&cover, "  %s\n", git_diff_get_delta(diff, i)->new_file.path);
	for (int pass = 0; pass < 2; pass++) {
		const size_t *counts = pass == 0 ? sites.fixed : sites.refused;
		size_t total = 0;
		for (int k = 0; k < RULE_COUNT; k++)
			total += counts[k];
		buf_printf(&cover, "\n%s %zu\n", pass == 0 ? "Sites changed:" : "Sites left unchanged for manual review:",
			   total);
		for (int k = 0; k < RULE_COUNT; k++)
			if (counts[k])
				buf_printf(&cover, "  %s %-17s %zu\n", rule_code((enum rule_id)k),
					   rule_name((enum rule_id)k), counts[k]);
	}
	buf_printf(&cover, "\n%s (%zu):\n%s\n", sig->name, ids.len, buf_cstr(&shortlog));
	buf_add(&cover, statbuf.ptr, statbuf.size);
	buf_printf(&cover, "\n-- \npreemptify %s\n\n", PREEMPTIFY_VERSION);
	if (write_file(out->files.items[0], cover.ptr, cover.len) < 0)
		goto done;
	rc = 0;
done:
	git_revwalk_free(walk);
	git_signature_free(sig);
	git_diff_stats_free(stats);
	git_diff_free(diff);
	git_tree_free(first_parent_tree);
	git_tree_free(last_tree);
	git_buf_dispose(&mail);
	git_buf_dispose(&statbuf);
	vec_free(&ids);
	buf_free(&cover);
	buf_free(&shortlog);
	free(signoff);
	free(path);
	free(body);
	return rc;
}
