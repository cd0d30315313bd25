/*
 * Line endings (eol.h). spatch writes "\n" for the lines it adds and drops
 * the "\r" of a line it rewrites; a CRLF file would come back mixed.
 */
#include "fix/eol.h"

#include <stdlib.h>
#include <string.h>

#include "util/util.h"

const char *eol_of(const char *old, size_t old_len)
{
	size_t lf = 0, crlf = 0;
	for (const char *p = old, *end = old + old_len; (p = memchr(p, '\n', (size_t)(end - p))); p++) {
		lf++;
		crlf += p > old && p[-1] == '\r';
	}
	return crlf * 2 > lf ? "\r\n" : "\n";
}

char *eol_follow(const char *old, size_t old_len, char *new_text, size_t *len)
{
	if (*len == 0 || strcmp(eol_of(old, old_len), "\r\n") != 0)
		return new_text;
	struct buf b = BUF_INIT;
	for (size_t i = 0; i < *len; i++) {
		if (new_text[i] == '\n' && (i == 0 || new_text[i - 1] != '\r'))
			buf_putc(&b, '\r');
		buf_putc(&b, new_text[i]);
	}
	free(new_text);
	*len = b.len;
	return buf_detach(&b);
}
