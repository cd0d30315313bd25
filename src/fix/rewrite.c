/*
 * Rewrite: hand each file's planned edits to spatch, one fix kind and one
 * edit operation (replace, insert after, insert before) per spatch run, so
 * that every run's positions refer to the text it is given (spatch
 * re-parses after a modifying rule, so positions do not survive one).
 * Between runs, the remaining sites are remapped through the line diff of
 * what the run changed. Every site is verified after its run; a finding
 * any of whose edits was not made is dropped whole and the file is redone
 * without it, so a fix is never half applied.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include "fix/rewrite.h"
#include "util/interrupt.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tree_sitter/api.h>

#include "parse/source.h"
#include "parse/ts.h"
#include "util/embedded.h"
#include "util/parallel.h"
#include "util/spawn.h"
#include "fix/eol.h"
#include "fix/lines.h"
#include "fix/textdiff.h"
#include "fix/validate.h"
#include "rules/verify.h"

/* One distinct edit, shared by every finding that planned it. */
struct site {
	enum fix_kind kind;
	enum edit_op op;
	size_t start, end;
	const char *node, *text;
	unsigned line, col, end_line; /* in the text of the current run, 1-based */
	unsigned orig_line;           /* in the file as planned: what messages name */
	bool lost;                    /* could not be remapped */
	char group[48];               /* sites of one group go to one spatch run */
	VEC(size_t) owners;           /* indices into the job's findings */
};
typedef VEC(struct site) site_vec;

struct batcher;

/* Files rewritten at once when batching: their spatch runs share processes. */
#define REWRITE_THREADS 256

struct job {
	const struct rewrite_options *opts;
	const char *tmpdir;
	size_t index;
	VEC(struct finding *) findings;
	struct file_change *out;
	struct batcher *batch; /* shared by every job of the plan */
	const char *python;    /* spatch --python: the interpreter, resolved once; or NULL */
	atomic_uint *spawned;  /* spatch processes of one-file runs, counted for -v */
};

/* ---- verification of one run ------------------------------------------ */

/* Old-side line interval of H; a pure insertion touches both neighbours. */
static bool hunk_touches(const struct textdiff_hunk *h, unsigned lo, unsigned hi)
{
	unsigned a = h->old_start, b = h->old_lines ? h->old_start + h->old_lines - 1 : h->old_start + 1;
	return a <= hi && b >= lo;
}

static bool site_verified(const struct site *s, const textdiff_hunk_vec *hunks,
			  const struct lines *newl)
{
	unsigned lo, hi;
	switch (s->op) {
	case EDIT_REPLACE:
		lo = hi = s->line;
		break;
	case EDIT_INSERT_AFTER:
		lo = s->line;
		hi = s->end_line + 1;
		break;
	default:
		lo = s->line > 1 ? s->line - 1 : 1;
		hi = s->end_line;
		break;
	}
	/* a replacement that keeps its line and adds lines after it: spatch's diff only adds them */
	const char *tail = s->op == EDIT_REPLACE ? strrchr(s->text, '\n') : NULL;
	for (size_t i = 0; i < hunks->len; i++) {
		const struct textdiff_hunk *h = &hunks->items[i];
		if (s->op == EDIT_REPLACE && h->old_lines == 0) {
			if (tail && hunk_touches(h, lo, hi + 1) && lines_hunk_has(h, newl, tail + 1))
				return true;
			continue;
		}
		if (!hunk_touches(h, lo, hi))
			continue;
		if (!s->text[0] || lines_hunk_has(h, newl, s->text))
			return true;
	}
	return false;
}

/* ---- running spatch --------------------------------------------------- */

static void sidecar_escape(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\n')
			buf_puts(b, "\\n");
		else if (*s == '\t')
			buf_puts(b, "\\t");
		else if (*s == '\\')
			buf_puts(b, "\\\\");
		else
			buf_putc(b, *s);
	}
}

static const char op_letter[] = {
	[EDIT_REPLACE] = 'R', [EDIT_INSERT_AFTER] = 'A', [EDIT_INSERT_BEFORE] = 'B'};

