/*
 * What the files of the tree index share (tree.c, tree_uses.c,
 * tree_slice.c, tree_fixpoint.c): the followed names, the files and the
 * uses found in them, and the functions one part asks of another. Not for
 * use outside the index: tree.h is its interface.
 */
#ifndef PREEMPTIFY_TREE_INTERNAL_H
#define PREEMPTIFY_TREE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "analysis/flow.h"
#include "analysis/tree.h"

/* T_BOUND: preemptible, but on a task that never migrates and runs alone on its CPU (api_bound_entry()) */
enum tstate { T_NEW, T_OPEN, T_ATOMIC, T_BOUND, T_FAILED };

struct tname {
	char *name;
	size_t len;
	uint32_t hash;        /* ident_hash() */
	enum tstate state;
	enum fn_context ctx;
	char *reason;         /* atomic: why; failed: why not */
	unsigned depth;
	unsigned fam;         /* tree_arch_family() of the definition: 0, any */
	VEC(uint32_t) files;  /* the files naming it */
	bool sleep_asked;     /* bound candidate: its files parsed in full once more, for its definitions */
	bool waiting;         /* a call with preemption on waits for its caller's roots (decide()) */
	bool member;          /* a struct field called through (`ops->name(...)`), not a function */
};

/* One use of a followed name in one file. */
struct tref {
	uint32_t name;
	enum fn_use_kind kind;
	enum fn_context ctx;  /* USE_REGISTERED */
	bool protected_call;  /* USE_CALL */
	bool self;            /* a call from the function itself */
	bool other;           /* the file defines its own static function of that name */
	bool roots_ok;        /* USE_CALL from a function whose context its callers give */
	bool roots_sleep;     /* ...a function between the call and the roots may sleep */
	bool verbatim;        /* USE_ADDRESS: WHY says it all (a macro, assembly, unread) */
	bool asm_own;         /* USE_ADDRESS in assembly that defines NAME as its own global routine */
	unsigned line;
	char *caller;         /* the enclosing function, or NULL */
	char *via;            /* USE_ADDRESS: what is followed in its stead, or NULL: the macro whose body
			       * names it, `.field` for the struct field it is stored in, or the pointer */
	bool via_pointer;     /* ...VIA is the pointer it is stored in (`p = name;`) */
	char *why;            /* registration reason, or the protection at the call */
	char **roots;         /* the caller's roots (context_roots()) */
	size_t nroots;
};

/* A function a parse of the file found defined there, other files may call. */
struct tdef {
	char *name;
	bool sleeps;
};

struct tfile {
	const char *path;
	VEC(uint32_t) names;  /* followed names the file contains */
	VEC(uint32_t) defines; /* ...of them, the ones it defines (found when parsed) */
	VEC(uint32_t) sleeping; /* ...of those, the ones that may sleep */
	VEC(struct tref) refs;
	VEC(struct tdef) seen; /* the shared definitions its parses since the last whole analysis read */
	size_t from;          /* names[0, from) keep the uses the last analysis classified */
	bool dirty;           /* analyse (again) in the next round: the names from FROM on, or all */
	bool force_parse;     /* ...parsed even if it only declares: it may define a bound candidate */
	bool ids_done;
	bool parsed;          /* analyse_one() parsed it for all its names (else: declarations only) */
	bool parsed_now;      /* ...the last analysis parsed it (for the statistics) */
	bool sliced;          /* ...some of it only in the functions that matter (tree_slice_ranges()) */
	unsigned fam;         /* tree_arch_family() */
	struct tree_ids ids;  /* file_ids(): sorted identifier hashes */
};

/* Whether a struct field's member accesses are all in one file (tree_field_private()). */
struct field_verdict {
	char *path, *field;
	bool private_;
};

struct field_cache {
	pthread_mutex_t mu;
	VEC(struct field_verdict) v;
	bool frozen; /* the files' identifiers are gone: only what was decided stands */
};

struct tree_context {
	struct field_cache *fields; /* mutable behind a const context: analyses run in parallel */
	VEC(struct tname) names;
	uint32_t *table;      /* open addressing: names index + 1 */
	size_t cap;
	struct tfile *files;
	size_t nfiles;
	struct tree_stats stats;
	const struct memo *memo; /* the analyses of earlier runs (tree_memo.c), or NULL */
	uint64_t round[2];       /* tree_memo_round(): this round's state, with a memo */
};

/*
 * A hash of an identifier from its length and its first and last eight
 * bytes: two loads instead of a loop, as every identifier of the tree is
 * hashed. Two names alike in those bytes only cost a parse that finds
 * nothing.
 */
