/*
 * Words over raw text for the second pass's per-CPU arrays (scan_tree.c):
 * which arrays a file may index, and whether a file may define one of them,
 * found without parsing, so that only those files are parsed.
 */
#include "pipeline/scan_internal.h"

#include <stdlib.h>
#include <string.h>

#include "parse/source.h"

static int cstr_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is TEXT[I, E) an EXPORT_SYMBOL macro (EXPORT_SYMBOL, _GPL, _NOVERS)? */
static bool export_macro(const char *text, size_t i, size_t e)
{
	return e - i >= 13 && memcmp(text + i, "EXPORT_SYMBOL", 13) == 0;
}

/*
 * Appends to OUT the identifiers of TEXT that a `[` follows (x in x[...]):
 * the arrays it may index; and those it exports (EXPORT_SYMBOL(x)), whose
 * export a conversion rewrites (2.4 kernel/ksyms.c exports softirq.c's
 * tasklet_vec): a file asked alone gets the edits the whole tree gives it.
 */
void scan_subscripted_names(const char *text, size_t len, struct strvec *out)
{
	bool exported = false; /* the identifier is EXPORT_SYMBOL's argument */
	for (size_t i = 0; i < len; i++) {
		if (!is_ident_char(text[i]) || (i && is_ident_char(text[i - 1])))
			continue;
		size_t e = i;
		while (e < len && is_ident_char(text[e]))
			e++;
		size_t k = e;
		while (k < len && (text[k] == ' ' || text[k] == '\t'))
			k++;
		bool number = text[i] >= '0' && text[i] <= '9';
		if (!number && ((k < len && text[k] == '[') || (exported && k < len && text[k] == ')')))
			vec_push(out, xstrndup(text + i, e - i));
		exported = export_macro(text, i, e) && k < len && text[k] == '(';
		i = e - 1;
	}
}

/* The next NR_CPUS of TEXT[0..LEN) from P, or NULL (memchr on its rare first letter: glibc's memmem was 30 % of a file's scan) */
static const char *next_nr_cpus(const char *text, size_t len, const char *p)
{
	const char *end = text + len;
	while (p + 7 <= end && (p = memchr(p, 'N', (size_t)(end - p) - 6)))
		if (memcmp(p, "NR_CPUS", 7) == 0)
			return p;
		else
			p++;
	return NULL;
}

/* Can C stand in an array size's expression before NR_CPUS (`2 * NR_CPUS`, `(MAX + NR_CPUS)`)? */
static bool size_expr_char(char c)
{
	return c && (strchr(" \t*+-/()", c) || is_ident_char(c));
}

/* Is P on a preprocessor line of TEXT (`#define MAX NR_CPUS`)? */
static bool on_directive_line(const char *text, const char *p)
{
	const char *l = p;
	while (l > text && l[-1] != '\n')
		l--;
	while (l < p && (*l == ' ' || *l == '\t'))
		l++;
	return *l == '#';
}

/*
 * May TEXT define one of the arrays NAMES (sorted) over NR_CPUS? Each
 * NR_CPUS is looked at: `name[NR_CPUS` names the array; an NR_CPUS in a
 * directive or in another bracket (`[2 * NR_CPUS]`) makes the file a
 * candidate whatever it defines; one outside brackets (a loop's bound)
 * defines nothing.
 */
bool scan_defines_named_array(const char *text, size_t len, const struct strvec *names)
{
	for (const char *p = text; (p = next_nr_cpus(text, len, p)); p += 7) {
		if (on_directive_line(text, p))
			return true;
		const char *q = p;
		while (q > text && (q[-1] == ' ' || q[-1] == '\t'))
			q--;
		if (q > text && q[-1] != '[') {
			while (q > text && size_expr_char(q[-1]))
				q--;
			if (q > text && q[-1] == '[')
				return true; /* an expression in brackets: look closer, by parsing */
			continue;
		}
		if (q == text)
			continue;
		q--;
		while (q > text && (q[-1] == ' ' || q[-1] == '\t'))
			q--;
		const char *e = q;
		while (q > text && is_ident_char(q[-1]))
			q--;
		if (q == e)
			return true;
		char *name = xstrndup(q, (size_t)(e - q));
		bool hit = bsearch(&name, names->items, names->len, sizeof *names->items, cstr_cmp) != NULL;
		free(name);
		if (hit)
			return true;
	}
	return false;
}
