/*
 * Translation validation (validate.h). The token check rebuilds the text the
 * plan promises (OLD with its edits) as a token stream and compares it with
 * spatch's output; the analysis checks re-run the scan on both texts and
 * compare per function.
 */
#include "fix/validate.h"
#include "parse/ctext.h"

#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "parse/source.h"
#include "parse/ts.h"
#include "pipeline/verify.h"

/* ---- tokens -------------------------------------------------------------- */

struct tok {
	const char *s;     /* its bytes */
	size_t len;
	size_t origin;     /* offset in OLD it stands for (an edit's anchor if inserted) */
	bool comment;
	bool inserted;     /* comes from an edit's text */
	bool same_line;    /* comment: on the line of the previous non-comment token */
	size_t slot_lo, slot_hi; /* comment that may float among these non-comment indices */
	/*
	 * Preprocessor structure: the `#` opening a directive, the end of its
	 * line and its `\` continuations are tokens too (a newline is not a
	 * blank there), each with DIRECTIVE, the origin of its directive's `#`.
	 */
	bool opens_directive;
	size_t directive;
};
typedef VEC(struct tok) tok_vec;
typedef VEC(const struct tok *) tokp_vec;
typedef VEC(size_t) size_vec;

#define NO_SLOT ((size_t)-1)

/* The tokens a directive's line structure adds (quoted as such in messages). */
static const char END_OF_DIRECTIVE[] = "the end of the directive's line";
static const char CONTINUATION[] = "a \\ continuation of the directive";

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Length of the token at S (N bytes left); *COMMENT set for comments. 0 = whitespace. */
static size_t tok_len(const char *s, size_t n, bool *comment)
{
	*comment = false;
	if (is_space(s[0]))
		return 0;
	if (s[0] == '\\' && n > 1 && (s[1] == '\n' || s[1] == '\r'))
		return 0;
	enum ctext_kind kind = ctext_at(s, n, 0);
	if (kind == CTEXT_BLOCK_COMMENT || kind == CTEXT_LINE_COMMENT) {
		*comment = true;
		return ctext_skip(s, n, 0);
	}
	/* a literal is a token of its own: unclosed, it stops before its newline (not ctext_skip()) */
	if (kind == CTEXT_STRING || kind == CTEXT_CHAR) {
		size_t i = 1;
		while (i < n && s[i] != s[0] && s[i] != '\n')
			i += s[i] == '\\' && i + 1 < n ? 2 : 1;
		return i < n && s[i] == s[0] ? i + 1 : i;
	}
	if (is_ident_char(s[0])) {
		size_t i = 1;
		while (i < n && is_ident_char(s[i]))
			i++;
		return i;
	}
	return 1;
}

/* Length of a line break at S (N bytes left): "\n", "\r\n", "\r", else 0. */
static size_t newline_len(const char *s, size_t n)
{
	if (s[0] == '\n')
		return 1;
	if (s[0] == '\r')
		return n > 1 && s[1] == '\n' ? 2 : 1;
	return 0;
}

/* Lexer state: where a line starts, and the directive being read. */
struct lexer {
	bool line_start;  /* only blanks and comments since the last line break */
	bool in_directive;
	size_t directive; /* origin of its `#` */
};

/* Appends the structure token TEXT (END_OF_DIRECTIVE, CONTINUATION) at ORIGIN. */
static void push_structure(tok_vec *out, const char *text, size_t origin, bool inserted,
			   const struct lexer *lx)
{
	struct tok t = {text, strlen(text), origin, false, inserted, false, NO_SLOT, NO_SLOT, false,
			lx->directive};
	vec_push(out, t);
}

/*
 * Appends the tokens of TEXT to OUT. BASE is added to offsets for origins
 * (so OLD's tokens carry their own offsets); when INSERTED, every token's
 * origin is BASE instead. same_line is computed within TEXT. TEXT starts
 * at the start of a line.
 */