static inline uint32_t ident_hash(const char *s, size_t n)
{
	uint64_t a = 0, b = 0;
	memcpy(&a, s, n < 8 ? n : 8);
	if (n > 8)
		memcpy(&b, s + n - 8, 8);
	uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full) ^ (n * 0x165667b19e3779f9ull);
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return (uint32_t)(h >> 32);
}

/* ---- tree.c: the index ---- */

/* The architecture family of PATH (0: generic code, which meets every family). */
unsigned tree_arch_family(const char *path);
bool tree_families_meet(unsigned a, unsigned b);

/*
 * The followed function NAME (N bytes) of family FAM: its index, or -1. A
 * NAME of the form `.field` is the struct field of that name (struct
 * tname.member): the functions stored in it get the context of the calls
 * through it.
 */
int tree_name_find(const struct tree_context *t, const char *s, size_t n, unsigned fam);

/* Adds NAME of family FAM (unless known; `.field` as for tree_name_find()) to follow; returns its index. */
uint32_t tree_name_add(struct tree_context *t, const char *name, unsigned depth, unsigned fam);

/* Sets X's state, context and REASON (owned, replacing the one before). */
void tree_name_settle(struct tname *x, enum tstate st, enum fn_context ctx, char *reason);

/* Might F contain the identifier of hash H (ident_hash())? */
bool tree_file_has(const struct tfile *f, uint32_t h);

/* Finds the files naming the new names (T_NEW, then open); a name in too many files fails. */
void tree_search_new(struct tree_context *t, int jobs);

/* ---- tree_uses.c: the uses a file holds ---- */

void tree_file_seen_clear(struct tfile *f);
void tree_file_refs_clear(struct tfile *f);

/*
 * Analyses, for each open name, up to K of the dirty files naming it;
 * returns the number of files analysed.
 */
size_t tree_analyse_some(struct tree_context *t, size_t k, int jobs);

/* ---- tree_memo.c: a file's analysis in a round, kept across runs ---- */

/* A struct field's verdict asked while a file was analysed (tree_field_private()). */
struct field_asked {
	char *path, *field;
	bool private_;
};
typedef VEC(struct field_asked) field_log;

/* The verdicts the calling thread asks from now on go to LOG (NULL: nowhere). */
void tree_fields_log(field_log *log);

/* One analyse_one() through the memo: its key (taken before) and what it asked. */
struct memo_call {
	struct buf key;
	field_log asked;
	size_t refs_from; /* the refs this analysis adds start here */
};

/* The hash of all an analysis in this round reads of T besides its file, into T->round. */
void tree_memo_round(struct tree_context *t);

/*
 * Before F is analysed: its key into C (F's bytes, path and state, the
 * round's); true when an earlier run's analysis of that key was applied
 * to F (the struct fields' verdicts it asked are still the same), so it
 * needs none. False: analyse it, then tree_memo_keep().
 */
bool tree_memo_replay(const struct tree_context *t, struct tfile *f, struct memo_call *c);

/* After F was analysed with C's key (its fields' verdicts logged in C->asked): stores the outcome. */
void tree_memo_keep(const struct tree_context *t, const struct tfile *f, struct memo_call *c);

void memo_call_release(struct memo_call *c);

/* ---- tree_slice.c: what part of a file is parsed ---- */

/* Does F's text S name an open name anywhere but in a comment, a string or a declaration? */
bool tree_needs_parse(const struct tree_context *t, const struct tfile *f, const char *s, size_t len);

/*
 * The byte ranges of S worth parsing for F's open names (owned), *N of
 * them; NULL and *N 0 when the whole file is to be parsed.
 */
TSRange *tree_slice_ranges(const struct tree_context *t, const struct tfile *f, const char *s, size_t len,
			   bool callees, uint32_t *n);

/*
 * asm_entry.c: when every mention of NAME in the assembly TEXT (LEN bytes,
 * comments blanked) of file PATH is a call or jump made with interrupts
 * off (the entry turned them off above it, nothing turns them on on the
 * way), why (owned) and the first such line in *LINE; else NULL.
 */
char *asm_irqs_off_call(const char *path, const char *text, size_t len, const char *name, unsigned *line);

/* asm_entry.c: does the assembly TEXT (LEN bytes) define NAME as a global routine (_GLOBAL(NAME), ENTRY(NAME), .globl NAME)? */
bool asm_defines_routine(const char *text, size_t len, const char *name);

/* asm_entry.c: are paths A and B under one architecture's directory (arch/X/ or include/asm-X/)? */
bool asm_same_arch(const char *a, const char *b);

#endif
