/*
 * The result cache's store: the content hash, the entry file format (read,
 * checked, written atomically), least-recently-used eviction, and the
 * directory's statistics and cleaning for `preemptify cache`.
 */
#define _GNU_SOURCE /* mkostemp */
#include "cli/cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void cache_hash_bytes(const void *p, size_t n, struct cache_hash *out)
{
	uint64_t h[2];
	hash128(p, n, h);
	out->a = h[0];
	out->b = h[1];
}

void cache_hash_hex(const struct cache_hash *h, char out[33])
{
	snprintf(out, 33, "%016" PRIx64 "%016" PRIx64, h->a, h->b);
}

void cache_entry_release(struct cache_entry *e)
{
	buf_release(&e->out);
	buf_release(&e->err);
}

char *cache_dir(const char *dir)
{
	if (dir && *dir)
		return xstrdup(dir);
	const char *x = getenv("XDG_CACHE_HOME");
	if (x && x[0] == '/')
		return xasprintf("%s/preemptify", x);
	const char *home = getenv("HOME");
	return home && *home ? xasprintf("%s/.cache/preemptify", home) : NULL;
}

/* The header line, the two streams, the trailer with the checksum of everything before it. */
static void entry_format(const char *keyhex, const struct cache_entry *e, struct buf *b)
{
	buf_printf(b, "%s\nversion %s\nkey %s\nrc %d out %zu err %zu files %zu\n", CACHE_FORMAT,
		   PREEMPTIFY_VERSION, keyhex, e->rc, e->out.len, e->err.len, e->files);
	buf_add(b, e->out.ptr ? e->out.ptr : "", e->out.len);
	buf_add(b, e->err.ptr ? e->err.ptr : "", e->err.len);
	struct cache_hash h;
	char hex[33];
	cache_hash_bytes(b->ptr, b->len, &h);
	cache_hash_hex(&h, hex);
	buf_printf(b, "sum %s\n", hex);
}

/* 0 when TEXT (LEN bytes) is an intact entry KEYHEX of this version, filling OUT; else -1. */
static int entry_parse(const char *text, size_t len, const char *keyhex, struct cache_entry *out)
{
	char want[256];
	int rc, hlen = snprintf(want, sizeof want, "%s\nversion %s\nkey %s\nrc ", CACHE_FORMAT, PREEMPTIFY_VERSION,
				keyhex);
	size_t nout, nerr, files;
	const size_t trailer = 4 + 32 + 1; /* "sum " HEX "\n" */
	if (hlen < 0 || (size_t)hlen >= sizeof want || len < (size_t)hlen + trailer || memcmp(text, want, hlen) != 0)
		return -1;
	const char *nl = memchr(text + hlen, '\n', len - hlen);
	if (!nl || sscanf(text + hlen - 3, "rc %d out %zu err %zu files %zu", &rc, &nout, &nerr, &files) != 4)
		return -1;
	size_t body = (size_t)(nl + 1 - text);
	if (nout > len || nerr > len || body + nout + nerr + trailer != len)
		return -1;
	struct cache_hash h;
	char hex[33];
	cache_hash_bytes(text, len - trailer, &h);
	cache_hash_hex(&h, hex);
	if (memcmp(text + len - trailer, "sum ", 4) != 0 || memcmp(text + len - trailer + 4, hex, 32) != 0 ||
	    text[len - 1] != '\n')
		return -1;
	out->rc = rc;
	out->files = files;
	buf_add(&out->out, text + body, nout);
	buf_add(&out->err, text + body + nout, nerr);
	return 0;
}

int cache_load(const char *dir, const char *keyhex, struct cache_entry *out)
{
	char *path = xasprintf("%s/%s", dir, keyhex), *text = NULL;
	size_t len = 0;
	int rc = 0;
	if (read_file(path, &text, &len) < 0) {
		error_clear();
		rc = access(path, F_OK) == 0 ? -1 : 0;
		goto done;
	}
	rc = entry_parse(text, len, keyhex, out) == 0 ? 1 : -1;
	if (rc == 1)
		utimensat(AT_FDCWD, path, NULL, 0); /* its use time, for eviction */
done:
	free(text);
	free(path);
	return rc;
}

/*
 * Does the file NAME of directory DFD begin as an entry does? Nothing else
 * is ever removed, whatever directory --cache-dir names.
 */
static bool has_entry_header(int dfd, const char *name)
{
	char head[sizeof CACHE_FORMAT];
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, head, sizeof head);
	close(fd);
	return n == (ssize_t)sizeof head && memcmp(head, CACHE_FORMAT "\n", sizeof head) == 0;
}

/* May PATH be replaced by an entry: absent, or an entry itself (never a file of the user's)? */
static bool replaceable(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return errno == ENOENT;
	return S_ISREG(st.st_mode) && has_entry_header(AT_FDCWD, path);
}

/* mkdir -p DIR; 0 or -1 (error set). */
static int make_dirs(const char *dir)
{
	char *p = xstrdup(dir);
	int rc = 0;
	for (char *s = p + 1; rc == 0; s++) {
		char c = *s;
		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST)
			rc = error_set("%s: %s", p, strerror(errno));
		*s = c;
		if (c == '\0')
			break;
	}
	free(p);
	return rc;
}

