/*
 * The get_cpu()/put_cpu() region of a CPU read (check_cpu_read.c): a
 * region an earlier finding opened that covers the read already, a
 * guard's region, or a new one over the read's statement and the plain
 * reads that follow it.
 */
#include "rules/cpu_read_internal.h"

#include <stdlib.h>
#include <string.h>

/* Is N inside a return statement (below F's body)? */
static bool in_return(const struct fn *f, TSNode n)
{
	for (TSNode p = n; !ts_node_is_null(p) && !ts_node_eq(p, f->body); p = ts_parent(p))
		if (ts_type_is(p, "return_statement"))
			return true;
	return false;
}

struct label_find {
	uint32_t from, to;
	bool found;
};

static bool label_visit(TSNode n, void *ctx)
{
	struct label_find *lf = ctx;
	if (ts_type_is(n, "labeled_statement") && ts_node_start_byte(n) >= lf->from &&
	    ts_node_start_byte(n) < lf->to)
		lf->found = true;
	return !lf->found;
}

/*
 * The finding of this function whose get_cpu()/put_cpu() region already
 * covers CALL and the uses USES[0..n) of the number it reads, or NULL.
 * Such a read stays smp_processor_id(), which 2.6 allows with preemption
 * off: a second get_cpu() there would nest a pair for nothing (and one
 * closing after the same statement is the same edit as the first's put_cpu(),
 * which would leave preemption off). Covered: after the region's first
 * statement, before the end of its last; not in a return statement (the
 * put_cpu() goes before it); no label in the region (a jump from outside
 * would skip the get_cpu()).
 */
const struct finding *covering_region(const struct ctx *c, const struct fn *f, TSNode call,
				       const TSNode *uses, size_t n)
{
	if (in_return(f, call))
		return NULL;
	for (size_t k = 0; k < n; k++)
		if (in_return(f, uses[k]))
			return NULL;
	uint32_t at = ts_node_start_byte(call), last_use = ts_node_end_byte(call);
	for (size_t k = 0; k < n; k++)
		if (ts_node_end_byte(uses[k]) > last_use)
			last_use = ts_node_end_byte(uses[k]);
	for (size_t i = c->fn_first_finding; i < c->out->findings.len; i++) {
		const struct finding *o = &c->out->findings.items[i];
		/* a CPU read of its own (P003) or the index of an array left as it is (P001, P002) */
		if (o->fix != FIX_GET_CPU || o->rule > RULE_P003 || strcmp(o->file, c->src->path) != 0)
			continue;
		uint32_t get = UINT32_MAX, end = 0;
		for (size_t k = 0; k < o->edits.len; k++) {
			const struct edit *e = &o->edits.items[k];
			if (e->op == EDIT_REPLACE && strcmp(e->text, "get_cpu()") == 0 && get == UINT32_MAX)
				get = (uint32_t)e->start.offset;
			else if (e->op != EDIT_REPLACE && strncmp(e->text, "put_cpu(", 8) == 0 &&
				 e->end.offset > end)
				end = (uint32_t)e->end.offset;
		}
		if (get == UINT32_MAX || !end)
			continue;
		TSNode first = block_stmt(ts_node_descendant_for_byte_range(f->body, get, get));
		if (ts_node_is_null(first) || at < ts_node_end_byte(first) || last_use > end)
			continue;
		struct label_find lf = {ts_node_start_byte(first), end, false};
		ts_walk(ts_parent(first), label_visit, &lf);
		if (!lf.found)
			return o;
	}
	return NULL;
}

/* Gives FD the edits of OWNER, whose region covers its read. */
void share_region(struct finding *fd, const struct finding *owner)
{
	for (size_t k = 0; k < owner->edits.len; k++) {
		struct edit e = owner->edits.items[k];
		e.text = xstrdup(e.text);
		vec_push(&fd->edits, e);
	}
	if (owner->fix == FIX_PREEMPT_REGION) {
		fd->fix = FIX_PREEMPT_REGION;
		set_note(fd, xasprintf("stays smp_processor_id(): inside the preempt_disable()/preempt_enable() "
					 "region of the read at line %u", owner->pos.line));
		return;
	}
	set_note(fd, xasprintf("stays smp_processor_id(): inside the get_cpu()/put_cpu() region "
				 "opened at line %u", owner->pos.line));
}

/* An unprotected plain read of the CPU number that a region may cover as it is. */
static bool plain_read(struct ctx *c, const struct fn *f, TSNode call)
{
	TSNode child;
	TSNode p = up(call, &child);
	if (ts_type_is(p, "init_declarator") || ts_type_is(p, "assignment_expression"))
		return false; /* a variable: its own live range */
	if (ts_type_is(p, "subscript_expression")) {
		struct percpu_array *pa = array_of_subscript(c, p);
		if (pa && pa->eligible)
			return false; /* becomes get_cpu_var() */
	}
	struct point_state ps = flow_state_at(f, ts_node_start_byte(call));
	return !point_protected(&ps);
}

struct read_list {
	struct ctx *c;
	node_vec calls;
};

static bool read_list_visit(TSNode n, void *ctx)
{
	struct read_list *rl = ctx;
	if (call_is(rl->c, n, "smp_processor_id"))
		vec_push(&rl->calls, n);
	return true;
}

/* The local OWNER's edits replace CALL with (a hoisted read), or NULL. */
static const char *hoisted_local(const struct finding *owner, TSNode call)
{
	for (size_t k = 0; k < owner->edits.len; k++) {
		const struct edit *e = &owner->edits.items[k];
		if (e->op == EDIT_REPLACE && e->start.offset == ts_node_start_byte(call) &&
		    strcmp(e->text, "get_cpu()") != 0)
			return e->text;
	}
	return NULL;
}

