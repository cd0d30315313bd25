/* Writefile: temp + fsync + rename, with a changed-since-read check. */
#include "util/writefile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Creates a sibling temp file of PATH with MODE; *OUT gets its name. */
static int temp_beside(const char *path, const char *text, size_t len, const struct stat *st,
		       char **out)
{
	int ret = -1, fd = -1;
	char *tmp = xasprintf("%s.preemptify-XXXXXX", path);

	fd = mkstemp(tmp);
	if (fd < 0) {
		error_set("%s: cannot create a temporary file: %s", path, strerror(errno));
		goto done;
	}
	if (fchmod(fd, st->st_mode & 07777) != 0 ||
	    (fchown(fd, st->st_uid, st->st_gid) != 0 && errno != EPERM) ||
	    write_all(fd, text, len) != 0 || fsync(fd) != 0) {
		error_set("%s: cannot write: %s", tmp, strerror(errno));
		goto done;
	}
	if (close(fd) != 0) {
		fd = -1;
		error_set("%s: cannot write: %s", tmp, strerror(errno));
		goto done;
	}
	fd = -1;
	*out = tmp;
	tmp = NULL;
	ret = 0;
done:
	if (fd >= 0)
		close(fd);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	return ret;
}

static void fsync_dir_of(const char *path)
{
	char *copy = xstrdup(path);
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(copy);
}

/*
 * Writes TEXT to a sibling temporary file of PATH and renames it over PATH;
 * a failed rename is reported as "PATH: WHAT: reason".
 */
static int put_beside(const char *path, const char *text, size_t len, const struct stat *st,
		      const char *what)
{
	char *tmp = NULL;
	int rc = 0;
	if (temp_beside(path, text, len, st, &tmp) < 0)
		return -1;
	if (rename(tmp, path) != 0) {
		rc = error_set("%s: %s: %s", path, what, strerror(errno));
		unlink(tmp);
	}
	free(tmp);
	return rc;
}

int writefile_replace(const char *path, const char *expected_old, size_t old_len,
		      const char *new_text, size_t new_len, const char *backup_suffix)
{
	int ret = -1;
	char *cur = NULL, *bak = NULL;
	size_t cur_len = 0;
	struct stat st;

	if (lstat(path, &st) != 0) {
		error_set("%s: %s", path, strerror(errno));
		goto done;
	}
	if (!S_ISREG(st.st_mode)) {
		error_set("%s: not a regular file", path);
		goto done;
	}
	if (read_file(path, &cur, &cur_len) < 0)
		goto done;
	if (cur_len != old_len || memcmp(cur, expected_old, old_len) != 0) {
		error_set("%s: changed since it was read; not written", path);
		goto done;
	}
	if (backup_suffix && *backup_suffix) {
		bak = xasprintf("%s%s", path, backup_suffix);
		if (put_beside(bak, cur, cur_len, &st, "cannot write backup") < 0)
			goto done;
	}
	if (put_beside(path, new_text, new_len, &st, "cannot replace") < 0)
		goto done;
	fsync_dir_of(path);
	ret = 0;
done:
	free(cur);
	free(bak);
	return ret;
}
