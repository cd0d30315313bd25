/*
 * The facts the path-sensitive replay of a function's flow (paths.c) keeps
 * along a path, found once per function (paths_facts.c): conditions on
 * unchanged values, the first test of a counted loop, #if arms, and
 * pointer copies that alias a lock. Internal to src/analysis.
 */
#ifndef PREEMPTIFY_PATHS_INTERNAL_H
#define PREEMPTIFY_PATHS_INTERNAL_H

#include "analysis/flow.h"

#define PATH_MAX_FACTS 64
#define PATH_MAX_ALIASES 16

/* A condition as a small tree: its truth from the facts known on a path. */
enum cond_op { COND_ATOM, COND_NOT, COND_AND, COND_OR };
struct cond_node {
	enum cond_op op;
	int fact;        /* its fact id, or -1 (not kept) */
	int left, right; /* children (indices in facts.conds), -1 none */
};

struct fact {
	char *text;        /* canonical text, blanks removed; owned */
	struct strvec reads; /* the values it reads (identifiers, fields) */
	/*
	 * A comparison of a plain value with an integer constant: the value's
	 * text (owned, or NULL) and the interval where the fact is true.
	 */
	char *range_var;
	long long range_lo, range_hi;
};

/* `p = q;`: while it holds, the keys p->x and q->x are one lock. */
struct alias {
	char *p, *q;                 /* owned */
	VEC(uint32_t) pairs;         /* key ids, two by two: p's key, q's key */
	/*
	 * Releases of p->x where F never takes p->x itself (only q->x), two
	 * by two: the event's index over the function (paths.c's slots), q's key.
	 */
	VEC(uint32_t) rels;
};

struct node_facts {
	int cond;          /* a CFG_COND's condition tree root, or -1 */
	int first_fact;    /* a counted loop's test: its first-test fact when entered from INIT, or -1 */
	uint32_t init;     /* that loop's initializer node */
	VEC(int) arms;     /* #if arm facts holding here: fact id * 2 + value */
	struct strvec writes; /* the values it changes */
	int gen_fact;      /* a fact it sets to a constant (`locked = 1;`), or -1 */
	bool gen_value;
	int alias;         /* the alias it makes (`p = q;`), or -1 */
	/*
	 * `v = trylock(...)`: the key it takes (-1 none) and the facts its
	 * result decides on each outcome, `v` and `v<0` (-1 when no test reads them).
	 */
	int try_key, try_fact, try_neg_fact;
	bool try_zero_success, try_fail_negative;
	/*
	 * A return: RET_NULL when it returns a null constant (`return NULL;`),
	 * else RET_FACT, the fact that is exactly the variable it returns
	 * (`return lp;`, null where the path set `lp = NULL;`), or -1.
	 */
	bool ret_null;
	int ret_fact;
};

struct path_facts {
	VEC(struct fact) facts;
	VEC(struct cond_node) conds;
	VEC(struct alias) aliases;
	struct node_facts *nodes;   /* per CFG node */
	uint64_t *kills;            /* per node: facts whose reads it changes */
	uint32_t *alias_kills;      /* per node: aliases whose names it changes */
	uint64_t init_known, init_val; /* facts true at entry: `defined(X)` of the file's own #define X */
};

void path_facts_find(struct path_facts *pf, const struct fn *f);
void path_facts_release(struct path_facts *pf, size_t nodes);
/*
 * The facts that read nothing but F's parameters and constants and decide
 * a branch straight into a release of KEY (`if (new_state != FL_ERASING)
 * spin_unlock_bh(&l);`): the caller's value chooses whether F releases.
 */
uint64_t path_release_guards(const struct path_facts *pf, const struct fn *f, uint32_t key);
/* Records in FACT the interval of comparison N (`pid > 0`, `n == 3`), if it is one. */
void fact_range_note(struct fact *f, TSNode n, const char *src);
/* Sets the facts over the same value that FACT being V decides (paths_ranges.c). */
void path_ranges_derive(const struct path_facts *pf, int fact, bool v, uint64_t *known, uint64_t *val);
/* Truth of condition C with KNOWN/VAL facts: 1, 0, or -1 when unknown. */
int path_cond_eval(const struct path_facts *pf, int c, uint64_t known, uint64_t val);
/* Records that condition C is V on this path (its facts and its parts'). */
void path_cond_assume(const struct path_facts *pf, int c, bool v, uint64_t *known, uint64_t *val);

#endif
