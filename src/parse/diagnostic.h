/*
 * Positions and diagnostics: a point in a source file, and what the tool
 * could not do with a file (an unparsed region, an I/O error). The walk,
 * the neutraliser and every later stage share these; findings (rules/)
 * carry positions too.
 */
#ifndef PREEMPTIFY_DIAGNOSTIC_H
#define PREEMPTIFY_DIAGNOSTIC_H

#include "util/util.h"

/* A point in a source file. line and column are 1-based; column counts bytes. */
struct srcpos {
	unsigned line, column;
	size_t offset; /* byte offset in the file */
};

/* Diagnostics: things the analysis could not do (unparsed regions, I/O). */
enum diag_kind { DIAG_UNPARSED, DIAG_IO, DIAG_TOOL };

struct diagnostic {
	enum diag_kind kind;
	char *file;
	unsigned line, column; /* 0 when not about a position */
	char *message;
	unsigned end_column; /* the end on LINE (exclusive), 0 when unknown */
};

typedef VEC(struct diagnostic) diagnostic_vec;

/* Frees what D owns (NULL-safe members). */
void diagnostic_release(struct diagnostic *d);

#endif
