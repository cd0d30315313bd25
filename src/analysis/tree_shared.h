/*
 * What the files of one tree share beyond their functions' contexts: the
 * header macros that hide a site, and the per-CPU arrays defined in one
 * file and named in others. The pipeline (scan_with_tree()) collects them;
 * the rules read them through scan_options.
 */
#ifndef PREEMPTIFY_TREE_SHARED_H
#define PREEMPTIFY_TREE_SHARED_H

#include "parse/source.h"

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
	char *users;   /* the files naming it, ", "-separated (pipeline: scan_with_tree()) */
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
	/*
	 * Convertible, but every use of it by the running CPU in every file
	 * already has preemption off: left as it is (pipeline: scan_with_tree(),
	 * never with --modernize).
	 */
	bool kept;
};
typedef VEC(struct tree_array) tree_array_vec;

/* Frees what T owns. */
void tree_array_release(struct tree_array *t);

struct tree_ids;
/* The tree's structs of per-CPU arrays with one instance (soa.c), appended to A. */
void soa_discover(tree_array_vec *a, char *const *index, size_t n, const struct tree_ids *ids);

/*
 * The entry of T (may be NULL) named NAME, or NULL: the one defined in FILE
 * when there is one (arch variants of a name), else the first.
 */
const struct tree_array *tree_array_find(const tree_array_vec *t, const char *name, const char *file);

#endif
