/*
 * What scan.c (the per-file pipeline and the parallel driver) shares with
 * scan_tree.c (the second pass with the tree's index); not for other modules.
 */
#ifndef PREEMPTIFY_SCAN_INTERNAL_H
#define PREEMPTIFY_SCAN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* qsort() order of struct diagnostic: by file, then line (scan_result.diagnostics). */
int scan_diag_cmp(const void *a, const void *b);

/*
 * Appends to OUT the identifiers of TEXT that a `[` follows (x in x[...]), the arrays
 * it may index, and those EXPORT_SYMBOL() names (scan_tree_words.c).
 */
void scan_subscripted_names(const char *text, size_t len, struct strvec *out);

/*
 * May TEXT define one of the arrays NAMES (sorted by strcmp) over NR_CPUS?
 * `name[NR_CPUS` names it; an NR_CPUS in a directive or a bracketed
 * expression makes any file a candidate; one outside brackets defines nothing.
 */
bool scan_defines_named_array(const char *text, size_t len, const struct strvec *names);

/* ---- scan_memo.c: each file's result kept by its key (scan_options.memo) ---- */

struct scan_options;
struct scan_result;
struct memo;

/* The hash of all a file's scan with O reads besides its path and bytes, into OUT. */
void scan_memo_context(const struct scan_options *o, uint64_t out[2]);

/*
 * The stored result of PATH's TEXT (LEN bytes) in the context CTX into OUT
 * (empty), with the scan's return code in *RC: true; false when there is
 * none, or it does not read back whole (OUT left empty).
 */
bool scan_memo_get(const struct memo *m, const uint64_t ctx[2], const char *path, const char *text,
		   size_t len, struct scan_result *out, int *rc);

/* Stores R, the result of scanning PATH's TEXT in the context CTX, which returned RC. */
void scan_memo_put(const struct memo *m, const uint64_t ctx[2], const char *path, const char *text,
		   size_t len, const struct scan_result *r, int rc);

#endif
