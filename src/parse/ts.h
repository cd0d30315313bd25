/*
 * Small helpers over tree-sitter nodes, shared by every stage that reads
 * the syntax tree (CFG, data-flow, contexts, rules, queries).
 */
#ifndef PREEMPTIFY_TS_H
#define PREEMPTIFY_TS_H

#include <stdbool.h>
#include <stddef.h>
#include <tree_sitter/api.h>

/*
 * TEXT[0..LEN) parsed as C (the npm grammar), with a parser made and freed
 * here; NULL when tree-sitter gives up. Free with ts_parent_forget() and
 * ts_tree_delete().
 */
TSTree *ts_parse_c(const char *text, size_t len);

/*
 * ts_parse_c(), stopped when *CANCEL (if not NULL) becomes non-zero. A
 * text parsed lately is not parsed again: its tree is copied from a small
 * memo (the same tree, shared read-only).
 */
TSTree *ts_parse_text(const char *text, size_t len, const size_t *cancel);

/* The null node (ts_node_is_null() is true): "no such node". */
TSNode ts_null(void);

/*
 * N's parent, as ts_parent(). tree-sitter 0.20 finds a parent by
 * walking down from the root and scanning each level's children, so in a
 * file of many functions every call cost a scan of all of them (quadratic
 * time). Here the root's children are indexed once per tree and searched
 * by byte offset; the walk down is then bounded by one top-level
 * definition. ts_parent_forget() must be called before the tree is deleted.
 */
TSNode ts_parent(TSNode n);
void ts_parent_forget(const TSTree *tree);

/* True if N is not null and of node type TYPE. */
bool ts_type_is(TSNode n, const char *type);

/* The child in FIELD; a null node when N is null or has no such child. */
TSNode ts_field(TSNode n, const char *field);

/* True if N's text in SRC is exactly TEXT; false for a null node. */
bool ts_text_is(TSNode n, const char *src, const char *text);

/*
 * The identifier a call calls, as a pointer into SRC (in *OUT) and its
 * length; 0 (and *OUT untouched) if the callee is not a plain name.
 */
size_t ts_call_name(TSNode call, const char *src, const char **out);

/* True if CALL calls the plain name NAME. */
bool ts_call_is(TSNode call, const char *src, const char *name);

/* Strips parentheses (and likely()/unlikely()) around an expression. */
TSNode ts_strip_parens(TSNode n, const char *src);

/* The number of ERROR and MISSING nodes in N's subtree (parse errors). */
unsigned ts_count_errors(TSNode n);

/*
 * Pre-order walk of ROOT's subtree without recursion. VISIT returns true to
 * descend into the node's children.
 */
void ts_walk(TSNode root, bool (*visit)(TSNode n, void *ctx), void *ctx);

/*
 * Finds nodes by byte range, for ranges given in increasing order: the
 * cursor moves forward through the tree, so a pass over a file costs about
 * one walk of the nodes between the ranges, not one walk from the root each.
 */
struct ts_seek {
	TSTreeCursor c;
};
void ts_seek_init(struct ts_seek *k, TSNode root);
/* The deepest node spanning [START, END) (START not before the last call's), or a null node. */
TSNode ts_seek_range(struct ts_seek *k, uint32_t start, uint32_t end);
void ts_seek_release(struct ts_seek *k);

/* True in an `#if 0` (or `#elif 0`) arm of a tree parsed from TEXT. */
bool ts_in_if0_arm(const char *text, TSNode n);

/*
 * True in an arm compiled only without CONFIG_SMP (`#ifndef CONFIG_SMP`,
 * the `#else` of `#ifdef CONFIG_SMP`, `#if !defined(CONFIG_SMP)`): code
 * where the CPU number is always 0.
 */
bool ts_in_up_arm(const char *text, TSNode n);

#endif
