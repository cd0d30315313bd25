/* Line endings: what spatch adds follows the file's own (CRLF files stay CRLF). */
#ifndef PREEMPTIFY_EOL_H
#define PREEMPTIFY_EOL_H

#include <stddef.h>

/*
 * The line ending OLD uses: "\r\n" when most of its line breaks are CRLF,
 * else "\n" (a file with no line break at all: "\n").
 */
const char *eol_of(const char *old, size_t old_len);

/*
 * NEW (a rewrite of OLD) with every bare "\n" turned into OLD's line
 * ending, so lines spatch added or rewrote end as the file's others do.
 * Returns NEW itself, unchanged, for an LF file; else a new string (owned
 * by the caller, NEW is freed), its length in *LEN.
 */
char *eol_follow(const char *old, size_t old_len, char *new_text, size_t *len);

#endif
