/* Series: commits as a numbered mbox patch series with a cover letter. */
#define _GNU_SOURCE /* memmem */
#include "git/series.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>


void repo_series_report_release(struct repo_series_report *rep)
{
	strvec_release(&rep->files);
	rep->patches = 0;
	for (size_t i = 0; i < rep->parts.len; i++) {
		free(rep->parts.items[i].subsystem);
		free(rep->parts.items[i].dir);
	}
	vec_release(&rep->parts);
	rep->unsigned_patches = 0;
}

/* (An existing regular file is replaced with FORCE; a link or anything else is still refused.) */
int series_write_file(const char *path, const char *data, size_t len, bool force)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd < 0 && errno == EEXIST) {
		struct stat st;
		if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			return error_set("%s: is a symbolic link; not written through", path);
		if (!force)
			return error_set("%s: exists; not overwritten (--force replaces it)", path);
		if (!S_ISREG(st.st_mode) || unlink(path) != 0)
			return error_set("%s: exists and cannot be replaced", path);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	}
	if (fd < 0)
		return error_set("%s: cannot create: %s", path, strerror(errno));
	int rc = 0;
	for (size_t off = 0; off < len && rc == 0;) {
		ssize_t w = write(fd, data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			rc = error_set("%s: cannot write: %s", path, strerror(errno));
		else
			off += (size_t)w;
	}
	if (close(fd) != 0 && rc == 0)
		rc = error_set("%s: cannot write: %s", path, strerror(errno));
	if (rc != 0)
		unlink(path);
	return rc;
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

/*
 * A file name from a subject, as format-patch makes them: 0003-net-foo-use-yield.patch,
 * v2-0003-net-foo-use-yield.patch with a reroll count of 2.
 */
static char *patch_name(int reroll, size_t num, const char *subject)
{
	struct buf b = BUF_INIT;
	if (reroll > 0)
		buf_printf(&b, "v%d-", reroll);
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
			rc = REPO_EUSAGE;
			goto done;
		}
		git_reference_free(ref);
		ref = NULL;
		if (git_reference_name_to_id(from, g, REPO_BASE_REF) == 0)
			*has_from = true;
		if (git_reference_name_to_id(to, g, "HEAD") < 0) {
			repo_git_fail("HEAD");
			goto done;
		}
		rc = 0;
		goto done;
	}
	if (strstr(range, "...")) {
		error_set("%s: symmetric ranges (A...B) are not supported; use A..B", range);
		rc = REPO_EUSAGE;
		goto done;
	}
	if (git_revparse(&spec, g, range) < 0) {
		repo_git_fail(range);
		goto done;
	}
	if (spec.flags & GIT_REVSPEC_SINGLE) {
		git_oid_cpy(from, git_object_id(spec.from));
		*has_from = true;
		if (git_reference_name_to_id(to, g, "HEAD") < 0) {
			repo_git_fail("HEAD");
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
			repo_git_fail("HEAD");
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
		return repo_git_fail("reading a commit's tree");
	if (git_commit_parentcount(c) == 0) {
		*parent_tree = NULL;
		return 0;
	}
	int rc = git_commit_parent(&p, c, 0) < 0 || git_commit_tree(parent_tree, p) < 0 ? -1 : 0;
	git_commit_free(p);
	(void)g;
	return rc < 0 ? repo_git_fail("reading a parent's tree") : 0;
}

void series_part_reset(struct series *s)
{
	s->outdir = NULL;
	s->subsystem = NULL;
	buf_release(&s->extra);
	buf_release(&s->shortlog);
	git_tree_free(s->first_parent_tree);
	git_tree_free(s->last_tree);
	s->first_parent_tree = s->last_tree = NULL;
	strvec_release(&s->paths);
	strvec_release(&s->all_to);
	strvec_release(&s->all_cc);
}

static void series_release(struct series *s)
{
	series_part_reset(s);
	vec_release(&s->ids);
	free(s->prefix);
	free(s->headers);
	free(s->trailer);
	git_signature_free(s->sig);
	free(s->signoff);
	free(s->note);
	series_cc_release(&s->maint);
}

static char *address_headers(const struct repo_series_options *o);

static void push_once(struct strvec *all, const char *str)
{
	for (size_t k = 0; k < all->len; k++)
		if (strcmp(all->items[k], str) == 0)
			return;
	strvec_push(all, str);
}

static void add_all(struct strvec *all, const struct strvec *v)
{
	for (size_t i = 0; i < v->len; i++)
		push_once(all, v->items[i]);
}

/*
 * The To: and Cc: lines of one patch beyond the series' own: what --to-cmd
 * and --cc-cmd print for the patch file PATH, and the maintainers of the
 * files of DIFF. NULL when there are none. 0, or -1 (error slot set).
 */
static int patch_addresses(struct series *s, const char *path, git_diff *diff, char **out)
{
	struct strvec to = STRVEC_INIT, cc = STRVEC_INIT, files = STRVEC_INIT;
	int rc = -1;
	*out = NULL;
	if ((s->opts->to_cmd && series_cc_run(s->opts->to_cmd, path, s->workdir, &to) < 0) ||
	    (s->opts->cc_cmd && series_cc_run(s->opts->cc_cmd, path, s->workdir, &cc) < 0))
		goto done;
	if (s->opts->cc_from_maintainers) {
		for (size_t i = 0; i < git_diff_num_deltas(diff); i++)
			strvec_push(&files, git_diff_get_delta(diff, i)->new_file.path);
		series_cc_maintainers(&s->maint, (const char *const *)files.items, files.len, &cc);
	}
	add_all(&s->all_to, &to);
	add_all(&s->all_cc, &cc);
	if (to.len || cc.len) {
		struct repo_series_options o = *s->opts;
		struct buf b = BUF_INIT;
		o.to = to.items, o.nto = to.len, o.cc = cc.items, o.ncc = cc.len;
		buf_puts(&b, s->headers);
		char *more = address_headers(&o);
		buf_puts(&b, more);
		free(more);
		*out = buf_detach(&b);
	}
	rc = 0;
done:
	strvec_release(&to);
	strvec_release(&cc);
	strvec_release(&files);
	return rc;
}

/* Refuses commit ID when it is a merge: a series cannot hold one. Found before anything is written. */
static int refuse_merge(git_repository *g, const git_oid *id)
{
	git_commit *c = NULL;
	if (git_commit_lookup(&c, g, id) < 0)
		return repo_git_fail("reading a commit");
	unsigned parents = git_commit_parentcount(c);
	git_commit_free(c);
	if (parents > 1)
		return error_set("%s is a merge commit; a patch series cannot contain merges, so nothing was written "
				 "(give a range without merges)", git_oid_tostr_s(id));
	return 0;
}

/* Every commit reachable from FROM that this clone holds, into OUT (a shallow clone's history ends early). */
static int reachable_held(git_repository *g, const git_oid *from, oid_vec *out)
{
	oid_vec todo = VEC_INIT;
	int rc = 0;
	vec_push(&todo, *from);
	while (todo.len && rc == 0) {
		git_oid id = todo.items[--todo.len];
		git_commit *c = NULL;
		if (repo_oid_in(&id, out->items, out->len))
			continue;
		int e = git_commit_lookup(&c, g, &id);
		if (e == GIT_ENOTFOUND)
			continue; /* beyond the boundary */
		if (e < 0) {
			rc = repo_git_fail("reading a commit");
			break;
		}
		vec_push(out, id);
		for (unsigned i = 0; i < git_commit_parentcount(c); i++)
			vec_push(&todo, *git_commit_parent_id(c, i));
		git_commit_free(c);
	}
	vec_release(&todo);
	return rc;
}

/*
 * The range in a shallow clone, where libgit2 1.5's revision walk fails on
 * the boundary's missing parents: TO's first parents, newest first, until a
 * commit FROM reaches, a root, or the boundary (the end of the history).
 * Any merge on the way is refused.
 */
static int shallow_range(struct series *s, const git_oid *from, bool has_from, const git_oid *to)
{
	oid_vec hidden = VEC_INIT, boundary = VEC_INIT;
	git_oid id = *to;
	int rc = has_from ? reachable_held(s->g, from, &hidden) : 0;
	repo_shallow_boundary(s->g, &boundary);
	while (rc == 0 && !repo_oid_in(&id, hidden.items, hidden.len)) {
		git_commit *c = NULL;
		if ((rc = refuse_merge(s->g, &id)) < 0)
			break;
		if (git_commit_lookup(&c, s->g, &id) < 0) {
			rc = repo_git_fail("reading a commit");
			break;
		}
		vec_push(&s->ids, id);
		bool end = git_commit_parentcount(c) == 0 || repo_oid_in(&id, boundary.items, boundary.len);
		if (!end)
			id = *git_commit_parent_id(c, 0);
		git_commit_free(c);
		if (end)
			break;
	}
	for (size_t i = 0; i < s->ids.len / 2; i++) { /* oldest first */
		git_oid t = s->ids.items[i];
		s->ids.items[i] = s->ids.items[s->ids.len - 1 - i];
		s->ids.items[s->ids.len - 1 - i] = t;
	}
	vec_release(&hidden);
	vec_release(&boundary);
	return rc;
}

/* The range by libgit2's revision walk, oldest first; a merge in it is refused. */
static int walked_range(struct series *s, const git_oid *from, bool has_from, const git_oid *to)
{
	git_revwalk *walk = NULL;
	git_oid id;
	int rc = -1, e;
	if (git_revwalk_new(&walk, s->g) < 0 ||
	    git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE) < 0 ||
	    git_revwalk_push(walk, to) < 0 || (has_from && git_revwalk_hide(walk, from) < 0)) {
		repo_git_fail("walking the range");
		goto done;
	}
	while ((e = git_revwalk_next(&id, walk)) == 0) {
		if (refuse_merge(s->g, &id) < 0)
			goto done;
		vec_push(&s->ids, id);
	}
	if (e != GIT_ITEROVER) {
		repo_git_fail("walking the range");
		goto done;
	}
	rc = 0;
done:
	git_revwalk_free(walk);
	return rc;
}

