/*
 * explain for people (cmd_explain.c calls these): the reasoning wrapped at
 * the terminal's width with the caller chain one step a line, and the
 * planned fix as a small unified diff of the lines it changes.
 */
#ifndef PREEMPTIFY_EXPLAIN_H
#define PREEMPTIFY_EXPLAIN_H

#include "rules/finding.h"

/* The width to wrap at: $COLUMNS, else the terminal's (at least 40); SIZE_MAX (no wrapping) off a terminal. */
size_t explain_width(void);

/*
 * Prints "  LABEL" then TEXT (the analysis' reasoning) on stdout: each
 * group it opens (" (...)": the reason of a caller, a step of a chain)
 * and each "; " clause on a line of its own, indented by its depth,
 * wrapped at explain_width(); off a terminal, the reasoning's own lines.
 */
void explain_print_reasons(const char *label, const char *text);

/*
 * Prints F's planned fix: its kind, then the lines before and after as a
 * unified diff (one line of context) of SRC (LEN bytes; NULL: the edits as
 * a list instead).
 */
void explain_print_fix(const struct finding *f, const char *src, size_t len);

#endif
