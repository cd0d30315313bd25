/* Baselines: record today's findings, later report only the new ones. */
/* realpath() is XSI. */
#define _XOPEN_SOURCE 700
#include "cli/baseline.h"
#include "util/writefile.h"
#include "util/overlay.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#ifndef PREEMPTIFY_VERSION
#define PREEMPTIFY_VERSION "0"
#endif

struct baseline {
	struct strvec keys; /* "file\tfunction\trule\ttext", sorted */
	bool *used;         /* aligned with keys: already matched a finding */
	char *dir;          /* the baseline file's directory, resolved */
};

/* The resolved directory holding PATH (which need not exist), or NULL. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *d = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
	char *real = realpath(d, NULL);
	free(d);
	return real;
}

/* How a baseline under DIR names FILE: relative to DIR when under it, else as given. */
static char *key_path(const char *dir, const char *file)
{
	char *real = dir ? realpath(file, NULL) : NULL;
	size_t n = dir ? strlen(dir) : 0;
	char *p;
	if (real && n == 1 && real[0] == '/')
		p = xstrdup(real + 1);
	else if (real && strncmp(real, dir, n) == 0 && real[n] == '/')
		p = xstrdup(real + n + 1);
	else
		p = xstrdup(strncmp(file, "./", 2) == 0 ? file + 2 : file);
	free(real);
	return p;
}

/* Appends line LINE (1-based) of SRC to B with whitespace runs as one space, trimmed. */
static void put_line_text(struct buf *b, const char *src, unsigned line)
{
	const char *p = src;
	for (unsigned l = 1; l < line && p; l++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	bool space = false, any = false;
	for (; p && *p && *p != '\n'; p++) {
		if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\v' || *p == '\f') {
			space = any;
			continue;
		}
		if (space)
			buf_putc(b, ' ');
		buf_putc(b, *p);
		space = false;
		any = true;
	}
}

/* Keys of R's flagged findings, in R's order (NULL for protected sites). */
static char **finding_keys(const char *dir, const struct scan_result *r)
{
	char **keys = xcalloc(r->findings.len ? r->findings.len : 1, sizeof *keys);
	const char *file = NULL;
	char *src = NULL, *path = NULL;
	size_t len;
	struct buf b = BUF_INIT;
	for (size_t i = 0; i < r->findings.len; i++) {
		const struct finding *f = &r->findings.items[i];
		if (f->protected_site)
			continue;
		if (!file || strcmp(file, f->file) != 0) {
			free(src), free(path);
			src = NULL;
			if (overlay_read(f->file, &src, &len) < 0)
				error_clear(); /* scanned a moment ago; without its text the key has none */
			path = key_path(dir, f->file);
			file = f->file;
		}
		buf_clear(&b);
		buf_printf(&b, "%s\t%s\t%s\t", path, f->function ? f->function : "-", rule_code(f->rule));
		if (src)
			put_line_text(&b, src, f->pos.line);
		keys[i] = xstrdup(buf_cstr(&b));
	}
	free(src), free(path);
	buf_release(&b);
	return keys;
}

static int cstr_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Checks one record of PATH (line LINENO): four fields, a known rule. */
static int check_record(const char *path, size_t lineno, const char *s)
{
	const char *t1 = strchr(s, '\t');
	const char *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
	const char *t3 = t2 ? strchr(t2 + 1, '\t') : NULL;
	if (!t3 || strchr(t3 + 1, '\t'))
		return error_set("%s:%zu: expected 4 tab-separated fields (file, function, rule, text)",
				 path, lineno);
	if (t1 == s || t2 == t1 + 1)
		return error_set("%s:%zu: empty file or function field", path, lineno);
	char *rule = xstrndup(t2 + 1, (size_t)(t3 - t2 - 1));
	int r = rule_parse(rule);
	int rc = r < 0 ? error_set("%s:%zu: unknown rule '%s'", path, lineno, rule) : 0;
	free(rule);
	return rc;
}

