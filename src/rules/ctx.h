/*
 * Internal to src/rules: the state the checkers share while deciding one
 * file, and the helpers they use to read syntax, record findings and plan
 * get/put regions. Nothing outside src/rules includes this header.
 *
 * Ownership: a struct ctx lives on rules_run()'s stack for one file; the
 * findings it appends belong to ctx.out. Helpers taking a `char *` message,
 * evidence or note take ownership of it, also when they drop it (a rule
 * that is off, a suppressed line). Helpers returning `char *` return an
 * owned string the caller frees. Nothing here fails but by aborting on
 * out-of-memory (util.h's x* allocators).
 */
#ifndef PREEMPTIFY_RULES_CTX_H
#define PREEMPTIFY_RULES_CTX_H

#include "rules/rules.h"

/*
 * What an end_file hook set aside for the next round of the file, and why
 * (names and reasons, kept by the driver across rounds): P008's arrays
 * found ineligible only after their uses were planned.
 */
struct array_refusals {
	VEC(char *) names;
	VEC(char *) whys;
};

struct ctx {
	const struct file_analysis *fa;
	const struct source *src;
	const char *text; /* parse text */
	const struct scan_options *opts;
	struct scan_result *out;
	struct array_refusals *kept; /* set aside by an earlier round; may be NULL */
	size_t first_finding;    /* index of the first finding of the file (of this round) */
	size_t fn_first_finding; /* index of the first finding of the function being checked */
	/* what the text may hold, so that a check run on every identifier or call can stop early */
	bool may_if0;          /* a `#if 0` or `#elif 0` (text_may_have_if0()) */
	bool may_macro_site;   /* a macro hiding a site: set by the rules' begin_file hooks */

	/*
	 * The rules' own state for the file: each field belongs to the files
	 * named, set up by their rule's hooks (begin_file, or on first use)
	 * and freed by its release hook; no other file touches it.
	 */
	/* P001-P003, P008 (rules/cpu_shared.h) */
	VEC(struct percpu_array *) arrays; /* the file's NR_CPUS arrays (percpu_*.c; P008's hooks) */
	VEC(struct covered) covered;       /* reads inside another finding's region (cpu_read_region.c) */
	char **bound;       /* per function: why it runs bound to its CPU (cpu_stable.c), or NULL */
	char **unbound;     /* per function: why not, though only bound code calls it, or NULL */
	bool bound_done;
	/* P003 (check_cpu_read.c) */
	VEC(const struct macro_def *) cpu_macros; /* cpu_macro_of(): the file's macros reading the CPU */
	bool cpu_macros_done;
	bool may_tree_cpu_macro; /* a macro of the tree's headers reading the CPU */
	bool may_cpu_macro;    /* ...or of the file */
	/* P004 (check_resched.c) */
	unsigned fn_resched_write; /* line of a non-test use of current->need_resched in the function, or 0 */
	bool may_resched_macro; /* a #define of the file or the tree's headers testing need_resched */
};

/*
 * Decides one site SITE of KIND (a capture of grammars/sites.scm, or
 * RULE_SITE_FUNCTION with the function body) in F: adds findings and their
 * edits to C.
 */
typedef void rule_checker(struct ctx *c, const struct fn *f, TSNode site, const char *kind);

/* The most host predicates of grammars/sites.scm one rule answers, and site words it has. */
#define RULE_MAX_PREDS 3
#define RULE_MAX_SITE_WORDS 3

/*
 * What a rule plugs into the driver (rules_run()): its row of
 * rules/rules.def names them, HOOKS(x) for the `const struct rule_hooks x`
 * its file defines (src/rules/check_<name>.c; the declarations below come
 * from the registry). Every member may be NULL. The driver calls each kind
 * of hook for every rule in row order, whether the rule is on or not (its
 * findings are dropped by add_finding()), except CHECK on RULE_SITE_FUNCTION.
 * A file may be checked in several rounds (end_file); each round starts
 * from a zeroed struct ctx.
 */
