/* The line table of a text (line_table.h). */
#include "parse/line_table.h"

#include <stdlib.h>

void lines_init(struct lines *l, const char *text, size_t len)
{
	l->start.items = NULL;
	l->start.len = l->start.cap = 0;
	l->text = text;
	l->len = len;
	vec_push(&l->start, 0);
	for (size_t i = 0; i < len; i++)
		if (text[i] == '\n' && i + 1 < len)
			vec_push(&l->start, i + 1);
}

const char *lines_get(const struct lines *l, unsigned line, size_t *n)
{
	if (line < 1 || line > l->start.len) {
		*n = 0;
		return "";
	}
	size_t s = l->start.items[line - 1];
	size_t e = line < l->start.len ? l->start.items[line] : l->len;
	while (e > s && (l->text[e - 1] == '\n' || l->text[e - 1] == '\r'))
		e--;
	*n = e - s;
	return l->text + s;
}

void lines_pos(const struct lines *l, size_t off, unsigned *line, unsigned *col)
{
	size_t lo = line_index(l->start.items, l->start.len, off);
	*line = (unsigned)lo + 1;
	*col = (unsigned)(off - l->start.items[lo]) + 1;
}

void lines_release(struct lines *l)
{
	vec_release(&l->start);
}
