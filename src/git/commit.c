/* Commit: the planned changes as one commit per file or per directory. */
#include "git/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "git/message.h"
#include "util/writefile.h"

/* The state of one commit run, from the checks to the last commit. */
struct run {
	git_repository *g;
	const struct repo_commit_options *opts;
	git_reference *head;
	git_commit *parent;       /* HEAD, then each commit made; NULL while unborn (nothing is committed then) */
	git_tree *parent_tree;    /* its tree */
	git_signature *author;
	git_signature *sig;   /* the committer: also signs off and writes the reflog, as git does */
	bool unborn, detached, create_branch;
	item_vec items;
	VEC(size_t) group_first;  /* item index opening each group */
	const char *workdir;      /* the work tree's top, where hooks run */
	struct repo_hooks hooks;  /* none with no_verify */
	struct buf hook_log;      /* what the hooks printed */
};
#define RUN_INIT                                                                                             \
	{NULL, NULL, NULL, NULL, NULL, NULL, NULL, false, false, false, VEC_INIT, VEC_INIT, NULL, REPO_HOOKS_INIT, \
	 BUF_INIT}

static void items_release(item_vec *v)
{
	for (size_t i = 0; i < v->len; i++)
		free(v->items[i].rel);
	vec_release(v);
}

static void run_release(struct run *run)
{
	git_reference_free(run->head);
	git_commit_free(run->parent);
	git_tree_free(run->parent_tree);
	git_signature_free(run->author);
	git_signature_free(run->sig);
	items_release(&run->items);
	vec_release(&run->group_first);
	repo_hooks_release(&run->hooks);
	buf_release(&run->hook_log);
}

static void commit_release(struct repo_commit *c)
{
	free(c->subject);
	free(c->message);
	strvec_release(&c->paths);
}

void repo_commit_report_release(struct repo_commit_report *rep)
{
	for (size_t i = 0; i < rep->commits.len; i++)
		commit_release(&rep->commits.items[i]);
	vec_release(&rep->commits);
	strvec_release(&rep->unchanged);
	strvec_release(&rep->skipped);
	strvec_release(&rep->applied);
	free(rep->branch);
	free(rep->hook_output);
	rep->branch = rep->hook_output = NULL;
	rep->base[0] = '\0';
}

/* The directory part of a repository-relative path ("" at the top). */
static size_t dir_len(const char *rel)
{
	const char *slash = strrchr(rel, '/');
	return slash ? (size_t)(slash - rel) : 0;
}

/*
 * HEAD names a branch that does not exist (`ref: refs/heads/nosuch`) while
 * the repository has history: committing there would start an orphan
 * history holding only the rewritten files. Refused; a fresh repository
 * with no reference at all may start its history with our commits.
 */
static int unborn_with_history(git_repository *g)
{
	git_reference_iterator *it = NULL;
	const char *name = NULL;
	int rc = 0;
	if (git_reference_iterator_new(&it, g) < 0)
		return repo_git_fail("listing the references");
	if (git_reference_next_name(&name, it) == 0) {
		git_reference *h = NULL;
		const char *t = git_reference_lookup(&h, g, "HEAD") == 0 &&
				git_reference_type(h) == GIT_REFERENCE_SYMBOLIC ? git_reference_symbolic_target(h) : "?";
		rc = error_set("HEAD points to %s, which does not exist, while the repository has other "
			       "references (%s): check out the branch to port first (git switch BRANCH)", t, name);
		git_reference_free(h);
	}
	git_reference_iterator_free(it);
	return rc;
}

/*
 * The repository state: not locked, no operation half done, signing not
 * asked for, HEAD readable, the branch option and an identity usable; the
 * hooks to run found.
 */
static int check_state(struct run *run, struct repo_commit_report *out)
{
	git_repository *g = run->g;
	if (repo_check_unlocked(g) < 0 || repo_check_idle(g) < 0 || repo_check_signing(g, run->opts->no_gpg_sign) < 0)
		return -1;
	run->unborn = git_repository_head_unborn(g) == 1;
	run->detached = git_repository_head_detached(g) == 1;
	if (run->detached && !run->opts->branch)
		return error_set("HEAD is detached; give a branch name (--branch NAME) to commit on a new branch");
	if (!run->unborn) {
		if (git_repository_head(&run->head, g) < 0 ||
		    git_reference_peel((git_object **)&run->parent, run->head, GIT_OBJECT_COMMIT) < 0 ||
		    git_commit_tree(&run->parent_tree, run->parent) < 0)
			return repo_git_fail("reading HEAD");
		git_oid_tostr(out->base, sizeof out->base, git_commit_id(run->parent));
	} else if (unborn_with_history(g) < 0) {
		return -1; /* otherwise every file is refused (repo_check_item()), as it has no commit */
	}
	if (run->opts->branch &&
	    repo_check_branch(g, run->opts->branch, run->opts->force, run->unborn, &run->create_branch) < 0)
		return -1;
	if (repo_identity(g, REPO_AUTHOR, &run->author) < 0 || repo_identity(g, REPO_COMMITTER, &run->sig) < 0)
		return -1;
	return run->opts->no_verify ? 0 : repo_hooks_find(g, run->workdir, &run->hooks);
}

