/* Textdiff: a unified diff of two texts, as `git apply` / `patch -p1` take it. */
#ifndef PREEMPTIFY_TEXTDIFF_H
#define PREEMPTIFY_TEXTDIFF_H

#include <stdbool.h>
#include "util/util.h"

struct textdiff_options {
	int context;   /* context lines, default 3 */
	bool color;    /* ANSI colours for headers, hunks, -/+ lines */
};
#define TEXTDIFF_OPTIONS_INIT {3, false}

/*
 * Appends to OUT the diff of OLD -> NEW for PATH, with headers
 * "diff --git a/P b/P", "--- a/P", "+++ b/P", where P is PATH made
 * relative to the current directory when it lies below it (a leading "./"
 * dropped). Nothing is appended when the texts are equal. Returns 0, or -1
 * with the error slot set.
 */
int textdiff_unified(struct buf *out, const char *path, const char *old_text, size_t old_len,
		     const char *new_text, size_t new_len, const struct textdiff_options *opts);

/* Counts changed lines, for --stat. */
int textdiff_count(const char *old_text, size_t old_len, const char *new_text, size_t new_len,
		   size_t *out_added, size_t *out_removed);

/* A changed region, 1-based lines; a pure insertion has old_lines == 0 and
 * goes after old line old_start (git's convention). */
struct textdiff_hunk {
	unsigned old_start, old_lines, new_start, new_lines;
};
typedef VEC(struct textdiff_hunk) textdiff_hunk_vec;

/* The hunks of OLD -> NEW without context, in order. 0 or -1 (error slot). */
int textdiff_hunks(const char *old_text, size_t old_len, const char *new_text, size_t new_len,
		   textdiff_hunk_vec *out);

/*
 * libgit2, which computes the diffs, loads the system's CA certificates
 * each time it starts (~3 ms; a diff between a stop and a start pays it
 * again, and a whole-tree rewrite diffs thousands of times). A program
 * that diffs many texts holds it started from textdiff_begin() to
 * textdiff_end(); the calls nest, and the diffs work without them.
 */
void textdiff_begin(void);
void textdiff_end(void);

/* PATH relative to the cwd when below it, else PATH; malloc'ed. */
char *textdiff_display_path(const char *path);

#endif
