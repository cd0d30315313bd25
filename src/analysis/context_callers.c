/*
 * Contexts from the callers: the static functions every caller in the file
 * calls with preemption off (a pessimistic fixed point over the file's
 * calls, context_callers_fixpoint()), and the walk from a function up
 * through its preemptible callers to the shared functions whose context
 * the tree decides (context_roots()).
 */
#include "analysis/flow.h"

#include <stdlib.h>
#include <string.h>

/* ---- every caller holds a lock ---------------------------------------------- */

/* A call CALL through a field (`adapter->clean_rx(...)`): a call to each function stored only there. */
static void field_calls(const struct file_analysis *fa, struct fn *f, TSNode call)
{
	TSNode fe = ts_field(call, "function");
	if (!ts_type_is(fe, "field_expression"))
		return;
	TSNode fld = ts_field(fe, "field");
	const char *src = fa->src->parse_text;
	size_t n = ts_node_end_byte(fld) - ts_node_start_byte(fld);
	bool have = false, off = false, irqs = false;
	for (size_t g = 0; g < fa->fns.len; g++) {
		const struct fn *callee = &fa->fns.items[g];
		if (!callee->via_private || strlen(callee->via_field) != n ||
		    memcmp(callee->via_field, src + ts_node_start_byte(fld), n) != 0)
			continue;
		if (!have) {
			off = flow_call_off(f, fa->src, ts_node_start_byte(call), NULL), have = true;
			irqs = off && flow_irqs_off_at(f, ts_node_start_byte(call));
		}
		struct call_site cs = {(uint32_t)g, call, off, irqs};
		vec_push(&f->calls, cs);
	}
}

/* F's calls to functions of this file, and whether preemption is off at each. */
static void collect_calls(struct file_analysis *fa, struct fn *f)
{
	const char *src = fa->src->parse_text;
	f->calls.len = 0;
	for (size_t n = 0; n < f->events.len; n++)
		for (size_t e = 0; e < f->events.items[n].len; e++) {
			TSNode call = f->events.items[n].items[e].call;
			const char *name;
			size_t len = ts_call_name(call, src, &name);
			int idx = len ? analysis_fn_index(fa, name, len) : -1;
			int cb = len ? api_callback_arg(name, len) : -1;
			TSNode args = ts_field(call, "arguments");
			if (idx < 0 && cb >= 0 && (uint32_t)cb < ts_node_named_child_count(args)) {
				TSNode a = ts_node_named_child(args, (uint32_t)cb); /* NF_HOOK(..., okfn) */
				if (ts_type_is(a, "identifier"))
					idx = analysis_fn_index(fa, src + ts_node_start_byte(a),
								ts_node_end_byte(a) - ts_node_start_byte(a));
			}
			if (idx < 0) {
				field_calls(fa, f, call);
				continue;
			}
			bool off = flow_call_off(f, fa->src, ts_node_start_byte(call), NULL);
			struct call_site cs = {(uint32_t)idx, call, off,
					       off && flow_irqs_off_at(f, ts_node_start_byte(call))};
			vec_push(&f->calls, cs);
		}
}

/* The calls to each function of the file: callers[first[g] .. first[g + 1]) call g. */
struct callers {
	size_t *first;
	struct caller_ref {
		uint32_t caller, call;
	} *refs;
	/*
	 * fails[g]: the walk up from function G through the calls made with
	 * preemption on meets a function that ends it (roots_fail_build()), so
	 * context_roots() of G fails; computed once a file, on first use.
	 */
	uint8_t *fails;
};

