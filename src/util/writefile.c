/* Writefile: temp + fsync + rename, with a changed-since-read check. */
/* realpath() is XSI. */
#define _XOPEN_SOURCE 700
#include "util/writefile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
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

/*
 * Test hooks, read from PREEMPTIFY_TEST_FAULT ("write-fail=N", the Nth
 * write fails with ENOSPC; "write-delay-ms=N", each replacement waits N ms
 * with its temporary file complete): how the tests make a write fail
 * without a full disk and hold a run in its write window.
 */
static long fault_value(const char *key)
{
	const char *f = getenv("PREEMPTIFY_TEST_FAULT");
	const char *p = f ? strstr(f, key) : NULL;
	return p && p[strlen(key)] == '=' ? strtol(p + strlen(key) + 1, NULL, 10) : 0;
}

static int write_fault(void)
{
	static _Atomic long writes;
	long n = fault_value("write-fail");
	if (n > 0 && ++writes == n) {
		errno = ENOSPC;
		return -1;
	}
	return 0;
}

/*
 * Gives the new file FD the owner and group of the old one (ST). When we
 * may not (EPERM: another user's file), the replacement would silently
 * change its owner: refused.
 */
static int keep_owner(int fd, const char *path, const struct stat *st)
{
	struct stat now;
	if (fstat(fd, &now) != 0)
		return error_set("%s: %s", path, strerror(errno));
	if (now.st_uid == st->st_uid && now.st_gid == st->st_gid)
		return 0;
	if (fchown(fd, st->st_uid, st->st_gid) == 0)
		return 0;
	return error_set("%s: owned by uid %u gid %u, which the rewritten file cannot keep (%s); "
			 "not written: run as the owner", path, (unsigned)st->st_uid, (unsigned)st->st_gid,
			 strerror(errno));
}

/*
 * Gives the new file FD the extended attributes of the file FROM (POSIX
 * ACLs, SELinux labels, user attributes), and drops any it inherited that
 * FROM lacks (a directory's default ACL). An attribute that cannot be kept
 * refuses the write: a rewrite must not quietly change who may read a file.
 */
static int keep_xattrs(int fd, const char *from, const char *path)
{
	int ret = -1;
	char *names = NULL, *value = NULL, *mine = NULL;
	ssize_t n = llistxattr(from, NULL, 0);
	if (n < 0) {
		if (errno == ENOTSUP || errno == ENOSYS)
			return 0; /* a file system without them: nothing to keep */
		return error_set("%s: cannot list its extended attributes: %s; not written", path,
				 strerror(errno));
	}
	names = xmalloc((size_t)n + 1);
	n = llistxattr(from, names, (size_t)n);
	if (n < 0) {
		error_set("%s: cannot list its extended attributes: %s; not written", path, strerror(errno));
		goto done;
	}
	ssize_t m = flistxattr(fd, NULL, 0);
	if (m > 0) {
		mine = xmalloc((size_t)m);
		m = flistxattr(fd, mine, (size_t)m);
		for (ssize_t k = 0; k < m; k += (ssize_t)strlen(mine + k) + 1) {
			bool kept = false;
			for (ssize_t j = 0; j < n && !kept; j += (ssize_t)strlen(names + j) + 1)
				kept = strcmp(names + j, mine + k) == 0;
			if (!kept)
				fremovexattr(fd, mine + k);
		}
	}
	for (ssize_t k = 0; k < n; k += (ssize_t)strlen(names + k) + 1) {
		const char *name = names + k;
		ssize_t vl = lgetxattr(from, name, NULL, 0);
		free(value);
		value = vl >= 0 ? xmalloc((size_t)vl + 1) : NULL;
		if (vl < 0 || (vl = lgetxattr(from, name, value, (size_t)vl)) < 0 ||
		    fsetxattr(fd, name, value, (size_t)vl, 0) != 0) {
			error_set("%s: cannot keep its extended attribute %s: %s; not written", path, name,
				  strerror(errno));
			goto done;
		}
	}
	ret = 0;
done:
	free(names);
	free(value);
	free(mine);
	return ret;
}

/*
 * The pattern of a sibling temporary file of PATH: PATH.preemptify-XXXXXX,
 * or DIR/.preemptify-XXXXXX when PATH's name is too long to take the
 * suffix (a name of 238 bytes or more could never be rewritten).
 */
static char *temp_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (strlen(base) + strlen(".preemptify-XXXXXX") <= 255)
		return xasprintf("%s.preemptify-XXXXXX", path);
	return xasprintf("%.*s.preemptify-XXXXXX", (int)(base - path), path);
}

/*
 * Creates a sibling temp file of PATH with ST's mode and owner and the
 * extended attributes of FROM (the file it stands for); *OUT gets its name.
 */