/* The -D virtual rule of a run of OP: the .cocci's rules for the other operations and its standalone ones stay off. */
static char *op_virtual(enum edit_op op)
{
	static char names[][5] = {[EDIT_REPLACE] = "op_R", [EDIT_INSERT_AFTER] = "op_A", [EDIT_INSERT_BEFORE] = "op_B"};
	return names[op];
}

/* The sidecar lines of one run on input NAME: the sites of KIND/OP/GROUP not yet done, one a line. */
static void sidecar(struct buf *side, const char *name, enum fix_kind kind, enum edit_op op, const char *group,
		    const site_vec *sites)
{
	for (size_t i = 0; i < sites->len; i++) {
		const struct site *s = &sites->items[i];
		if (s->kind != kind || s->op != op || s->lost || strcmp(s->group, group) != 0)
			continue;
		buf_printf(side, "%s\t%c\t%u\t%u\t%u\t0\t%s\t", name, op_letter[op], s->line, s->col,
			   s->end_line, s->node ? s->node : "-");
		sidecar_escape(side, s->text);
		buf_putc(side, '\n');
	}
}

/* Why a spatch run failed: how it ended and the last non-empty line of its output, which says most. */
static char *spatch_failure(enum fix_kind kind, const struct spawn_result *res)
{
	char *what = spawn_describe(res);
	const char *o = res->output ? res->output : "";
	size_t n = strlen(o);
	while (n && (o[n - 1] == '\n' || o[n - 1] == ' '))
		n--;
	size_t b = n;
	while (b && o[b - 1] != '\n')
		b--;
	char *err = n ? xasprintf("spatch (%s) %s: %.*s", fix_name(kind), what, (int)(n - b), o + b)
		      : xasprintf("spatch (%s) %s", fix_name(kind), what);
	free(what);
	return err;
}

/*
 * Runs spatch for the sites of KIND/OP/GROUP not yet done, from CUR to *OUT.
 * Returns 0, or -1 with *ERR set (spatch failed: the file's error).
 */
/* The spatch input of J in its work directory DIR, relative to TMPDIR: fN/in.c (in.h for a header). */
static char *input_name(const struct job *j, const char *dir)
{
	size_t plen = strlen(j->out->path), tl = strlen(j->tmpdir);
	const char *rel = strncmp(dir, j->tmpdir, tl) == 0 && dir[tl] == '/' ? dir + tl + 1 : dir;
	return xasprintf("%s/in.%s", rel, plen > 2 && strcmp(j->out->path + plen - 2, ".h") == 0 ? "h" : "c");
}

static int run_spatch(struct job *j, const char *dir, enum fix_kind kind, enum edit_op op,
		      const char *group, const site_vec *sites, const char *cur, size_t cur_len, char **out,
		      size_t *out_len, char **err)
{
	int ret = -1;
	struct buf side = BUF_INIT;
	struct spawn_result res = SPAWN_RESULT_INIT;
	int timeout_sec = j->opts->timeout_sec > 0 ? j->opts->timeout_sec : 60;
	/*
	 * spatch 1.1.1 copies its output with `sh -c "cp ... <input name>"`,
	 * unquoted: it must never see a user's file name (docs/spatch.md).
	 */
	/* the input as named to spatch (relative to TMPDIR, where it runs): the sidecar's key */
	char *in = input_name(j, dir);
	char *outp = xasprintf("%s/out.c", dir), *sidep = xasprintf("%s/sites.txt", dir);
	char *cocci = xasprintf("%s/cocci/%s.cocci", j->tmpdir, fix_name(kind));
	char *sites_arg = xasprintf("sites=%s", sidep);
	char *timeout = xasprintf("%d", timeout_sec);
	char *in_path = xasprintf("%s/%s", j->tmpdir, in);

	buf_puts(&side, "# path op line col end_line end_col node text\n");
	sidecar(&side, in, kind, op, group, sites);
	unlink(outp);
	if (write_file(sidep, side.ptr, side.len) < 0 || write_file(in_path, cur, cur_len) < 0) {
		*err = xstrdup(error_last());
		goto done;
	}
	char *argv[18] = {(char *)j->opts->spatch, "--sp-file", cocci, "-D", sites_arg, "-D", op_virtual(op),
			  "--very-quiet", "--no-show-diff", "--no-includes", "--timeout", timeout,
			  "-o", outp, in, NULL};
	if (j->python) {
		memmove(argv + 3, argv + 1, 15 * sizeof *argv); /* with the NULL */
		argv[1] = "--python";
		argv[2] = (char *)j->python;
	}
	/* spatch's own --timeout covers matching; ours also covers parsing.
	 * It runs in TMPDIR: it resolves #include "cocci/sidecar.cocci" there. */
	if (j->spawned)
		atomic_fetch_add(j->spawned, 1);
	if (spawn_run(argv, j->tmpdir, timeout_sec + 5, &res) < 0) {
		*err = xasprintf("spatch: %s", error_last());
		goto done;
	}
	if (!res.timed_out && !res.signal && res.exit_code != 0 && res.output &&
	    strstr(res.output, "no modified files")) {
		/* spatch refuses -o when it changed nothing: the text is unchanged. */
		*out = xstrndup(cur, cur_len);
		*out_len = cur_len;
		ret = 0;
		goto done;
	}
	if (res.timed_out || res.signal || res.exit_code != 0) {
		*err = spatch_failure(kind, &res);
		goto done;
	}
	if (read_file(outp, out, out_len) < 0) {
		*err = xasprintf("spatch (%s) wrote no output: %s", fix_name(kind), error_last());
		goto done;
	}
	ret = 0;
done:
	spawn_result_release(&res);
	buf_release(&side);
	free(in);
	free(in_path);
	free(outp);
	free(sidep);
	free(cocci);
	free(sites_arg);
	free(timeout);
	return ret;
}

