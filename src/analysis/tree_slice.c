/*
 * What part of a file the tree index parses: none when the file only
 * declares the open names (tree_needs_parse()), else the function
 * definitions that matter to them and what names those (tree_slice_ranges()),
 * found by a lexer, not a parser.
 */
#define _GNU_SOURCE /* memmem */
#include "analysis/tree_internal.h"

#include <stdlib.h>
#include <string.h>

#include "parse/ctext.h"
#include "parse/source.h"

/* True if the identifier S (N bytes) is an open name the file F is analysed for. */
static bool open_name_at(const struct tree_context *t, const struct tfile *f, const char *s, size_t n)
{
	for (size_t k = f->from; k < f->names.len; k++) {
		const struct tname *x = &t->names.items[f->names.items[k]];
		if (x->state == T_OPEN && x->len == n && memcmp(x->name, s, n) == 0)
			return true;
	}
	return false;
}

static bool word_is(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && memcmp(s, w, n) == 0;
}

/* A keyword that may stand right before a call: `return f(x);`. */
static bool keyword_before_call(const char *s, size_t n)
{
	static const char *const kw[] = {"return", "else", "do", "case", "goto", "sizeof",
					  "typeof", "__typeof__", "__extension__"};
	for (size_t i = 0; i < ARRAY_SIZE(kw); i++)
		if (word_is(s, n, kw[i]))
			return true;
	return false;
}

/* Do the braces of S balance, never closing more than they opened (across #if arms too)? */
static bool braces_balance(const char *s, size_t len)
{
	long depth = 0;
	struct ctext cx;
	for (ctext_init(&cx, s, len); ctext_more(&cx); ctext_next(&cx)) {
		if (cx.kind != CTEXT_CODE || cx.directive)
			continue;
		if (s[cx.pos] == '{')
			depth++;
		if (s[cx.pos] == '}' && --depth < 0)
			return false;
	}
	return depth == 0;
}

/* What tree_needs_parse() has read of a file so far. */
struct decl_lexer {
	const char *s;
	bool stmt_start, stmt_extern; /* a statement begins; ...with `extern` */
	bool directive, line_start;
	bool depth_ok;                /* the file's braces balance: DEPTH says what is at file scope */
	long depth;
	/* the token before: an identifier (its text), or another character */
	const char *prev;
	size_t prev_len;
	char prev_c;
};

/* Is the identifier at P of S the argument of EXPORT_SYMBOL(), EXPORT_SYMBOL_GPL()? */
static bool export_symbol_arg(const char *s, size_t p)
{
	size_t q = p;
	while (q > 0 && s[q - 1] != '(')
		q--;
	size_t r = q - 1;
	while (r > 0 && (s[r - 1] == ' ' || s[r - 1] == '\t'))
		r--;
	size_t w = r;
	while (w > 0 && is_ident_char(s[w - 1]))
		w--;
	return r - w >= 13 && memcmp(s + w, "EXPORT_SYMBOL", 13) == 0;
}

/* Is the open name at P (LX having read up to it) only declared there? */
static bool declared_at(const struct decl_lexer *lx, size_t p)
{
	bool decl = !lx->directive && lx->stmt_extern;
	if (!lx->directive && lx->depth_ok && lx->depth == 0) {
		if (lx->prev && !keyword_before_call(lx->prev, lx->prev_len))
			decl = true; /* int f(void); or the definition's name */
		if (!lx->prev && lx->prev_c == '(' && p >= 14)
			decl = export_symbol_arg(lx->s, p);
	}
	return decl;
}

/* A character C, neither a newline nor one that starts an identifier. */
static void decl_lexer_punct(struct decl_lexer *lx, char c)
{
	if (!lx->directive && (c == ';' || c == '{' || c == '}')) {
		lx->stmt_start = true;
		lx->stmt_extern = false;
		lx->depth += c == '{' ? 1 : c == '}' ? -1 : 0;
	}
	if (c != ' ' && c != '\t' && c != '\r' && c != '*')
		lx->prev = NULL, lx->prev_c = c; /* `*` keeps the type before it: `struct x *f(` */
}

