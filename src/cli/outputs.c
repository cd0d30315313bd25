/* realpath() is XSI. */
#define _XOPEN_SOURCE 700

/*
 * Outputs never land on inputs: a report (-o), a baseline written
 * (--write-baseline) or a backup (apply --backup) must not replace a file
 * the same run reads. Checked before anything is read or written, by inode
 * where the file exists, so `-o ./f.c f.c` and a hard link are caught too.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"
#include "parse/walk.h"

/* Does the walk of a directory take NAME (it keeps *.c and *.h only)? */
static bool walked_suffix(const char *name)
{
	size_t n = strlen(name);
	return n > 2 && name[n - 2] == '.' && (name[n - 1] == 'c' || name[n - 1] == 'h');
}

/* Is the directory DIR (stat DST) OUT's parent, or an ancestor of it? */
static bool under_dir(const char *out, const struct stat *dst)
{
	char real[PATH_MAX];
	if (!realpath(out, real))
		return false;
	for (char *slash = strrchr(real, '/'); slash; slash = strrchr(real, '/')) {
		if (slash == real)
			slash[1] = '\0';
		else
			*slash = '\0';
		struct stat st;
		if (stat(real, &st) == 0 && st.st_dev == dst->st_dev && st.st_ino == dst->st_ino)
			return true;
		if (slash == real)
			break;
	}
	return false;
}

/* A hard link of OUT (stat OST) among the files the walk of PATHS takes, or NULL. */
static char *linked_input(const char *out, const struct stat *ost, const struct strvec *paths)
{
	struct strvec files = STRVEC_INIT;
	diagnostic_vec diags = VEC_INIT;
	struct walk_options wo = {NULL, 0, NULL};
	char *why = NULL;
	walk_paths(paths->items, paths->len, &wo, &files, &diags);
	for (size_t i = 0; i < files.len && !why; i++) {
		struct stat st;
		if (stat(files.items[i], &st) == 0 && st.st_dev == ost->st_dev && st.st_ino == ost->st_ino)
			why = xasprintf("'%s' is a hard link of '%s', one of the files scanned", out,
					files.items[i]);
	}
	for (size_t i = 0; i < diags.len; i++)
		diagnostic_release(&diags.items[i]);
	vec_release(&diags);
	strvec_release(&files);
	return why;
}

char *cli_output_is_input(const char *out, const struct strvec *paths, const char *const *files,
			  size_t n_files)
{
	struct stat ost;
	if (!out || stat(out, &ost) != 0 || !S_ISREG(ost.st_mode))
		return NULL; /* a new file, a terminal, /dev/null: read by nobody */
	for (size_t i = 0; i < n_files; i++) {
		struct stat st;
		if (files[i] && stat(files[i], &st) == 0 && st.st_dev == ost.st_dev &&
		    st.st_ino == ost.st_ino)
			return xasprintf("'%s' is the file this run reads as '%s'", out, files[i]);
	}
	for (size_t i = 0; paths && i < paths->len; i++) {
		struct stat st;
		if (stat(paths->items[i], &st) != 0)
			continue;
		if (st.st_dev == ost.st_dev && st.st_ino == ost.st_ino)
			return xasprintf("'%s' is one of the files scanned ('%s')", out, paths->items[i]);
		if (S_ISDIR(st.st_mode) && walked_suffix(out) && under_dir(out, &st))
			return xasprintf("'%s' is one of the files scanned (under '%s')", out,
					 paths->items[i]);
	}
	return paths && ost.st_nlink > 1 ? linked_input(out, &ost, paths) : NULL;
}