struct rule_hooks {
	/* Decides each site of a kind the row's SITES(...) lists. */
	rule_checker *check;
	/*
	 * Words one of which every string its patterns of grammars/sites.scm
	 * test holds (NULL-terminated): a body holding none of any rule's (nor
	 * a lock, an atomic context or a macro) is not queried
	 * (rules_site_words()).
	 */
	const char *site_words[RULE_MAX_SITE_WORDS + 1];
	/* Before the file's functions: the rule's per-file state; sets may_* of C. */
	void (*begin_file)(struct ctx *c);
	/* After F's sites and the checks of the whole function. */
	void (*end_function)(struct ctx *c, const struct fn *f);
	/* After the functions. True: the file must be checked again (a new round). */
	bool (*end_file)(struct ctx *c);
	/* Frees the rule's per-file state (after each round). */
	void (*release)(struct ctx *c);
	/* The host predicates of grammars/sites.scm it answers (NULL-terminated), and the answer. */
	const char *preds[RULE_MAX_PREDS + 1];
	bool (*pred)(struct ctx *c, const char *name, TSNode n);
	/*
	 * Of PREDS, those that match every identifier to find a macro: their
	 * patterns are left out unless some begin_file set c->may_macro_site.
	 */
	const char *macro_preds[RULE_MAX_PREDS + 1];
	/*
	 * D, a #define of a header (c->src), hides a site of the rule in the
	 * files that use it: its tree_macro_kind, else -1. When several rules
	 * claim it, the lowest kind is kept.
	 */
	int (*header_macro)(const struct ctx *c, const struct macro_def *d);
	/*
	 * The rule's own prefilter, for sites no single word names (P006: a
	 * call that may sleep and something that turns preemption off): false
	 * only when TEXT (a file's LEN raw bytes) can hold no site of the rule.
	 * A file is parsed when a word of any rule's row or any rule's wants
	 * says so (rules_prefilter()).
	 */
	bool (*wants)(const char *text, size_t len);
};
#define HOOKS(h) extern const struct rule_hooks h;
#define NO_HOOKS
#define RULE(id, code, name, sev, summary, help, hooks, sites, fixes, props, words) hooks
#include "rules/rules.def"
#undef HOOKS
#undef NO_HOOKS

/* ---- syntax (ctx.c) ---- */

char *node_text(const struct ctx *c, TSNode n); /* in the parse text; owned */
char *orig_text(const struct ctx *c, TSNode n); /* in the user's text; owned */
unsigned line_of(const struct ctx *c, TSNode n);
bool name_eq(const char *s, size_t len, const char *want);
/* True if CALL is a call_expression of the function NAME. */
bool call_is(const struct ctx *c, TSNode call, const char *name);
/*
 * The first of NAMES[0..N) that F's definition never names (as a variable
 * or a type) and no #define of the file names or mentions: the name of a
 * new local, or NULL when all are taken.
 */
const char *fresh_local_name(const struct ctx *c, const struct fn *f, const char *const *names, size_t n);
/* Number of smp_processor_id() calls in N. */
unsigned count_cpu_reads(const struct ctx *c, TSNode n);
/* True in an `#if 0` arm. */
bool in_dead_code(const struct ctx *c, TSNode n);
/* Might TEXT (LEN bytes) hold a directive `#if 0` or `#elif 0`? False only when it cannot. */
bool text_may_have_if0(const char *text, size_t len);
/* Sets C's may_if0 from its source. */
void ctx_prescan(struct ctx *c);
/* True under an #if on LINUX_VERSION_CODE. */
bool version_guarded(const struct ctx *c, TSNode n);

/*
 * rules.c: the tree's header macro NAME (LEN bytes) of KIND hiding a site
 * (scan_options.macros), function-like or not, or NULL.
 */
const struct macro_def *tree_macro_find(const struct ctx *c, const char *name, size_t len,
					bool function_like, enum tree_macro_kind kind);
