#define _GNU_SOURCE /* memmem */
/* Lines: positions remapped through a line diff, and the blanks of added lines. */
#include "fix/lines.h"
#include "parse/ctext.h"

#include <stdlib.h>
#include <string.h>

/* Appends S without whitespace. */
static void squeeze(struct buf *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
			buf_putc(out, s[i]);
}

/* ---- remapping through a run's changes ---- */

/* Maps column COL of old line O onto new line N; false when inside the change. */
static bool map_column(const char *o, size_t on, const char *n, size_t nn, unsigned *col)
{
	size_t p = 0, s = 0, c = *col - 1;
	while (p < on && p < nn && o[p] == n[p])
		p++;
	while (s < on - p && s < nn - p && o[on - 1 - s] == n[nn - 1 - s])
		s++;
	if (c <= p)
		return true;
	if (c >= on - s) {
		*col = (unsigned)(c + nn - on) + 1;
		return true;
	}
	return false;
}

/*
 * The hunk whose old side holds line L, or NULL when L is outside every
 * hunk; *DELTA gets how far the hunks before L moved it.
 */
static const struct textdiff_hunk *hunk_at(const textdiff_hunk_vec *hunks, unsigned L, long *delta)
{
	*delta = 0;
	for (size_t i = 0; i < hunks->len; i++) {
		const struct textdiff_hunk *h = &hunks->items[i];
		if (h->old_lines == 0) {
			if (h->old_start < L) {
				*delta += h->new_lines;
				continue;
			}
			break;
		}
		if (h->old_start + h->old_lines <= L) {
			*delta += (long)h->new_lines - (long)h->old_lines;
			continue;
		}
		if (h->old_start > L)
			break;
		return h;
	}
	return NULL;
}

bool lines_map_pos(const textdiff_hunk_vec *hunks, const struct lines *oldl,
		    const struct lines *newl, unsigned *line, unsigned *col)
{
	long delta;
	unsigned L = *line;
	const struct textdiff_hunk *h = hunk_at(hunks, L, &delta);
	if (h) {
		unsigned k = L - h->old_start, nl;
		if (h->new_lines == h->old_lines)
			nl = h->new_start + k;
		else if (h->new_lines > 0 && k == 0)
			nl = h->new_start;
		else if (h->new_lines > 0 && k == h->old_lines - 1)
			nl = h->new_start + h->new_lines - 1;
		else
			return false;
		size_t on, nn;
		const char *o = lines_get(oldl, L, &on);
		const char *n = lines_get(newl, nl, &nn);
		if (!map_column(o, on, n, nn, col))
			return false;
		*line = nl;
		return true;
	}
	*line = (unsigned)((long)L + delta);
	return true;
}

unsigned lines_map_line(const textdiff_hunk_vec *hunks, unsigned L)
{
	long delta;
	const struct textdiff_hunk *h = hunk_at(hunks, L, &delta);
	if (h)
		return h->new_start + (h->new_lines ? h->new_lines - 1 : 0);
	return (unsigned)((long)L + delta);
}

bool lines_hunk_has(const struct textdiff_hunk *h, const struct lines *newl, const char *needle)
{
	struct buf hay = BUF_INIT, pin = BUF_INIT;
	for (unsigned k = 0; k < h->new_lines; k++) {
		size_t n;
		const char *s = lines_get(newl, h->new_start + k, &n);
		squeeze(&hay, s, n);
	}
	squeeze(&pin, needle, strlen(needle));
	bool found = strstr(buf_cstr(&hay), buf_cstr(&pin)) != NULL;
	buf_release(&hay);
	buf_release(&pin);
	return found;
}

