/* A minimal parallel_for (placeholder: reconciled with the shared one at merge). */
#include "parallel.h"

#include <pthread.h>
#include <unistd.h>

int parallel_default_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : (int)n;
}

struct pf_state {
	size_t n, next;
	pthread_mutex_t lock;
	void (*fn)(size_t, void *);
	void *ctx;
};

static void *pf_worker(void *arg)
{
	struct pf_state *s = arg;
	for (;;) {
		pthread_mutex_lock(&s->lock);
		size_t i = s->next++;
		pthread_mutex_unlock(&s->lock);
		if (i >= s->n)
			return NULL;
		s->fn(i, s->ctx);
	}
}

void parallel_for(size_t n, int jobs, void (*fn)(size_t i, void *ctx), void *ctx)
{
	struct pf_state s = {n, 0, PTHREAD_MUTEX_INITIALIZER, fn, ctx};
	if (jobs <= 0)
		jobs = parallel_default_jobs();
	if ((size_t)jobs > n)
		jobs = (int)n;
	if (jobs <= 1) {
		for (size_t i = 0; i < n; i++)
			fn(i, ctx);
		return;
	}
	pthread_t th[64];
	int started = 0;
	for (int t = 0; t < jobs && t < 64; t++)
		if (pthread_create(&th[started], NULL, pf_worker, &s) == 0)
			started++;
	pf_worker(&s);
	for (int t = 0; t < started; t++)
		pthread_join(th[t], NULL);
}
