/*
 * Rewrite: hand each file's planned edits to spatch, one fix kind and one
 * edit operation (replace, insert after, insert before) per spatch run, so
 * that every run's positions refer to the text it is given (spatch
 * re-parses after a modifying rule, so positions do not survive one).
 * Between runs, the remaining sites are remapped through the line diff of
 * what the run changed. Every site is verified after its run; a finding
 * any of whose edits was not made is dropped whole and the file is redone
 * without it, so a fix is never half applied.
 *
 * This file plans the jobs (one per file) and runs each file's attempts;
 * the sites, slicing, batching and spatch itself are the other
 * rewrite_*.c files (rewrite_internal.h).
 */
#include "fix/rewrite_internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "util/interrupt.h"
#include "util/parallel.h"
#include "util/spawn.h"
#include "fix/eol.h"
#include "fix/lines.h"
#include "fix/validate.h"
#include "pipeline/verify.h"
#include "util/overlay.h"

/* Files rewritten at once when batching: their spatch runs share processes. */
#define REWRITE_THREADS 256

/* ---- one file ---------------------------------------------------------- */

static void refuse(struct file_change *c, struct finding *f, char *reason)
{
	struct refusal r = {f, reason};
	vec_push(&c->refused, r);
}

/*
 * One attempt with the ACTIVE findings. Returns 0 with *OUT the new text
 * and WHY[i] set for each finding whose edits were not all made, or -1 with
 * *ERR when spatch failed.
 */
static int attempt(struct job *j, const char *dir, const bool *active, char **why,
		   char **out, size_t *out_len, char **err)
{
	int ret = -1;
	site_vec sites = VEC_INIT;
	struct lines orig;
	char *cur = xstrndup(j->out->old_text, j->out->old_len);
	size_t cur_len = j->out->old_len;

	lines_init(&orig, j->out->old_text, j->out->old_len);
	build_sites(j, active, &orig, &sites);
	lines_release(&orig);
	merge_groups(&sites, j->out->path, cur, cur_len);

	for (int kind = 1; kind < FIX_COUNT; kind++) {
		static const enum edit_op order[] = {EDIT_REPLACE, EDIT_INSERT_AFTER,
						     EDIT_INSERT_BEFORE};
		for (size_t oi = 0; oi < ARRAY_SIZE(order); oi++) {
			enum edit_op op = order[oi];
			const char *group = next_group(&sites, (enum fix_kind)kind, op);
			if (!group)
				continue;
			char *next = NULL;
			size_t next_len = 0;
			char gkey[sizeof sites.items[0].group];
			snprintf(gkey, sizeof gkey, "%s", group);
			if (run_spatch_sliced(j, dir, (enum fix_kind)kind, op, gkey, &sites, cur,
					      cur_len, &next, &next_len, err) < 0)
				goto done;
			if (after_run(&sites, (enum fix_kind)kind, op, gkey, cur, cur_len, next, next_len,
				      why, err) < 0) {
				free(next);
				goto done;
			}
			free(cur);
			cur = next;
			cur_len = next_len;
			oi--; /* the same operation again, for its next group */
		}
	}
	*out = cur;
	*out_len = cur_len;
	cur = NULL;
	ret = 0;
done:
	free(cur);
	sites_release(&sites);
	return ret;
}

