/*
 * Slicing: spatch is given only the top-level functions that hold a run's
 * sites (the others blanked, lines and columns kept), and what it changed
 * is spliced back into the whole text.
 */
#include "fix/rewrite_internal.h"
#include "parse/ctext.h"

#include <stdlib.h>
#include <string.h>

#include <tree_sitter/api.h>

#include "parse/source.h"
#include "parse/ts.h"
#include "fix/lines.h"
#include "fix/textdiff.h"

/* Bytes [s, e) of line L of LI (with its newline). */
static void line_span(const struct lines *li, unsigned L, size_t *s, size_t *e)
{
	*s = L >= 1 && L <= li->start.len ? li->start.items[L - 1] : li->len;
	*e = L < li->start.len ? li->start.items[L] : li->len;
}

/*
 * Scans one line [i, le) of TEXT for comments, starting inside a block
 * comment when *COMMENT; leaves *COMMENT true when one stays open. String
 * and character literals are skipped: a comment opener in a string opens
 * nothing.
 */
static void scan_comments(const char *text, size_t i, size_t le, bool *comment)
{
	while (i < le) {
		if (*comment) {
			i = ctext_comment_close(text, le, i, comment);
			continue;
		}
		enum ctext_kind k = ctext_at(text, le, i);
		if (k == CTEXT_LINE_COMMENT)
			return;
		if (k == CTEXT_BLOCK_COMMENT) {
			*comment = true;
			i += 2;
			continue;
		}
		i = k == CTEXT_CODE ? i + 1 : ctext_skip(text, le, i);
	}
}

/*
 * Blanks [s, e) of OUT (a copy of TEXT) but its newlines and its directive
 * lines, a directive's backslash-continued lines with it. A line that
 * starts inside a comment is no directive. False, OUT untouched, when a
 * kept directive leaves a comment open (its blanked rest would not close
 * it).
 */
static bool blank_but_directives(char *out, const char *text, size_t s, size_t e)
{
	for (int pass = 0; pass < 2; pass++) {
		bool comment = false, cont = false;
		size_t i = s;
		while (i < e) {
			size_t ls = i, le = i;
			while (le < e && text[le] != '\n')
				le++;
			while (i < le && (text[i] == ' ' || text[i] == '\t'))
				i++;
			bool directive = cont || (!comment && i < le && text[i] == '#');
			scan_comments(text, ls, le, &comment);
			if (pass == 0 && directive && comment)
				return false;
			if (pass == 1 && !directive)
				for (size_t k = ls; k < le; k++)
					out[k] = ' ';
			cont = directive && le > ls && text[le - 1] == '\\';
			i = le < e ? le + 1 : le;
		}
	}
	return true;
}

/*
 * Blanks in OUT (a copy of TEXT) the attributes `__attribute__((...))` of
 * [s, e), newlines kept, each closed before the end of its statement.
 * spatch 1.1.1 does not parse one after a local's declarator (2.4 s390io.c:
 * `long cr6 __attribute__ ((aligned (8)));`) and then changes nothing in
 * the function (the neutraliser of source.c does the like for tree-sitter,
 * on a text spatch never sees). Returns whether one was blanked.
 */
static bool blank_attributes(char *out, const char *text, size_t s, size_t e)
{
	bool any = false;
	for (size_t i = s; i + 11 <= e; i++) {
		if (text[i] != '_' || (i > 0 && (is_ident_char(text[i - 1]))) || memcmp(text + i, "__attribute", 11) != 0)
			continue;
		size_t k = i + 11;
		if (k + 2 <= e && memcmp(text + k, "__", 2) == 0)
			k += 2;
		if (k < e && is_ident_char(text[k]))
			continue;
		while (k < e && (text[k] == ' ' || text[k] == '\t' || text[k] == '\n'))
			k++;
		if (k + 1 >= e || text[k] != '(' || text[k + 1] != '(')
			continue;
		int depth = 0;
		size_t end = 0;
		for (size_t q = k; q < e && !end; q++) {
			if (text[q] == ';' || text[q] == '{' || text[q] == '}' || text[q] == '"' || text[q] == '/')
				break; /* not an attribute of one declaration (or a string, or a comment) */
			depth += text[q] == '(';
			depth -= text[q] == ')';
			if (depth == 0)
				end = q + 1;
		}
		if (!end)
			continue;
		for (size_t q = i; q < end; q++)
			if (out[q] != '\n')
				out[q] = ' ';
		any = true;
		i = end - 1;
	}
	return any;
}

/*
 * CUR with every top-level function that holds no site of this run blanked
 * (its bytes but newlines made spaces: lines and columns stay), or NULL
 * when nothing would be blanked. spatch's time goes into parsing and
 * matching every function of its input; on a large file with one site
 * most of it is wasted. The directive lines inside a blanked function
 * stay (with their continuation lines), so every #if keeps its #endif; a
 * function with a parse error, or whose directives open a comment they do
 * not close, stays whole.
 */
