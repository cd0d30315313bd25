/*
 * What the rules about the running CPU (P001, P002, P003, P008) share: the
 * get/put regions they plan (region.c, region_locks.c), the file's NR_CPUS
 * arrays (percpu_*.c), where the CPU number cannot change (cpu_stable.c)
 * and the CPU slots held across two functions (slot_pairs.c). The other
 * rules need none of it: rules/ctx.h holds what every rule uses.
 */
#ifndef PREEMPTIFY_RULES_CPU_SHARED_H
#define PREEMPTIFY_RULES_CPU_SHARED_H

#include "rules/ctx.h"

/* A read left as smp_processor_id() inside a region another finding opens. */
struct covered {
	uint32_t offset; /* of the smp_processor_id() call */
	size_t finding;  /* index of the finding whose region covers it */
};

/* An unprotected access to the current CPU's slot of an NR_CPUS array. */
struct slot_use {
	const struct fn *f;
	unsigned line;
	size_t finding; /* index in out->findings, or SIZE_MAX */
};

/* `EXPORT_SYMBOL(x)` or `EXPORT_SYMBOL_GPL(x)`, bytes [start, end) of the user's text. */
struct export_use {
	size_t start, end;
	bool gpl;
};

/*
 * `x[i]` in the body of a #define, bytes [start, end) of the user's text:
 * the running CPU's slot (`x[smp_processor_id()]`) or INDEX's.
 */
struct macro_slot {
	size_t start, end;
	char *index;    /* the index text as written; owned */
	bool this_cpu;
	const struct macro_def *d;
};

/* A file-scope `T x[NR_CPUS]` (percpu_array.c). */
struct percpu_array {
	char *name;
	TSNode decl;
	bool is_static, eligible;
	char *why_not;   /* why define-per-cpu does not apply */
	TSNode unfixable_use; /* when that is a this-CPU use no region can serve, that use */
	char *type;      /* element type text for DEFINE_PER_CPU */
	char *dropped;   /* attributes (and an all-zero initialiser) dropped, or NULL */
	char *member;    /* a cache-line padding union: its one real member, or NULL */
	TSNode name_node;
	unsigned this_cpu;    /* uses indexed by the running CPU */
	TSNode other_index;   /* the first use indexed otherwise, or a null node */
	bool is_extern;
	/* Defined in one file, named in others: the tree's entry, converted with all its files. */
	const struct tree_array *global;
	VEC(struct export_use) exports; /* EXPORT_SYMBOL(x) at file scope */
	bool planned;    /* declaration edit already attached to a finding */
	VEC(TSNode) uses;
	VEC(struct slot_use) slot_uses; /* unprotected this-CPU accesses (slot_pairs.c) */
	VEC(struct macro_slot) macro_slots; /* in #define bodies (a static array only) */
	unsigned macro_uses; /* uses of the macros holding a this-CPU slot, all protected */
	/*
	 * A struct of per-CPU arrays (global->soa_tag set): NAME is the
	 * instance, its uses `x.f[i]` (the subscripts) of the fields that move
	 * to the per-CPU variable VAR; SOA_STRUCT its struct_specifier when
	 * this file defines it.
	 */
	const char *var; /* the per-CPU variable the accessors name: NAME, or the struct's per-CPU part */
	TSNode soa_struct;
};

/* ---- regions (region.c) ---- */

/*
 * Plans `PUT;` after LAST and before every jump leaving the statements
 * [FIRST, LAST] of one block; VAR (may be NULL) must not be returned.
 * Returns NULL, or why no region can be made (owned).
 */
char *plan_region(const struct ctx *c, TSNode first, TSNode last, const char *var, const char *put,
		  struct finding *fd);
/*
 * region_locks.c: a hand-made lock (a spin on test_and_set_bit()/xchg()/
 * cmpxchg(), a *_lock() of the file that spins or pairs with a *_unlock())
 * taken in [FIRST, *LAST] must be released inside the region: *LAST moves
 * to the statement of the block that releases it. NULL, or why the region
 * cannot cover it (owned).
 */
char *region_cover_locks(const struct ctx *c, TSNode first, TSNode *last);
/*
 * region_own.c, calls on this CPU's own state (api_cpu_local()) and the
 * region: cpu_local_outside() says why one elsewhere in the function
 * refuses [FIRST, LAST] (NULL if none does); cpu_local_extend() runs *LAST
 * on to the last one after it in the block and returns that call (a null
 * node if none); value_outlives() refuses such a longer region when a
 * variable it sets is used after it; extended_refusal() says WHY (owned) of
 * a region run on to CALL.
 */
