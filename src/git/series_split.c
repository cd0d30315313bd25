/*
 * Series: --split-by subsystem. One series per subsystem, for a run that
 * touched several: each goes to its own maintainers, numbered on its own,
 * with its own cover letter. A commit belongs to the subsystem of its first
 * file (commits are one per file, but a per-CPU array shared across
 * directories is converted in one commit); the cover letter names the files
 * it changes elsewhere. The run's note is shared out by the files of its
 * hand-work lines. Series that change a common file are not independent:
 * the later one's cover letter says which series it must follow.
 */
#include "git/series.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *repo_subsystem(const char *path)
{
	static const char *const grouping[] = {"drivers", "net", "arch", "fs"};
	size_t first = strcspn(path, "/");
	if (!path[first])
		return xstrdup(path); /* a file at the top */
	for (size_t i = 0; i < sizeof grouping / sizeof grouping[0]; i++) {
		if (strlen(grouping[i]) != first || strncmp(path, grouping[i], first) != 0)
			continue;
		const char *next = path + first + 1;
		size_t second = strcspn(next, "/");
		if (next[second]) /* a directory below: drivers/net/... */
			return xstrndup(path, first + 1 + second);
	}
	return xstrndup(path, first);
}

/* A directory name for SUBSYSTEM: '/' and anything but [A-Za-z0-9._+-] as '-', no leading '.' or '-'. */
static char *dir_name(const char *subsystem)
{
	char *d = xstrdup(subsystem);
	for (char *p = d; *p; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
			  c == '_' || c == '+' || c == '-';
		if (!ok)
			*p = '-';
	}
	if (d[0] == '.' || d[0] == '-' || !d[0]) {
		char *u = xasprintf("_%s", d);
		free(d);
		d = u;
	}
	return d;
}

/* One subsystem's series. */
struct group {
	char *subsystem;
	char *dir;           /* under the output directory */
	oid_vec ids;         /* its commits, in the range's order */
	struct buf extra;    /* what its cover letter says of the other series */
	struct buf left;     /* the hand-work lines of the run's note in its files */
	size_t nleft;
	struct strvec after; /* "the drivers/char series (include/linux/x.h)": series it must follow */
	struct strvec also;  /* "(summary) also changes ...: a, b." for patch number ALSO_AT[i] */
	VEC(size_t) also_at;
};

struct split {
	struct series *s;
	VEC(struct group) groups;    /* by subsystem name; those past ncommitted hold hand work only */
	size_t ncommitted;
	struct strvec owner_path;    /* each file changed in the range ... */
	VEC(size_t) owner;           /* ... and the group whose commit changed it first */
	git_tree *tip;               /* the range's last tree, where the note's files are found */
	struct strvec tree_paths;    /* every file of TIP, read when a note's path is not found as it is */
	char *head;                  /* the note's first paragraph (the run's counts), or NULL */
	size_t run_left;             /* hand-work lines in the note */
};
#define SPLIT_INIT {NULL, VEC_INIT, 0, STRVEC_INIT, VEC_INIT, NULL, STRVEC_INIT, NULL, 0}

static void split_release(struct split *sp)
{
	for (size_t i = 0; i < sp->groups.len; i++) {
		struct group *g = &sp->groups.items[i];
		free(g->subsystem);
		free(g->dir);
		vec_release(&g->ids);
		buf_release(&g->extra);
		buf_release(&g->left);
		strvec_release(&g->after);
		strvec_release(&g->also);
		vec_release(&g->also_at);
	}
	vec_release(&sp->groups);
	strvec_release(&sp->owner_path);
	vec_release(&sp->owner);
	git_tree_free(sp->tip);
	strvec_release(&sp->tree_paths);
	free(sp->head);
}

/* The group of SUBSYSTEM, added (after the others) when missing. */
static size_t group_of(struct split *sp, const char *subsystem)
{
	for (size_t i = 0; i < sp->groups.len; i++)
		if (strcmp(sp->groups.items[i].subsystem, subsystem) == 0)
			return i;
	struct group g = {xstrdup(subsystem), NULL, VEC_INIT, BUF_INIT, BUF_INIT, 0, STRVEC_INIT, STRVEC_INIT, VEC_INIT};
	vec_push(&sp->groups, g);
	return sp->groups.len - 1;
}

static void push_once(struct strvec *v, const char *str)
{
	for (size_t i = 0; i < v->len; i++)
		if (strcmp(v->items[i], str) == 0)
			return;
	strvec_push(v, str);
}