/* ---- one spatch process for the runs of many files ---------------------- */

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

struct batcher {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int tokens, computing, wanting;
	int waking; /* threads whose run is done but that have not taken the lock since */
	bool running;
	struct request *queue;
	atomic_uint chunks; /* names the batch directories */
	atomic_uint processes, batched; /* statistics */
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

static void batcher_enter(struct batcher *b)
{
	pthread_mutex_lock(&b->mu);
	take_token(b);
	pthread_mutex_unlock(&b->mu);
}

static void batcher_leave(struct batcher *b)
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
	char **argv = xcalloc(c->n + 16, sizeof *argv);
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
				"--no-includes", "--timeout", timeout, "--in-place"};
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
static int spatch_one(struct job *j, const char *dir, enum fix_kind kind, enum edit_op op, const char *group,
		      const site_vec *sites, const char *text, size_t len, char **out, size_t *out_len, char **err)
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

/* ---- giving spatch only the functions it changes ------------------------ */

/* Bytes [s, e) of line L of LI (with its newline). */
static void line_span(const struct lines *li, unsigned L, size_t *s, size_t *e)
{
	*s = L >= 1 && L <= li->start.len ? li->start.items[L - 1] : li->len;
	*e = L < li->start.len ? li->start.items[L] : li->len;
}

/*
 * Scans one line [i, le) of TEXT for comments, starting inside a block
 * comment when *COMMENT; leaves *COMMENT true when one stays open. String
 * and character literals are skipped: a comment opener in a string opens
 * nothing.
 */
static void scan_comments(const char *text, size_t i, size_t le, bool *comment)
{
	while (i < le) {
		char ch = text[i];
		if (*comment) {
			if (ch == '*' && i + 1 < le && text[i + 1] == '/') {
				*comment = false;
				i++;
			}
		} else if (ch == '/' && i + 1 < le && text[i + 1] == '*') {
			*comment = true;
			i++;
		} else if (ch == '/' && i + 1 < le && text[i + 1] == '/') {
			return;
		} else if (ch == '"' || ch == '\'') {
			for (i++; i < le && text[i] != ch; i++)
				if (text[i] == '\\')
					i++;
		}
		i++;
	}
}

/*
 * Blanks [s, e) of OUT (a copy of TEXT) but its newlines and its directive
 * lines, a directive's backslash-continued lines with it. A line that
 * starts inside a comment is no directive. False, OUT untouched, when a
 * kept directive leaves a comment open (its blanked rest would not close
 * it).
 */
