/*
 * Verify (verify.h): the per-function re-analysis that judges the text a
 * plan produces, and the plan's rounds; the refusals known from the edits
 * alone and the text the edits make are verify_edits.c.
 */
#include "pipeline/verify.h"
#include "pipeline/verify_internal.h"
#include "parse/ctext.h"

#include <stdlib.h>
#include <string.h>

#include "util/interrupt.h"
#include <tree_sitter/api.h>

#include "parse/line_table.h"
#include "parse/source.h"
#include "parse/ts.h"
#include "rules/rules.h"

/* A P006/P007 finding of NW that OLD does not have (as a multiset), or NULL. */
static const char *new_problem(const struct fn_fact *nw, const struct fn_fact *old)
{
	bool *used = xcalloc(old->bad.len + 1, sizeof *used);
	const char *found = NULL;
	for (size_t i = 0; i < nw->bad.len && !found; i++) {
		size_t k = 0;
		while (k < old->bad.len && (used[k] || strcmp(old->bad.items[k], nw->bad.items[i]) != 0))
			k++;
		if (k < old->bad.len)
			used[k] = true;
		else
			found = nw->bad.items[i];
	}
	free(used);
	return found;
}

/* ---- the re-analysis verdict -------------------------------------------- */

size_t verify_refuse_fn(const char *fn, char *reason, struct finding *const *applied, size_t n,
			char **why)
{
	size_t hit = 0, refused = 0;
	for (size_t i = 0; i < n; i++)
		hit += fn_name_eq(applied[i]->function, fn);
	for (size_t i = 0; i < n; i++) {
		if ((hit && !fn_name_eq(applied[i]->function, fn)) || why[i])
			continue;
		why[i] = xstrdup(reason);
		refused++;
	}
	free(reason);
	return refused;
}

static const char *fn_label(const char *fn)
{
	return fn ? fn : "(file scope)";
}

/* Why function A of the new text (B in the old) fails, or NULL. APPLIED: fixes made in it. */
static char *fault(const struct fn_fact *a, const struct fn_fact *b, bool fixpoint,
		   unsigned applied)
{
	const char *bad;
	if (a->errors > b->errors)
		return xasprintf("the rewritten %s() would not parse (%u new parse error%s, line %u)",
				 fn_label(a->name), a->errors - b->errors,
				 a->errors - b->errors == 1 ? "" : "s", a->error_line);
	if ((bad = new_problem(a, b)))
		return xasprintf("re-analysis of the rewritten %s() finds a new problem: %s",
				 fn_label(a->name), bad);
	/* what is left to fix may only be what this plan left alone */
	if (fixpoint && a->fixable + applied > b->fixable)
		return xasprintf("the rewrite of %s() is not a fixpoint: re-analysis would plan "
				 "another change there, so a second run would change it again",
				 fn_label(a->name));
	return NULL;
}

/*
 * A file-scope change planned only after the rewrite (a P008 conversion
 * that the fixed uses of its array make possible): the fixes of per-CPU
 * array uses (P001, P002) are refused, so a second run sees what this one
 * did; without any, every fix, as for another function. Takes REASON.
 */
static size_t refuse_array_uses(char *reason, struct finding *const *applied, size_t n, char **why)
{
	size_t refused = 0;
	for (size_t i = 0; i < n; i++) {
		if (why[i] || !rule_has(applied[i]->rule, PROP_ARRAY_SLOT))
			continue;
		why[i] = xasprintf("%s (fixed, this use would let the array become DEFINE_PER_CPU on a second run)",
				   reason);
		refused++;
	}
	if (refused) {
		free(reason);
		return refused;
	}
	return verify_refuse_fn(NULL, reason, applied, n, why);
}

/* ---- a DEFINE_PER_CPU conversion that left a subscript ------------------- */

/* The NAME of "[static ]DEFINE_PER_CPU(T, NAME);" or DECLARE_PER_CPU, owned, or NULL. */
static char *per_cpu_decl_name(const char *t)
{
	const char *p = strstr(t, "DEFINE_PER_CPU(");
	if (!p)
		p = strstr(t, "DECLARE_PER_CPU(");
	const char *close = p ? strrchr(p, ')') : NULL;
	if (!close)
		return NULL;
	const char *e = close;
	while (e > p && !is_ident_char(e[-1]))
		e--;
	const char *b = e;
	while (b > p && is_ident_char(b[-1]))
		b--;
	return b < e && (b[-1] == ' ' || b[-1] == ',') ? xstrndup(b, (size_t)(e - b)) : NULL;
}

struct subscript_find {
	const char *text;
	const char *name;
	TSNode found;
};