/*
 * Does the file name an open name anywhere but in a comment, a string or a
 * declaration? Only then is it worth a parse. Declarations are `extern`
 * statements (the bulk of a header) and, when the file's braces balance,
 * a name at file scope right after a type (`int f(void);`, a definition's
 * own name) or inside EXPORT_SYMBOL(). A lexer, not a parser: comments,
 * strings, character constants and directives (a use in a #define body
 * needs the parse) are recognised; a statement is what follows `;`, `{` or
 * `}`. Anything it is unsure of is parsed.
 */
bool tree_needs_parse(const struct tree_context *t, const struct tfile *f, const char *s, size_t len)
{
	struct decl_lexer lx = {.s = s, .stmt_start = true, .line_start = true, .depth_ok = braces_balance(s, len),
				.prev_c = ';'};
	for (size_t p = 0; p < len;) {
		char c = s[p];
		if (c == '\n') {
			if (!(p > 0 && s[p - 1] == '\\'))
				lx.directive = false;
			lx.line_start = true;
			p++;
			continue;
		}
		size_t q = ctext_skip(s, len, p);
		if (q != p) {
			if (ctext_at(s, len, p) == CTEXT_STRING || ctext_at(s, len, p) == CTEXT_CHAR)
				lx.line_start = false, lx.prev = NULL, lx.prev_c = c;
			p = q;
			continue;
		}
		if (c == '#' && lx.line_start)
			lx.directive = true;
		if (c != ' ' && c != '\t' && c != '\r')
			lx.line_start = false;
		if (!is_ident_start(c)) {
			decl_lexer_punct(&lx, c);
			p++;
			continue;
		}
		size_t e = p + 1;
		while (e < len && is_ident_char(s[e]))
			e++;
		if (!lx.directive && lx.stmt_start) {
			lx.stmt_extern = word_is(s + p, e - p, "extern");
			lx.stmt_start = false;
		}
		if (open_name_at(t, f, s + p, e - p) && !declared_at(&lx, p))
			return true;
		lx.prev = s + p, lx.prev_len = e - p, lx.prev_c = 0;
		p = e;
	}
	return false;
}

/* ---- slices: parse only the functions that matter ------------------------------ */

/* A function definition at file scope, found by the lexer. */
struct topdef {
	size_t start, end;       /* from after the previous statement to after its `}` */
	const char *name;        /* the last identifier before its first `(` */
	size_t name_len;
	bool needed;
	bool callee;             /* defines an open name, or is called by one that does: whether it sleeps counts */
};
typedef VEC(struct topdef) topdef_vec;

/* A declaration at file scope: from after the previous statement to its `;` (a table, a prototype). */
struct topdecl {
	size_t start, end;
	bool keep;
};
typedef VEC(struct topdecl) topdecl_vec;

/* Is the next significant byte of S from P a `{` (or a directive: unsure)? Comments are skipped. */
static bool brace_next(const char *s, size_t p, size_t len)
{
	while (p < len) {
		if (s[p] == ' ' || s[p] == '\t' || s[p] == '\r' || s[p] == '\n') {
			p++;
		} else if (ctext_at(s, len, p) == CTEXT_BLOCK_COMMENT || ctext_at(s, len, p) == CTEXT_LINE_COMMENT) {
			p = ctext_skip(s, len, p);
		} else {
			return s[p] == '{' || s[p] == '#';
		}
	}
	return false;
}

/* What top_defs() has read of a file so far. */
struct top_lexer {
	const char *s;
	size_t len;
	long depth;
	bool directive, line_start;
	size_t stmt;            /* where the current file-scope statement began */
	size_t decl;            /* ...and the current declaration (a `{}` inside it does not end it) */
	bool decl_ok;           /* ...begun at a statement's end (not after a directive inside one) */
	char decl_first;        /* ...its first significant character */
	char last;              /* the last significant character at file scope */
	const char *name;       /* the statement's last identifier before its first `(` */
	const char *ident;      /* the last identifier at file scope */
	size_t name_len, ident_len;
	bool paren_seen;
	struct topdef cur;      /* the definition whose body is open */
	topdef_vec *out;
	topdecl_vec *decls;
};