char *cpu_local_outside(const struct ctx *c, TSNode first, TSNode last);
TSNode cpu_local_extend(const struct ctx *c, TSNode first, TSNode *last);
char *value_outlives(const struct ctx *c, TSNode first, TSNode last);
char *extended_refusal(const struct ctx *c, TSNode call, char *why);
/*
 * region_own.c: preempt_disable(); before the smallest run of statements
 * of one block holding SITE (a CPU read of F) and every call of F on this
 * CPU's own state and every smp_call_function(), preempt_enable(); after
 * it and before its exits (plan_region()), as 2.6.9 holds preemption off
 * over flush_tlb_mm(). NULL (edits into FD) or why not (owned).
 */
char *plan_own_region(const struct ctx *c, const struct fn *f, TSNode site, struct finding *fd);
/*
 * The plan of CALL's read in F failed with NO (owned): FD (may be NULL)
 * gets a preempt_disable() region instead when one serves (the read is an
 * argument of a macro that may vanish: around its statement,
 * plan_vanish_region(); F works on this CPU's own state: plan_own_region(),
 * the later reads inside covered), else it is refused with NO.
 */
void refuse_or_hold(struct ctx *c, const struct fn *f, TSNode call, struct finding *fd, char *no);
/*
 * region_vanish.c: may CALL, holding SITE in an argument, compile to
 * nothing or evaluate that argument on some paths only (a function-like
 * macro of the file, unless every definition evaluates it on every path;
 * a debug printer)? A get there and a put after the call would not pair.
 */
bool call_may_vanish(const struct ctx *c, TSNode call, TSNode site);
/*
 * SITE is an argument of such a call in an expression statement of a
 * block: preempt_disable(); before the statement and preempt_enable();
 * after it, which pair however the macro expands. NULL (edits into FD) or
 * why not (owned).
 */
char *plan_vanish_region(const struct ctx *c, TSNode site, struct finding *fd);
/*
 * region_exit.c: the returns EXITS[0..n) of a region ending with LAST,
 * which ends the function, made one: `ret = value;` each, `PUT; return
 * ret;` after LAST, a `ret` local of the function's type. NULL (edits
 * into FD, which may be NULL) or why not (owned).
 */
char *plan_single_exit(const struct ctx *c, TSNode last, TSNode *exits, size_t n, const char *put,
		       struct finding *fd);
/*
 * region_exit.c: the exits EXITS[0..n) of a region that does not end the
 * function, those with KEPT[i] a `return E;` whose E calls what may depend
 * on this CPU: E stays inside the region, `E; PUT;` then `return;` in a
 * void function, `ret = E; PUT;` then `return ret;` with a `ret` local of
 * the function's type in another; the other exits get `PUT;` before them.
 * NULL (edits into FD, which may be NULL) or why not (owned).
 */
char *plan_kept_exits(const struct ctx *c, TSNode *exits, const bool *kept, size_t n, const char *put,
		      struct finding *fd);
/*
 * region_exit.c: does the return EXIT leave nothing that may depend on this
 * CPU after a put before it: it names no VAR (the region's CPU number, may
 * be NULL) and calls only functions of the file that are plain C, with no
 * call and no inline asm (which may work on this CPU's registers: i386
 * msr.c's `return wrmsr_eio(...);` stays inside)?
 */
bool exit_cpu_free(const struct ctx *c, TSNode exit, const char *var);
/*
 * SITE in the condition of ST, an if statement of a block with no else
 * whose body never completes (`if (cpuid == smp_processor_id()) return
 * -EBUSY;`): the rest of the block runs on what the test decided, so a
 * region must reach its last statement, which is returned; else a null
 * node.
 */
TSNode guard_region_end(TSNode site, TSNode st);
/*
 * The region for a site used within one statement, extended to the last
 * use of a local the statement derives from it. NULL or why not (owned).
 * FD may be NULL: only asks whether a region can be made.
 */
char *plan_site_region(struct ctx *c, const struct fn *f, TSNode site, const char *put,
		       struct finding *fd);

