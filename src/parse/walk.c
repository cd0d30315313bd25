/*
 * Walk: PATH arguments -> the sorted list of C files to scan.
 *
 * Entries inside a walked directory are typed by readdir() (lstat() where
 * the filesystem does not say): a symlink is
 * never followed, so a link to /usr/include or to `..` cannot pull files
 * from outside the roots into a scan (or a rewrite). A root itself is
 * stat()ed: naming a symlink on the command line is an explicit choice.
 */
#define _DEFAULT_SOURCE /* d_type */
#include "parse/walk.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/*
 * Excludes match the path as walked, without the leading "./" and "../"
 * steps that reach the root the user named (so ".*" skips hidden files, not
 * everything under "." or "..").
 */
static bool excluded(const struct walk_options *opts, const char *path)
{
	for (;;) {
		if (path[0] == '.' && path[1] == '/')
			path += 2;
		else if (path[0] == '.' && path[1] == '.' && path[2] == '/')
			path += 3;
		else
			break;
	}
	for (size_t i = 0; opts && i < opts->n_excludes; i++)
		if (path_glob_match(opts->excludes[i], path))
			return true;
	return false;
}

static bool is_c_source(const char *name)
{
	size_t n = strlen(name);
	return n > 2 && name[n - 2] == '.' && (name[n - 1] == 'c' || name[n - 1] == 'h');
}

static bool is_assembly(const char *name)
{
	size_t n = strlen(name);
	return n > 2 && name[n - 2] == '.' && (name[n - 1] == 'S' || name[n - 1] == 's');
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_io_diag(diagnostic_vec *diags, const char *path, const char *what, int err)
{
	struct diagnostic d = {DIAG_IO, xstrdup(path), 0, 0, xasprintf("%s: %s: %s", path, what, strerror(err)), 0};
	vec_push(diags, d);
}

/*
 * A file name with control characters (an escape sequence, a newline)
 * would reach the terminal and every line-based report raw: such a file is
 * not taken, and the diagnostic shows the name with \xHH escapes.
 * Returns true when PATH was refused.
 */
static bool refuse_control_name(diagnostic_vec *diags, const char *path)
{
	const unsigned char *p = (const unsigned char *)path;
	while (*p && *p >= 0x20 && *p != 0x7f)
		p++;
	if (!*p)
		return false;
	struct buf shown = BUF_INIT;
	for (p = (const unsigned char *)path; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			buf_printf(&shown, "\\x%02x", *p);
		else
			buf_add(&shown, (const char *)p, 1);
	}
	struct diagnostic d = {DIAG_IO, buf_detach(&shown), 0, 0,
			       xstrdup("the file name contains control characters; skipped (rename the file)"), 0};
	vec_push(diags, d);
	return true;
}

/* DIR/NAME; under the current directory, NAME alone: one spelling per file, never ./net/x.c beside net/x.c */
static char *join(const char *dir, const char *name)
{
	if (strcmp(dir, ".") == 0 || strcmp(dir, "./") == 0)
		return xstrdup(name);
	size_t n = strlen(dir);
	return xasprintf("%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name);
}

/*
 * Appends DIR's C files to OUT, depth first, each directory's entries in
 * byte order (files and subdirectories interleaved as sorted), so the list
 * is the same on every filesystem. Returns 0 or -1 if a directory could not
 * be read (diagnostic added; the rest is still walked).
 */
static int walk_dir(const char *dir, const struct walk_options *opts, struct strvec *out, diagnostic_vec *diags)
{
	int rc = 0;
	struct strvec names = VEC_INIT;
	DIR *d = opendir(dir);
	if (!d) {
		add_io_diag(diags, dir, "cannot open directory", errno);
		return -1;
	}
	struct dirent *e;
	errno = 0;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
			/* the entry's type rides after its name: no lstat() per entry
			 * where the filesystem gives it (d_type) */
			size_t n = strlen(e->d_name);
			char *name = xmalloc(n + 2);
			memcpy(name, e->d_name, n + 1);
			name[n + 1] = (char)(e->d_type == DT_DIR ? 'd' : e->d_type == DT_REG ? 'f' :
					     e->d_type == DT_LNK ? 'l' : e->d_type == DT_UNKNOWN ? '?' : 'o');
			vec_push(&names, name);
		}
		errno = 0;
	}
	if (errno) {
		add_io_diag(diags, dir, "cannot read directory", errno);
		rc = -1;
	}
	closedir(d);
	if (names.len > 1)
		qsort(names.items, names.len, sizeof *names.items, cmp_names);
	for (size_t i = 0; i < names.len; i++) {
		char *path = join(dir, names.items[i]);
		char type = names.items[i][strlen(names.items[i]) + 1];
		struct stat st;
		if (type == '?') {
			if (lstat(path, &st) != 0) {
				add_io_diag(diags, path, "cannot stat", errno);
				rc = -1;
				type = 'e';
			} else {
				type = S_ISDIR(st.st_mode) ? 'd' : S_ISREG(st.st_mode) ? 'f' : S_ISLNK(st.st_mode) ? 'l' : 'o';
			}
		}
		if (type == 'e' || type == 'l' || type == 'o' || excluded(opts, path)) {
			/* failed / not followed / not wanted */
		} else if (type == 'd') {
			if (walk_dir(path, opts, out, diags) < 0)
				rc = -1;
		} else if (type == 'f' && is_c_source(names.items[i])) {
			if (refuse_control_name(diags, path)) {
				rc = -1;
			} else {
				vec_push(out, path);
				path = NULL;
			}
		} else if (type == 'f' && opts && opts->assembly && is_assembly(names.items[i])) {
			/* read for names only, never shown: a control character in the name is harmless */
			vec_push(opts->assembly, path);
			path = NULL;
		}
		free(path);
	}
	strvec_release(&names);
	return rc;
}

