/*
 * P003 for CPU reads hidden in macros: which macros of the file (or of the
 * tree's headers) read the CPU number, and each use of one in a function:
 * protected, only printed, or held in a preempt_disable()/preempt_enable()
 * region around the statement that expands it.
 */
#include "rules/cpu_read_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- a CPU read inside a macro of this file ------------------------------------ */

/*
 * Does BODY read smp_processor_id() as a word, where the use is the read?
 * Not a statistics update (x[smp_processor_id()].n++: a migration only
 * miscounts), a debug print, or a macro that disables interrupts or takes a
 * lock itself (a debugging lock wrapper reads the CPU under its own lock).
 */
bool macro_reads_cpu(const char *body)
{
	static const char *const not_a_read[] = {"++", "--", "+=", "-=", "print", "lock", "_irq", "cli()",
						 "save_flags", "preempt_disable", "get_cpu"};
	for (const char *p = strstr(body, "smp_processor_id"); p; p = strstr(p + 1, "smp_processor_id")) {
		if ((p > body && is_ident_char(p[-1])) || is_ident_char(p[16]))
			continue;
		for (size_t i = 0; i < ARRAY_SIZE(not_a_read); i++)
			if (strstr(body, not_a_read[i]))
				return false;
		return true;
	}
	return false;
}

const struct macro_def *cpu_macro_of(struct ctx *c, TSNode n)
{
	if (!c->cpu_macros_done) {
		c->cpu_macros_done = true;
		for (size_t i = 0; i < c->src->defs.len; i++) {
			const struct macro_def *d = &c->src->defs.items[i];
			/* every definition of the name (#if arms) must read the CPU */
			bool all = macro_reads_cpu(d->body);
			for (size_t k = 0; k < c->src->defs.len && all; k++)
				if (k != i && strcmp(c->src->defs.items[k].name, d->name) == 0)
					all = k > i && macro_reads_cpu(c->src->defs.items[k].body);
			if (all)
				vec_push(&c->cpu_macros, d);
		}
	}
	if (!c->cpu_macros.len && !c->may_tree_cpu_macro)
		return NULL;
	TSNode p = ts_parent(n);
	bool called = ts_type_is(p, "call_expression") && ts_node_eq(ts_field(p, "function"), n);
	for (size_t i = 0; i < c->cpu_macros.len; i++) {
		const struct macro_def *d = c->cpu_macros.items[i];
		if (ts_text_is(n, c->text, d->name))
			return d->function_like == called ? d : NULL;
	}
	/* a macro of one of the tree's headers, unless this file defines the name */
	uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
	for (size_t i = 0; i < c->src->defs.len; i++)
		if (strlen(c->src->defs.items[i].name) == e - s &&
		    memcmp(c->src->defs.items[i].name, c->text + s, e - s) == 0)
			return NULL;
	return tree_macro_find(c, c->text + s, e - s, called, MACRO_CPU);
}

/* Is NAME (LEN bytes) a call that records a debug trace (xfs's ktrace_enter())? */
static bool trace_call_name(const char *name, size_t len)
{
	return (len > 7 && memcmp(name, "ktrace_", 7) == 0) || (len > 6 && memcmp(name, "trace_", 6) == 0);
}

/*
 * Does the use USE of macro D only record the CPU number in a debug trace:
 * an argument of a trace call (through casts), or a macro whose body is one
 * trace call (KTRACE_ENTER())? 2.6.9 kept those bare, as it kept printed ones.
 */
static bool only_traced(const struct ctx *c, const struct macro_def *d, TSNode use)
{
	size_t n = strspn(d->body, " \t(");
	size_t len = 0;
	while (is_ident_char(d->body[n + len]))
		len++;
	if (trace_call_name(d->body + n, len) && d->body[n + len + strspn(d->body + n + len, " \t")] == '(')
		return true;
	TSNode child;
	TSNode p = up(use, &child);
	if (!ts_type_is(p, "argument_list"))
		return false;
	const char *name;
	len = ts_call_name(ts_parent(p), c->text, &name);
	return len && trace_call_name(name, len);
}