static bool blank_but_directives(char *out, const char *text, size_t s, size_t e)
{
	for (int pass = 0; pass < 2; pass++) {
		bool comment = false, cont = false;
		size_t i = s;
		while (i < e) {
			size_t ls = i, le = i;
			while (le < e && text[le] != '\n')
				le++;
			while (i < le && (text[i] == ' ' || text[i] == '\t'))
				i++;
			bool directive = cont || (!comment && i < le && text[i] == '#');
			scan_comments(text, ls, le, &comment);
			if (pass == 0 && directive && comment)
				return false;
			if (pass == 1 && !directive)
				for (size_t k = ls; k < le; k++)
					out[k] = ' ';
			cont = directive && le > ls && text[le - 1] == '\\';
			i = le < e ? le + 1 : le;
		}
	}
	return true;
}

/*
 * Blanks in OUT (a copy of TEXT) the attributes `__attribute__((...))` of
 * [s, e), newlines kept, each closed before the end of its statement.
 * spatch 1.1.1 does not parse one after a local's declarator (2.4 s390io.c:
 * `long cr6 __attribute__ ((aligned (8)));`) and then changes nothing in
 * the function (the neutraliser of source.c does the like for tree-sitter,
 * on a text spatch never sees). Returns whether one was blanked.
 */
static bool blank_attributes(char *out, const char *text, size_t s, size_t e)
{
	bool any = false;
	for (size_t i = s; i + 11 <= e; i++) {
		if (text[i] != '_' || (i > 0 && (is_ident_char(text[i - 1]))) || memcmp(text + i, "__attribute", 11) != 0)
			continue;
		size_t k = i + 11;
		if (k + 2 <= e && memcmp(text + k, "__", 2) == 0)
			k += 2;
		if (k < e && is_ident_char(text[k]))
			continue;
		while (k < e && (text[k] == ' ' || text[k] == '\t' || text[k] == '\n'))
			k++;
		if (k + 1 >= e || text[k] != '(' || text[k + 1] != '(')
			continue;
		int depth = 0;
		size_t end = 0;
		for (size_t q = k; q < e && !end; q++) {
			if (text[q] == ';' || text[q] == '{' || text[q] == '}' || text[q] == '"' || text[q] == '/')
				break; /* not an attribute of one declaration (or a string, or a comment) */
			depth += text[q] == '(';
			depth -= text[q] == ')';
			if (depth == 0)
				end = q + 1;
		}
		if (!end)
			continue;
		for (size_t q = i; q < end; q++)
			if (out[q] != '\n')
				out[q] = ' ';
		any = true;
		i = end - 1;
	}
	return any;
}

/*
 * CUR with every top-level function that holds no site of this run blanked
 * (its bytes but newlines made spaces: lines and columns stay), or NULL
 * when nothing would be blanked. spatch's time goes into parsing and
 * matching every function of its input; on a large file with one site
 * most of it is wasted. The directive lines inside a blanked function
 * stay (with their continuation lines), so every #if keeps its #endif; a
 * function with a parse error, or whose directives open a comment they do
 * not close, stays whole.
 */
static char *sliced_input(const char *path, const char *cur, size_t cur_len, const site_vec *sites,
			  enum fix_kind kind, enum edit_op op, const char *group)
{
	struct lines li;
	lines_init(&li, cur, cur_len);
	VEC(size_t) at = VEC_INIT; /* [start, end] offsets of this run's sites */
	for (size_t i = 0; i < sites->len; i++) {
		const struct site *st = &sites->items[i];
		if (st->lost || st->kind != kind || st->op != op || strcmp(st->group, group) != 0)
			continue;
		size_t a, b, x, y;
		line_span(&li, st->line, &a, &b);
		line_span(&li, st->end_line, &x, &y);
		vec_push(&at, a);
		vec_push(&at, y);
	}
	struct source src;
	source_init(&src, path, xstrndup(cur, cur_len), cur_len);
	TSTree *tree = ts_parse_c(src.parse_text, cur_len);
	char *out = NULL;
	TSNode root = tree ? ts_tree_root_node(tree) : (TSNode){0};
	bool blanked = false, attributes = false;
	for (uint32_t i = 0; tree && i < ts_node_named_child_count(root); i++) {
		TSNode fn = ts_node_named_child(root, i);
		if (!ts_type_is(fn, "function_definition") || ts_node_has_error(fn))
			continue;
		size_t s = ts_node_start_byte(fn), e = ts_node_end_byte(fn);
		bool holds = false;
		for (size_t k = 0; k + 1 < at.len && !holds; k += 2)
			holds = at.items[k] < e && at.items[k + 1] > s;
		if (!out)
			out = xstrndup(cur, cur_len);
		if (holds)
			attributes |= blank_attributes(out, cur, s, e); /* a site on such a line: spliced whole */
		else
			blanked |= blank_but_directives(out, cur, s, e);
	}
	if (tree)
		ts_tree_delete(tree);
	source_release(&src);
	vec_release(&at);
	lines_release(&li);
	if (!blanked && !attributes) {
		free(out);
		return NULL;
	}
	return out;
}