/* The commits of RANGE (see repo_series()) into s->ids; an empty range is an error. */
static int series_commits(struct series *s, const char *range)
{
	git_oid from, to;
	bool has_from;
	int rc = series_range(s->g, range, &from, &has_from, &to);
	if (rc < 0)
		return rc;
	if (git_repository_is_shallow(s->g) == 1 ? shallow_range(s, &from, has_from, &to) < 0
						  : walked_range(s, &from, has_from, &to) < 0)
		return -1;
	if (s->ids.len == 0)
		return error_set("%s: no commits in the range", range ? range : "the last commit run");
	return 0;
}

/* GIT_EMAIL_CREATE_OPTIONS_INIT, spelled out (its braces trip -Wextra) */
static void email_options(git_email_create_options *eo, const char *prefix, bool always_number)
{
	memset(eo, 0, sizeof *eo);
	eo->version = GIT_EMAIL_CREATE_OPTIONS_VERSION;
	git_diff_options_init(&eo->diff_opts, GIT_DIFF_OPTIONS_VERSION);
	eo->diff_opts.flags = GIT_DIFF_SHOW_BINARY;
	git_diff_find_options_init(&eo->diff_find_opts, GIT_DIFF_FIND_OPTIONS_VERSION);
	eo->subject_prefix = prefix;
	if (always_number)
		eo->flags |= GIT_EMAIL_CREATE_ALWAYS_NUMBER;
}

