/*
 * When the CPU number cannot change although preemption is on:
 *  - CPU bring-up and boot: start_secondary()/smp_callin() run on the new
 *    CPU's own idle task, start_kernel() on the boot CPU's first task
 *    (api_bound_entry()), which never migrate; so do the functions called
 *    only from them that do not sleep (which would let other tasks run on
 *    the CPU): the static functions of the file, and (tree.h) the
 *    functions of other files every caller in the tree calls so;
 *  - a pinned task: after set_cpus_allowed(current, <one CPU>), or the 2.4
 *    `current->cpus_allowed = <one CPU>;` and a schedule() (or in the loop
 *    `while (smp_processor_id() != cpu) schedule();` that waits for it), the task
 *    stays where it is (2.6.9 keeps a bare smp_processor_id() there, apm.c);
 *  - the idle loop, cpu_idle(): each CPU's idle task never leaves its CPU;
 *  - code compiled only without CONFIG_SMP: one CPU, number 0.
 * A pinned task keeps only its number: another task on the same CPU may
 * still preempt it, so its per-CPU data keeps its own rules (P001/P002).
 * Bring-up code has its CPU to itself: nothing else runs there yet.
 */
#include "rules/cpu_shared.h"

#include <stdlib.h>
#include <string.h>

/* Fills c->bound: per function, why it runs bound to its CPU, or NULL. */
static void find_bound(struct ctx *c)
{
	size_t nf = c->fa->fns.len;
	c->bound = xcalloc(nf ? nf : 1, sizeof *c->bound);
	c->unbound = xcalloc(nf ? nf : 1, sizeof *c->unbound);
	c->bound_done = true;
	bool any = false;
	for (size_t i = 0; i < nf; i++) {
		const struct fn *f = &c->fa->fns.items[i];
		const char *why = api_bound_entry(f->name, strlen(f->name));
		if (!why && analysis_fn_is_shared(c->fa, f) && f->sleeps == SLEEP_NO)
			why = tree_context_bound(c->fa->ext, f->name, c->fa->src->path);
		if (why) {
			c->bound[i] = xstrdup(why);
			any = true;
		}
	}
	/* static functions called only from bound ones, to a fixed point */
	for (bool changed = any; changed;) {
		changed = false;
		for (size_t g = 0; g < nf; g++) {
			const struct fn *callee = &c->fa->fns.items[g];
			if (c->bound[g] || c->unbound[g] || !callee->is_static || callee->addr_taken)
				continue;
			size_t calls = 0, first = 0, atomic = 0;
			unsigned line = 0;
			bool all = true;
			for (size_t i = 0; i < nf && all; i++)
				for (size_t k = 0; k < c->fa->fns.items[i].calls.len && all; k++) {
					const struct call_site *cs = &c->fa->fns.items[i].calls.items[k];
					if (cs->callee != g)
						continue;
					/* a call with preemption off keeps the CPU too */
					bool off = cs->protected_call || c->fa->fns.items[i].ctx != CTX_PROCESS;
					all = i != g && (c->bound[i] != NULL || off);
					if (c->bound[i] == NULL) {
						atomic++;
						continue;
					}
					if (calls++ == 0)
						first = i, line = line_of(c, cs->call);
				}
			if (all && calls && callee->sleeps != SLEEP_NO) {
				c->unbound[g] = xasprintf("%s() is called only from %s() (line %u), which runs bound to "
							  "its CPU, but it may sleep (%s), and other tasks may then run "
							  "on the CPU", callee->name, c->fa->fns.items[first].name, line,
							  callee->sleep_reason ? callee->sleep_reason : "a call that sleeps");
			} else if (all && calls) {
				c->bound[g] = xasprintf("%s() is called only from %s() (line %u), which runs bound "
							"to the new CPU during bring-up%s", callee->name,
							c->fa->fns.items[first].name, line,
							atomic ? ", or with preemption off" : "");
				changed = true;
			}
		}
	}
}

void cpu_stable_release(struct ctx *c)
{
	for (size_t i = 0; c->bound && i < c->fa->fns.len; i++) {
		free(c->bound[i]);
		free(c->unbound[i]);
	}
	free(c->bound);
	free(c->unbound);
	c->bound = c->unbound = NULL;
	c->bound_done = false;
}

struct pin_scan {
	const struct ctx *c;
	TSNode read;
	TSNode pin;  /* the last set_cpus_allowed(current, ...) before the read */
	TSNode mask; /* a 2.4 `current->cpus_allowed = <one CPU>;` not yet followed by schedule() */
};

static bool one_cpu_value(const struct ctx *c, TSNode mask);

