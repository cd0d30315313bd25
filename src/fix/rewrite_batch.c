/*
 * The batcher: the spatch runs of many files made by shared spatch
 * processes, one per fix kind and edit operation at each step, split over
 * the jobs; a process that fails leaves each of its files to run alone.
 */
#include "fix/rewrite_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/interrupt.h"
#include "util/parallel.h"
#include "util/spawn.h"

/*
 * Most of a spatch run is its start-up (Python, the rules), so the files
 * are rewritten in lockstep: every file's thread computes until it needs a
 * spatch run, then waits; when no thread is computing, the waiting runs
 * are started together, one spatch process per fix kind and edit
 * operation (split over the jobs) on all their inputs, the sidecar keyed
 * by input name. A process that fails is not blamed on any file: each of
 * its inputs then runs alone, so failures stay per file as before.
 * Computing is limited to `jobs` threads at a time by tokens.
 */
struct request {
	struct job *j;
	const char *dir;
	enum fix_kind kind;
	enum edit_op op;
	const char *group;
	const site_vec *sites;
	const char *text;
	size_t len;
	char *out;
	size_t out_len;
	bool ran;  /* OUT is the result; else the caller runs it alone */
	bool done;
	struct request *next;
};

/* Waits for a token (B->mu held) and counts the thread as computing. */
static void take_token(struct batcher *b)
{
	b->wanting++;
	while (b->tokens == 0)
		pthread_cond_wait(&b->cv, &b->mu);
	b->tokens--;
	b->wanting--;
	b->computing++;
}

void batcher_init(struct batcher *b, int tokens)
{
	*b = (struct batcher){.tokens = tokens};
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	atomic_init(&b->chunks, 0);
	atomic_init(&b->processes, 0);
	atomic_init(&b->batched, 0);
	atomic_init(&b->reused, 0);
}

void batcher_destroy(struct batcher *b)
{
	pthread_cond_destroy(&b->cv);
	pthread_mutex_destroy(&b->mu);
}

void batcher_enter(struct batcher *b)
{
	pthread_mutex_lock(&b->mu);
	take_token(b);
	pthread_mutex_unlock(&b->mu);
}

