/*
 * Verify's work on the edits as text (verify.h): the refusals known from
 * the edits alone (inside a #define, split by a preprocessor conditional,
 * an anchor the semantic patch cannot match) and the text a plan makes
 * (the edits applied in place, overlaps refused).
 */
#define _GNU_SOURCE /* memmem */
#include "pipeline/verify.h"
#include "pipeline/verify_internal.h"

#include <stdlib.h>
#include <string.h>

#include "parse/line_table.h"

/* ---- refusals known from the edits alone --------------------------------- */

/* The directive word of line S (N bytes) after '#', or NULL if not a directive. */
static const char *directive(const char *s, size_t n, size_t *wlen)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i >= n || s[i] != '#')
		return NULL;
	i++;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	size_t b = i;
	while (i < n && is_ident_char(s[i]))
		i++;
	*wlen = i - b;
	return s + b;
}

static bool word_is(const char *w, size_t n, const char *want)
{
	return n == strlen(want) && memcmp(w, want, n) == 0;
}

/* Is line L part of a #define (itself or continued by backslashes)? */
static bool line_in_define(const struct lines *l, unsigned line)
{
	for (unsigned k = line; k >= 1; k--) {
		size_t n, wn;
		const char *s = lines_get(l, k, &n);
		if (k != line && (n == 0 || s[n - 1] != '\\'))
			return false;
		const char *w = directive(s, n, &wn);
		if (w)
			return word_is(w, wn, "define");
	}
	return false;
}

/*
 * Why the directives on lines SL+1..EL make the span unsafe, or NULL: a
 * conditional that opens or closes outside it splits the statement (one
 * configuration would lose half a region); a balanced #if ... #endif
 * wholly inside is fine; a #define or #undef inside is left alone.
 */
static char *directive_refusal(const struct lines *l, unsigned sl, unsigned el, const char *what)
{
	int depth = 0;
	for (unsigned k = sl + 1; k <= el; k++) {
		size_t n, wn;
		const char *s = lines_get(l, k, &n);
		const char *w = directive(s, n, &wn);
		if (!w)
			continue;
		if (word_is(w, wn, "if") || word_is(w, wn, "ifdef") || word_is(w, wn, "ifndef")) {
			depth++;
		} else if (word_is(w, wn, "endif")) {
			if (--depth < 0)
				break;
		} else if (word_is(w, wn, "else") || word_is(w, wn, "elif")) {
			if (depth == 0) {
				depth = -1;
				break;
			}
		} else if (word_is(w, wn, "define") || word_is(w, wn, "undef")) {
			return xasprintf("the %s at line %u contains a #%.*s (line %u); spatch would "
					 "move or drop it, fix it by hand", what, sl, (int)wn, w, k);
		}
		if (depth < 0)
			break;
	}
	if (depth == 0)
		return NULL;
	return xasprintf("the %s at line %u is split by a preprocessor conditional that "
			 "opens or closes inside it; one configuration would lose half the "
			 "change, fix it by hand", what, sl);
}

static bool node_in(const char *node, const char *const *set)
{
	for (; *set; set++)
		if (node && strcmp(node, *set) == 0)
			return true;
	return false;
}

/* The statements spatch can anchor an insertion on (the .cocci rules match these). */
static const char *const after_anchors[] = {"expression_statement", "if_statement",
	"for_statement", "while_statement", "declaration", NULL};
/* if/while/for: get-cpu.cocci anchors before them (a hoisted read's get_cpu()), and
 * preempt-region.cocci (a region over a read and the calls on this CPU's own state) */
static const char *const before_anchors[] = {"return_statement", "goto_statement",
	"break_statement", "continue_statement", "expression_statement", "if_statement",
	"while_statement", "for_statement", NULL};

/* Why EDIT cannot be made, or NULL. */
/* Is S valid UTF-8, as Python's strict decoder takes it? */
static bool utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		size_t n = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2 : (*p & 0xf8) == 0xf0 ? 3 : 4;
		if (n == 4 || (n && *p < 0xc2))
			return false;
		for (size_t k = 1; k <= n; k++)
			if ((p[k] & 0xc0) != 0x80)
				return false;
		p += n + 1;
	}
	return true;
}

/* Is the next word after OFF in L (blanks skipped) `else`? */
static bool else_follows(const struct lines *l, size_t off)
{
	const char *p = l->text + off, *end = l->text + l->len;
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return end - p >= 4 && memcmp(p, "else", 4) == 0 && (end - p == 4 || !is_ident_char(p[4]));
}