static bool subscript_visit(TSNode n, void *ctx)
{
	struct subscript_find *sf = ctx;
	if (!ts_node_is_null(sf->found))
		return false;
	if (ts_type_is(n, "subscript_expression") && ts_text_is(ts_field(n, "argument"), sf->text, sf->name) &&
	    !ts_in_if0_arm(sf->text, n))
		sf->found = n;
	return ts_node_is_null(sf->found);
}

/* Line (1-based) of the first NAME[...] in TEXT outside #if 0 arms, or 0. */
static unsigned subscript_line(const char *text, size_t len, const char *name)
{
	struct source src;
	source_init(&src, "", xstrndup(text, len), len);
	TSTree *tree = ts_parse_c(src.parse_text, len);
	struct subscript_find sf = {src.parse_text, name, ts_null()};
	if (tree)
		ts_walk(ts_tree_root_node(tree), subscript_visit, &sf);
	unsigned line = ts_node_is_null(sf.found) ? 0 : source_pos(&src, ts_node_start_byte(sf.found)).line;
	ts_parent_forget(tree);
	ts_tree_delete(tree);
	source_release(&src);
	return line;
}

/*
 * A name the applied findings make DEFINE_PER_CPU (or DECLARE_PER_CPU)
 * that NEW still subscripts: the conversion missed a use, and the file
 * would not compile. Every define-per-cpu finding is refused (they convert
 * the array together). Returns the number refused.
 */
static size_t refuse_leftover_subscripts(const char *text, size_t len, struct finding *const *applied,
					 size_t n, char **why)
{
	VEC(char *) names = VEC_INIT;
	for (size_t i = 0; i < n; i++) {
		if (applied[i]->fix != FIX_DEFINE_PER_CPU)
			continue;
		if (applied[i]->array)
			vec_push(&names, xstrdup(applied[i]->array));
		for (size_t k = 0; k < applied[i]->edits.len; k++) {
			const struct edit *e = &applied[i]->edits.items[k];
			char *nm = e->op == EDIT_REPLACE && e->text ? per_cpu_decl_name(e->text) : NULL;
			if (nm)
				vec_push(&names, nm);
		}
	}
	size_t refused = 0;
	for (size_t k = 0; k < names.len && !refused; k++) {
		unsigned line = subscript_line(text, len, names.items[k]);
		for (size_t i = 0; line && i < n; i++) {
			if (why[i] || applied[i]->fix != FIX_DEFINE_PER_CPU)
				continue;
			why[i] = xasprintf("%s[...] is left at line %u after the conversion to DEFINE_PER_CPU "
					   "(a use the conversion would miss; it would not compile)",
					   names.items[k], line);
			refused++;
		}
	}
	for (size_t k = 0; k < names.len; k++)
		free(names.items[k]);
	vec_release(&names);
	return refused;
}

/* An applied finding's function and its index in APPLIED. */
struct named {
	const char *name; /* NULL: file scope */
	size_t idx;
};

