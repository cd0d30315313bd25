/*
 * The source overlay: texts that stand in for files on disk while a run
 * reads the user's sources. `preemptify commit` puts there HEAD's text of
 * the files whose working tree already holds a change (an earlier
 * `preemptify apply`), so the whole run (the per-file pipeline, the tree's
 * caller index, the rewrite) plans from what HEAD holds, as it would have
 * before the apply.
 *
 * Entries are keyed by the file's identity (device and inode), so every
 * spelling of its path ("drivers/x.c", "../linux/drivers/x.c", absolute)
 * finds it. The overlay is filled before a run and cleared after it, by
 * one thread; during the run it is only read (worker threads read it).
 * Only readers of the user's sources use overlay_read(); whatever must see
 * the disk (the changed-since-read checks before a write, git's own) keeps
 * read_file().
 */
#ifndef PREEMPTIFY_OVERLAY_H
#define PREEMPTIFY_OVERLAY_H

#include <stddef.h>

/*
 * From now on overlay_read(PATH) answers TEXT[0..LEN) (copied) instead
 * of PATH's content; a later call for the same file replaces it. 0, or -1
 * with the error slot set (PATH cannot be stat'ed).
 */
int overlay_add(const char *path, const char *text, size_t len);

/* Forgets every entry. */
void overlay_clear(void);

/* The number of entries. */
size_t overlay_count(void);

/*
 * read_file() (util.h), except for a file in the overlay: its overlay
 * text, NUL-terminated, *OUT owned by the caller as read_file()'s.
 */
int overlay_read(const char *path, char **out, size_t *out_len);

#endif
