/*
 * One read of the CPU number hoisted before its statement (cpu_read_region.c
 * asks): `int cpu = get_cpu();` (or `cpu = get_cpu();` with `int cpu;` among
 * the block's declarations) before statement H, every smp_processor_id()
 * of H replaced by that local, put_cpu() after H and before each jump out
 * of it. It serves the reads a pair of their own cannot: several in one
 * statement, one on some paths only (an && / || right operand, a ?: arm),
 * a comparison inside a loop (H is then the loop). Reading the number
 * earlier than the code did is sound because smp_processor_id() has no
 * side effect and nothing in H may sleep (plan_region() refuses a region
 * holding a call that may).
 */
#include "rules/cpu_read_internal.h"

#include <stdlib.h>
#include <string.h>

/*
 * A name for the new local that nothing of F names, and no #define of the
 * file mentions (a macro naming `cpu` would be captured), or NULL.
 */
static const char *fresh_name(const struct ctx *c, const struct fn *f)
{
	static const char *const names[] = {"cpu", "this_cpu", "cur_cpu"};
	return fresh_local_name(c, f, names, ARRAY_SIZE(names));
}

struct read_scan {
	struct ctx *c;
	const struct fn *f;
	TSNode h;
	node_vec calls;
	char *refuse;
};

/*
 * Is the read (CHILD of P) stored in a local, whose live range its own
 * region covers? A store into a global or through a pointer only keeps
 * a value, which the hoisted local gives it as well.
 */
static bool stored_in_local(const struct ctx *c, const struct fn *f, TSNode p, TSNode child)
{
	TSNode var = ts_null();
	if (ts_type_is(p, "init_declarator") && ts_node_eq(ts_field(p, "value"), child))
		return true;
	if (ts_type_is(p, "assignment_expression") && ts_node_eq(ts_field(p, "right"), child))
		var = ts_field(p, "left");
	if (!ts_type_is(var, "identifier"))
		return false;
	char *name = node_text(c, var);
	bool local = is_local(c, f, name);
	free(name);
	return local;
}

static bool hoist_read_visit(TSNode n, void *ctx)
{
	struct read_scan *rs = ctx;
	if (rs->refuse || !call_is(rs->c, n, "smp_processor_id"))
		return !rs->refuse;
	TSNode child;
	TSNode p = up(n, &child);
	struct percpu_array *pa = ts_type_is(p, "subscript_expression") ? array_of_subscript(rs->c, p) : NULL;
	if (pa && pa->eligible)
		rs->refuse = xasprintf("the read at line %u indexes %s, which becomes a per-CPU variable; "
				       "one local cannot serve both, fix by hand", line_of(rs->c, n), pa->name);
	else if (pa && !ts_node_is_null(pa->unfixable_use) && node_within(pa->unfixable_use, rs->h))
		/* hoisted, the statement would let the array convert on a second run */
		rs->refuse = xasprintf("%s would become DEFINE_PER_CPU once this statement is "
				       "fixed (a second run would convert it); convert it by hand", pa->name);
	else if (stored_in_local(rs->c, rs->f, p, child))
		rs->refuse = xasprintf("the read at line %u is stored in a variable with a live range of its "
				       "own; fix by hand", line_of(rs->c, n));
	else if (source_in_directive(rs->c->src, ts_node_start_byte(n)))
		rs->refuse = xstrdup("a read is inside a #define body");
	else
		vec_push(&rs->calls, n);
	return false;
}

/*
 * Can get-cpu.cocci insert after declaration D? Its `T x;` and `T x = E;`
 * match one declarator with no storage class or qualifier before the type
 * (on `T x, y;` the pattern matches one declarator and the insertion is
 * not made).
 */
static bool simple_decl(TSNode d)
{
	if (!ts_type_is(d, "declaration"))
		return false;
	unsigned declarators = 0;
	for (uint32_t i = 0; i < ts_node_named_child_count(d); i++) {
		TSNode k = ts_node_named_child(d, i);
		if (ts_type_is(k, "storage_class_specifier") || ts_type_is(k, "type_qualifier") ||
		    ts_type_is(k, "attribute_specifier") || ts_type_is(k, "comment"))
			return false;
		if (!ts_node_eq(k, ts_field(d, "type")))
			declarators++;
	}
	TSNode t = ts_field(d, "type");
	return declarators == 1 && ts_node_is_null(ts_field(t, "body"));
}

