/*
 * The analysis of one file: functions, their contexts (IRQ, softirq,
 * callers), and a forward must/may data-flow of the preemption-off state
 * over each function's CFG.
 *
 * State: the set of acquisitions (spin_lock, local_irq_save, preempt_disable,
 * get_cpu, ...) held at a point. `must` is held on every path from entry
 * (intersection), `may` on some path (union). Preemption is off at a point
 * when the function runs in atomic context or `must` is not empty.
 *
 * One header, five files: analysis.c (functions, the driver), flow.c (the
 * data-flow), context.c (atomic contexts, the callers' fixed point), sleep.c
 * (may-sleep summaries), over kernel_api.c's tables of kernel calls.
 */
#ifndef PREEMPTIFY_FLOW_H
#define PREEMPTIFY_FLOW_H

#include <tree_sitter/api.h>
#include "analysis/cfg.h"
#include "analysis/kernel_api.h"
#include "parse/source.h"

struct fn;

/* One acquisition site; a call may make two (spin_lock_irqsave: lock + irq). */
struct acq {
	char *key;       /* "dev->lock", "irq", "bh", "preempt" */
	uint32_t key_id; /* index in fn.keys */
	TSNode call;
	char *api;       /* callee name */
	unsigned line;
};

struct event {
	TSNode call;
	const struct api *api;
	uint32_t acq;    /* first acquisition index (acquire/trylock) */
	int polarity;    /* trylock in a condition: 1 true edge, 0 false edge, -1 neither */
	int32_t rel[2];  /* release: key ids released (-1 unused, -2 a key this function never takes) */
	/*
	 * A call that sleeps (SLEEP_YES), set by sleep_summarise() in a function
	 * that disables interrupts: 2.4's schedule() returns with them enabled.
	 */
	bool sleeps;
	/*
	 * A call to a function of the file that leaves every lock of its
	 * `dropped` (its caller's) released on every path (2.4 grab_super()
	 * drops sb_lock): a release of those keys. Set by sleep_summarise().
	 */
	const struct fn *drops;
	/*
	 * A call to a function of the file that leaves its caller's locks (its
	 * `dropped`) released on some paths and held on others (2.4
	 * write_buffer_delay(): released when it returns 1): which way it went
	 * is what its result says. Set by sleep_summarise() (NULL with drops).
	 */
	const struct fn *may_drop;
	/* A function-like macro of the file that always returns (`do { ...; return; } while (0)`). */
	bool returns;
};

typedef VEC(struct event) event_vec;

struct call_site {
	uint32_t callee;   /* index in file_analysis.fns */
	TSNode call;
	bool protected_call; /* preemption off at the call */
	bool irqs_off;       /* ...and interrupts off there (flow_irqs_off_at()) */
};

/*
 * A lock wrapper of the file (wrap.c): calls to NAME take (API_ACQUIRE),
 * take when they return 0 or not 0 (API_TRYLOCK) or drop (API_RELEASE) the
 * keys of API, as the function's own flow shows at its returns.
 */
struct wrapper {
	struct api api;    /* api.name: the function's name (the fn's string) */
	bool zero_success; /* API_TRYLOCK: held when it returns 0 */
	bool fail_negative; /* API_TRYLOCK: every return that fails is negative (-EBUSY) */
	bool never_fails;   /* API_ACQUIRE, API_RELEASE: every return gives 0, so `if (w() < 0)` is never taken */
	char *held;        /* "icmp_socket->sk->lock.slock, bh"; owned */
	char *lock;        /* its lock's key (api.lock), or NULL; owned */
};
typedef VEC(struct wrapper) wrapper_vec;
typedef VEC(char *) key_vec;

