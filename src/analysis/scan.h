/*
 * The scan pipeline for one file: prefilter -> parse -> analyse -> findings.
 * scan_paths() runs it over many files in parallel with deterministic output.
 */
#ifndef PREEMPTIFY_SCAN_H
#define PREEMPTIFY_SCAN_H

#include "rules/finding.h"
#include "analysis/tree.h"
#include "parse/source.h"
#include "util/progress.h"

/*
 * A macro of one of the tree's headers that hides a site: a reschedule
 * test (MACRO_RESCHED) or a CPU read (MACRO_CPU). Its uses in other files
 * are sites, reported with this location.
 */
enum tree_macro_kind { MACRO_RESCHED, MACRO_CPU };
struct tree_macro {
	struct macro_def def; /* name, body, function_like (offset is the header's) */
	char *file;
	unsigned line;
	enum tree_macro_kind kind;
};
typedef VEC(struct tree_macro) tree_macro_vec;

/*
 * A file-scope `T x[NR_CPUS]` that is not static, defined in one file of
 * the tree and named in others: converted to DEFINE_PER_CPU in all of them
 * (DECLARE_PER_CPU for an extern, EXPORT_PER_CPU_SYMBOL) or in none.
 */
struct tree_array {
	char *name;
	char *type;    /* element type for DEFINE_PER_CPU */
	char *file;    /* the defining file */
	unsigned line;
	char *why_not; /* NULL: converted in every file naming it; else why in none */
	char *users;   /* the files naming it, ", "-separated (scan_with_tree()) */
	/*
	 * A struct of per-CPU arrays (`struct S { T f[NR_CPUS]; ... } x;`, soa.c):
	 * NAME is x, TYPE `struct S_percpu`; the fields FIELDS (" f g ") move
	 * there, to the per-CPU variable VAR. NULL members for an array.
	 */
	char *soa_tag, *soa_file;
	unsigned soa_line;
	char *soa_var, *soa_fields;
	/* explain (scan_with_tree() over an index): every file's edits, one per line, or NULL */
	char *plan;
	/* refused at its own declaration (WHY_NOT): only there to refuse the other definitions of NAME */
	bool only_dedupe;
};
typedef VEC(struct tree_array) tree_array_vec;

void tree_array_release(struct tree_array *t);

struct tree_ids;
/* The tree's structs of per-CPU arrays with one instance (soa.c), appended to A. */
void soa_discover(tree_array_vec *a, char *const *index, size_t n, const struct tree_ids *ids);

/*
 * The entry of T (may be NULL) named NAME, or NULL: the one defined in FILE
 * when there is one (arch variants of a name), else the first.
 */
const struct tree_array *tree_array_find(const tree_array_vec *t, const char *name, const char *file);

struct scan_options {
	unsigned rules;   /* bit (1u << rule_id) set = rule enabled */
	bool verbose;     /* also keep protected sites (finding.protected_site) */
	int jobs;         /* worker threads; <= 0 means online CPUs */
	bool no_prefilter; /* analyse files without any trigger token too */
	bool modern;       /* plan fixes for modern kernels (this_cpu_*, no __get_cpu_var) */
	bool strict_stats; /* fix statistics counters too (else a note: a migration only miscounts) */
	/*
	 * Internal, 0 for every caller: how deep inside the verification of a
	 * plan this scan runs (rules/verify.h). Plans are verified below 2.
	 */
	unsigned verify_depth;
	/*
	 * Skip verifying fix plans (rules/verify.h): for output that shows no
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
};
#define SCAN_OPTIONS_INIT {((1u << RULE_COUNT) - 1), false, 0, false, false, false, 0, false, NULL, false, NULL, NULL, NULL, NULL, false, false}

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
 * Scans one file already in memory. PATH is used for messages only.
 * Appends to OUT (unsorted). Returns 0, or -1 with the error slot set when
 * the file could not be analysed at all (the failure is also appended to
 * OUT as a diagnostic).
 */
int scan_buffer(const char *path, const char *src, size_t len,
		const struct scan_options *opts, struct scan_result *out);

/* Reads PATH and scans it. Same contract as scan_buffer(). */
int scan_file(const char *path, const struct scan_options *opts, struct scan_result *out);

/*
 * Scans every file of PATHS (already walked) with opts->jobs threads and
 * sorts the result. Returns the number of files that failed (I/O).
 */
int scan_files(char *const *paths, size_t n, const struct scan_options *opts,
	       struct scan_result *out);

/*
 * Builds the tree index (analysis/tree.h) over the N files of INDEX for
 * the functions OUT->want names, then scans again, with it and with the
 * header macros OUT->macros, the files of SCANNED (the files OUT came
 * from) whose verdicts they can change; their findings and diagnostics in
 * OUT are replaced, and the evidence of the others names what keeps their
 * function preemptible. OUT->tree keeps the index. IDS (may be NULL): N
 * entries aligned with INDEX, the identifiers already hashed, taken over.
 */
void scan_with_tree(char *const *index, size_t n, char *const *scanned, size_t nscanned,
		    const struct scan_options *opts, struct scan_result *out, struct tree_ids *ids);

/* True if SRC contains a trigger token (or a macro defined over one). */
bool scan_prefilter(const char *src, size_t len);

/*
 * Keeps the findings I with KEEP_FINDING[I] and the diagnostics I with
 * KEEP_DIAG[I], in order; releases the others.
 */
void scan_result_keep(struct scan_result *out, const bool *keep_finding, const bool *keep_diag);
void scan_result_release(struct scan_result *r);

#endif
