#include "walk.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool excluded(const struct walk_options *opts, const char *path)
{
	for (size_t i = 0; opts && i < opts->n_excludes; i++)
		if (path_glob_match(opts->excludes[i], path))
			return true;
	return false;
}

static bool is_source(const char *name)
{
	size_t n = strlen(name);
	return n > 2 && name[n - 2] == '.' && (name[n - 1] == 'c' || name[n - 1] == 'h');
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void diag(diagnostic_vec *diags, const char *path, const char *msg)
{
	struct diagnostic d = {DIAG_IO, xstrdup(path), 0, 0, xasprintf("%s: %s", path, msg)};
	vec_push(diags, d);
}

/* Iterative directory walk (an explicit stack of directories, sorted entries). */
static int walk_dir(const char *root, const struct walk_options *opts, path_vec *out, diagnostic_vec *diags)
{
	int rc = 0;
	path_vec stack = VEC_INIT;
	vec_push(&stack, xstrdup(root));
	while (stack.len) {
		char *dir = stack.items[--stack.len];
		DIR *d = opendir(dir);
		if (!d) {
			diag(diags, dir, strerror(errno));
			rc = -1;
			free(dir);
			continue;
		}
		path_vec names = VEC_INIT;
		struct dirent *e;
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				vec_push(&names, xstrdup(e->d_name));
		closedir(d);
		if (names.len > 1)
			qsort(names.items, names.len, sizeof(char *), cmp_str);
		path_vec subdirs = VEC_INIT;
		for (size_t i = 0; i < names.len; i++) {
			size_t dl = strlen(dir);
			char *p = xasprintf("%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", names.items[i]);
			struct stat st;
			/* lstat: symlinks inside the tree are never followed out of it */
			if (lstat(p, &st) != 0 || S_ISLNK(st.st_mode) || excluded(opts, p)) {
				free(p);
			} else if (S_ISDIR(st.st_mode)) {
				vec_push(&subdirs, p);
			} else if (S_ISREG(st.st_mode) && is_source(names.items[i])) {
				vec_push(out, p);
			} else {
				free(p);
			}
			free(names.items[i]);
		}
		vec_free(&names);
		/* push in reverse so directories are visited in sorted order */
		for (size_t i = subdirs.len; i-- > 0; )
			vec_push(&stack, subdirs.items[i]);
		vec_free(&subdirs);
		free(dir);
	}
	vec_free(&stack);
	return rc;
}

int walk_paths(char *const *roots, size_t n, const struct walk_options *opts, path_vec *out,
	       diagnostic_vec *diags)
{
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (stat(roots[i], &st) != 0) {
			diag(diags, roots[i], strerror(errno));
			rc = -1;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			size_t before = out->len;
			if (walk_dir(roots[i], opts, out, diags) < 0)
				rc = -1;
			/* files of one root in sorted order (the stack walk interleaves levels) */
			if (out->len - before > 1)
				qsort(out->items + before, out->len - before, sizeof(char *), cmp_str);
		} else if (!excluded(opts, roots[i])) {
			vec_push(out, xstrdup(roots[i]));
		}
	}
	return rc;
}

void path_vec_free(path_vec *v)
{
	for (size_t i = 0; i < v->len; i++)
		free(v->items[i]);
	vec_free(v);
}