/*
 * MAIL (LEN bytes) as git writes it: HEADERS (To:, Cc:) after the last
 * header line, TRAILER (or NULL) before the signature after a blank line,
 * and the signature itself: libgit2 ends a patch with "--\nlibgit2 1.5.1",
 * where git writes "-- \n<version>" (the space makes mail clients see a
 * signature). Returns an owned copy.
 */
static char *mail_fixup(const char *mail, size_t len, const char *headers, const char *trailer)
{
	static const char sig[] = "\n--\nlibgit2 ";
	const char *at = NULL;
	for (const char *p = mail; (p = memmem(p, len - (size_t)(p - mail), sig, sizeof sig - 1)) != NULL; p++)
		at = p;
	const char *hend = memmem(mail, len, "\n\n", 2);
	size_t hlen = hend ? (size_t)(hend - mail) + 1 : 0; /* the header lines, with their newline */
	struct buf b = BUF_INIT;
	buf_add(&b, mail, hlen);
	buf_puts(&b, headers);
	if (!at || at < mail + hlen) {
		buf_add(&b, mail + hlen, len - hlen);
		return buf_detach(&b);
	}
	const char *eol = memchr(at + sizeof sig - 1, '\n', len - (size_t)(at + sizeof sig - 1 - mail));
	const char *rest = eol ? eol : mail + len;
	buf_add(&b, mail + hlen, (size_t)(at - mail) - hlen);
	buf_putc(&b, '\n');
	if (trailer)
		buf_printf(&b, "\n%s", trailer);
	buf_printf(&b, "-- \npreemptify %s", PREEMPTIFY_VERSION);
	buf_add(&b, rest, (size_t)(mail + len - rest));
	return buf_detach(&b);
}

