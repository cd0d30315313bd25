/* Interrupt: a flag and the child process groups to kill, for signal handlers. */
#define _GNU_SOURCE /* getdents64 */
#include "util/interrupt.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* As many as we ever run at once: one spatch per job thread. */
#define INTERRUPT_SLOTS 256

static atomic_int caught;
/* tree-sitter's cancellation flag (ts_parser_set_cancellation_flag() reads a size_t): set with CAUGHT */
static volatile size_t cancel_flag;
static atomic_int children[INTERRUPT_SLOTS]; /* process group ids, 0 = free */

static void kill_children(void)
{
	for (size_t i = 0; i < INTERRUPT_SLOTS; i++) {
		int pg = atomic_load(&children[i]);
		if (pg > 0)
			kill(-pg, SIGKILL);
	}
}

/* The temporary directories to remove when a second signal stops the run at once. */
#define DIR_SLOTS 8
static char dirs[DIR_SLOTS][4096];
static atomic_int dir_used[DIR_SLOTS];

/*
 * Removes what the directory FD holds, DEPTH levels down, with calls that
 * are safe in a signal handler (getdents64, unlinkat, openat).
 */
static void empty_dir(int fd, int depth)
{
	char entries[4096];
	ssize_t n;
	while ((n = getdents64(fd, entries, sizeof entries)) > 0) {
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(entries + off);
			off += d->d_reclen;
			if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
				continue;
			if (unlinkat(fd, d->d_name, 0) == 0 || depth == 0)
				continue;
			int sub = openat(fd, d->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0)
				continue;
			empty_dir(sub, depth - 1);
			close(sub);
			unlinkat(fd, d->d_name, AT_REMOVEDIR);
		}
	}
}

static void remove_dirs(void)
{
	static char gone[sizeof dirs[0] + 8];
	for (size_t i = 0; i < DIR_SLOTS; i++) {
		if (!atomic_load(&dir_used[i]))
			continue;
		/* renamed first: a worker still running writes by path, and now fails */
		size_t n = strlen(dirs[i]);
		memcpy(gone, dirs[i], n);
		memcpy(gone + n, ".gone", 6);
		const char *dir = rename(dirs[i], gone) == 0 ? gone : dirs[i];
		/* again while a killed child may still add a file: SIGKILL is sent, not
		 * yet delivered, when kill() returns */
		for (int tries = 0; tries < 50; tries++) {
			int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				break;
			empty_dir(fd, 4);
			close(fd);
			if (rmdir(dir) == 0)
				break;
			nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
		}
	}
}

static void on_signal(int sig)
{
	int none = 0;
	cancel_flag = 1;
	if (atomic_compare_exchange_strong(&caught, &none, sig)) {
		kill_children();
		return;
	}
	/* a second signal: the user does not want to wait for the clean stop */
	kill_children();
	remove_dirs();
	static const char msg[] = "preemptify: interrupted again: stopped at once; temporary files "
				  "removed, no user file half-written\n";
	if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0)
		_exit(128 + sig);
	_exit(128 + sig);
}

int interrupt_register_dir(const char *path)
{
	size_t n = strlen(path);
	if (n >= sizeof dirs[0])
		return -1;
	for (int i = 0; i < DIR_SLOTS; i++) {
		if (atomic_load(&dir_used[i]))
			continue;
		memcpy(dirs[i], path, n + 1);
		int free_slot = 0;
		if (atomic_compare_exchange_strong(&dir_used[i], &free_slot, 1))
			return i;
	}
	return -1;
}

void interrupt_unregister_dir(const char *path)
{
	for (int i = 0; i < DIR_SLOTS; i++)
		if (atomic_load(&dir_used[i]) && strcmp(dirs[i], path) == 0)
			atomic_store(&dir_used[i], 0);
}

void interrupt_install(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction sa;
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		/* no SA_RESTART: a blocking poll() or read() sees EINTR and looks at the flag;
		 * no SA_RESETHAND: a second signal removes the temporary files, then exits */
		sa.sa_flags = 0;
		sigaction(sigs[i], &sa, NULL);
	}
}

int interrupted(void)
{
	return atomic_load(&caught);
}

const size_t *interrupt_cancel_flag(void)
{
	return (const size_t *)&cancel_flag;
}

int interrupt_track(pid_t pgid)
{
	for (int i = 0; i < INTERRUPT_SLOTS; i++) {
		int free_slot = 0;
		if (atomic_compare_exchange_strong(&children[i], &free_slot, (int)pgid)) {
			if (interrupted())
				kill(-pgid, SIGKILL);
			return i;
		}
	}
	return -1;
}

void interrupt_untrack(int slot)
{
	if (slot >= 0 && slot < INTERRUPT_SLOTS)
		atomic_store(&children[slot], 0);
}
