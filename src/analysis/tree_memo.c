/*
 * A file's analysis in one round of the tree index, kept across runs (the
 * result cache's files' part, struct memo): after one file of a tree
 * changed, the rounds go as before, and every other file's analysis in
 * them is read back instead of parsed again.
 *
 * The key is all the analysis reads: the file's bytes and path, its state
 * in the index (the names it holds, from which one on it is analysed, what
 * earlier parses found defined there), and the round's state of the whole
 * index (every name followed: its state, context, reason, depth, files),
 * with what the tree says of itself (kernel_api_digest()). One more thing
 * is read from other files: whether a struct field is accessed only in
 * this one (tree_field_private()). Those verdicts are kept with the
 * outcome and asked again before it is used: a different answer, and the
 * file is analysed. The outcome is the file's state after the analysis
 * and the uses it added.
 */
#include "analysis/tree_internal.h"

#include <stdlib.h>
#include <string.h>

#include "util/interrupt.h"
#include "util/overlay.h"

#define TREE_MEMO_FORM "preemptify tree-uses 1"

void tree_memo_round(struct tree_context *t)
{
	struct buf b = BUF_INIT;
	buf_puts(&b, TREE_MEMO_FORM);
	kernel_api_digest(&b);
	buf_put_u64(&b, t->names.len);
	for (size_t k = 0; k < t->names.len; k++) {
		const struct tname *x = &t->names.items[k];
		buf_put_str(&b, x->name);
		buf_put_u64(&b, x->fam);
		buf_put_u64(&b, (uint64_t)x->state | (uint64_t)x->ctx << 8 | (uint64_t)x->depth << 16);
		buf_put_u64(&b, (uint64_t)x->sleep_asked | (uint64_t)x->waiting << 1 | (uint64_t)x->member << 2);
		buf_put_str(&b, x->reason);
		buf_put_u64(&b, x->files.len);
		for (size_t i = 0; i < x->files.len; i++)
			buf_put_u64(&b, x->files.items[i]);
	}
	hash128(b.ptr, b.len, t->round);
	buf_release(&b);
}

static void put_u32s(struct buf *b, const uint32_t *v, size_t n)
{
	buf_put_u64(b, n);
	for (size_t i = 0; i < n; i++)
		buf_put_u64(b, v[i]);
}

/* F's state an analysis reads and changes (names excepted: only read). */
static void put_state(struct buf *b, const struct tfile *f)
{
	buf_put_u64(b, f->from);
	buf_put_u64(b, (uint64_t)f->force_parse | (uint64_t)f->parsed << 1 | (uint64_t)f->sliced << 2 |
			       (uint64_t)f->parsed_now << 3);
	buf_put_u64(b, f->seen.len);
	for (size_t i = 0; i < f->seen.len; i++) {
		buf_put_str(b, f->seen.items[i].name);
		buf_put_u64(b, f->seen.items[i].sleeps);
	}
	put_u32s(b, f->defines.items, f->defines.len);
	put_u32s(b, f->sleeping.items, f->sleeping.len);
}

static void put_ref(struct buf *b, const struct tref *r)
{
	buf_put_u64(b, r->name);
	buf_put_u64(b, (uint64_t)r->kind);
	buf_put_u64(b, (uint64_t)r->ctx);
	buf_put_u64(b, (uint64_t)r->protected_call | (uint64_t)r->self << 1 | (uint64_t)r->other << 2 |
			       (uint64_t)r->roots_ok << 3 | (uint64_t)r->roots_sleep << 4 | (uint64_t)r->verbatim << 5 |
			       (uint64_t)r->via_pointer << 6 | (uint64_t)r->asm_own << 7);
	buf_put_u64(b, r->line);
	buf_put_str(b, r->caller);
	buf_put_str(b, r->via);
	buf_put_str(b, r->why);
	buf_put_u64(b, r->nroots);
	for (size_t i = 0; i < r->nroots; i++)
		buf_put_str(b, r->roots[i]);
}

/* ---- reading an outcome back ---- */

/* An outcome read back, applied to the file only when whole and its verdicts still hold. */
struct outcome {
	field_log asked;
	size_t from;
	bool force_parse, parsed, sliced, parsed_now;
	VEC(struct tdef) seen;
	VEC(uint32_t) defines, sleeping;
	VEC(struct tref) refs;
};