/*
 * CUR with the changes spatch made to SIN (CUR sliced: same lines) giving
 * SOUT, or NULL when a change touches a line where SIN and CUR differ (a
 * blanked line: the slice was not enough, run on the whole text instead).
 */
static char *splice_back(const char *cur, size_t cur_len, const char *sin, const char *sout, size_t sout_len,
			 size_t *out_len)
{
	textdiff_hunk_vec hunks = VEC_INIT;
	if (textdiff_hunks(sin, cur_len, sout, sout_len, &hunks) < 0)
		return NULL;
	struct lines lc, lo;
	lines_init(&lc, cur, cur_len);
	lines_init(&lo, sout, sout_len);
	struct buf b = BUF_INIT;
	size_t copied = 0; /* bytes of CUR already in B */
	bool ok = true;
	for (size_t i = 0; i < hunks.len && ok; i++) {
		const struct textdiff_hunk *h = &hunks.items[i];
		size_t from, to, x, y;
		/* the old side: lines old_start.. (a pure insertion goes after old_start) */
		unsigned first = h->old_lines ? h->old_start : h->old_start + 1;
		line_span(&lc, first, &from, &x);
		to = from;
		if (h->old_lines) {
			line_span(&lc, h->old_start + h->old_lines - 1, &x, &to);
			ok = memcmp(cur + from, sin + from, to - from) == 0;
		}
		buf_add(&b, cur + copied, from - copied);
		if (h->new_lines) {
			size_t ns, ne;
			line_span(&lo, h->new_start, &ns, &y);
			line_span(&lo, h->new_start + h->new_lines - 1, &y, &ne);
			buf_add(&b, sout + ns, ne - ns);
		}
		copied = to;
	}
	buf_add(&b, cur + copied, cur_len - copied);
	lines_release(&lc);
	lines_release(&lo);
	vec_release(&hunks);
	if (!ok) {
		buf_release(&b);
		return NULL;
	}
	*out_len = b.len;
	return buf_detach(&b);
}

/*
 * run_spatch() on the functions that hold this run's sites only, the
 * result spliced back into CUR; on the whole of CUR when slicing does not
 * apply or its result cannot be spliced.
 */
static int run_spatch_sliced(struct job *j, const char *dir, enum fix_kind kind, enum edit_op op,
			     const char *group, const site_vec *sites, const char *cur, size_t cur_len,
			     char **out, size_t *out_len, char **err)
{
	char *sin = j->opts->no_slice ? NULL : sliced_input(j->out->path, cur, cur_len, sites, kind, op, group);
	if (!sin)
		return spatch_one(j, dir, kind, op, group, sites, cur, cur_len, out, out_len, err);
	char *sout = NULL;
	size_t sout_len = 0;
	int rc = spatch_one(j, dir, kind, op, group, sites, sin, cur_len, &sout, &sout_len, err);
	if (rc == 0) {
		*out = splice_back(cur, cur_len, sin, sout, sout_len, out_len);
		free(sout);
	}
	free(sin);
	if (rc == 0 && !*out)
		return run_spatch(j, dir, kind, op, group, sites, cur, cur_len, out, out_len, err);
	return rc;
}

/* ---- one file ---------------------------------------------------------- */

static void refuse(struct file_change *c, struct finding *f, char *reason)
{
	struct refusal r = {f, reason};
	vec_push(&c->refused, r);
}