/* The CPU reads (smp_processor_id() calls, uses of macros reading it) in [FROM, TO) of a function. */
struct read_count {
	struct ctx *c;
	uint32_t from, to;
	unsigned n;
	TSNode first, second; /* the first two reads */
};

static bool read_count_visit(TSNode n, void *ctx)
{
	struct read_count *rc = ctx;
	if (ts_node_end_byte(n) <= rc->from || ts_node_start_byte(n) >= rc->to)
		return false;
	bool read = (call_is(rc->c, n, "smp_processor_id") && !only_printed(rc->c, n)) ||
		    (ts_type_is(n, "identifier") && cpu_macro_of(rc->c, n));
	if (read && !rc->n++)
		rc->first = n;
	else if (read && rc->n == 2)
		rc->second = n;
	return true;
}

/*
 * Another CPU read in F than USE, not printed: the work of the two belongs
 * to one CPU (pfm_enable() sets the PMU owner, then the context's last CPU),
 * and a region around USE alone would let them see two. Its line, or 0.
 */
static unsigned other_read(struct ctx *c, const struct fn *f, TSNode use)
{
	struct read_count rc = {c, ts_node_start_byte(f->body), ts_node_end_byte(f->body), 0, ts_null(), ts_null()};
	ts_walk(f->body, read_count_visit, &rc);
	if (rc.n < 2)
		return 0;
	TSNode o = ts_node_start_byte(rc.first) == ts_node_start_byte(use) ||
		   ts_node_start_byte(ts_parent(rc.first)) == ts_node_start_byte(use) ? rc.second : rc.first;
	return line_of(c, o);
}

/*
 * The NR_CPUS array of this file that D's body indexes (`x[smp_processor_id()]`),
 * or NULL. Protected at every use, it would become per-CPU data, as 2.6.9
 * made perfmon's pmu_owners[] with its macros: the array and the macro are
 * ported together, not one use at a time.
 */
static const struct percpu_array *macro_array(const struct ctx *c, const struct macro_def *d)
{
	for (size_t i = 0; i < c->arrays.len; i++) {
		const struct percpu_array *pa = c->arrays.items[i];
		size_t n = strlen(pa->name);
		for (const char *p = strstr(d->body, pa->name); p; p = strstr(p + 1, pa->name)) {
			const char *q = p + n;
			while (*q == ' ' || *q == '\t')
				q++;
			if ((p == d->body || !is_ident_char(p[-1])) && *q == '[' &&
			    strncmp(q + 1 + strspn(q + 1, " \t"), "smp_processor_id", 16) == 0)
				return pa;
		}
	}
	return NULL;
}

/*
 * The region of USE, a use of macro D in the statement ST: preempt_disable();
 * before ST, and preempt_enable(); where plan_site_region() ends the region
 * of a CPU read in ST (after ST, or after the last use of the local it
 * sets; before every jump leaving it). NULL, or why not (owned).
 */
static char *plan_macro_region(struct ctx *c, const struct fn *f, const struct macro_def *d, TSNode use,
				struct finding *fd)
{
	const struct percpu_array *pa = macro_array(c, d);
	if (pa)
		return xasprintf("%s indexes %s[], an NR_CPUS array of this file, by the running CPU; 2.6 "
				 "makes such an array per-CPU data (DEFINE_PER_CPU(), the macro on "
				 "__get_cpu_var()) with preemption off where the macro is used, so port the "
				 "array and the macro together", d->name, pa->name);
	TSNode st = block_stmt(use);
	if (ts_node_is_null(st) || !ts_type_is(st, "expression_statement") ||
	    !ts_type_is(ts_parent(st), "compound_statement"))
		return xasprintf("the macro is used in %s at line %u, and preempt_disable() goes only before an "
				 "expression statement of a block",
				 ts_node_is_null(st) ? "an expression" : ts_node_type(st), line_of(c, use));
	unsigned other = other_read(c, f, use);
	if (other)
		return xasprintf("%s() reads the CPU number again at line %u, and a region around this use "
				 "alone would let the two see different CPUs", f->name, other);
	char *no = plan_site_region(c, f, use, "preempt_enable()", fd);
	if (no)
		return no;
	struct read_count rc = {c, ts_node_start_byte(st), ts_node_end_byte(st), 0, ts_null(), ts_null()};
	for (size_t k = 0; k < fd->edits.len; k++)
		if (fd->edits.items[k].end.offset > rc.to)
			rc.to = (uint32_t)fd->edits.items[k].end.offset;
	ts_walk(f->body, read_count_visit, &rc);
	if (rc.n > 1)
		return xasprintf("the region from line %u would hold %u reads of the CPU number; hold preemption "
				 "off around them together by hand", line_of(c, st), rc.n);
	add_edit(c, fd, EDIT_INSERT_BEFORE, st, "preempt_disable();");
	return NULL;
}

