/*
 * The progress line (progress.h). Counters are atomics so workers report
 * without a lock; drawing takes a mutex with trylock, so a worker never
 * waits for another one's write(2), and a drawn line is never interleaved.
 */
#include "util/progress.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

#define REDRAW_NS (100 * 1000 * 1000LL) /* at most 10 redraws a second */

struct progress {
	int fd;
	pthread_mutex_t draw; /* held while the phase changes or the line is written */
	const char *what;
	bool fixes;
	bool drawn;           /* a line is on the terminal */
	atomic_size_t total, done, sites, fixed;
	atomic_llong last_ns; /* when the line was last drawn */
	int64_t start_ns;     /* when the phase started */
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

struct progress *progress_new(int fd)
{
	const char *term = getenv("TERM");
	if (term && strcmp(term, "dumb") == 0)
		return NULL;
	struct progress *p = xcalloc(1, sizeof *p);
	p->fd = fd;
	pthread_mutex_init(&p->draw, NULL);
	p->what = "";
	atomic_init(&p->total, 0);
	atomic_init(&p->done, 0);
	atomic_init(&p->sites, 0);
	atomic_init(&p->fixed, 0);
	atomic_init(&p->last_ns, 0);
	p->start_ns = now_ns();
	return p;
}

/* "m:ss" or "h:mm:ss". */
static void put_duration(struct buf *b, int64_t ns)
{
	long long s = ns / 1000000000LL;
	if (s >= 3600)
		buf_printf(b, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
	else
		buf_printf(b, "%lld:%02lld", s / 60, s % 60);
}

/* Writes all of S; a terminal that refuses it only loses the progress line. */
static void put_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* The terminal's width, 80 when unknown. */
static size_t columns(int fd)
{
	struct winsize ws;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/* Draws the line; the caller holds p->draw. */
static void draw(struct progress *p, int64_t now)
{
	size_t total = atomic_load(&p->total), done = atomic_load(&p->done);
	size_t sites = atomic_load(&p->sites), fixed = atomic_load(&p->fixed);
	int64_t elapsed = now - p->start_ns;
	struct buf line = BUF_INIT;
	buf_printf(&line, "%s: ", p->what);
	if (total) {
		buf_printf(&line, "%zu/%zu files, %zu site%s", done, total, sites, sites == 1 ? "" : "s");
		if (p->fixes)
			buf_printf(&line, ", %zu fixed", fixed);
		buf_puts(&line, ", ");
	}
	put_duration(&line, elapsed);
	if (total && done && done < total) {
		buf_puts(&line, ", ETA ");
		put_duration(&line, (int64_t)((double)elapsed * (double)(total - done) / (double)done));
	}
	/* a line wider than the terminal wraps, and "\r" no longer returns to its start */
	size_t width = columns(p->fd);
	size_t len = line.len < width ? line.len : width - 1;
	struct buf out = BUF_INIT;
	buf_printf(&out, "\r%.*s\033[K", (int)len, buf_cstr(&line));
	put_all(p->fd, out.ptr, out.len);
	buf_release(&out);
	buf_release(&line);
	p->drawn = true;
	atomic_store(&p->last_ns, now);
}

void progress_phase(struct progress *p, const char *what, size_t total, bool fixes)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->draw);
	p->what = what;
	p->fixes = fixes;
	atomic_store(&p->total, total);
	atomic_store(&p->done, 0);
	atomic_store(&p->sites, 0);
	atomic_store(&p->fixed, 0);
	p->start_ns = now_ns();
	draw(p, p->start_ns);
	pthread_mutex_unlock(&p->draw);
}

void progress_add(struct progress *p, size_t files, size_t sites, size_t fixed)
{
	if (!p)
		return;
	atomic_fetch_add(&p->done, files);
	atomic_fetch_add(&p->sites, sites);
	atomic_fetch_add(&p->fixed, fixed);
	int64_t now = now_ns();
	if (now - atomic_load(&p->last_ns) < REDRAW_NS)
		return;
	if (pthread_mutex_trylock(&p->draw) != 0)
		return; /* another thread is drawing */
	if (now - atomic_load(&p->last_ns) >= REDRAW_NS)
		draw(p, now);
	pthread_mutex_unlock(&p->draw);
}

void progress_clear(struct progress *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->draw);
	if (p->drawn)
		put_all(p->fd, "\r\033[K", 4);
	p->drawn = false;
	pthread_mutex_unlock(&p->draw);
}

void progress_free(struct progress *p)
{
	if (!p)
		return;
	progress_clear(p);
	pthread_mutex_destroy(&p->draw);
	free(p);
}