/*
 * spatch re-parses a function after a modifying rule changed it, and later
 * rules see positions relative to that fragment: so a run may contain only
 * sites that one rule of the .cocci changes. Replacements are grouped by
 * node type and the replacement's leading word (get_cpu_var, per_cpu,
 * static, ...); insertions are one rule per operation.
 */
static void site_group(struct site *s)
{
	size_t n = 0;
	if (s->op == EDIT_REPLACE)
		while (s->text[n] && (s->text[n] == '_' || (s->text[n] >= 'a' && s->text[n] <= 'z') ||
				      (s->text[n] >= 'A' && s->text[n] <= 'Z') ||
				      (s->text[n] >= '0' && s->text[n] <= '9')))
			n++;
	snprintf(s->group, sizeof s->group, "%s:%.*s", s->op == EDIT_REPLACE && s->node ? s->node : "",
		 (int)(n > 24 ? 24 : n), s->text);
}

static void build_sites(struct job *j, const bool *active, const struct lines *l, site_vec *out)
{
	for (size_t fi = 0; fi < j->findings.len; fi++) {
		if (!active[fi])
			continue;
		struct finding *f = j->findings.items[fi];
		for (size_t ei = 0; ei < f->edits.len; ei++) {
			const struct edit *e = &f->edits.items[ei];
			const char *text = e->text ? e->text : "";
			struct site *s = NULL;
			if (e->by_text)
				continue; /* made after spatch: lines_drop_emptied_conditionals() */
			for (size_t k = 0; k < out->len; k++) {
				struct site *o = &out->items[k];
				if (o->kind == f->fix && o->op == e->op && o->start == e->start.offset &&
				    o->end == e->end.offset && strcmp(o->text, text) == 0) {
					s = o;
					break;
				}
			}
			if (!s) {
				struct site ns = {0};
				ns.kind = f->fix;
				ns.op = e->op;
				ns.start = e->start.offset;
				ns.end = e->end.offset;
				ns.node = e->node;
				ns.text = text;
				site_group(&ns);
				unsigned ec;
				lines_pos(l, ns.start, &ns.line, &ns.col);
				lines_pos(l, ns.end > ns.start ? ns.end - 1 : ns.end, &ns.end_line, &ec);
				ns.orig_line = ns.line;
				vec_push(out, ns);
				s = &out->items[out->len - 1];
			}
			bool have = false;
			for (size_t k = 0; k < s->owners.len; k++)
				have |= s->owners.items[k] == fi;
			if (!have)
				vec_push(&s->owners, fi);
		}
	}
}

/*
 * The top-level definition or declaration that holds byte AT of the tree
 * under N, looking through preprocessor conditionals; the null node when AT
 * lies in none, or in one tree-sitter could not parse.
 */
static TSNode function_at(TSNode n, size_t at)
{
	for (;;) {
		TSNode next = ts_null();
		for (uint32_t i = 0; i < ts_node_named_child_count(n); i++) {
			TSNode c = ts_node_named_child(n, i);
			if (ts_node_start_byte(c) <= at && at < ts_node_end_byte(c)) {
				next = c;
				break;
			}
		}
		if (ts_node_is_null(next))
			return next;
		const char *t = ts_node_type(next);
		if (strncmp(t, "preproc_if", 10) != 0 && strncmp(t, "preproc_el", 10) != 0)
			return ts_node_has_error(next) ? ts_null() : next;
		n = next;
	}
}

/*
 * Runs the groups of one fix kind and operation side by side where they
 * cannot meet: spatch re-parses a top-level definition a rule changed, so
 * one takes one group per run (site_group()), but they are independent of
 * each other. Each site's group becomes its round: the k-th distinct group
 * of its definition runs in round k. Sites outside any definition, or in
 * one with a parse error, count as one definition; on a file tree-sitter
 * cannot parse every group keeps a round of its own.
 */