static void lex(const char *text, size_t len, size_t base, bool inserted, tok_vec *out)
{
	size_t i = 0, last_nc_end = 0;
	bool have_nc = false;
	struct lexer lx = {true, false, 0};
	while (i < len) {
		size_t origin = inserted ? base : base + i;
		size_t nl = newline_len(text + i, len - i);
		if (nl) {
			if (lx.in_directive)
				push_structure(out, END_OF_DIRECTIVE, origin, inserted, &lx);
			lx.in_directive = false;
			lx.line_start = true;
			i += nl;
			continue;
		}
		nl = text[i] == '\\' && i + 1 < len ? newline_len(text + i + 1, len - i - 1) : 0;
		if (nl) {
			if (lx.in_directive)
				push_structure(out, CONTINUATION, origin, inserted, &lx);
			i += 1 + nl;
			continue;
		}
		bool comment;
		size_t n = tok_len(text + i, len - i, &comment);
		if (n == 0) {
			i++;
			continue;
		}
		struct tok t = {text + i, n, origin, comment, inserted, false, NO_SLOT, NO_SLOT, false, 0};
		if (comment && have_nc)
			t.same_line = memchr(text + last_nc_end, '\n', i - last_nc_end) == NULL;
		if (!comment) {
			if (lx.line_start && text[i] == '#') {
				lx.in_directive = true;
				lx.directive = origin;
				t.opens_directive = true;
			}
			t.directive = lx.directive;
			lx.line_start = false;
			have_nc = true;
			last_nc_end = i + n;
		}
		vec_push(out, t);
		i += n;
	}
	if (lx.in_directive) /* a directive on the last line, with no line break after it */
		push_structure(out, END_OF_DIRECTIVE, inserted ? base : base + len, inserted, &lx);
}

/* Is T a token of a directive's line structure? */
static bool is_structure(const struct tok *t)
{
	return t->s == END_OF_DIRECTIVE || t->s == CONTINUATION;
}

/* ---- the expected stream: OLD with the planned edits ------------------- */

struct event {
	size_t pos;        /* where in OLD the edit's tokens go */
	size_t skip_end;   /* REPLACE: old tokens in [pos, skip_end) are dropped */
	int order;         /* at one pos: insert-after, insert-before, replace */
	const char *text;
};

static int event_cmp(const void *a, const void *b)
{
	const struct event *x = a, *y = b;
	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return x->order - y->order;
}

/* After END: past blanks and comments that start on the same line. */
static size_t after_trailing_comments(const char *s, size_t len, size_t end)
{
	size_t p = end;
	for (;;) {
		while (p < len && (s[p] == ' ' || s[p] == '\t'))
			p++;
		bool comment;
		size_t n = p < len ? tok_len(s + p, len - p, &comment) : 0;
		if (!n || !comment)
			return p;
		p += n;
	}
}

/* Appends EV's tokens, with comments of the edit text floating over them. */
static void emit_event(const struct event *ev, tok_vec *out, size_t *nc)
{
	size_t first = out->len, lo = *nc;
	lex(ev->text, strlen(ev->text), ev->pos, true, out);
	for (size_t k = first; k < out->len; k++)
		if (!out->items[k].comment)
			(*nc)++;
	for (size_t k = first; k < out->len; k++)
		if (out->items[k].comment)
			out->items[k].slot_lo = lo, out->items[k].slot_hi = *nc;
}

/* Does the replacement TEXT contain the comment T (kept by the rule that replaces it)? */
static bool carried(const char *text, const struct tok *t)
{
	char *c = xstrndup(t->s, t->len);
	bool in = strstr(text, c) != NULL;
	free(c);
	return in;
}

