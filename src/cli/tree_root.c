/*
 * The tree a file lives in, found without being told: the nearest
 * directory at or above the first PATH that is a kernel tree's top (a
 * Makefile setting VERSION and PATCHLEVEL, and an include/linux/
 * directory), else the top of the git work tree it is in (an out-of-tree
 * driver's repository). Its callers decide the contexts of the PATHs' functions, as
 * --context-root would, so a file, a directory or the whole tree gets one
 * answer.
 */
/* realpath() is XSI. */
#define _XOPEN_SOURCE 700
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"

/* Does the Makefile in DIR set VERSION and PATCHLEVEL, at the start of a line, as a kernel's does? */
static bool kernel_makefile(const char *dir)
{
	char *mk = xasprintf("%s/Makefile", dir), *text = NULL;
	size_t len = 0;
	bool version = false, patchlevel = false;
	if (read_file_max(mk, 1u << 20, &text, &len) == 0) {
		for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			version = version || strncmp(l, "VERSION =", 9) == 0 || strncmp(l, "VERSION=", 8) == 0;
			patchlevel = patchlevel || strncmp(l, "PATCHLEVEL =", 12) == 0 ||
				     strncmp(l, "PATCHLEVEL=", 11) == 0;
		}
	}
	error_clear();
	free(text);
	free(mk);
	return version && patchlevel;
}

static bool is_kernel_top(const char *dir)
{
	struct stat st;
	char *inc = xasprintf("%s/include/linux", dir);
	bool yes = stat(inc, &st) == 0 && S_ISDIR(st.st_mode) && kernel_makefile(dir);
	free(inc);
	return yes;
}

/* DIR (absolute, resolved) as the user would type it from where they stand. */
static char *spell_from_cwd(const char *dir)
{
	char here[PATH_MAX], cwd[PATH_MAX];
	if (!getcwd(here, sizeof here) || !realpath(here, cwd))
		return xstrdup(dir);
	size_t n = strlen(dir);
	if (strcmp(cwd, dir) == 0)
		return xstrdup(".");
	if (strncmp(cwd, dir, n) == 0 && (cwd[n] == '/' || n == 1)) {
		struct buf b = BUF_INIT; /* the tree is above us: ../.. */
		for (const char *p = cwd + (n == 1 ? 0 : n); *p; p++)
			if (*p == '/')
				buf_puts(&b, b.len ? "/.." : "..");
		return buf_detach(&b);
	}
	size_t c = strlen(cwd);
	if (strncmp(dir, cwd, c) == 0 && dir[c] == '/')
		return xstrdup(dir + c + 1); /* below us */
	return xstrdup(dir);
}

/* Is there a .git (a directory, or the file of a linked work tree) in DIR? */
static bool is_git_top(const char *dir)
{
	struct stat st;
	char *g = xasprintf("%s/.git", dir);
	bool yes = stat(g, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode));
	free(g);
	return yes;
}

/*
 * The nearest directory at or above REAL (resolved, modified) that IS_TOP
 * accepts, spelled from where the user stands, or NULL; *IS_PATH when it
 * is REAL itself and FIRST (the PATH was that directory).
 */
static char *top_above(char *real, bool first, bool (*is_top)(const char *), bool *is_path)
{
	for (;;) {
		if (is_top(real)) {
			*is_path = first;
			return spell_from_cwd(real);
		}
		char *slash = strrchr(real, '/');
		if (!slash || strcmp(real, "/") == 0)
			return NULL;
		slash[slash == real] = '\0';
		first = false;
	}
}

char *cli_tree_root(const char *path, bool *is_path, bool *is_git)
{
	char real[PATH_MAX], dir[PATH_MAX];
	*is_path = *is_git = false;
	if (!realpath(path, real))
		return NULL;
	struct stat st;
	if (stat(real, &st) != 0)
		return NULL;
	if (!S_ISDIR(st.st_mode)) {
		char *slash = strrchr(real, '/');
		if (!slash)
			return NULL;
		slash[slash == real] = '\0';
	}
	memcpy(dir, real, sizeof dir);
	char *top = top_above(real, S_ISDIR(st.st_mode), is_kernel_top, is_path);
	if (top)
		return top;
	/* not in a kernel tree: an out-of-tree driver's repository is its tree */
	top = top_above(dir, S_ISDIR(st.st_mode), is_git_top, is_path);
	*is_git = top != NULL;
	return top;
}
