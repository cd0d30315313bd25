/*
 * Control-flow graph of one function, built from its tree-sitter syntax
 * tree: blocks, if/else, switch/case with fall-through, loops with
 * break/continue, goto and labels, return, and #if/#ifdef arms inside the
 * body (both arms possible; `#if 0` arms are dead).
 */
#ifndef PREEMPTIFY_CFG_H
#define PREEMPTIFY_CFG_H

#include <tree_sitter/api.h>
#include "parse/ts.h" /* the node helpers every CFG user needs */
#include "util/util.h"

enum cfg_kind {
	CFG_ENTRY,
	CFG_EXIT,
	CFG_JOIN,   /* no code: a merge point or label */
	CFG_STMT,   /* evaluates `ast` (an expression statement, declaration, ...) */
	CFG_COND,   /* evaluates `ast`, then branches: edge label true / false */
	CFG_RETURN, /* evaluates `ast` (the return statement), then exits */
};

enum cfg_edge_label { EDGE_ALWAYS, EDGE_TRUE, EDGE_FALSE };

struct cfg_edge {
	uint32_t to;
	enum cfg_edge_label label;
};

struct cfg_node {
	enum cfg_kind kind;
	TSNode ast;  /* the code evaluated here (null for ENTRY/EXIT/JOIN) */
	VEC(struct cfg_edge) succ;
};

/* The join that enters one arm of an #if/#ifdef inside the body (TAKEN: its condition holds). */
struct cfg_arm {
	uint32_t node;
	TSNode directive; /* the preproc_if, preproc_ifdef or preproc_elif */
	bool taken;
};

struct cfg {
	VEC(struct cfg_node) nodes; /* [0] = ENTRY, [1] = EXIT */
	VEC(struct cfg_arm) arms;
	/* Nodes with code, sorted by start byte, for lookups by position. */
	VEC(uint32_t) by_pos;
	bool truncated; /* nesting deeper than the builder handles */
};

#define CFG_ENTRY_ID 0u
#define CFG_EXIT_ID 1u

/*
 * Builds the CFG of a function body (a compound_statement). SRC is the text
 * the tree was parsed from (for `#if 0` and constant conditions).
 */
void cfg_build(struct cfg *out, TSNode body, const char *src);
void cfg_release(struct cfg *g);

/* The code node whose ast contains OFFSET, or UINT32_MAX. */
uint32_t cfg_node_at(const struct cfg *g, uint32_t offset);

/* Text of the graph for tests: one line per node, "id kind line -> succ..." */
void cfg_dump(const struct cfg *g, const char *src, struct buf *out);

#endif