/* By function name, NULL (file scope) first, then by index. */
static int named_cmp(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = !x->name || !y->name ? (x->name != NULL) - (y->name != NULL) : strcmp(x->name, y->name);
	return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

/* The first of the N entries of SORTED in function NAME (N when none): a bisection. */
static size_t named_first(const struct named *sorted, size_t n, const char *name)
{
	struct named key = {name, 0};
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (named_cmp(&sorted[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool named_is(const struct named *e, const char *name)
{
	return fn_name_eq(e->name, name);
}

/*
 * verify_refuse_fn() for a function FN that holds DONE > 0 of the applied
 * findings, found through SORTED (APPLIED's functions, sorted): only its
 * own are refused, so no pass over every finding is needed. Takes REASON.
 */
static size_t refuse_own(const struct named *sorted, size_t n, const char *fn, char *reason,
			 char **why)
{
	size_t refused = 0;
	for (size_t i = named_first(sorted, n, fn); i < n && named_is(&sorted[i], fn); i++)
		if (!why[sorted[i].idx]) {
			why[sorted[i].idx] = xstrdup(reason);
			refused++;
		}
	free(reason);
	return refused;
}

/*
 * Judges NEW against the facts OF of the old text; with FIXPOINT, also
 * that nothing new becomes fixable (OF's fixable counts what the plan may
 * leave). Returns the number of APPLIED findings refused (WHY set).
 */
static size_t reanalyse(fact_vec *of, const char *path, const char *new_text, size_t new_len,
			struct finding *const *applied, size_t n, const struct scan_options *opts,
			bool fixpoint, char **why)
{
	fact_vec nf = FACT_VEC_INIT;
	size_t refused = refuse_leftover_subscripts(new_text, new_len, applied, n, why);
	parse_facts(path, new_text, new_len, &nf, NULL);
	scan_facts(path, new_text, new_len, opts, fixpoint ? DEPTH_SECOND : DEPTH_PLAIN, fixpoint,
		   &nf);
	/* the applied findings by function, found by bisection: a pass per function was quadratic */
	struct named *names = xmalloc((n ? n : 1) * sizeof *names);
	for (size_t k = 0; k < n; k++)
		names[k] = (struct named){applied[k]->function, k};
	qsort(names, n, sizeof *names, named_cmp);
	for (size_t i = 0; i < nf.len; i++) {
		const struct fn_fact *a = &nf.items[i];
		unsigned done = 0;
		for (size_t k = named_first(names, n, a->name); k < n && named_is(&names[k], a->name); k++)
			done++;
		char *r = fault(a, fact_for(of, a->name), fixpoint, done);
		if (r && !a->name && !done && fixpoint)
			refused += refuse_array_uses(r, applied, n, why);
		else if (r && done)
			refused += refuse_own(names, n, a->name, r, why);
		else if (r)
			refused += verify_refuse_fn(a->name, r, applied, n, why);
	}
	free(names);
	facts_release(&nf);
	return refused;
}

size_t verify_reanalysis(const char *path, const char *old_text, size_t old_len,
			 const char *new_text, size_t new_len, struct finding *const *applied,
			 size_t n, const struct scan_options *opts, char **why)
{
	fact_vec of = FACT_VEC_INIT;
	parse_facts(path, old_text, old_len, &of, NULL);
	scan_facts(path, old_text, old_len, opts, DEPTH_PLAIN, false, &of);
	size_t refused = reanalyse(&of, path, new_text, new_len, applied, n, opts, false, why);
	facts_release(&of);
	return refused;
}

/* ---- the plan ------------------------------------------------------------- */

/* Whether the error span E meets [LO, HI) (a zero-width MISSING node meets what holds it). */
static bool span_meets(const struct span *e, size_t lo, size_t hi)
{
	return e->start < hi && (e->end > lo || (e->end == e->start && e->start >= lo));
}

/*
 * The first error span that meets F's site or one of its edits, or NULL.
 * Each edit alone: an array's conversion edits uses far apart in the file,
 * and an error between them is no part of the change. (An error elsewhere
 * in a changed function is not enough: on the 2.4 tree most of those are
 * macros spatch parses, and refusing them lost 12 correct hunks.)
 */
static const struct span *error_near(const struct finding *f, const span_vec *errs)
{
	for (size_t i = 0; i < errs->len; i++) {
		const struct span *e = &errs->items[i];
		bool meets = span_meets(e, f->pos.offset, f->pos.offset + 1);
		for (size_t k = 0; k < f->edits.len && !meets; k++) {
			const struct edit *x = &f->edits.items[k];
			meets = span_meets(e, x->start.offset, x->end.offset + (x->end.offset == x->start.offset));
		}
		if (meets)
			return e;
	}
	return NULL;
}

/*
 * Refusals from the edits alone and from code the grammar could not parse
 * (sets WHY); the old text's parse facts into OF, with per function the
 * number of fixes that pass.
 */
static void precheck(const char *path, const char *text, size_t len, struct finding *const *plan,
		     size_t n, char **why, fact_vec *of)
{
	struct lines l;
	span_vec errs = VEC_INIT;
	lines_init(&l, text, len);
	parse_facts(path, text, len, of, &errs);
	for (size_t i = 0; i < n; i++) {
		const struct finding *f = plan[i];
		for (size_t k = 0; k < f->edits.len && !why[i]; k++)
			why[i] = verify_edit_refusal(&f->edits.items[k], &l);
		const struct span *e = why[i] ? NULL : error_near(f, &errs);
		if (e) {
			unsigned line, col;
			lines_pos(&l, e->start, &line, &col);
			why[i] = xasprintf("the C grammar could not parse the code at line %u that "
					   "the change touches; a rewrite there cannot be checked, "
					   "fix it by hand", line);
		}
		/* spatch parses a function whole, #if 0 arms included: one part it cannot
		 * read and it leaves the function as it is */
		const struct fn_fact *ff = why[i] || !f->function ? NULL : fact_for(of, f->function);
		if (ff && ff->not_c)
			why[i] = xasprintf("%s() holds text that is not C (line %u), which spatch cannot "
					   "parse; fix it by hand", f->function, ff->not_c);
		else if (ff && ff->kr)
			why[i] = xasprintf("%s() is a K&R-style definition (parameters declared after the "
					   "list), which spatch cannot parse; fix it by hand", f->function);
		if (!why[i])
			fact_for(of, f->function)->fixable++;
	}
	vec_release(&errs);
	lines_release(&l);
}

/* define-per-cpu findings convert their file's arrays together, or not at all. */
static void per_cpu_together(struct finding *const *plan, size_t n, char **why)
{
	size_t failed = n;
	for (size_t i = 0; i < n && failed == n; i++)
		if (why[i] && plan[i]->fix == FIX_DEFINE_PER_CPU)
			failed = i;
	if (failed == n)
		return;
	for (size_t i = 0; i < n; i++)
		if (!why[i] && plan[i]->fix == FIX_DEFINE_PER_CPU)
			why[i] = xasprintf("the DEFINE_PER_CPU conversion of this file is refused at "
					   "line %u, so none of its sites is converted",
					   plan[failed]->pos.line);
}

static bool opens_region(struct finding *const *plan, size_t n, char *const *why)
{
	for (size_t i = 0; i < n; i++)
		if (!why[i] && fix_opens_region(plan[i]->fix))
			return true;
	return false;
}

static bool fixable(const struct finding *f)
{
	return f->fix != FIX_NONE && f->edits.len > 0 && !f->protected_site;
}

/* Re-analyses the text the live findings make; sets WHY for those refused. True if any. */
static bool round_refuses(const char *path, const char *text, size_t len,
			  const struct scan_options *opts, struct finding *const *plan, size_t n,
			  const bool *active, char **why, fact_vec *of)
{
	size_t new_len, refused = 0;
	char *nt = verify_apply_edits(text, len, plan, n, active, why, &new_len);
	for (size_t i = 0; i < n; i++)
		refused += active[i] && why[i];
	if (!refused) {
		VEC(struct finding *) applied = VEC_INIT;
		VEC(size_t) idx = VEC_INIT;
		for (size_t i = 0; i < n; i++)
			if (active[i])
				vec_push(&applied, plan[i]), vec_push(&idx, i);
		char **w = xcalloc(applied.len, sizeof *w);
		refused = reanalyse(of, path, nt, new_len, applied.items, applied.len, opts, true, w);
		for (size_t k = 0; k < applied.len; k++)
			why[idx.items[k]] = w[k];
		free(w);
		vec_release(&applied);
		vec_release(&idx);
	}
	free(nt);
	return refused > 0;
}

bool verify_note_stale_slot(struct finding *fd, const struct finding *r)
{
	/* R must be the finding of the read itself: the rule deciding CPU reads */
	if (!fd->cpu_read_line || fd->fix == FIX_NONE || (int)r->rule != rules_site_rule("cpu_read") ||
	    r->pos.line != fd->cpu_read_line || !r->function || !fd->function || strcmp(r->function, fd->function) != 0)
		return false;
	free(fd->fix_note);
	fd->fix_note = xasprintf("per_cpu() only converts the storage: the CPU number read at line %u is not "
				 "fixed (see its P003), so the slot may still be another CPU's; fix that read by "
				 "hand", fd->cpu_read_line);
	return true;
}

void verify_plan(const char *path, const char *text, size_t len, const struct scan_options *opts,
		 struct scan_result *out, size_t first)
{
	VEC(struct finding *) plan = VEC_INIT;
	fact_vec of = FACT_VEC_INIT;
	for (size_t i = first; i < out->findings.len; i++)
		if (fixable(&out->findings.items[i]))
			vec_push(&plan, &out->findings.items[i]);
	size_t n = plan.len;
	if (!n)
		return;
	char **why = xcalloc(n, sizeof *why);
	bool *active = xcalloc(n, sizeof *active);
	precheck(path, text, len, plan.items, n, why, &of);
	/*
	 * Inside another plan's verification the pre-checks are what counts;
	 * and only fixes that open a region (get/put, per-CPU access) can
	 * unbalance a function, move a sleep inside one or leave a new site:
	 * the others replace a test or add a call in place.
	 */
	if (opts->verify_depth == DEPTH_PLAN && opens_region(plan.items, n, why)) {
		unsigned guards = rule_mask(PROP_GUARD);
		if ((opts->rules & guards) == guards)
			add_findings(out->findings.items + first, out->findings.len - first, opts, false,
				     &of);
		else
			scan_facts(path, text, len, opts, DEPTH_PLAIN, false, &of);
		/* Each round refuses at least one more finding, or ends. */
		for (;;) {
			per_cpu_together(plan.items, n, why);
			size_t live = 0;
			for (size_t i = 0; i < n; i++)
				live += active[i] = !why[i];
			if (!live || interrupted() || !round_refuses(path, text, len, opts, plan.items, n, active, why, &of))
				break;
		}
	}
	per_cpu_together(plan.items, n, why);
	for (size_t i = 0; i < n; i++)
		if (why[i])
			finding_unfixable(plan.items[i], xasprintf("not rewritten: %s", why[i]));
	for (size_t i = 0; i < n; i++)
		for (size_t k = first; plan.items[i]->cpu_read_line && k < out->findings.len; k++)
			if (out->findings.items[k].fix == FIX_NONE &&
			    verify_note_stale_slot(plan.items[i], &out->findings.items[k]))
				break;
	for (size_t i = 0; i < n; i++)
		free(why[i]);
	free(why);
	free(active);
	facts_release(&of);
	vec_release(&plan);
}
