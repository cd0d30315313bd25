/*
 * Verify: one planner for explain, JSON, diff, apply and commit. A fix is
 * `fixable` only when the text it would produce has been analysed again
 * and found right; everything else is refused at plan time, with the
 * construct and its line, and so never reaches spatch.
 *
 * For the fixable findings of one file, verify_plan():
 *   1. refuses edits spatch cannot make where they are (inside a #define,
 *      across a preprocessor conditional, on an anchor it cannot match,
 *      overlapping another fix) and fixes in functions the C grammar could
 *      not parse cleanly;
 *   2. applies the remaining edits to the text (no spatch: the edits are
 *      exact) and re-analyses it with verify_reanalysis();
 *   3. refuses the findings of every function the re-analysis faults, and
 *      repeats until the rest passes.
 * The rewrite runs verify_reanalysis() again on what spatch produced
 * (fix/validate.h), so the two can never disagree about the same text.
 */
#ifndef PREEMPTIFY_VERIFY_H
#define PREEMPTIFY_VERIFY_H

#include "pipeline/scan.h"

/*
 * Proves or refuses the fixable findings OUT->findings[FIRST..] of PATH
 * (TEXT, LEN bytes), scanned with OPTS. Refused findings become report-only
 * (fix none, edits dropped) with the reason as their fix note.
 */
void verify_plan(const char *path, const char *text, size_t len, const struct scan_options *opts,
		 struct scan_result *out, size_t first);

/*
 * The re-analysis check of a rewrite of PATH from OLD to NEW made with the
 * edits of APPLIED[0..n): per function, no new parse error, no new P006 or
 * P007 finding (line numbers aside), and, at the top level, nothing left to
 * fix (a second run would change nothing). For each APPLIED[i] that fails,
 * WHY[i] gets the reason (owned by the caller; entries already set are
 * kept). Returns the number of findings refused.
 */
size_t verify_reanalysis(const char *path, const char *old_text, size_t old_len,
			 const char *new_text, size_t new_len, struct finding *const *applied,
			 size_t n, const struct scan_options *opts, char **why);

/*
 * Why the edits of F cannot be made in TEXT (LEN bytes): inside a #define,
 * split by a preprocessor conditional, an insertion spatch cannot anchor.
 * NULL when they can; the reason is owned by the caller.
 */
char *verify_edits(const struct finding *f, const char *text, size_t len);

/*
 * FD, a slot x[cpu] converted to per_cpu(x, cpu), and R, the P003 of the
 * read that gave its CPU number: true, with FD's note saying so, when R is
 * that read (same function and line); the caller knows R was not fixed.
 */
bool verify_note_stale_slot(struct finding *fd, const struct finding *r);

/*
 * Refuses the APPLIED findings of function FN (all of them when none is in
 * FN) with REASON (consumed), where WHY is not yet set. Returns how many.
 */
size_t verify_refuse_fn(const char *fn, char *reason, struct finding *const *applied, size_t n,
			char **why);

/*
 * The key of validate_rewrite()'s answer for PATH's OLD -> NEW with the
 * edits of APPLIED[0..n), scanned with O (fix/validate.h): the scan
 * context of O (options, what the tree says of itself, the tree's
 * verdicts), the path, both texts' hashes and every applied finding whole.
 */
void verify_memo_key(const struct scan_options *o, const char *path, const char *old_text, size_t old_len,
		     const char *new_text, size_t new_len, struct finding *const *applied, size_t n,
		     struct buf *key);

#endif