static void expected_stream(const char *old, size_t old_len, const struct edit *const *edits,
			    size_t n_edits, tok_vec *out)
{
	tok_vec olds = VEC_INIT;
	VEC(struct event) evs = VEC_INIT;
	lex(old, old_len, 0, false, &olds);
	for (size_t i = 0; i < n_edits; i++) {
		const struct edit *e = edits[i];
		/* before a statement that starts with a replaced node: the insertion first */
		struct event ev = {e->start.offset, 0, 1, e->text ? e->text : ""};
		size_t end = after_trailing_comments(old, old_len, e->end.offset);
		if (e->op == EDIT_INSERT_AFTER)
			ev.pos = end, ev.order = 0;
		else if (e->op == EDIT_REPLACE)
			ev.skip_end = e->end.offset, ev.order = 2;
		vec_push(&evs, ev);
		if (!e->wrap)
			continue;
		/* a lone body gets braces around it and the new statement, once */
		struct event open = {e->start.offset, 0, -1, "{"}, close = {end, 0, 3, "}"};
		bool have = false;
		for (size_t k = 0; k < evs.len && !have; k++)
			have = evs.items[k].order == -1 && evs.items[k].pos == open.pos;
		if (!have) {
			vec_push(&evs, open);
			vec_push(&evs, close);
		}
	}
	if (evs.len)
		qsort(evs.items, evs.len, sizeof *evs.items, event_cmp);

	size_t next = 0, nc = 0, skip_lo = 0, skip_hi = 0, slot_lo = 0, slot_hi = 0;
	size_t dropped_directive = NO_SLOT; /* a directive whose `#` an edit replaced */
	const char *skip_text = "";
	for (size_t i = 0; i <= olds.len; i++) {
		size_t at = i < olds.len ? olds.items[i].origin : (size_t)-1;
		while (next < evs.len && evs.items[next].pos <= at) {
			const struct event *ev = &evs.items[next++];
			size_t before = nc;
			emit_event(ev, out, &nc);
			if (ev->order == 2) {
				skip_lo = ev->pos, skip_hi = ev->skip_end, skip_text = ev->text;
				slot_lo = before, slot_hi = nc;
			}
		}
		if (i == olds.len)
			break;
		struct tok t = olds.items[i];
		if (is_structure(&t) && t.directive == dropped_directive)
			continue; /* the line structure of a directive the plan removes */
		if (at >= skip_lo && at < skip_hi) {
			if (t.opens_directive)
				dropped_directive = t.origin;
			if (!t.comment)
				continue; /* replaced */
			if (carried(skip_text, &t))
				continue; /* the replacement text carries this comment itself */
			t.slot_lo = slot_lo, t.slot_hi = slot_hi; /* kept, somewhere in the slot */
		}
		if (!t.comment)
			nc++;
		vec_push(out, t);
	}
	vec_release(&olds);
	vec_release(&evs);
}

/* ---- comparison --------------------------------------------------------- */

static bool tok_eq(const struct tok *a, const struct tok *b)
{
	return a->len == b->len && memcmp(a->s, b->s, a->len) == 0;
}

/* Splits S into non-comment tokens (NC) and comments with their NC index in K. */
static void split(const tok_vec *s, tokp_vec *nc, tokp_vec *cm, size_vec *k)
{
	for (size_t i = 0; i < s->len; i++) {
		if (s->items[i].comment) {
			vec_push(cm, &s->items[i]);
			vec_push(k, nc->len);
		} else {
			vec_push(nc, &s->items[i]);
		}
	}
}

static char *quote(const struct tok *t)
{
	if (!t)
		return xstrdup("the end of the file");
	if (is_structure(t))
		return xstrdup(t->s);
	int n = t->len > 40 ? 40 : (int)t->len;
	return xasprintf("`%.*s%s`", n, t->s, t->len > 40 ? "..." : "");
}

