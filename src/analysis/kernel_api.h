/*
 * What the kernel's calls mean to the analysis, in one place: which calls
 * take and drop a lock, interrupts, bottom halves or preemption
 * (spin_lock_irqsave takes a lock and interrupts), which calls may sleep,
 * and which registrations make the kernel run a function in an atomic
 * context (request_irq, timers, tasklets, NAPI ->poll, ...).
 */
#ifndef PREEMPTIFY_KERNEL_API_H
#define PREEMPTIFY_KERNEL_API_H

#include "parse/ts.h"
#include "util/util.h"

/* What a call does to the state. */
enum api_op { API_NONE, API_ACQUIRE, API_RELEASE, API_TRYLOCK };
enum { KEY_LOCK = 1, KEY_IRQ = 2, KEY_BH = 4, KEY_PREEMPT = 8 };

struct api {
	const char *name;
	enum api_op op;
	unsigned keys;    /* KEY_* bits */
	const char *lock; /* a lock wrapper's (flow.h): its lock's key; NULL: named by an argument */
	/*
	 * A wrapper handed its lock: the argument naming it (0 for the
	 * kernel's calls) and, when its lock is a field of that argument,
	 * the field (`->lock` for `spin_lock(&dev->lock)` on a parameter dev).
	 */
	unsigned lock_arg;
	const char *lock_field;
	const struct hdr_lock *hdr; /* a lock macro of the tree's headers (header_locks.c), or NULL */
};

struct hdr_lock;

/* The api entry for a callee name, or NULL. */
const struct api *api_lookup(const char *name, size_t len);

/*
 * The key CALL takes or drops for KEY (one KEY_* bit): the lock argument
 * without whitespace and a leading '&' ("dev->lock", "?" when there is no
 * argument) for KEY_LOCK, else "irq", "bh" or "preempt". Caller frees.
 */
char *lock_key(TSNode call, unsigned key, const char *src);

/*
 * The key of the lock CALL names by its argument ARG, followed by FIELD
 * ("->lock", or NULL): "dev->lock" for f(dev) and f(&dev) alike, as the
 * lock its callee takes through that parameter. Caller frees.
 */
char *lock_key_arg(TSNode call, unsigned arg, const char *field, const char *src);
/* The key of the lock expression RAW (no blanks): `&(p->lock)` and `p->lock` give "p->lock". Caller frees. */
char *lock_key_text(const char *raw);

/*
 * header_locks.c: the lock macros of the tree's headers under ROOT/include
 * (`#define hci_dev_lock(d) spin_lock(&d->lock)`), read by
 * kernel_api_read_tree(); the one named NAME (LEN bytes), or NULL; its
 * lock's key at CALL (the macro's parameters replaced by CALL's
 * arguments; caller frees); each name to VISIT as API_WORD_LOCK; is S (N
 * bytes) one of them.
 */
void header_locks_read(const char *root);
void header_locks_reset(void);
/* Appends to OUT every lock macro read (for kernel_api_digest()). */
void header_locks_digest(struct buf *out);
const struct api *api_header_lock(const char *name, size_t len);
char *header_lock_key(const struct api *a, TSNode call, const char *src);
void header_lock_words(void (*visit)(const char *word, unsigned cls, void *ctx), void *ctx);
bool header_lock_word(const char *s, size_t n);
/*
 * A lower-case function-like macro of the tree's headers that every header
 * defines as an expression without calls or writes (header_locks.c).
 */
bool api_pure_macro(const char *name, size_t len);

enum sleep_kind { SLEEP_NO, SLEEP_MAYBE, SLEEP_YES };

/*
 * Whether CALL may sleep (by name, and for allocators by GFP flags). WHY
 * gets e.g. "kmalloc(GFP_KERNEL)" when not NULL.
 */
/*
 * Adds NAME to the calls that may sleep (the user's own: --may-sleep, the
 * config file). Not thread-safe: call before any analysis starts.
 * kernel_api_reset_sleepers() forgets them all.
 */
void kernel_api_add_sleeper(const char *name);
void kernel_api_reset_sleepers(void);

/*
 * What the kernel tree at ROOT says of itself (read by kernel_api.c): the
 * architectures its Kconfig builds without CONFIG_PREEMPT, and whether its
 * big kernel lock is a spinlock under CONFIG_PREEMPT (2.6.9). Not
 * thread-safe: call before any analysis starts; ROOT NULL (or
 * kernel_api_reset_tree()) forgets them: no architecture left out, and
 * lock_kernel() no protection and a call that may sleep.
 */
void kernel_api_read_tree(const char *root);
void kernel_api_reset_tree(void);
/*
 * Appends to OUT everything the calls above set (the user's sleepers,
 * the tree's architectures without preemption, its lock_kernel(), its
 * per-CPU API, the lock macros of its headers): with
 * a file's bytes, all an analysis reads besides its options (a key of
 * the per-file results' cache).
 */
void kernel_api_digest(struct buf *out);
/* Is the tree's lock_kernel() a spinlock (taken as the lock "kernel_flag", and not sleeping)? */
bool api_bkl_spins(void);
/*
 * The architecture of PATH (arch/NAME/... or include/asm-NAME/...) when the
 * tree builds it without CONFIG_PREEMPT, as LEN bytes of PATH; else NULL.
 */
const char *api_arch_without_preempt(const char *path, size_t *len);

/* Does the call NAME never return (panic(), do_exit(), BUG())? A path through it ends there. */
bool api_noreturn(const char *name, size_t len);

/*
 * Is NAME a test of the context the function runs in, whose answer no
 * statement of a driver's function changes (in_irq())? A path that took
 * `if (!in_irq())` one way takes it the same way further down.
 */