void series_address_header(struct buf *b, const char *name, char *const *addrs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		buf_printf(b, "%s%s%s\n", i ? "    " : name, addrs[i], i + 1 < n ? "," : "");
}

static char *address_headers(const struct repo_series_options *o)
{
	struct buf b = BUF_INIT;
	series_address_header(&b, "To: ", o->to, o->nto);
	series_address_header(&b, "Cc: ", o->cc, o->ncc);
	return buf_detach(&b);
}

/* The patch id of commit C against its first parent (git patch-id --stable). */
static int commit_patch_id(git_repository *g, git_commit *c, git_oid *out)
{
	git_tree *pt = NULL, *t = NULL;
	git_diff *diff = NULL;
	int rc = commit_trees(g, c, &pt, &t);
	if (rc == 0 && (git_diff_tree_to_tree(&diff, g, pt, t, NULL) < 0 || git_diff_patchid(out, diff, NULL) < 0))
		rc = repo_git_fail("patch id");
	git_diff_free(diff);
	git_tree_free(pt);
	git_tree_free(t);
	return rc;
}

/*
 * With opts->base: s->trailer, "base-commit: <id>\n" and a
 * "prerequisite-patch-id: <id>\n" per commit between the base and the
 * first commit's parent (newest first, as git lists them). The base must be
 * an ancestor of the series' first commit.
 */