/* Built in one pass over every call (a counting sort by callee): linear in the calls. */
static void callers_build(const struct file_analysis *fa, struct callers *cl)
{
	size_t nf = fa->fns.len, total = 0;
	cl->first = xcalloc(nf + 2, sizeof *cl->first);
	for (size_t i = 0; i < nf; i++)
		for (size_t c = 0; c < fa->fns.items[i].calls.len; c++, total++)
			cl->first[fa->fns.items[i].calls.items[c].callee + 2]++;
	for (size_t g = 2; g < nf + 2; g++)
		cl->first[g] += cl->first[g - 1];
	cl->refs = xcalloc(total ? total : 1, sizeof *cl->refs);
	for (size_t i = 0; i < nf; i++)
		for (size_t c = 0; c < fa->fns.items[i].calls.len; c++) {
			uint32_t g = fa->fns.items[i].calls.items[c].callee;
			cl->refs[cl->first[g + 1]++] = (struct caller_ref){(uint32_t)i, (uint32_t)c};
		}
}

static void callers_release(struct callers *cl)
{
	free(cl->first);
	free(cl->refs);
	free(cl->fails);
	cl->first = NULL;
	cl->refs = NULL;
	cl->fails = NULL;
}

/*
 * True if every call to function G in the file is made with preemption off,
 * none from G itself. *NCALLS counts the calls seen; WHY gets the reasons of
 * the first three.
 */
static bool every_call_protected(const struct file_analysis *fa, const struct callers *cl, size_t g,
				 struct buf *why, size_t *ncalls)
{
	*ncalls = 0;
	for (size_t k = cl->first[g]; k < cl->first[g + 1]; k++) {
		const struct fn *caller = &fa->fns.items[cl->refs[k].caller];
		const struct call_site *cs = &caller->calls.items[cl->refs[k].call];
		if (!cs->protected_call || cl->refs[k].caller == g)
			return false;
		++*ncalls;
	}
	for (size_t k = cl->first[g]; k < cl->first[g + 1] && k < cl->first[g] + 3; k++) {
		const struct fn *caller = &fa->fns.items[cl->refs[k].caller];
		const struct call_site *cs = &caller->calls.items[cl->refs[k].call];
		buf_printf(why, "%sfrom %s() at line %u (", k > cl->first[g] ? "; " : "", caller->name,
			   source_pos(fa->src, ts_node_start_byte(cs->call)).line);
		flow_call_off(caller, fa->src, ts_node_start_byte(cs->call), why);
		buf_putc(why, ')');
	}
	return true;
}

/* Why every caller of CALLEE holds it atomic: NCALLS calls in the file (WHY says how), and the tree's (owned). */
static char *callers_reason(const struct fn *callee, const struct buf *why, size_t ncalls)
{
	if (callee->via_tree && !ncalls)
		return xasprintf("it is stored in %s %s; %s", fn_store_kind(callee), fn_store_name(callee),
				 callee->via_tree);
	char *via = callee->via_private ? xasprintf("it is stored only in field %s, which no other file of the tree "
						    "accesses; ", callee->via_field)
		    : callee->via_tree  ? xasprintf("it is stored in %s %s; %s; ", fn_store_kind(callee),
						    fn_store_name(callee), callee->via_tree)
					: xstrdup("");
	char *r = xasprintf("%severy call in this file is made with preemption off: %s%s", via, buf_cstr(why),
			    ncalls > 3 ? "; ..." : "");
	free(via);
	return r;
}

/* For explain: the first call with preemption on to each static function the fixed point left preemptible. */
static void callers_notes(struct file_analysis *fa, const struct callers *cl)
{
	for (size_t g = 0; g < fa->fns.len; g++) {
		struct fn *callee = &fa->fns.items[g];
		if (callee->ctx != CTX_PROCESS || !callee->is_static || callee->addr_taken)
			continue;
		for (size_t k = cl->first[g]; k < cl->first[g + 1]; k++) {
			const struct fn *caller = &fa->fns.items[cl->refs[k].caller];
			const struct call_site *cs = &caller->calls.items[cl->refs[k].call];
			if (cs->protected_call)
				continue;
			unsigned line = source_pos(fa->src, ts_node_start_byte(cs->call)).line;
			if (cl->refs[k].caller == g) {
				callee->callers_note = xasprintf("it calls itself at line %u with preemption on", line);
				break;
			}
			struct point_state ps = flow_state_at(caller, ts_node_start_byte(cs->call));
			struct buf why = BUF_INIT;
			point_explain(caller, &ps, &why);
			callee->callers_note = xasprintf("called from %s() at line %u with preemption on (%s)",
							 caller->name, line, buf_cstr(&why));
			buf_release(&why);
			break;
		}
	}
}