/* Reads the file and makes its work directory; on failure every finding is refused. */
static int prepare_file(struct job *j, const char *dir)
{
	struct file_change *c = j->out;
	size_t n = j->findings.len;
	if (overlay_read(c->path, &c->old_text, &c->old_len) < 0) {
		c->error = xstrdup(error_last());
		for (size_t f = 0; f < n; f++)
			refuse(c, j->findings.items[f], xasprintf("file not read: %s", c->error));
		c->old_text = xstrdup("");
		c->old_len = 0;
		return -1;
	}
	/* the edits were planned on the scan's read: a file changed since cannot take them */
	const struct finding *f0 = j->findings.items[0];
	if (c->old_len != f0->file_len || hash_bytes(c->old_text, c->old_len) != f0->file_hash) {
		c->error = xstrdup("changed since it was scanned; not rewritten");
		for (size_t f = 0; f < n; f++)
			refuse(c, j->findings.items[f], xstrdup(c->error));
		return -1;
	}
	/* apply replaces a file by rename: the other names of a hard link would keep the old text */
	struct stat st;
	if (stat(c->path, &st) == 0 && st.st_nlink > 1)
		c->error = xasprintf("has %ju names (hard links): a rewrite would give this name the new "
				     "text and leave the others the old one; not rewritten (break the links "
				     "first: cp FILE FILE.new && mv FILE.new FILE)", (uintmax_t)st.st_nlink);
	else if (mkdir(dir, 0700) != 0)
		c->error = xasprintf("%s: %s", dir, strerror(errno));
	if (c->error) {
		for (size_t f = 0; f < n; f++)
			refuse(c, j->findings.items[f], xstrdup(c->error));
		return -1;
	}
	return 0;
}

/* Refuses the findings with an edit spatch cannot make; marks the others ACTIVE and counts them. */
static size_t activate(struct job *j, bool *active)
{
	size_t n_active = 0;
	for (size_t f = 0; f < j->findings.len; f++) {
		struct finding *fd = j->findings.items[f];
		char *reason = verify_edits(fd, j->out->old_text, j->out->old_len);
		if (reason)
			refuse(j->out, fd, reason);
		else
			active[f] = true, n_active++;
	}
	return n_active;
}

/*
 * Refuses (and deactivates) each active finding with a WHY, taking the
 * reason. define-per-cpu findings convert one array together (the
 * declaration rides on one of them): half a conversion does not compile,
 * so one failing drops them all. Returns whether any was dropped.
 */
static bool drop_failed(struct job *j, bool *active, char **why, size_t *n_active)
{
	struct file_change *c = j->out;
	size_t n = j->findings.len;
	bool dropped = false, per_cpu_dropped = false;
	unsigned per_cpu_line = 0;
	for (size_t f = 0; f < n; f++) {
		if (active[f] && why[f]) {
			if (j->findings.items[f]->fix == FIX_DEFINE_PER_CPU && !per_cpu_dropped) {
				per_cpu_dropped = true;
				per_cpu_line = j->findings.items[f]->pos.line;
			}
			refuse(c, j->findings.items[f], why[f]);
			why[f] = NULL;
			active[f] = false;
			(*n_active)--;
			dropped = true;
		}
	}
	for (size_t f = 0; per_cpu_dropped && f < n; f++) {
		if (active[f] && j->findings.items[f]->fix == FIX_DEFINE_PER_CPU) {
			refuse(c, j->findings.items[f],
			       xasprintf("the DEFINE_PER_CPU conversion of this file failed at line %u, "
					 "so none of its sites is converted", per_cpu_line));
			active[f] = false;
			(*n_active)--;
		}
	}
	return dropped;
}

/*
 * Translation validation of one attempt (fix/validate.h): sets WHY for the
 * active findings whose part of TEXT is not proven. True if any was refused.
 */
static bool validate_active(struct job *j, const bool *active, char **why, const char *text,
			    size_t len)
{
	VEC(struct finding *) applied = VEC_INIT;
	VEC(size_t) idx = VEC_INIT;
	struct scan_options def = SCAN_OPTIONS_INIT;
	for (size_t f = 0; f < j->findings.len; f++)
		if (active[f])
			vec_push(&applied, j->findings.items[f]), vec_push(&idx, f);
	char **w = xcalloc(applied.len ? applied.len : 1, sizeof *w);
	size_t refused = validate_rewrite_memo(j->opts->validated, j->out->path, j->out->old_text,
					       j->out->old_len, text, len, applied.items, applied.len,
					       j->opts->scan ? j->opts->scan : &def, w);
	for (size_t k = 0; k < applied.len; k++) {
		if (w[k] && !why[idx.items[k]])
			why[idx.items[k]] = xasprintf("not rewritten: %s", w[k]);
		free(w[k]);
	}
	free(w);
	vec_release(&applied);
	vec_release(&idx);
	return refused > 0;
}