struct file_id {
	dev_t dev;
	ino_t ino;
	size_t index;
};

static int file_id_cmp(const void *a, const void *b)
{
	const struct file_id *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Drops the later names of a file named twice (`a.c ./a.c`, a file and its directory). */
static void drop_duplicates(struct strvec *out)
{
	struct file_id *ids = xcalloc(out->len ? out->len : 1, sizeof *ids);
	bool *dup = xcalloc(out->len ? out->len : 1, sizeof *dup);
	size_t n = 0;
	for (size_t i = 0; i < out->len; i++) {
		struct stat st;
		if (stat(out->items[i], &st) == 0)
			ids[n++] = (struct file_id){st.st_dev, st.st_ino, i};
	}
	qsort(ids, n, sizeof *ids, file_id_cmp);
	for (size_t i = 1; i < n; i++)
		if (ids[i].dev == ids[i - 1].dev && ids[i].ino == ids[i - 1].ino)
			dup[ids[i].index] = true;
	size_t k = 0;
	for (size_t i = 0; i < out->len; i++) {
		if (dup[i])
			free(out->items[i]);
		else
			out->items[k++] = out->items[i];
	}
	out->len = k;
	free(ids);
	free(dup);
}

int walk_paths(char *const *roots, size_t n, const struct walk_options *opts,
	       struct strvec *out, diagnostic_vec *diags)
{
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (stat(roots[i], &st) != 0) {
			add_io_diag(diags, roots[i], "cannot access", errno);
			rc = -1;
		} else if (S_ISDIR(st.st_mode)) {
			if (walk_dir(roots[i], opts, out, diags) < 0)
				rc = -1;
		} else if (!excluded(opts, roots[i])) {
			if (refuse_control_name(diags, roots[i]))
				rc = -1;
			else
				vec_push(out, xstrdup(roots[i]));
		}
	}
	if (n > 1) /* one root cannot name a file twice: links are not followed inside it */
		drop_duplicates(out);
	return rc;
}
