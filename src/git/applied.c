/*
 * Files already applied: after `preemptify apply`, the working tree holds
 * the change commit would make. Commit plans from HEAD's text of those
 * files (put in the source overlay, util/overlay.h) and recognises a file
 * whose working tree is exactly that plan's output; any other working-tree
 * change stays refused (repo_check_item()).
 */
#define _XOPEN_SOURCE 700 /* realpath() */

#include "git/internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/overlay.h"

/* A .c or .h file, the only ones a run reads as sources. */
static bool is_source(const char *rel)
{
	size_t n = strlen(rel);
	return n > 2 && rel[n - 2] == '.' && (rel[n - 1] == 'c' || rel[n - 1] == 'h');
}

/* Is REL at or below one of the repository-relative directories or files UNDER (empty: all)? */
static bool under_any(const char *rel, const struct strvec *under)
{
	if (under->len == 0)
		return true;
	for (size_t i = 0; i < under->len; i++) {
		size_t n = strlen(under->items[i]);
		if (strncmp(rel, under->items[i], n) == 0 && (rel[n] == '\0' || rel[n] == '/'))
			return true;
	}
	return false;
}

/*
 * PATHS as repository-relative prefixes into OUT; none when one of them is
 * the whole working tree. A PATH outside it is left out (the run refuses
 * it later, naming it).
 */
static void path_prefixes(const struct repo *r, const struct strvec *paths, struct strvec *out)
{
	size_t wl = strlen(r->workdir);
	for (size_t i = 0; i < paths->len; i++) {
		char *real = realpath(paths->items[i], NULL);
		if (real && strlen(real) + 1 == wl && strncmp(real, r->workdir, wl - 1) == 0) {
			free(real);
			strvec_release(out);
			return;
		}
		if (real && strncmp(real, r->workdir, wl) == 0 && real[wl])
			strvec_push(out, real + wl);
		free(real);
	}
}

/* Does .gitattributes give REL a conversion libgit2 cannot make (repo.c's check_filters() refuses it)? */
static bool foreign_filter(git_repository *g, const char *rel)
{
	const char *filter = NULL, *enc = NULL;
	return git_attr_get(&filter, g, GIT_ATTR_CHECK_FILE_THEN_INDEX, rel, "filter") < 0 ||
	       git_attr_get(&enc, g, GIT_ATTR_CHECK_FILE_THEN_INDEX, rel, "working-tree-encoding") < 0 ||
	       git_attr_value(filter) == GIT_ATTR_VALUE_STRING || git_attr_value(enc) == GIT_ATTR_VALUE_STRING;
}

/* HEAD's blob of REL as a checkout writes it (eol, ident), into the overlay; 1 added, 0 not a regular file there. */
static int overlay_one(struct repo *r, git_tree *head, const char *rel)
{
	git_tree_entry *ent = NULL;
	git_blob *blob = NULL;
	git_buf text = GIT_BUF_INIT;
	git_blob_filter_options fo;
	char *full = NULL;
	int rc = 0;
	git_blob_filter_options_init(&fo, GIT_BLOB_FILTER_OPTIONS_VERSION);
	if (git_tree_entry_bypath(&ent, head, rel) < 0 ||
	    (git_tree_entry_filemode(ent) != GIT_FILEMODE_BLOB &&
	     git_tree_entry_filemode(ent) != GIT_FILEMODE_BLOB_EXECUTABLE) || foreign_filter(r->git, rel))
		goto done;
	rc = -1;
	if (git_blob_lookup(&blob, r->git, git_tree_entry_id(ent)) < 0 || git_blob_filter(&text, blob, rel, &fo) < 0) {
		repo_git_fail(rel);
		goto done;
	}
	full = xasprintf("%s%s", r->workdir, rel);
	if (overlay_add(full, text.ptr ? text.ptr : "", text.size) < 0)
		goto done;
	rc = 1;
done:
	free(full);
	git_buf_dispose(&text);
	git_blob_free(blob);
	git_tree_entry_free(ent);
	return rc;
}

