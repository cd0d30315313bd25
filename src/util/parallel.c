/*
 * parallel_for: a fixed set of pthreads taking indices from one atomic
 * counter. Work is handed out one index at a time, so a slow file never
 * holds back a queue of others behind it.
 */
#include "util/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/util.h"

int parallel_default_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

struct pool {
	size_t n;
	atomic_size_t next;
	void (*fn)(size_t i, void *ctx);
	void *ctx;
};

static void *pool_worker(void *arg)
{
	struct pool *p = arg;
	for (;;) {
		size_t i = atomic_fetch_add(&p->next, 1);
		if (i >= p->n)
			return NULL;
		p->fn(i, p->ctx);
	}
}

void parallel_for(size_t n, int jobs, void (*fn)(size_t i, void *ctx), void *ctx)
{
	if (n == 0)
		return;
	if (jobs <= 0)
		jobs = parallel_default_jobs();
	if ((size_t)jobs > n)
		jobs = (int)n;
	struct pool p = {.n = n, .fn = fn, .ctx = ctx};
	atomic_init(&p.next, 0);
	pthread_t *tids = xcalloc((size_t)jobs, sizeof *tids);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	/* Even with one job the work runs on a worker: its stack size is part of the contract. */
	pthread_attr_setstacksize(&attr, PARALLEL_STACK_SIZE);
	int started = 0;
	for (int t = 0; t < jobs; t++)
		if (pthread_create(&tids[started], &attr, pool_worker, &p) == 0)
			started++;
	pthread_attr_destroy(&attr);
	/* No thread at all (resource limits): do the work here rather than not at all. */
	if (started == 0)
		pool_worker(&p);
	for (int t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	free(tids);
}
