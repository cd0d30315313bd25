/*
 * Baselines: the findings a tree had when it was recorded, so that later
 * runs report (and fix) only new ones. A finding is recorded by where it
 * is, not by its line number: its file (relative to the baseline file's
 * directory when it lies under it, else as given), its function, its rule
 * and the text of its line with whitespace collapsed. The format is in
 * docs/baseline.md.
 */
#ifndef PREEMPTIFY_BASELINE_H
#define PREEMPTIFY_BASELINE_H

#include "pipeline/scan.h"

struct baseline;

/*
 * Reads the baseline file PATH into *OUT (free with baseline_free()).
 * Returns 0, or -1 with the error slot set to "PATH:LINE: what is wrong"
 * (or "PATH: reason" when it cannot be read).
 */
int baseline_load(struct baseline **out, const char *path);

/*
 * Writes the flagged findings of R (not protected sites) to PATH, one a
 * line, sorted. *OUT_N (may be NULL) gets how many. 0, or -1 with the
 * error slot set.
 */
int baseline_write(const char *path, const struct scan_result *r, size_t *out_n);

/*
 * Drops from R the flagged findings B records (each recorded line drops
 * at most one finding). Returns how many were dropped.
 */
size_t baseline_filter(struct baseline *b, struct scan_result *r);

void baseline_free(struct baseline *b);

/* The first line of every baseline file. */
#define BASELINE_HEADER "# preemptify baseline 1"

#endif
