#include "util/util.h"
#include "util/embedded.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void oom(void)
{
	fputs("preemptify: out of memory\n", stderr);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	return buf_detach(&b);
}

static _Thread_local char error_msg[8192];

int error_set(const char *fmt, ...)
{
	/* through a copy: an argument may be error_last() itself */
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *msg = xmalloc(n > 0 ? (size_t)n + 1 : 1);
	va_start(ap, fmt);
	vsnprintf(msg, n > 0 ? (size_t)n + 1 : 1, fmt, ap);
	va_end(ap);
	size_t len = n > 0 ? (size_t)n : 0, cap = sizeof error_msg;
	if (len < cap) {
		memcpy(error_msg, msg, len + 1);
	} else {
		/* too long (a path near PATH_MAX): the middle goes, so the reason at the end stays */
		size_t head = 512, tail = cap - head - 4;
		memcpy(error_msg, msg, head);
		memcpy(error_msg + head, "...", 3);
		memcpy(error_msg + head + 3, msg + len - tail, tail);
		error_msg[cap - 1] = '\0';
	}
	free(msg);
	return -1;
}

const char *error_last(void)
{
	return error_msg;
}

void error_clear(void)
{
	error_msg[0] = '\0';
}

void buf_grow(struct buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + extra + 1)
		cap *= 2;
	b->ptr = xrealloc(b->ptr, cap);
	b->cap = cap;
}

void buf_add(struct buf *b, const void *data, size_t n)
{
	buf_grow(b, n);
	if (n)
		memcpy(b->ptr + b->len, data, n);
	b->len += n;
	b->ptr[b->len] = '\0';
}

void buf_puts(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void buf_putc(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

void buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	buf_grow(b, (size_t)n);
	vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void buf_add_wrapped(struct buf *b, const char *text, const char *first, const char *rest, size_t width)
{
	size_t col = 0;
	bool started = false;
	for (const char *p = text; *p;) {
		while (*p == ' ')
			p++;
		size_t w = strcspn(p, " ");
		if (!w)
			break;
		if (started && col + 1 + w > width) {
			buf_putc(b, '\n');
			buf_puts(b, rest);
			col = strlen(rest);
		} else if (started) {
			buf_putc(b, ' ');
			col++;
		} else {
			buf_puts(b, first);
			col = strlen(first);
			started = true;
		}
		buf_add(b, p, w);
		col += w;
		p += w;
	}
	if (started)
		buf_putc(b, '\n');
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

/* Length of the valid UTF-8 sequence at P (P[0] >= 0x80), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *p)
{
	size_t n;
	unsigned min;
	unsigned cp;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, min = 0x80, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, min = 0x800, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, min = 0x10000, cp = p[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void buf_json_str(struct buf *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': buf_puts(b, "\\\""); break;
		case '\\': buf_puts(b, "\\\\"); break;
		case '\n': buf_puts(b, "\\n"); break;
		case '\t': buf_puts(b, "\\t"); break;
		case '\r': buf_puts(b, "\\r"); break;
		default:
			if (*p < 0x20) {
				buf_printf(b, "\\u%04x", *p);
			} else if (*p < 0x80) {
				buf_putc(b, (char)*p);
			} else {
				/* valid UTF-8 passes; any other byte is its Latin-1 reading */
				size_t n = utf8_len(p);
				if (n) {
					buf_add(b, p, n);
					p += n - 1;
				} else {
					buf_printf(b, "\\u%04x", *p);
				}
			}
		}
	}
}

const char *buf_cstr(const struct buf *b)
{
	return b->ptr ? b->ptr : "";
}

char *buf_detach(struct buf *b)
{
	char *p = b->ptr ? b->ptr : xstrdup("");
	b->ptr = NULL;
	b->len = b->cap = 0;
	return p;
}

void buf_clear(struct buf *b)
{
	b->len = 0;
	if (b->ptr)
		b->ptr[0] = '\0';
}

void buf_release(struct buf *b)
{
	free(b->ptr);
	b->ptr = NULL;
	b->len = b->cap = 0;
}

void vec_reserve_(void **items, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return;
	size_t n = *cap ? *cap : 8;
	while (n < need)
		n *= 2;
	*items = xrealloc(*items, n * elem);
	*cap = n;
}

void strvec_push(struct strvec *v, const char *s)
{
	vec_push(v, xstrdup(s));
}

void strvec_pushf(struct strvec *v, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	vec_push(v, buf_detach(&b));
}

void strvec_release(struct strvec *v)
{
	for (size_t i = 0; i < v->len; i++)
		free(v->items[i]);
	vec_release(v);
}

const char *after_path(const char *msg, const char *path)
{
	size_t n = strlen(path);
	if (n && strncmp(msg, path, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
		return msg + n + 2;
	return msg;
}

uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ull;
	}
	return h;
}

static inline uint64_t rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

/* Two independent lanes over 8-byte words (MurmurHash3-style mixing), the length folded in. */
void hash128(const void *p, size_t n, uint64_t out[2])
{
	const unsigned char *s = p;
	uint64_t a = 0x9e3779b97f4a7c15ull, b = 0x6a09e667f3bcc909ull;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		a = rotl64(a ^ (w * 0x87c37b91114253d5ull), 31) * 0x4cf5ad432745937full;
		b = rotl64(b + (w * 0x4cf5ad432745937full), 27) * 0x87c37b91114253d5ull + 0x52dce729;
	}
	uint64_t t = 0;
	for (size_t k = 0; i + k < n; k++)
		t |= (uint64_t)s[i + k] << (8 * k);
	a = mix64(a ^ t ^ (uint64_t)n);
	b = mix64(b + rotl64(t, 17) + ((uint64_t)n << 1));
	out[0] = mix64(a + b);
	out[1] = mix64(b ^ rotl64(a, 29));
}

