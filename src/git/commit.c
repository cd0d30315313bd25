/* Commit: the planned changes as one commit per file or per directory. */
#include "git/internal.h"

#include <stdlib.h>
#include <string.h>

#include "git/message.h"
#include "util/writefile.h"

/* The state of one commit run, from the checks to the last commit. */
struct run {
	git_repository *g;
	const struct repo_commit_options *opts;
	git_reference *head;
	git_commit *parent;       /* HEAD, then each commit made; NULL while unborn */
	git_tree *parent_tree;    /* its tree; the empty tree while unborn */
	git_signature *sig;
	bool unborn, detached, create_branch;
	item_vec items;
	VEC(size_t) group_first;  /* item index opening each group */
};
#define RUN_INIT {NULL, NULL, NULL, NULL, NULL, NULL, false, false, false, VEC_INIT, VEC_INIT}

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
	git_signature_free(run->sig);
	items_release(&run->items);
	vec_release(&run->group_first);
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
	free(rep->branch);
	rep->branch = NULL;
	rep->base[0] = '\0';
}

/* The directory part of a repository-relative path ("" at the top). */
static size_t dir_len(const char *rel)
{
	const char *slash = strrchr(rel, '/');
	return slash ? (size_t)(slash - rel) : 0;
}

/* Makes an empty tree, the parent tree of a first commit. */
static int empty_tree(git_repository *g, git_tree **out)
{
	git_treebuilder *tb = NULL;
	git_oid id;
	int rc = -1;
	if (git_treebuilder_new(&tb, g, NULL) < 0 || git_treebuilder_write(&id, tb) < 0 ||
	    git_tree_lookup(out, g, &id) < 0) {
		repo_git_fail("empty tree");
		goto done;
	}
	rc = 0;
done:
	git_treebuilder_free(tb);
	return rc;
}

/* The repository state: not locked, HEAD readable, the branch option and an identity usable. */
static int check_state(struct run *run, struct repo_commit_report *out)
{
	git_repository *g = run->g;
	if (repo_check_unlocked(g) < 0)
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
	} else if (empty_tree(g, &run->parent_tree) < 0) {
		return -1;
	}
	if (run->opts->branch &&
	    repo_check_branch(g, run->opts->branch, run->opts->force, run->unborn, &run->create_branch) < 0)
		return -1;
	return repo_identity(g, &run->sig);
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
		struct item it = {c, NULL, 0, 0};
		if (repo_relpath(r, c->path, &it.rel) < 0)
			return -1;
		vec_push(&run->items, it);
		if (repo_check_item(r, run->unborn ? NULL : run->parent_tree,
				    &run->items.items[run->items.len - 1]) < 0)
			return -1;
		for (size_t k = 0; k + 1 < run->items.len; k++)
			if (strcmp(run->items.items[k].rel, it.rel) == 0)
				return error_set("%s: given twice", c->path);
	}
	return 0;
}

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
}

/* One report entry per group: its paths and its message. */
static void plan_messages(struct run *run, struct repo_commit_report *out)
{
	char *signoff = run->opts->signoff ? xasprintf("%s <%s>", run->sig->name, run->sig->email) : NULL;
	struct message_options mo = {run->opts->prefix, signoff};
	for (size_t gi = 0; gi < run->group_first.len; gi++) {
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
		c.message = message_build(gc.items, gp.items, gc.len, &mo);
		c.subject = xstrndup(c.message, strcspn(c.message, "\n"));
		vec_push(&out->commits, c);
		vec_release(&gc);
		vec_release(&gp);
	}
	free(signoff);
}

/* Creates (or resets) and checks out the --branch, or notes the current branch. */
static int switch_branch(struct run *run, struct repo_commit_report *out)
{
	git_repository *g = run->g;
	const char *branch = run->opts->branch;
	if (!branch) {
		git_reference *h = NULL;
		if (!run->detached && git_reference_lookup(&h, g, "HEAD") == 0 &&
		    git_reference_type(h) == GIT_REFERENCE_SYMBOLIC) {
			const char *t = git_reference_symbolic_target(h);
			out->branch = xstrdup(strncmp(t, "refs/heads/", 11) == 0 ? t + 11 : t);
		}
		git_reference_free(h);
		return 0;
	}
	git_reference *newref = NULL;
	char *refname = xasprintf("refs/heads/%s", branch);
	int rc = -1;
	if (run->create_branch && !run->unborn &&
	    git_branch_create(&newref, g, branch, run->parent, run->opts->force) < 0) {
		repo_git_fail(branch);
		goto done;
	}
	if (git_repository_set_head(g, refname) < 0) {
		repo_git_fail(refname);
		goto done;
	}
	out->branch = xstrdup(branch);
	rc = 0;
done:
	git_reference_free(newref);
	free(refname);
	return rc;
}

static void delete_ref(git_repository *g, const char *name)
{
	git_reference *ref = NULL;
	if (git_reference_lookup(&ref, g, name) == 0)
		git_reference_delete(ref);
	git_reference_free(ref);
}