/*
 * Why a get/put around the statement of SITE (a CPU read) would be wrong
 * whatever the region: an argument of a macro that may vanish, several
 * reads, a comparison in a loop. NULL or why (owned).
 */
char *read_refusal(const struct ctx *c, TSNode site);
/*
 * Of those, the ones one get_cpu() into a local before ST serves (several
 * reads, a read on some paths only, a comparison in a loop: *LOOP gets the
 * loop, else a null node). NULL or why (owned).
 */
char *read_hoist_reason(const struct ctx *c, TSNode site, TSNode st, TSNode *loop);

/* The uses of a variable after its definition, up to its next reassignment. */
struct var_uses {
	const struct ctx *c;
	TSNode read;        /* the smp_processor_id() call */
	const char *var;
	uint32_t after;     /* uses start after this byte */
	uint32_t stop;      /* first reassignment after `after`, or UINT32_MAX */
	VEC(TSNode) uses;   /* owned vector; vec_release() it */
};
/* Fills VU->uses from BODY, dropping dead code and other #if arms. */
void var_uses_find(struct var_uses *vu, TSNode body);
/* True if NAME is a parameter or an automatic variable of F. */
bool is_local(const struct ctx *c, const struct fn *f, const char *name);

/* ---- per-CPU arrays (percpu_array.c) ---- */

/* The array SUB (a subscript_expression) indexes, or NULL. */
struct percpu_array *array_of_subscript(const struct ctx *c, TSNode sub);
/* The node a conversion replaces for use SUB of PA: x[i], or x[i].v of a padding union. */
TSNode percpu_slot(const struct percpu_array *pa, TSNode sub);
/* Adds to FD the replacement REP of PA's slot at subscript SUB (x[i], x[i].v of a padding union, x.f[i]). */
void percpu_slot_edit(const struct ctx *c, const struct percpu_array *pa, TSNode sub, const char *rep,
		      struct finding *fd);
/* What accessor ACC of PA's per-CPU variable gives at SUB: ACC, or ACC.f for a struct's field (owned). */
char *percpu_slot_text(const struct ctx *c, const struct percpu_array *pa, TSNode sub, const char *acc);
/* Edits for one this-CPU subscript SUB of an eligible array. */
void plan_percpu_site(struct ctx *c, const struct fn *f, struct percpu_array *pa, TSNode sub,
		      bool is_protected, struct finding *fd);
/* Attaches the declaration edit and the edits of PA's other uses to FD, once per array. */
void plan_define_per_cpu_rest(struct ctx *c, struct percpu_array *pa, struct finding *fd);
/*
 * Modern kernels, a this-CPU slot: one this_cpu_* operation when the
 * statement is a single update; else (*this_cpu_ptr(&x)) where preemption is
 * already off. Returns true if planned; false leaves the get_cpu_var() path.
 */
bool plan_this_cpu(struct ctx *c, TSNode slot, const char *name, bool is_protected, struct finding *fd);

/* ---- a CPU number that cannot change (cpu_stable.c) ---- */

/*
 * cpu_stable.c: the lock F's callers hold on entry that is still held at AT
 * (analysis/flow.h flow_entry_lock_at(): F releases it before it first
 * takes it), as the reason a site is protected; or NULL.
 */
char *cpu_entry_lock(const struct ctx *c, const struct fn *f, TSNode at);

/*
 * Why the CPU number read at READ in F stays valid with preemption on (CPU
 * bring-up code, a task pinned with set_cpus_allowed(current, ...)), owned;
 * NULL when it may change. *WHOLE: the CPU runs nothing else either
 * (bring-up), so its per-CPU data is safe too; else only the number is.
 */
char *cpu_stable(struct ctx *c, const struct fn *f, TSNode read, bool *whole);
/* Why F is not bound although only bring-up code calls it (it may sleep), or NULL. */
const char *cpu_unbound(struct ctx *c, const struct fn *f);
/* Frees what cpu_stable() keeps in C. */
void cpu_stable_release(struct ctx *c);

/* ---- CPU slots held across functions (slot_pairs.c) ---- */

/* Records an unprotected this-CPU access AT of PA in F, with its finding FD (may be NULL). */
void note_slot_use(struct ctx *c, struct percpu_array *pa, const struct fn *f, TSNode at,
		   const struct finding *fd);
/* Names that differ in one opposite word: br_read_lock / br_read_unlock. */
bool names_paired(const char *a, const char *b);

#endif