/* Is the comment E_C[j] (expected at KE) acceptably placed at KA in the output? */
static bool comment_placed(const struct tok *e, size_t ke, const struct tok *a, size_t ka,
			   const tokp_vec *enc)
{
	if (e->slot_lo != NO_SLOT)
		return ka >= e->slot_lo && ka <= e->slot_hi;
	if (e->same_line != a->same_line)
		return false;
	/* a trailing comment stays where it was, or (lines_brace_before_comment())
	 * goes after an opening brace inserted right after it: `if (x) { // why` */
	if (e->same_line)
		return ka == ke || (ka == ke + 1 && ke < enc->len && enc->items[ke]->inserted &&
				    enc->items[ke]->len == 1 && enc->items[ke]->s[0] == '{');
	/* a comment on a line of its own may sit either side of inserted code */
	size_t lo = ke < ka ? ke : ka, hi = ke < ka ? ka : ke;
	for (size_t i = lo; i < hi; i++)
		if (i >= enc->len || !enc->items[i]->inserted)
			return false;
	return true;
}

size_t validate_tokens(const char *old_text, size_t old_len, const char *new_text,
		       size_t new_len, const struct edit *const *edits, size_t n_edits,
		       char **what)
{
	tok_vec exp = VEC_INIT, act = VEC_INIT;
	tokp_vec enc = VEC_INIT, anc = VEC_INIT, ecm = VEC_INIT, acm = VEC_INIT;
	size_vec ek = VEC_INIT, ak = VEC_INIT;
	size_t where = 0;

	*what = NULL;
	expected_stream(old_text, old_len, edits, n_edits, &exp);
	lex(new_text, new_len, 0, false, &act);
	split(&exp, &enc, &ecm, &ek);
	split(&act, &anc, &acm, &ak);

	for (size_t i = 0; i < enc.len || i < anc.len; i++) {
		const struct tok *e = i < enc.len ? enc.items[i] : NULL;
		const struct tok *a = i < anc.len ? anc.items[i] : NULL;
		if (e && a && tok_eq(e, a))
			continue;
		const struct tok *near = e ? e : enc.len ? enc.items[enc.len - 1] : NULL;
		char *qe = quote(e), *qa = quote(a);
		where = (near ? near->origin : 0) + 1;
		*what = xasprintf("the rewritten text is not the planned change: %s expected, %s found",
				  qe, qa);
		free(qe);
		free(qa);
		goto done;
	}
	for (size_t j = 0; j < ecm.len || j < acm.len; j++) {
		const struct tok *e = j < ecm.len ? ecm.items[j] : NULL;
		const struct tok *a = j < acm.len ? acm.items[j] : NULL;
		if (e && a && tok_eq(e, a) && comment_placed(e, ek.items[j], a, ak.items[j], &enc))
			continue;
		const struct tok *c = e ? e : a;
		char *q = quote(c);
		where = (e ? e->origin : old_len) + 1;
		*what = !e || !a || !tok_eq(e, a)
				? xasprintf("the rewrite lost, added or reordered the comment %s", q)
				: xasprintf("the rewrite moved the comment %s", q);
		free(q);
		goto done;
	}
done:
	vec_release(&exp);
	vec_release(&act);
	vec_release(&enc);
	vec_release(&anc);
	vec_release(&ecm);
	vec_release(&acm);
	vec_release(&ek);
	vec_release(&ak);
	return where;
}

/* ---- the verdict --------------------------------------------------------- */

/* The function of PATH's OLD text that holds OFFSET, or NULL (owned). */
static char *function_at(const char *path, const char *text, size_t len, size_t offset)
{
	struct source src;
	source_init(&src, path, xstrndup(text, len), len);
	TSTree *tree = ts_parse_c(src.parse_text, len);
	char *name = NULL;
	TSNode n = tree ? ts_node_descendant_for_byte_range(ts_tree_root_node(tree), (uint32_t)offset,
							     (uint32_t)offset) : ts_null();
	while (!ts_node_is_null(n) && !ts_type_is(n, "function_definition"))
		n = ts_parent(n);
	TSNode d = ts_field(n, "declarator");
	while (!ts_node_is_null(d) && !ts_type_is(d, "identifier"))
		d = ts_field(d, "declarator");
	if (!ts_node_is_null(d))
		name = xstrndup(src.parse_text + ts_node_start_byte(d),
				ts_node_end_byte(d) - ts_node_start_byte(d));
	ts_parent_forget(tree);
	ts_tree_delete(tree);
	source_release(&src);
	return name;
}