/* The statement before S in its block (skipping comments), or a null node. */
static TSNode prev_stmt(TSNode s)
{
	TSNode p = ts_node_prev_named_sibling(s);
	while (ts_type_is(p, "comment"))
		p = ts_node_prev_named_sibling(p);
	return p;
}

/*
 * Where the local goes. After the block's last declaration when the
 * semantic patch can insert there (simple_decl()): `int NAME = get_cpu();`
 * when H follows it, else `int NAME;` there and `NAME = get_cpu();` before
 * H. Otherwise before the block's first statement, with a blank line
 * after it: `int NAME = get_cpu();` when that is H, else `int NAME;` there
 * and `NAME = get_cpu();` after the statement before H. *ALONE is set in
 * that case: the declaration is then get-cpu.cocci's one insertion before
 * a statement of the function (two rules inserting before statements of
 * one function do not both apply), so the region must have no exit.
 * Returns why not, or NULL.
 */
static char *declare_local(struct ctx *c, TSNode h, const char *name, struct finding *fd, bool *alone)
{
	TSNode block = ts_parent(h);
	*alone = false;
	if (ts_type_is(block, "labeled_statement"))
		return xasprintf("the statement at line %u is the statement of a label: a local cannot be "
				 "declared there, and a preempt_disable() before it would be skipped by a goto "
				 "to the label; fix by hand", line_of(c, h));
	if (!ts_type_is(block, "compound_statement"))
		return xasprintf("the statement at line %u is not directly in a { } block, where the local "
				 "would go; fix by hand", line_of(c, h));
	TSNode last_decl = ts_null(), first_stmt = ts_null();
	for (uint32_t i = 0; i < ts_node_named_child_count(block); i++) {
		TSNode s = ts_node_named_child(block, i);
		if (ts_type_is(s, "comment"))
			continue;
		if (!ts_type_is(s, "declaration") || ts_node_eq(s, h)) {
			first_stmt = s;
			break;
		}
		last_decl = s;
	}
	bool first = ts_node_eq(first_stmt, h);
	if (ts_type_is(h, "declaration") && !simple_decl(last_decl))
		return xasprintf("the read is in the declaration at line %u, and no declaration before it "
				 "can take the local (none, or one the semantic patch cannot insert after); "
				 "fix by hand", line_of(c, h));
	char *decl = xasprintf(first ? "int %s = get_cpu();" : "int %s;", name);
	char *get = xasprintf("%s = get_cpu();", name);
	if (simple_decl(last_decl)) {
		add_edit(c, fd, EDIT_INSERT_AFTER, last_decl, decl);
		if (!first)
			add_edit(c, fd, EDIT_INSERT_BEFORE, h, get);
	} else {
		*alone = true;
		add_edit(c, fd, EDIT_INSERT_BEFORE, first_stmt, decl);
		if (!first)
			add_edit(c, fd, EDIT_INSERT_AFTER, prev_stmt(h), get);
	}
	free(decl);
	free(get);
	return NULL;
}

/*
 * The put_cpu() edits of the region H..LAST into FD; with ALONE, NULL only
 * when the region has no exit (a put_cpu() before a jump).
 */
static char *plan_puts(struct ctx *c, TSNode h, TSNode last, bool alone, struct finding *fd)
{
	struct finding tmp;
	memset(&tmp, 0, sizeof tmp);
	char *no = plan_region(c, h, last, NULL, "put_cpu()", &tmp);
	for (size_t k = 0; !no && alone && k < tmp.edits.len; k++)
		if (tmp.edits.items[k].op == EDIT_INSERT_BEFORE)
			no = xasprintf("the local's declaration goes before the block's first statement, and "
				       "the region also needs put_cpu() before the jump at line %u; the "
				       "semantic patch cannot make both, fix by hand",
				       tmp.edits.items[k].start.line);
	for (size_t k = 0; !no && fd && k < tmp.edits.len; k++) {
		vec_push(&fd->edits, tmp.edits.items[k]);
		tmp.edits.items[k].text = NULL; /* now FD's */
	}
	finding_release(&tmp);
	return no;
}

