/*
 * The parts of the rewrite (rewrite.h) and what they share: a file's job,
 * its spatch sites, and the batcher that lets the files' runs share spatch
 * processes. rewrite.c plans the jobs and runs each file's attempts;
 * rewrite_sites.c builds, groups, verifies and remaps the sites;
 * rewrite_slice.c gives spatch only the functions it changes;
 * rewrite_batch.c shares processes between files; rewrite_spatch.c runs
 * spatch itself. Only rewrite.c's rewrite_plan() is for other modules.
 */
#ifndef PREEMPTIFY_REWRITE_INTERNAL_H
#define PREEMPTIFY_REWRITE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "fix/rewrite.h"

struct lines;

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

struct request;

/* Shared by every job of a plan: see rewrite_batch.c. */
struct batcher {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int tokens, computing, wanting;
	int waking; /* threads whose run is done but that have not taken the lock since */
	bool running;
	struct request *queue;
	atomic_uint chunks; /* names the batch directories */
	atomic_uint processes, batched, reused; /* statistics */
};

/* The rewrite of one file. */
struct job {
	const struct rewrite_options *opts;
	const char *tmpdir;
	size_t index;
	VEC(struct finding *) findings;
	struct file_change *out;
	struct batcher *batch; /* shared by every job of the plan */
	const char *python;    /* spatch --python: the interpreter, resolved once; or NULL */
	atomic_uint *spawned;  /* spatch processes of one-file runs, counted for -v */
	struct batcher *batch_stats; /* the plan's statistics, also without batching */
};

/* ---- sites (rewrite_sites.c) ---- */

/* Appends to OUT the sites of the ACTIVE findings of J, positioned in L (the file as read). */
void build_sites(struct job *j, const bool *active, const struct lines *l, site_vec *out);

/* Gives each site of SITES (in TEXT, of file PATH) its round as group: groups that cannot meet share a run. */
void merge_groups(site_vec *sites, const char *path, const char *text, size_t len);

void sites_release(site_vec *v);

/* The group of the first site of KIND/OP not yet done, or NULL. */
const char *next_group(const site_vec *sites, enum fix_kind kind, enum edit_op op);

/*
 * After the run of KIND/OP/GROUP turned CUR into NEXT: verifies the sites it
 * was given (done with them either way) and remaps the others into NEXT.
 * WHY[i] is set for the findings whose site failed. 0, or -1 with *ERR.
 */
int after_run(site_vec *sites, enum fix_kind kind, enum edit_op op, const char *group,
	      const char *cur, size_t cur_len, const char *next, size_t next_len, char **why, char **err);

/* ---- slicing (rewrite_slice.c) ---- */

/*
 * run_spatch() on the functions that hold this run's sites only, the
 * result spliced back into CUR; on the whole of CUR when slicing does not
 * apply or its result cannot be spliced.
 */
int run_spatch_sliced(struct job *j, const char *dir, enum fix_kind kind, enum edit_op op,
		      const char *group, const site_vec *sites, const char *cur, size_t cur_len,
		      char **out, size_t *out_len, char **err);

/* ---- the batcher (rewrite_batch.c) ---- */

/* B with TOKENS files computing at a time, no process started yet; batcher_destroy() ends it. */
void batcher_init(struct batcher *b, int tokens);
void batcher_destroy(struct batcher *b);

/* A file's thread starts computing (takes a token) / stops (gives it back). */
void batcher_enter(struct batcher *b);
void batcher_leave(struct batcher *b);

/*
 * run_spatch(), in a batch with other files' runs when there is a batcher;
 * answered by the options' memo when the same step ran before.
 */
int spatch_one(struct job *j, const char *dir, enum fix_kind kind, enum edit_op op, const char *group,
	       const site_vec *sites, const char *text, size_t len, char **out, size_t *out_len, char **err);

/* ---- running spatch (rewrite_spatch.c) ---- */

/*
 * Runs spatch for the sites of KIND/OP/GROUP not yet done, from CUR to *OUT.
 * Returns 0, or -1 with *ERR set (spatch failed: the file's error).
 */
int run_spatch(struct job *j, const char *dir, enum fix_kind kind, enum edit_op op,
	       const char *group, const site_vec *sites, const char *cur, size_t cur_len, char **out,
	       size_t *out_len, char **err);

/* The spatch input of J in its work directory DIR, relative to TMPDIR: fN/in.c (in.h for a header). Owned. */
char *input_name(const struct job *j, const char *dir);

/* The sidecar lines of one run on input NAME: the sites of KIND/OP/GROUP not yet done, one a line. */
void sidecar(struct buf *side, const char *name, enum fix_kind kind, enum edit_op op, const char *group,
	     const site_vec *sites);

/*
 * Into KEY: all a step (KIND/OP/GROUP's sites on TEXT) gives depends on
 * besides the programs' bytes: the programs' paths, the step, the input's
 * kind (.c or .h), its sidecar lines and TEXT. The memo's key.
 */
void step_key(struct buf *key, const struct job *j, enum fix_kind kind, enum edit_op op, const char *group,
	      const site_vec *sites, const char *text, size_t len);

/* The -D virtual rule of a run of OP (static storage). */
char *op_virtual(enum edit_op op);

/* The Python interpreter spatch would start, resolved once (owned), or NULL. */
char *resolve_python(void);

/* The temporary directory of a plan, holding the built-in semantic patches; *OUT is owned. */
int make_workdir(char **out);

/* Removes the work directory DIR and everything in it. */
void remove_workdir(const char *dir);

#endif