void buf_put_u64(struct buf *b, uint64_t v)
{
	unsigned char x[8];
	for (int i = 0; i < 8; i++)
		x[i] = (unsigned char)(v >> (8 * i));
	buf_add(b, x, 8);
}

void buf_put_str(struct buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	buf_put_u64(b, s ? n + 1 : 0);
	buf_add(b, s ? s : "", n);
}

uint64_t reader_u64(struct reader *r)
{
	if (r->bad || r->n < 8) {
		r->bad = true;
		return 0;
	}
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += 8;
	r->n -= 8;
	return v;
}

uint64_t reader_below(struct reader *r, uint64_t limit)
{
	uint64_t v = reader_u64(r);
	if (v >= limit)
		r->bad = true;
	return r->bad ? 0 : v;
}

char *reader_str(struct reader *r)
{
	uint64_t n = reader_u64(r);
	if (r->bad || n == 0)
		return NULL;
	if (n - 1 > r->n || memchr(r->p, '\0', n - 1)) {
		r->bad = true;
		return NULL;
	}
	char *s = xstrndup((const char *)r->p, n - 1);
	r->p += n - 1;
	r->n -= n - 1;
	return s;
}

/* Why PATH (stat ST) is not read: a FIFO would block, a device may never end. */
static int not_regular(const char *path, const struct stat *st)
{
	const char *what = S_ISFIFO(st->st_mode)   ? "a FIFO"
			   : S_ISCHR(st->st_mode)  ? "a character device"
			   : S_ISBLK(st->st_mode)  ? "a block device"
			   : S_ISSOCK(st->st_mode) ? "a socket"
			   : S_ISDIR(st->st_mode)  ? "a directory"
						   : "not a regular file";
	return error_set("%s: %s, not a regular file; not read", path, what);
}

int read_file_max(const char *path, size_t max, char **out, size_t *out_len)
{
	struct buf b = BUF_INIT;
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return not_regular(path, &st);
	/* O_NONBLOCK: a FIFO put in its place since the stat() must not hang the open */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return error_set("%s: cannot open: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return not_regular(path, &st);
	}
	if (max && (uint64_t)st.st_size > max) {
		close(fd);
		return error_set("%s: %lld bytes, more than the %zu this file may hold; not read", path,
				 (long long)st.st_size, max);
	}
	/* the file's size, and a byte to see the end in: no more (a buffer of
	 * 128 KiB or more is mapped and unmapped by malloc, page by page) */
	b.cap = (size_t)st.st_size + 2;
	b.ptr = xmalloc(b.cap);
	for (;;) {
		if (b.cap - b.len < 2)
			buf_grow(&b, 65536);
		ssize_t n = read(fd, b.ptr + b.len, b.cap - b.len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			buf_release(&b);
			return error_set("%s: read error: %s", path, strerror(e));
		}
		if (n == 0)
			break;
		b.len += (size_t)n;
		if (max && b.len > max) { /* it grew while read */
			close(fd);
			buf_release(&b);
			return error_set("%s: more than the %zu bytes this file may hold; not read", path, max);
		}
	}
	close(fd);
	buf_grow(&b, 0);
	b.ptr[b.len] = '\0';
	*out_len = b.len;
	*out = buf_detach(&b);
	return 0;
}

int read_file(const char *path, char **out, size_t *out_len)
{
	return read_file_max(path, 0, out, out_len);
}

int write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return error_set("%s: cannot create: %s", path, strerror(errno));
	size_t w = fwrite(data, 1, len, f);
	if (fclose(f) != 0 || w != len)
		return error_set("%s: write error", path);
	return 0;
}

size_t line_index(const size_t *starts, size_t n, size_t offset)
{
	size_t lo = 0, hi = n;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (starts[mid] <= offset)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

bool path_glob_match(const char *glob, const char *path)
{
	for (const char *p = path; p; ) {
		if (fnmatch(glob, p, 0) == 0)
			return true;
		p = strchr(p, '/');
		if (p)
			p++;
	}
	return false;
}

static size_t min3(size_t a, size_t b, size_t c)
{
	return a < b ? (a < c ? a : c) : (b < c ? b : c);
}

size_t edit_distance(const char *a, size_t la, const char *b)
{
	size_t lb = strlen(b);
	if (la > 31 || lb > 31)
		return 32;
	size_t d[32][32];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			d[i][j] = min3(d[i - 1][j - 1] + (a[i - 1] != b[j - 1]), d[i - 1][j] + 1, d[i][j - 1] + 1);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < d[i][j])
				d[i][j] = d[i - 2][j - 2] + 1; /* two neighbours swapped */
		}
	return d[la][lb];
}

const char *nearest_word(const char *word, size_t len, const char *const *words, size_t n)
{
	const char *best = NULL;
	size_t best_d = 32;
	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(word, len, words[i]);
		if (d < best_d)
			best = words[i], best_d = d;
	}
	return best && best_d <= 2 && best_d * 3 < strlen(best) ? best : NULL;
}

const struct embedded_file *embedded_find(const char *name)
{
	for (const struct embedded_file *f = embedded_files; f->name; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}
