/*
 * Each file's scan result, kept by its key (scan_options.memo): a file
 * whose bytes, path and scan context are those of an earlier scan is not
 * parsed again, its result read back instead. The context is everything a
 * file's scan reads besides its bytes: the options that change the answer,
 * what the tree says of itself (kernel_api_digest()), the tree's index
 * (tree_context_digest()), header macros and shared arrays with their
 * verdicts. A change anywhere in it is a new key for every file, so a
 * reused result is always the one the scan would make.
 *
 * The stored form is a flat run of fixed-width numbers and length-prefixed
 * strings; a form that does not read back whole and in range is no entry
 * (the file is scanned again).
 */
#include "pipeline/scan_internal.h"
#include "pipeline/verify.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/kernel_api.h"
#include "rules/scan_result.h"

#define MEMO_FORM "preemptify scan-file 2"

/* A new last item of vector V (its bytes unset), for a reader to fill. */
#define push_slot(v) (vec_reserve((v), 1), &(v)->items[(v)->len++])

/* ---- writing ---- */

static void put_pos(struct buf *b, struct srcpos p)
{
	buf_put_u64(b, p.line);
	buf_put_u64(b, p.column);
	buf_put_u64(b, p.offset);
}

static void put_edit(struct buf *b, const struct edit *e)
{
	buf_put_u64(b, (uint64_t)e->op);
	put_pos(b, e->start);
	put_pos(b, e->end);
	buf_put_str(b, e->node);
	buf_put_str(b, e->text);
	buf_put_u64(b, (uint64_t)e->wrap | (uint64_t)e->in_define << 1 | (uint64_t)e->by_text << 2);
	/* the indent's bytes up to its NUL, the rest zero: what lies past it was never written */
	char indent[sizeof e->indent] = {0};
	memcpy(indent, e->indent, strnlen(e->indent, sizeof e->indent - 1));
	buf_add(b, indent, sizeof indent);
	put_pos(b, e->tail);
}

static void put_finding(struct buf *b, const struct finding *f)
{
	buf_put_u64(b, (uint64_t)f->rule);
	buf_put_str(b, f->file);
	put_pos(b, f->pos);
	put_pos(b, f->end);
	buf_put_str(b, f->function);
	buf_put_str(b, f->message);
	buf_put_u64(b, (uint64_t)f->severity);
	buf_put_u64(b, (uint64_t)f->confidence);
	buf_put_u64(b, (uint64_t)f->fix);
	buf_put_str(b, f->evidence);
	buf_put_str(b, f->fix_note);
	buf_put_u64(b, (uint64_t)f->protected_site | (uint64_t)f->array_this_cpu << 1 |
			   (uint64_t)f->array_protected << 2);
	buf_put_str(b, f->array);
	buf_put_u64(b, f->cpu_read_line);
	buf_put_u64(b, f->file_hash);
	buf_put_u64(b, f->file_len);
	buf_put_u64(b, f->edits.len);
	for (size_t i = 0; i < f->edits.len; i++)
		put_edit(b, &f->edits.items[i]);
	buf_put_u64(b, f->edits_ordered);
}

static void put_macro(struct buf *b, const struct tree_macro *m)
{
	buf_put_str(b, m->def.name);
	buf_put_u64(b, m->def.function_like);
	buf_put_str(b, m->def.body);
	buf_put_u64(b, m->def.offset);
	buf_put_u64(b, m->def.end);
	buf_put_str(b, m->file);
	buf_put_u64(b, m->line);
	buf_put_u64(b, (uint64_t)m->kind);
}

static void put_array(struct buf *b, const struct tree_array *a)
{
	const char *s[] = {a->name, a->type, a->file, a->why_not, a->users, a->soa_tag,
			   a->soa_file, a->soa_var, a->soa_fields, a->plan};
	for (size_t i = 0; i < ARRAY_SIZE(s); i++)
		buf_put_str(b, s[i]);
	buf_put_u64(b, a->line);
	buf_put_u64(b, a->soa_line);
	buf_put_u64(b, (uint64_t)a->only_dedupe | (uint64_t)a->kept << 1);
}

/* ---- reading ---- */

static struct srcpos get_pos(struct reader *r)
{
	struct srcpos p;
	p.line = (unsigned)reader_below(r, UINT32_MAX);
	p.column = (unsigned)reader_below(r, UINT32_MAX);
	p.offset = (size_t)reader_u64(r);
	return p;
}

