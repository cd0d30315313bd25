/*
 * The line table of a text: where each line starts, a line by number, the
 * line and column of a byte. Verify (pipeline/) and the rewrite (fix/)
 * read texts that are not a parsed source through it.
 */
#ifndef PREEMPTIFY_LINE_TABLE_H
#define PREEMPTIFY_LINE_TABLE_H

#include "util/util.h"

/* The line starts of TEXT (borrowed: it must outlive the table). */
struct lines {
	VEC(size_t) start; /* offset of each line (index 0 = line 1) */
	const char *text;
	size_t len;
};

void lines_init(struct lines *l, const char *text, size_t len);
void lines_release(struct lines *l);

/* Line L (1-based) without its newline; length in *N ("" past the end). */
const char *lines_get(const struct lines *l, unsigned line, size_t *n);

/* The 1-based line and column of byte OFF. */
void lines_pos(const struct lines *l, size_t off, unsigned *line, unsigned *col);

#endif
