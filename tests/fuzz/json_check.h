/* A strict JSON checker for the fuzz target: syntax, UTF-8, escapes. */
#ifndef PREEMPTIFY_JSON_CHECK_H
#define PREEMPTIFY_JSON_CHECK_H

#include <stdbool.h>
#include <stddef.h>

/* True if TEXT (LEN bytes) is one JSON value (RFC 8259), in valid UTF-8, with only whitespace around it. */
bool json_check(const char *text, size_t len);

#endif
