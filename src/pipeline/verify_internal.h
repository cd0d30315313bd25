/*
 * What verify.c (the re-analysis and the plan's rounds) uses of
 * verify_edits.c (the edits as text); not for other modules.
 */
#ifndef PREEMPTIFY_VERIFY_INTERNAL_H
#define PREEMPTIFY_VERIFY_INTERNAL_H

#include "parse/line_table.h"
#include "rules/finding.h"

struct scan_options;

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

/* ---- per-function facts of one text (verify_facts.c) ---- */

/* Depth of nested verification: 0 the user's scan, 1 the text a plan makes, 2 plain scans. */
enum { DEPTH_PLAN = 0, DEPTH_SECOND = 1, DEPTH_PLAIN = 2 };

struct span {
	size_t start, end;
};
typedef VEC(struct span) span_vec;

struct fn_fact {
	char *name;      /* function, or NULL for file scope */
	size_t start, end;
	unsigned errors; /* ERROR and MISSING nodes */
	unsigned error_line;
	unsigned fixable;
	bool kr;           /* K&R parameter declarations (`f(a) int a; {`) */
	unsigned not_c;    /* first line of text spatch cannot parse either, or 0 */
	struct strvec bad; /* P006 and P007 findings, as "message [Pnnn]", numbers folded */
};

/* The facts of a text's functions in file order, with an index by name (fact_for()). */
typedef struct {
	struct fn_fact *items;
	size_t len, cap;
	size_t *index; /* open addressing: 1 + the entry's position, 0 empty */
	size_t index_cap;
} fact_vec;
#define FACT_VEC_INIT {NULL, 0, 0, NULL, 0}

/* Do A and B name the same function (NULL: file scope)? */
bool fn_name_eq(const char *a, const char *b);

/* The facts of function NAME (NULL: file scope) in V, added if new. */
struct fn_fact *fact_for(fact_vec *v, const char *name);

/* Parse errors and definition spans per function of TEXT into OUT; the error spans in *ERRS if given. */
void parse_facts(const char *path, const char *text, size_t len, fact_vec *out, span_vec *errs);

/* Adds the P006/P007 findings of FS[0..n) to the facts, and (COUNT_FIXABLE) the fixable ones of the user's rules. */
void add_findings(const struct finding *fs, size_t n, const struct scan_options *opts, bool count_fixable,
		  fact_vec *out);

/* Scans TEXT at verification DEPTH, with P006 and P007 on, into OUT. */
void scan_facts(const char *path, const char *text, size_t len, const struct scan_options *opts, unsigned depth,
		bool count_fixable, fact_vec *out);

void facts_release(fact_vec *v);

#endif
