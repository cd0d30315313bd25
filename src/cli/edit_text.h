/*
 * A finding's planned edits as text: replacements of the original bytes
 * (SARIF's fixes) and the text they make (explain's before/after).
 */
#ifndef PREEMPTIFY_EDIT_TEXT_H
#define PREEMPTIFY_EDIT_TEXT_H

#include "rules/finding.h"

struct replacement {
	struct srcpos start, end; /* deleted [start, end); start == end: an insertion */
	char *text;               /* inserted, owned */
};
typedef VEC(struct replacement) replacement_vec;

/*
 * Edit E as replacements of the original text, appended to OUT: a
 * replacement as it is; an insertion as an empty region at the anchor's
 * start (before) or end (after), the statement on a line of its own
 * indented like the anchor; when the anchor is the lone body of an
 * if/else/loop, anchor and statement in braces instead, on its lines.
 */
void edit_replacements(const struct edit *e, replacement_vec *out);

/* Sorts V by start offset (ties keep their order). */
void replacements_sort(replacement_vec *v);

/* Frees the texts of V and V itself. */
void replacements_release(replacement_vec *v);

/*
 * SRC (LEN bytes) with F's edits made, as the rewrite would make them up to
 * spacing; owned, its length in *OUT_LEN. NULL when the edits overlap or
 * lie outside SRC.
 */
char *edit_text_apply(const struct finding *f, const char *src, size_t len, size_t *out_len);

#endif