/* rules.c: where macro D is defined: "line 12" (this file) or "include/x.h:12"; owned. */
char *macro_location(const struct ctx *c, const struct macro_def *d);
/* The statement containing N that sits directly in a block, or a null node. */
TSNode block_stmt(TSNode n);
/* The statement after S in its block (skipping comments), or a null node. */
TSNode next_stmt(TSNode s);
bool node_within(TSNode n, TSNode outer);
/* The parent of N above any parentheses and casts; *CHILD (may be NULL) gets its child on the way. */
TSNode up(TSNode n, TSNode *child);

/*
 * Whether CALL may sleep, directly (the API table: schedule, down,
 * kmalloc(GFP_KERNEL), ...) or through a function of this file whose
 * may-sleep summary says so. Only verdicts at least AT_LEAST count
 * (SLEEP_YES: certain sleepers only; SLEEP_MAYBE: also possible ones): a
 * function the file defines is judged by its body first (with the call's
 * constant arguments, sleep_call_with_args()), anything else by the API
 * list; SLEEP_NO below AT_LEAST.
 * WHY (may be NULL) gets the API's reason ("kmalloc(GFP_KERNEL)"); when the
 * verdict is the callee's, WHY is left empty and *VIA (may be NULL) is set
 * to that function, else to NULL.
 */
enum sleep_kind call_may_sleep(const struct ctx *c, TSNode call, enum sleep_kind at_least,
			       struct buf *why, const struct fn **via);

/* ---- findings (ctx.c) ---- */

/*
 * Appends a finding (taking MESSAGE and EVIDENCE). Returns it, or NULL when
 * RULE is off or the line suppresses it. The pointer is valid until the
 * next finding is added.
 */
struct finding *add_finding(struct ctx *c, enum rule_id rule, TSNode at, const struct fn *f,
			    enum severity sev, enum confidence conf, enum fix_kind fix,
			    char *message, char *evidence);
/* add_finding() at bytes [AT, END) (a site with no node of its own: a #define body). */
struct finding *add_finding_at(struct ctx *c, enum rule_id rule, size_t at, size_t end, const struct fn *f,
			       enum severity sev, enum confidence conf, enum fix_kind fix,
			       char *message, char *evidence);
/* Would a finding of RULE at byte AT be kept (rule enabled, line not suppressed)? */
bool rule_reported_at(const struct ctx *c, enum rule_id rule, size_t at);
/* Records a considered-and-protected site (kept only with --verbose). */
void add_protected(struct ctx *c, enum rule_id rule, TSNode at, const struct fn *f,
		   char *message, char *evidence);
/* Adds an edit anchored on ANCHOR to FD (NULL: nothing); the same edit twice is kept once. */
void add_edit(const struct ctx *c, struct finding *fd, enum edit_op op, TSNode anchor, const char *text);
/* Adds to FD a replacement of [START, END) outside any syntax node the parse kept (NODE: static). */
void add_span_edit(const struct ctx *c, struct finding *fd, size_t start, size_t end, const char *node,
		   const char *text);
/* Adds to FD a replacement of [START, END) inside a #define body (NODE: the construct, static). */
void add_define_edit(const struct ctx *c, struct finding *fd, size_t start, size_t end, const char *node,
		     const char *text);
/* Sets FD's fix note (taking NOTE), replacing any earlier one. */
void set_note(struct finding *fd, char *note);
/* Makes FD report-only: drops its edits, FIX_NONE, NOTE (taken) says why. */
void unfixable(struct finding *fd, char *note);
/* point_explain() as an owned string. */
char *explain_state(const struct fn *f, const struct point_state *ps);


/* ---- this file's #defines (rules.c) ---- */

/* The node at this file's #define D (for version_guarded(), in_dead_code()). */
TSNode define_node(const struct ctx *c, const struct macro_def *d);
/* Is D defined in two #if arms of the file, or version-guarded (a compatibility definition)? */
bool define_conditional(const struct ctx *c, const struct macro_def *d);

#endif
