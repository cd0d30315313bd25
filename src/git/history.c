/* History: the subject prefix a file's own commits use (linux: "lp: ", not "char: lp: "). */
#include "git/internal.h"

#include <stdlib.h>
#include <string.h>

/*
 * Does commit C change any of PATHS against its first parent (or, as a
 * root, hold one)? ROOT: C is taken as a root (a shallow clone's boundary).
 */
static int touches(git_commit *c, bool root, const char *const *paths, size_t n, bool *out)
{
	git_tree *t = NULL, *pt = NULL;
	git_commit *p = NULL;
	int rc = -1;
	*out = false;
	if (git_commit_tree(&t, c) < 0 ||
	    (!root && git_commit_parentcount(c) > 0 && (git_commit_parent(&p, c, 0) < 0 || git_commit_tree(&pt, p) < 0))) {
		repo_git_fail("reading the history");
		goto done;
	}
	for (size_t i = 0; i < n && !*out; i++) {
		const git_tree_entry *e = NULL, *pe = NULL;
		git_tree_entry *owned = NULL, *powned = NULL;
		if (git_tree_entry_bypath(&owned, t, paths[i]) == 0)
			e = owned;
		if (pt && git_tree_entry_bypath(&powned, pt, paths[i]) == 0)
			pe = powned;
		*out = (e || pe) && (!e || !pe || !git_oid_equal(git_tree_entry_id(e), git_tree_entry_id(pe)));
		git_tree_entry_free(owned);
		git_tree_entry_free(powned);
	}
	rc = 0;
done:
	git_commit_free(p);
	git_tree_free(pt);
	git_tree_free(t);
	return rc;
}

/*
 * The prefix of SUBJECT: its leading "word: " components, words without
 * spaces ("char: lp: use the new API" -> "char: lp"), or NULL: none, or a
 * merge's or revert's.
 */
static char *subject_prefix(const char *subject)
{
	size_t end = 0;
	if (!subject || strncmp(subject, "Merge ", 6) == 0 || strncmp(subject, "Revert ", 7) == 0)
		return NULL;
	for (const char *p = subject;;) {
		size_t w = strcspn(p, " :\"");
		if (w == 0 || p[w] != ':' || p[w + 1] != ' ')
			break;
		end = (size_t)(p + w - subject);
		p += w + 2;
	}
	return end ? xstrndup(subject, end) : NULL;
}

/* The most common of PREFIXES (most recent first); a tie goes to the most recent. */
static char *most_common(const struct strvec *prefixes)
{
	size_t best = 0, best_count = 0;
	for (size_t i = 0; i < prefixes->len; i++) {
		size_t count = 0;
		for (size_t k = 0; k < prefixes->len; k++)
			count += strcmp(prefixes->items[i], prefixes->items[k]) == 0;
		if (count > best_count) {
			best = i;
			best_count = count;
		}
	}
	return best_count ? xstrdup(prefixes->items[best]) : NULL;
}

void repo_shallow_boundary(git_repository *g, oid_vec *out)
{
	char *path = xasprintf("%sshallow", git_repository_commondir(g)), *text = NULL;
	size_t len = 0;
	if (git_repository_is_shallow(g) == 1 && read_file(path, &text, &len) < 0)
		error_clear(); /* unreadable: the walk then fails at the boundary, saying so */
	for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
		git_oid id;
		if (git_oid_fromstrp(&id, line) == 0)
			vec_push(out, id);
	}
	free(text);
	free(path);
}

bool repo_oid_in(const git_oid *id, const git_oid *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (git_oid_equal(id, &ids[i]))
			return true;
	return false;
}

/*
 * HEAD's first-parent chain, newest first, is walked by hand: a shallow
 * clone's boundary commit is the end of the history (libgit2 1.5 does not
 * know shallow clones, and its revision walk fails there on the missing
 * parent).
 */
int repo_history_prefix(git_repository *g, git_commit *head, const char *const *paths, size_t n, char **out)
{
	struct strvec prefixes = STRVEC_INIT;
	oid_vec boundary = VEC_INIT;
	git_commit *c = NULL;
	int rc = -1;
	size_t seen = 0, walked = 0;
	*out = NULL;
	if (!head)
		return 0; /* unborn: no history */
	repo_shallow_boundary(g, &boundary);
	if (git_commit_dup(&c, head) < 0) {
		repo_git_fail("walking the history");
		goto done;
	}
	while (c && seen < REPO_HISTORY_COMMITS && walked++ < REPO_HISTORY_WALK_MAX) {
		bool root = repo_oid_in(git_commit_id(c), boundary.items, boundary.len), hit = false;
		if (git_commit_parentcount(c) <= 1 && touches(c, root, paths, n, &hit) < 0)
			goto done;
		if (hit) {
			seen++;
			char *p = subject_prefix(git_commit_summary(c));
			if (p)
				vec_push(&prefixes, p);
		}
		git_commit *parent = NULL;
		if (!root && git_commit_parentcount(c) > 0 && git_commit_parent(&parent, c, 0) < 0) {
			repo_git_fail("reading the history");
			goto done;
		}
		git_commit_free(c);
		c = parent;
	}
	*out = most_common(&prefixes);
	rc = 0;
done:
	git_commit_free(c);
	vec_release(&boundary);
	strvec_release(&prefixes);
	return rc;
}
