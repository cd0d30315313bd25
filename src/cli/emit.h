/* Emit: findings as compiler-style text, JSON or SARIF 2.1.0. */
#ifndef PREEMPTIFY_EMIT_H
#define PREEMPTIFY_EMIT_H

#include <stdio.h>
#include "analysis/scan.h"

enum output_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_SARIF };

/* Parses "text", "json", "sarif"; -1 otherwise. */
int output_format_parse(const char *s);

/*
 * Writes R to OUT. With VERBOSE, protected sites are included (text: as
 * "note: protected: ..."; JSON: "protected": true; SARIF: kind "pass").
 */
void emit_result(FILE *out, enum output_format fmt, const struct scan_result *r, bool verbose);

/* The one-line summary for stderr: "3 findings (P003: 2, P004: 1) in 12 files". */
void emit_summary(FILE *out, const struct scan_result *r);

#endif