struct fn {
	char *name;
	TSNode def, body;
	bool is_static;
	bool addr_taken;
	/*
	 * Stored only in struct field VIA_FIELD (`adapter->clean_rx = f;`, `.clean_rx = f`):
	 * VIA_BAD when any other use takes its address. When no other file of the
	 * tree accesses that field, its calls are this file's `->clean_rx(...)`
	 * (context.c), and ADDR_TAKEN is cleared.
	 */
	char *via_field;
	bool via_bad, via_private;
	/*
	 * Stored only in VIA_FIELD, which other files access too: `.field`, the
	 * name the tree follows for it (context_roots()); VIA_TREE, why every
	 * call through that field in the tree is made with preemption off (the
	 * tree context's), when it is. Set only with a tree.
	 */
	char *via_root;
	const char *via_tree;
	char *via_pointer; /* ...or stored only in this pointer (`flush_cache_mm = r4k_flush_cache_mm;`) */
	struct srcpos pos;
	enum fn_context ctx;
	char *ctx_reason;  /* why atomic at entry; owned */
	/*
	 * Every caller enters it with interrupts off (context_callers.c, a
	 * contract): a plain spin_unlock() of the caller's lock, which leaves
	 * them off, keeps the caller's protection (2.6.9 sched.c
	 * wake_sleeping_dependent() drops the runqueue lock schedule() took
	 * with spin_lock_irq(), "We keep IRQs disabled").
	 */
	bool entry_irqs_off;
	/*
	 * The lock its comment says the callers hold ("Called under
	 * dev->queue_lock"), or a lock of the file's own every call in the file
	 * holds (context_callers.c: 2.6.9 highmem.c map_new_virtual() under
	 * kmap_lock), when F takes it too (owned): held from
	 * the entry, so a path that drops and takes it again joins the one
	 * that never dropped it (2.6.9 qdisc_restart()); ENTRY_KEY is its key
	 * id + 1 (0: none), set by flow_run().
	 */
	char *entry_lock;
	uint32_t entry_key;
	enum sleep_kind sleeps;
	char *sleep_reason; /* "calls kmalloc(GFP_KERNEL) at line 40"; owned */
	/*
	 * How F may sleep while its caller's locks may still be held: below
	 * sleeps when every sleep comes after F released the locks in dropped,
	 * which it never takes itself (spin_unlock(&l); schedule(); spin_lock(&l);).
	 */
	enum sleep_kind sleeps_held;
	key_vec dropped;          /* owned */
	struct cfg cfg;
	VEC(struct acq) acqs;     /* may-set bit i+1; bit 0 = held by the caller */
	VEC(char *) keys;         /* distinct keys of acqs */
	VEC(event_vec) events;    /* per CFG node */
	/*
	 * Per node in-state. must: (keys.len + 1) depths, the minimum over all
	 * paths of how often each key is held ([0] = the caller's protection);
	 * may: bitset of the acquisition sites held on some path.
	 */
	size_t words;             /* uint64_t words per may-set */
	uint8_t *must;
	uint64_t *may;
	uint8_t *reached;         /* per node */
	VEC(struct call_site) calls;
	const char *src;          /* the parsed text */
	const char *tree_note;    /* why the tree leaves it preemptible; the tree context's */
	char *callers_note;       /* a static function: its first call in the file with preemption on (owned) */
	const wrapper_vec *wrappers; /* the file's lock wrappers, for its calls; or NULL */
	const struct wrapper *wraps; /* F is this lock wrapper, or NULL */
};

struct tree_context;

struct file_analysis {
	const struct source *src;
	TSTree *tree;
	const struct tree_context *ext; /* contexts from the rest of the tree, or NULL */
	struct callers *callers; /* context.c: the calls to each function (final) */
	VEC(struct fn) fns;     /* in source order */
	wrapper_vec wrappers;   /* wrap.c; never grows after the calls use them */
	uint32_t *by_name;      /* open-addressing table of fns indices + 1 (0 = empty) */
	size_t by_name_cap;     /* a power of two, at least twice fns.len */
};

/*
 * Runs the whole analysis of a parsed file. EXT (may be NULL) gives the
 * contexts that the rest of the tree implies for the file's functions that
 * other files can call (analysis/tree.h); it must outlive OUT.
 */
void analysis_run(struct file_analysis *out, const struct source *src, TSTree *tree,
		  const struct tree_context *ext);
void analysis_release(struct file_analysis *fa);

/* The function containing OFFSET, or NULL. */
const struct fn *analysis_fn_at(const struct file_analysis *fa, uint32_t offset);
/*
 * True when other files can call F: it is not static, or it is defined in
 * a header (a static inline every includer gets).
 */