/* The changes to commit as checked items; the others listed in out->unchanged. */
static int collect_items(struct repo *r, struct run *run, const struct file_change *changes, size_t n,
			 struct repo_commit_report *out)
{
	for (size_t i = 0; i < n; i++) {
		const struct file_change *c = &changes[i];
		if (c->error || !c->new_text ||
		    (c->new_len == c->old_len && memcmp(c->new_text, c->old_text, c->old_len) == 0)) {
			strvec_push(&out->unchanged, c->path);
			continue;
		}
		struct item it = {c, NULL, 0, 0, false};
		if (repo_relpath(r, c->path, &it.rel) < 0)
			return -1;
		vec_push(&run->items, it);
		int e = repo_check_item(r, run->unborn ? NULL : run->parent_tree, &run->items.items[run->items.len - 1]);
		if (e == REPO_EDIRTY && run->opts->skip_dirty) {
			strvec_push(&out->skipped, c->path);
			free(run->items.items[--run->items.len].rel);
			continue;
		}
		if (e < 0)
			return -1;
		if (run->items.items[run->items.len - 1].applied)
			strvec_push(&out->applied, c->path);
		for (size_t k = 0; k + 1 < run->items.len; k++)
			if (strcmp(run->items.items[k].rel, it.rel) == 0)
				return error_set("%s: given twice", c->path);
	}
	return 0;
}

static void merge_array_groups(struct run *run);

/* Assigns each item its group, groups numbered in order of first appearance. */
static void plan_groups(struct run *run)
{
	item_vec *items = &run->items;
	for (size_t i = 0; i < items->len; i++) {
		struct item *it = &items->items[i];
		size_t gi = run->group_first.len;
		if (run->opts->group == REPO_GROUP_DIR)
			for (size_t k = 0; k < run->group_first.len; k++) {
				const char *other = items->items[run->group_first.items[k]].rel;
				size_t dl = dir_len(it->rel);
				if (dir_len(other) == dl && strncmp(other, it->rel, dl) == 0) {
					gi = k;
					break;
				}
			}
		if (gi == run->group_first.len)
			vec_push(&run->group_first, i);
		it->group = gi;
	}
	merge_array_groups(run);
}

/* Do changes A and B both convert one shared per-CPU array (finding.array)? */
static bool share_array(const struct file_change *a, const struct file_change *b)
{
	for (size_t i = 0; i < a->fixed.len; i++)
		for (size_t k = 0; a->fixed.items[i]->array && k < b->fixed.len; k++)
			if (b->fixed.items[k]->array && strcmp(a->fixed.items[i]->array, b->fixed.items[k]->array) == 0)
				return true;
	return false;
}

/*
 * The files of one shared per-CPU array build only together (its
 * definition, DECLARE_PER_CPU in a header, the uses): their groups become
 * one commit, numbered again in order of first appearance.
 */
static void merge_array_groups(struct run *run)
{
	item_vec *items = &run->items;
	bool merged = false;
	for (size_t i = 0; i < items->len; i++)
		for (size_t j = i + 1; j < items->len; j++) {
			size_t gi = items->items[i].group, gj = items->items[j].group;
			if (gi == gj || !share_array(items->items[i].change, items->items[j].change))
				continue;
			size_t keep = gi < gj ? gi : gj, drop = gi < gj ? gj : gi;
			for (size_t k = 0; k < items->len; k++)
				if (items->items[k].group == drop)
					items->items[k].group = keep;
			merged = true;
		}
	if (!merged)
		return;
	size_t *map = xmalloc(run->group_first.len * sizeof *map);
	for (size_t g = 0; g < run->group_first.len; g++)
		map[g] = SIZE_MAX;
	run->group_first.len = 0;
	for (size_t i = 0; i < items->len; i++) {
		size_t g = items->items[i].group;
		if (map[g] == SIZE_MAX) {
			map[g] = run->group_first.len;
			vec_push(&run->group_first, i);
		}
		items->items[i].group = map[g];
	}
	free(map);
}