static bool was_fixed(const struct file_change *c, const struct finding *f)
{
	for (size_t k = 0; k < c->fixed.len; k++)
		if (c->fixed.items[k] == f)
			return true;
	return false;
}

/*
 * A slot converted to per_cpu(x, cpu) is the same slot: its CPU number is
 * stable only if the read's own fix (P003) went in. When that one was
 * refused, the converted site's note says the race is left for the user.
 */
static void note_stale_slots(struct job *j)
{
	struct file_change *c = j->out;
	for (size_t k = 0; k < c->fixed.len; k++) {
		struct finding *fd = c->fixed.items[k];
		for (size_t f = 0; f < j->findings.len; f++)
			if (!was_fixed(c, j->findings.items[f]) && verify_note_stale_slot(fd, j->findings.items[f]))
				break;
	}
}

/* Does an active finding plan an edit made after spatch? */
static bool plans_by_text(const struct job *j, const bool *active)
{
	for (size_t f = 0; f < j->findings.len; f++)
		for (size_t e = 0; active[f] && e < j->findings.items[f]->edits.len; e++)
			if (j->findings.items[f]->edits.items[e].by_text)
				return true;
	return false;
}

/*
 * Undoes what spatch does to the layout around its edits (below). TEXT
 * (*LEN bytes) is consumed; returns the new text, its length in *LEN.
 */
static char *tidy_output(const struct job *j, const bool *active, char *text, size_t *len)
{
	const struct file_change *c = j->out;
	/* spatch moves a trailing comment onto a put_cpu() it adds after it */
	size_t kept_len;
	char *kept = lines_keep_trailing_comments(c->old_text, c->old_len, text, *len, &kept_len);
	free(text);
	/* and puts a brace it opens after a `//` comment before the comment */
	text = lines_brace_before_comment(c->old_text, c->old_len, kept, kept_len, len);
	free(kept);
	/* and leaves the #if around struct fields it removed, empty (the plan removes it) */
	if (plans_by_text(j, active)) {
		kept = lines_drop_emptied_conditionals(c->old_text, c->old_len, text, *len, &kept_len);
		free(text);
		text = kept;
		*len = kept_len;
	}
	return text;
}

/*
 * Rewrites the file of job I of CTX: attempts with fewer findings until
 * every finding left is made and validated, then indents what was added.
 */
static void process_file(size_t i, void *ctx)
{
	struct job *j = &((struct job *)ctx)[i];
	struct file_change *c = j->out;
	size_t n = j->findings.len;
	bool *active = xcalloc(n ? n : 1, sizeof *active);
	char **why = xcalloc(n ? n : 1, sizeof *why);
	char *dir = xasprintf("%s/f%zu", j->tmpdir, j->index);

	if (j->batch)
		batcher_enter(j->batch);
	size_t n_active = 0;
	if (interrupted()) {
		c->error = xstrdup("interrupted before it was rewritten");
		c->old_text = xstrdup("");
	} else if (prepare_file(j, dir) == 0) {
		n_active = activate(j, active);
	}
	/* Each retry drops at least one finding, so this ends. */
	while (n_active && !interrupted()) {
		char *text = NULL, *err = NULL;
		size_t len = 0;
		if (attempt(j, dir, active, why, &text, &len, &err) < 0) {
			c->error = err;
			for (size_t f = 0; f < n; f++) {
				if (active[f])
					refuse(c, j->findings.items[f],
					       xasprintf("not rewritten: %s", err));
				free(why[f]);
				why[f] = NULL;
			}
			break;
		}
		/* TEXT holds the edits of every finding tried: with one dropped, try again without it */
		if (drop_failed(j, active, why, &n_active)) {
			free(text);
			continue;
		}
		text = tidy_output(j, active, text, &len);
		if (validate_active(j, active, why, text, len) && drop_failed(j, active, why, &n_active)) {
			free(text);
			continue;
		}
		for (size_t f = 0; f < n; f++)
			if (active[f])
				vec_push(&c->fixed, j->findings.items[f]);
		free(c->new_text);
		c->new_text = lines_indent_added(c->old_text, c->old_len, text, len, &c->new_len);
		c->new_text = eol_follow(c->old_text, c->old_len, c->new_text, &c->new_len);
		free(text);
		break;
	}
	if (interrupted() && !c->error)
		c->error = xstrdup("interrupted before it was rewritten");
	if (!c->new_text || interrupted()) {
		free(c->new_text);
		c->fixed.len = 0;
		c->new_text = xstrndup(c->old_text, c->old_len);
		c->new_len = c->old_len;
	}
	note_stale_slots(j);
	if (j->batch)
		batcher_leave(j->batch);
	progress_add(j->opts->progress, 1, n, c->fixed.len);
	for (size_t f = 0; f < n; f++)
		free(why[f]);
	free(why);
	free(active);
	free(dir);
}

