/*
 * What one scan reads and writes: the options the rules obey (which rules,
 * what the rest of the tree says) and the result they fill (findings,
 * diagnostics, statistics, what the tree should decide). The per-file
 * pipeline (pipeline/scan.h) drives the rules with these.
 */
#ifndef PREEMPTIFY_SCAN_RESULT_H
#define PREEMPTIFY_SCAN_RESULT_H

#include "analysis/tree.h"
#include "analysis/tree_shared.h"
#include "rules/finding.h"
#include "util/progress.h"

/*
 * The API generation a port aims at: --target of the commands that rewrite,
 * or the config's `target`. TARGET_UNSET only where neither chose one (the
 * CLI's options, the config): it means 2.6.
 */
enum target {
	TARGET_UNSET,
	TARGET_26,     /* "2.6": get_cpu_var(), __get_cpu_var(), cond_resched() */
	TARGET_MODERN, /* "modern": this_cpu_*, no __get_cpu_var() */
};

/* TARGET_26 for "2.6", TARGET_MODERN for "modern", else TARGET_UNSET. */
enum target target_parse(const char *s);

struct scan_options {
	unsigned rules;   /* bit (1u << rule_id) set = rule enabled */
	bool verbose;     /* also keep protected sites (finding.protected_site) */
	int jobs;         /* worker threads; <= 0 means online CPUs */
	bool no_prefilter; /* analyse files without any trigger token too */
	enum target target; /* the generation fixes are planned for: TARGET_26 or TARGET_MODERN */
	bool strict_stats; /* fix statistics counters too (else a note: a migration only miscounts) */
	/*
	 * Internal, 0 for every caller: how deep inside the verification of a
	 * plan this scan runs (pipeline/verify.h). Plans are verified below 2.
	 */
	unsigned verify_depth;
	/*
	 * Skip verifying fix plans (pipeline/verify.h): for output that shows no
	 * fix (plain text scan). Findings then say what the rules would plan.
	 */
	bool no_verify;
	/*
	 * The contexts the rest of the tree gives the files' shared functions
	 * (analysis/tree.h), or NULL: each file alone.
	 */
	const struct tree_context *tree;
	/* Collect scan_result.want: the functions whose context the tree should decide. */
	bool want;
	/*
	 * scan_files(): when set, an array aligned with its PATHS that gets
	 * each file's identifiers (tree_ids_of()), for scan_with_tree().
	 */
	struct tree_ids *ids;
	/* The tree's header macros that hide sites (scan_with_tree()), or NULL. */
	const tree_macro_vec *macros;
	/* scan_files(): told of each file done and its sites (util/progress.h), or NULL. */
	struct progress *progress;
	/* The tree's per-CPU arrays shared across files, with their verdicts, or NULL. */
	const tree_array_vec *arrays;
	/*
	 * scan_with_tree(): its INDEX holds every file that may name a
	 * non-static symbol (--context-root, or a kernel tree's root among the
	 * PATHs), so arrays shared across files may be converted.
	 */
	bool whole_tree;
	/* explain: arrays are judged as if every file of INDEX were scanned (the whole plan shown). */
	bool arrays_over_index;
	/* Also rewrite code already correct under 2.6 (`if (need_resched()) schedule();`); else a note. */
	bool modernize;
	/*
	 * P006: an allocation with GFP_KERNEL in a context proven atomic, its
	 * result checked for NULL at once, becomes GFP_ATOMIC (--fix-sleep);
	 * else a note says it would.
	 */
	bool fix_sleep;
	/*
	 * scan_files(): each file's result reused from here when its key
	 * matches (pipeline/scan_memo.c), stored here when not, and the tree
	 * index's analyses likewise (analysis/tree.h); NULL: all done afresh.
	 */
	const struct memo *memo;
};
#define SCAN_OPTIONS_INIT {((1u << RULE_COUNT) - 1), false, 0, false, TARGET_26, false, 0, false, NULL, false, NULL, NULL, NULL, NULL, false, false, false, false, NULL}

struct scan_stats {
	size_t files;      /* files walked */
	size_t bytes;      /* bytes read */
	size_t parsed;     /* files that passed the prefilter and were parsed */
	size_t per_rule[RULE_COUNT]; /* findings (not protected sites) per rule */
};

struct scan_result {
	finding_vec findings;     /* sorted by finding_cmp */
	diagnostic_vec diagnostics; /* sorted by file, line */
	struct scan_stats stats;
	tree_want_vec want;       /* with scan_options.want */
	struct tree_context *tree; /* the index that decided the verdicts, or NULL; owned */
	tree_macro_vec macros;    /* with scan_options.want: header macros hiding sites */
	tree_array_vec arrays;    /* with scan_options.want: non-static NR_CPUS arrays defined */
};
#define SCAN_RESULT_INIT {VEC_INIT, VEC_INIT, {0}, VEC_INIT, NULL, VEC_INIT, VEC_INIT}

/*
 * Keeps the findings I with KEEP_FINDING[I] and the diagnostics I with
 * KEEP_DIAG[I], in order; releases the others.
 */
void scan_result_keep(struct scan_result *out, const bool *keep_finding, const bool *keep_diag);
void scan_result_release(struct scan_result *r);

#endif