struct mask_sets {
	const struct ctx *c;
	TSNode var;  /* the identifier handed to set_cpus_allowed() */
	unsigned n;  /* the stores to it in the function */
	bool one;    /* every one a single CPU's mask */
};

/* Do identifiers A and B spell the same name? */
static bool same_ident(const struct ctx *c, TSNode a, TSNode b)
{
	uint32_t as = ts_node_start_byte(a), ae = ts_node_end_byte(a);
	uint32_t bs = ts_node_start_byte(b), be = ts_node_end_byte(b);
	return ts_type_is(a, "identifier") && ae - as == be - bs && memcmp(c->text + as, c->text + bs, ae - as) == 0;
}

/* One store to the variable: `m = E;`, `T m = E;`, or `&m` (written out of sight). */
static bool mask_store_visit(TSNode n, void *ctx)
{
	struct mask_sets *ms = ctx;
	TSNode name = ts_null(), value = ts_null();
	if (ts_type_is(n, "assignment_expression"))
		name = ts_field(n, "left"), value = ts_field(n, "right");
	else if (ts_type_is(n, "init_declarator"))
		name = ts_field(n, "declarator"), value = ts_field(n, "value");
	else if (ts_type_is(n, "pointer_expression") && ts_text_is(ts_field(n, "operator"), ms->c->text, "&"))
		name = ts_field(n, "argument");
	if (ts_node_is_null(name) || !same_ident(ms->c, name, ms->var))
		return true;
	ms->n++;
	ms->one = ms->one && !ts_node_is_null(value) && one_cpu_value(ms->c, value);
	return true;
}

/*
 * Does MASK name one CPU: a number, `1UL << cpu`, cpumask_of_cpu(cpu), or a
 * local every store to which in the function is one of those (2.6.9
 * p4-clockmod's `affected_cpu_map = cpumask_of_cpu(cpu);`)? (`old` restores
 * a mask.)
 */
static bool one_cpu_mask(const struct ctx *c, TSNode mask)
{
	mask = ts_strip_parens(mask, c->text);
	if (!ts_type_is(mask, "identifier"))
		return one_cpu_value(c, mask);
	TSNode def = mask;
	while (!ts_node_is_null(def) && !ts_type_is(def, "function_definition"))
		def = ts_parent(def);
	if (ts_node_is_null(def))
		return false;
	struct mask_sets ms = {c, mask, 0, true};
	ts_walk(def, mask_store_visit, &ms);
	return ms.n > 0 && ms.one;
}

/* Is MASK itself one CPU's mask: a number, `1UL << cpu`, cpumask_of_cpu(cpu)? */
static bool one_cpu_value(const struct ctx *c, TSNode mask)
{
	mask = ts_strip_parens(mask, c->text);
	if (ts_type_is(mask, "number_literal"))
		return true;
	if (ts_type_is(mask, "binary_expression") && ts_text_is(ts_field(mask, "operator"), c->text, "<<"))
		return ts_type_is(ts_strip_parens(ts_field(mask, "left"), c->text), "number_literal");
	return ts_type_is(mask, "call_expression") && call_is(c, mask, "cpumask_of_cpu");
}

/* Is N, an assignment, `current->cpus_allowed = MASK`? */
static bool assigns_mask(const struct ctx *c, TSNode n, TSNode *mask)
{
	if (!ts_type_is(n, "assignment_expression") || !ts_text_is(ts_field(n, "operator"), c->text, "="))
		return false;
	TSNode left = ts_strip_parens(ts_field(n, "left"), c->text);
	if (!ts_type_is(left, "field_expression") || !ts_text_is(ts_field(left, "field"), c->text, "cpus_allowed") ||
	    !ts_text_is(ts_field(left, "argument"), c->text, "current"))
		return false;
	*mask = ts_field(n, "right");
	return true;
}

/* Does statement N run on every path to READ (its block holds the read)? */
static bool before_on_every_path(TSNode n, TSNode read)
{
	TSNode st = block_stmt(n);
	return !ts_node_is_null(st) && node_within(read, ts_parent(st));
}

/* READ is the condition of `while (...) schedule();`: the loop that waits for the migration. */
static bool migration_wait(const struct ctx *c, TSNode read)
{
	for (TSNode p = ts_parent(read); !ts_node_is_null(p); p = ts_parent(p)) {
		if (ts_type_is(p, "while_statement")) {
			TSNode body = ts_field(p, "body");
			if (!node_within(read, ts_field(p, "condition")) || !ts_type_is(body, "expression_statement"))
				return false;
			TSNode call = ts_node_named_child(body, 0);
			return ts_type_is(call, "call_expression") && call_is(c, call, "schedule");
		}
		if (!ts_type_is(p, "binary_expression") && !ts_type_is(p, "parenthesized_expression") &&
		    !ts_type_is(p, "call_expression") && !ts_type_is(p, "argument_list"))
			return false;
	}
	return false;
}