/*
 * An edit's node type is a static string (tree-sitter's): a stored one is
 * interned for the process, so each distinct type is allocated once.
 */
static const char *intern(const char *s)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static struct strvec seen = STRVEC_INIT;
	if (!s)
		return NULL;
	const char *hit = NULL;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < seen.len && !hit; i++)
		if (strcmp(seen.items[i], s) == 0)
			hit = seen.items[i];
	if (!hit) {
		strvec_push(&seen, s);
		hit = seen.items[seen.len - 1];
	}
	pthread_mutex_unlock(&mu);
	return hit;
}

static void get_edit(struct reader *r, struct edit *e)
{
	memset(e, 0, sizeof *e);
	e->op = (enum edit_op)reader_below(r, EDIT_INSERT_AFTER + 1);
	e->start = get_pos(r);
	e->end = get_pos(r);
	char *node = reader_str(r);
	e->node = intern(node);
	free(node);
	e->text = reader_str(r);
	uint64_t flags = reader_below(r, 8);
	e->wrap = flags & 1;
	e->in_define = (flags >> 1) & 1;
	e->by_text = (flags >> 2) & 1;
	if (r->n < sizeof e->indent || memchr(r->p, '\0', sizeof e->indent) == NULL) {
		r->bad = true;
	} else {
		memcpy(e->indent, r->p, sizeof e->indent);
		r->p += sizeof e->indent;
		r->n -= sizeof e->indent;
	}
	e->tail = get_pos(r);
	if (!e->text && !r->bad)
		r->bad = true; /* every edit has its text, if empty */
}

static void get_finding(struct reader *r, struct finding *f)
{
	memset(f, 0, sizeof *f);
	f->rule = (enum rule_id)reader_below(r, RULE_COUNT);
	f->file = reader_str(r);
	f->pos = get_pos(r);
	f->end = get_pos(r);
	f->function = reader_str(r);
	f->message = reader_str(r);
	f->severity = (enum severity)reader_below(r, SEV_NOTE + 1);
	f->confidence = (enum confidence)reader_below(r, CONF_LOW + 1);
	f->fix = (enum fix_kind)reader_below(r, FIX_COUNT);
	f->evidence = reader_str(r);
	f->fix_note = reader_str(r);
	uint64_t flags = reader_below(r, 8);
	f->protected_site = flags & 1;
	f->array_this_cpu = (flags >> 1) & 1;
	f->array_protected = (flags >> 2) & 1;
	f->array = reader_str(r);
	f->cpu_read_line = (unsigned)reader_below(r, UINT32_MAX);
	f->file_hash = reader_u64(r);
	f->file_len = (size_t)reader_u64(r);
	uint64_t n = reader_below(r, r->n / 8 + 1);
	for (uint64_t i = 0; i < n && !r->bad; i++) {
		struct edit e;
		get_edit(r, &e);
		vec_push(&f->edits, e);
	}
	f->edits_ordered = (size_t)reader_below(r, f->edits.len + 1);
	if (!f->file || !f->message)
		r->bad = true;
}

static void get_macro(struct reader *r, struct tree_macro *m)
{
	memset(m, 0, sizeof *m);
	m->def.name = reader_str(r);
	m->def.function_like = reader_below(r, 2);
	m->def.body = reader_str(r);
	m->def.offset = (size_t)reader_u64(r);
	m->def.end = (size_t)reader_u64(r);
	m->file = reader_str(r);
	m->line = (unsigned)reader_below(r, UINT32_MAX);
	m->kind = (enum tree_macro_kind)reader_below(r, MACRO_CPU + 1);
	if (!m->def.name || !m->file)
		r->bad = true;
}

static void get_array(struct reader *r, struct tree_array *a)
{
	memset(a, 0, sizeof *a);
	char **s[] = {&a->name, &a->type, &a->file, &a->why_not, &a->users, &a->soa_tag,
		      &a->soa_file, &a->soa_var, &a->soa_fields, &a->plan};
	for (size_t i = 0; i < ARRAY_SIZE(s); i++)
		*s[i] = reader_str(r);
	a->line = (unsigned)reader_below(r, UINT32_MAX);
	a->soa_line = (unsigned)reader_below(r, UINT32_MAX);
	uint64_t flags = reader_below(r, 4);
	a->only_dedupe = flags & 1;
	a->kept = (flags >> 1) & 1;
	if (!a->name)
		r->bad = true;
}