static void outcome_release(struct outcome *o)
{
	for (size_t i = 0; i < o->asked.len; i++) {
		free(o->asked.items[i].path);
		free(o->asked.items[i].field);
	}
	vec_release(&o->asked);
	for (size_t i = 0; i < o->seen.len; i++)
		free(o->seen.items[i].name);
	vec_release(&o->seen);
	vec_release(&o->defines);
	vec_release(&o->sleeping);
	for (size_t i = 0; i < o->refs.len; i++) {
		struct tref *r = &o->refs.items[i];
		free(r->caller);
		free(r->via);
		free(r->why);
		for (size_t k = 0; k < r->nroots; k++)
			free(r->roots[k]);
		free(r->roots);
	}
	vec_release(&o->refs);
}

/* A list of name indices (below NAMES) into V. */
#define get_u32s(r, v, names)                                                       \
	do {                                                                        \
		uint64_t n_ = reader_below((r), (r)->n / 8 + 1);                    \
		for (uint64_t i_ = 0; i_ < n_ && !(r)->bad; i_++)                   \
			vec_push((v), (uint32_t)reader_below((r), (names)));        \
	} while (0)

static void get_ref(struct reader *r, size_t names, struct tref *x)
{
	memset(x, 0, sizeof *x);
	x->name = (uint32_t)reader_below(r, names);
	x->kind = (enum fn_use_kind)reader_below(r, USE_ADDRESS + 1);
	x->ctx = (enum fn_context)reader_below(r, CTX_CALLERS + 1);
	uint64_t fl = reader_below(r, 1u << 7);
	x->protected_call = fl & 1, x->self = fl >> 1 & 1, x->other = fl >> 2 & 1, x->roots_ok = fl >> 3 & 1;
	x->roots_sleep = fl >> 4 & 1, x->verbatim = fl >> 5 & 1, x->via_pointer = fl >> 6 & 1;
	x->asm_own = fl >> 7 & 1;
	x->line = (unsigned)reader_below(r, UINT32_MAX);
	x->caller = reader_str(r);
	x->via = reader_str(r);
	x->why = reader_str(r);
	uint64_t n = reader_below(r, r->n / 8 + 1);
	x->roots = xcalloc(n ? n : 1, sizeof *x->roots);
	for (uint64_t i = 0; i < n && !r->bad; i++) {
		x->roots[i] = reader_str(r);
		x->nroots = (size_t)i + 1;
		r->bad |= !x->roots[i];
	}
}

/* TEXT (LEN bytes) into O: 0, or -1 when it is not a whole outcome for an index of NAMES names. */
static int outcome_read(const char *text, size_t len, size_t names, struct outcome *o)
{
	size_t fl = strlen(TREE_MEMO_FORM);
	if (len < fl || memcmp(text, TREE_MEMO_FORM, fl) != 0)
		return -1;
	struct reader r = {(const unsigned char *)text + fl, len - fl, false};
	uint64_t n = reader_below(&r, r.n / 8 + 1);
	for (uint64_t i = 0; i < n && !r.bad; i++) {
		struct field_asked a = {NULL, NULL, false};
		a.path = reader_str(&r);
		a.field = reader_str(&r);
		a.private_ = reader_below(&r, 2);
		vec_push(&o->asked, a);
		r.bad |= !a.path || !a.field;
	}
	o->from = (size_t)reader_u64(&r);
	uint64_t flags = reader_below(&r, 16);
	o->force_parse = flags & 1, o->parsed = flags >> 1 & 1, o->sliced = flags >> 2 & 1;
	o->parsed_now = flags >> 3 & 1;
	n = reader_below(&r, r.n / 8 + 1);
	for (uint64_t i = 0; i < n && !r.bad; i++) {
		struct tdef d = {NULL, false};
		d.name = reader_str(&r);
		d.sleeps = reader_below(&r, 2);
		vec_push(&o->seen, d);
		r.bad |= !d.name;
	}
	get_u32s(&r, &o->defines, names);
	get_u32s(&r, &o->sleeping, names);
	n = reader_below(&r, r.n / 8 + 1);
	for (uint64_t i = 0; i < n && !r.bad; i++) {
		vec_reserve(&o->refs, 1);
		get_ref(&r, names, &o->refs.items[o->refs.len++]);
	}
	return r.bad || r.n ? -1 : 0;
}