/* Is KEY a lock named by one identifier (kmap_lock), declared by neither F nor G? */
static bool plain_lock(const char *key, const struct fn *f, const struct fn *g)
{
	if (!strcmp(key, "irq") || !strcmp(key, "bh") || !strcmp(key, "preempt") || !*key)
		return false;
	for (const char *p = key; *p; p++)
		if (!is_ident_char(*p))
			return false;
	return !fn_declares(f, key) && !fn_declares(g, key);
}

/*
 * The lock every call to G in the file holds on every path, a variable of
 * the file's (one identifier, which names the same lock in G: no
 * parameter's field), or NULL (owned).
 */
static char *common_lock(const struct file_analysis *fa, const struct callers *cl, size_t g)
{
	const struct fn *callee = &fa->fns.items[g];
	if (callee->addr_taken || callee->via_tree || cl->first[g] == cl->first[g + 1])
		return NULL;
	name_vec common = VEC_INIT; /* the callers' strings */
	for (size_t k = cl->first[g]; k < cl->first[g + 1]; k++) {
		const struct fn *caller = &fa->fns.items[cl->refs[k].caller];
		name_vec held = VEC_INIT;
		flow_held_keys(caller, ts_node_start_byte(caller->calls.items[cl->refs[k].call].call), false, &held);
		size_t w = 0;
		if (k == cl->first[g]) {
			for (size_t i = 0; i < held.len; i++)
				if (plain_lock(held.items[i], caller, callee))
					vec_push(&common, held.items[i]);
			w = common.len;
		}
		for (size_t i = 0; k != cl->first[g] && i < common.len; i++) {
			bool in = false;
			for (size_t j = 0; j < held.len && !in; j++)
				in = strcmp(held.items[j], common.items[i]) == 0;
			if (in && plain_lock(common.items[i], caller, callee))
				common.items[w++] = common.items[i];
		}
		common.len = w;
		vec_release(&held);
	}
	char *r = common.len ? xstrdup(common.items[0]) : NULL;
	vec_release(&common);
	return r;
}

/*
 * Does every call to G in the file, one at least, have interrupts off? Only
 * for a static function whose address is not taken: its callers are these.
 */
static bool every_call_irqs_off(const struct file_analysis *fa, const struct callers *cl, size_t g)
{
	const struct fn *callee = &fa->fns.items[g];
	if (!callee->is_static || callee->addr_taken || callee->via_tree || callee->via_root ||
	    analysis_fn_is_shared(fa, callee) || cl->first[g] == cl->first[g + 1])
		return false;
	for (size_t k = cl->first[g]; k < cl->first[g + 1]; k++) {
		const struct fn *caller = &fa->fns.items[cl->refs[k].caller];
		if (!caller->calls.items[cl->refs[k].call].irqs_off || cl->refs[k].caller == g)
			return false;
	}
	return true;
}

/* Marks the functions every caller enters with interrupts off (entry_irqs_off); true if one changed. */
static bool callers_irqs_off(struct file_analysis *fa, const struct callers *cl, uint8_t *dirty)
{
	bool changed = false;
	for (size_t g = 0; g < fa->fns.len; g++) {
		struct fn *callee = &fa->fns.items[g];
		if (callee->ctx != CTX_CALLERS || callee->entry_irqs_off || !every_call_irqs_off(fa, cl, g))
			continue;
		callee->entry_irqs_off = true;
		char *r = xasprintf("%s; every call has interrupts off, and a plain unlock of the caller's lock "
				    "leaves them off", callee->ctx_reason);
		free(callee->ctx_reason);
		callee->ctx_reason = r;
		dirty[g] = 1;
		changed = true;
	}
	return changed;
}