/* ---- one file's result ---- */

/* R's parts one scan_path() adds (no index: a file's scan builds none), with its return code RC. */
static void result_form(const struct scan_result *r, int rc, struct buf *b)
{
	buf_puts(b, MEMO_FORM);
	buf_put_u64(b, (uint64_t)(int64_t)rc);
	buf_put_u64(b, r->stats.files);
	buf_put_u64(b, r->stats.bytes);
	buf_put_u64(b, r->stats.parsed);
	for (int k = 0; k < RULE_COUNT; k++)
		buf_put_u64(b, r->stats.per_rule[k]);
	buf_put_u64(b, r->findings.len);
	for (size_t i = 0; i < r->findings.len; i++)
		put_finding(b, &r->findings.items[i]);
	buf_put_u64(b, r->diagnostics.len);
	for (size_t i = 0; i < r->diagnostics.len; i++) {
		const struct diagnostic *d = &r->diagnostics.items[i];
		buf_put_u64(b, (uint64_t)d->kind);
		buf_put_str(b, d->file);
		buf_put_u64(b, d->line);
		buf_put_u64(b, d->column);
		buf_put_str(b, d->message);
		buf_put_u64(b, d->end_column);
	}
	buf_put_u64(b, r->want.len);
	for (size_t i = 0; i < r->want.len; i++) {
		buf_put_str(b, r->want.items[i].name);
		buf_put_str(b, r->want.items[i].file);
	}
	buf_put_u64(b, r->macros.len);
	for (size_t i = 0; i < r->macros.len; i++)
		put_macro(b, &r->macros.items[i]);
	buf_put_u64(b, r->arrays.len);
	for (size_t i = 0; i < r->arrays.len; i++)
		put_array(b, &r->arrays.items[i]);
}

static void get_diagnostic(struct reader *r, struct diagnostic *d)
{
	memset(d, 0, sizeof *d);
	d->kind = (enum diag_kind)reader_below(r, DIAG_TOOL + 1);
	d->file = reader_str(r);
	d->line = (unsigned)reader_below(r, UINT32_MAX);
	d->column = (unsigned)reader_below(r, UINT32_MAX);
	d->message = reader_str(r);
	d->end_column = (unsigned)reader_below(r, UINT32_MAX);
	if (!d->file || !d->message)
		r->bad = true;
}

/* The lists of a stored result, each pushed even when it reads bad (so that it is released). */
static void result_lists(struct reader *r, struct scan_result *out)
{
	uint64_t n = reader_below(r, r->n + 1);
	for (uint64_t i = 0; i < n && !r->bad; i++)
		get_finding(r, push_slot(&out->findings));
	n = reader_below(r, r->n + 1);
	for (uint64_t i = 0; i < n && !r->bad; i++)
		get_diagnostic(r, push_slot(&out->diagnostics));
	n = reader_below(r, r->n + 1);
	for (uint64_t i = 0; i < n && !r->bad; i++) {
		struct tree_want w;
		w.name = reader_str(r);
		w.file = reader_str(r);
		vec_push(&out->want, w);
		r->bad |= !w.name || !w.file;
	}
	n = reader_below(r, r->n + 1);
	for (uint64_t i = 0; i < n && !r->bad; i++)
		get_macro(r, push_slot(&out->macros));
	n = reader_below(r, r->n + 1);
	for (uint64_t i = 0; i < n && !r->bad; i++)
		get_array(r, push_slot(&out->arrays));
}

/* Reads TEXT (LEN bytes) back into OUT (empty) and *RC: 0, or -1 (OUT released, empty again). */
static int result_read(const char *text, size_t len, struct scan_result *out, int *rc)
{
	size_t fl = strlen(MEMO_FORM);
	if (len < fl || memcmp(text, MEMO_FORM, fl) != 0)
		return -1;
	struct reader r = {(const unsigned char *)text + fl, len - fl, false};
	*rc = (int)(int64_t)reader_u64(&r);
	out->stats.files = (size_t)reader_u64(&r);
	out->stats.bytes = (size_t)reader_u64(&r);
	out->stats.parsed = (size_t)reader_u64(&r);
	for (int k = 0; k < RULE_COUNT; k++)
		out->stats.per_rule[k] = (size_t)reader_u64(&r);
	result_lists(&r, out);
	if (r.bad || r.n != 0 || (*rc != 0 && *rc != -1)) {
		scan_result_release(out);
		*out = (struct scan_result)SCAN_RESULT_INIT;
		return -1;
	}
	return 0;
}