int cache_write(const char *dir, const char *keyhex, const struct cache_entry *e)
{
	struct buf b = BUF_INIT;
	char *tmp = xasprintf("%s/.tmp-XXXXXX", dir), *path = xasprintf("%s/%s", dir, keyhex);
	int fd = -1, rc = -1;
	if (make_dirs(dir) < 0)
		goto done;
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		error_set("%s: %s", dir, strerror(errno));
		goto done;
	}
	entry_format(keyhex, e, &b);
	for (size_t off = 0; off < b.len;) {
		ssize_t w = write(fd, b.ptr + off, b.len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			error_set("%s: %s", tmp, w < 0 ? strerror(errno) : "short write");
			goto done;
		}
		off += (size_t)w;
	}
	if (close(fd) != 0) {
		fd = -1;
		error_set("%s: %s", tmp, strerror(errno));
		goto done;
	}
	fd = -1;
	if (!replaceable(path)) {
		error_set("%s: exists and is not a cache entry: not replaced", path);
		goto done;
	}
	if (rename(tmp, path) != 0) {
		error_set("%s: %s", path, strerror(errno));
		goto done;
	}
	rc = 0;
done:
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		unlink(tmp);
	buf_release(&b);
	free(tmp);
	free(path);
	return rc;
}

/* An entry's name: 32 hex digits. */
static bool is_entry(const char *name)
{
	size_t n = strspn(name, "0123456789abcdef");
	return n == 32 && name[n] == '\0';
}

struct aged {
	char *name;
	struct timespec used;
	uint64_t bytes;
};
typedef VEC(struct aged) aged_vec;

static int aged_cmp(const void *x, const void *y)
{
	const struct aged *a = x, *b = y;
	if (a->used.tv_sec != b->used.tv_sec)
		return a->used.tv_sec < b->used.tv_sec ? -1 : 1;
	if (a->used.tv_nsec != b->used.tv_nsec)
		return a->used.tv_nsec < b->used.tv_nsec ? -1 : 1;
	return strcmp(a->name, b->name);
}


/* The entries of DIR (and, with TMP, temporary files too) with their use times and sizes. */
static void list_entries(const char *dir, bool tmp, aged_vec *out)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		struct stat st;
		if (!is_entry(e->d_name) && !(tmp && strncmp(e->d_name, ".tmp-", 5) == 0))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
		    !has_entry_header(dirfd(d), e->d_name))
			continue;
		vec_push(out, ((struct aged){xstrdup(e->d_name), st.st_mtim, (uint64_t)st.st_size}));
	}
	if (d)
		closedir(d);
}

static void aged_release(aged_vec *v)
{
	for (size_t i = 0; i < v->len; i++)
		free(v->items[i].name);
	vec_release(v);
}

int cache_store(const char *dir, const char *keyhex, const struct cache_entry *e)
{
	if (cache_write(dir, keyhex, e) < 0)
		return -1;
	cache_evict(dir);
	return 0;
}

void cache_evict(const char *dir)
{
	aged_vec v = VEC_INIT;
	uint64_t total = 0;
	list_entries(dir, false, &v);
	for (size_t i = 0; i < v.len; i++)
		total += v.items[i].bytes;
	if (v.len)
		qsort(v.items, v.len, sizeof *v.items, aged_cmp);
	for (size_t i = 0; i < v.len && total > CACHE_MAX_BYTES; i++) {
		char *p = xasprintf("%s/%s", dir, v.items[i].name);
		if (unlink(p) == 0)
			total -= v.items[i].bytes;
		free(p);
	}
	aged_release(&v);
}

void cache_stat(const char *dir, size_t *entries, uint64_t *bytes)
{
	aged_vec v = VEC_INIT;
	list_entries(dir, false, &v);
	*entries = v.len;
	*bytes = 0;
	for (size_t i = 0; i < v.len; i++)
		*bytes += v.items[i].bytes;
	aged_release(&v);
}

/* Removes the entries and temporary files of DIR itself: their number, or -1. */
static long clean_one(const char *dir)
{
	aged_vec v = VEC_INIT;
	long n = 0;
	list_entries(dir, true, &v);
	for (size_t i = 0; i < v.len; i++) {
		char *p = xasprintf("%s/%s", dir, v.items[i].name);
		if (unlink(p) == 0)
			n++;
		else if (errno != ENOENT)
			n = error_set("%s: %s", p, strerror(errno));
		free(p);
		if (n < 0)
			break;
	}
	aged_release(&v);
	return n;
}

long cache_clean(const char *dir)
{
	char *steps = xasprintf("%s/" CACHE_STEPS_DIR, dir), *files = xasprintf("%s/" CACHE_FILES_DIR, dir);
	long n = clean_one(dir), m = n < 0 ? 0 : clean_one(steps), k = n < 0 || m < 0 ? 0 : clean_one(files);
	free(steps);
	free(files);
	return n < 0 || m < 0 || k < 0 ? -1 : n + m + k;
}