static int series_base(struct series *s)
{
	git_object *obj = NULL;
	git_commit *first = NULL, *c = NULL;
	git_revwalk *walk = NULL;
	struct buf b = BUF_INIT;
	git_oid base, id;
	int rc = REPO_EUSAGE, e;
	if (!s->opts->base)
		return 0;
	if (git_revparse_single(&obj, s->g, s->opts->base) < 0) {
		repo_git_fail(s->opts->base);
		goto done;
	}
	git_object *peeled = NULL;
	if (git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) < 0) {
		error_set("%s: not a commit", s->opts->base);
		goto done;
	}
	git_oid_cpy(&base, git_object_id(peeled));
	git_object_free(peeled);
	rc = -1;
	if (git_commit_lookup(&first, s->g, &s->ids.items[0]) < 0) {
		repo_git_fail("reading a commit");
		goto done;
	}
	const git_oid *parent = git_commit_parentcount(first) ? git_commit_parent_id(first, 0) : NULL;
	if (!parent || (!git_oid_equal(parent, &base) && git_graph_descendant_of(s->g, parent, &base) != 1)) {
		error_set("--base %s: not an ancestor of the series' first commit", s->opts->base);
		rc = REPO_EUSAGE;
		goto done;
	}
	buf_printf(&b, "base-commit: %s\n", git_oid_tostr_s(&base));
	if (git_revwalk_new(&walk, s->g) < 0 || git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL) < 0 ||
	    git_revwalk_push(walk, parent) < 0 || git_revwalk_hide(walk, &base) < 0) {
		repo_git_fail("walking from the base");
		goto done;
	}
	while ((e = git_revwalk_next(&id, walk)) == 0) {
		git_oid pid;
		if (git_commit_lookup(&c, s->g, &id) < 0) {
			repo_git_fail("reading a commit");
			goto done;
		}
		if (git_commit_parentcount(c) <= 1) { /* git skips merges (max_parents = 1) */
			if (commit_patch_id(s->g, c, &pid) < 0)
				goto done;
			buf_printf(&b, "prerequisite-patch-id: %s\n", git_oid_tostr_s(&pid));
		}
		git_commit_free(c);
		c = NULL;
	}
	if (e != GIT_ITEROVER) {
		repo_git_fail("walking from the base");
		goto done;
	}
	s->trailer = buf_detach(&b);
	rc = 0;
done:
	buf_release(&b);
	git_revwalk_free(walk);
	git_commit_free(c);
	git_commit_free(first);
	git_object_free(obj);
	return rc;
}

/* Writes the patch of commit I into out->files; keeps what the cover letter needs. */
static int write_patch(struct series *s, size_t i, struct repo_series_report *out)
{
	const git_oid *id = &s->ids.items[i];
	git_commit *c = NULL;
	git_tree *pt = NULL, *t = NULL;
	git_diff *diff = NULL;
	git_buf mail = GIT_BUF_INIT;
	char *body = NULL, *path = NULL, *fixed = NULL;
	int rc = -1;
	if (git_commit_lookup(&c, s->g, id) < 0) {
		repo_git_fail("reading a commit");
		goto done;
	}
	if (commit_trees(s->g, c, &pt, &t) < 0)
		goto done;
	git_email_create_options eo;
	email_options(&eo, s->prefix, s->opts->cover_letter);
	if (git_diff_tree_to_tree(&diff, s->g, pt, t, &eo.diff_opts) < 0) {
		repo_git_fail("diffing a commit");
		goto done;
	}
	body = patch_body(c, s->opts->signoff ? s->signoff : NULL);
	if (!strstr(body, "\nSigned-off-by: ") && strncmp(body, "Signed-off-by: ", 15) != 0)
		out->unsigned_patches++;
	if (git_email_create_from_diff(&mail, diff, i + 1, s->ids.len, id, git_commit_summary(c),
				       body, git_commit_author(c), &eo) < 0) {
		repo_git_fail("formatting a patch");
		goto done;
	}
	char *name = patch_name(s->opts->reroll_count, i + 1, git_commit_summary(c));
	path = xasprintf("%s/%s", s->outdir, name);
	free(name);
	/* the base-commit block ends the first mail: the cover letter if there is one */
	fixed = mail_fixup(mail.ptr, mail.size, s->headers, i == 0 && !s->opts->cover_letter ? s->trailer : NULL);
	if (series_write_file(path, fixed, strlen(fixed), s->opts->force) < 0)
		goto done;
	char *headers = NULL; /* the address commands read the patch as written, then it gains their lines */
	if (patch_addresses(s, path, diff, &headers) < 0) {
		unlink(path);
		goto done;
	}
	if (headers) {
		free(fixed);
		fixed = mail_fixup(mail.ptr, mail.size, headers, i == 0 && !s->opts->cover_letter ? s->trailer : NULL);
		free(headers);
		if (series_write_file(path, fixed, strlen(fixed), true) < 0)
			goto done;
	}
	vec_push(&out->files, path);
	path = NULL;
	for (size_t k = 0; k < git_diff_num_deltas(diff); k++)
		push_once(&s->paths, git_diff_get_delta(diff, k)->new_file.path);
	/* wrapped as git format-patch wraps its shortlog: 72 columns, indented 2, continued at 4 */
	buf_add_wrapped(&s->shortlog, git_commit_summary(c), "  ", "    ", 72);
	if (i == 0) {
		s->first_parent_tree = pt;
		pt = NULL;
	}
	if (i + 1 == s->ids.len) {
		s->last_tree = t;
		t = NULL;
	}
	rc = 0;
done:
	git_diff_free(diff);
	git_buf_dispose(&mail);
	free(fixed);
	free(body);
	free(path);
	git_tree_free(pt);
	git_tree_free(t);
	git_commit_free(c);
	return rc;
}

