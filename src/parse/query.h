/*
 * Tree-sitter queries from the grammars directory, with the predicates the C
 * runtime leaves to its host: #eq?, #not-eq?, #any-of?, #match? (POSIX ERE)
 * and named host predicates (e.g. #resched-macro?) answered by a callback.
 */
#ifndef PREEMPTIFY_QUERY_H
#define PREEMPTIFY_QUERY_H

#include <tree_sitter/api.h>
#include "util/util.h"

struct query;

/*
 * The compiled query for the embedded file NAME (e.g. "sites.scm").
 * Compiled once per process and shared by all threads; never freed.
 * Returns NULL with the error slot set when the file is missing or does
 * not compile (the message names the file, the offset and the error).
 */
const struct query *query_get(const char *name);

/*
 * query_get(NAME) without its patterns that test a host predicate of OFF
 * (NULL-terminated, e.g. "cpu-macro?"): for a file in which the host
 * knows they cannot hold, the query cursor matches fewer nodes. KEY names
 * the variant (a string literal, one per OFF); cached like query_get().
 */
const struct query *query_get_without(const char *name, const char *key, const char *const *off);

/* Answers a host predicate `(#NAME? @capture)` for the node's text. */
typedef bool (*query_host_pred)(const char *name, TSNode node, void *ctx);

struct query_match {
	const struct query *q;
	const TSQueryMatch *m;
};

/* Index of M's first capture whose name starts with "site.", and that name. */
const char *query_site(const struct query_match *m, TSNode *out);

/*
 * Runs Q over ROOT (TEXT is the source the tree was parsed from) and calls
 * FN for every match whose predicates hold.
 */
void query_run(const struct query *q, TSNode root, const char *text, query_host_pred host, void *host_ctx,
	       void (*fn)(const struct query_match *m, void *ctx), void *ctx);

#endif
