/*
 * Regions and calls that work on this CPU's own state (its TLB, MMU context,
 * LDT, MSRs, local APIC: api_cpu_local()): which one stays outside a region,
 * running a region on to cover those after it, and what still refuses that.
 */
#include "rules/cpu_shared.h"

#include <stdlib.h>
#include <string.h>

struct local_scan {
	const struct ctx *c;
	uint32_t lo, hi;   /* the region */
	TSNode found;
};

static bool cpu_local_visit(TSNode n, void *ctx)
{
	struct local_scan *ls = ctx;
	if (!ts_node_is_null(ls->found))
		return false;
	if (ts_node_start_byte(n) >= ls->lo && ts_node_end_byte(n) <= ls->hi)
		return false; /* inside the region */
	const char *name;
	size_t len;
	if (ts_type_is(n, "call_expression") && (len = ts_call_name(n, ls->c->text, &name)) &&
	    api_cpu_local(name, len)) {
		ls->found = n;
		return false;
	}
	return true;
}

/*
 * Why a region from FIRST to LAST is not enough: a call acting on this
 * CPU's own state (api_cpu_local()) elsewhere in the function must stay on
 * the CPU the region pins, so the region would start or end in the wrong
 * place. NULL when there is none.
 */
char *cpu_local_outside(const struct ctx *c, TSNode first, TSNode last)
{
	const struct fn *f = analysis_fn_at(c->fa, ts_node_start_byte(first));
	if (!f)
		return NULL;
	struct local_scan ls = {c, ts_node_start_byte(first), ts_node_end_byte(last), ts_null()};
	ts_walk(f->body, cpu_local_visit, &ls);
	if (ts_node_is_null(ls.found))
		return NULL;
	char *name = node_text(c, ts_field(ls.found, "function"));
	char *why = xasprintf("%s() at line %u works on this CPU's own state but lies outside "
			      "the region (lines %u-%u); the region must cover it, fix by hand "
			      "(2.6 disables preemption around both)",
			      name, line_of(c, ls.found), line_of(c, first),
			      source_pos(c->src, ts_node_end_byte(last)).line);
	free(name);
	return why;
}

/*
 * Runs *LAST on to the last statement of FIRST's block that holds a call on
 * this CPU's own state (api_cpu_local()), and returns that call (a null node
 * when there is none): in `if (mask != (1 << smp_processor_id())) ipi(...);
 * local_flush_tlb_mm(mm);` the flush must stay on the CPU the region pins,
 * as 2.6.9 put preempt_disable() around both. plan_region() then checks the
 * longer region like any other (nothing in it may sleep, its exits get a
 * put); such calls before FIRST or in another block still refuse it.
 */
TSNode cpu_local_extend(const struct ctx *c, TSNode first, TSNode *last)
{
	TSNode call = ts_null();
	if (!ts_node_eq(ts_parent(first), ts_parent(*last)))
		return call;
	for (TSNode s = next_stmt(*last); !ts_node_is_null(s); s = next_stmt(s)) {
		struct local_scan ls = {c, 0, 0, ts_null()}; /* an empty region: look at all of S */
		ts_walk(s, cpu_local_visit, &ls);
		if (!ts_node_is_null(ls.found)) {
			*last = s;
			call = ls.found;
		}
	}
	return call;
}

struct outflow {
	const struct ctx *c;
	TSNode body;      /* the function's */
	uint32_t end;     /* where the region ends */
	const char *name; /* a variable the region sets */
	TSNode set, use;
};

static bool later_use_visit(TSNode n, void *ctx)
{
	struct outflow *o = ctx;
	if (!ts_node_is_null(o->use))
		return false;
	if (ts_type_is(n, "identifier") && ts_node_start_byte(n) >= o->end && ts_text_is(n, o->c->text, o->name))
		o->use = n;
	return true;
}

static bool region_set_visit(TSNode n, void *ctx)
{
	struct outflow *o = ctx;
	if (!ts_node_is_null(o->use))
		return false;
	TSNode v = ts_type_is(n, "assignment_expression") ? ts_field(n, "left") :
		   ts_type_is(n, "init_declarator") ? ts_field(n, "declarator") : ts_null();
	if (!ts_type_is(v, "identifier"))
		return true;
	char *name = node_text(o->c, v);
	o->name = name;
	o->set = n;
	ts_walk(o->body, later_use_visit, o);
	o->name = NULL;
	free(name);
	return true;
}

/*
 * Why a region that cpu_local_extend() ran on from FIRST to LAST still does
 * not pin the CPU long enough, or NULL: a variable it sets is used after it
 * (`vaddr = __fix_to_virt(FIX_KMAP_BEGIN + idx); local_flush_tlb_one(vaddr);
 * return (void *)vaddr;` hands out this CPU's slot, which 2.6.9's
 * kmap_atomic() keeps pinned until kunmap_atomic()).
 */