static void merge_groups(site_vec *sites, const char *path, const char *text, size_t len)
{
	struct source src;
	source_init(&src, path, xstrndup(text, len), len);
	TSTree *tree = ts_parse_c(src.parse_text, len);
	size_t n = sites->len;
	size_t *fn = xcalloc(n ? n : 1, sizeof *fn); /* 1 + the definition's start byte, or 0 */
	for (size_t i = 0; tree && i < n; i++) {
		TSNode f = function_at(ts_tree_root_node(tree), sites->items[i].start);
		fn[i] = ts_node_is_null(f) ? 0 : 1 + (size_t)ts_node_start_byte(f);
	}
	unsigned *round = xcalloc(n ? n : 1, sizeof *round);
	for (size_t i = 0; tree && i < n; i++) {
		const struct site *s = &sites->items[i];
		unsigned next = 0; /* the groups met in this definition so far */
		bool same = false;
		for (size_t q = 0; q < i && !same; q++) {
			const struct site *o = &sites->items[q];
			if (o->kind != s->kind || o->op != s->op || fn[q] != fn[i])
				continue;
			if (strcmp(o->group, s->group) == 0)
				round[i] = round[q], same = true;
			else if (round[q] + 1 > next)
				next = round[q] + 1;
		}
		if (!same)
			round[i] = next;
	}
	for (size_t i = 0; tree && i < n; i++)
		snprintf(sites->items[i].group, sizeof sites->items[i].group, "round %u", round[i]);
	free(round);
	free(fn);
	if (tree) {
		ts_parent_forget(tree);
		ts_tree_delete(tree);
	}
	source_release(&src);
}

static void sites_release(site_vec *v)
{
	for (size_t i = 0; i < v->len; i++)
		vec_release(&v->items[i].owners);
	vec_release(v);
}

static void mark_failed(char **why, const struct site *s, const char *fmt)
{
	for (size_t k = 0; k < s->owners.len; k++)
		if (!why[s->owners.items[k]])
			why[s->owners.items[k]] =
				xasprintf(fmt, s->node ? s->node : "site", s->orig_line);
}

/* The group of the first site of KIND/OP not yet done, or NULL. */
static const char *next_group(const site_vec *sites, enum fix_kind kind, enum edit_op op)
{
	for (size_t i = 0; i < sites->len; i++)
		if (sites->items[i].kind == kind && sites->items[i].op == op && !sites->items[i].lost)
			return sites->items[i].group;
	return NULL;
}

/*
 * After the run of KIND/OP/GROUP turned CUR into NEXT: verifies the sites it
 * was given (done with them either way) and remaps the others into NEXT.
 * WHY[i] is set for the findings whose site failed. 0, or -1 with *ERR.
 */
