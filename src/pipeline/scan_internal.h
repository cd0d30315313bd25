/*
 * What scan.c (the per-file pipeline and the parallel driver) shares with
 * scan_tree.c (the second pass with the tree's index); not for other modules.
 */
#ifndef PREEMPTIFY_SCAN_INTERNAL_H
#define PREEMPTIFY_SCAN_INTERNAL_H

/* qsort() order of struct diagnostic: by file, then line (scan_result.diagnostics). */
int scan_diag_cmp(const void *a, const void *b);

#endif