char *value_outlives(const struct ctx *c, TSNode first, TSNode last)
{
	const struct fn *f = analysis_fn_at(c->fa, ts_node_start_byte(first));
	if (!f)
		return xstrdup("the region is not in a function");
	struct outflow o = {c, f->body, ts_node_end_byte(last), NULL, ts_null(), ts_null()};
	for (TSNode s = first; !ts_node_is_null(s) && ts_node_is_null(o.use); s = next_stmt(s)) {
		ts_walk(s, region_set_visit, &o);
		if (ts_node_eq(s, last))
			break;
	}
	if (ts_node_is_null(o.use))
		return NULL;
	char *name = node_text(c, o.use);
	char *why = xasprintf("%s, set in the region at line %u, is used after it at line %u, so what the "
			      "region made on this CPU may be used on another; fix by hand", name,
			      line_of(c, o.set), line_of(c, o.use));
	free(name);
	return why;
}

/* WHY (owned), said of a region cpu_local_extend() ran on to CALL (or not, a null node). */
char *extended_refusal(const struct ctx *c, TSNode call, char *why)
{
	if (ts_node_is_null(call))
		return why;
	char *name = node_text(c, ts_field(call, "function"));
	char *r = xasprintf("the region runs on to %s() at line %u, which works on this CPU's own state, "
			    "and then %s", name, line_of(c, call), why);
	free(name);
	free(why);
	return r;
}

/* ---- one preempt_disable() region over a read and the calls on this CPU's state ---- */

struct own_span {
	const struct ctx *c;
	uint32_t lo, hi;  /* the calls' bytes */
	unsigned own;     /* calls on this CPU's own state seen */
};

/*
 * The calls a region over this CPU's own state must hold: api_cpu_local()
 * ones, and smp_call_function(), which runs its function on every CPU but
 * this one: with a local flush beside it, the two must see one CPU
 * (2.6.9's flush_tlb_mm() holds preemption off over both).
 */
static bool own_span_visit(TSNode n, void *ctx)
{
	struct own_span *os = ctx;
	const char *name;
	size_t len;
	if (!ts_type_is(n, "call_expression") || !(len = ts_call_name(n, os->c->text, &name)))
		return true;
	bool own = api_cpu_local(name, len);
	if (!own && !name_eq(name, len, "smp_call_function"))
		return true;
	os->own += own;
	if (ts_node_start_byte(n) < os->lo)
		os->lo = ts_node_start_byte(n);
	if (ts_node_end_byte(n) > os->hi)
		os->hi = ts_node_end_byte(n);
	return false;
}

/* The statement of BLOCK that holds byte AT. */
static TSNode block_child_at(TSNode block, uint32_t at)
{
	TSNode n = ts_node_descendant_for_byte_range(block, at, at);
	while (!ts_node_is_null(n) && !ts_node_eq(ts_parent(n), block))
		n = ts_parent(n);
	return n;
}

/* An edit of an earlier finding of this function inside [FROM, TO): its finding's line, or 0. */
static unsigned earlier_fix_inside(const struct ctx *c, uint32_t from, uint32_t to)
{
	for (size_t i = c->fn_first_finding; i < c->out->findings.len; i++) {
		const struct finding *o = &c->out->findings.items[i];
		for (size_t k = 0; k < o->edits.len; k++)
			if (o->edits.items[k].start.offset >= from && o->edits.items[k].start.offset < to)
				return o->pos.line;
	}
	return 0;
}

/*
 * The smallest run of statements of one block holding SITE and the calls
 * own_span_visit() names: [*FIRST, *LAST]. False when F has no call on
 * this CPU's own state.
 */
static bool own_span(const struct ctx *c, const struct fn *f, TSNode site, TSNode *first, TSNode *last)
{
	struct own_span os = {c, ts_node_start_byte(site), ts_node_end_byte(site), 0};
	ts_walk(f->body, own_span_visit, &os);
	if (!os.own)
		return false;
	TSNode b = ts_node_descendant_for_byte_range(f->body, os.lo, os.hi);
	while (!ts_node_is_null(b) && !ts_type_is(b, "compound_statement"))
		b = ts_parent(b);
	if (ts_node_is_null(b) || !node_within(b, f->body))
		return false;
	*first = block_child_at(b, os.lo);
	*last = block_child_at(b, os.hi - 1);
	return !ts_node_is_null(*first) && !ts_node_is_null(*last);
}