/* ---- the plan ----------------------------------------------------------- */

static bool fixable(const struct finding *f)
{
	return f->fix != FIX_NONE && f->edits.len > 0 && !f->protected_site;
}

/*
 * Groups the fixable findings of SCAN by file, in scan order: one job per
 * file, each with its entry in out->files. Returns the jobs (*N of them).
 */
static struct job *plan_jobs(const struct scan_result *scan, struct rewrite_result *out, size_t *n)
{
	const finding_vec *fv = &scan->findings;
	struct job *jobs = xcalloc(fv->len ? fv->len : 1, sizeof *jobs);
	size_t njobs = 0;
	for (size_t i = 0; i < fv->len; i++) {
		struct finding *f = &fv->items[i];
		if (!fixable(f))
			continue;
		struct job *j = NULL;
		for (size_t k = 0; k < njobs; k++)
			if (strcmp(jobs[k].findings.items[0]->file, f->file) == 0)
				j = &jobs[k];
		if (!j) {
			j = &jobs[njobs];
			j->index = njobs++;
		}
		vec_push(&j->findings, f);
	}
	vec_reserve(&out->files, njobs);
	for (size_t k = 0; k < njobs; k++) {
		struct file_change c = {0};
		c.path = xstrdup(jobs[k].findings.items[0]->file);
		vec_push(&out->files, c);
	}
	for (size_t k = 0; k < njobs; k++)
		jobs[k].out = &out->files.items[out->files.len - njobs + k];
	*n = njobs;
	return jobs;
}

/* ---- arrays converted across files: all their files or none ------------- */

struct failed_array {
	const char *name;
	const struct finding *where; /* a refused part */
};
typedef VEC(struct failed_array) failed_array_vec;

static const struct failed_array *failed_find(const failed_array_vec *v, const char *name)
{
	for (size_t i = 0; i < v->len; i++)
		if (strcmp(v->items[i].name, name) == 0)
			return &v->items[i];
	return NULL;
}

/*
 * The arrays shared across files (finding.array) that one file refused:
 * every other file that converted one is planned again without it.
 * Returns how many jobs were planned again.
 */
static size_t redo_failed_arrays(struct job *jobs, size_t njobs, size_t *next_index, const struct rewrite_options *o)
{
	failed_array_vec failed = VEC_INIT;
	for (size_t k = 0; k < njobs; k++)
		for (size_t r = 0; r < jobs[k].out->refused.len; r++) {
			const struct finding *f = jobs[k].out->refused.items[r].finding;
			if (f->array && !failed_find(&failed, f->array)) {
				struct failed_array fa = {f->array, f};
				vec_push(&failed, fa);
			}
		}
	VEC(struct job *) redo = VEC_INIT;
	for (size_t k = 0; k < njobs && failed.len; k++) {
		struct job *j = &jobs[k];
		struct file_change *c = j->out;
		bool hit = false;
		for (size_t i = 0; i < c->fixed.len && !hit; i++)
			hit = c->fixed.items[i]->array && failed_find(&failed, c->fixed.items[i]->array);
		if (!hit)
			continue;
		for (size_t r = 0; r < c->refused.len; r++)
			free(c->refused.items[r].reason);
		c->refused.len = 0;
		c->fixed.len = 0;
		free(c->new_text);
		c->new_text = NULL;
		size_t w = 0;
		for (size_t i = 0; i < j->findings.len; i++) {
			struct finding *f = j->findings.items[i];
			const struct failed_array *fa = f->array ? failed_find(&failed, f->array) : NULL;
			if (fa)
				refuse(c, f, xasprintf("the DEFINE_PER_CPU conversion of %s is refused in %s:%u, so "
						       "none of its files is converted", fa->name, fa->where->file,
						       fa->where->pos.line));
			else
				j->findings.items[w++] = f;
		}
		j->findings.len = w;
		if (!w) { /* nothing else to change here */
			c->new_text = xstrndup(c->old_text, c->old_len);
			c->new_len = c->old_len;
			continue;
		}
		free(c->old_text);
		c->old_text = NULL;
		j->index = (*next_index)++; /* a fresh work directory */
		j->batch = NULL;
		j->opts = o;
		vec_push(&redo, j);
	}
	size_t n = redo.len;
	for (size_t i = 0; i < n; i++)
		process_file(0, redo.items[i]);
	vec_release(&redo);
	vec_release(&failed);
	return n;
}