/* The length of the leading ": "-separated components of A[0..len) that B shares. */
static size_t common_components(const char *a, const char *b, size_t len)
{
	size_t keep = 0;
	for (size_t k = 0;; k++) {
		bool a_end = k == len || (a[k] == ':' && a[k + 1] == ' ');
		bool b_end = b[k] == '\0' || (b[k] == ':' && b[k + 1] == ' ');
		if (a_end && b_end)
			keep = k;
		if (k == len || b[k] == '\0' || a[k] != b[k])
			return keep;
	}
}

/*
 * The subject prefix of a commit of PATHS[0..n) learned from history: each
 * file's own (repo_history_prefix(), else its path's), then, for several
 * files, the leading components they all share. *OUT NULL: nothing learned
 * (message_build() derives it from the paths).
 */
static int group_prefix(struct run *run, const char *const *paths, size_t n, char **out)
{
	struct strvec prefixes = STRVEC_INIT;
	bool any = false;
	*out = NULL;
	for (size_t i = 0; i < n; i++) {
		char *p = NULL;
		if (repo_history_prefix(run->g, run->parent, &paths[i], 1, &p) < 0) {
			strvec_release(&prefixes);
			return -1;
		}
		any |= p != NULL;
		vec_push(&prefixes, p ? p : message_prefix(paths[i]));
	}
	if (any) {
		/* the leading ": "-separated components common to all; none shared: the paths' prefix */
		const char *first = prefixes.items[0];
		size_t len = strlen(first);
		for (size_t i = 1; i < prefixes.len; i++)
			len = common_components(first, prefixes.items[i], len);
		*out = len ? xstrndup(first, len) : NULL;
	}
	strvec_release(&prefixes);
	return 0;
}

/*
 * One report entry per group: its paths and its message. The subject
 * prefix: --prefix, else the one the files' own history uses, else the
 * path-derived one (message_build()).
 */
static int plan_messages(struct run *run, struct repo_commit_report *out)
{
	char *signoff = run->opts->signoff ? xasprintf("%s <%s>", run->sig->name, run->sig->email) : NULL;
	struct message_options mo = {run->opts->prefix, signoff};
	int rc = 0;
	for (size_t gi = 0; gi < run->group_first.len && rc == 0; gi++) {
		VEC(const struct file_change *) gc = VEC_INIT;
		VEC(const char *) gp = VEC_INIT;
		struct repo_commit c = {"", NULL, NULL, STRVEC_INIT};
		for (size_t i = 0; i < run->items.len; i++) {
			const struct item *it = &run->items.items[i];
			if (it->group == gi) {
				vec_push(&gc, it->change);
				vec_push(&gp, it->rel);
				strvec_push(&c.paths, it->rel);
			}
		}
		char *learned = NULL;
		/* the files of one shared per-CPU array: the commit is named after it */
		const char *array = NULL;
		for (size_t i = 0; i < gc.len && gc.len > 1 && !array; i++)
			for (size_t k = 0; k < gc.items[i]->fixed.len && !array; k++)
				array = gc.items[i]->fixed.items[k]->array;
		if (!run->opts->prefix && array)
			mo.prefix = learned = xstrdup(array);
		else if (!run->opts->prefix && (rc = group_prefix(run, gp.items, gp.len, &learned)) == 0)
			mo.prefix = learned;
		if (rc == 0) {
			c.message = message_build(gc.items, gp.items, gc.len, &mo);
			c.subject = xstrndup(c.message, strcspn(c.message, "\n"));
			vec_push(&out->commits, c);
		} else {
			strvec_release(&c.paths);
		}
		mo.prefix = run->opts->prefix;
		free(learned);
		vec_release(&gc);
		vec_release(&gp);
	}
	free(signoff);
	return rc;
}

/*
 * The branch the commits go on: --branch NAME, else the one HEAD names.
 * *OUT is owned. Also fills out->branch.
 */
static int target_ref(struct run *run, struct repo_commit_report *out, char **ref)
{
	if (run->opts->branch) {
		*ref = xasprintf("refs/heads/%s", run->opts->branch);
		out->branch = xstrdup(run->opts->branch);
		return 0;
	}
	git_reference *h = NULL;
	if (git_reference_lookup(&h, run->g, "HEAD") < 0 || git_reference_type(h) != GIT_REFERENCE_SYMBOLIC) {
		git_reference_free(h);
		return error_set("HEAD is not a branch; give a branch name (--branch NAME)");
	}
	const char *t = git_reference_symbolic_target(h);
	*ref = xstrdup(t);
	out->branch = xstrdup(strncmp(t, "refs/heads/", 11) == 0 ? t + 11 : t);
	git_reference_free(h);
	return 0;
}