/* The files commit ID changes, in path order, into PATHS, and its summary into *SUMMARY (owned). */
static int commit_paths(git_repository *g, const git_oid *id, struct strvec *paths, char **summary)
{
	git_commit *c = NULL, *p = NULL;
	git_tree *t = NULL, *pt = NULL;
	git_diff *diff = NULL;
	int rc = -1;
	if (git_commit_lookup(&c, g, id) < 0 || git_commit_tree(&t, c) < 0 ||
	    (git_commit_parentcount(c) && (git_commit_parent(&p, c, 0) < 0 || git_commit_tree(&pt, p) < 0)) ||
	    git_diff_tree_to_tree(&diff, g, pt, t, NULL) < 0) {
		repo_git_fail("diffing a commit");
		goto done;
	}
	for (size_t i = 0; i < git_diff_num_deltas(diff); i++)
		strvec_push(paths, git_diff_get_delta(diff, i)->new_file.path);
	*summary = xstrdup(git_commit_summary(c));
	rc = 0;
done:
	git_diff_free(diff);
	git_tree_free(pt);
	git_tree_free(t);
	git_commit_free(p);
	git_commit_free(c);
	return rc;
}

/*
 * Commit number I of the range to the group of its first file; what it
 * changes beyond its subsystem goes in that group's cover letter, and a
 * file an earlier commit of another group changed makes this group follow
 * that one.
 */
static int place_commit(struct split *sp, size_t i)
{
	struct strvec paths = STRVEC_INIT, elsewhere = STRVEC_INIT;
	char *summary = NULL;
	if (commit_paths(sp->s->g, &sp->s->ids.items[i], &paths, &summary) < 0) {
		strvec_release(&paths);
		return -1;
	}
	char *sub = repo_subsystem(paths.len ? paths.items[0] : "");
	size_t gi = group_of(sp, sub);
	struct group *g = &sp->groups.items[gi];
	vec_push(&g->ids, sp->s->ids.items[i]);
	for (size_t k = 0; k < paths.len; k++) {
		char *other = repo_subsystem(paths.items[k]);
		if (strcmp(other, sub) != 0)
			strvec_push(&elsewhere, paths.items[k]);
		free(other);
		size_t o = 0;
		while (o < sp->owner_path.len && strcmp(sp->owner_path.items[o], paths.items[k]) != 0)
			o++;
		if (o == sp->owner_path.len) {
			strvec_push(&sp->owner_path, paths.items[k]);
			vec_push(&sp->owner, gi);
		} else if (sp->owner.items[o] != gi) {
			char *dep = xasprintf("the %s series (%s)", sp->groups.items[sp->owner.items[o]].subsystem,
					      paths.items[k]);
			push_once(&g->after, dep);
			free(dep);
		}
	}
	if (elsewhere.len) {
		struct buf b = BUF_INIT;
		buf_printf(&b, "(%s) also changes files of other subsystems:", summary);
		for (size_t k = 0; k < elsewhere.len; k++)
			buf_printf(&b, " %s%s", elsewhere.items[k], k + 1 < elsewhere.len ? "," : ".");
		vec_push(&g->also, buf_detach(&b));
		vec_push(&g->also_at, g->ids.len);
	}
	free(summary);
	free(sub);
	strvec_release(&paths);
	strvec_release(&elsewhere);
	return 0;
}

/* The longest tail of FILE (at a '/') that is a file of the tip; NULL if none. */
static const char *tip_suffix(git_tree *tip, const char *file)
{
	for (const char *p = file; p; p = strchr(p, '/') ? strchr(p, '/') + 1 : NULL) {
		git_tree_entry *e = NULL;
		if (*p && git_tree_entry_bypath(&e, tip, p) == 0) {
			git_tree_entry_free(e);
			return p;
		}
	}
	git_error_clear();
	return NULL;
}

static int collect_path(const char *root, const git_tree_entry *e, void *payload)
{
	if (git_tree_entry_type(e) == GIT_OBJECT_BLOB)
		strvec_pushf(payload, "%s%s", root, git_tree_entry_name(e));
	return 0;
}

/*
 * The repository path of FILE as the commit run walked it (from the top,
 * absolute, or from a directory below the top): the longest tail of it that
 * is a file of the tip, else the one file of the tip it is a tail of, else
 * FILE without a leading "./". Owned.
 */
