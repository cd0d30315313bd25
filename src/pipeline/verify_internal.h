/*
 * What verify.c (the re-analysis and the plan's rounds) uses of
 * verify_edits.c (the edits as text); not for other modules.
 */
#ifndef PREEMPTIFY_VERIFY_INTERNAL_H
#define PREEMPTIFY_VERIFY_INTERNAL_H

#include "parse/line_table.h"
#include "rules/finding.h"

/* Why edit E cannot be made in the text of L (its lines), or NULL; owned by the caller. */
char *verify_edit_refusal(const struct edit *e, const struct lines *l);

/*
 * Applies the edits of the ACTIVE findings PLAN[i] to TEXT; an insertion
 * stays on its anchor's line, so every other line keeps its number. A
 * finding whose edit overlaps another finding's different edit gets WHY.
 * Returns the new text (owned), its length in *OUT_LEN.
 */
char *verify_apply_edits(const char *text, size_t len, struct finding *const *plan, size_t n,
			 const bool *active, char **why, size_t *out_len);

#endif
