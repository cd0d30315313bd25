/* Writefile: replace a user's file atomically, only if it is unchanged. */
#ifndef PREEMPTIFY_WRITEFILE_H
#define PREEMPTIFY_WRITEFILE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Writes NEW_TEXT to PATH atomically: a temporary file in the same
 * directory, fsync, rename over PATH, then fsync of the directory. The
 * file's mode (and, when we may, owner and group) are kept. Refuses with
 * -1 and "PATH: changed since it was read" when the file on disk is no
 * longer byte-equal to EXPECTED_OLD. Extended attributes (ACLs, SELinux
 * labels) are kept, or the write is refused. With BACKUP_SUFFIX (non-NULL,
 * non-empty) the old contents are first kept as PATH+SUFFIX, created
 * exclusively: an existing PATH+SUFFIX is refused unless BACKUP_FORCE.
 * Returns 0 or -1 with the error slot set; PATH is untouched on failure.
 */
int writefile_replace(const char *path, const char *expected_old, size_t old_len,
		      const char *new_text, size_t new_len, const char *backup_suffix,
		      bool backup_force);

/*
 * Writes a report or a baseline, TEXT, to PATH: atomically (a sibling
 * temporary file renamed over it, mode and owner kept) when PATH is a
 * regular file or does not exist, so an interrupted or failed run never
 * leaves it cut short; in place when it is a terminal, a pipe or a device.
 * Returns 0 or -1 with the error slot set.
 */
int writefile_output(const char *path, const char *text, size_t len);

#endif