size_t validate_rewrite(const char *path, const char *old_text, size_t old_len,
			const char *new_text, size_t new_len, struct finding *const *applied,
			size_t n, const struct scan_options *opts, char **why)
{
	size_t refused = 0;
	if (n == 0)
		return 0;
	if (memchr(new_text, '\0', new_len))
		return verify_refuse_fn(NULL, xstrdup("the rewritten text contains NUL bytes"), applied, n,
					why);

	/* the distinct edits of the applied findings */
	VEC(const struct edit *) edits = VEC_INIT;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < applied[i]->edits.len; k++) {
			const struct edit *e = &applied[i]->edits.items[k];
			bool dup = false;
			for (size_t j = 0; j < edits.len && !dup; j++)
				dup = edits.items[j]->op == e->op &&
				      edits.items[j]->start.offset == e->start.offset &&
				      edits.items[j]->end.offset == e->end.offset &&
				      strcmp(edits.items[j]->text ? edits.items[j]->text : "",
					     e->text ? e->text : "") == 0;
			if (!dup)
				vec_push(&edits, e);
		}
	char *what = NULL;
	size_t at = validate_tokens(old_text, old_len, new_text, new_len, edits.items, edits.len,
				    &what);
	vec_release(&edits);
	if (at) {
		char *fn = function_at(path, old_text, old_len, at - 1);
		unsigned line = 1;
		for (size_t i = 0; i + 1 < at && i < old_len; i++)
			line += old_text[i] == '\n';
		refused = verify_refuse_fn(fn, xasprintf("%s (line %u)", what, line), applied, n, why);
		free(fn);
		free(what);
		return refused;
	}
	return verify_reanalysis(path, old_text, old_len, new_text, new_len, applied, n, opts, why);
}

/* The answer kept under KEY of M for N findings into WHY (all unset), or false. */
static bool validated_get(const struct memo *m, const struct buf *key, size_t n, char **why, size_t *refused)
{
	char *got = NULL;
	size_t got_len = 0;
	if (!m->get(m->ctx, key->ptr, key->len, &got, &got_len))
		return false;
	struct reader r = {(const unsigned char *)got, got_len, false};
	*refused = (size_t)reader_below(&r, (uint64_t)n + 1);
	bool ok = reader_u64(&r) == n;
	for (size_t k = 0; k < n && ok; k++)
		why[k] = reader_str(&r);
	ok = ok && !r.bad && r.n == 0;
	for (size_t k = 0; k < n && !ok; k++) {
		free(why[k]);
		why[k] = NULL;
	}
	free(got);
	return ok;
}

size_t validate_rewrite_memo(const struct memo *m, const char *path, const char *old_text, size_t old_len,
			     const char *new_text, size_t new_len, struct finding *const *applied,
			     size_t n, const struct scan_options *opts, char **why)
{
	bool fresh = m != NULL && n > 0;
	for (size_t k = 0; k < n && fresh; k++)
		fresh = why[k] == NULL;
	if (!fresh)
		return validate_rewrite(path, old_text, old_len, new_text, new_len, applied, n, opts, why);
	struct buf key = BUF_INIT, form = BUF_INIT;
	verify_memo_key(opts, path, old_text, old_len, new_text, new_len, applied, n, &key);
	size_t refused = 0;
	if (!validated_get(m, &key, n, why, &refused)) {
		refused = validate_rewrite(path, old_text, old_len, new_text, new_len, applied, n, opts, why);
		buf_put_u64(&form, refused);
		buf_put_u64(&form, n);
		for (size_t k = 0; k < n; k++)
			buf_put_str(&form, why[k]);
		m->put(m->ctx, key.ptr, key.len, form.ptr, form.len);
	}
	buf_release(&key);
	buf_release(&form);
	return refused;
}
