/*
 * Translation validation: a rewrite is kept only when it is proven to be
 * exactly the planned change, and the planned change is proven safe by the
 * same analysis that planned it. Coccinelle's output is checked, never
 * trusted (STYLE.md 14).
 *
 * For the rewrite of one file from OLD to NEW with the edits of the
 * APPLIED findings, four checks run:
 *   1. text:     NEW is complete text (no NUL byte, not cut short);
 *   2. tokens:   NEW equals OLD with the planned edits applied, token by
 *                token (whitespace aside); every comment is kept, in order,
 *                on its own line or after the same token as before;
 *   3. parse:    no function gains a parse error (ERROR/MISSING node);
 *   4. analysis: re-scanning NEW, no function gains an unbalanced
 *                acquisition (P007) or a call that may sleep with
 *                preemption off (P006), and no function has more fixable
 *                sites than OLD had left unfixed (the rewrite is a fixpoint:
 *                a second run plans nothing new, so apply is idempotent).
 * A failure is pinned on the function where it shows; the findings of that
 * function are refused with the reason, the others are kept.
 */
#ifndef PREEMPTIFY_VALIDATE_H
#define PREEMPTIFY_VALIDATE_H

#include "pipeline/scan.h"

/*
 * Validates the rewrite of PATH (OLD -> NEW) made with the edits of
 * APPLIED[0..n). OPTS are the scan options the findings came from (the
 * re-analysis uses them on both texts). For each APPLIED[i] that must
 * not be kept, WHY[i] is set to the reason (owned by the caller; entries
 * already set are left alone). Returns the number of findings refused.
 */
size_t validate_rewrite(const char *path, const char *old_text, size_t old_len,
			const char *new_text, size_t new_len, struct finding *const *applied,
			size_t n, const struct scan_options *opts, char **why);

/*
 * validate_rewrite() through the memo M (NULL: none): the answer kept for
 * the same inputs (pipeline/verify.h's verify_memo_key()) is read back,
 * else made and kept. Only when no WHY[i] is set on entry; else as
 * validate_rewrite().
 */
size_t validate_rewrite_memo(const struct memo *m, const char *path, const char *old_text, size_t old_len,
			     const char *new_text, size_t new_len, struct finding *const *applied,
			     size_t n, const struct scan_options *opts, char **why);

/*
 * The token check alone (check 2): 0 when NEW is OLD with EDITS applied,
 * else the byte offset in OLD nearest the first difference, plus 1, with
 * *WHAT set to a sentence (owned by the caller). Exposed for tests.
 */
size_t validate_tokens(const char *old_text, size_t old_len, const char *new_text,
		       size_t new_len, const struct edit *const *edits, size_t n_edits,
		       char **what);

#endif
