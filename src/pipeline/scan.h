/*
 * The scan pipeline for one file: prefilter -> parse -> analyse -> rules ->
 * plan proof (verify.h). scan_files() runs it over many files in parallel
 * with deterministic output; scan_with_tree() runs it again with the
 * tree's index.
 */
#ifndef PREEMPTIFY_SCAN_H
#define PREEMPTIFY_SCAN_H

#include "rules/scan_result.h"

/*
 * Scans one file already in memory. PATH is used for messages only.
 * Appends to OUT (unsorted). Returns 0, or -1 with the error slot set when
 * the file could not be analysed at all (the failure is also appended to
 * OUT as a diagnostic).
 */
int scan_buffer(const char *path, const char *src, size_t len,
		const struct scan_options *opts, struct scan_result *out);

/* Reads PATH and scans it. Same contract as scan_buffer(). */
int scan_file(const char *path, const struct scan_options *opts, struct scan_result *out);

/*
 * Scans every file of PATHS (already walked) with opts->jobs threads and
 * sorts the result. Returns the number of files that failed (I/O).
 */
int scan_files(char *const *paths, size_t n, const struct scan_options *opts,
	       struct scan_result *out);

/*
 * Builds the tree index (analysis/tree.h) over the N files of INDEX for
 * the functions OUT->want names, then scans again, with it and with the
 * header macros OUT->macros, the files of SCANNED (the files OUT came
 * from) whose verdicts they can change; their findings and diagnostics in
 * OUT are replaced, and the evidence of the others names what keeps their
 * function preemptible. OUT->tree keeps the index. IDS (may be NULL): N
 * entries aligned with INDEX, the identifiers already hashed, taken over.
 */
void scan_with_tree(char *const *index, size_t n, char *const *scanned, size_t nscanned,
		    const struct scan_options *opts, struct scan_result *out, struct tree_ids *ids);

/*
 * True if SRC contains a word of rules_prefilter_words() (the registry's
 * words columns) or a rule's own prefilter wants it (rules_prefilter()),
 * so may hold a site without the tree's macros, arrays or contexts.
 */
bool scan_prefilter(const char *src, size_t len);


#endif
