/*
 * One cursor over raw C text: what a byte starts (a block or line comment,
 * a string or character literal, a backslash-newline, a directive line)
 * and where it ends. Every place that walks the user's bytes by hand (the
 * neutraliser, the tree's declaration lexers, the slicers, the line
 * matcher, the checks reading #define bodies) asks it, so a comment opener
 * in a string or a quote in a comment reads the same everywhere.
 *
 * Offsets are bytes of the text given, which need not be NUL-terminated;
 * a function given T and LEN never reads T[LEN] or beyond. Nothing here
 * allocates or fails.
 */
#ifndef PREEMPTIFY_PARSE_CTEXT_H
#define PREEMPTIFY_PARSE_CTEXT_H

#include <stdbool.h>
#include <stddef.h>

enum ctext_kind {
	CTEXT_CODE,          /* none of the below starts here */
	CTEXT_BLOCK_COMMENT, /* slash-star ... star-slash */
	CTEXT_LINE_COMMENT,  /* // ... */
	CTEXT_STRING,        /* "..." */
	CTEXT_CHAR,          /* '...' */
};

/* What starts at T[I] (I < LEN). */
enum ctext_kind ctext_at(const char *t, size_t len, size_t i);

/*
 * Just past what starts at T[I], or I itself for CTEXT_CODE (I < LEN):
 * - a block comment: past its star-slash; unclosed, LEN;
 * - a line comment: its newline (left to the caller), or LEN;
 * - a literal: past its closing quote; a backslash takes the next byte
 *   with it (a newline too: a continued literal); unclosed, past the
 *   newline that stops it, or LEN.
 */
size_t ctext_skip(const char *t, size_t len, size_t i);

/*
 * Inside a block comment from T[I] (just after its opener, or on a line it
 * continues): past its star-slash, or LEN when it does not close before;
 * *OPEN (may be NULL) says which.
 */
size_t ctext_comment_close(const char *t, size_t len, size_t i, bool *open);

/*
 * The length of the line continuation at T[I]: 2 for backslash-newline, 3
 * for backslash-CR-newline, else 0.
 */
size_t ctext_continuation(const char *t, size_t len, size_t i);

/*
 * Past the blanks (space, tab, newline, CR, FF, VT), comments and
 * backslash-newlines (a backslash before CR-LF stops it) from T[I].
 */
size_t ctext_skip_blanks(const char *t, size_t len, size_t i);

/*
 * The newline that ends the directive starting at T[I] (its '#'): the
 * first newline neither continued by a backslash nor inside a block
 * comment; LEN when there is none. Literals and line comments are not
 * looked at: a slash-star in them opens a comment here, as the
 * neutraliser has always read a directive.
 */
size_t ctext_directive_end(const char *t, size_t len, size_t i);

/*
 * The cursor: walks T one code byte at a time, over comments and literals
 * whole, and says whether a byte opens its line (only spaces and tabs
 * before it on the line; a comment between keeps that) and whether it is
 * on a directive (a '#' opening its line, to the newline ending it: one
 * after a backslash continues it).
 *
 *	struct ctext cx;
 *	for (ctext_init(&cx, t, len); ctext_more(&cx); ctext_next(&cx))
 *		if (cx.kind == CTEXT_CODE && !cx.directive && t[cx.pos] == '{')
 *			depth++;
 */
struct ctext {
	const char *t;
	size_t len;
	size_t pos;          /* the current byte */
	size_t end;          /* just past the current token: pos + 1 for code, ctext_skip() else */
	enum ctext_kind kind; /* what the bytes [pos, end) are */
	bool line_start;     /* pos opens its line (blanks and comments before it only) */
	bool directive;      /* pos is on a directive line */
};

/* Puts CX on the first byte of T (LEN bytes). */
void ctext_init(struct ctext *cx, const char *t, size_t len);
/* True while CX is on a byte of its text. */
bool ctext_more(const struct ctext *cx);
/* Moves CX past its current token (a code byte, a comment, a literal) to the next. */
void ctext_next(struct ctext *cx);

#endif
