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

/*
 * IDENT uses a macro of this file whose body reads the CPU number: the read
 * happens here. Reported, never rewritten: get_cpu()/put_cpu() cannot go
 * inside an expression macro, and the macro's other uses may be protected.
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
	struct finding *fd = add_finding(c, RULE_P003, ident, f, SEV_WARNING, CONF_MEDIUM, FIX_NONE,
		xasprintf("smp_processor_id() behind macro %s used in preemptible code", d->name), evidence);
	if (fd)
		set_note(fd, xasprintf("not rewritten: the CPU read is inside the macro %s (%s); hold "
				       "get_cpu()/put_cpu() around this use, or change the macro, by hand",
				       d->name, where));
	free(where);
}