/* A newline at P: it ends a directive not continued, and at file scope a statement begins after it. */
static void top_newline(struct top_lexer *lx, size_t p)
{
	if (lx->directive && !(p > 0 && lx->s[p - 1] == '\\')) {
		lx->directive = false;
		if (lx->depth == 0) {
			lx->stmt = p + 1, lx->paren_seen = false;
			if (!lx->decl_first)
				lx->decl = p + 1; /* nothing of a declaration yet: it begins after */
			else
				lx->decl_ok = false; /* a directive inside a declaration: it stays */
		}
	}
	lx->line_start = true;
}

/* A `}` at P: back at file scope, it ends a definition. False when it closes more than was opened. */
static bool top_close(struct top_lexer *lx, size_t p)
{
	if (--lx->depth < 0)
		return false;
	if (lx->depth == 0) {
		if (lx->cur.name) {
			lx->cur.end = p + 1;
			vec_push(lx->out, lx->cur);
			lx->cur.name = NULL;
			lx->decl = p + 1, lx->decl_ok = true, lx->decl_first = 0;
		}
		lx->stmt = p + 1, lx->paren_seen = false, lx->name = lx->ident = NULL;
	}
	return true;
}

/* A `;` at P at file scope: it ends a statement, and maybe a declaration a parse can leave out. */
static void top_semicolon(struct top_lexer *lx, size_t p)
{
	/* not a K&R definition's parameters, nor its body: `int f(a) int a; { ... }` */
	if (lx->decls && lx->decl_ok && lx->decl_first != '{' && !brace_next(lx->s, p + 1, lx->len)) {
		struct topdecl d = {lx->decl, p + 1, false};
		vec_push(lx->decls, d);
	}
	lx->decl = p + 1, lx->decl_ok = true, lx->decl_first = 0;
	lx->stmt = p + 1, lx->paren_seen = false, lx->name = lx->ident = NULL;
}

/* Any other significant character, at P, outside a directive. False when the braces do not balance. */
static bool top_punct(struct top_lexer *lx, size_t p)
{
	char c = lx->s[p];
	if (c == '(' && lx->depth == 0 && !lx->paren_seen && lx->ident) {
		lx->name = lx->ident, lx->name_len = lx->ident_len;
		lx->paren_seen = true;
	}
	if (c == '{') {
		if (lx->depth == 0 && lx->last == ')' && lx->name)
			lx->cur = (struct topdef){.start = lx->stmt, .name = lx->name, .name_len = lx->name_len};
		lx->depth++;
	} else if (c == '}') {
		if (!top_close(lx, p))
			return false;
	} else if (c == ';' && lx->depth == 0) {
		top_semicolon(lx, p);
	}
	if (lx->depth == 0 || (c == '{' && lx->depth == 1))
		lx->last = c;
	return true;
}

/*
 * The function definitions of S into OUT: a `{` at file scope right after
 * a `)` opens a body. DECLS (if set) gets its declarations at file scope
 * that a parse can leave out whole (none split by a directive, none next
 * to a K&R definition). False when the file's braces do not balance (an
 * #if arm opening a brace another arm closes): then the file is parsed
 * whole.
 */
static bool top_defs(const char *s, size_t len, topdef_vec *out, topdecl_vec *decls)
{
	struct top_lexer lx = {.s = s, .len = len, .line_start = true, .decl_ok = true, .last = ';',
			       .out = out, .decls = decls};
	for (size_t p = 0; p < len; p++) {
		char c = s[p];
		if (c == '\n') {
			top_newline(&lx, p);
			continue;
		}
		size_t q = ctext_skip(s, len, p);
		if (q != p) {
			if (ctext_at(s, len, p) == CTEXT_STRING || ctext_at(s, len, p) == CTEXT_CHAR)
				lx.last = c;
			p = q - 1;
			continue;
		}
		if (c == '#' && lx.line_start)
			lx.directive = true;
		if (c != ' ' && c != '\t' && c != '\r')
			lx.line_start = false;
		if (lx.directive || c == ' ' || c == '\t' || c == '\r')
			continue;
		if (lx.depth == 0 && !lx.decl_first)
			lx.decl_first = c;
		if (lx.depth == 0 && is_ident_start(c)) {
			size_t e = p + 1;
			while (e < len && is_ident_char(s[e]))
				e++;
			lx.ident = s + p, lx.ident_len = e - p;
			p = e - 1;
			lx.last = 'a';
			continue;
		}
		if (!top_punct(&lx, p))
			return false;
	}
	return lx.depth == 0;
}

