/*
 * Rewrite: turn the fixable findings of a set of files into new file
 * contents, by running Coccinelle (spatch) with the semantic patches in
 * cocci/ on exactly the sites the analysis chose, then verifying the result.
 * Nothing here writes user files: apply/commit do that with the contents.
 */
#ifndef PREEMPTIFY_REWRITE_H
#define PREEMPTIFY_REWRITE_H

#include "pipeline/scan.h"

/*
 * A store of spatch steps' outputs by their inputs, kept by the caller
 * (the cache, cli/cache.h): GET returns true with *OUT (malloc'd) the
 * output of an earlier run of the same step; PUT records a step that
 * succeeded. KEY holds all a step's output depends on except the tool's
 * and spatch's own bytes, which the store adds. Called from several
 * threads at once.
 */
struct spatch_memo {
	void *ctx;
	bool (*get)(void *ctx, const char *key, size_t key_len, char **out, size_t *out_len);
	void (*put)(void *ctx, const char *key, size_t key_len, const char *out, size_t out_len);
};

struct rewrite_options {
	int jobs;           /* parallel spatch processes; <= 0: online CPUs */
	int timeout_sec;    /* per spatch process; default 60 */
	const char *spatch; /* program name or path; default "spatch" */
	/* the options the findings were scanned with (re-analysis uses them); NULL: defaults */
	const struct scan_options *scan;
	/* give spatch whole files, not only the functions that hold sites (for comparison) */
	bool no_slice;
	/* one spatch process per file and run instead of one per run of many files (for comparison) */
	bool no_batch;
	/* a phase "rewriting" over the files with fixable sites (util/progress.h), or NULL */
	struct progress *progress;
	/* earlier spatch steps' outputs, reused when a step's input recurs; or NULL */
	const struct spatch_memo *memo;
	/* earlier validations' answers, reused when the texts, the edits and the scan context recur; or NULL */
	const struct memo *validated;
};
#define REWRITE_OPTIONS_INIT {0, 60, "spatch", NULL, false, false, NULL, NULL, NULL}

/* A fixable finding that was not changed, and why. */
struct refusal {
	struct finding *finding; /* points into the scan result */
	char *reason;            /* owned */
};

/* The planned new contents of one file. */
struct file_change {
	char *path;          /* as walked, owned */
	char *old_text;      /* what was read (compare before writing), owned */
	size_t old_len;
	char *new_text;      /* owned; equal to old_text when nothing changed */
	size_t new_len;
	VEC(struct finding *) fixed;   /* findings whose edits were applied */
	VEC(struct refusal) refused;   /* fixable findings left unchanged */
	char *error;         /* spatch failure / timeout for this file, or NULL */
};

struct rewrite_result {
	VEC(struct file_change) files; /* in scan order; only files with fixable findings */
	unsigned spatch_processes;     /* spatch processes started */
	unsigned spatch_batched;       /* file runs made by a process shared with other files */
	unsigned spatch_reused;        /* file runs answered by the memo (options.memo) */
};
#define REWRITE_RESULT_INIT {VEC_INIT, 0, 0, 0}

/*
 * Plans the rewrite of every file with fixable findings in SCAN (which must
 * outlive OUT: refusals and fixed entries point into it). One spatch
 * process per file, isolated: a failure or timeout is recorded in that
 * file's `error` and never affects the others. Returns the number of files
 * whose rewrite failed, or -1 with the error slot set when spatch cannot be
 * run at all (not installed).
 */
int rewrite_plan(const struct scan_result *scan, const struct rewrite_options *opts,
		 struct rewrite_result *out);

void rewrite_result_release(struct rewrite_result *r);

#endif