bool covered_read(struct ctx *c, TSNode call, struct finding *fd, char **no)
{
	*no = NULL;
	for (size_t i = 0; i < c->covered.len; i++) {
		if (c->covered.items[i].offset != ts_node_start_byte(call))
			continue;
		const struct finding *owner = &c->out->findings.items[c->covered.items[i].finding];
		if (owner->fix == FIX_NONE) {
			*no = xasprintf("it is inside the region of the read at line %u, which is not fixed",
					owner->pos.line);
			return true;
		}
		if (fd)
			share_region(fd, owner);
		const char *local = hoisted_local(owner, call);
		if (fd && local)
			set_note(fd, xasprintf("reads %s, which get_cpu() set for the region opened at line %u",
					       local, owner->pos.line));
		return true;
	}
	return false;
}

/*
 * CALL already inside a region: one an earlier read of the block opened
 * (c->covered), or an earlier finding's that covers it. True if so, with
 * FD given that region's edits and *NO why not (owned) or NULL.
 */
static bool in_earlier_region(struct ctx *c, const struct fn *f, TSNode call, struct finding *fd, char **no)
{
	if (covered_read(c, call, fd, no))
		return true;
	const struct finding *owner = covering_region(c, f, call, NULL, 0);
	if (owner && fd)
		share_region(fd, owner);
	return owner != NULL;
}

/*
 * A guard (`if (cpu == smp_processor_id()) return;`, statement ST): the
 * rest of the block relies on it, so the region reaches GUARD_END. NULL or
 * why not (owned).
 */
static char *plan_guard_region(struct ctx *c, TSNode call, TSNode st, TSNode guard_end, struct finding *fd)
{
	char *no = read_refusal(c, call);
	if (no)
		return no;
	add_edit(c, fd, EDIT_REPLACE, call, "get_cpu()");
	no = plan_region(c, st, guard_end, NULL, "put_cpu()", fd);
	if (!no && fd)
		set_note(fd, xasprintf("the test at line %u leaves the function on this CPU; the rest of "
				       "the block relies on it, so the region reaches line %u",
				       line_of(c, st), line_of(c, guard_end)));
	return no;
}

/*
 * ST holds one read, not stored in a variable: the next expression
 * statements whose reads are all plain join its region, their reads
 * appended to EXTRA. Returns the last statement of the region (ST alone).
 */
static TSNode following_reads(struct ctx *c, const struct fn *f, TSNode st, node_vec *extra)
{
	struct read_list rl = {c, VEC_INIT};
	TSNode last = st;
	if (!ts_node_is_null(st) && ts_type_is(st, "expression_statement")) {
		ts_walk(st, read_list_visit, &rl);
		bool single = rl.calls.len == 1;
		TSNode e = ts_node_named_child(st, 0);
		if (single && !(ts_type_is(e, "assignment_expression") &&
				ts_type_is(ts_field(e, "left"), "identifier"))) {
			for (TSNode nx = next_stmt(st); ts_type_is(nx, "expression_statement"); nx = next_stmt(nx)) {
				rl.calls.len = 0;
				ts_walk(nx, read_list_visit, &rl);
				bool all_plain = rl.calls.len > 0;
				for (size_t k = 0; k < rl.calls.len && all_plain; k++)
					all_plain = plain_read(c, f, rl.calls.items[k]);
				if (!all_plain)
					break;
				for (size_t k = 0; k < rl.calls.len; k++)
					vec_push(extra, rl.calls.items[k]);
				last = nx;
			}
		}
	}
	vec_release(&rl.calls);
	return last;
}

/*
 * get_cpu() at CALL and put_cpu() after its statement. When the next
 * statements of the block read the CPU number too, one region covers them
 * and they keep smp_processor_id(), which is legal inside it: two pairs in a
 * row could run on two CPUs. A read covered by an earlier region shares that
 * region's edits. Returns NULL or why not (owned).
 */
char *plan_direct_get_cpu(struct ctx *c, const struct fn *f, TSNode call, struct finding *fd)
{
	char *no = NULL;
	if (in_earlier_region(c, f, call, fd, &no))
		return no;
	TSNode st = block_stmt(call);
	TSNode guard_end = ts_node_is_null(st) ? ts_null() : guard_region_end(call, st);
	TSNode loop;
	char *hoist = ts_node_is_null(st) ? NULL : read_hoist_reason(c, call, st, &loop);
	if (hoist) {
		free(hoist);
		return plan_hoisted_read(c, f, call, st, ts_node_is_null(loop) ? guard_end : ts_null(), loop, fd);
	}
	if (!ts_node_is_null(guard_end))
		return plan_guard_region(c, call, st, guard_end, fd);
	node_vec extra = VEC_INIT;
	TSNode last = following_reads(c, f, st, &extra);
	/* the reads the region would cover, one statement each */
	if (!ts_node_eq(last, st)) {
		no = read_refusal(c, call);
		for (size_t k = 0; !no && k < extra.len; k++)
			no = read_refusal(c, extra.items[k]);
		if (no)
			goto done;
	}
	add_edit(c, fd, EDIT_REPLACE, call, "get_cpu()");
	if (ts_node_eq(last, st)) {
		no = plan_site_region(c, f, call, "put_cpu()", fd);
	} else {
		no = plan_region(c, st, last, NULL, "put_cpu()", fd);
		for (size_t k = 0; !no && fd && k < extra.len; k++) {
			struct covered cv = {ts_node_start_byte(extra.items[k]), (size_t)(fd - c->out->findings.items)};
			vec_push(&c->covered, cv);
		}
	}
done:
	vec_release(&extra);
	return no;
}