int repo_overlay_head(struct repo *r, const struct strvec *paths, struct strvec *out)
{
	git_status_options so;
	git_status_list *list = NULL;
	git_commit *head = NULL;
	git_tree *tree = NULL;
	struct strvec under = STRVEC_INIT;
	int rc = -1;
	if (git_repository_head_unborn(r->git) == 1)
		return 0; /* no HEAD text: every file is refused anyway */
	if (git_revparse_single((git_object **)&head, r->git, "HEAD^{commit}") < 0 || git_commit_tree(&tree, head) < 0) {
		repo_git_fail("reading HEAD");
		goto done;
	}
	path_prefixes(r, paths, &under);
	git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
	so.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	so.flags = GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	so.pathspec.strings = under.items;
	so.pathspec.count = under.len;
	if (git_status_list_new(&list, r->git, &so) < 0) {
		repo_git_fail("reading the status");
		goto done;
	}
	for (size_t i = 0; i < git_status_list_entrycount(list); i++) {
		const git_status_entry *e = git_status_byindex(list, i);
		/* the working tree changed, the index did not: what apply leaves */
		if (e->status != GIT_STATUS_WT_MODIFIED || !e->index_to_workdir)
			continue;
		const char *rel = e->index_to_workdir->new_file.path;
		if (!is_source(rel) || !under_any(rel, &under))
			continue;
		int added = overlay_one(r, tree, rel);
		if (added < 0)
			goto done;
		if (added)
			strvec_push(out, rel);
	}
	rc = 0;
done:
	strvec_release(&under);
	git_status_list_free(list);
	git_tree_free(tree);
	git_commit_free(head);
	return rc;
}

/* A text as git add stores the file (through a filter list, when it has one). */
struct stored {
	git_buf b;
	const char *p;
	size_t n;
};

static int to_odb(git_filter_list *fl, const char *rel, const char *text, size_t len, struct stored *out)
{
	out->p = text;
	out->n = len;
	if (!fl)
		return 0;
	if (git_filter_list_apply_to_buffer(&out->b, fl, text, len) < 0)
		return repo_git_fail(rel);
	out->p = out->b.ptr;
	out->n = out->b.size;
	return 0;
}

static bool same(const struct stored *a, const void *p, size_t n)
{
	return a->n == n && (n == 0 || memcmp(a->p, p, n) == 0);
}

/*
 * Does the executable bit of PATH on disk differ from HEAD's MODE, where
 * git looks at it (core.fileMode, default true)? Such a file has a change
 * of the user's beside the text.
 */
static bool mode_changed(git_repository *g, const char *path, git_filemode_t mode)
{
	git_config *cfg = NULL;
	int filemode = 1;
	struct stat st;
	if (git_repository_config_snapshot(&cfg, g) == 0 && git_config_get_bool(&filemode, cfg, "core.filemode") < 0)
		filemode = 1;
	git_config_free(cfg);
	git_error_clear();
	return filemode && stat(path, &st) == 0 && !!(st.st_mode & S_IXUSR) != (mode == GIT_FILEMODE_BLOB_EXECUTABLE);
}

int repo_applied_match(git_repository *g, git_tree *head_tree, const struct item *it)
{
	const struct file_change *c = it->change;
	git_filter_list *fl = NULL;
	git_tree_entry *ent = NULL;
	git_blob *blob = NULL;
	struct stored wt = {GIT_BUF_INIT, NULL, 0}, planned = wt, from = wt;
	char *text = NULL;
	size_t len = 0;
	int rc = -1;
	if (read_file(c->path, &text, &len) < 0)
		goto done;
	if (git_filter_list_load(&fl, g, NULL, it->rel, GIT_FILTER_TO_ODB, GIT_FILTER_DEFAULT) < 0 ||
	    git_tree_entry_bypath(&ent, head_tree, it->rel) < 0 || git_blob_lookup(&blob, g, git_tree_entry_id(ent)) < 0) {
		repo_git_fail(c->path);
		goto done;
	}
	if (to_odb(fl, it->rel, text, len, &wt) < 0 || to_odb(fl, it->rel, c->new_text, c->new_len, &planned) < 0 ||
	    to_odb(fl, it->rel, c->old_text, c->old_len, &from) < 0)
		goto done;
	/* planned from HEAD's text, and the working tree is what that plan makes, nothing else */
	rc = !mode_changed(g, c->path, git_tree_entry_filemode(ent)) && same(&from, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob)) && same(&planned, wt.p, wt.n);
done:
	git_buf_dispose(&wt.b);
	git_buf_dispose(&planned.b);
	git_buf_dispose(&from.b);
	git_blob_free(blob);
	git_tree_entry_free(ent);
	git_filter_list_free(fl);
	free(text);
	return rc;
}
