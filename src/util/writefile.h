/* Writefile: replace a user's file atomically, only if it is unchanged. */
#ifndef PREEMPTIFY_WRITEFILE_H
#define PREEMPTIFY_WRITEFILE_H

#include <stddef.h>

/*
 * Writes NEW_TEXT to PATH atomically: a temporary file in the same
 * directory, fsync, rename over PATH, then fsync of the directory. The
 * file's mode (and, when we may, owner and group) are kept. Refuses with
 * -1 and "PATH: changed since it was read" when the file on disk is no
 * longer byte-equal to EXPECTED_OLD. With BACKUP_SUFFIX (non-NULL,
 * non-empty) the old contents are first kept as PATH+SUFFIX. Returns 0 or
 * -1 with the error slot set; PATH is untouched on failure.
 */
int writefile_replace(const char *path, const char *expected_old, size_t old_len,
		      const char *new_text, size_t new_len, const char *backup_suffix);

#endif
