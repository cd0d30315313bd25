/*
 * The result cache around a command: a hit replays the stored stdout and
 * stderr and exit code; a miss runs the command with its two streams passed
 * through a pipe each (a thread copies them on to where they went and keeps
 * a copy), then stores the copy. The terminal the streams stood for stays
 * known (cache_terminal_fd), so colour and the progress line do not change.
 */
#define _GNU_SOURCE /* pipe2, dup3, memmem */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cache.h"
#include "cli/cache_key.h"
#include "cli/commands.h"
#include "util/interrupt.h"

/* fds 1 and 2 as they were before the capture (-1: not capturing). */
static int saved_fd[3] = {-1, -1, -1};
/* The errno of the first write to the real stdout that failed while capturing (a full disk, a closed pipe). */
static int out_errno;

int cache_write_error(void)
{
	return out_errno;
}

int cache_terminal_fd(int fd)
{
	int real = fd >= 0 && fd < 3 && saved_fd[fd] >= 0 ? saved_fd[fd] : fd;
	return isatty(real) ? real : -1;
}

struct tee {
	int from[2];      /* read ends of the pipes behind fds 1 and 2 */
	struct buf got[2];
	pthread_t thread;
};

/* P (N bytes) to FD; the errno of a failure (0: written). */
static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void *tee_main(void *arg)
{
	struct tee *t = arg;
	char chunk[65536];
	int open_n = 2;
	while (open_n) {
		struct pollfd pf[2] = {{t->from[0], POLLIN, 0}, {t->from[1], POLLIN, 0}};
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int s = 0; s < 2; s++) {
			if (t->from[s] < 0 || !(pf[s].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t n = read(t->from[s], chunk, sizeof chunk);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				close(t->from[s]);
				t->from[s] = -1; /* poll() ignores a negative fd */
				open_n--;
				continue;
			}
			int werr = write_all(saved_fd[s + 1], chunk, (size_t)n);
			if (werr && s == 0 && !out_errno)
				out_errno = werr; /* read on: the command must not block on a full pipe */
			buf_add(&t->got[s], chunk, (size_t)n);
		}
	}
	return NULL;
}

/* fds 1 and 2 into pipes read by a thread: 0, or -1 (nothing changed). */
static int capture_begin(struct tee *t)
{
	int p[2][2] = {{-1, -1}, {-1, -1}};
	fflush(stdout);
	fflush(stderr);
	if (pipe2(p[0], O_CLOEXEC) < 0 || pipe2(p[1], O_CLOEXEC) < 0)
		goto fail;
	saved_fd[1] = fcntl(1, F_DUPFD_CLOEXEC, 3);
	saved_fd[2] = fcntl(2, F_DUPFD_CLOEXEC, 3);
	if (saved_fd[1] < 0 || saved_fd[2] < 0 || dup2(p[0][1], 1) < 0 || dup2(p[1][1], 2) < 0)
		goto fail;
	close(p[0][1]);
	close(p[1][1]);
	t->from[0] = p[0][0];
	t->from[1] = p[1][0];
	if (pthread_create(&t->thread, NULL, tee_main, t) == 0)
		return 0;
	p[0][1] = p[1][1] = -1;
fail:
	if (saved_fd[1] >= 0)
		dup2(saved_fd[1], 1), close(saved_fd[1]);
	if (saved_fd[2] >= 0)
		dup2(saved_fd[2], 2), close(saved_fd[2]);
	saved_fd[1] = saved_fd[2] = -1;
	for (int s = 0; s < 2; s++)
		for (int e = 0; e < 2; e++)
			if (p[s][e] >= 0)
				close(p[s][e]);
	return -1;
}

/* The streams back where they were; the thread drains the pipes and ends. */
static void capture_end(struct tee *t)
{
	fflush(stdout);
	fflush(stderr);
	dup2(saved_fd[1], 1);
	dup2(saved_fd[2], 2);
	pthread_join(t->thread, NULL);
	close(saved_fd[1]);
	close(saved_fd[2]);
	saved_fd[1] = saved_fd[2] = -1;
}