bool analysis_fn_is_shared(const struct file_analysis *fa, const struct fn *f);

/* How an identifier that names a function is used. */
enum fn_use_kind {
	USE_CALL,        /* called: name(...) */
	USE_DECLARATION, /* its own declaration or definition */
	USE_EXPORT,      /* EXPORT_SYMBOL(name): callers are other modules */
	USE_REGISTERED,  /* handed to the kernel, which calls it in context ctx */
	USE_ADDRESS,     /* any other use: called through a pointer from anywhere */
};
struct fn_use {
	enum fn_use_kind kind;
	enum fn_context ctx; /* USE_REGISTERED */
	char *reason;        /* USE_REGISTERED: owned by the caller */
	unsigned line;
	TSNode call;         /* USE_CALL: the call expression */
	bool unread;         /* USE_ADDRESS: in a macro body or code the grammar could not read */
};

/* Classifies the use of function name IDENT (an identifier of FA's tree). */
void context_classify_use(const struct file_analysis *fa, TSNode ident, struct fn_use *out);

/*
 * The field the function named N (of text SRC) is stored in, when that is
 * the whole use: `x->f = N;`, `x.f = N;`, `{ .f = N }` (owned), else NULL.
 */
char *context_stored_field(TSNode n, const char *src);

/*
 * The pointer the function named N is stored in, when that is the whole
 * use: `p = N;`, `void (*p)(void) = N;` (owned), else NULL.
 */
char *context_stored_pointer(TSNode n, const char *src);

/* How F's store is named in a reason: "field f" or "pointer p" (F->via_field or F->via_pointer set). */
const char *fn_store_kind(const struct fn *f);
const char *fn_store_name(const struct fn *f);

/*
 * The functions whose context decides F's: following the calls made with
 * preemption on up from F through this file, every function other files
 * can call (F itself included). Appends their names to OUT (not owned:
 * FA's). Returns false when a path ends where no caller in the tree can
 * help: a function whose address is taken (other than an atomic
 * registration), a static function nobody in the file calls, or a caller
 * that released its own atomic context before the call.
 */
typedef VEC(const char *) name_vec;
bool context_roots(const struct file_analysis *fa, const struct fn *f, name_vec *out);

/*
 * context_roots(), and *SLEEPS: whether a function on those paths (F
 * included) may sleep, after which other tasks may run on the CPU, so a
 * root's bring-up or boot binding (tree_context_bound()) does not reach F.
 * An entry itself (api_bound_entry()) sleeps only once bring-up is over.
 */
bool context_roots_sleep(const struct file_analysis *fa, const struct fn *f, name_vec *out, bool *sleeps);

/* Function index by name, or -1. */
int analysis_fn_index(const struct file_analysis *fa, const char *name, size_t len);

/* The preemption state just before OFFSET in F. */
struct point_state {
	bool reached;
	bool atomic_ctx;  /* function atomic at entry (and not released) */
	int must_acq;     /* an acquisition held on every path (index), -1 none */
	int may_acq;      /* an acquisition held on some path only, -1 none */
	bool entry_held;  /* bit 0 held on every path */
};

struct point_state flow_state_at(const struct fn *f, uint32_t offset);

/* flow.c: the bit of KEYS (at most 64) naming the key KEY of E's call, or 0. */
uint64_t flow_key_bit(const struct fn *f, const struct event *e, unsigned key, char *const *keys, size_t n);

/*
 * entry_locks.c: a lock F's callers hold on entry (one it releases before
 * it first takes it: flow_caller_keys()) that is still held on every path
 * to OFFSET: its key (owned) and the line of a release that shows it, or
 * NULL; never in a function that calls a macro of its file SRC that may
 * take a lock (the release then only looks like the caller's). The rules
 * about the running CPU ask, and flow_call_off() for the calls F makes;
 * P006 and P007 keep their own account of the caller's locks.
 */
char *flow_entry_lock_at(const struct fn *f, const struct source *src, uint32_t offset, unsigned *line);