/* The reads of H other than CALL share FD's region: they read the local. */
static void cover_reads(struct ctx *c, const node_vec *calls, TSNode call, struct finding *fd)
{
	if (!fd)
		return;
	for (size_t k = 0; k < calls->len; k++) {
		if (ts_node_eq(calls->items[k], call))
			continue;
		struct covered cv = {ts_node_start_byte(calls->items[k]), (size_t)(fd - c->out->findings.items)};
		vec_push(&c->covered, cv);
	}
}

/*
 * H..LAST is not directly in a { } block (an #if arm, a case holds it), so
 * no local can be declared for it: preempt_disable(); before H and
 * preempt_enable(); after LAST (and before each jump out) hold the CPU
 * instead, and the reads CALLS keep smp_processor_id(), which all see one
 * CPU inside (fix preempt-region). NULL or why not (owned).
 */
static char *plan_held_reads(struct ctx *c, TSNode h, TSNode last, const node_vec *calls, TSNode call,
			     struct finding *fd)
{
	char *no = plan_region(c, h, last, NULL, "preempt_enable()", fd);
	if (no)
		return no;
	add_edit(c, fd, EDIT_INSERT_BEFORE, h, "preempt_disable();");
	if (fd) {
		fd->fix = FIX_PREEMPT_REGION;
		cover_reads(c, calls, call, fd);
		set_note(fd, xasprintf("the statement at line %u reads the CPU number %s, and no local can be "
				       "declared where it is (%s): preemption is held off around it instead, so "
				       "its reads keep smp_processor_id() and all see one CPU", line_of(c, h),
				       calls->len > 1 ? "several times" : "on some paths only",
				       ts_type_is(ts_parent(h), "case_statement") ? "a case holds it" :
				       "an #if arm holds it"));
	}
	return NULL;
}

char *plan_hoisted_read(struct ctx *c, const struct fn *f, TSNode call, TSNode st, TSNode guard_end,
			TSNode loop, struct finding *fd)
{
	TSNode h = ts_node_is_null(loop) ? st : block_stmt(loop);
	if (ts_node_is_null(h))
		return xstrdup("the loop is not in a statement of a block");
	if (ts_type_is(h, "return_statement"))
		return xstrdup("the value is returned: what the function computes from the CPU number stays this "
			       "CPU's only while its caller keeps preemption off, so the get/put belongs in the "
			       "caller (as 2.6.9 pairs tlb_gather_mmu()'s get_cpu_var() with tlb_finish_mmu()); "
			       "fix by hand");
	TSNode last = ts_node_is_null(guard_end) ? h : guard_end;
	struct read_scan rs = {c, f, h, VEC_INIT, NULL};
	for (TSNode s = h; !ts_node_is_null(s); s = ts_node_eq(s, last) ? ts_null() : next_stmt(s)) {
		rs.h = s;
		ts_walk(s, hoist_read_visit, &rs);
	}
	char *no = rs.refuse;
	/* not under a label: spatch may put the new first statement before it, where a goto skips it */
	if (!no && !ts_type_is(ts_parent(h), "compound_statement") && !ts_type_is(ts_parent(h), "labeled_statement")) {
		no = plan_held_reads(c, h, last, &rs.calls, call, fd);
		vec_release(&rs.calls);
		return no;
	}
	const char *name = no ? NULL : fresh_name(c, f);
	if (!no && !name)
		no = xstrdup("every name for the local (cpu, this_cpu, cur_cpu) is taken in the function");
	bool alone = false;
	if (!no)
		no = declare_local(c, h, name, fd, &alone);
	for (size_t k = 0; !no && k < rs.calls.len; k++)
		add_edit(c, fd, EDIT_REPLACE, rs.calls.items[k], name);
	if (!no)
		no = plan_puts(c, h, last, alone, fd);
	if (!no) {
		cover_reads(c, &rs.calls, call, fd);
		if (fd)
			set_note(fd, xasprintf("the CPU number is read once into %s with get_cpu() before line %u; "
						 "the %s reads it there", name, line_of(c, h),
						 ts_node_is_null(loop) ? "statement" : "loop"));
	}
	vec_release(&rs.calls);
	return no;
}