/* Leading blanks of line S (N bytes). */
static size_t indent_len(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

/* Bytes of line LINE of L with its newline (LEN: the text's length). */
static size_t line_full(const struct lines *l, unsigned line, size_t len)
{
	return (line < l->start.len ? l->start.items[line] : len) - l->start.items[line - 1];
}

/* E moved back over the blanks that end S[LO, E). */
static size_t trim_end(const char *s, size_t lo, size_t e)
{
	while (e > lo && (s[e - 1] == ' ' || s[e - 1] == '\t'))
		e--;
	return e;
}

/* Is new line L of hunk H, blanks aside, one of the hunk's old lines (a changed line, not a new one)? */
static bool in_old_side(const struct textdiff_hunk *h, const struct lines *oldl,
			const struct lines *newl, unsigned l)
{
	size_t n;
	const char *s = lines_get(newl, l, &n);
	size_t a = indent_len(s, n);
	for (unsigned k = 0; k < h->old_lines; k++) {
		size_t on;
		const char *o = lines_get(oldl, h->old_start + k, &on);
		size_t b = indent_len(o, on);
		if (on - b == n - a && memcmp(o + b, s + a, n - a) == 0)
			return true;
	}
	/* a rewritten line (the read became get_cpu()) is not an added one */
	return h->old_lines > 0 && !memmem(s, n, "put_cpu", 7) && !memmem(s, n, "preempt_", 8);
}

/* The nearest non-blank line of NEWL from LINE going by STEP (+1/-1) that is not ADDED; 0 if none. */
static unsigned neighbour(const struct lines *newl, const bool *added, unsigned line, int step)
{
	for (long k = (long)line + step; k >= 1 && k <= (long)newl->start.len; k += step) {
		size_t n;
		const char *s = lines_get(newl, (unsigned)k, &n);
		if (!added[k] && indent_len(s, n) < n)
			return (unsigned)k;
	}
	return 0;
}

/* A token of a line: [s, e), after the blanks [ws, s). */
struct ltok {
	size_t ws, s, e;
};

static bool word_char(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* The tokens of line S (N bytes): words, and every other character alone. At most MAX; false if more. */
static bool line_tokens(const char *s, size_t n, struct ltok *t, size_t max, size_t *count)
{
	size_t k = 0, i = 0;
	while (i < n) {
		size_t ws = i;
		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i == n)
			break;
		if (k == max)
			return false;
		size_t st = i;
		if (word_char(s[i]))
			while (i < n && word_char(s[i]))
				i++;
		else
			i++;
		t[k++] = (struct ltok){ws, st, i};
	}
	*count = k;
	return true;
}

/*
 * Appends NEW (N bytes, a changed line) to B with OLD's blanks (ON bytes)
 * where the two lines have the same tokens: spatch reprints the line and
 * drops a blank next to the part it replaced (`if ( cpu == get_cpu())`
 * for `if ( cpu == smp_processor_id() )`). Only blanks differ from NEW;
 * the part that changed keeps NEW's, but for its first token. False, B
 * untouched, for a line with a string or character literal or a comment.
 */
static bool respace(struct buf *b, const char *o, size_t on, const char *s, size_t n)
{
	enum { MAX_TOKENS = 256 };
	struct ltok ot[MAX_TOKENS], nt[MAX_TOKENS];
	size_t no, nn;
	if (memchr(o, '"', on) || memchr(o, '\'', on) || memchr(s, '"', n) || memchr(s, '\'', n) ||
	    memmem(s, n, "/*", 2) || memmem(s, n, "//", 2) || memmem(o, on, "/*", 2) || memmem(o, on, "//", 2))
		return false;
	if (!line_tokens(o, on, ot, MAX_TOKENS, &no) || !line_tokens(s, n, nt, MAX_TOKENS, &nn) || !no || !nn)
		return false;
	size_t pre = 0, suf = 0;
	while (pre < no && pre < nn && ot[pre].e - ot[pre].s == nt[pre].e - nt[pre].s &&
	       memcmp(o + ot[pre].s, s + nt[pre].s, ot[pre].e - ot[pre].s) == 0)
		pre++;
	while (suf < no - pre && suf < nn - pre) {
		const struct ltok *x = &ot[no - 1 - suf], *y = &nt[nn - 1 - suf];
		if (x->e - x->s != y->e - y->s || memcmp(o + x->s, s + y->s, x->e - x->s) != 0)
			break;
		suf++;
	}
	bool same = pre == no && pre == nn;
	for (size_t k = 0; k < nn; k++) {
		const struct ltok *y = &nt[k];
		/* the old token this one stands for: in the prefix or the suffix; at
		 * the changed part's edges only a blank inside ( ) or [ ] comes back */
		const struct ltok *x = k < pre ? &ot[k] : k >= nn - suf ? &ot[no - (nn - k)] : NULL;
		if (!same && k == nn - suf && k > pre - (pre > 0) && s[y->s] != ')' && s[y->s] != ']')
			x = NULL;
		if (!same && k == pre && k < nn - suf && pre < no - suf &&
		    (k == 0 || s[nt[k - 1].s] == '(' || s[nt[k - 1].s] == '[' || s[nt[k - 1].s] == ')'))
			x = &ot[pre]; /* the indentation, or a blank after ( or a cast's ) */
		const char *ws = s + y->ws;
		size_t wn = y->s - y->ws;
		if (x) {
			ws = o + x->ws, wn = x->s - x->ws;
			/* never join two words the new line keeps apart */
			if (!wn && k > 0 && word_char(s[nt[k - 1].e - 1]) && word_char(s[y->s]))
				ws = " ", wn = 1;
		}
		buf_add(b, ws, wn);
		buf_add(b, s + y->s, y->e - y->s);
	}
	/* blanks ending the line: the old line's when only blanks changed (no churn), else none */
	if (same)
		buf_add(b, o + ot[no - 1].e, on - ot[no - 1].e);
	return true;
}

/* Width in columns of the blanks IND (N bytes), a tab reaching the next multiple of 8. */
static size_t indent_width(const char *ind, size_t n)
{
	size_t width = 0;
	for (size_t i = 0; i < n; i++)
		width = ind[i] == '\t' ? (width / 8 + 1) * 8 : width + 1;
	return width;
}

/*
 * The indentation IND (N blanks) as the kernel writes it: a tab per 8
 * columns, then spaces for the rest (an alignment); a line indented by
 * fewer than 8 columns gets one tab, since checkpatch refuses a line that
 * starts with a space.
 */
static void add_tab_indent(struct buf *b, const char *ind, size_t n)
{
	size_t width = indent_width(ind, n);
	size_t tabs = width / 8, spaces = width % 8;
	if (!tabs && spaces)
		tabs = 1, spaces = 0;
	for (size_t i = 0; i < tabs; i++)
		buf_putc(b, '\t');
	for (size_t i = 0; i < spaces; i++)
		buf_putc(b, ' ');
}

/*
 * Marks in ADDED the lines of NEWL that are not in OLDL, and in WAS[l] the
 * old line that changed line l stands for, where a change is line for
 * line: a changed line keeps the old line's indentation (spatch reprints a
 * continuation line at the statement's indentation).
 */
static void mark_added_lines(const struct lines *oldl, const struct lines *newl, bool *added,
			     unsigned *was)
{
	textdiff_hunk_vec hunks = VEC_INIT;
	if (textdiff_hunks(oldl->text, oldl->len, newl->text, newl->len, &hunks) == 0)
		for (size_t i = 0; i < hunks.len; i++) {
			/* as half-open line ranges; a deletion next to an insertion is one change */
			struct textdiff_hunk h = hunks.items[i];
			unsigned os = h.old_lines ? h.old_start : h.old_start + 1;
			unsigned ns = h.new_lines ? h.new_start : h.new_start + 1;
			unsigned oe = os + h.old_lines, ne = ns + h.new_lines;
			while (i + 1 < hunks.len) {
				const struct textdiff_hunk *x = &hunks.items[i + 1];
				unsigned xos = x->old_lines ? x->old_start : x->old_start + 1;
				unsigned xns = x->new_lines ? x->new_start : x->new_start + 1;
				if (xos != oe || xns != ne)
					break;
				oe += x->old_lines, ne += x->new_lines, i++;
			}
			h.old_start = os, h.old_lines = oe - os, h.new_start = ns, h.new_lines = ne - ns;
			unsigned kept = 0, paired = 0;
			for (unsigned l = ns; l < ne; l++) {
				added[l] = !in_old_side(&h, oldl, newl, l);
				kept += !added[l];
			}
			/* line for line only: then each changed line has its old one */
			for (unsigned l = ns; kept == h.old_lines && l < ne; l++)
				if (!added[l])
					was[l] = os + paired++;
		}
	vec_release(&hunks);
}

/* Is line S (N bytes) indented with spaces only (and indented at all)? */
static bool space_indented(const char *s, size_t n)
{
	size_t ind = indent_len(s, n);
	return ind > 0 && !memchr(s, '\t', ind);
}

/*
 * Appends to B the indentation of added line LINE of NEWL (S, its IND
 * leading blanks): the style of the statement beside it in its block (the
 * line before it, or after an opening brace the line after it). Among
 * space-indented statements it keeps spaces, spatch's width (spatch
 * indents what it adds like the code it came from, a continuation line
 * aside); else the kernel's tabs, at that statement's width where
 * spatch's indentation has spaces in it.
 */
static void indent_added_line(struct buf *b, const struct lines *newl, const bool *added,
			      unsigned line, const char *s, size_t ind)
{
	size_t rn = 0, pn = 0;
	unsigned ref = neighbour(newl, added, line, -1);
	const char *r = ref ? lines_get(newl, ref, &rn) : NULL;
	if (r && rn && r[rn - 1] == '{' && s[ind] != '}')
		r = (ref = neighbour(newl, added, line, 1)) ? lines_get(newl, ref, &rn) : NULL;
	if (!r && (ref = neighbour(newl, added, line, 1)))
		r = lines_get(newl, ref, &rn);
	size_t rind = r ? indent_len(r, rn) : 0;
	/* tabs then spaces is already the kernel's: an aligned continuation (`int a,\n\t    b;`) */
	bool aligned = ind > 0 && s[0] == '\t' && s[ind - 1] == ' ';
	size_t sn = 0;
	lines_get(newl, line, &sn);
	bool put = memmem(s, sn, "put_cpu", 7) != NULL; /* its line before may be a changed one */
	const char *prev = line > 1 && (added[line - 1] || put) ? lines_get(newl, line - 1, &pn) : NULL;
	if (!ind && prev && (put || memmem(prev, pn, "put_cpu", 7))) {
		/*
		 * `return ret;`, the second line of a region's one exit, or the
		 * `put_cpu();` after a returned call kept inside (region_exit.c)
		 */
		s = prev, ind = indent_len(prev, pn);
		if (space_indented(prev, pn)) {
			buf_add(b, prev, ind);
			return;
		}
	} else if (r && space_indented(r, rn)) {
		for (size_t i = indent_width(s, ind); i > 0; i--)
			buf_putc(b, ' ');
		return;
	} else if (!aligned && memchr(s, ' ', ind) && s[ind] != '}' && r && memchr(r, '\t', rind)) {
		s = r, ind = rind;
	}
	add_tab_indent(b, s, ind);
}

char *lines_indent_added(const char *old_text, size_t old_len, const char *new_text,
			 size_t new_len, size_t *out_len)
{
	struct lines newl, oldl;
	lines_init(&newl, new_text, new_len);
	lines_init(&oldl, old_text, old_len);
	bool *added = xcalloc(newl.start.len + 2, sizeof *added);
	unsigned *was = xcalloc(newl.start.len + 2, sizeof *was);
	mark_added_lines(&oldl, &newl, added, was);
	struct buf b = BUF_INIT;
	for (unsigned line = 1; line <= newl.start.len; line++) {
		size_t n;
		const char *s = lines_get(&newl, line, &n);
		size_t full = line_full(&newl, line, new_len);
		size_t ind = indent_len(s, n);
		if (was[line]) {
			size_t on;
			const char *o = lines_get(&oldl, was[line], &on);
			if (respace(&b, o, on, s, n)) {
				buf_add(&b, s + n, full - n);
				continue;
			}
			size_t oind = indent_len(o, on);
			buf_add(&b, o, oind);
			buf_add(&b, s + ind, full - ind);
			continue;
		}
		if (!added[line]) {
			buf_add(&b, s, full);
			continue;
		}
		/* a line preemptify adds: indented as its block is, no trailing blanks */
		if (ind < n) /* a blank line stays empty */
			indent_added_line(&b, &newl, added, line, s, ind);
		buf_add(&b, s + ind, trim_end(s, ind, n) - ind);
		buf_add(&b, s + n, full - n);
	}
	free(added);
	free(was);
	lines_release(&oldl);
	lines_release(&newl);
	*out_len = b.len;
	return buf_detach(&b);
}

/* The trailing comment of line S (N bytes): its offset, or N when there is none. */
static size_t trailing_comment(const char *s, size_t n)
{
	size_t e = trim_end(s, 0, n);
	if (e < 4 || s[e - 1] != '/' || s[e - 2] != '*')
		return n;
	for (size_t i = e - 2; i-- > 0; )
		if (s[i] == '/' && s[i + 1] == '*')
			return i > 0 && memchr(s, ';', i) ? i : n;
	return n;
}

/* The one old line with code that ends with the comment COMMENT (MN bytes), or 0. */
static unsigned old_line_with(const struct lines *oldl, const char *comment, size_t mn)
{
	unsigned found = 0;
	for (unsigned k = 1; k <= oldl->start.len; k++) {
		size_t n;
		const char *o = lines_get(oldl, k, &n);
		size_t c = trailing_comment(o, n);
		size_t e = trim_end(o, c, n);
		if (c == n || e - c != mn || memcmp(o + c, comment, mn) != 0)
			continue;
		if (found)
			return 0; /* not unique: leave it to the validator */
		found = k;
	}
	return found;
}

/* Is the code of old line K (its trailing comment aside) the line S (N bytes), blanks aside? */
static bool same_code(const struct lines *oldl, unsigned k, const char *s, size_t n)
{
	size_t on;
	const char *o = lines_get(oldl, k, &on);
	size_t oe = trailing_comment(o, on);
	size_t i = 0, j = 0;
	for (;;) {
		while (i < oe && (o[i] == ' ' || o[i] == '\t'))
			i++;
		while (j < n && (s[j] == ' ' || s[j] == '\t'))
			j++;
		if (i == oe || j == n)
			return i == oe && j == n;
		if (o[i++] != s[j++])
			return false;
	}
}

char *lines_keep_trailing_comments(const char *old_text, size_t old_len, const char *new_text,
				   size_t new_len, size_t *out_len)
{
	struct lines oldl, newl;
	lines_init(&oldl, old_text, old_len);
	lines_init(&newl, new_text, new_len);
	struct buf b = BUF_INIT;
	for (unsigned line = 1; line <= newl.start.len; line++) {
		size_t n, pn = 0;
		const char *s = lines_get(&newl, line, &n);
		size_t full = line_full(&newl, line, new_len);
		const char *next = line < newl.start.len ? lines_get(&newl, line + 1, &pn) : NULL;
		size_t c = next ? trailing_comment(next, pn) : 0;
		unsigned k = 0;
		if (next && c < pn && c > 0 && trailing_comment(s, n) == n) {
			size_t e = trim_end(next, c, pn);
			k = old_line_with(&oldl, next + c, e - c);
			/* only back onto the line it was on: the same code, comment aside, or the
			 * line before an added release (whose own line may have been edited) */
			if (k && !same_code(&oldl, k, s, n) &&
			    !memmem(next, c, "put_cpu", 7) && !memmem(next, c, "preempt_", 8))
				k = 0;
			/* a comment still after the code it ended (`mb();` twice in a row) stays */
			if (k && same_code(&oldl, k, next, c))
				k = 0;
		}
		if (!k) {
			buf_add(&b, s, full);
			continue;
		}
		/* this line gets its comment back, with the old spacing */
		size_t on;
		const char *o = lines_get(&oldl, k, &on);
		size_t oc = trailing_comment(o, on), ob = oc;
		while (ob > 0 && (o[ob - 1] == ' ' || o[ob - 1] == '\t'))
			ob--;
		buf_add(&b, s, n);
		buf_add(&b, o + ob, on - ob);
		buf_add(&b, s + n, full - n);
		/* and the added line loses it */
		size_t e = trim_end(next, 0, c);
		buf_add(&b, next, e);
		line++;
		size_t nfull = line_full(&newl, line, new_len);
		buf_add(&b, next + pn, nfull - pn);
	}
	lines_release(&oldl);
	lines_release(&newl);
	*out_len = b.len;
	return buf_detach(&b);
}

/*
 * The offset of the `//` comment that ends line S (N bytes), outside string
 * and character literals and block comments, or N when there is none.
 */
static size_t line_comment(const char *s, size_t n)
{
	for (size_t i = 0; i + 1 < n;) {
		enum ctext_kind k = ctext_at(s, n, i);
		if (k == CTEXT_LINE_COMMENT)
			return i;
		i = k == CTEXT_CODE ? i + 1 : ctext_skip(s, n, i);
	}
	return n;
}

/* Is line S (N bytes) an opening brace alone? */
static bool lone_brace(const char *s, size_t n)
{
	size_t i = indent_len(s, n);
	if (i >= n || s[i] != '{')
		return false;
	for (i++; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

char *lines_brace_before_comment(const char *old_text, size_t old_len, const char *new_text,
				 size_t new_len, size_t *out_len)
{
	struct lines oldl, newl;
	lines_init(&oldl, old_text, old_len);
	lines_init(&newl, new_text, new_len);
	struct buf b = BUF_INIT;
	for (unsigned line = 1; line <= newl.start.len; line++) {
		size_t n, bn = 0;
		const char *s = lines_get(&newl, line, &n);
		size_t full = line_full(&newl, line, new_len);
		const char *brace = line < newl.start.len ? lines_get(&newl, line + 1, &bn) : NULL;
		size_t c = brace && lone_brace(brace, bn) ? line_comment(s, n) : n;
		size_t e = trim_end(s, 0, c);
		bool header = c < n && e > 0 &&
			      (s[e - 1] == ')' || (e >= 4 && memcmp(s + e - 4, "else", 4) == 0 &&
						   (e == 4 || s[e - 5] == ' ' || s[e - 5] == '\t' || s[e - 5] == '}')));
		/* the brace is new: OLD does not have this line followed by it */
		for (unsigned k = 1; header && k < oldl.start.len; k++) {
			size_t on, obn;
			const char *o = lines_get(&oldl, k, &on);
			const char *ob = lines_get(&oldl, k + 1, &obn);
			if (on == n && memcmp(o, s, n) == 0 && lone_brace(ob, obn))
				header = false;
		}
		if (!header) {
			buf_add(&b, s, full);
			continue;
		}
		buf_add(&b, s, e);
		buf_puts(&b, " {");
		buf_add(&b, s + e, full - e);
		line++; /* the brace's line goes */
	}
	lines_release(&oldl);
	lines_release(&newl);
	*out_len = b.len;
	return buf_detach(&b);
}

enum cond_line { COND_NONE, COND_IF, COND_ARM, COND_END };

/* Which conditional directive line S (N bytes) is, if any; *CONT when it goes on (a backslash). */
static enum cond_line cond_kind(const char *s, size_t n, bool *cont)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i == n || s[i] != '#')
		return COND_NONE;
	i++;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	static const struct {
		const char *word;
		enum cond_line kind;
	} words[] = {{"ifdef", COND_IF}, {"ifndef", COND_IF}, {"if", COND_IF},
		     {"elif", COND_ARM}, {"else", COND_ARM}, {"endif", COND_END}};
	size_t e = trim_end(s, 0, n);
	*cont = e > 0 && s[e - 1] == '\\';
	for (size_t k = 0; k < ARRAY_SIZE(words); k++) {
		size_t w = strlen(words[k].word);
		if (n - i >= w && memcmp(s + i, words[k].word, w) == 0 && (n - i == w || !word_char(s[i + w])))
			return words[k].kind;
	}
	return COND_NONE;
}

static bool blank_line(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

struct cond_group {
	VEC(unsigned) directives; /* old lines, continuation lines included */
	bool ok;                  /* its directives are as they were */
	bool code, all_gone;      /* it held code; NEW removed all of it */
};

/*
 * Per line L of the old side of HUNKS (NO lines): STATE[L] 0 kept, its new
 * line in NEW_OF[L]; 1 removed by a pure deletion; 2 changed.
 */
static void classify_old_lines(const textdiff_hunk_vec *hunks, size_t no, uint8_t *state,
			       unsigned *new_of)
{
	long delta = 0;
	size_t h = 0;
	for (unsigned L = 1; L <= no; L++) {
		while (h < hunks->len && hunks->items[h].old_lines == 0 && hunks->items[h].old_start < L) {
			delta += hunks->items[h].new_lines;
			h++;
		}
		const struct textdiff_hunk *x = h < hunks->len ? &hunks->items[h] : NULL;
		if (x && x->old_lines && L >= x->old_start && L < x->old_start + x->old_lines) {
			state[L] = x->new_lines ? 2 : 1;
			if (L == x->old_start + x->old_lines - 1) {
				delta += (long)x->new_lines - (long)x->old_lines;
				h++;
			}
			continue;
		}
		new_of[L] = (unsigned)((long)L + delta);
	}
}

/*
 * Marks in DROP (by new line) the directives of every conditional of OLDL
 * whose code is all gone (STATE and NEW_OF: classify_old_lines()), inner
 * ones first. Returns whether it marked any.
 */
static bool mark_emptied_conditionals(const struct lines *oldl, const uint8_t *state,
				      const unsigned *new_of, bool *drop)
{
	size_t no = oldl->start.len;
	bool any = false;
	VEC(struct cond_group) stack = VEC_INIT;
	for (unsigned L = 1; L <= no; L++) {
		size_t n;
		const char *s = lines_get(oldl, L, &n);
		bool cont = false;
		enum cond_line k = cond_kind(s, n, &cont);
		struct cond_group *top = stack.len ? &stack.items[stack.len - 1] : NULL;
		if (k == COND_IF) {
			struct cond_group g = {VEC_INIT, true, false, true};
			vec_push(&stack, g);
			top = &stack.items[stack.len - 1];
		}
		if (k != COND_NONE && top) {
			vec_push(&top->directives, L);
			top->ok &= state[L] == 0;
			/* a directive continued by backslashes: its lines go together */
			while (cont && L < no) {
				s = lines_get(oldl, ++L, &n);
				vec_push(&top->directives, L);
				top->ok &= state[L] == 0;
				size_t e = trim_end(s, 0, n);
				cont = e > 0 && s[e - 1] == '\\';
			}
		}
		if (k == COND_END && top) {
			bool emptied = top->ok && top->code && top->all_gone;
			for (size_t d = 0; emptied && d < top->directives.len; d++)
				drop[new_of[top->directives.items[d]]] = true;
			any |= emptied;
			vec_release(&top->directives);
			stack.len--;
			if (stack.len) { /* to the outer one, an emptied conditional is code gone */
				stack.items[stack.len - 1].code = true;
				stack.items[stack.len - 1].all_gone &= emptied;
			}
			continue;
		}
		if (k == COND_NONE && top && !blank_line(s, n)) {
			top->code = true;
			top->all_gone &= state[L] == 1;
		}
	}
	for (size_t i = 0; i < stack.len; i++)
		vec_release(&stack.items[i].directives);
	vec_release(&stack);
	return any;
}

char *lines_drop_emptied_conditionals(const char *old_text, size_t old_len, const char *new_text,
				      size_t new_len, size_t *out_len)
{
	textdiff_hunk_vec hunks = VEC_INIT;
	if (textdiff_hunks(old_text, old_len, new_text, new_len, &hunks) < 0 || !hunks.len) {
		error_clear();
		vec_release(&hunks);
		*out_len = new_len;
		return xstrndup(new_text, new_len);
	}
	struct lines oldl, newl;
	lines_init(&oldl, old_text, old_len);
	lines_init(&newl, new_text, new_len);
	size_t no = oldl.start.len;
	uint8_t *state = xcalloc(no + 1, 1);
	unsigned *new_of = xcalloc(no + 1, sizeof *new_of);
	classify_old_lines(&hunks, no, state, new_of);
	bool *drop = xcalloc(newl.start.len + 1, sizeof *drop);
	bool any = mark_emptied_conditionals(&oldl, state, new_of, drop);
	struct buf b = BUF_INIT;
	for (unsigned line = 1; line <= newl.start.len; line++)
		if (!any || !drop[line])
			buf_add(&b, lines_get(&newl, line, &(size_t){0}), line_full(&newl, line, new_len));
	free(drop);
	free(new_of);
	free(state);
	vec_release(&hunks);
	lines_release(&oldl);
	lines_release(&newl);
	*out_len = b.len;
	return buf_detach(&b);
}