enum pin_macro { PIN_NONE, PIN_MASK, PIN_CALL };

/*
 * A function-like macro of the file that pins the task, called at N:
 * `#define migrate_to_cpu(cpu) set_cpus_allowed(current, 1UL << (cpu))`
 * (PIN_CALL), or the 2.4 `current->cpus_allowed = 1UL << (cpu)` (PIN_MASK).
 * Defined several times (#if arms), it pins as its weakest definition does.
 */
static enum pin_macro pin_macro(const struct ctx *c, TSNode n)
{
	TSNode fn = ts_field(n, "function");
	if (!ts_type_is(fn, "identifier"))
		return PIN_NONE;
	uint32_t s = ts_node_start_byte(fn), e = ts_node_end_byte(fn);
	enum pin_macro kind = PIN_NONE;
	bool seen = false;
	for (size_t i = 0; i < c->src->defs.len; i++) {
		const struct macro_def *d = &c->src->defs.items[i];
		if (!d->function_like || strlen(d->name) != e - s || memcmp(d->name, c->text + s, e - s) != 0)
			continue;
		const char *b = d->body;
		enum pin_macro k = PIN_NONE;
		if (strstr(b, "<<") && strstr(b, "current")) {
			if (strstr(b, "set_cpus_allowed"))
				k = PIN_CALL;
			else if (strstr(b, "cpus_allowed") && strstr(b, "="))
				k = PIN_MASK;
		}
		kind = !seen || k < kind ? k : kind;
		seen = true;
	}
	return kind;
}

static bool pin_visit(TSNode n, void *ctx)
{
	struct pin_scan *ps = ctx;
	if (ts_node_start_byte(n) >= ts_node_start_byte(ps->read))
		return false;
	TSNode mask;
	if (assigns_mask(ps->c, n, &mask)) {
		/* 2.4: the mask takes effect at the next schedule() (or ends the pin, when wider) */
		ps->pin = ts_null();
		ps->mask = one_cpu_mask(ps->c, mask) && before_on_every_path(n, ps->read) ? n : ts_null();
		return false;
	}
	if (!ts_node_is_null(ps->mask) && ts_type_is(n, "call_expression") && call_is(ps->c, n, "schedule")) {
		if (before_on_every_path(n, ps->read))
			ps->pin = ps->mask;
		return false;
	}
	enum pin_macro pm = ts_type_is(n, "call_expression") ? pin_macro(ps->c, n) : PIN_NONE;
	if (pm != PIN_NONE) {
		bool every = before_on_every_path(n, ps->read);
		ps->pin = pm == PIN_CALL && every ? n : ts_null();
		ps->mask = pm == PIN_MASK && every ? n : ts_null();
		return false;
	}
	if (ts_type_is(n, "call_expression") && call_is(ps->c, n, "set_cpus_allowed")) {
		TSNode args = ts_field(n, "arguments");
		TSNode who = ts_node_named_child(args, 0);
		bool pins = ts_text_is(who, ps->c->text, "current") &&
			    one_cpu_mask(ps->c, ts_node_named_child(args, 1));
		/* a later call (restoring the mask, say) ends the pin before the read */
		ps->pin = pins && before_on_every_path(n, ps->read) ? n : ts_null();
		ps->mask = ts_null();
		return false;
	}
	return true;
}

struct mask_change {
	const struct ctx *c;
	uint32_t after;
	bool wide; /* a change of the mask that does not pin to one CPU */
};

static bool wide_visit(TSNode n, void *ctx)
{
	struct mask_change *mc = ctx;
	if (mc->wide)
		return false;
	TSNode mask;
	if (assigns_mask(mc->c, n, &mask)) {
		mc->wide = ts_node_start_byte(n) > mc->after && !one_cpu_mask(mc->c, mask);
		return false;
	}
	if (ts_type_is(n, "call_expression") && call_is(mc->c, n, "set_cpus_allowed")) {
		TSNode args = ts_field(n, "arguments");
		mc->wide = ts_node_start_byte(n) > mc->after && !one_cpu_mask(mc->c, ts_node_named_child(args, 1));
		return false;
	}
	return true;
}