/*
 * entry_locks.c: is a call at OFFSET of F (of SRC) made with preemption
 * off: the state there protects it (not by the big kernel lock alone), or
 * a lock F's callers hold on entry is still held there
 * (flow_entry_lock_at(): 2.6.9 mm/memory.c do_anonymous_page() calls
 * update_mmu_cache() under the page_table_lock its callers took, on the
 * path that never dropped it as on the one that took it again). WHY, when
 * not NULL, gets the reason.
 */
bool flow_call_off(const struct fn *f, const struct source *src, uint32_t offset, struct buf *why);

/*
 * entry_locks.c: are interrupts off at OFFSET of F on every path (the irq
 * key held, or the callers' protection still in force and they enter F
 * with interrupts off)?
 */
bool flow_irqs_off_at(const struct fn *f, uint32_t offset);

/* entry_locks.c: does F name NAME in a declaration (a parameter, a local)? */
bool fn_declares(const struct fn *f, const char *name);

/*
 * entry_locks.c: are KEYS (N of them, locks F's callers hold that F
 * releases: flow_caller_keys()) all held again at F's exit, on every path?
 * 2.6.9 kernel/sched.c double_lock_balance() drops this_rq->lock to take
 * busiest->lock in order, then takes it back. False for the CPU's state
 * (irq, bh, preempt): giving back the caller's flags takes nothing back.
 */
bool flow_caller_keys_back(const struct fn *f, char *const *keys, size_t n);

/*
 * At the function's exit: is acquisition ACQ's key held on every path
 * (MUST_HELD), and is the site itself held on some path (MAY_HELD)? False
 * if the exit is unreachable.
 */
bool flow_exit_state(const struct fn *f, uint32_t acq, bool *must_held, bool *may_held);

/*
 * At OFFSET in F, are the N KEYS (F's caller's locks, held when it is
 * called) released on every path from entry? A take of one (a trylock too)
 * holds it again. OFFSET UINT32_MAX: at the exit. False where the flow does
 * not reach, or for more than 64 keys.
 */
bool flow_caller_keys_gone(const struct fn *f, char *const *keys, size_t n, uint32_t offset);
/*
 * flow.c: a forward analysis of a set of at most 64 bits over F's CFG:
 * ENTRY at the entry, STEP (given CTX) applied to each event, joined by
 * AND (MUST) or OR. The set just before OFFSET (UINT32_MAX: at the exit)
 * into *OUT; false if that point is not reached.
 */
typedef uint64_t (*flow_bits_step)(const struct fn *f, const struct event *e, uint64_t bits, const void *ctx);
bool flow_bits_at(const struct fn *f, uint64_t entry, bool must, flow_bits_step step, const void *ctx,
		  uint32_t offset, uint64_t *out);

/* The keys held at OFFSET in F on every path (MAY: on some path), into OUT (F's own strings). */
void flow_held_keys(const struct fn *f, uint32_t offset, bool may, name_vec *out);

/* True when preemption is off in S. */
bool point_protected(const struct point_state *s);

/*
 * True when S, at OFFSET in F, is protected by nothing but the big kernel
 * lock of a tree where it spins (api_bkl_spins()): the kernel drops it while
 * its holder sleeps, so a sleep there is fine and a callee does not inherit
 * it.
 */
bool point_bkl_only(const struct fn *f, const struct point_state *s, uint32_t offset);

/* Appends the reason for S being protected / not (one sentence). */
void point_explain(const struct fn *f, const struct point_state *s, struct buf *out);

/*
 * Does KEY count (preemption: get_cpu/put_cpu, preempt_disable/enable;
 * bottom halves), so that every take needs its own release? Locks and
 * cli()/sti() do not nest that way.
 */
bool flow_key_counts(const char *key);

/* True if F releases an acquisition keyed KEY somewhere. */
bool fn_releases(const struct fn *f, const char *key);

/*
 * True if the first use of KEY in F (source order) is a release: F drops a
 * lock its caller holds and takes it again (spin_unlock(); schedule();
 * spin_lock();), so holding it at the end restores the caller's state.
 */
bool fn_drops_caller_lock(const struct fn *f, const char *key);

