/*
 * P001 / P002 / P003 (and P006 in a CPU number's live range): smp_processor_id().
 * The get_cpu()/put_cpu() region of a read used in place is cpu_read_region.c.
 */
#include "rules/cpu_read_internal.h"

#include <stdlib.h>
#include <string.h>

static bool is_print_call(const struct ctx *c, TSNode call)
{
	const char *name;
	size_t len = ts_call_name(call, c->text, &name);
	if (!len)
		return false;
	char *s = xstrndup(name, len);
	for (char *p = s; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	bool r = strstr(s, "print") || strstr(s, "dbg") || strstr(s, "debug") || strstr(s, "panic") ||
		 strcmp(s, "bug") == 0;
	free(s);
	return r;
}

/*
 * Functions of one CPU number that only look something up for it (2.4
 * sa1100fb prints cpufreq_get(smp_processor_id())): their value printed is
 * the number printed.
 */
static bool cpu_lookup_call(const struct ctx *c, TSNode call)
{
	static const char *const lookups[] = {"cpufreq_get", "cpu_number_map", "cpu_logical_map"};
	const char *name;
	size_t len = ts_call_name(call, c->text, &name);
	for (size_t i = 0; len && i < ARRAY_SIZE(lookups); i++)
		if (strlen(lookups[i]) == len && memcmp(lookups[i], name, len) == 0)
			return ts_node_named_child_count(ts_field(call, "arguments")) == 1;
	return false;
}

/* True if N (a use of the value) is an argument of a print-like call, maybe through a lookup. */
/* Is statement S a print, or a block of prints only? */
static bool prints_only(const struct ctx *c, TSNode s)
{
	if (ts_type_is(s, "expression_statement"))
		return is_print_call(c, ts_node_named_child(s, 0));
	if (!ts_type_is(s, "compound_statement") || ts_node_named_child_count(s) == 0)
		return false;
	for (uint32_t i = 0; i < ts_node_named_child_count(s); i++) {
		TSNode k = ts_node_named_child(s, i);
		if (!ts_type_is(k, "comment") && !prints_only(c, k))
			return false;
	}
	return true;
}

/*
 * Does the read N only decide whether a message is printed: a comparison
 * that is the whole condition of an if without else whose body only prints
 * (2.4 ia64 pfm_flush_regs(): `if (GET_LAST_CPU(ctx) != smp_processor_id())
 * printk(KERN_DEBUG ...)`)?
 */
static bool decides_a_message(const struct ctx *c, TSNode n)
{
	TSNode p = ts_parent(n);
	while (ts_type_is(p, "parenthesized_expression"))
		n = p, p = ts_parent(p);
	static const char *const cmp[] = {"==", "!=", "<", ">", "<=", ">="};
	bool is_cmp = false;
	for (size_t i = 0; i < ARRAY_SIZE(cmp) && ts_type_is(p, "binary_expression"); i++)
		is_cmp = is_cmp || ts_text_is(ts_field(p, "operator"), c->text, cmp[i]);
	if (!is_cmp)
		return false;
	n = p, p = ts_parent(p);
	while (ts_type_is(p, "parenthesized_expression"))
		n = p, p = ts_parent(p);
	return ts_type_is(p, "if_statement") && ts_node_eq(ts_field(p, "condition"), n) &&
	       ts_node_is_null(ts_field(p, "alternative")) && prints_only(c, ts_field(p, "consequence"));
}

bool only_printed(const struct ctx *c, TSNode n)
{
	if (decides_a_message(c, n))
		return true;
	for (;;) {
		TSNode child;
		TSNode p = up(n, &child);
		/* dprintk((KERN_DEBUG "...", cpu)): through the comma list and the extra parentheses */
		while (ts_type_is(p, "comma_expression") || ts_type_is(p, "parenthesized_expression"))
			p = ts_parent(p);
		if (!ts_type_is(p, "argument_list"))
			return false;
		if (is_print_call(c, ts_parent(p)))
			return true;
		if (!cpu_lookup_call(c, ts_parent(p)))
			return false;
		n = ts_parent(p);
	}
}

/* The first call that may sleep in F strictly between offsets A and B, or a null node. */
struct sleep_find {
	const struct ctx *c;
	uint32_t a, b;
	TSNode found;
	char *why;
};

static bool sleep_visit(TSNode n, void *ctx)
{
	struct sleep_find *sf = ctx;
	if (!ts_node_is_null(sf->found))
		return false;
	if (ts_node_end_byte(n) <= sf->a || ts_node_start_byte(n) >= sf->b)
		return ts_node_end_byte(n) > sf->a && ts_node_start_byte(n) < sf->b;
	if (ts_type_is(n, "call_expression") && ts_node_start_byte(n) > sf->a) {
		struct buf why = BUF_INIT;
		const struct fn *via;
		enum sleep_kind k = call_may_sleep(sf->c, n, SLEEP_YES, &why, &via);
		if (via)
			buf_printf(&why, "%s()", via->name);
		if (k == SLEEP_YES) {
			sf->found = n;
			sf->why = buf_detach(&why);
		}
		buf_release(&why);
	}
	return true;
}

static bool find_sleep_between(const struct ctx *c, const struct fn *f, uint32_t a, uint32_t b,
			       TSNode *out, char **why)
{
	struct sleep_find sf;
	memset(&sf, 0, sizeof sf);
	sf.c = c;
	sf.a = a;
	sf.b = b;
	ts_walk(f->body, sleep_visit, &sf);
	*out = sf.found;
	*why = sf.why;
	return !ts_node_is_null(sf.found);
}

static bool stmt_acquires(const struct ctx *c, TSNode s)
{
	if (!ts_type_is(s, "expression_statement"))
		return false;
	TSNode e = ts_node_named_child(s, 0);
	const char *name;
	size_t len = ts_type_is(e, "call_expression") ? ts_call_name(e, c->text, &name) : 0;
	const struct api *a = len ? api_lookup(name, len) : NULL;
	return a && a->op == API_ACQUIRE;
}

/* One smp_processor_id() call being decided. */
struct cpu_read {
	TSNode call;
	TSNode parent, child; /* up(call) and the node below it */
	bool prot;            /* preemption off at the read */
	char *stable;         /* why the number cannot change anyway (cpu_stable()), or NULL; owned */
	bool bound;           /* bring-up code: the CPU runs this task alone (r.prot set too) */
	char *why;            /* the state at the read explained; owned until taken */
	unsigned line;
};

/* Hands R's explanation over to a finding (which takes it). */
static char *take_why(struct cpu_read *r)
{
	char *w = r->why;
	r->why = NULL;
	return w;
}

/*
 * Is the slot SUB (x[cpu]) only counted in: the whole statement is
 * `x[cpu].field++`, `--`, `+=` or `-=`? A migration or a preemption in the
 * middle can only lose or misplace one count; 2.6 kernels left these bare
 * (net/ipv4/route.c rt_cache_stat) and later ones made it explicit
 * (this_cpu_inc).
 */
static bool stat_update(const struct ctx *c, TSNode sub)
{
	TSNode n = sub, p = ts_parent(sub);
	while ((ts_type_is(p, "field_expression") || ts_type_is(p, "subscript_expression")) &&
	       ts_node_eq(ts_field(p, "argument"), n))
		n = p, p = ts_parent(p);
	while (ts_type_is(p, "parenthesized_expression"))
		n = p, p = ts_parent(p);
	bool update = ts_type_is(p, "update_expression");
	if (ts_type_is(p, "assignment_expression") && ts_node_eq(ts_field(p, "left"), n)) {
		char *op = node_text(c, ts_field(p, "operator"));
		update = strcmp(op, "+=") == 0 || strcmp(op, "-=") == 0;
		free(op);
	}
	return update && ts_type_is(ts_parent(p), "expression_statement");
}

/*
 * A statistics counter NAME[smp_processor_id()] (the slot SUB) outside
 * --strict-stats: a note without a fix, reported at SITE. True if so.
 */
static bool stat_note(struct ctx *c, const struct fn *f, TSNode site, TSNode sub, const char *name,
		      enum rule_id rule, struct cpu_read *r)
{
	if (c->opts->strict_stats || c->opts->target == TARGET_MODERN || !stat_update(c, sub))
		return false;
	struct finding *fd = add_finding(c, rule, site, f, SEV_NOTE, CONF_HIGH, FIX_NONE,
		xasprintf("statistics counter %s[smp_processor_id()] updated in preemptible code", name),
		take_why(r));
	set_note(fd, xstrdup("not rewritten: the statement only counts, so a migration or preemption "
			     "in the middle only miscounts; 2.6 kernels left such counters bare "
			     "(--strict-stats wraps them in get_cpu()/put_cpu(); --target modern uses this_cpu_*)"));
	return true;
}

/* x[smp_processor_id()] of a static NR_CPUS array: P001. */
static void read_indexes_static_array(struct ctx *c, const struct fn *f, struct cpu_read *r,
				      struct percpu_array *pa)
{
	TSNode p = r->parent;
	if (r->prot) {
		add_protected(c, RULE_P001, p, f,
			      xasprintf("%s[smp_processor_id()] with preemption off", pa->name), take_why(r));
		return;
	}
	/* a DEFINE_PER_CPU conversion changes every use: counters included */
	if (!pa->eligible && stat_note(c, f, p, p, pa->name, RULE_P001, r))
		return;
	struct finding *fd = add_finding(c, RULE_P001, p, f, SEV_WARNING, CONF_HIGH,
		pa->eligible ? FIX_DEFINE_PER_CPU : FIX_GET_CPU,
		xasprintf("per-CPU array %s indexed by smp_processor_id() in preemptible code", pa->name),
		take_why(r));
	if (!fd)
		return;
	note_slot_use(c, pa, f, p, fd);
	if (pa->eligible) {
		plan_percpu_site(c, f, pa, p, false, fd); /* the rest of the conversion rides on P008 */
		return;
	}
	set_note(fd, xasprintf("%s: it stays an NR_CPUS array; the index is read with get_cpu()", pa->why_not));
	refuse_or_hold(c, f, r->call, fd, plan_direct_get_cpu(c, f, r->call, fd));
}

/* x[smp_processor_id()] of a non-static (or extern) NR_CPUS array: P002. */
static void read_indexes_array(struct ctx *c, const struct fn *f, struct cpu_read *r, struct percpu_array *pa)
{
	TSNode p = r->parent;
	char *label = percpu_slot_text(c, pa, p, pa->name); /* x, or x.f of a struct of arrays */
	if (r->prot) {
		add_protected(c, RULE_P002, p, f,
			      xasprintf("%s[smp_processor_id()] with preemption off", label), take_why(r));
		free(label);
		return;
	}
	/* a DEFINE_PER_CPU conversion across the tree changes every use: counters included */
	if (!pa->eligible && stat_note(c, f, p, p, label, RULE_P002, r)) {
		free(label);
		return;
	}
	struct finding *fd = add_finding(c, RULE_P002, p, f, SEV_WARNING, CONF_HIGH,
		pa->eligible ? FIX_DEFINE_PER_CPU : FIX_GET_CPU,
		xasprintf("this-CPU element of non-static per-CPU array %s in preemptible code", label),
		take_why(r));
	free(label);
	if (!fd)
		return;
	note_slot_use(c, pa, f, p, fd);
	if (pa->eligible) {
		fd->array = xstrdup(pa->name); /* converted with the array's other files */
		plan_percpu_site(c, f, pa, p, false, fd); /* the rest of the conversion rides on P008 */
		return;
	}
	set_note(fd, xasprintf("%s, so it cannot become DEFINE_PER_CPU here", pa->why_not));
	refuse_or_hold(c, f, r->call, fd, plan_direct_get_cpu(c, f, r->call, fd));
}

/*
 * FD, the fixed finding of the read at line LINE, keeps the slots of the
 * arrays indexed by its number the running CPU's: the P001/P002 findings
 * of those slots left as they are (use_indexes_array()) share its edits.
 */
static void share_with_slots(struct ctx *c, const struct finding *fd, unsigned line)
{
	size_t self = (size_t)(fd - c->out->findings.items);
	for (size_t i = c->fn_first_finding; i < c->out->findings.len; i++) {
		struct finding *o = &c->out->findings.items[i];
		if (i == self || o->cpu_read_line != line || o->fix != FIX_NONE || o->edits.len ||
		    o->severity != SEV_WARNING)
			continue;
		/* why the array stays as it is: the note use_indexes_array() gave, up to its "; " */
		const char *was = o->fix_note ? o->fix_note : "";
		char *why = xstrndup(was, strcspn(was, ";"));
		share_region(o, fd);
		o->fix = fd->fix;
		set_note(o, xasprintf("%s%sthe slot stays the running CPU's: the CPU number read at line %u "
				      "is held over this use by its fix (%s)", why, *why ? "; " : "", line,
				      fix_name(fd->fix)));
		free(why);
	}
}

/* The variable R is stored in (`int cpu = smp_processor_id();`, `cpu = ...;`), or a null node. */
static TSNode read_into_var(const struct ctx *c, const struct cpu_read *r)
{
	TSNode p = r->parent, var;
	memset(&var, 0, sizeof var);
	if (ts_type_is(p, "init_declarator") && ts_node_eq(ts_field(p, "value"), r->child))
		var = ts_field(p, "declarator");
	else if (ts_type_is(p, "assignment_expression") && ts_node_eq(ts_field(p, "right"), r->child) &&
		 ts_text_is(ts_field(p, "operator"), c->text, "="))
		var = ts_field(p, "left");
	if (!ts_node_is_null(var) && !ts_type_is(var, "identifier"))
		memset(&var, 0, sizeof var);
	return var;
}

/* Is binary expression N arithmetic that keeps one CPU's slot apart from another's (+ - * <<)? */
static bool arith_op(const struct ctx *c, TSNode n)
{
	TSNode op = ts_field(n, "operator");
	return ts_text_is(op, c->text, "+") || ts_text_is(op, c->text, "-") || ts_text_is(op, c->text, "*") ||
	       ts_text_is(op, c->text, "<<");
}

/* Used directly: an argument, a comparison, an index of another array. */
static void read_used_directly(struct ctx *c, const struct fn *f, struct cpu_read *r)
{
	bool printed = only_printed(c, r->call);
	if (r->prot) {
		add_protected(c, RULE_P003, r->call, f,
			      xstrdup(r->bound ? "smp_processor_id() where the CPU runs nothing else"
					       : "smp_processor_id() with preemption off"), take_why(r));
		return;
	}
	/* the slot may be computed from the CPU number: 2.4's SNMP counters x[smp_processor_id()*2+!in_softirq()] */
	TSNode idx = r->child, sub = r->parent;
	while ((ts_type_is(sub, "binary_expression") && arith_op(c, sub)) || ts_type_is(sub, "parenthesized_expression"))
		idx = sub, sub = ts_parent(sub);
	bool is_index = ts_type_is(sub, "subscript_expression") && ts_node_eq(ts_field(sub, "index"), idx);
	if (!is_index)
		sub = r->parent;
	if (r->stable && !is_index) {
		add_protected(c, RULE_P003, r->call, f, xstrdup("smp_processor_id() where the CPU cannot change"),
			      xstrdup(r->stable));
		return;
	}
	if (is_index) {
		/* a counter in an array this file does not declare (prot->stats[cpu].inuse++) */
		char *arr = node_text(c, ts_field(sub, "argument"));
		bool counted = stat_note(c, f, r->call, sub, arr, RULE_P003, r);
		free(arr);
		if (counted)
			return;
	}
	struct finding *fd = add_finding(c, RULE_P003, r->call, f, printed ? SEV_NOTE : SEV_WARNING,
		CONF_HIGH, printed ? FIX_NONE : FIX_GET_CPU,
		xstrdup(printed ? "smp_processor_id() in preemptible code, only printed"
				: "smp_processor_id() used in preemptible code"), take_why(r));
	if (!fd)
		return;
	if (printed) {
		/* 2.6.9 kept such reads bare: a wrapped printk is churn a maintainer rejects */
		set_note(fd, xstrdup("not rewritten: the CPU number is only printed; after a migration the "
				     "message names the CPU the task just left, which 2.6 kernels accepted "
				     "(wrap it in get_cpu()/put_cpu() by hand if the message must be exact)"));
		return;
	}
	refuse_or_hold(c, f, r->call, fd, plan_direct_get_cpu(c, f, r->call, fd));
}

/*
 * Stored in NAME, a global (or static): it outlives any region, and the
 * number it keeps is a hint once preemption is back on. get_cpu()/put_cpu()
 * around the store makes the read itself legal in 2.6 (DEBUG_PREEMPT warns
 * otherwise).
 */
static void read_into_global(struct ctx *c, const struct fn *f, struct cpu_read *r, const char *name)
{
	if (r->prot) {
		add_protected(c, RULE_P003, r->call, f,
			      xasprintf("CPU number stored in %s with preemption off", name), take_why(r));
		return;
	}
	struct finding *fd = add_finding(c, RULE_P003, r->call, f, SEV_WARNING, CONF_MEDIUM, FIX_GET_CPU,
		xasprintf("CPU number from smp_processor_id() stored in %s, which is not local, "
			  "in preemptible code", name), take_why(r));
	char *no = NULL;
	if (covered_read(c, r->call, fd, &no)) { /* a read hoisted before its statement */
		if (no)
			unfixable(fd, no);
		return;
	}
	no = plan_site_region(c, f, r->call, "put_cpu()", fd);
	if (no) {
		unfixable(fd, no);
	} else if (fd) {
		add_edit(c, fd, EDIT_REPLACE, r->call, "get_cpu()");
		set_note(fd, xasprintf("%s outlives the get_cpu()/put_cpu() pair: what it keeps is "
					 "only a hint once preemption is back on", name));
	}
}

/* A local NAME holding the CPU number, and its uses in its live range. */
struct live_range {
	const char *name;
	struct var_uses vu;
	bool all_prot;       /* read and every use with preemption off */
	bool all_printed;    /* every use only printed */
	TSNode first_unprot; /* the first use with preemption on, or a null node */
};

static void live_range_find(struct ctx *c, const struct fn *f, const struct cpu_read *r, const char *name,
			    struct live_range *lr)
{
	memset(lr, 0, sizeof *lr);
	lr->name = name;
	lr->vu.c = c;
	lr->vu.read = r->call;
	lr->vu.var = name;
	lr->vu.after = ts_node_end_byte(r->parent);
	var_uses_find(&lr->vu, f->body);
	lr->all_prot = r->prot;
	lr->all_printed = lr->vu.uses.len > 0;
	for (size_t i = 0; i < lr->vu.uses.len; i++) {
		TSNode u = lr->vu.uses.items[i];
		struct point_state us = flow_state_at(f, ts_node_start_byte(u));
		if (!point_protected(&us)) {
			lr->all_prot = false;
			if (ts_node_is_null(lr->first_unprot))
				lr->first_unprot = u;
		}
		if (!only_printed(c, u))
			lr->all_printed = false;
	}
}

/* A use U of the CPU number as x[cpu] of a per-CPU array: a P001/P002 site of its own. */
static void use_indexes_array(struct ctx *c, const struct fn *f, const struct cpu_read *r, const char *name,
			      TSNode u)
{
	TSNode uc;
	TSNode sub = up(u, &uc);
	struct percpu_array *pa = ts_type_is(sub, "subscript_expression") &&
		ts_node_eq(ts_field(sub, "index"), uc) ? array_of_subscript(c, sub) : NULL;
	if (!pa)
		return;
	struct point_state us = flow_state_at(f, ts_node_start_byte(u));
	char *uwhy = explain_state(f, &us);
	char *label = percpu_slot_text(c, pa, sub, pa->name); /* x, or x.f of a struct of arrays */
	enum rule_id rule = pa->is_static ? RULE_P001 : RULE_P002;
	if (point_protected(&us)) {
		add_protected(c, rule, sub, f, xasprintf("%s[%s] with preemption off", label, name), uwhy);
		free(label);
		return;
	}
	struct finding *fd = add_finding(c, rule, sub, f, SEV_WARNING, CONF_HIGH,
		pa->eligible ? FIX_DEFINE_PER_CPU : FIX_NONE,
		xasprintf("per-CPU array %s indexed by CPU number %s (from smp_processor_id() at line %u) "
			  "in preemptible code", label, name, r->line),
		uwhy);
	free(label);
	if (!fd)
		return;
	note_slot_use(c, pa, f, sub, fd);
	fd->cpu_read_line = r->line;
	if (fd->fix == FIX_DEFINE_PER_CPU && pa->global)
		fd->array = xstrdup(pa->name);
	if (fd->fix == FIX_DEFINE_PER_CPU) {
		char *acc = xasprintf("per_cpu(%s, %s)", pa->var ? pa->var : pa->name, name);
		char *rep = percpu_slot_text(c, pa, sub, acc);
		percpu_slot_edit(c, pa, sub, rep, fd);
		free(rep);
		free(acc);
	} else {
		set_note(fd, xasprintf("%s; the CPU number read at line %u has its own finding (P003), whose fix "
				       "keeps this slot the running CPU's",
					 pa->why_not ? pa->why_not : "not a static array", r->line));
	}
}

/* Why the live range is not protected: at the read, or at its first unprotected use. */
static void live_range_evidence(const struct fn *f, const struct cpu_read *r, const struct live_range *lr,
				const struct ctx *c, struct buf *ev)
{
	if (r->prot) {
		buf_printf(ev, "read with preemption off (%s), but used at line %u where ", r->why,
			   line_of(c, lr->first_unprot));
		struct point_state us = flow_state_at(f, ts_node_start_byte(lr->first_unprot));
		point_explain(f, &us, ev);
	} else {
		buf_printf(ev, "read where ");
		buf_puts(ev, r->why);
	}
}

/*
 * A sleeping call between the read and a use: the value is stale, and no
 * get_cpu() region may cover it. Reports P003 unfixed and P006 at the
 * sleeper; returns false (EV untouched) when there is none.
 */
static bool live_range_sleeps(struct ctx *c, const struct fn *f, const struct cpu_read *r,
			      const struct live_range *lr, struct buf *ev)
{
	TSNode last_use = lr->vu.uses.len ? lr->vu.uses.items[lr->vu.uses.len - 1] : r->call;
	TSNode sleeper;
	char *sleep_why = NULL;
	if (!find_sleep_between(c, f, ts_node_end_byte(r->call), ts_node_start_byte(last_use), &sleeper,
				&sleep_why)) {
		free(sleep_why);
		return false;
	}
	buf_printf(ev, "; the value is used at line %u after a possible sleep at line %u (%s)",
		   line_of(c, last_use), line_of(c, sleeper), sleep_why);
	struct finding *fd = add_finding(c, RULE_P003, r->call, f, SEV_WARNING, CONF_HIGH, FIX_NONE,
		xasprintf("CPU number %s from smp_processor_id() used in preemptible code", lr->name),
		buf_detach(ev));
	if (fd)
		set_note(fd, xasprintf("not rewritten: a get_cpu()/put_cpu() region would contain %s "
					 "at line %u, which may sleep; restructure by hand", sleep_why,
					 line_of(c, sleeper)));
	add_finding(c, RULE_P006, sleeper, f, SEV_WARNING, CONF_MEDIUM, FIX_NONE,
		xasprintf("%s may sleep inside the live range of CPU number %s (read at line %u)",
			  sleep_why, lr->name, r->line),
		xasprintf("a get_cpu()/put_cpu() region from line %u to line %u would sleep in atomic "
			  "context; the CPU number is stale after the sleep anyway",
			  r->line, line_of(c, last_use)));
	free(sleep_why);
	return true;
}

/*
 * move-inside: read just before a lock or irq-disable and used only under
 * it, the read moves inside. Returns false (EV untouched) when it does not apply.
 */
static bool live_range_move_inside(struct ctx *c, const struct fn *f, const struct cpu_read *r,
				   const struct live_range *lr, TSNode read_stmt, struct buf *ev)
{
	TSNode nx = ts_node_is_null(read_stmt) ? read_stmt : next_stmt(read_stmt);
	bool move = !r->prot && !ts_node_is_null(nx) && stmt_acquires(c, nx) && lr->vu.uses.len > 0;
	for (size_t i = 0; move && i < lr->vu.uses.len; i++) {
		struct point_state us = flow_state_at(f, ts_node_start_byte(lr->vu.uses.items[i]));
		if (ts_node_start_byte(lr->vu.uses.items[i]) < ts_node_end_byte(nx) || !point_protected(&us))
			move = false;
	}
	if (move && ts_type_is(read_stmt, "declaration") && ts_node_named_child_count(read_stmt) > 2)
		move = false; /* int a, cpu = ...; keep it simple */
	if (!move)
		return false;
	struct finding *fd = add_finding(c, RULE_P003, r->call, f, SEV_WARNING, CONF_HIGH, FIX_MOVE_INSIDE,
		xasprintf("CPU number %s read before the lock/irq-disable at line %u that protects its uses",
			  lr->name, line_of(c, nx)),
		buf_detach(ev));
	if (fd) {
		char *assign = xasprintf("%s = smp_processor_id();", lr->name);
		if (ts_type_is(read_stmt, "declaration"))
			add_edit(c, fd, EDIT_REPLACE, r->parent, lr->name);
		else
			add_edit(c, fd, EDIT_REPLACE, read_stmt, "");
		add_edit(c, fd, EDIT_INSERT_AFTER, nx, assign);
		free(assign);
	}
	return true;
}

/*
 * The get_cpu() region over the live range: from the read's statement to
 * the statement of the last use in the same block. NULL or why not (owned).
 */
static char *plan_live_range(struct ctx *c, const struct cpu_read *r, const struct live_range *lr,
			     TSNode read_stmt, struct finding *fd)
{
	if (ts_node_is_null(read_stmt))
		return xstrdup("the read is not in a statement of a block");
	TSNode last = read_stmt;
	for (size_t i = 0; i < lr->vu.uses.len; i++) {
		TSNode u = lr->vu.uses.items[i];
		TSNode s = ts_parent(u);
		while (!ts_node_is_null(s) && !ts_node_eq(ts_parent(s), ts_parent(read_stmt)))
			s = ts_parent(s);
		if (!ts_node_is_null(s)) {
			if (ts_node_start_byte(s) > ts_node_start_byte(last))
				last = s;
			continue;
		}
		TSNode blk = ts_parent(read_stmt);
		if (ts_type_is(blk, "preproc_ifdef") || ts_type_is(blk, "preproc_if") ||
		    ts_type_is(blk, "preproc_else") || ts_type_is(blk, "preproc_elif"))
			return xasprintf("the read is inside an #if/#ifdef arm (line %u) and %s is used "
					 "after it at line %u: get_cpu()/put_cpu() could not be balanced "
					 "in every configuration", line_of(c, blk), lr->name, line_of(c, u));
		return xasprintf("%s is used at line %u outside the block it is read in", lr->name, line_of(c, u));
	}
	add_edit(c, fd, EDIT_REPLACE, r->call, "get_cpu()");
	return plan_region(c, read_stmt, last, lr->name, "put_cpu()", fd);
}

/* A local NAME holds the CPU number: follow its uses. */
static void read_into_local(struct ctx *c, const struct fn *f, struct cpu_read *r, const char *name)
{
	struct live_range lr;
	live_range_find(c, f, r, name, &lr);
	if (r->bound) {
		/* bring-up code: the CPU and its data are this task's alone */
		add_protected(c, RULE_P003, r->call, f,
			      xasprintf("CPU number %s read where the CPU runs nothing else", name), xstrdup(r->why));
		goto done;
	}
	/* 1. unprotected subscripts x[cpu] of per-CPU arrays are P001/P002 sites of their own */
	for (size_t i = 0; i < lr.vu.uses.len; i++)
		use_indexes_array(c, f, r, name, lr.vu.uses.items[i]);
	/* 2. the number cannot change (bring-up, pinned): its array uses were decided above */
	if (r->stable) {
		add_protected(c, RULE_P003, r->call, f,
			      xasprintf("CPU number %s read where the CPU cannot change", name), xstrdup(r->stable));
		goto done;
	}
	/* 2b. read and never used: nothing depends on the CPU */
	if (lr.vu.uses.len == 0) {
		add_protected(c, RULE_P003, r->call, f,
			      xasprintf("CPU number %s is read but never used", name),
			      xstrdup("no use of the value can go stale: nothing to protect (the read can go)"));
		goto done;
	}
	/* 3. read and used with preemption off */
	if (lr.all_prot) {
		add_protected(c, RULE_P003, r->call, f,
			      xasprintf("CPU number %s read and used with preemption off", name), xstrdup(r->why));
		goto done;
	}
	struct buf ev = BUF_INIT;
	live_range_evidence(f, r, &lr, c, &ev);
	/* 4. a sleep in the live range; 5. the read moves under the lock; 6. a get_cpu() region */
	if (live_range_sleeps(c, f, r, &lr, &ev))
		goto done;
	TSNode read_stmt = block_stmt(r->call);
	if (live_range_move_inside(c, f, r, &lr, read_stmt, &ev))
		goto done;
	struct finding *fd = add_finding(c, RULE_P003, r->call, f, lr.all_printed ? SEV_NOTE : SEV_WARNING,
		CONF_HIGH, lr.all_printed ? FIX_NONE : FIX_GET_CPU,
		xasprintf(lr.all_printed ? "CPU number %s from smp_processor_id() is only printed, in preemptible code"
					 : "CPU number %s from smp_processor_id() used in preemptible code", name),
		buf_detach(&ev));
	if (fd && lr.all_printed) {
		/* 2.6.9 kept such reads bare: a wrapped printk is churn a maintainer rejects */
		set_note(fd, xasprintf("not rewritten: %s is only printed; after a migration the message names "
				       "the CPU the task just left, which 2.6 kernels accepted (wrap it in "
				       "get_cpu()/put_cpu() by hand if the message must be exact)", name));
	} else if (fd) {
		char *no = NULL;
		if (covered_read(c, r->call, fd, &no)) { /* inside a region over this CPU's own state */
			if (no)
				unfixable(fd, no);
			goto done;
		}
		const struct finding *owner = covering_region(c, f, r->call, lr.vu.uses.items, lr.vu.uses.len);
		no = owner ? NULL : plan_live_range(c, r, &lr, read_stmt, fd);
		if (owner)
			share_region(fd, owner);
		refuse_or_hold(c, f, r->call, fd, no);
		if (fd->fix != FIX_NONE)
			share_with_slots(c, fd, r->line);
	}
done:
	vec_release(&lr.vu.uses);
}

void check_cpu_read(struct ctx *c, const struct fn *f, TSNode call, const char *kind)
{
	if (strcmp(kind, "cpu_macro") == 0) {
		check_cpu_macro(c, f, call);
		return;
	}
	struct cpu_read r;
	r.call = call;
	r.parent = up(call, &r.child);
	struct point_state ps = flow_state_at(f, ts_node_start_byte(call));
	r.prot = point_protected(&ps);
	r.why = explain_state(f, &ps);
	r.line = line_of(c, call);
	r.stable = NULL;
	r.bound = false;
	bool whole = false;
	char *held = r.prot ? NULL : cpu_entry_lock(c, f, call);
	if (held) {
		r.prot = true;
		free(r.why);
		r.why = held;
	}
	if (!r.prot)
		r.stable = cpu_stable(c, f, call, &whole);
	if (r.stable && whole) {
		/* bring-up: the CPU runs this task alone, its data included */
		r.prot = r.bound = true;
		free(r.why);
		r.why = r.stable;
		r.stable = NULL;
	}
	if (!r.prot && !r.stable && cpu_unbound(c, f)) {
		char *w = xasprintf("%s; %s", r.why, cpu_unbound(c, f));
		free(r.why);
		r.why = w;
	}
	TSNode p = r.parent;

	if (ts_type_is(p, "argument_list") && call_is(c, ts_parent(p), "per_cpu")) {
		/* per_cpu(x, smp_processor_id()) is P002's site (check_cpu_var) */
	} else if (ts_type_is(p, "subscript_expression") && ts_node_eq(ts_field(p, "index"), r.child) &&
		   array_of_subscript(c, p)) {
		/* x[smp_processor_id()] */
		struct percpu_array *pa = array_of_subscript(c, p);
		if (pa->is_static)
			read_indexes_static_array(c, f, &r, pa);
		else
			read_indexes_array(c, f, &r, pa);
	} else if (ts_node_is_null(read_into_var(c, &r))) {
		read_used_directly(c, f, &r);
	} else {
		/* a variable holds the CPU number */
		char *name = node_text(c, read_into_var(c, &r));
		if (is_local(c, f, name))
			read_into_local(c, f, &r, name);
		else
			read_into_global(c, f, &r, name);
		free(name);
	}
	free(r.why);
	free(r.stable);
}

/* ---- hooks (rules/rules.def) ------------------------------------------------ */

/* Might a macro of the file or of the tree's headers read the CPU here? */
static void cpu_read_begin_file(struct ctx *c)
{
	const tree_macro_vec *m = c->opts->macros;
	for (size_t i = 0; m && i < m->len; i++)
		c->may_tree_cpu_macro |= m->items[i].kind == MACRO_CPU;
	c->may_cpu_macro = c->may_tree_cpu_macro;
	for (size_t i = 0; i < c->src->defs.len && !c->may_cpu_macro; i++)
		c->may_cpu_macro = macro_reads_cpu(c->src->defs.items[i].body);
	c->may_macro_site |= c->may_cpu_macro;
}

static void cpu_read_release(struct ctx *c)
{
	cpu_stable_release(c);
	vec_release(&c->covered);
	vec_release(&c->cpu_macros);
}

/* #cpu-macro? of grammars/sites.scm. */
static bool cpu_read_pred(struct ctx *c, const char *name, TSNode n)
{
	(void)name;
	return cpu_macro_of(c, n) != NULL;
}

/* A header's macro reading the CPU; the kernel's own (include/: in_interrupt()) are 2.6's to port. */
static int cpu_read_header_macro(const struct ctx *c, const struct macro_def *d)
{
	const char *path = c->src->path;
	bool in_include = strncmp(path, "include/", 8) == 0 || strstr(path, "/include/") != NULL;
	return macro_reads_cpu(d->body) && !in_include ? MACRO_CPU : -1;
}

const struct rule_hooks cpu_read_hooks = {
	.check = check_cpu_read,
	.site_words = {"smp_processor_id"},
	.begin_file = cpu_read_begin_file,
	.release = cpu_read_release,
	.preds = {"cpu-macro?"},
	.pred = cpu_read_pred,
	.macro_preds = {"cpu-macro?"},
	.header_macro = cpu_read_header_macro,
};