/* The region [FIRST, LAST] over the calls: NULL (edits into FD) or why not (owned). */
static char *own_region_at(const struct ctx *c, TSNode first, TSNode last, struct finding *fd)
{
	if (ts_type_is(first, "declaration"))
		return xasprintf("the region over the calls on this CPU's own state would start at the "
				 "declaration at line %u", line_of(c, first));
	unsigned other = earlier_fix_inside(c, ts_node_start_byte(first), ts_node_end_byte(last));
	if (other)
		return xasprintf("the region over the calls on this CPU's own state (lines %u-%u) would hold "
				 "the fix of line %u", line_of(c, first), line_of(c, last), other);
	char *no = value_outlives(c, first, last);
	if (!no)
		no = plan_region(c, first, last, NULL, "preempt_enable()", fd);
	if (no)
		return no;
	add_edit(c, fd, EDIT_INSERT_BEFORE, first, "preempt_disable();");
	return NULL;
}

/*
 * plan_own_region() (cpu_shared.h). When the smallest run cannot hold the
 * region (it would end with an #if group, start at a declaration, leave a
 * value it sets used after it), the statement of the enclosing block that
 * holds the run is tried, up to the function's body: 2.4 i386 alloc_ldt()'s
 * `if (reload) { load_LDT(pc); #ifdef CONFIG_SMP ... #endif }` is held whole.
 */
char *plan_own_region(const struct ctx *c, const struct fn *f, TSNode site, struct finding *fd)
{
	TSNode first, last;
	if (!own_span(c, f, site, &first, &last))
		return xstrdup("the function makes no call on this CPU's own state");
	char *no = own_region_at(c, first, last, fd);
	for (unsigned up = 0; no && up < 2 && !ts_node_eq(ts_parent(first), f->body); up++) {
		TSNode s = block_stmt(ts_parent(first));
		if (ts_node_is_null(s) || !node_within(s, f->body))
			break;
		if (fd)
			finding_unfixable(fd, NULL);
		char *wider = own_region_at(c, s, s, fd);
		if (!wider) {
			free(no);
			return NULL;
		}
		free(wider);
		first = last = s;
	}
	return no;
}

/* ---- a read whose own region failed ---- */

/* Is NO the refusal of a region that leaves a call on this CPU's own state outside? */
static bool own_state_refusal(const char *no)
{
	return strstr(no, "works on this CPU's own state but lies outside") != NULL;
}

/* Is NO the refusal of a read in an argument of a macro that may expand to nothing (region.c)? */
static bool vanish_refusal(const char *no)
{
	return strstr(no, "a macro that may expand to nothing") != NULL;
}

struct later_reads {
	struct ctx *c;
	uint32_t from, to;
	size_t finding;
};

static bool later_read_visit(TSNode n, void *ctx)
{
	struct later_reads *lr = ctx;
	if (ts_node_end_byte(n) <= lr->from || ts_node_start_byte(n) >= lr->to)
		return false;
	if (call_is(lr->c, n, "smp_processor_id") && ts_node_start_byte(n) >= lr->from) {
		struct covered cv = {ts_node_start_byte(n), lr->finding};
		vec_push(&lr->c->covered, cv);
	}
	return true;
}

void refuse_or_hold(struct ctx *c, const struct fn *f, TSNode call, struct finding *fd, char *no)
{
	if (!no || !fd) {
		free(no);
		return;
	}
	finding_unfixable(fd, NULL);
	if (vanish_refusal(no)) {
		char *held = plan_vanish_region(c, call, fd);
		if (!held) {
			fd->fix = FIX_PREEMPT_REGION;
			set_note(fd, xasprintf("%.*s, so no get goes inside it: preemption is held off around the "
					       "statement instead, and the read keeps smp_processor_id()",
					       (int)strcspn(no, ";"), no));
			free(no);
			return;
		}
		free(held);
		finding_unfixable(fd, NULL);
	}
	char *own = plan_own_region(c, f, call, fd);
	if (own && own_state_refusal(no)) {
		/* a region over the read and those calls was tried too: say why it is not made */
		unfixable(fd, xasprintf("%s; one region over the read and every such call is not made "
					"either: %s", no, own));
		free(no);
		free(own);
		return;
	}
	if (own) {
		free(own);
		unfixable(fd, no);
		return;
	}
	free(no);
	fd->fix = FIX_PREEMPT_REGION;
	struct later_reads lr = {c, ts_node_end_byte(call), 0, (size_t)(fd - c->out->findings.items)};
	unsigned from = 0;
	for (size_t k = 0; k < fd->edits.len; k++) {
		const struct edit *e = &fd->edits.items[k];
		if (e->op == EDIT_INSERT_BEFORE && strcmp(e->text, "preempt_disable();") == 0)
			from = e->start.line;
		if (e->end.offset > lr.to)
			lr.to = (uint32_t)e->end.offset;
	}
	ts_walk(f->body, later_read_visit, &lr);
	set_note(fd, xasprintf("%s() works on this CPU's own state: preemption is held off from line %u over "
			       "the read and those calls, which must all run on one CPU (2.6 disables "
			       "preemption around them); the reads keep smp_processor_id()", f->name, from));
}