static char *note_file_path(struct split *sp, const char *file)
{
	const char *wd = sp->s->workdir;
	if (wd && strncmp(file, wd, strlen(wd)) == 0)
		file += strlen(wd);
	while (strncmp(file, "./", 2) == 0)
		file += 2;
	const char *tail = tip_suffix(sp->tip, file);
	if (tail)
		return xstrdup(tail);
	if (!sp->tree_paths.len)
		git_tree_walk(sp->tip, GIT_TREEWALK_PRE, collect_path, &sp->tree_paths);
	const char *hit = NULL;
	size_t n = strlen(file), hits = 0;
	for (size_t i = 0; i < sp->tree_paths.len; i++) {
		const char *t = sp->tree_paths.items[i];
		size_t l = strlen(t);
		if (l > n && t[l - n - 1] == '/' && strcmp(t + l - n, file) == 0)
			hit = t, hits++;
	}
	return xstrdup(hits == 1 ? hit : file);
}

/* One hand-work line of the note ("FILE:LINE:COL: note: ...") to the group of its file's subsystem. */
static void place_line(struct split *sp, const char *line)
{
	const char *e = strstr(line, ": note: ");
	const char *f = e; /* back over ":COL" and ":LINE" */
	for (int k = 0; k < 2 && f; k++) {
		const char *d = f;
		while (d > line && d[-1] >= '0' && d[-1] <= '9')
			d--;
		f = d < f && d > line + 1 && d[-1] == ':' ? d - 1 : NULL;
	}
	char *file = xstrndup(line, f ? (size_t)(f - line) : strcspn(line, ":"));
	char *path = note_file_path(sp, file);
	char *sub = repo_subsystem(path);
	size_t gi = group_of(sp, sub); /* before the address: it may move the groups */
	struct group *g = &sp->groups.items[gi];
	buf_printf(&g->left, "%s\n", line);
	g->nleft++;
	free(sub);
	free(path);
	free(file);
}

/* The run's note: its counts kept for every cover letter, its hand-work lines shared out by subsystem. */
static void share_note(struct split *sp)
{
	const char *note = sp->s->note;
	if (!note)
		return;
	const char *list = strstr(note, "\n\n");
	sp->head = xstrndup(note, list ? (size_t)(list - note) : strcspn(note, "\n"));
	if (!list)
		return;
	for (const char *l = list + 2; *l;) {
		size_t n = strcspn(l, "\n");
		if (n) {
			char *line = xstrndup(l, n);
			place_line(sp, line);
			free(line);
			sp->run_left++;
		}
		l += n + (l[n] == '\n');
	}
}

/*
 * The account in G's cover letter, in the shape of a note: the run's
 * counts, G's share of the findings left, then G's hand-work lines. NULL
 * without a note. Owned.
 */
static char *group_note(const struct split *sp, const struct group *g)
{
	if (!sp->head)
		return NULL;
	struct buf b = BUF_INIT;
	const char *colon = strstr(sp->head, ": ");
	if (colon) /* "preemptify 0.1.0: 3 sites committed ... ." */
		buf_printf(&b, "The run these series come from (%.*s): %s", (int)(colon - sp->head), sp->head,
			   colon + 2);
	else
		buf_puts(&b, sp->head);
	if (sp->run_left && g->nleft == sp->run_left)
		buf_printf(&b, " All %s in %s, listed below.", sp->run_left == 1 ? "of it is" : "of them are",
			   g->subsystem);
	else if (g->nleft && sp->run_left - g->nleft == 1)
		buf_printf(&b, " Of the %zu findings left, %zu %s in %s, listed below; the other is in another "
			   "subsystem's files.", sp->run_left, g->nleft, g->nleft == 1 ? "is" : "are", g->subsystem);
	else if (g->nleft)
		buf_printf(&b, " Of the %zu findings left, %zu %s in %s, listed below; the other %zu are in "
			   "other subsystems' files.", sp->run_left, g->nleft, g->nleft == 1 ? "is" : "are", g->subsystem,
			   sp->run_left - g->nleft);
	else if (sp->run_left)
		buf_printf(&b, " None of the findings left is in %s.", g->subsystem);
	if (g->nleft)
		buf_printf(&b, "\n\n%s", buf_cstr(&g->left));
	return buf_detach(&b);
}