/* A blob of TEXT as `git add` would store the file REL (through its filters). */
static int blob_of(git_repository *g, const char *rel, const char *text, size_t len, git_oid *id)
{
	git_filter_list *fl = NULL;
	git_buf b = GIT_BUF_INIT;
	int rc = -1;
	if (git_filter_list_load(&fl, g, NULL, rel, GIT_FILTER_TO_ODB, GIT_FILTER_DEFAULT) < 0)
		return repo_git_fail(rel);
	if (fl ? git_filter_list_apply_to_buffer(&b, fl, text, len) < 0 ||
			 git_blob_create_from_buffer(id, g, b.ptr, b.size) < 0
	       : git_blob_create_from_buffer(id, g, text, len) < 0) {
		repo_git_fail(rel);
		goto done;
	}
	rc = 0;
done:
	git_buf_dispose(&b);
	git_filter_list_free(fl);
	return rc;
}

typedef VEC(git_tree_update) update_vec;

/*
 * Makes the commit C of one group on top of run->parent from the new texts
 * in memory, as objects only: no ref, file or index moves. The hooks run
 * between its tree and the commit (the commit-msg hook may edit
 * C->message). Advances run->parent; C->id is set.
 */
static int build_group(struct run *run, size_t group, struct repo_commit *c, git_oid *out)
{
	git_repository *g = run->g;
	update_vec updates = VEC_INIT;
	git_tree *tree = NULL;
	git_commit *commit = NULL;
	git_oid tree_id;
	int rc = -1;
	for (size_t i = 0; i < run->items.len; i++) {
		const struct item *it = &run->items.items[i];
		if (it->group != group)
			continue;
		git_tree_update u = {GIT_TREE_UPDATE_UPSERT, {{0}}, it->mode, it->rel};
		if (blob_of(g, it->rel, it->change->new_text, it->change->new_len, &u.id) < 0)
			goto done;
		vec_push(&updates, u);
	}
	if (git_tree_create_updated(&tree_id, g, run->parent_tree, updates.len, updates.items) < 0 ||
	    git_tree_lookup(&tree, g, &tree_id) < 0) {
		repo_git_fail("building the commit's tree");
		goto done;
	}
	if (repo_hooks_run(&run->hooks, g, run->workdir, tree, &c->message, &run->hook_log) < 0)
		goto done;
	free(c->subject);
	c->subject = xstrndup(c->message, strcspn(c->message, "\n"));
	const git_commit *parents[1] = {run->parent};
	if (git_commit_create(out, g, NULL, run->author, run->sig, NULL, c->message, tree, 1, parents) < 0 ||
	    git_commit_lookup(&commit, g, out) < 0) {
		repo_git_fail("creating the commit");
		goto done;
	}
	git_oid_tostr(c->id, sizeof c->id, out);
	git_commit_free(run->parent);
	git_tree_free(run->parent_tree);
	run->parent = commit;
	run->parent_tree = tree;
	commit = NULL;
	tree = NULL;
	rc = 0;
done:
	vec_release(&updates);
	git_tree_free(tree);
	git_commit_free(commit);
	return rc;
}

/* Puts back the old contents of the first N items' files (after a failed run); applied ones were not written. */
static void restore_files(const item_vec *items, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct file_change *c = items->items[i].change;
		if (items->items[i].applied)
			continue;
		if (writefile_replace(c->path, c->new_text, c->new_len, c->old_text, c->old_len, NULL, false) < 0)
			fprintf(stderr, "%s: error: could not restore the original: %s\n", c->path,
				after_path(error_last(), c->path));
	}
}

/*
 * Writes every item's new text to the work tree (an applied one holds it
 * already); on a failure the written ones are restored.
 */
static int write_files(const item_vec *items)
{
	for (size_t i = 0; i < items->len; i++) {
		const struct file_change *c = items->items[i].change;
		if (items->items[i].applied)
			continue;
		if (writefile_replace(c->path, c->old_text, c->old_len, c->new_text, c->new_len, NULL, false) < 0) {
			char *why = xstrdup(error_last());
			restore_files(items, i);
			error_set("%s; nothing was committed and no file was changed", why);
			free(why);
			return -1;
		}
	}
	return 0;
}