/* Does S[A, B) contain the word W (N bytes)? */
static bool has_word(const char *s, size_t a, size_t b, const char *w, size_t n)
{
	if (n == 0 || a >= b)
		return false;
	for (const char *p = memmem(s + a, b - a, w, n); p; p = memmem(p + 1, (size_t)(s + b - p - 1), w, n)) {
		size_t off = (size_t)(p - s);
		if ((off == a || !is_ident_char(s[off - 1])) && (off + n >= b || !is_ident_char(s[off + n])))
			return true;
		if ((size_t)(s + b - p) <= 1)
			break;
	}
	return false;
}

/*
 * From *AT on in S, the next field function NAME (N bytes) is stored in
 * (`x->f = name`, `x.f = name`, `.f = name`): its length, *FLD its start;
 * 0 when there is none. *AT moves past it.
 */
static size_t stored_in(const char *s, size_t len, const char *name, size_t n, size_t *at, const char **fld)
{
	while (*at < len) {
		const char *p = memmem(s + *at, len - *at, name, n);
		if (!p)
			break;
		*at = (size_t)(p - s) + n;
		if ((p > s && is_ident_char(p[-1])) || (p + n < s + len && is_ident_char(p[n])))
			continue;
		const char *q = p;
		while (q > s && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '&'))
			q--;
		if (q == s || q[-1] != '=' || (q - 1 > s && strchr("=!<>+-*/&|^%", q[-2])))
			continue;
		q--;
		while (q > s && (q[-1] == ' ' || q[-1] == '\t'))
			q--;
		const char *e = q;
		while (q > s && is_ident_char(q[-1]))
			q--;
		if (q == e || q == s || !(q[-1] == '.' || (q[-1] == '>' && q - 1 > s && q[-2] == '-')))
			continue;
		*fld = q;
		return (size_t)(e - q);
	}
	return 0;
}

typedef VEC(size_t) index_vec;

/*
 * The element of BASE (N of SIZE bytes, each beginning with `size_t start,
 * end`, in file order, not overlapping) holding byte OFF, or -1: a
 * definition of top_defs(), or a declaration.
 */
static long span_at(const void *base, size_t n, size_t size, size_t off)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2, span[2];
		memcpy(span, (const char *)base + mid * size, sizeof span);
		if (off < span[0])
			hi = mid;
		else if (off >= span[1])
			lo = mid + 1;
		else
			return (long)mid;
	}
	return -1;
}
_Static_assert(offsetof(struct topdef, start) == 0 && offsetof(struct topdef, end) == sizeof(size_t) &&
		       offsetof(struct topdecl, start) == 0 && offsetof(struct topdecl, end) == sizeof(size_t),
	       "span_at() reads start and end first");

/*
 * Sets HIT to the definitions of DEFS holding the word W (N bytes) of S, in
 * file order, once each; the declarations of DECLS holding it are kept.
 */
static void defs_naming(const char *s, size_t len, const topdef_vec *defs, topdecl_vec *decls, const char *w, size_t n,
			index_vec *hit)
{
	hit->len = 0;
	if (n == 0)
		return;
	for (const char *p = memmem(s, len, w, n); p; p = memmem(p + 1, (size_t)(s + len - p - 1), w, n)) {
		size_t off = (size_t)(p - s);
		if (!((off > 0 && is_ident_char(s[off - 1])) || (off + n < len && is_ident_char(s[off + n])))) {
			long d = span_at(defs->items, defs->len, sizeof *defs->items, off);
			if (d >= 0 && (hit->len == 0 || hit->items[hit->len - 1] != (size_t)d))
				vec_push(hit, (size_t)d);
			else if (d < 0 && (d = span_at(decls->items, decls->len, sizeof *decls->items, off)) >= 0)
				decls->items[d].keep = true;
		}
		if ((size_t)(s + len - p) <= 1)
			break;
	}
}