/*
 * IDENT uses a macro of this file (or of a header of the tree) whose body
 * reads the CPU number: the read happens here. The body stays as it is (its
 * other uses may be protected); this use is held in a preempt_disable()
 * region (plan_macro_region()), or shares the get_cpu() region of an
 * earlier read that covers it.
 */
void check_cpu_macro(struct ctx *c, const struct fn *f, TSNode ident)
{
	const struct macro_def *d = cpu_macro_of(c, ident);
	if (!d || version_guarded(c, ident))
		return;
	TSNode use = d->function_like ? ts_parent(ident) : ident;
	char *where = macro_location(c, d);
	struct point_state ps = flow_state_at(f, ts_node_start_byte(use));
	char *why = explain_state(f, &ps);
	bool prot = point_protected(&ps), whole = false;
	char *held = prot ? NULL : cpu_entry_lock(c, f, use);
	if (held) {
		prot = true;
		free(why);
		why = held;
	}
	char *stable = prot ? NULL : cpu_stable(c, f, use, &whole);
	if (prot || stable) {
		add_protected(c, RULE_P003, ident, f,
			      xasprintf("smp_processor_id() behind macro %s (%s) read with preemption off",
					d->name, where),
			      stable ? stable : why);
		if (stable)
			free(why);
		free(where);
		return;
	}
	char *evidence = xasprintf("%s; %s%s is defined at %s as `%s`", why, d->name,
				   d->function_like ? "()" : "", where, d->body);
	free(why);
	if (only_printed(c, use)) {
		struct finding *fd = add_finding(c, RULE_P003, ident, f, SEV_NOTE, CONF_HIGH, FIX_NONE,
			xasprintf("smp_processor_id() behind macro %s in preemptible code, only printed", d->name),
			evidence);
		if (fd)
			set_note(fd, xstrdup("not rewritten: the CPU number is only printed"));
		free(where);
		return;
	}
	if (only_traced(c, d, use)) {
		struct finding *fd = add_finding(c, RULE_P003, ident, f, SEV_NOTE, CONF_HIGH, FIX_NONE,
			xasprintf("smp_processor_id() behind macro %s in preemptible code, only traced", d->name),
			evidence);
		set_note(fd, xstrdup("not rewritten: the CPU number is only recorded in a debug trace; after "
				     "a migration the record names the CPU the task just left, which 2.6 "
				     "kernels accepted (2.6.9 xfs kept these reads bare)"));
		free(where);
		return;
	}
	struct finding *fd = add_finding(c, RULE_P003, ident, f, SEV_WARNING, CONF_MEDIUM, FIX_PREEMPT_REGION,
		xasprintf("smp_processor_id() behind macro %s used in preemptible code", d->name), evidence);
	const struct finding *owner = fd ? covering_region(c, f, use, NULL, 0) : NULL;
	char *no = NULL;
	if (owner) {
		fd->fix = FIX_GET_CPU;
		share_region(fd, owner);
	} else if (fd) {
		no = plan_macro_region(c, f, d, use, fd);
	}
	if (no)
		unfixable(fd, xasprintf("not rewritten: %s (the CPU read is inside the macro %s, %s; hold "
					"preemption off around this use, or change the macro, by hand)",
					no, d->name, where));
	else if (fd && !owner)
		set_note(fd, xasprintf("%s keeps its smp_processor_id() (%s): preemption is held off "
				       "around the statement that expands it", d->name, where));
	free(no);
	free(where);
}
