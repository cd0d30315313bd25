/* Interrupt: a flag and the child process groups to kill, for signal handlers. */
#define _POSIX_C_SOURCE 200809L
#include "util/interrupt.h"

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>

/* As many as we ever run at once: one spatch per job thread. */
#define INTERRUPT_SLOTS 256

static atomic_int caught;
static atomic_int children[INTERRUPT_SLOTS]; /* process group ids, 0 = free */

static void kill_children(void)
{
	for (size_t i = 0; i < INTERRUPT_SLOTS; i++) {
		int pg = atomic_load(&children[i]);
		if (pg > 0)
			kill(-pg, SIGKILL);
	}
}

static void on_signal(int sig)
{
	int none = 0;
	atomic_compare_exchange_strong(&caught, &none, sig);
	kill_children();
}

void interrupt_install(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction sa;
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		/* no SA_RESTART: a blocking poll() or read() sees EINTR and looks at the flag */
		sa.sa_flags = SA_RESETHAND;
		sigaction(sigs[i], &sa, NULL);
	}
}

int interrupted(void)
{
	return atomic_load(&caught);
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
