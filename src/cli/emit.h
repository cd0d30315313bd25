/* Emit: findings as compiler-style text, JSON or SARIF 2.1.0. */
#ifndef PREEMPTIFY_EMIT_H
#define PREEMPTIFY_EMIT_H

#include <stdio.h>
#include "pipeline/scan.h"

enum output_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_SARIF };

/* Parses "text", "json", "sarif"; -1 otherwise. */
int output_format_parse(const char *s);

/*
 * Writes R to OUT. With VERBOSE, protected sites are included (text: as
 * "note: protected: ..."; JSON: "protected": true; SARIF: kind "pass").
 */
void emit_result(FILE *out, enum output_format fmt, const struct scan_result *r, bool verbose);

/*
 * The text format of emit_result(): findings and diagnostics (each sorted)
 * merged so a file's lines stay together. With COLOR, painted as gcc
 * paints its diagnostics: the location bold, the level and the [rule] tag
 * red (error), magenta (warning) or cyan (note).
 */
void emit_text(FILE *out, const struct scan_result *r, bool verbose, bool color);

/*
 * Where a SARIF run happened: what %SRCROOT% stands for and the version
 * control state (run.originalUriBaseIds, run.versionControlProvenance).
 * The CLI fills it (emit reads neither the file system nor git).
 */
struct sarif_run {
	const char *root;     /* absolute, resolved, with a trailing '/'; NULL: no base */
	const char *cwd;      /* absolute current directory: relative paths are read from it */
	bool in_git;          /* ROOT is the working tree of a git repository */
	const char *repo_uri; /* the origin remote as a URI, or NULL (then ROOT's file:// URI) */
	const char *revision; /* HEAD's commit id, or NULL (unborn) */
	const char *branch;   /* HEAD's branch, or NULL (detached) */
};

/*
 * Writes R to OUT as SARIF 2.1.0 (docs/json-schema.md). With RUN, paths
 * under RUN->root are URIs relative to %SRCROOT%, others file:// URIs;
 * RUN may be NULL (emit_result does that): relative paths are then
 * relative to an undefined %SRCROOT%.
 */
void emit_sarif(FILE *out, const struct scan_result *r, bool verbose, const struct sarif_run *run);

/* The one-line summary for stderr: "3 findings (P003: 2, P004: 1) in 12 files". */
void emit_summary(FILE *out, const struct scan_result *r);

#endif
