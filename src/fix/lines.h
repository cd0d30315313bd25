/*
 * Lines: positions carried through the line diff (textdiff hunks) of a
 * change to a text (its line table: parse/line_table.h), and the blanks
 * and directives around the lines spatch adds. The rewrite uses these to keep
 * its sites in step with what each spatch run changed.
 */
#ifndef PREEMPTIFY_LINES_H
#define PREEMPTIFY_LINES_H

#include "fix/textdiff.h"
#include "parse/line_table.h"

/*
 * Carries *LINE and *COL of OLDL through HUNKS (OLDL to NEWL). False when the
 * position lies inside what changed, so it has no counterpart.
 */
bool lines_map_pos(const textdiff_hunk_vec *hunks, const struct lines *oldl,
		   const struct lines *newl, unsigned *line, unsigned *col);

/* End lines only need to be close: L moved, or the end of the hunk it falls in. */
unsigned lines_map_line(const textdiff_hunk_vec *hunks, unsigned L);

/* Does hunk H's new side (lines of NEWL) contain NEEDLE, whitespace ignored? */
bool lines_hunk_has(const struct textdiff_hunk *h, const struct lines *newl, const char *needle);

/*
 * Indents the lines NEW adds to OLD as the code around them is: an added
 * line follows the statement beside it in its block (the line it follows,
 * or, after an opening brace, the line after it). Among space-indented
 * statements it is indented with spaces, at the width spatch gave it;
 * else as the kernel does, at that statement's indentation when spatch's
 * has spaces in it (else its own), written as a tab per 8 columns and
 * spaces for the rest (never a leading space alone: one tab). No added
 * line ends in blanks; a changed line keeps the old line's indentation
 * and spacing. Only blanks change, never a token. Returns the new text
 * (owned) and its length in *OUT_LEN.
 */
char *lines_indent_added(const char *old_text, size_t old_len, const char *new_text,
			 size_t new_len, size_t *out_len);

/*
 * Puts back trailing comments spatch moved onto a line it added: where NEW
 * has the line `prev;` followed by an added `put_cpu();` that ends with a
 * comment C, and OLD has `prev;` ending with C, the comment returns to the
 * end of `prev;` with its old spacing. Only blanks and the place of the
 * comment change. Returns the new text (owned).
 */
char *lines_keep_trailing_comments(const char *old_text, size_t old_len, const char *new_text,
				   size_t new_len, size_t *out_len);

/*
 * Moves an opening brace spatch put on a line of its own, after a line
 * that ends with a `//` comment (`if (x) // why` then `{`), before that
 * comment: `if (x) { // why`, as a kernel hand writes it (checkpatch:
 * "that open brace { should be on the previous line"). Only a brace NEW
 * adds after an `if`/`for`/`while` header or `else` moves. Returns the new
 * text (owned).
 */
char *lines_brace_before_comment(const char *old_text, size_t old_len, const char *new_text,
				 size_t new_len, size_t *out_len);

/*
 * Drops the directives of a conditional (`#if`/`#ifdef`/`#ifndef` ...
 * `#elif`/`#else` ... `#endif`) whose every line of code NEW removed from
 * OLD, its directives left as they were: spatch removes the fields of a
 * struct that move to its per-CPU struct, not the `#if` around them. Only
 * a conditional that held code and now holds none (blank lines aside)
 * goes, inner ones first. Returns the new text (owned).
 */
char *lines_drop_emptied_conditionals(const char *old_text, size_t old_len, const char *new_text,
				      size_t new_len, size_t *out_len);

#endif
