/*
 * Progress: one line on a terminal, redrawn in place ("\r", clear to end of
 * line) while files are processed:
 *
 *     scanning: 1200/3340 files, 17 sites, 0:03, ETA 0:06
 *
 * The CLI creates one when standard error is a terminal and -q is not given,
 * and clears it before it prints anything else on that terminal. Library code
 * only reports (progress_phase(), progress_add()); every function accepts a
 * NULL progress and then does nothing, so a run without a terminal costs one
 * test per file. Thread-safe: the counters are atomic, and one thread at a
 * time redraws, at most 10 times a second.
 */
#ifndef PREEMPTIFY_PROGRESS_H
#define PREEMPTIFY_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

struct progress;

/*
 * A progress line on FD (a terminal; the caller checks). Returns NULL when
 * TERM is "dumb" (no clear-to-end-of-line). Free with progress_free().
 */
struct progress *progress_new(int fd);

/*
 * Starts a phase: WHAT ("scanning"), TOTAL files (0: no count, only the
 * time is shown), FIXES: also show the sites fixed. The counters restart
 * at 0 and the line is drawn at once.
 */
void progress_phase(struct progress *p, const char *what, size_t total, bool fixes);

/* FILES more files done, with SITES found and FIXED fixed. Any thread. */
void progress_add(struct progress *p, size_t files, size_t sites, size_t fixed);

/* Erases the line, if drawn (before other output on the terminal). */
void progress_clear(struct progress *p);

/* Clears the line and frees P. NULL is fine. */
void progress_free(struct progress *p);

#endif