/*
 * Where F's counting acquisitions (preemption, bottom halves) and their
 * releases do not pair up on every path:
 *   IMB_RELEASE_PARTIAL  a release where the key is held on some paths only
 *                        (get_cpu() in one arm, put_cpu() after the if);
 *   IMB_RELEASE_UNHELD   a release where this function holds nothing of the
 *                        key on any path, though it takes it elsewhere
 *                        (put_cpu(); put_cpu(););
 *   IMB_REACQUIRE        an acquisition reached again while it may still be
 *                        held from an earlier pass (a get in a loop whose put
 *                        is after the loop).
 * The caller's protection and functions that drop a caller's lock and take
 * it again are not imbalances.
 */
enum imbalance_kind { IMB_RELEASE_PARTIAL, IMB_RELEASE_UNHELD, IMB_REACQUIRE };

struct imbalance {
	enum imbalance_kind kind;
	TSNode call;            /* the release or acquisition */
	const struct api *api;
	int32_t key_id;         /* index in f->keys */
	int acq;                /* the acquisition involved (index in f->acqs), or -1 */
};
typedef VEC(struct imbalance) imbalance_vec;

/* Appends F's imbalances to OUT (one per call and kind), in CFG node order. */
void flow_imbalances(const struct fn *f, imbalance_vec *out);

/*
 * paths.c: what F's releases, acquisitions and exit see on its feasible
 * paths only: a branch on a value F does not change (or sets to a
 * constant), the first test of a counted loop over an unchanged bound, and
 * an #if arm on the same macro are taken the same way along one path, and
 * `p = q;` makes p->lock and q->lock one lock. COMPLETE false: too many
 * states, nothing is known (every answer PATH_HELD | PATH_FREE).
 */
enum { PATH_HELD = 1, PATH_FREE = 2, PATH_NEVER = 4 };
struct path_result {
	bool complete;
	uint8_t *ev;        /* per event slot: PATH_* bits, two slots per event */
	size_t nslots;      /* ev's length */
	uint32_t *ev_first; /* per CFG node: its first event's index */
	uint8_t *exit;      /* per key: PATH_HELD / PATH_FREE at the exit; 0 never reached */
	/*
	 * Per key, the same at the returns of a null constant or of a variable
	 * the path set to one (RET_NULL), and at every other return (RET_VALUE).
	 */
	uint8_t *ret_null, *ret_value;
	/*
	 * Per key: 1 when a test of F's parameters alone (path_release_guards())
	 * tells the exits that hold it from those that do not: every exit holding
	 * it knows the test one way, every exit without it the other way.
	 */
	uint8_t *param_split;
	/*
	 * Some feasible path turns on interrupts that a plain disable (cli(),
	 * local_irq_disable()) turned off: a restore gives back the state its
	 * own save found, so one nested in a disable does not.
	 */
	bool irq_on;
};
void paths_explore(const struct fn *f, struct path_result *out);
void paths_release(struct path_result *r);
/*
 * What key id KEY is just before CALL's event on the feasible paths:
 * PATH_HELD and/or PATH_FREE, PATH_NEVER when no feasible path reaches it.
 */
unsigned paths_at_call(const struct fn *f, const struct path_result *r, TSNode call, int32_t key);

/*
 * KEY (a lock F drops but never takes itself) named through a local
 * pointer declared as a copy of another (`struct card *card = state ?
 * state->card : NULL;`), neither written again in F: the key it names
 * through what it copies (`state->card->lock`), or NULL. Caller frees.
 */
char *paths_copied_key(const struct fn *f, const char *key);

/*
 * The stages of analysis_run() (analysis.c), one file each; internal to
 * src/analysis.
 */

/* flow.c: F's events per CFG node and its (zeroed) flow state. */
void flow_prepare(struct fn *f, const struct source *src);
/* flow.c: runs the data-flow of F from its entry state (F->ctx) to a fixed point. */
void flow_run(struct fn *f);
/* flow.c: the key E's call takes or drops for KEY (lock_key(), or a lock wrapper's lock). */
char *event_key(const struct event *e, unsigned key, const char *src);
/* flow.c: frees what flow_prepare() made (events, acquisitions, keys, states). */
void flow_unprepare(struct fn *f);
/*
 * flow.c: the keys F releases that its caller holds, into OUT (owned, each
 * once): those F never takes and, with RETAKEN, those it releases before it
 * first takes them (spin_unlock(&l); schedule(); spin_lock(&l);). True if F
 * also releases a key it takes itself.
 */