void series_read_note(struct series *s)
{
	for (size_t i = s->ids.len; i-- > 0;) {
		char *note = repo_note_read(s->g, &s->ids.items[i]);
		if (note) { /* the newest run's account wins */
			free(s->note);
			s->note = note;
			return;
		}
	}
}

int series_write(struct series *s, const char *outdir, struct repo_series_report *out)
{
	size_t cover = out->files.len;
	s->outdir = outdir;
	if (make_dirs(outdir) < 0)
		return -1;
	if (s->opts->cover_letter && s->opts->reroll_count > 0)
		strvec_pushf(&out->files, "%s/v%d-0000-cover-letter.patch", outdir, s->opts->reroll_count);
	else if (s->opts->cover_letter)
		strvec_pushf(&out->files, "%s/0000-cover-letter.patch", outdir);
	for (size_t i = 0; i < s->ids.len; i++)
		if (write_patch(s, i, out) < 0)
			return -1;
	out->patches += s->ids.len;
	if (s->opts->cover_letter && series_cover_write(s, out->files.items[cover]) < 0)
		return -1;
	return 0;
}

int repo_series(struct repo *r, const struct repo_series_options *opts, const char *range,
		const char *outdir, struct repo_series_report *out)
{
	struct repo_series_options defaults = REPO_SERIES_OPTIONS_INIT;
	struct series s = SERIES_INIT;
	int rc = -1;
	s.g = r->git;
	s.opts = opts ? opts : &defaults;
	const char *prefix = s.opts->subject_prefix ? s.opts->subject_prefix : "PATCH";
	if (s.opts->reroll_count > 0)
		s.prefix = xasprintf("%s%sv%d", prefix, prefix[0] ? " " : "", s.opts->reroll_count);
	else
		s.prefix = xstrdup(prefix);
	s.headers = address_headers(s.opts);
	s.workdir = repo_workdir(r);
	if (s.opts->cc_from_maintainers && series_cc_load(&s.maint, s.workdir) < 0) {
		rc = REPO_EUSAGE;
		goto done;
	}

	if ((rc = series_commits(&s, range)) < 0 || (rc = series_base(&s)) < 0)
		goto done;
	rc = -1;
	if (s.opts->signoff || s.opts->cover_letter) {
		if (repo_identity(s.g, REPO_COMMITTER, &s.sig) < 0)
			goto done;
		s.signoff = xasprintf("%s <%s>", s.sig->name, s.sig->email);
	}
	series_read_note(&s);
	if ((s.opts->split_subsystem ? series_split(&s, outdir, out) : series_write(&s, outdir, out)) < 0)
		goto done;
	rc = 0;
done:
	series_release(&s);
	return rc;
}