char *verify_edit_refusal(const struct edit *e, const struct lines *l)
{
	unsigned sl, sc, el, ec;
	const char *what = e->node ? e->node : "statement";
	if (e->start.offset > e->end.offset || e->end.offset > l->len)
		return xstrdup("the edit's span lies outside the file");
	lines_pos(l, e->start.offset, &sl, &sc);
	lines_pos(l, e->end.offset, &el, &ec);
	if (line_in_define(l, sl) && !e->in_define)
		return xasprintf("line %u is inside a #define body; spatch would rewrite the "
				 "macro, fix it by hand", sl);
	char *why = directive_refusal(l, sl, el, what);
	if (why)
		return why;
	/* spatch does not match an inline asm statement as a statement to insert at */
	const char *a = l->text + e->start.offset;
	if (e->op != EDIT_REPLACE && (strncmp(a, "__asm__", 7) == 0 || strncmp(a, "asm", 3) == 0 ||
				      strncmp(a, "__asm", 5) == 0) && !is_ident_char(a[a[0] == 'a' ? 3 : a[5] == '_' ? 7 : 5]))
		return xasprintf("the change would insert next to the inline asm statement at line %u, "
				 "which the semantic patch cannot anchor on; fix it by hand", sl);
	/* the semantic patches take an edit's text through Python, which fails on it (and the
	 * whole file's run with it: "Python failure") */
	if (!e->by_text && e->text && !utf8_valid(e->text))
		return xasprintf("the text it would write at line %u keeps a comment with bytes that are not "
				 "UTF-8 (Latin-1?), which spatch's Python cannot carry; fix it by hand, or "
				 "convert the file to UTF-8 first (iconv -f latin1 -t utf-8)", sl);
	/* `if (a) {...} else` then #endif and the else arm: the grammar's if ends before its else
	 * (a lone body made a block, `{ x; put(); } else`, keeps its else) */
	if (e->op == EDIT_INSERT_AFTER && !e->wrap && else_follows(l, e->end.offset))
		return xasprintf("the %s at line %u goes on with an else the grammar did not read as its own "
				 "(an #if/#endif splits it); a statement after it would cut the else off, fix it "
				 "by hand", what, sl);
	if (e->op == EDIT_INSERT_AFTER && !node_in(e->node, after_anchors))
		return xasprintf("the change would insert after the %s at line %u, which the "
				 "semantic patch cannot anchor on; fix it by hand", what, sl);
	if (e->op == EDIT_INSERT_BEFORE && !node_in(e->node, before_anchors))
		return xasprintf("the change would insert before the %s at line %u, which the "
				 "semantic patch cannot anchor on; fix it by hand", what, sl);
	return NULL;
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/*
 * The equivalence a resched-flag edit rests on, checked on the text itself:
 * it replaces `T->need_resched = K` (K an integer constant, no comment
 * inside) by set_tsk_need_resched(T) when K is not 0, clear_tsk_need_resched(T)
 * when it is, with T's text unchanged. Why edit E is not that, or NULL.
 */
static char *flag_write_refusal(const struct edit *e, const char *text)
{
	const char *s = text + e->start.offset, *end = text + e->end.offset, *arrow = NULL;
	for (const char *q = s; q + 1 < end; q++)
		if (q[0] == '-' && q[1] == '>')
			arrow = q;
	const char *q = arrow ? skip_blanks(arrow + 2, end) : end;
	bool ok = e->op == EDIT_REPLACE && e->text && arrow && arrow > s && end - q > 12 &&
		  memcmp(q, "need_resched", 12) == 0 && !memmem(s, (size_t)(end - s), "/*", 2) &&
		  !memmem(s, (size_t)(end - s), "//", 2);
	q = ok ? skip_blanks(q + 12, end) : end;
	ok = ok && q < end && *q == '=';
	q = ok ? skip_blanks(q + 1, end) : end;
	char *lit = ok && q < end && *q >= '0' && *q <= '9' ? xstrndup(q, (size_t)(end - q)) : NULL, *rest = NULL;
	unsigned long long k = lit ? strtoull(lit, &rest, 0) : 0;
	ok = lit && rest != lit && strspn(rest, "uUlL") == strlen(rest);
	free(lit);
	const char *te = arrow;
	while (ok && te > s && (te[-1] == ' ' || te[-1] == '\t' || te[-1] == '\n' || te[-1] == '\r'))
		te--;
	char *want = ok ? xasprintf("%s_tsk_need_resched(%.*s)", k ? "set" : "clear", (int)(te - s), s) : NULL;
	bool same = want && strcmp(want, e->text) == 0;
	free(want);
	if (same)
		return NULL;
	return xstrdup("the resched-flag edit is not `T->need_resched = K` made set_tsk_need_resched(T) "
		       "(K a constant not 0) or clear_tsk_need_resched(T) (K 0); fix it by hand");
}

/*
 * A gfp-atomic edit replaces the one token GFP_KERNEL by GFP_ATOMIC and
 * nothing else (the allocation's other flags stay as they are). Why E is
 * not that, or NULL.
 */
static char *gfp_edit_refusal(const struct edit *e, const char *text)
{
	if (e->op == EDIT_REPLACE && e->text && strcmp(e->text, "GFP_ATOMIC") == 0 &&
	    e->end.offset - e->start.offset == 10 && memcmp(text + e->start.offset, "GFP_KERNEL", 10) == 0)
		return NULL;
	return xstrdup("the gfp-atomic edit is not GFP_KERNEL made GFP_ATOMIC; fix it by hand");
}

/*
 * A preempt-region plan only adds statements around code it leaves as it
 * is: one preempt_disable(); before the region, preempt_enable(); after it
 * and before its exits. Why F's edits are not that, or NULL.
 */
static char *region_edits_refusal(const struct finding *f)
{
	size_t disables = 0, enables = 0;
	for (size_t k = 0; k < f->edits.len; k++) {
		const struct edit *e = &f->edits.items[k];
		bool dis = e->op == EDIT_INSERT_BEFORE && e->text && strcmp(e->text, "preempt_disable();") == 0;
		bool en = e->op != EDIT_REPLACE && e->text && strcmp(e->text, "preempt_enable();") == 0;
		disables += dis;
		enables += en;
		if (!dis && !en)
			return xstrdup("the preempt-region edits do more than add preempt_disable(); and "
				       "preempt_enable(); around the code; fix it by hand");
	}
	if (disables != 1 || !enables)
		return xstrdup("the preempt-region edits do not open one region and close it; fix it by hand");
	return NULL;
}

char *verify_edits(const struct finding *f, const char *text, size_t len)
{
	struct lines l;
	char *why = NULL;
	lines_init(&l, text, len);
	for (size_t k = 0; k < f->edits.len && !why && f->fix == FIX_RESCHED_FLAG; k++)
		why = flag_write_refusal(&f->edits.items[k], text);
	for (size_t k = 0; k < f->edits.len && !why && f->fix == FIX_GFP_ATOMIC; k++)
		why = gfp_edit_refusal(&f->edits.items[k], text);
	if (!why && f->fix == FIX_PREEMPT_REGION)
		why = region_edits_refusal(f);
	for (size_t k = 0; k < f->edits.len && !why; k++)
		why = verify_edit_refusal(&f->edits.items[k], &l);
	lines_release(&l);
	return why;
}

/* ---- the text a plan makes ---------------------------------------------- */

struct placed {
	size_t at, end;          /* [at, end) replaced; at == end: an insertion */
	int order;               /* at one offset: {, insert-after, insert-before, replace, } */
	const char *text;
	size_t owner;            /* index of the finding (in the plan) */
};

static int placed_cmp(const void *a, const void *b)
{
	const struct placed *x = a, *y = b;
	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	if (x->order != y->order)
		return x->order - y->order;
	return x->owner < y->owner ? -1 : x->owner > y->owner;
}

static struct placed place(const struct edit *e, size_t owner)
{
	/* before a statement that starts with a replaced node: the insertion first, as spatch makes it */
	struct placed p = {e->start.offset, e->start.offset, 1, e->text ? e->text : "", owner};
	if (e->op == EDIT_INSERT_AFTER)
		p.at = p.end = e->end.offset, p.order = 0;
	else if (e->op == EDIT_REPLACE)
		p.end = e->end.offset, p.order = 2;
	return p;
}

/* The braces around a lone body E's insertion wraps: "{" before it, "}" after. */
static void place_braces(const struct edit *e, size_t owner, void *out)
{
	VEC(struct placed) *ps = out;
	struct placed open = {e->start.offset, e->start.offset, -1, "{", owner};
	struct placed close = {e->end.offset, e->end.offset, 3, "}", owner};
	vec_push(ps, open);
	vec_push(ps, close);
}

static bool same_edit(const struct placed *a, const struct placed *b)
{
	return a->at == b->at && a->end == b->end && a->order == b->order &&
	       strcmp(a->text, b->text) == 0;
}

/*
 * Applies the edits of the ACTIVE findings PLAN[i] to TEXT; an insertion
 * stays on its anchor's line, so every other line keeps its number. A
 * finding whose edit overlaps another finding's different edit gets WHY.
 * Returns the new text (owned).
 */
char *verify_apply_edits(const char *text, size_t len, struct finding *const *plan, size_t n,
			 const bool *active, char **why, size_t *out_len)
{
	VEC(struct placed) ps = VEC_INIT;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; active[i] && k < plan[i]->edits.len; k++) {
			vec_push(&ps, place(&plan[i]->edits.items[k], i));
			if (plan[i]->edits.items[k].wrap)
				place_braces(&plan[i]->edits.items[k], i, &ps);
		}
	if (ps.len)
		qsort(ps.items, ps.len, sizeof *ps.items, placed_cmp);
	struct buf b = BUF_INIT;
	size_t pos = 0;
	for (size_t i = 0; i < ps.len; i++) {
		const struct placed *p = &ps.items[i];
		bool dup = false;
		for (size_t k = i; k-- > 0 && ps.items[k].at == p->at && !dup; )
			dup = same_edit(p, &ps.items[k]);
		if (dup)
			continue; /* shared by several findings, or one anchor's braces */
		if (p->at < pos) {
			if (!why[p->owner])
				why[p->owner] = xstrdup("the change overlaps another fix's change in "
							"the same statement; fix it by hand");
			continue;
		}
		buf_add(&b, text + pos, p->at - pos);
		if (p->order == 0 || p->order == 3)
			buf_putc(&b, ' ');
		buf_puts(&b, p->text);
		if (p->order == 2 || p->order == -1)
			buf_putc(&b, ' ');
		pos = p->end;
	}
	buf_add(&b, text + pos, len - pos);
	vec_release(&ps);
	*out_len = b.len;
	return buf_detach(&b);
}