void batcher_leave(struct batcher *b)
{
	pthread_mutex_lock(&b->mu);
	b->tokens++;
	b->computing--;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

struct chunk {
	struct request **reqs;
	size_t n;
	size_t bytes;
};

/* One spatch process on the inputs of C (one fix kind and operation). */
static void run_chunk(size_t i, void *ctx)
{
	struct chunk *c = &((struct chunk *)ctx)[i];
	struct job *j0 = c->reqs[0]->j;
	struct batcher *b = j0->batch;
	int timeout_sec = j0->opts->timeout_sec > 0 ? j0->opts->timeout_sec : 60;
	unsigned id = atomic_fetch_add(&b->chunks, 1);
	char *cdir = xasprintf("%s/b%u", j0->tmpdir, id);
	char *sidep = xasprintf("%s/sites.txt", cdir);
	char *sites_arg = xasprintf("sites=%s", sidep);
	char *cocci = xasprintf("%s/cocci/%s.cocci", j0->tmpdir, fix_name(c->reqs[0]->kind));
	char *timeout = xasprintf("%d", timeout_sec);
	struct buf side = BUF_INIT;
	char **names = xcalloc(c->n, sizeof *names);
	char **argv = xcalloc(c->n + 20, sizeof *argv);
	bool ok = mkdir(cdir, 0700) == 0;
	buf_puts(&side, "# path op line col end_line end_col node text\n");
	for (size_t k = 0; k < c->n && ok; k++) {
		struct request *r = c->reqs[k];
		names[k] = input_name(r->j, r->dir);
		char *path = xasprintf("%s/%s", j0->tmpdir, names[k]);
		ok = write_file(path, r->text, r->len) == 0;
		free(path);
		sidecar(&side, names[k], r->kind, r->op, r->group, r->sites);
	}
	ok = ok && write_file(sidep, side.ptr, side.len) == 0;
	struct spawn_result res = SPAWN_RESULT_INIT;
	if (ok) {
		size_t a = 0;
		char *head[] = {(char *)j0->opts->spatch, "--sp-file", cocci, "-D", sites_arg,
				"-D", op_virtual(c->reqs[0]->op), "--very-quiet", "--no-show-diff",
				"--no-includes", "--timeout", timeout, "--in-place",
				"--temp-files", (char *)j0->tmpdir}; /* not /tmp: see run_spatch() */
		for (size_t k = 0; k < ARRAY_SIZE(head); k++)
			argv[a++] = head[k];
		if (j0->python) {
			argv[a++] = "--python";
			argv[a++] = (char *)j0->python;
		}
		for (size_t k = 0; k < c->n; k++)
			argv[a++] = names[k];
		argv[a] = NULL;
		atomic_fetch_add(&b->processes, 1);
		ok = spawn_run(argv, j0->tmpdir, timeout_sec * (int)(c->n < 4 ? c->n : 4) + 5, &res) == 0 &&
		     !res.timed_out && !res.signal && res.exit_code == 0;
	}
	for (size_t k = 0; k < c->n && ok; k++) {
		struct request *r = c->reqs[k];
		char *path = xasprintf("%s/%s", j0->tmpdir, names[k]);
		r->ran = read_file(path, &r->out, &r->out_len) == 0;
		free(path);
	}
	if (ok && c->n > 1)
		atomic_fetch_add(&b->batched, (unsigned)c->n);
	spawn_result_release(&res);
	for (size_t k = 0; k < c->n; k++)
		free(names[k]);
	free(names);
	free(argv);
	buf_release(&side);
	free(cdir);
	free(sidep);
	free(sites_arg);
	free(cocci);
	free(timeout);
}

/* Longest input first (for the split over the jobs). */
static int by_len_desc(const void *a, const void *b)
{
	size_t la = (*(struct request *const *)a)->len, lb = (*(struct request *const *)b)->len;
	return la < lb ? 1 : la > lb ? -1 : 0;
}

/*
 * Runs the queued requests ALL: grouped by fix kind and operation, each
 * group split over the jobs, each input to the part with the fewest bytes
 * so far, longest first: spatch's time grows with its input, and a step
 * lasts as long as its slowest part.
 */
static void run_batch(struct request *all, int jobs)
{
	size_t n = 0;
	for (struct request *r = all; r; r = r->next)
		n++;
	struct request **v = xcalloc(n, sizeof *v);
	size_t k = 0;
	for (struct request *r = all; r; r = r->next)
		v[k++] = r;
	VEC(struct chunk) chunks = VEC_INIT;
	bool *taken = xcalloc(n, sizeof *taken);
	if (jobs <= 0)
		jobs = parallel_default_jobs();
	for (size_t i = 0; i < n; i++) {
		if (taken[i])
			continue;
		size_t m = 0;
		struct request **same = xcalloc(n, sizeof *same);
		for (size_t q = i; q < n; q++)
			if (!taken[q] && v[q]->kind == v[i]->kind && v[q]->op == v[i]->op)
				same[m++] = v[q], taken[q] = true;
		size_t parts = m < (size_t)jobs ? m : (size_t)jobs, first = chunks.len;
		qsort(same, m, sizeof *same, by_len_desc);
		for (size_t p = 0; p < parts; p++) {
			struct chunk c = {xcalloc(m, sizeof *c.reqs), 0, 0};
			vec_push(&chunks, c);
		}
		for (size_t q = 0; q < m; q++) {
			struct chunk *least = &chunks.items[first];
			for (size_t p = first + 1; p < chunks.len; p++)
				if (chunks.items[p].bytes < least->bytes)
					least = &chunks.items[p];
			least->reqs[least->n++] = same[q];
			least->bytes += same[q]->len;
		}
		free(same);
	}
	parallel_for(chunks.len, jobs, run_chunk, chunks.items);
	for (size_t i = 0; i < chunks.len; i++)
		free(chunks.items[i].reqs);
	vec_release(&chunks);
	free(taken);
	free(v);
}

/* Where R's step comes in a file's attempt(): fix kinds in order, each replace, insert after, insert before. */
static unsigned step_order(const struct request *r)
{
	unsigned op = r->op == EDIT_REPLACE ? 0 : r->op == EDIT_INSERT_AFTER ? 1 : 2;
	return (unsigned)r->kind * 3 + op;
}

/*
 * Queues R and waits, without a token, until a batch has run it; the
 * thread whose wait finds nobody computing starts the batch.
 */
static void batcher_wait(struct batcher *b, struct request *r, int jobs)
{
	pthread_mutex_lock(&b->mu);
	r->next = b->queue;
	b->queue = r;
	b->tokens++;
	b->computing--;
	pthread_cond_broadcast(&b->cv);
	while (!r->done) {
		if (!b->running && b->computing == 0 && b->wanting == 0 && b->waking == 0 && b->queue) {
			/* the earliest step only: the files at later ones wait for the others to
			 * catch up (every file takes the steps in the same order), so each
			 * step is one process for all the files that need it */
			unsigned first = UINT_MAX;
			for (struct request *q = b->queue; q; q = q->next)
				if (step_order(q) < first)
					first = step_order(q);
			struct request *all = NULL, **keep = &b->queue;
			while (*keep) {
				struct request *q = *keep;
				if (step_order(q) == first) {
					*keep = q->next;
					q->next = all;
					all = q;
				} else {
					keep = &q->next;
				}
			}
			b->running = true;
			pthread_mutex_unlock(&b->mu);
			run_batch(all, jobs);
			pthread_mutex_lock(&b->mu);
			for (struct request *q = all; q; q = q->next)
				q->done = true, b->waking++;
			b->running = false;
			pthread_cond_broadcast(&b->cv);
		} else {
			pthread_cond_wait(&b->cv, &b->mu);
		}
	}
	/* until every thread of the step just run is back, the next step is not
	 * complete: starting it early splits it in two */
	b->waking--;
	take_token(b);
	pthread_mutex_unlock(&b->mu);
}

/* run_spatch(), in a batch with other files' runs when there is a batcher. */
static int spatch_run(struct job *j, const char *dir, enum fix_kind kind, enum edit_op op, const char *group,
		      const site_vec *sites, const char *text, size_t len, char **out, size_t *out_len,
		      char **err)
{
	if (j->batch && !interrupted()) {
		struct request r = {j, dir, kind, op, group, sites, text, len, NULL, 0, false, false, NULL};
		batcher_wait(j->batch, &r, j->opts->jobs);
		if (r.ran) {
			*out = r.out;
			*out_len = r.out_len;
			return 0;
		}
		free(r.out);
	}
	if (interrupted()) {
		*err = xstrdup("interrupted");
		return -1;
	}
	return run_spatch(j, dir, kind, op, group, sites, text, len, out, out_len, err);
}

/*
 * A spatch step: the memo's answer when this very step ran before (same
 * input, same sites, same programs), else spatch_run(), whose success the
 * memo keeps. A step's output depends on nothing else, so both are the
 * same bytes; the file's checks (validation, re-analysis) run either way.
 */
int spatch_one(struct job *j, const char *dir, enum fix_kind kind, enum edit_op op, const char *group,
	       const site_vec *sites, const char *text, size_t len, char **out, size_t *out_len, char **err)
{
	const struct spatch_memo *m = j->opts->memo;
	struct buf key = BUF_INIT;
	if (m) {
		step_key(&key, j, kind, op, group, sites, text, len);
		if (m->get(m->ctx, key.ptr, key.len, out, out_len)) {
			atomic_fetch_add(&j->batch_stats->reused, 1);
			buf_release(&key);
			return 0;
		}
	}
	int rc = spatch_run(j, dir, kind, op, group, sites, text, len, out, out_len, err);
	if (m && rc == 0 && !interrupted())
		m->put(m->ctx, key.ptr, key.len, *out, *out_len);
	buf_release(&key);
	return rc;
}
