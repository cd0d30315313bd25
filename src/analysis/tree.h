/*
 * The tree index: the contexts that the rest of the tree gives a file's
 * functions.
 *
 * One file's analysis (flow.h) knows that a static function is atomic when
 * every call in the file holds a lock. A function other files can call (not
 * static, or a static inline in a header) gets its context from those
 * files: a handler registered in arch code or through a `struct
 * inet_protocol`, a helper called only by a core file with a lock held.
 * tree_context_build() follows exactly the functions whose context decides
 * a finding (struct tree_want, collected by the scan), to a fixed point
 * across files:
 *
 *   1. search every file of the tree for the names followed (one pass over
 *      the bytes per round, identifiers hashed; no parsing), but the files
 *      of other architectures than the definition's (tree_arch_family());
 *   2. parse and analyse only the files that name one, with the contexts
 *      known so far, and classify each use (call with or without preemption
 *      off, registration, address taken, declaration, EXPORT_SYMBOL);
 *   3. a name is atomic when every use is a call with preemption off or a
 *      registration in an atomic context, and there is at least one; a call
 *      with preemption on from a function whose own context comes from its
 *      callers adds that function to the names followed (up to
 *      TREE_MAX_DEPTH levels); anything else (address taken, a use in a
 *      macro, no caller, a cycle) leaves it preemptible: the safe side;
 *   4. a name is bound to its CPU (preemptible, but its CPU number stable
 *      and its per-CPU data unshared) when, of those calls, at least one
 *      comes from bring-up or boot code (api_bound_entry(), or a bound
 *      function) with no sleep on the way, the rest with preemption off,
 *      and its definition does not sleep (read whole once it is a
 *      candidate).
 *
 * The fixed point is pessimistic: names only go from open to atomic, and a
 * name left open when nothing changes is preemptible. Callers outside the
 * files given are unknown (a module's own callers of an exported function
 * included); the tool says so.
 */
#ifndef PREEMPTIFY_TREE_H
#define PREEMPTIFY_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/kernel_api.h"

#define TREE_MAX_DEPTH 4   /* levels of callers followed beyond the site's function */
#define TREE_MAX_FILES 64  /* a name in more files than this is not followed */
#define TREE_MIN_NAME 4    /* nor a name this short (the identifiers hashed skip them) */

/* A function whose context decides a finding, and the file defining it. */
struct tree_want {
	char *name;
	char *file;
};
typedef VEC(struct tree_want) tree_want_vec;

struct tree_context;

/* A file's identifiers, as sorted 32-bit hashes (tree_ids_of()). */
struct tree_ids {
	uint32_t *ids;  /* owned; NULL: not computed */
	size_t n;
};

/* The identifiers of TEXT (LEN bytes), for tree_context_build(); thread-safe. */
void tree_ids_of(const char *text, size_t len, struct tree_ids *out);

/* Might IDS contain the identifier NAME? (False for names shorter than TREE_MIN_NAME.) */
bool tree_ids_has(const struct tree_ids *ids, const char *name);

struct tree_stats {
	size_t names;          /* functions followed */
	size_t atomic;         /* of them, found atomic through the tree */
	size_t files_searched; /* files whose bytes were searched (each round) */
	size_t bytes_searched;
	size_t files_analysed; /* parses (a file analysed again after a change counts again);
	                          files holding only declarations are read, not parsed */
	unsigned rounds;
	double seconds;
};

/*
 * Builds the index over the N FILES of the tree for the names WANT
 * asks about, with JOBS threads (<= 0: online CPUs). IDS, when not NULL,
 * holds N entries aligned with FILES: the identifiers the scan already
 * hashed (tree_ids_of()), taken over (set to NULL); the others are read.
 * *OUT is set (free it with tree_context_free()); the build itself does not
 * fail: a file that cannot be read leaves the names it might call
 * preemptible. MEMO (may be NULL): each file's analysis in a round is
 * read from there when an earlier run made it with the same inputs
 * (tree_memo.c), and kept there when not; the index is the same.
 */
void tree_context_build(struct tree_context **out, char *const *files, size_t n,
			const tree_want_vec *want, struct tree_ids *ids, int jobs, const struct memo *memo);

/*
 * The context the tree gives function NAME (LEN bytes) defined in PATH
 * (its architecture picks among same-named functions: arch/alpha's and
 * arch/mips's handle_irq() are two). True when NAME was followed; then
 * *CTX is its context (CTX_PROCESS when not atomic) and *REASON why
 * (atomic: the callers or registration, across files; preemptible: the
 * use that keeps it so). Both point into T. False too for a function
 * bound to its CPU (tree_context_bound()): preemptible, for every rule
 * but the ones on CPU numbers and per-CPU data.
 */
bool tree_context_lookup(const struct tree_context *t, const char *name, size_t len, const char *path,
			 enum fn_context *ctx, const char **reason);

/* True if NAME defined in PATH ended atomic (the files defining it need scanning again). */
bool tree_context_atomic(const struct tree_context *t, const char *name, const char *path);

/*
 * True if TEXT (LEN bytes, the file PATH) names a function the tree found
 * atomic for PATH's architecture (T may be NULL): the prefilter parses such
 * a file, whose functions may be atomic though it holds no word of one.
 */
bool tree_context_names_atomic(const struct tree_context *t, const char *path, const char *text, size_t len);

/*
 * Why the function NAME of PATH runs on a task bound to its CPU (every call
 * in the tree comes from bring-up or boot code, api_bound_entry(), or with
 * preemption off, and it does not sleep), or NULL. Its CPU number is
 * stable and its per-CPU data unshared, though preemption is on.
 */
const char *tree_context_bound(const struct tree_context *t, const char *name, const char *path);

/*
 * True if no file of the tree but PATH (of its architecture family) accesses
 * member FIELD: a static function PATH stores only there is called only
 * through PATH's own `->FIELD(...)` calls. Decided while the index is built
 * (the files' identifiers say which to read); false for one asked after.
 */
bool tree_field_private(const struct tree_context *t, const char *path, const char *field);

/*
 * Appends to OUT all that the lookups above can answer for any file (the
 * names followed with their states, contexts and reasons; the struct
 * fields' verdicts): two indexes with the same digest give every file's
 * scan the same answers. T may be NULL.
 */
struct buf;
void tree_context_digest(const struct tree_context *t, struct buf *out);

const struct tree_stats *tree_context_stats(const struct tree_context *t);

void tree_context_free(struct tree_context *t);

void tree_want_release(tree_want_vec *w);

#endif