/*
 * Marks needed the definitions of F's open names (from F->from on), also
 * as callees, and the definitions naming them; the declarations of DECLS
 * naming them are kept.
 */
static void mark_open_names(const struct tree_context *t, const struct tfile *f, const char *s, size_t len,
			    topdef_vec *defs, topdecl_vec *decls)
{
	index_vec hit = VEC_INIT;
	for (size_t k = f->from; k < f->names.len; k++) {
		const struct tname *x = &t->names.items[f->names.items[k]];
		if (x->state != T_OPEN)
			continue;
		for (size_t d = 0; d < defs->len; d++)
			if (defs->items[d].name_len == x->len && memcmp(defs->items[d].name, x->name, x->len) == 0)
				defs->items[d].callee = defs->items[d].needed = true;
		defs_naming(s, len, defs, decls, x->name, x->len, &hit);
		for (size_t h = 0; h < hit.len; h++)
			defs->items[hit.items[h]].needed = true;
	}
	vec_release(&hit);
}

/* Marks needed what an open name's definition calls, and what that calls, to a fixed point. */
static void mark_callees(const char *s, topdef_vec *defs)
{
	for (bool grew = true; grew;) {
		grew = false;
		for (size_t d = 0; d < defs->len; d++) {
			if (!defs->items[d].callee)
				continue;
			for (size_t o = 0; o < defs->len; o++)
				if (!defs->items[o].callee &&
				    has_word(s, defs->items[d].start, defs->items[d].end, defs->items[o].name,
					     defs->items[o].name_len))
					defs->items[o].needed = defs->items[o].callee = grew = true;
		}
	}
}

/* Marks needed the callers of what is needed, to a fixed point: each needed definition read once. */
static void mark_callers(const char *s, size_t len, topdef_vec *defs, topdecl_vec *decls)
{
	index_vec hit = VEC_INIT, more = VEC_INIT, work = VEC_INIT;
	for (size_t d = 0; d < defs->len; d++)
		if (defs->items[d].needed)
			vec_push(&work, d);
	while (work.len) {
		const struct topdef *d = &defs->items[work.items[--work.len]];
		defs_naming(s, len, defs, decls, d->name, d->name_len, &hit);
		/* stored in a field (`x->f = name;`): the calls through it, too (context.c) */
		const char *fld;
		for (size_t at = 0, fl; (fl = stored_in(s, len, d->name, d->name_len, &at, &fld)) > 0;) {
			defs_naming(s, len, defs, decls, fld, fl, &more);
			for (size_t h = 0; h < more.len; h++)
				vec_push(&hit, more.items[h]);
		}
		for (size_t h = 0; h < hit.len; h++)
			if (!defs->items[hit.items[h]].needed) {
				defs->items[hit.items[h]].needed = true;
				vec_push(&work, hit.items[h]);
			}
	}
	vec_release(&work);
	vec_release(&hit);
	vec_release(&more);
}

/* Does S from A to B name a locking call of the kernel's (api_lookup(): spin_lock(), local_irq_save())? */
static bool names_lock_call(const char *s, size_t a, size_t b)
{
	struct ctext cx;
	const char *t = s + a;
	for (ctext_init(&cx, t, b - a); ctext_more(&cx); ctext_next(&cx)) {
		size_t p = cx.pos, e = p;
		if (cx.kind != CTEXT_CODE || cx.directive || !is_ident_char(t[p]) || (p > 0 && is_ident_char(t[p - 1])) ||
		    (t[p] >= '0' && t[p] <= '9'))
			continue;
		while (e < b - a && is_ident_char(t[e]))
			e++;
		if (api_lookup(t + p, e - p))
			return true;
	}
	return false;
}

/*
 * Marks needed what a needed definition calls that takes or drops a lock
 * itself: a lock wrapper (2.6.9 sched.c task_rq_lock(), which
 * try_to_wake_up() calls before resched_task()), so that the callers' flow
 * reads it as the file's own analysis does (wrap.c). One level: a wrapper
 * calls no function of its file that locks.
 */