void context_callers_fixpoint(struct file_analysis *fa)
{
	size_t nf = fa->fns.len;
	uint8_t *dirty = xcalloc(nf ? nf : 1, 1);
	memset(dirty, 1, nf);
	struct callers *cl = xcalloc(1, sizeof *cl);
	for (size_t round = 0; round <= 2 * nf; round++) { /* each function changes twice at most */
		for (size_t i = 0; i < nf; i++)
			if (dirty[i]) {
				flow_run(&fa->fns.items[i]);
				collect_calls(fa, &fa->fns.items[i]);
				dirty[i] = 0;
			}
		bool changed = false;
		callers_release(cl);
		callers_build(fa, cl);
		for (size_t g = 0; g < nf; g++) {
			struct fn *callee = &fa->fns.items[g];
			if (callee->ctx != CTX_PROCESS || !callee->is_static || (callee->addr_taken && !callee->via_tree) ||
			    analysis_fn_is_shared(fa, callee))
				continue;
			size_t ncalls;
			struct buf why = BUF_INIT;
			if (every_call_protected(fa, cl, g, &why, &ncalls) && (ncalls > 0 || callee->via_tree)) {
				callee->ctx = CTX_CALLERS;
				free(callee->ctx_reason);
				callee->ctx_reason = callers_reason(callee, &why, ncalls);
				if (!callee->entry_lock)
					callee->entry_lock = common_lock(fa, cl, g);
				dirty[g] = 1;
				changed = true;
			}
			buf_release(&why);
		}
		changed = callers_irqs_off(fa, cl, dirty) || changed;
		if (!changed)
			break;
	}
	fa->callers = cl; /* the final calls, for context_roots() */
	free(dirty);
	callers_notes(fa, cl);
}

void context_release(struct file_analysis *fa)
{
	if (fa->callers)
		callers_release(fa->callers);
	free(fa->callers);
	fa->callers = NULL;
}

bool context_roots(const struct file_analysis *fa, const struct fn *f, name_vec *out)
{
	bool sleeps;
	return context_roots_sleep(fa, f, out, &sleeps);
}

/*
 * A boot or bring-up entry (api_bound_entry(): smp_callin(), smp_boot_cpus()
 * ...) ends a walk up the callers where the tree's weighing of the calls
 * knows it: bound to its CPU, whatever its own callers (2.6.9 i386's
 * start_secondary() is reached through its address).
 */
static bool bound_entry(const struct fn *f)
{
	return api_bound_entry(f->name, strlen(f->name)) != NULL;
}

/*
 * Does function G end the walk of context_roots_sleep() when it reaches
 * it? Its address is taken, or it is a static function nobody calls, or a
 * caller that is atomic at entry calls it with preemption on; never a
 * boot or bring-up entry.
 */
static bool roots_stop_at(const struct file_analysis *fa, const struct callers *cl, size_t g)
{
	const struct fn *fg = &fa->fns.items[g];
	if (bound_entry(fg))
		return false;
	if ((fg->addr_taken && !fg->via_root) ||
	    (!analysis_fn_is_shared(fa, fg) && !fg->via_root && cl->first[g] == cl->first[g + 1]))
		return true;
	for (size_t k = cl->first[g]; k < cl->first[g + 1]; k++) {
		const struct fn *caller = &fa->fns.items[cl->refs[k].caller];
		if (!caller->calls.items[cl->refs[k].call].protected_call && caller->ctx != CTX_PROCESS)
			return true;
	}
	return false;
}

/*
 * cl->fails for every function at once: a function fails when it stops the
 * walk or one of the functions calling it with preemption on fails. Down
 * the call edges from every stopping function, each edge once: linear, where
 * a walk from each function was quadratic on long chains of callers.
 */
