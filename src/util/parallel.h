/* A tiny thread pool: run fn(i, ctx) for i in [0, n) on `jobs` threads. */
#ifndef PREEMPTIFY_PARALLEL_H
#define PREEMPTIFY_PARALLEL_H

#include <stddef.h>

/* Stack size of worker threads. */
#define PARALLEL_STACK_SIZE ((size_t)64 << 20)

/* Online CPUs, at least 1. */
int parallel_default_jobs(void);

/*
 * Calls fn for every index, in no particular order, from up to JOBS threads
 * (<= 0: parallel_default_jobs()), always on worker threads with
 * PARALLEL_STACK_SIZE stacks. Returns when all calls have returned.
 * Callers write results into slot i of their own array, so the output order
 * never depends on scheduling.
 */
void parallel_for(size_t n, int jobs, void (*fn)(size_t i, void *ctx), void *ctx);

#endif