static int temp_beside(const char *path, const char *from, const char *text, size_t len,
		       const struct stat *st, char **out)
{
	int ret = -1, fd = -1;
	char *tmp = temp_name(path);

	fd = mkstemp(tmp);
	if (fd < 0) {
		error_set("%s: cannot create a temporary file: %s", path, strerror(errno));
		goto done;
	}
	if (keep_owner(fd, path, st) < 0 || keep_xattrs(fd, from, path) < 0)
		goto done;
	if (fchmod(fd, st->st_mode & 07777) != 0 || write_fault() != 0 ||
	    write_all(fd, text, len) != 0 || fsync(fd) != 0) {
		error_set("%s: cannot write its new contents (to %s): %s; not written", path, tmp,
			  strerror(errno));
		goto done;
	}
	if (close(fd) != 0) {
		fd = -1;
		error_set("%s: cannot write its new contents (to %s): %s; not written", path, tmp,
			  strerror(errno));
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

/* Is the file at PATH still the one ST describes (same inode, size and modification time)? */
static bool still_same(const char *path, const struct stat *st)
{
	struct stat now;
	return lstat(path, &now) == 0 && now.st_dev == st->st_dev && now.st_ino == st->st_ino &&
	       now.st_size == st->st_size && now.st_mtim.tv_sec == st->st_mtim.tv_sec &&
	       now.st_mtim.tv_nsec == st->st_mtim.tv_nsec && now.st_ctim.tv_sec == st->st_ctim.tv_sec &&
	       now.st_ctim.tv_nsec == st->st_ctim.tv_nsec;
}

/*
 * Writes TEXT to a sibling temporary file of PATH and renames it over PATH;
 * a failed rename is reported as "PATH: WHAT: reason". With CHECK, the
 * file at PATH must still be the one CHECK describes just before the
 * rename, with the temporary file complete: the window in which another
 * writer's change can be lost is the one rename() call. With EXCLUSIVE,
 * PATH must not exist: the complete file is linked there (link() fails on
 * an existing name, atomically), never renamed over anything.
 */
static int put_beside(const char *path, const char *from, const char *text, size_t len,
		      const struct stat *st, const struct stat *check, bool exclusive,
		      const char *what)
{
	char *tmp = NULL;
	int rc = 0;
	if (temp_beside(path, from, text, len, st, &tmp) < 0)
		return -1;
	if (exclusive) {
		if (link(tmp, path) != 0)
			rc = errno == EEXIST
				     ? error_set("%s: exists; not overwritten (--force replaces it)", path)
				     : error_set("%s: %s: %s", path, what, strerror(errno));
		unlink(tmp);
		free(tmp);
		return rc;
	}
	long delay = fault_value("write-delay-ms");
	if (delay > 0)
		nanosleep(&(struct timespec){delay / 1000, (delay % 1000) * 1000000}, NULL);
	if (check && !still_same(path, check)) {
		rc = error_set("%s: changed since it was read; not written", path);
		unlink(tmp);
	} else if (rename(tmp, path) != 0) {
		rc = error_set("%s: %s: %s", path, what, strerror(errno));
		unlink(tmp);
	}
	free(tmp);
	return rc;
}

int writefile_replace(const char *path, const char *expected_old, size_t old_len,
		      const char *new_text, size_t new_len, const char *backup_suffix,
		      bool backup_force)
{
	int ret = -1;
	char *cur = NULL, *bak = NULL, *real = NULL;
	size_t cur_len = 0;
	struct stat st;

	if (lstat(path, &st) != 0) {
		error_set("%s: %s", path, strerror(errno));
		goto done;
	}
	if (S_ISLNK(st.st_mode)) {
		/* a symbolic link: its target is rewritten, the link stays */
		real = realpath(path, NULL);
		if (!real || lstat(real, &st) != 0) {
			error_set("%s: a symbolic link to nothing: %s", path, strerror(errno));
			goto done;
		}
		path = real;
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
		if (put_beside(bak, path, cur, cur_len, &st, NULL, !backup_force,
			       "cannot write backup") < 0)
			goto done;
	}
	if (put_beside(path, path, new_text, new_len, &st, &st, false, "cannot replace") < 0)
		goto done;
	fsync_dir_of(path);
	ret = 0;
done:
	free(cur);
	free(bak);
	free(real);
	return ret;
}

int writefile_output(const char *path, const char *text, size_t len)
{
	struct stat st;
	bool exists = stat(path, &st) == 0;
	if (exists && !S_ISREG(st.st_mode)) {
		/* a terminal, a pipe, /dev/null: written in place */
		int fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return error_set("%s: %s", path, strerror(errno));
		int rc = write_all(fd, text, len) == 0 ? 0 : error_set("%s: %s", path, strerror(errno));
		if (close(fd) != 0 && rc == 0)
			rc = error_set("%s: %s", path, strerror(errno));
		return rc;
	}
	mode_t mask = umask(0);
	umask(mask);
	if (!exists)
		st.st_mode = 0666 & ~mask;
	char *tmp = NULL;
	if (exists) {
		if (temp_beside(path, path, text, len, &st, &tmp) < 0)
			return -1;
	} else {
		tmp = temp_name(path);
		int fd = mkstemp(tmp);
		bool ok = fd >= 0 && fchmod(fd, st.st_mode & 07777) == 0 && write_fault() == 0 &&
			  write_all(fd, text, len) == 0 && fsync(fd) == 0;
		int err = errno;
		if (fd >= 0 && close(fd) != 0 && ok) {
			ok = false;
			err = errno;
		}
		if (!ok) {
			if (fd >= 0)
				unlink(tmp);
			free(tmp);
			return error_set("%s: %s", path, strerror(err));
		}
	}
	int rc = 0;
	if (rename(tmp, path) != 0) {
		rc = error_set("%s: %s", path, strerror(errno));
		unlink(tmp);
	}
	free(tmp);
	return rc;
}