int rewrite_plan(const struct scan_result *scan, const struct rewrite_options *opts,
		 struct rewrite_result *out)
{
	int ret = -1;
	char *spatch = NULL, *tmpdir = NULL;
	struct job *jobs = NULL;
	size_t njobs = 0;
	struct rewrite_options def = REWRITE_OPTIONS_INIT;

	if (!opts)
		opts = &def;
	if (spawn_find_program(opts->spatch ? opts->spatch : "spatch", &spatch) < 0) {
		char *why = xstrdup(error_last());
		error_set("spatch (Coccinelle) is needed to rewrite files: %s; install "
			  "coccinelle", why);
		free(why);
		goto done;
	}
	if (make_workdir(&tmpdir) < 0)
		goto done;
	jobs = plan_jobs(scan, out, &njobs);
	struct rewrite_options o = *opts;
	o.spatch = spatch;
	int cpus = opts->jobs > 0 ? opts->jobs : parallel_default_jobs();
	struct batcher b;
	batcher_init(&b, cpus);
	char *python = njobs ? resolve_python() : NULL;
	for (size_t k = 0; k < njobs; k++) {
		jobs[k].opts = &o;
		jobs[k].tmpdir = tmpdir;
		jobs[k].batch = opts->no_batch ? NULL : &b;
		jobs[k].python = python;
		jobs[k].spawned = &b.processes;
		jobs[k].batch_stats = &b;
	}
	progress_phase(opts->progress, "rewriting", njobs, true);
	/* batched: a thread per file (up to REWRITE_THREADS), `cpus` of them computing at a time */
	parallel_for(njobs, opts->no_batch ? opts->jobs : REWRITE_THREADS, process_file, jobs);
	/* each round drops at least one array from the files planned again, so this ends */
	size_t next_index = njobs;
	while (redo_failed_arrays(jobs, njobs, &next_index, &o) && !interrupted())
		;
	out->spatch_processes = atomic_load(&b.processes);
	out->spatch_batched = atomic_load(&b.batched);
	out->spatch_reused = atomic_load(&b.reused);
	batcher_destroy(&b);
	free(python);
	ret = 0;
	for (size_t k = 0; k < njobs; k++)
		ret += jobs[k].out->error != NULL;
done:
	for (size_t k = 0; k < njobs; k++)
		vec_release(&jobs[k].findings);
	free(jobs);
	/* PREEMPTIFY_KEEP_TMP=1 keeps the sidecars and spatch inputs for debugging. */
	if (tmpdir && !getenv("PREEMPTIFY_KEEP_TMP")) {
		remove_workdir(tmpdir);
		free(tmpdir);
	}
	free(spatch);
	return ret;
}

void rewrite_result_release(struct rewrite_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->files.len; i++) {
		struct file_change *c = &r->files.items[i];
		free(c->path);
		free(c->old_text);
		free(c->new_text);
		free(c->error);
		for (size_t k = 0; k < c->refused.len; k++)
			free(c->refused.items[k].reason);
		vec_release(&c->refused);
		vec_release(&c->fixed);
	}
	vec_release(&r->files);
}
