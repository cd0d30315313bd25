/* The C text cursor (ctext.h): comments, literals, continuations and directive lines of raw C. */
#define _GNU_SOURCE /* memmem */
#include "parse/ctext.h"

#include <string.h>

enum ctext_kind ctext_at(const char *t, size_t len, size_t i)
{
	char c = t[i];
	if (c == '"')
		return CTEXT_STRING;
	if (c == '\'')
		return CTEXT_CHAR;
	if (c == '/' && i + 1 < len && t[i + 1] == '*')
		return CTEXT_BLOCK_COMMENT;
	if (c == '/' && i + 1 < len && t[i + 1] == '/')
		return CTEXT_LINE_COMMENT;
	return CTEXT_CODE;
}

size_t ctext_comment_close(const char *t, size_t len, size_t i, bool *open)
{
	const char *e = i < len ? memmem(t + i, len - i, "*/", 2) : NULL;
	if (open)
		*open = !e;
	return e ? (size_t)(e - t) + 2 : len;
}

/* Past the literal whose opening quote is T[I]. */
static size_t literal_end(const char *t, size_t len, size_t i)
{
	char q = t[i++];
	while (i < len && t[i] != q && t[i] != '\n') {
		if (t[i] == '\\' && i + 1 < len)
			i++;
		i++;
	}
	return i < len ? i + 1 : len;
}

size_t ctext_skip(const char *t, size_t len, size_t i)
{
	switch (ctext_at(t, len, i)) {
	case CTEXT_BLOCK_COMMENT:
		return ctext_comment_close(t, len, i + 2, NULL);
	case CTEXT_LINE_COMMENT: {
		/* a backslash before the line break splices the next line into the comment (phase 2) */
		for (size_t from = i;;) {
			const char *nl = memchr(t + from, '\n', len - from);
			if (!nl)
				return len;
			size_t at = (size_t)(nl - t), b = at;
			if (b > i && t[b - 1] == '\r')
				b--;
			if (b <= i || t[b - 1] != '\\')
				return at;
			from = at + 1;
		}
	}
	case CTEXT_STRING:
	case CTEXT_CHAR:
		return literal_end(t, len, i);
	case CTEXT_CODE:
		break;
	}
	return i;
}

size_t ctext_continuation(const char *t, size_t len, size_t i)
{
	if (i + 1 < len && t[i] == '\\' && t[i + 1] == '\n')
		return 2;
	if (i + 2 < len && t[i] == '\\' && t[i + 1] == '\r' && t[i + 2] == '\n')
		return 3;
	return 0;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

size_t ctext_skip_blanks(const char *t, size_t len, size_t i)
{
	while (i < len) {
		enum ctext_kind k = ctext_at(t, len, i);
		if (is_blank(t[i]))
			i++;
		else if (k == CTEXT_BLOCK_COMMENT || k == CTEXT_LINE_COMMENT)
			i = ctext_skip(t, len, i);
		else if (ctext_continuation(t, len, i) == 2)
			i += 2;
		else
			break;
	}
	return i;
}

size_t ctext_directive_end(const char *t, size_t len, size_t i)
{
	while (i < len) {
		if (ctext_continuation(t, len, i) == 2)
			i += 2;
		else if (ctext_at(t, len, i) == CTEXT_BLOCK_COMMENT)
			i = ctext_comment_close(t, len, i + 2, NULL);
		else if (t[i] == '\n')
			return i;
		else
			i++;
	}
	return len;
}

/* Sets the current token's kind and end, and whether a '#' there opens a directive. */
static void ctext_settle(struct ctext *cx)
{
	if (cx->pos >= cx->len)
		return;
	cx->end = ctext_skip(cx->t, cx->len, cx->pos);
	cx->kind = ctext_at(cx->t, cx->len, cx->pos);
	if (cx->kind == CTEXT_CODE) {
		cx->end = cx->pos + 1;
		if (cx->t[cx->pos] == '#' && cx->line_start)
			cx->directive = true;
	}
}

void ctext_init(struct ctext *cx, const char *t, size_t len)
{
	cx->t = t;
	cx->len = len;
	cx->pos = 0;
	cx->end = 0;
	cx->kind = CTEXT_CODE;
	cx->line_start = true;
	cx->directive = false;
	ctext_settle(cx);
}

bool ctext_more(const struct ctext *cx)
{
	return cx->pos < cx->len;
}

void ctext_next(struct ctext *cx)
{
	if (cx->kind == CTEXT_CODE) {
		char c = cx->t[cx->pos];
		if (c == '\n') {
			cx->directive = cx->directive && cx->pos > 0 && cx->t[cx->pos - 1] == '\\';
			cx->line_start = true;
		} else if (c != ' ' && c != '\t') {
			cx->line_start = false;
		}
	}
	cx->pos = cx->end;
	ctext_settle(cx);
}