/*
 * A loop around READ but not around PIN that widens the mask after the
 * read: the next time round, the read runs unpinned. (The pin scan reads
 * the function in text order; this is the back edge it does not see.)
 */
static bool widened_in_loop(const struct ctx *c, TSNode read, TSNode pin)
{
	for (TSNode p = ts_parent(read); !ts_node_is_null(p); p = ts_parent(p)) {
		if (node_within(pin, p))
			return false;
		if (ts_type_is(p, "while_statement") || ts_type_is(p, "for_statement") || ts_type_is(p, "do_statement")) {
			struct mask_change mc = {c, ts_node_end_byte(read), false};
			ts_walk(p, wide_visit, &mc);
			if (mc.wide)
				return true;
		}
	}
	return false;
}

const char *cpu_unbound(struct ctx *c, const struct fn *f)
{
	if (!c->bound_done)
		find_bound(c);
	size_t idx = (size_t)(f - c->fa->fns.items);
	return idx < c->fa->fns.len ? c->unbound[idx] : NULL;
}

char *cpu_stable(struct ctx *c, const struct fn *f, TSNode read, bool *whole)
{
	if (!c->bound_done)
		find_bound(c);
	size_t idx = (size_t)(f - c->fa->fns.items);
	*whole = idx < c->fa->fns.len && c->bound[idx];
	if (*whole)
		return xstrdup(c->bound[idx]);
	/* s390 setup.c do_machine_halt_nonsmp(): a uniprocessor kernel has one CPU, numbered 0 */
	if (ts_in_up_arm(c->text, read))
		return xasprintf("%s() is compiled only without CONFIG_SMP (an #ifndef CONFIG_SMP or the #else of "
				 "#ifdef CONFIG_SMP): the kernel has one CPU, whose number is always 0", f->name);
	struct pin_scan ps = {c, read, ts_null(), ts_null()};
	ts_walk(f->body, pin_visit, &ps);
	if (!ts_node_is_null(ps.pin) && widened_in_loop(c, read, ps.pin))
		ps.pin = ts_null();
	if (!ts_node_is_null(ps.pin) && ts_type_is(ps.pin, "assignment_expression"))
		return xasprintf("the task is pinned to one CPU by `current->cpus_allowed = ...` at line %u "
				 "and the schedule() after it", line_of(c, ps.pin));
	if (!ts_node_is_null(ps.pin) && !call_is(c, ps.pin, "set_cpus_allowed")) {
		char *call = orig_text(c, ps.pin);
		char *r = xasprintf("the task is pinned to one CPU by %s at line %u (a macro of this file that %s)",
				    call, line_of(c, ps.pin),
				    pin_macro(c, ps.pin) == PIN_CALL
					    ? "calls set_cpus_allowed(current, <one CPU>)"
					    : "sets current->cpus_allowed to one CPU; the schedule() after it moves there");
		free(call);
		return r;
	}
	if (!ts_node_is_null(ps.pin))
		return xasprintf("the task is pinned to one CPU by set_cpus_allowed(current, ...) at line %u",
				 line_of(c, ps.pin));
	if (!ts_node_is_null(ps.mask) && migration_wait(c, read) && ts_type_is(ps.mask, "call_expression")) {
		char *call = orig_text(c, ps.mask);
		char *r = xasprintf("the loop waits on schedule() until the task runs on the one CPU %s at line %u "
				    "allows (a macro of this file that sets current->cpus_allowed), which it cannot leave",
				    call, line_of(c, ps.mask));
		free(call);
		return r;
	}
	if (!ts_node_is_null(ps.mask) && migration_wait(c, read))
		return xasprintf("the loop waits on schedule() until the task runs on the one CPU "
				 "`current->cpus_allowed = ...` at line %u allows, which it cannot leave",
				 line_of(c, ps.mask));
	/* 2.6 init/main.c rest_init() and each architecture's secondary start end in cpu_idle() */
	if (strcmp(f->name, "cpu_idle") == 0)
		return xstrdup("cpu_idle() is the loop of this CPU's idle task, which never leaves its CPU");
	return NULL;
}

char *cpu_entry_lock(const struct ctx *c, const struct fn *f, TSNode at)
{
	if (f->ctx == CTX_HARDIRQ || f->ctx == CTX_SOFTIRQ)
		return NULL;
	unsigned line = 0;
	char *key = flow_entry_lock_at(f, c->src, ts_node_start_byte(at), &line);
	if (!key)
		return NULL;
	char *why = xasprintf("%s() is entered with %s held: it releases it at line %u before it takes it, so "
			      "its callers hold it, and it is still held on every path to here",
			      f->name, key, line);
	free(key);
	return why;
}