/* What G's cover letter says of the other series and of its patches' files elsewhere. */
static void group_extra(const struct split *sp, struct group *g)
{
	struct buf b = BUF_INIT;
	if (sp->ncommitted > 1) {
		buf_printf(&b, "It is one of %zu series made from one preemptify run, one per subsystem:", sp->ncommitted);
		for (size_t i = 0; i < sp->ncommitted; i++)
			buf_printf(&b, " %s%s", sp->groups.items[i].subsystem, i + 1 < sp->ncommitted ? "," : ".");
		if (!g->after.len)
			buf_puts(&b, " It applies on its own, before or after the others.");
		for (size_t i = 0; i < g->after.len; i++)
			buf_printf(&b, "%s%s", i ? ", " : " It applies after ", g->after.items[i]);
		if (g->after.len)
			buf_puts(&b, ": those patches change a file this series changes too.");
		buf_add_wrapped(&g->extra, buf_cstr(&b), "", "", 72);
	}
	buf_release(&b);
	for (size_t i = 0; i < g->also.len; i++) {
		char *text = xasprintf("Patch %zu/%zu %s", g->also_at.items[i], g->ids.len, g->also.items[i]);
		if (g->extra.len)
			buf_putc(&g->extra, '\n');
		buf_add_wrapped(&g->extra, text, "", "", 72);
		free(text);
	}
}

/* Directory names for the groups with commits, unique ("drivers-net", then "drivers-net-2"). */
static void name_dirs(struct split *sp)
{
	for (size_t i = 0; i < sp->ncommitted; i++) {
		char *base = dir_name(sp->groups.items[i].subsystem), *d = xstrdup(base);
		for (int n = 2;; n++) {
			size_t j = 0;
			while (j < i && strcmp(sp->groups.items[j].dir, d) != 0)
				j++;
			if (j == i)
				break;
			free(d);
			d = xasprintf("%s-%d", base, n);
		}
		free(base);
		sp->groups.items[i].dir = d;
	}
}

/* Writes G's series into OUTDIR/G's directory, with its own numbering, account and addresses. */
static int write_group(struct split *sp, struct group *g, const char *outdir, struct repo_series_report *out)
{
	struct series *s = sp->s;
	oid_vec all = s->ids;
	char *run_note = s->note;
	struct buf empty = BUF_INIT;
	size_t before = out->patches;
	char *dir = xasprintf("%s/%s", outdir, g->dir);
	s->ids = g->ids;
	s->note = group_note(sp, g);
	s->subsystem = g->subsystem;
	s->extra = g->extra;
	g->extra = empty;
	int rc = series_write(s, dir, out);
	free(s->note);
	s->ids = all;
	s->note = run_note;
	series_part_reset(s);
	struct repo_series_part part = {xstrdup(g->subsystem), dir, out->patches - before, g->nleft, g->after.len};
	vec_push(&out->parts, part);
	return rc;
}

static int by_subsystem(const void *a, const void *b)
{
	return strcmp(((const struct group *)a)->subsystem, ((const struct group *)b)->subsystem);
}

static int part_by_subsystem(const void *a, const void *b)
{
	return strcmp(((const struct repo_series_part *)a)->subsystem, ((const struct repo_series_part *)b)->subsystem);
}

int series_split(struct series *s, const char *outdir, struct repo_series_report *out)
{
	struct split sp = SPLIT_INIT;
	git_commit *last = NULL;
	int rc = -1;
	sp.s = s;
	/* 1. the commits to their subsystems' groups, in the range's order */
	for (size_t i = 0; i < s->ids.len; i++)
		if (place_commit(&sp, i) < 0)
			goto done;
	sp.ncommitted = sp.groups.len;
	qsort(sp.groups.items, sp.ncommitted, sizeof *sp.groups.items, by_subsystem);
	/* 2. the note's hand work to the subsystems of its files, found in the range's last tree */
	if (git_commit_lookup(&last, s->g, &s->ids.items[s->ids.len - 1]) < 0 || git_commit_tree(&sp.tip, last) < 0) {
		repo_git_fail("reading the last commit");
		goto done;
	}
	share_note(&sp);
	/* 3. each series, then the subsystems with hand work and no commit */
	name_dirs(&sp);
	for (size_t i = 0; i < sp.ncommitted; i++) {
		group_extra(&sp, &sp.groups.items[i]);
		if (write_group(&sp, &sp.groups.items[i], outdir, out) < 0)
			goto done;
	}
	for (size_t i = sp.ncommitted; i < sp.groups.len; i++) {
		struct group *g = &sp.groups.items[i];
		struct repo_series_part part = {xstrdup(g->subsystem), NULL, 0, g->nleft, 0};
		vec_push(&out->parts, part);
	}
	qsort(out->parts.items, out->parts.len, sizeof *out->parts.items, part_by_subsystem);
	rc = 0;
done:
	git_commit_free(last);
	split_release(&sp);
	return rc;
}