static void roots_fail_build(const struct file_analysis *fa, struct callers *cl)
{
	size_t nf = fa->fns.len, nrefs = cl->first[nf];
	size_t *first = xcalloc(nf + 1, sizeof *first); /* callees by caller: a counting sort */
	uint32_t *callee = xcalloc(nrefs ? nrefs : 1, sizeof *callee);
	for (size_t k = 0; k < nrefs; k++)
		first[cl->refs[k].caller + 1]++;
	for (size_t g = 0; g < nf; g++)
		first[g + 1] += first[g];
	size_t *fill = xcalloc(nf ? nf : 1, sizeof *fill);
	for (size_t g = 0; g < nf; g++)
		for (size_t k = cl->first[g]; k < cl->first[g + 1]; k++) {
			uint32_t c = cl->refs[k].caller;
			if (!fa->fns.items[c].calls.items[cl->refs[k].call].protected_call)
				callee[first[c] + fill[c]++] = (uint32_t)g;
		}
	cl->fails = xcalloc(nf ? nf : 1, 1);
	VEC(size_t) work = VEC_INIT;
	for (size_t g = 0; g < nf; g++)
		if (roots_stop_at(fa, cl, g)) {
			cl->fails[g] = 1;
			vec_push(&work, g);
		}
	while (work.len) {
		size_t c = work.items[--work.len];
		for (size_t e = first[c]; e < first[c] + fill[c]; e++)
			if (!cl->fails[callee[e]] && !bound_entry(&fa->fns.items[callee[e]])) {
				cl->fails[callee[e]] = 1;
				vec_push(&work, (size_t)callee[e]);
			}
	}
	vec_release(&work);
	free(first);
	free(callee);
	free(fill);
}

bool context_roots_sleep(const struct file_analysis *fa, const struct fn *f, name_vec *out, bool *sleeps)
{
	*sleeps = false;
	size_t nf = fa->fns.len, start = (size_t)(f - fa->fns.items);
	struct callers *cl = fa->callers;
	if (!cl)
		return false;
	if (!cl->fails)
		roots_fail_build(fa, cl);
	if (cl->fails[start])
		return false; /* the walk below would end in failure: its roots are not used */
	/*
	 * Breadth first from F through the calls made with preemption on, each
	 * function once: the shared functions reached are the roots. A function
	 * whose address is taken (not as an atomic registration), or a static
	 * one nobody calls, ends a path nowhere the tree can settle.
	 */
	uint8_t *seen = xcalloc(nf, 1);
	VEC(size_t) queue = VEC_INIT;
	vec_push(&queue, start);
	seen[start] = 1;
	bool ok = true;
	for (size_t q = 0; q < queue.len && ok; q++) {
		size_t g = queue.items[q];
		const struct fn *fg = &fa->fns.items[g];
		if (g != start && bound_entry(fg)) {
			if (analysis_fn_is_shared(fa, fg))
				vec_push(out, fg->name); /* the tree weighs its calls: bound */
			continue;
		}
		if (fg->addr_taken && !fg->via_root) {
			ok = false;
			break;
		}
		/* an entry sleeps only when its bring-up is over: entering the idle loop */
		*sleeps = *sleeps || (fg->sleeps != SLEEP_NO && !api_bound_entry(fg->name, strlen(fg->name)));
		bool shared = analysis_fn_is_shared(fa, fg);
		if (shared)
			vec_push(out, fg->name);
		else if (fg->via_root)
			vec_push(out, fg->via_root); /* the calls through its field: the tree follows them */
		else if (cl->first[g] == cl->first[g + 1]) {
			ok = false;
			break;
		}
		for (size_t k = cl->first[g]; k < cl->first[g + 1]; k++) {
			uint32_t c = cl->refs[k].caller;
			const struct fn *caller = &fa->fns.items[c];
			if (caller->calls.items[cl->refs[k].call].protected_call || seen[c])
				continue;
			if (caller->ctx != CTX_PROCESS) {
				ok = false; /* atomic at entry, yet the call is not: released before it */
				break;
			}
			seen[c] = 1;
			vec_push(&queue, (size_t)c);
		}
	}
	vec_release(&queue);
	free(seen);
	return ok;
}