int baseline_load(struct baseline **out, const char *path)
{
	struct baseline *b = xcalloc(1, sizeof *b);
	char *text = NULL;
	size_t len, lineno = 0;
	int rc = -1;
	*out = NULL;
	if (read_file_max(path, 64u << 20, &text, &len) < 0)
		goto done;
	if (memchr(text, '\0', len)) {
		error_set("%s:1: not a baseline file (binary)", path);
		goto done;
	}
	for (char *p = text; *p; ) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		size_t n = strlen(p);
		if (n && p[n - 1] == '\r')
			p[--n] = '\0';
		lineno++;
		if (lineno == 1 && strncmp(p, BASELINE_HEADER, strlen(BASELINE_HEADER)) != 0) {
			error_set("%s:1: not a baseline file: the first line must begin '%s'", path, BASELINE_HEADER);
			goto done;
		}
		if (n && p[0] != '#') {
			if (check_record(path, lineno, p) < 0)
				goto done;
			strvec_push(&b->keys, p);
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	if (lineno == 0) {
		error_set("%s:1: not a baseline file: empty", path);
		goto done;
	}
	qsort(b->keys.items, b->keys.len, sizeof *b->keys.items, cstr_cmp);
	b->used = xcalloc(b->keys.len ? b->keys.len : 1, sizeof *b->used);
	b->dir = dir_of(path);
	*out = b;
	b = NULL;
	rc = 0;
done:
	free(text);
	baseline_free(b);
	return rc;
}

/* The first unused key equal to KEY, or -1. */
static long find_unused(struct baseline *b, const char *key)
{
	size_t lo = 0, hi = b->keys.len;
	while (lo < hi) { /* lower bound */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(b->keys.items[mid], key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < b->keys.len && strcmp(b->keys.items[lo], key) == 0; lo++)
		if (!b->used[lo])
			return (long)lo;
	return -1;
}

size_t baseline_filter(struct baseline *b, struct scan_result *r)
{
	char **keys = finding_keys(b->dir, r);
	size_t kept = 0, dropped = 0;
	for (size_t i = 0; i < r->findings.len; i++) {
		long k = keys[i] ? find_unused(b, keys[i]) : -1;
		if (k >= 0) {
			b->used[k] = true;
			r->stats.per_rule[r->findings.items[i].rule]--;
			finding_release(&r->findings.items[i]);
			dropped++;
		} else {
			r->findings.items[kept++] = r->findings.items[i];
		}
		free(keys[i]);
	}
	r->findings.len = kept;
	free(keys);
	return dropped;
}

int baseline_write(const char *path, const struct scan_result *r, size_t *out_n)
{
	char *dir = dir_of(path);
	if (!dir)
		return error_set("%s: cannot write: its directory does not exist", path);
	char **keys = finding_keys(dir, r);
	struct strvec lines = STRVEC_INIT;
	for (size_t i = 0; i < r->findings.len; i++)
		if (keys[i])
			vec_push(&lines, keys[i]);
	qsort(lines.items, lines.len, sizeof *lines.items, cstr_cmp);
	struct buf b = BUF_INIT;
	buf_printf(&b, "%s (preemptify %s)\n# file\tfunction\trule\tline text (whitespace collapsed)\n",
		   BASELINE_HEADER, PREEMPTIFY_VERSION);
	for (size_t i = 0; i < lines.len; i++)
		buf_printf(&b, "%s\n", lines.items[i]);
	int rc = writefile_output(path, buf_cstr(&b), b.len);
	if (out_n)
		*out_n = lines.len;
	buf_release(&b);
	strvec_release(&lines);
	free(keys);
	free(dir);
	return rc;
}

void baseline_free(struct baseline *b)
{
	if (!b)
		return;
	strvec_release(&b->keys);
	free(b->used);
	free(b->dir);
	free(b);
}