/*
 * The stored stderr, with the one figure measured during the run (the tree
 * index's seconds, with -v) replaced and what that run reused from the
 * cache (-v) left out: a replay measured and reused nothing else.
 */
static void replay_err(const struct buf *err)
{
	static const char tag[] = "preemptify: tree index: ";
	static const char reuse[] = "preemptify: cache: ", reuse_end[] = " reused from earlier runs, the others ";
	const char *p = err->ptr ? err->ptr : "", *end = p + err->len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *comma = NULL;
		for (const char *c = p; c + 1 < p + n; c++)
			if (c[0] == ',' && c[1] == ' ')
				comma = c;
		if (strncmp(p, tag, sizeof tag - 1) == 0 && comma && n > 2 && memcmp(p + n - 2, " s", 2) == 0)
			fprintf(stderr, "%.*s, not measured: served from the cache\n", (int)(comma - p), p);
		else if (strncmp(p, reuse, sizeof reuse - 1) == 0 && n > sizeof reuse_end - 1 &&
			 memmem(p, n, reuse_end, sizeof reuse_end - 1))
			; /* what the stored run reused: this one reuses its whole output, and says so */
		else
			fwrite(p, 1, n + (nl ? 1 : 0), stderr);
		p += n + (nl ? 1 : 0);
	}
}

/* --no-cache and --cache-dir DIR from ARGV (before any "--"); QUIET: -q or --quiet given. */
static void cache_options(int argc, char **argv, bool *off, const char **dir, bool *quiet)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--no-cache") == 0)
			*off = true;
		else if (strcmp(argv[i], "--cache-dir") == 0 && i + 1 < argc)
			*dir = argv[++i];
		else if (strncmp(argv[i], "--cache-dir=", 12) == 0)
			*dir = argv[i] + 12;
		else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0)
			*quiet = true;
	}
}

/* Runs CMD with its streams captured, and stores them under KEYHEX in DIR when it ran to an answer. */
static int run_and_store(const struct cli_command *cmd, int argc, char **argv, const char *dir,
			 const char *keyhex, size_t files)
{
	struct tee t = {{-1, -1}, {BUF_INIT, BUF_INIT}, 0};
	if (capture_begin(&t) < 0)
		return cmd->run(argc, argv);
	struct cache_entry e = CACHE_ENTRY_INIT;
	e.rc = cmd->run(argc, argv);
	capture_end(&t);
	e.files = files;
	e.out = t.got[0];
	e.err = t.got[1];
	/* only an answer is kept: not a usage error, a failed file or tool, an interrupted run */
	bool answer = e.rc == EXIT_OK || e.rc == EXIT_FOUND || e.rc == EXIT_LEFT;
	if (answer && !interrupted() && !out_errno && cache_store(dir, keyhex, &e) < 0) {
		fprintf(stderr, "preemptify %s: warning: cache: %s; this run was not cached\n", argv[0], error_last());
		error_clear();
	}
	int rc = e.rc;
	cache_entry_release(&e);
	return rc;
}

int cache_run(const struct cli_command *cmd, int argc, char **argv)
{
	bool off = false, quiet = false;
	const char *opt_dir = NULL;
	char keyhex[33];
	size_t files = 0;
	cache_options(argc, argv, &off, &opt_dir, &quiet);
	char *dir = off ? NULL : cache_dir(opt_dir);
	if (!dir || cache_key(argc, argv, dir, keyhex, &files) != 1) {
		free(dir);
		return cmd->run(argc, argv);
	}
	struct cache_entry e = CACHE_ENTRY_INIT;
	int rc;
	if (cache_load(dir, keyhex, &e) == 1) {
		fwrite(e.out.ptr ? e.out.ptr : "", 1, e.out.len, stdout);
		fflush(stdout);
		replay_err(&e.err);
		if (!quiet)
			fprintf(stderr, "preemptify: cache: %zu of %zu files unchanged: output reused from an earlier run\n",
				e.files, e.files);
		rc = e.rc;
	} else {
		rc = run_and_store(cmd, argc, argv, dir, keyhex, files);
	}
	cache_entry_release(&e);
	free(dir);
	return rc;
}