static int after_run(site_vec *sites, enum fix_kind kind, enum edit_op op, const char *group,
		     const char *cur, size_t cur_len, const char *next, size_t next_len, char **why, char **err)
{
	textdiff_hunk_vec hunks = VEC_INIT;
	if (textdiff_hunks(cur, cur_len, next, next_len, &hunks) < 0) {
		*err = xstrdup(error_last());
		return -1;
	}
	struct lines oldl, newl;
	lines_init(&oldl, cur, cur_len);
	lines_init(&newl, next, next_len);
	for (size_t i = 0; i < sites->len; i++) {
		struct site *s = &sites->items[i];
		if (s->lost)
			continue;
		if (s->kind == kind && s->op == op && strcmp(s->group, group) == 0) {
			if (!site_verified(s, &hunks, &newl))
				mark_failed(why, s, "spatch did not change the %s at "
						    "line %u (function not parsed, or "
						    "the pattern did not match)");
			s->lost = true; /* done with it */
			continue;
		}
		unsigned line = s->line, col = s->col;
		if (!lines_map_pos(&hunks, &oldl, &newl, &line, &col)) {
			s->lost = true;
			mark_failed(why, s, "the %s at line %u was changed by an "
					    "earlier rewrite of this file");
			continue;
		}
		s->line = line;
		s->col = col;
		s->end_line = lines_map_line(&hunks, s->end_line);
	}
	lines_release(&oldl);
	lines_release(&newl);
	vec_release(&hunks);
	return 0;
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
	if (read_file(c->path, &c->old_text, &c->old_len) < 0) {
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
	if (mkdir(dir, 0700) != 0) {
		c->error = xasprintf("%s: %s", dir, strerror(errno));
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
	size_t refused = validate_rewrite(j->out->path, j->out->old_text, j->out->old_len, text, len,
					  applied.items, applied.len,
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
		/* spatch moves a trailing comment onto a put_cpu() it adds after it */
		size_t kept_len;
		char *kept = lines_keep_trailing_comments(c->old_text, c->old_len, text, len, &kept_len);
		free(text);
		/* and puts a brace it opens after a `//` comment before the comment */
		text = lines_brace_before_comment(c->old_text, c->old_len, kept, kept_len, &len);
		free(kept);
		/* and leaves the #if around struct fields it removed, empty (the plan removes it) */
		if (plans_by_text(j, active)) {
			kept = lines_drop_emptied_conditionals(c->old_text, c->old_len, text, len, &kept_len);
			free(text);
			text = kept;
			len = kept_len;
		}
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

/*
 * The Python interpreter spatch would start, resolved once: spatch runs
 * `python3` from PATH in every process to find it, and when that is a
 * wrapper (a pyenv shim is a shell script) the wrapper's start-up is most
 * of each spatch run (0.8 s against 0.16 s measured). The interpreter's own
 * path, given with --python, is the same Python without the detour. NULL
 * when python3 is not found or does not answer: spatch then finds its own.
 */
static char *resolve_python(void)
{
	char *py = NULL;
	if (spawn_find_program("python3", &py) < 0)
		return NULL;
	char *argv[] = {py, "-c", "import sys; sys.stdout.write(sys.executable)", NULL};
	struct spawn_result res = SPAWN_RESULT_INIT;
	char *exe = NULL;
	if (spawn_run(argv, NULL, 20, &res) == 0 && !res.timed_out && !res.signal && res.exit_code == 0 &&
	    res.output && res.output[0] == '/' && !strchr(res.output, '\n') && access(res.output, X_OK) == 0)
		exe = xstrdup(res.output);
	spawn_result_release(&res);
	free(py);
	return exe;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static bool fixable(const struct finding *f)
{
	return f->fix != FIX_NONE && f->edits.len > 0 && !f->protected_site;
}

/* The temporary directory of a plan, holding the built-in semantic patches; *OUT is owned. */
static int make_workdir(char **out)
{
	const char *tmp = getenv("TMPDIR");
	char *tmpdir = xasprintf("%s/preemptify-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	*out = NULL;
	if (!mkdtemp(tmpdir)) {
		error_set("%s: %s", tmpdir, strerror(errno));
		free(tmpdir);
		return -1;
	}
	*out = tmpdir;
	/* TMPDIR/cocci/ as in the source tree; k == FIX_NONE: the sidecar code
	 * every fix kind's semantic patch #includes. */
	char *cocci_dir = xasprintf("%s/cocci", tmpdir);
	int made = mkdir(cocci_dir, 0700) == 0 ? 0 : error_set("%s: %s", cocci_dir, strerror(errno));
	free(cocci_dir);
	if (made < 0)
		return -1;
	for (int k = 0; k < FIX_COUNT; k++) {
		char *name = k == FIX_NONE ? xstrdup("sidecar.cocci")
					   : xasprintf("%s.cocci", fix_name((enum fix_kind)k));
		const struct embedded_file *ef = embedded_find(name);
		char *path = xasprintf("%s/cocci/%s", tmpdir, name);
		int r = ef ? write_file(path, ef->data, ef->len)
			   : error_set("semantic patch %s is not built in", name);
		free(name);
		free(path);
		if (r < 0)
			return -1;
	}
	return 0;
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
	struct batcher b = {.tokens = cpus};
	pthread_mutex_init(&b.mu, NULL);
	pthread_cond_init(&b.cv, NULL);
	atomic_init(&b.chunks, 0);
	atomic_init(&b.processes, 0);
	atomic_init(&b.batched, 0);
	char *python = njobs ? resolve_python() : NULL;
	for (size_t k = 0; k < njobs; k++) {
		jobs[k].opts = &o;
		jobs[k].tmpdir = tmpdir;
		jobs[k].batch = opts->no_batch ? NULL : &b;
		jobs[k].python = python;
		jobs[k].spawned = &b.processes;
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
	pthread_cond_destroy(&b.cv);
	pthread_mutex_destroy(&b.mu);
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
		nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
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
