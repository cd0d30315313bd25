/*
 * Raw text outside the neutraliser (source.h): whole-word searches
 * (text_has_word(), text_names_object(), text_member_accesses()) over a
 * file's bytes, what its unconditional #defines say of a macro
 * (text_defined_before()), what may follow a macro standing for a declarator
 * (text_past_declarator_tail()), and the blanking of an assembly file's comments
 * (asm_blank_comments()).
 */
#define _GNU_SOURCE /* memmem */
#include "parse/ctext.h"
#include "parse/source.h"

#include <string.h>

/* Is the identifier before P (blanks skipped, not before TEXT) one of the tag keywords? */
static bool after_tag_keyword(const char *text, const char *p)
{
	while (p > text && (p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\n'))
		p--;
	const char *end = p;
	while (p > text && is_ident_char(p[-1]))
		p--;
	size_t n = (size_t)(end - p);
	return (n == 6 && (memcmp(p, "struct", 6) == 0)) || (n == 5 && memcmp(p, "union", 5) == 0) ||
	       (n == 4 && memcmp(p, "enum", 4) == 0);
}

bool text_names_object(const char *text, size_t len, const char *word)
{
	size_t n = strlen(word);
	if (n == 0)
		return false;
	for (const char *p = memmem(text, len, word, n); p; p = memmem(p + 1, len - (size_t)(p + 1 - text), word, n)) {
		if ((p != text && is_ident_char(p[-1])) || (p + n != text + len && is_ident_char(p[n])))
			continue;
		const char *q = p;
		while (q > text && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\n'))
			q--;
		bool member = q > text && (q[-1] == '.' || (q[-1] == '>' && q - 1 > text && q[-2] == '-'));
		if (!member && !after_tag_keyword(text, p))
			return true;
	}
	return false;
}

unsigned text_member_accesses(const char *text, size_t len, const char *field, unsigned most)
{
	size_t n = strlen(field);
	unsigned count = 0;
	if (n == 0)
		return 0;
	for (const char *p = memmem(text, len, field, n); p && (!most || count < most);
	     p = memmem(p + 1, len - (size_t)(p + 1 - text), field, n)) {
		if ((p > text && is_ident_char(p[-1])) || (p + n < text + len && is_ident_char(p[n])))
			continue;
		const char *q = p;
		while (q > text && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\n'))
			q--;
		count += q > text && (q[-1] == '.' || (q[-1] == '>' && q - 1 > text && q[-2] == '-'));
	}
	return count;
}

bool text_has_word(const char *text, size_t len, const char *word)
{
	size_t n = strlen(word);
	if (n == 0)
		return false; /* a name error recovery left empty (a MISSING identifier) */
	for (const char *p = memmem(text, len, word, n); p; p = memmem(p + 1, len - (size_t)(p + 1 - text), word, n))
		if ((p == text || !is_ident_char(p[-1])) && (p + n == text + len || !is_ident_char(p[n])))
			return true;
	return false;
}

/* Is the line at T[I] (its first non-blank byte a '#') a comment: no directive follows? */
static bool asm_hash_comment(const char *t, size_t len, size_t i)
{
	static const char *const directives[] = {
		"define", "undef", "include", "include_next", "if", "ifdef", "ifndef", "elif", "else",
		"endif", "error", "warning", "line", "pragma", "ident", "assert", "unassert",
	};
	size_t k = i + 1;
	while (k < len && (t[k] == ' ' || t[k] == '\t'))
		k++;
	if (k >= len || t[k] == '\n' || (t[k] >= '0' && t[k] <= '9'))
		return false; /* a null directive or a line marker: no name */
	size_t e = k;
	while (e < len && is_ident_char(t[e]))
		e++;
	for (size_t d = 0; d < ARRAY_SIZE(directives); d++)
		if (strlen(directives[d]) == e - k && memcmp(directives[d], t + k, e - k) == 0)
			return false;
	return true;
}

void asm_blank_comments(char *text, size_t len)
{
	bool line_start = true;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (c == '\n') {
			line_start = true;
			continue;
		}
		bool first = line_start && c != ' ' && c != '\t';
		if (c != ' ' && c != '\t')
			line_start = false;
		if (c == '"') {
			while (i + 1 < len && text[i + 1] != '"' && text[i + 1] != '\n')
				i += text[i + 1] == '\\' && i + 2 < len && text[i + 2] != '\n' ? 2 : 1;
			if (i + 1 < len && text[i + 1] == '"')
				i++;
			continue;
		}
		size_t e = i;
		if (ctext_at(text, len, i) == CTEXT_BLOCK_COMMENT) {
			e = ctext_skip(text, len, i); /* unterminated: to the end */
		} else if ((c == '/' && i + 1 < len && text[i + 1] == '/') ||
			   (c == '#' && first && asm_hash_comment(text, len, i))) {
			while (e < len && text[e] != '\n')
				e++; /* ia64's // and the # comment lines of i386 and others */
		}
		if (e == i)
			continue;
		for (size_t k = i; k < e; k++)
			if (text[k] != '\n')
				text[k] = ' ';
		i = e - 1;
	}
}

/* The directive word at T[I] (its '#'), as its start and length; 0 when none. */
static size_t directive_name(const char *t, size_t e, size_t i, size_t *at)
{
	for (i++; i < e && (t[i] == ' ' || t[i] == '\t'); i++)
		;
	*at = i;
	while (i < e && is_ident_char(t[i]))
		i++;
	return i - *at;
}

int text_defined_before(const char *text, size_t upto, const char *name, size_t n)
{
	int depth = 0, said = -1;
	struct ctext cx;
	for (ctext_init(&cx, text, upto); ctext_more(&cx); ctext_next(&cx)) {
		if (cx.kind != CTEXT_CODE || !cx.line_start || text[cx.pos] != '#')
			continue;
		size_t e = ctext_directive_end(text, upto, cx.pos), w, wn = directive_name(text, e, cx.pos, &w);
		size_t m, mn = directive_name(text, e, w + wn - 1, &m);
		if (wn >= 2 && memcmp(text + w, "if", 2) == 0)
			depth++;
		else if (wn == 5 && memcmp(text + w, "endif", 5) == 0)
			depth--;
		else if (depth == 0 && mn == n && memcmp(text + m, name, n) == 0 &&
			 ((wn == 6 && memcmp(text + w, "define", 6) == 0) || (wn == 5 && memcmp(text + w, "undef", 5) == 0)))
			said = text[w] == 'd';
		while (ctext_more(&cx) && cx.end < e)
			ctext_next(&cx);
	}
	return said;
}

/*
 * What may follow DEFINE_PER_CPU(T, x), which stands for a declarator:
 * attribute words (`____cacheline_aligned`) and an initialiser (`= { &init_mm,
 * 0 }`), from I (past the call's blanks). Returns the offset of the `;`
 * that ends them, or I when something else follows.
 */
size_t text_past_declarator_tail(const char *t, size_t len, size_t i)
{
	size_t k = i;
	while (k < len && is_ident_char(t[k])) {
		while (k < len && is_ident_char(t[k]))
			k++;
		k = ctext_skip_blanks(t, len, k);
	}
	if (k < len && t[k] == '=') {
		int depth = 0;
		for (k++; k < len && !(depth == 0 && t[k] == ';');) {
			size_t past = ctext_skip(t, len, k);
			if (past != k) {
				k = past;
				continue;
			}
			if (t[k] == '{' || t[k] == '(')
				depth++;
			else if ((t[k] == '}' || t[k] == ')') && --depth < 0)
				return i;
			k++;
		}
	}
	return k < len && t[k] == ';' ? k : i;
}