/* Do the struct fields' verdicts O's analysis asked still come out the same? */
static bool verdicts_hold(const struct tree_context *t, const struct outcome *o)
{
	for (size_t i = 0; i < o->asked.len; i++)
		if (tree_field_private(t, o->asked.items[i].path, o->asked.items[i].field) != o->asked.items[i].private_)
			return false;
	return true;
}

/* F's state becomes O's (taken): what the analysis would have left. */
static void outcome_apply(struct outcome *o, struct tfile *f)
{
	if (f->from == 0)
		tree_file_refs_clear(f);
	for (size_t i = 0; i < o->refs.len; i++)
		vec_push(&f->refs, o->refs.items[i]);
	o->refs.len = 0;
	tree_file_seen_clear(f);
	for (size_t i = 0; i < o->seen.len; i++)
		vec_push(&f->seen, o->seen.items[i]);
	o->seen.len = 0;
	f->defines.len = f->sleeping.len = 0;
	for (size_t i = 0; i < o->defines.len; i++)
		vec_push(&f->defines, o->defines.items[i]);
	for (size_t i = 0; i < o->sleeping.len; i++)
		vec_push(&f->sleeping, o->sleeping.items[i]);
	f->from = o->from;
	f->force_parse = o->force_parse;
	f->parsed = o->parsed;
	f->sliced = o->sliced;
	f->parsed_now = o->parsed_now;
}

bool tree_memo_replay(const struct tree_context *t, struct tfile *f, struct memo_call *c)
{
	char *text = NULL, *got = NULL;
	size_t len = 0, got_len = 0;
	uint64_t h[2];
	if (overlay_read(f->path, &text, &len) < 0) {
		error_clear();
		return false; /* no key: analysed as always (it says the file could not be read) */
	}
	hash128(text, len, h);
	free(text);
	buf_puts(&c->key, TREE_MEMO_FORM);
	buf_put_u64(&c->key, t->round[0]);
	buf_put_u64(&c->key, t->round[1]);
	buf_put_str(&c->key, f->path);
	buf_put_u64(&c->key, f->fam);
	buf_put_u64(&c->key, len);
	buf_put_u64(&c->key, h[0]);
	buf_put_u64(&c->key, h[1]);
	put_u32s(&c->key, f->names.items, f->names.len);
	put_state(&c->key, f);
	c->refs_from = f->from == 0 ? 0 : f->refs.len;
	if (!t->memo->get(t->memo->ctx, c->key.ptr, c->key.len, &got, &got_len))
		return false;
	struct outcome o = {0};
	bool hit = outcome_read(got, got_len, t->names.len, &o) == 0 && verdicts_hold(t, &o);
	if (hit)
		outcome_apply(&o, f);
	outcome_release(&o);
	free(got);
	return hit;
}

void tree_memo_keep(const struct tree_context *t, const struct tfile *f, struct memo_call *c)
{
	if (!c->key.len || interrupted())
		return; /* no key, or an analysis cut short */
	struct buf b = BUF_INIT;
	buf_puts(&b, TREE_MEMO_FORM);
	buf_put_u64(&b, c->asked.len);
	for (size_t i = 0; i < c->asked.len; i++) {
		buf_put_str(&b, c->asked.items[i].path);
		buf_put_str(&b, c->asked.items[i].field);
		buf_put_u64(&b, c->asked.items[i].private_);
	}
	put_state(&b, f);
	buf_put_u64(&b, f->refs.len - c->refs_from);
	for (size_t i = c->refs_from; i < f->refs.len; i++)
		put_ref(&b, &f->refs.items[i]);
	t->memo->put(t->memo->ctx, c->key.ptr, c->key.len, b.ptr, b.len);
	buf_release(&b);
}

void memo_call_release(struct memo_call *c)
{
	buf_release(&c->key);
	for (size_t i = 0; i < c->asked.len; i++) {
		free(c->asked.items[i].path);
		free(c->asked.items[i].field);
	}
	vec_release(&c->asked);
}
