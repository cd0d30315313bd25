/*
 * libFuzzer target for the translation validation (src/fix/validate.c):
 * one input is a C text and a last byte that picks a mutation. Each
 * mutation changes what the compiler sees while keeping every token:
 *   join         the line after a directive joined onto it
 *   continue     a `\` appended to a directive line (the next line swallowed)
 *   split        a directive cut in two at its first blank
 *   swap         two adjacent different words swapped
 * The validator, told no edit was planned, must refuse every one; it must
 * also accept the text unchanged. Built and run by tests/fuzz/run.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fix/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Has the line starting at P (up to END) a token that is not a comment? */
static bool line_has_code(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p < end && *p != '\n' && *p != '\r' && *p != '/' && *p != '\\';
}

/*
 * Marks in CODE[i] whether byte i of TEXT lies outside comments, strings
 * and character literals (a rough C lexer: enough to tell a directive line
 * from a line of a comment that starts with '#').
 */
static void code_bytes(const char *text, size_t len, bool *code)
{
	enum { C, BLOCK, LINE, STR, CHR } st = C;
	for (size_t i = 0; i < len; i++) {
		char c = text[i], n = i + 1 < len ? text[i + 1] : 0;
		code[i] = st == C;
		if (st == C && c == '/' && n == '*')
			st = BLOCK, code[i] = false, i++, code[i] = false;
		else if (st == C && c == '/' && n == '/')
			st = LINE, code[i] = false;
		else if (st == C && (c == '"' || c == '\''))
			st = c == '"' ? STR : CHR;
		else if (st == BLOCK && c == '*' && n == '/')
			code[++i] = false, st = C;
		else if ((st == LINE || st == STR || st == CHR) && c == '\\' && i + 1 < len)
			code[++i] = false;
		else if (st == LINE && c == '\n')
			st = C;
		else if ((st == STR && c == '"') || (st == CHR && c == '\'') || ((st == STR || st == CHR) && c == '\n'))
			st = C;
	}
}

/*
 * The Nth line (mod the count) that opens a directive, outside comments to
 * its end, and (NEED_NEXT) whose next line starts with code; NULL if none.
 */
static char *directive_line(char *text, size_t len, unsigned n, bool need_next)
{
	char *end = text + len, *hits[64];
	size_t nh = 0;
	bool *code = calloc(len + 1, sizeof *code);
	code_bytes(text, len, code);
	for (char *l = text; l < end && nh < 64; l = memchr(l, '\n', (size_t)(end - l)) ? (char *)memchr(l, '\n', (size_t)(end - l)) + 1 : end) {
		if (l > text && l[-1] != '\n')
			continue;
		if (l > text + 1 && l[-2] == '\\')
			continue; /* a continued line: not the start of a logical line */
		char *p = l;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= end || *p != '#' || !code[p - text])
			continue;
		char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl || nl[-1] == '\\' || nl[-1] == '\r' || !code[nl - text])
			continue;
		char *q = nl + 1;
		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
		if (need_next && (!line_has_code(nl + 1, end) || q >= end || !code[q - text]))
			continue;
		hits[nh++] = l;
	}
	free(code);
	return nh ? hits[n % nh] : NULL;
}

/* Applies mutation KIND to TEXT in place (LEN may grow by 1 into the spare byte); false if none fits. */
static bool mutate(char *text, size_t *len, unsigned kind, unsigned n)
{
	char *end = text + *len;
	if (kind == 3) { /* swap two adjacent different words */
		for (char *p = text; p + 3 < end; p++) {
			char *a = p, *b;
			if (!(*a >= 'a' && *a <= 'z') || (a > text && (a[-1] == '_' || (a[-1] | 32) >= 'a')))
				continue;
			char *ae = a;
			while (ae < end && ((*ae | 32) >= 'a' && (*ae | 32) <= 'z'))
				ae++;
			if (ae >= end || *ae != ' ' || ae + 1 >= end)
				continue;
			b = ae + 1;
			char *be = b;
			while (be < end && ((*be | 32) >= 'a' && (*be | 32) <= 'z'))
				be++;
			if (be == b || (be < end && (*be == '_' || (*be >= '0' && *be <= '9'))) ||
			    (size_t)(ae - a) != (size_t)(be - b) || memcmp(a, b, (size_t)(ae - a)) == 0 || n--)
				continue;
			for (size_t i = 0; i < (size_t)(ae - a); i++) {
				char t = a[i];
				a[i] = b[i];
				b[i] = t;
			}
			return true;
		}
		return false;
	}
	char *l = directive_line(text, *len, n, kind != 2);
	if (!l)
		return false;
	char *nl = memchr(l, '\n', (size_t)(end - l));
	if (kind == 0) { /* join the next line onto the directive */
		*nl = ' ';
		return true;
	}
	if (kind == 1) { /* a continuation swallows the next line */
		memmove(nl + 1, nl, (size_t)(end - nl));
		*nl = '\\';
		(*len)++;
		return true;
	}
	/* split the directive at the first blank after its name */
	char *p = memchr(l, '#', (size_t)(nl - l)) + 1;
	while (p < nl && (*p == ' ' || *p == '\t'))
		p++;
	while (p < nl && *p != ' ' && *p != '\t')
		p++;
	if (p >= nl || !line_has_code(p, nl))
		return false;
	*p = '\n';
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the mutations know LF lines and blanks of spaces and tabs only: a CR is a line break, a
	 * form feed or a vertical tab a blank, to the compiler and the validator alike (CRLF, bare
	 * CR and other bytes are the unit tests' business); printable ASCII, tabs and LFs only */
	if (size < 2)
		return 0;
	for (size_t i = 0; i + 1 < size; i++)
		if (data[i] != '\n' && data[i] != '\t' && (data[i] < 0x20 || data[i] > 0x7e))
			return 0;
	unsigned pick = data[size - 1];
	size_t len = size - 1;
	char *old = malloc(len + 1), *mut = malloc(len + 2);
	memcpy(old, data, len);
	old[len] = '\0';
	memcpy(mut, data, len);
	char *what = NULL;
	if (validate_tokens(old, len, old, len, NULL, 0, &what) != 0) {
		fprintf(stderr, "the unchanged text was refused: %s\n", what);
		abort();
	}
	size_t mlen = len;
	if (mutate(mut, &mlen, pick & 3, pick >> 2)) {
		mut[mlen] = '\0';
		if (validate_tokens(old, len, mut, mlen, NULL, 0, &what) == 0) {
			fprintf(stderr, "mutation %u accepted as no change:\n--- old\n%s\n--- new\n%s\n", pick & 3, old, mut);
			abort();
		}
		free(what);
	}
	free(old);
	free(mut);
	return 0;
}
