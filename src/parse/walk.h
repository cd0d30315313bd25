/* Walk: expand the PATH arguments into the list of .c/.h files to scan. */
#ifndef PREEMPTIFY_WALK_H
#define PREEMPTIFY_WALK_H

#include "parse/diagnostic.h"

struct walk_options {
	char **excludes; /* globs (fnmatch) tested on each path and its suffixes */
	size_t n_excludes;
	/* when set, assembly files (*.S, *.s) found in walked directories go here */
	struct strvec *assembly;
};

/*
 * Files named directly are taken whatever their suffix; directories are
 * walked recursively for *.c and *.h, in sorted order. Symlinks inside a
 * walked directory are not followed (so nothing outside the roots is read).
 * A file named twice (`a.c ./a.c`, or a file and a directory holding it)
 * is taken once, under its first name.
 * A missing or unreadable root adds a DIAG_IO diagnostic and makes the
 * return -1; the other roots are still walked. OUT owns its strings.
 */
int walk_paths(char *const *roots, size_t n, const struct walk_options *opts,
	       struct strvec *out, diagnostic_vec *diags);

#endif