/* ---- keys ---- */

void scan_memo_context(const struct scan_options *o, uint64_t out[2])
{
	struct buf b = BUF_INIT;
	buf_printf(&b, "%s\nrules %u verbose %d prefilter %d target %d strict %d depth %u verify %d want %d "
		   "whole %d over %d modern %d fixsleep %d\n", MEMO_FORM, o->rules, o->verbose, !o->no_prefilter, (int)o->target,
		   o->strict_stats, o->verify_depth, !o->no_verify, o->want, o->whole_tree, o->arrays_over_index,
		   o->modernize, o->fix_sleep);
	kernel_api_digest(&b);
	tree_context_digest(o->tree, &b);
	buf_printf(&b, "macros %zu\n", o->macros ? o->macros->len : 0);
	for (size_t i = 0; o->macros && i < o->macros->len; i++)
		put_macro(&b, &o->macros->items[i]);
	buf_printf(&b, "arrays %zu\n", o->arrays ? o->arrays->len : 0);
	for (size_t i = 0; o->arrays && i < o->arrays->len; i++)
		put_array(&b, &o->arrays->items[i]);
	hash128(b.ptr, b.len, out);
	buf_release(&b);
}

/* The key of PATH's TEXT in the context CTX: the context, the path and the bytes' hash. */
static void file_key(const uint64_t ctx[2], const char *path, const char *text, size_t len, struct buf *key)
{
	uint64_t h[2];
	hash128(text, len, h);
	buf_puts(key, MEMO_FORM);
	buf_put_u64(key, ctx[0]);
	buf_put_u64(key, ctx[1]);
	buf_put_str(key, path);
	buf_put_u64(key, len);
	buf_put_u64(key, h[0]);
	buf_put_u64(key, h[1]);
}

bool scan_memo_get(const struct memo *m, const uint64_t ctx[2], const char *path, const char *text,
		   size_t len, struct scan_result *out, int *rc)
{
	struct buf key = BUF_INIT;
	char *got = NULL;
	size_t got_len = 0;
	file_key(ctx, path, text, len, &key);
	bool hit = m->get(m->ctx, key.ptr, key.len, &got, &got_len) && result_read(got, got_len, out, rc) == 0;
	free(got);
	buf_release(&key);
	return hit;
}

void scan_memo_put(const struct memo *m, const uint64_t ctx[2], const char *path, const char *text,
		   size_t len, const struct scan_result *r, int rc)
{
	if (r->tree)
		return; /* a file's scan builds no index; nothing else is kept */
	struct buf key = BUF_INIT, form = BUF_INIT;
	file_key(ctx, path, text, len, &key);
	result_form(r, rc, &form);
	m->put(m->ctx, key.ptr, key.len, form.ptr, form.len);
	buf_release(&key);
	buf_release(&form);
}

/* ---- a rewrite's validation ---- */

#define VALIDATE_FORM "preemptify validate 1"

void verify_memo_key(const struct scan_options *o, const char *path, const char *old_text, size_t old_len,
		     const char *new_text, size_t new_len, struct finding *const *applied, size_t n,
		     struct buf *key)
{
	uint64_t ctx[2], h[2];
	scan_memo_context(o, ctx);
	buf_puts(key, VALIDATE_FORM);
	buf_put_u64(key, ctx[0]);
	buf_put_u64(key, ctx[1]);
	buf_put_str(key, path);
	hash128(old_text, old_len, h);
	buf_put_u64(key, old_len);
	buf_put_u64(key, h[0]);
	buf_put_u64(key, h[1]);
	hash128(new_text, new_len, h);
	buf_put_u64(key, new_len);
	buf_put_u64(key, h[0]);
	buf_put_u64(key, h[1]);
	buf_put_u64(key, n);
	for (size_t k = 0; k < n; k++)
		put_finding(key, applied[k]);
}