bool api_context_test(const char *name, size_t len);

/* Does the call NAME act on the current CPU's own state (TLB, MMU context, MSRs, APIC)? */
bool api_cpu_local(const char *name, size_t len);

enum sleep_kind api_may_sleep(TSNode call, const char *src, const char *path, struct buf *why);

/*
 * If CALL calls one of the allocators the list knows (kmalloc,
 * kmem_cache_alloc, alloc_skb, __get_free_pages, skb_clone, ...), the
 * index of its GFP flags argument; -1 when it calls none or has no such
 * argument.
 */
int api_gfp_arg(TSNode call, const char *src);

/*
 * If NAME is an entry point that runs on a CPU's own idle task before any
 * other task runs there (secondary bring-up: start_secondary(), smp_callin();
 * boot: start_kernel()), why, as "start_secondary() runs ..."; else NULL.
 * Such a task never migrates, and nothing else shares its CPU yet.
 */
const char *api_bound_entry(const char *name, size_t len);

/*
 * If CALLER calling NAME (LEN bytes) is the context switch, which 2.6 makes
 * with preemption off (schedule() calling switch_to(), switch_mm(),
 * prepare_to_switch(), enter_lazy_tlb()), why; else NULL.
 */
const char *api_context_switch(const char *caller, const char *name, size_t len);

/*
 * A function whose documented contract has every caller hold a lock with
 * interrupts off (s390 do_IO(): Documentation/s390/cds.txt), by NAME (LEN
 * bytes) defined in PATH: why (a format, %u the line), or NULL.
 */
const char *api_contract(const char *name, size_t len, const char *path);

/*
 * Is NAME a debug build's lock implementation (parisc spin_lock(), sparc
 * _do_spin_lock(), alpha debug_spin_lock(), ppc _read_lock(), ...)? 2.6
 * calls those _raw_ operations between preempt_disable() and
 * preempt_enable().
 */
bool api_lock_impl(const char *name, size_t len);

enum fn_context { CTX_PROCESS, CTX_HARDIRQ, CTX_SOFTIRQ, CTX_CALLERS };

/* Names of context kinds, e.g. "hard-IRQ context". */
const char *fn_context_name(enum fn_context c);

/* How a function is handed to the kernel. */
enum reg_via {
	REG_CALL,          /* an argument of a call: request_irq(irq, f, ...) */
	REG_FIELD,         /* a field, assigned (x.f = / x->f =) or initialised (.f =) */
	REG_POINTER_FIELD, /* a field assigned through a pointer only (dev->poll =) */
	REG_VARIABLE,      /* a global variable assigned: pm_idle = f */
	REG_POSITION,      /* a positional initialiser of the struct type: { f, g, 0 } */
};

/* A registration: the kernel will call the function in context CTX. */
struct registration {
	enum reg_via via;
	const char *name;  /* callee, field or variable */
	unsigned arg;      /* REG_CALL: the argument index; REG_POSITION: the member's */
	enum fn_context ctx;
	const char *fmt;   /* the reason; %u = line */
	const char *type;  /* REG_FIELD: only in an initialiser of this struct type (NULL any);
			    * REG_POSITION: the struct type */
};

/* The registration through NAME (LEN bytes) of kind VIA, or NULL (rows without a type only). */
const struct registration *api_registration(enum reg_via via, const char *name, size_t len);

/*
 * The same for a field initialised in a declaration whose type text is
 * TYPE (TLEN bytes): also the rows whose struct type TYPE names.
 */
const struct registration *api_registration_in(enum reg_via via, const char *name, size_t len,
					       const char *type, size_t tlen);

/* The registration by the member at POS of a positional initialiser of TYPE, or NULL. */
const struct registration *api_registration_at(unsigned pos, const char *type, size_t tlen);

/*
 * A call that runs one of its function arguments in the caller's context
 * (netfilter's NF_HOOK(pf, hook, skb, in, out, okfn)): the argument's index,
 * or -1.  Such an argument counts as a call made at the call's point.
 */
int api_callback_arg(const char *name, size_t len);

/* The classes of words a site of P006 or P007 needs (api_table_words(), api_text_words()). */
enum { API_WORD_LOCK = 1, API_WORD_SLEEP = 2, API_WORD_CONTEXT = 4 };

/*
 * Calls VISIT with every name of kernel_api.c's tables and its class: the
 * locking calls (apis.def, lock_kernel; API_WORD_LOCK), the calls that may
 * sleep (the built-in list and the allocators; API_WORD_SLEEP) and the
 * registrations that make a function atomic (the struct type of a typed
 * row, else the callee, field or variable; API_WORD_CONTEXT).
 */
void api_table_words(void (*visit)(const char *word, unsigned cls, void *ctx), void *ctx);

/* The user's own calls that may sleep (kernel_api_add_sleeper()), N of them. */
const char *const *api_user_sleepers(size_t *n);

/*
 * The classes of WANT (API_WORD_*) whose words TEXT (LEN bytes) holds, as
 * whole identifiers of its code (not in a comment or a string literal;
 * api_words.c): the names of api_table_words(), the user's sleepers (as
 * whole words anywhere), and for API_WORD_CONTEXT the shapes context.c knows
 * (the 2.4 handler signature's pt_regs, a static timer_list, tasklet and
 * timer macros, irq_enter(), a lock implementation's spinlock_t, ...; by
 * substring where context.c matches one). A text without any word of a
 * class has nothing of it: no locking call, no call that may sleep, no
 * function atomic by construction. Thread-safe.
 */
unsigned api_text_words(const char *text, size_t len, unsigned want);

#endif