static char *sliced_input(const char *path, const char *cur, size_t cur_len, const site_vec *sites,
			  enum fix_kind kind, enum edit_op op, const char *group)
{
	struct lines li;
	lines_init(&li, cur, cur_len);
	VEC(size_t) at = VEC_INIT; /* [start, end] offsets of this run's sites */
	for (size_t i = 0; i < sites->len; i++) {
		const struct site *st = &sites->items[i];
		if (st->lost || st->kind != kind || st->op != op || strcmp(st->group, group) != 0)
			continue;
		size_t a, b, x, y;
		line_span(&li, st->line, &a, &b);
		line_span(&li, st->end_line, &x, &y);
		vec_push(&at, a);
		vec_push(&at, y);
	}
	struct source src;
	source_init(&src, path, xstrndup(cur, cur_len), cur_len);
	TSTree *tree = ts_parse_c(src.parse_text, cur_len);
	char *out = NULL;
	TSNode root = tree ? ts_tree_root_node(tree) : (TSNode){0};
	bool blanked = false, attributes = false;
	for (uint32_t i = 0; tree && i < ts_node_named_child_count(root); i++) {
		TSNode fn = ts_node_named_child(root, i);
		if (!ts_type_is(fn, "function_definition") || ts_node_has_error(fn))
			continue;
		size_t s = ts_node_start_byte(fn), e = ts_node_end_byte(fn);
		bool holds = false;
		for (size_t k = 0; k + 1 < at.len && !holds; k += 2)
			holds = at.items[k] < e && at.items[k + 1] > s;
		if (!out)
			out = xstrndup(cur, cur_len);
		if (holds)
			attributes |= blank_attributes(out, cur, s, e); /* a site on such a line: spliced whole */
		else
			blanked |= blank_but_directives(out, cur, s, e);
	}
	if (tree)
		ts_tree_delete(tree);
	source_release(&src);
	vec_release(&at);
	lines_release(&li);
	if (!blanked && !attributes) {
		free(out);
		return NULL;
	}
	return out;
}

/*
 * CUR with the changes spatch made to SIN (CUR sliced: same lines) giving
 * SOUT, or NULL when a change touches a line where SIN and CUR differ (a
 * blanked line: the slice was not enough, run on the whole text instead).
 */
static char *splice_back(const char *cur, size_t cur_len, const char *sin, const char *sout, size_t sout_len,
			 size_t *out_len)
{
	textdiff_hunk_vec hunks = VEC_INIT;
	if (textdiff_hunks(sin, cur_len, sout, sout_len, &hunks) < 0)
		return NULL;
	struct lines lc, lo;
	lines_init(&lc, cur, cur_len);
	lines_init(&lo, sout, sout_len);
	struct buf b = BUF_INIT;
	size_t copied = 0; /* bytes of CUR already in B */
	bool ok = true;
	for (size_t i = 0; i < hunks.len && ok; i++) {
		const struct textdiff_hunk *h = &hunks.items[i];
		size_t from, to, x, y;
		/* the old side: lines old_start.. (a pure insertion goes after old_start) */
		unsigned first = h->old_lines ? h->old_start : h->old_start + 1;
		line_span(&lc, first, &from, &x);
		to = from;
		if (h->old_lines) {
			line_span(&lc, h->old_start + h->old_lines - 1, &x, &to);
			ok = memcmp(cur + from, sin + from, to - from) == 0;
		}
		buf_add(&b, cur + copied, from - copied);
		if (h->new_lines) {
			size_t ns, ne;
			line_span(&lo, h->new_start, &ns, &y);
			line_span(&lo, h->new_start + h->new_lines - 1, &y, &ne);
			buf_add(&b, sout + ns, ne - ns);
		}
		copied = to;
	}
	buf_add(&b, cur + copied, cur_len - copied);
	lines_release(&lc);
	lines_release(&lo);
	vec_release(&hunks);
	if (!ok) {
		buf_release(&b);
		return NULL;
	}
	*out_len = b.len;
	return buf_detach(&b);
}

/*
 * run_spatch() on the functions that hold this run's sites only, the
 * result spliced back into CUR; on the whole of CUR when slicing does not
 * apply or its result cannot be spliced.
 */
int run_spatch_sliced(struct job *j, const char *dir, enum fix_kind kind, enum edit_op op,
		      const char *group, const site_vec *sites, const char *cur, size_t cur_len,
		      char **out, size_t *out_len, char **err)
{
	char *sin = j->opts->no_slice ? NULL : sliced_input(j->out->path, cur, cur_len, sites, kind, op, group);
	if (!sin)
		return spatch_one(j, dir, kind, op, group, sites, cur, cur_len, out, out_len, err);
	char *sout = NULL;
	size_t sout_len = 0;
	int rc = spatch_one(j, dir, kind, op, group, sites, sin, cur_len, &sout, &sout_len, err);
	if (rc == 0) {
		*out = splice_back(cur, cur_len, sin, sout, sout_len, out_len);
		free(sout);
	}
	free(sin);
	if (rc == 0 && !*out)
		return run_spatch(j, dir, kind, op, group, sites, cur, cur_len, out, out_len, err);
	return rc;
}
