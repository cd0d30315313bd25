/*
 * Interrupt: SIGINT, SIGTERM and SIGHUP stop a run cleanly. The handler
 * only records the signal and kills the process groups of the programs we
 * run (spatch); the work loops poll interrupted() and stop between files,
 * so temporary directories are removed by the normal path, every user file
 * is either the old or the new one, and the command exits 128+signal.
 * A second signal stops the run at once (exit 128+signal): it kills the
 * children, removes the registered temporary directories and says so. A
 * user file is still never half-written (writes are renames).
 */
#ifndef PREEMPTIFY_INTERRUPT_H
#define PREEMPTIFY_INTERRUPT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Installs the handlers; call once, before any thread or child is started. */
void interrupt_install(void);

/* The signal that interrupted the run, or 0. */
int interrupted(void);

/* A flag that turns nonzero with interrupted(), for ts_parser_set_cancellation_flag(). */
const size_t *interrupt_cancel_flag(void);

/*
 * Tracks child process group PGID so an interruption kills it; returns a
 * slot for interrupt_untrack(), or -1 when all slots are taken (the child
 * is then only killed by its own timeout). Kills PGID at once when the run
 * is already interrupted.
 */
int interrupt_track(pid_t pgid);
void interrupt_untrack(int slot);

/*
 * Registers PATH, a temporary directory of ours, to be removed if a second
 * signal stops the run at once; returns its slot (>= 0), or -1 when all are taken.
 * interrupt_unregister_dir(PATH) once it is removed the normal way.
 */
int interrupt_register_dir(const char *path);
void interrupt_unregister_dir(const char *path);

#endif
