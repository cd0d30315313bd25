#include "parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

int parallel_default_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

struct pool {
	size_t n;
	atomic_size_t next;
	void (*fn)(size_t, void *);
	void *ctx;
};

static void *worker(void *arg)
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
	if (jobs <= 0)
		jobs = parallel_default_jobs();
	if ((size_t)jobs > n)
		jobs = (int)n;
	struct pool p = {n, 0, fn, ctx};
	pthread_t tids[256];
	if (jobs > 256)
		jobs = 256;
	/* Workers get a large stack: the CFG builder recurses once per nesting level. */
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, PARALLEL_STACK_SIZE);
	int started = 0;
	for (int i = 0; i < jobs; i++)
		if (pthread_create(&tids[started], &attr, worker, &p) == 0)
			started++;
	pthread_attr_destroy(&attr);
	if (started == 0)
		worker(&p); /* no thread could be made: work on the caller's stack */
	for (int i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
}