static void mark_lock_callees(const char *s, topdef_vec *defs)
{
	index_vec callers = VEC_INIT;
	for (size_t d = 0; d < defs->len; d++)
		if (defs->items[d].needed)
			vec_push(&callers, d);
	for (size_t o = 0; o < defs->len; o++) {
		struct topdef *c = &defs->items[o];
		if (c->needed || !names_lock_call(s, c->start, c->end))
			continue;
		for (size_t k = 0; k < callers.len && !c->needed; k++) {
			const struct topdef *d = &defs->items[callers.items[k]];
			c->needed = has_word(s, d->start, d->end, c->name, c->name_len);
		}
	}
	vec_release(&callers);
}

/*
 * The spans a parse leaves out, in file order, into OUT: the definitions
 * not needed, and the declarations naming nothing needed. Returns their
 * bytes.
 */
static size_t spans_left_out(const topdef_vec *defs, const topdecl_vec *decls, topdecl_vec *out)
{
	size_t dropped = 0;
	for (size_t d = 0, u = 0; d < defs->len || u < decls->len;) {
		bool def = u == decls->len || (d < defs->len && defs->items[d].start < decls->items[u].start);
		struct topdecl x = def ? (struct topdecl){defs->items[d].start, defs->items[d].end, defs->items[d].needed}
				       : decls->items[u];
		if (def)
			d++;
		else
			u++;
		if (x.keep)
			continue;
		vec_push(out, x);
		dropped += x.end - x.start;
	}
	return dropped;
}

/* A byte offset of a text and its row and column. */
struct text_point {
	size_t at, row, col;
};

/* Moves PT forward through S to byte OFF. */
static void point_advance(const char *s, struct text_point *pt, size_t off)
{
	for (; pt->at < off; pt->at++) {
		if (s[pt->at] == '\n')
			pt->row++, pt->col = 0;
		else
			pt->col++;
	}
}

/* The ranges of S (LEN bytes) around the spans of OUT, *N of them (owned). */
static TSRange *ranges_around(const char *s, size_t len, const topdecl_vec *out, uint32_t *n)
{
	TSRange *r = xcalloc(out->len + 1, sizeof *r);
	struct text_point pt = {0, 0, 0};
	size_t from = 0;
	TSPoint from_pt = {0, 0};
	for (size_t d = 0; d <= out->len; d++) {
		size_t to = d < out->len ? out->items[d].start : len;
		point_advance(s, &pt, to);
		if (to > from) {
			r[*n] = (TSRange){from_pt, {(uint32_t)pt.row, (uint32_t)pt.col}, (uint32_t)from, (uint32_t)to};
			++*n;
		}
		if (d < out->len) {
			point_advance(s, &pt, out->items[d].end);
			from = out->items[d].end;
			from_pt = (TSPoint){(uint32_t)pt.row, (uint32_t)pt.col};
		}
	}
	return r;
}

/*
 * The byte ranges of S worth parsing for F's open names (those it is
 * analysed for, from F->from on): everything but the
 * function definitions that name none of them, nor any function that does
 * (its callers, or where its address is taken or it is registered), to a
 * fixed point, nor (CALLEES) a function an open name's definition calls:
 * whether it sleeps decides tree_context_bound(). Sets *N to 0 when the
 * whole file is to be parsed.
 */
TSRange *tree_slice_ranges(const struct tree_context *t, const struct tfile *f, const char *s, size_t len,
			   bool callees, uint32_t *n)
{
	topdef_vec defs = VEC_INIT;
	topdecl_vec decls = VEC_INIT, out = VEC_INIT;
	TSRange *r = NULL;
	*n = 0;
	if (!top_defs(s, len, &defs, &decls) || defs.len < 4)
		goto done;
	mark_open_names(t, f, s, len, &defs, &decls);
	if (callees)
		mark_callees(s, &defs);
	mark_callers(s, len, &defs, &decls);
	mark_lock_callees(s, &defs);
	if (spans_left_out(&defs, &decls, &out) < len / 4)
		goto done; /* not worth it */
	r = ranges_around(s, len, &out, n);
done:
	vec_release(&defs);
	vec_release(&decls);
	vec_release(&out);
	return r;
}
