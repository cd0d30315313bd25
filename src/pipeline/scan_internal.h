/*
 * What scan.c (the per-file pipeline and the parallel driver) shares with
 * scan_tree.c (the second pass with the tree's index); not for other modules.
 */
#ifndef PREEMPTIFY_SCAN_INTERNAL_H
#define PREEMPTIFY_SCAN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "util/util.h"

/* qsort() order of struct diagnostic: by file, then line (scan_result.diagnostics). */
int scan_diag_cmp(const void *a, const void *b);

/* Appends to OUT the identifiers of TEXT that a `[` follows (x in x[...]): the arrays it may index (scan_tree_words.c). */
void scan_subscripted_names(const char *text, size_t len, struct strvec *out);

/*
 * May TEXT define one of the arrays NAMES (sorted by strcmp) over NR_CPUS?
 * `name[NR_CPUS` names it; an NR_CPUS in a directive or a bracketed
 * expression makes any file a candidate; one outside brackets defines nothing.
 */
bool scan_defines_named_array(const char *text, size_t len, const struct strvec *names);

#endif