/* Points REF at ID; -1 with the error slot set on failure. */
static int set_ref(git_repository *g, const char *ref, const git_oid *id, const char *log)
{
	git_reference *tmp = NULL;
	int rc = git_reference_create(&tmp, g, ref, id, 1, log) < 0 ? repo_git_fail(ref) : 0;
	git_reference_free(tmp);
	return rc;
}

/* Records the run's base (REPO_BASE_REF) and forgets the last run's tip. */
static int record_base(struct run *run)
{
	delete_ref(run->g, REPO_TIP_REF);
	if (run->unborn) {
		delete_ref(run->g, REPO_BASE_REF);
		return 0;
	}
	return set_ref(run->g, REPO_BASE_REF, git_commit_id(run->parent), "preemptify: base of a commit run");
}

typedef VEC(git_tree_update) update_vec;

/* Writes GROUP's files and stores them as blobs: the tree updates, in *UPDATES. */
static int write_group(git_repository *g, const item_vec *items, size_t group, update_vec *updates)
{
	for (size_t i = 0; i < items->len; i++) {
		const struct item *it = &items->items[i];
		if (it->group != group)
			continue;
		/* atomic, mode kept, and refused if the file changed since it was read */
		if (writefile_replace(it->change->path, it->change->old_text, it->change->old_len,
				      it->change->new_text, it->change->new_len, NULL) < 0)
			return -1;
		git_tree_update u = {GIT_TREE_UPDATE_UPSERT, {{0}}, it->mode, it->rel};
		/* Through the repository's filters, as git add would store it. */
		if (git_blob_create_from_workdir(&u.id, g, it->rel) < 0)
			return repo_git_fail(it->change->path);
		vec_push(updates, u);
	}
	return 0;
}

/* Only our paths move in the index: the user's other staged changes stay. */
static int index_update(git_index *index, const git_tree_update *updates, size_t n)
{
	if (git_index_read(index, 0) < 0)
		return repo_git_fail("reading the index");
	for (size_t i = 0; i < n; i++)
		if (git_index_add_bypath(index, updates[i].path) < 0)
			return repo_git_fail(updates[i].path);
	if (git_index_write(index) < 0)
		return repo_git_fail("writing the index");
	return 0;
}

/* Makes the commit of one group on top of run->parent (NULL: root commit) and advances it. */
static int commit_group(struct run *run, git_index *index, size_t group, const char *message, git_oid *out)
{
	git_repository *g = run->g;
	update_vec updates = VEC_INIT;
	git_tree *tree = NULL;
	git_commit *commit = NULL;
	git_oid tree_id;
	int rc = -1;
	if (write_group(g, &run->items, group, &updates) < 0)
		goto done;
	if (git_tree_create_updated(&tree_id, g, run->parent_tree, updates.len, updates.items) < 0 ||
	    git_tree_lookup(&tree, g, &tree_id) < 0) {
		repo_git_fail("building the commit's tree");
		goto done;
	}
	const git_commit *parents[1] = {run->parent};
	if (git_commit_create(out, g, "HEAD", run->sig, run->sig, NULL, message, tree, run->parent ? 1 : 0,
			      parents) < 0) {
		repo_git_fail("creating the commit");
		goto done;
	}
	if (index_update(index, updates.items, updates.len) < 0)
		goto done;
	if (git_commit_lookup(&commit, g, out) < 0) {
		repo_git_fail("reading the new commit");
		goto done;
	}
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

/* One commit per planned report entry, each recorded as REPO_TIP_REF. */
static int commit_all(struct run *run, struct repo_commit_report *out)
{
	git_index *index = NULL;
	int rc = -1;
	if (git_repository_index(&index, run->g) < 0) {
		repo_git_fail("opening the index");
		goto done;
	}
	for (size_t gi = 0; gi < run->group_first.len; gi++) {
		struct repo_commit *c = &out->commits.items[gi];
		git_oid id;
		if (commit_group(run, index, gi, c->message, &id) < 0) {
			/* Later entries were never made: drop them from the report. */
			while (out->commits.len > gi)
				commit_release(&out->commits.items[--out->commits.len]);
			goto done;
		}
		git_oid_tostr(c->id, sizeof c->id, &id);
		if (set_ref(run->g, REPO_TIP_REF, &id, "preemptify: commit run") < 0)
			goto done;
	}
	rc = 0;
done:
	git_index_free(index);
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

	/* 1. Every check first: nothing is written until all have passed. */
	if (check_state(&run, out) < 0 || collect_items(r, &run, changes, n, out) < 0)
		goto done;
	if (run.items.len == 0) {
		rc = 0; /* nothing to change: no commit, no branch */
		goto done;
	}
	/* 2. Plan the commits: groups in order of first appearance. */
	plan_groups(&run);
	plan_messages(&run, out);
	if (run.opts->dry_run) {
		rc = 0;
		goto done;
	}
	/* 3. Write: branch, run record, then one commit per group. */
	if (switch_branch(&run, out) < 0 || record_base(&run) < 0 || commit_all(&run, out) < 0)
		goto done;
	rc = 0;
done:
	run_release(&run);
	return rc;
}