bool flow_caller_keys(const struct fn *f, bool retaken, key_vec *out);
/*
 * flow.c: GKEY, a key of G, as CALL (to G, in text SRC) names it: a key
 * through one of G's parameters (`dir->u.dir.lock`) through the argument
 * (`parent->u.dir.lock`), any other as it is (owned); NULL when the
 * argument is no plain name.
 */
char *flow_callee_key(const struct fn *g, TSNode call, const char *src, const char *gkey);
/* flow.c: the keys held at F's exit on every path (MAY: on some path), into OUT. */
void flow_exit_keys(const struct fn *f, bool may, name_vec *out);
/*
 * msr.c: CALL (to NAME, LEN bytes) in F as ppc's hand-written interrupt
 * switch: a write of the MSR clearing MSR_EE takes interrupts off, a write
 * of a saved word in a function that cleared it gives them back; or NULL.
 */
const struct api *api_msr_write(const struct fn *f, TSNode call, const char *name, size_t len, const char *src);
/* msr.c: the MSR writers' names to VISIT, as API_WORD_LOCK (the P006/P007 prefilter's words). */
void msr_writer_words(void (*visit)(const char *word, unsigned cls, void *ctx), void *ctx);
/* wrap.c: finds the file's lock wrappers and prepares their callers' flow again. */
void wrap_find(struct file_analysis *fa);
/* context.c: contexts from registrations, signatures, irq_enter() and DECLARE_TASKLET(). */
void context_find(struct file_analysis *fa);
/* context.c: gives F the context CTX for REASON (owned), unless it already has a stronger one. */
void context_set_text(struct fn *f, enum fn_context ctx, char *reason);
/* contract.c: contexts the functions' own comments state ("Must be called with interrupts disabled"). */
void contract_find(struct file_analysis *fa);
/*
 * contract.c: may a comment of TEXT state a contract (a superset of what
 * contract_find() takes: the P006 prefilter's test, so a file whose only
 * atomic context is a comment is still read)?
 */
bool contract_text_may_state(const char *text, size_t len);
/*
 * context.c: the pessimistic fixed point that makes a static function
 * atomic at entry once every call to it in the file has preemption off;
 * runs flow_run() and fills fn.calls for every function.
 */
void context_callers_fixpoint(struct file_analysis *fa);
/* context.c: frees what context_callers_fixpoint() kept. */
void context_release(struct file_analysis *fa);
/*
 * sleep_args.c: how CALL to G, a function of FA, may sleep once its constant
 * arguments (numbers, NULL, the file's numeric #defines) rule out the
 * branches of G that test them; G's own summary when none is constant.
 */
enum sleep_kind sleep_call_with_args(const struct file_analysis *fa, TSNode call, const struct fn *g);
/*
 * The same for a call made in interrupt context (hard or soft IRQ, bottom
 * halves off), where in_interrupt() is true: hp100_login_to_vg_hub()
 * sleeps only `if (!in_interrupt())`.
 */
enum sleep_kind sleep_call_in_interrupt(const struct file_analysis *fa, TSNode call, const struct fn *g);
/*
 * The same for CALL to G in F after F set a field of an object it hands G
 * to a constant (`card->in_suspend = 0;` before `m3_outw(card, ...)`, where
 * G sleeps only `if (card->in_suspend)`): when F keeps that pointer, writes
 * the field nowhere else, no label or goto lies between, and no function
 * the calls in between reach writes it but behind a test the value rules
 * out. G's own summary otherwise.
 */
enum sleep_kind sleep_call_after_set(const struct file_analysis *fa, const struct fn *f, TSNode call,
				     const struct fn *g);
/*
 * sleep.c: may-sleep summaries, from the calls made and over the call
 * graph. A function of the file is judged by its body before any built-in
 * list (s390 defines its own request_irq(), which does not sleep).
 */
void sleep_summarise(struct file_analysis *fa);

#endif