/* Only our paths move in the index: the user's other staged changes stay. */
static int index_update(git_repository *g, const item_vec *items)
{
	git_index *index = NULL;
	int rc = -1;
	if (git_repository_index(&index, g) < 0 || git_index_read(index, 0) < 0) {
		repo_git_fail("reading the index");
		goto done;
	}
	for (size_t i = 0; i < items->len; i++)
		if (git_index_add_bypath(index, items->items[i].rel) < 0) {
			repo_git_fail(items->items[i].rel);
			goto done;
		}
	if (git_index_write(index) < 0) {
		repo_git_fail("writing the index");
		goto done;
	}
	rc = 0;
done:
	git_index_free(index);
	return rc;
}

/*
 * All or nothing: every commit is built as objects first; then the refs
 * are locked (a held lock fails here, before any file is touched), the
 * files written (a failure restores them and moves no ref), and the refs
 * moved in one transaction (a failure restores the files).
 */
static int commit_all(struct run *run, struct repo_commit_report *out)
{
	git_repository *g = run->g;
	git_transaction *tx = NULL;
	char *ref = NULL;
	git_oid base, tip;
	int rc = -1;
	git_oid_cpy(&base, git_commit_id(run->parent));
	for (size_t gi = 0; gi < run->group_first.len; gi++)
		if (build_group(run, gi, &out->commits.items[gi], &tip) < 0)
			goto fail;
	if (target_ref(run, out, &ref) < 0)
		goto fail;
	const char *locks[] = {ref, REPO_BASE_REF, REPO_TIP_REF, run->opts->branch ? "HEAD" : NULL};
	if (git_transaction_new(&tx, g) < 0) {
		repo_git_fail("starting the ref update");
		goto fail;
	}
	for (size_t i = 0; i < ARRAY_SIZE(locks) && locks[i]; i++)
		if (git_transaction_lock_ref(tx, locks[i]) < 0) {
			repo_git_fail(locks[i]);
			goto fail;
		}
	if (git_transaction_set_target(tx, ref, &tip, run->sig, "preemptify: port to the preemptible kernel") < 0 ||
	    git_transaction_set_target(tx, REPO_BASE_REF, &base, run->sig, "preemptify: base of a commit run") < 0 ||
	    git_transaction_set_target(tx, REPO_TIP_REF, &tip, run->sig, "preemptify: commit run") < 0 ||
	    (run->opts->branch && git_transaction_set_symbolic_target(tx, "HEAD", ref, run->sig,
								       "preemptify: switch to the port branch") < 0)) {
		repo_git_fail("preparing the ref update");
		goto fail;
	}
	if (write_files(&run->items) < 0)
		goto fail;
	if (git_transaction_commit(tx) < 0) {
		repo_git_fail("moving the refs");
		char *why = xstrdup(error_last());
		restore_files(&run->items, run->items.len);
		error_set("%s; nothing was committed and the files were restored", why);
		free(why);
		goto fail;
	}
	if (index_update(g, &run->items) < 0) {
		char *why = xstrdup(error_last());
		error_set("committed, but the index was not updated (%s): run git reset -q to match it to HEAD",
			  why);
		free(why);
		goto done; /* the commits stand: keep them in the report */
	}
	rc = 0;
	goto done;
fail:
	while (out->commits.len) /* nothing was made that a user can see */
		commit_release(&out->commits.items[--out->commits.len]);
done:
	git_transaction_free(tx);
	free(ref);
	return rc;
}

int repo_commit_changes(struct repo *r, const struct repo_commit_options *opts,
			const struct file_change *changes, size_t n, struct repo_commit_report *out)
{
	struct repo_commit_options defaults = REPO_COMMIT_OPTIONS_INIT;
	struct run run = RUN_INIT;
	int rc = -1;
	run.g = r->git;
	run.opts = opts ? opts : &defaults;
	run.workdir = repo_workdir(r);

	/* 1. Every check first: nothing is written until all have passed. */
	if (check_state(&run, out) < 0 || collect_items(r, &run, changes, n, out) < 0)
		goto done;
	if (run.items.len == 0) {
		rc = 0; /* nothing to change: no commit, no branch */
		goto done;
	}
	/* 2. Plan the commits: groups in order of first appearance. */
	plan_groups(&run);
	if (plan_messages(&run, out) < 0)
		goto done;
	if (run.opts->dry_run) {
		rc = 0;
		goto done;
	}
	/* 3. Build the commits, then lock the refs, write the files and move the refs. */
	if (commit_all(&run, out) < 0)
		goto done;
	rc = 0;
done:
	if (run.hook_log.len)
		out->hook_output = buf_detach(&run.hook_log);
	run_release(&run);
	return rc;
}
