/*
 * Atomic contexts: the functions the kernel runs in hard-IRQ or softirq
 * context (registered with request_irq, as timers, tasklets, NAPI ->poll,
 * ...; interrupt signatures; irq_enter()). The static functions every
 * caller in the file calls with preemption off (a pessimistic fixed point)
 * are context_callers.c.
 */
#define _GNU_SOURCE /* memmem */
#include "analysis/flow.h"
#include "analysis/tree.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Gives F context CTX for REASON (owned), unless it already has a stronger one. */
void context_set_text(struct fn *f, enum fn_context ctx, char *reason)
{
	if (f->ctx == CTX_HARDIRQ || (f->ctx == CTX_SOFTIRQ && ctx != CTX_HARDIRQ)) {
		free(reason); /* keep the first, strongest reason */
		return;
	}
	f->ctx = ctx;
	free(f->ctx_reason);
	f->ctx_reason = reason;
}

static void set_context(struct fn *f, enum fn_context ctx, const char *fmt, unsigned line)
{
	context_set_text(f, ctx, xasprintf(fmt, line));
}

struct ident_scan {
	struct file_analysis *fa;
	/* fields copied into pm_idle (`pm_idle = cfg.curr_idle;`): a function stored
	 * in such a field is an idle routine too */
	VEC(TSNode) idle_fields;
	VEC(unsigned) idle_lines;
};

static bool idle_field_visit(TSNode n, void *ctx)
{
	struct ident_scan *is = ctx;
	if (!ts_type_is(n, "assignment_expression"))
		return true;
	const char *src = is->fa->src->parse_text;
	TSNode l = ts_field(n, "left"), r = ts_field(n, "right");
	if (ts_type_is(l, "identifier") && ts_text_is(l, src, "pm_idle") && ts_type_is(r, "field_expression")) {
		vec_push(&is->idle_fields, ts_field(r, "field"));
		unsigned line = source_pos(is->fa->src, ts_node_start_byte(n)).line;
		vec_push(&is->idle_lines, line);
	}
	return true;
}

/* Climbs from an identifier through casts, parentheses and `&`. */
static TSNode value_parent(TSNode n, TSNode *child)
{
	TSNode p = ts_parent(n);
	while (!ts_node_is_null(p) && (ts_type_is(p, "parenthesized_expression") ||
				       ts_type_is(p, "cast_expression") ||
				       ts_type_is(p, "pointer_expression"))) {
		n = p;
		p = ts_parent(p);
	}
	*child = n;
	return p;
}

/* The type text of the declaration around N (an initialiser), or an empty range. */
static void declaration_type(TSNode n, uint32_t *s, uint32_t *e)
{
	*s = *e = 0;
	for (TSNode p = ts_parent(n); !ts_node_is_null(p); p = ts_parent(p)) {
		if (ts_type_is(p, "declaration")) {
			TSNode type = ts_field(p, "type");
			*s = ts_node_start_byte(type), *e = ts_node_end_byte(type);
			return;
		}
		if (ts_type_is(p, "function_definition"))
			return;
	}
}

static bool in_timer_list_decl(TSNode n, const char *src)
{
	uint32_t s, e;
	declaration_type(n, &s, &e);
	return e - s >= 10 && memmem(src + s, e - s, "timer_list", 10) != NULL;
}

/* The registration through node N's text, or NULL. */
static const struct registration *registration_at(enum reg_via via, TSNode n, const char *src)
{
	uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
	return api_registration(via, src + s, e - s);
}

static void use_registered(struct fn_use *u, const struct registration *r)
{
	if (r && u->kind != USE_REGISTERED) {
		u->kind = USE_REGISTERED;
		u->ctx = r->ctx;
		u->reason = xasprintf(r->fmt, u->line);
	}
}

static TSNode function_declarator(TSNode d);

/* The name parameter I of function F declares, or a null node. */
static TSNode parameter_name(const struct fn *f, uint32_t i)
{
	TSNode params = ts_field(function_declarator(ts_field(f->def, "declarator")), "parameters");
	if (ts_node_is_null(params) || i >= ts_node_named_child_count(params))
		return ts_null();
	TSNode d = ts_field(ts_node_named_child(params, i), "declarator");
	while (!ts_node_is_null(d) && !ts_type_is(d, "identifier")) {
		TSNode inner = ts_field(d, "declarator");
		if (ts_node_is_null(inner) && ts_type_is(d, "parenthesized_declarator") && ts_node_named_child_count(d))
			inner = ts_node_named_child(d, 0);
		d = inner;
	}
	return d;
}

/* What a wrapper does with its callback parameter (forward_visit()). */
struct forward {
	const struct file_analysis *fa;
	const struct fn *w;
	const char *name; /* the parameter's */
	size_t len;
	unsigned call_line, reg_line; /* its first call with preemption off, its first registration */
	const struct registration *reg;
	bool bad; /* any other use: stored, passed on, called with preemption on */
};

static bool forward_visit(TSNode n, void *ctx)
{
	struct forward *fw = ctx;
	const char *src = fw->fa->src->parse_text;
	if (fw->bad || !ts_type_is(n, "identifier"))
		return !fw->bad;
	uint32_t s = ts_node_start_byte(n);
	if (ts_node_end_byte(n) - s != fw->len || memcmp(src + s, fw->name, fw->len) != 0)
		return true;
	unsigned line = source_pos(fw->fa->src, s).line;
	TSNode child, p = value_parent(n, &child), call = ts_parent(p);
	if (ts_type_is(p, "call_expression") && ts_node_eq(ts_field(p, "function"), child)) {
		struct point_state ps = flow_state_at(fw->w, s);
		fw->bad = !point_protected(&ps) || point_bkl_only(fw->w, &ps, s);
		if (!fw->call_line)
			fw->call_line = line;
		return true;
	}
	const struct registration *r = NULL;
	const char *callee;
	size_t clen = ts_type_is(p, "argument_list") ? ts_call_name(call, src, &callee) : 0;
	if (clen)
		r = api_registration(REG_CALL, callee, clen);
	if (!r || !ts_node_eq(ts_node_named_child(p, r->arg), child)) {
		fw->bad = true;
		return false;
	}
	if (!fw->reg)
		fw->reg = r, fw->reg_line = line;
	return true;
}

/*
 * Passed as argument ARGI to NAME, a function of the file whose parameter
 * there is a callback it only calls with preemption off and hands to
 * registrations of an atomic context: 2.6.9 mm/slab.c
 * smp_call_function_all_cpus(func, arg) runs func(arg) locally under
 * preempt_disable() and local_irq_disable(), then on the other CPUs through
 * smp_call_function() (2.4's the same under local_irq_disable()).
 */
static void registered_by_wrapper(const struct file_analysis *fa, struct fn_use *u, const char *name, size_t len,
				  uint32_t argi)
{
	int idx = analysis_fn_index(fa, name, len);
	struct fn *w = idx < 0 ? NULL : &fa->fns.items[idx];
	TSNode prm = w ? parameter_name(w, argi) : ts_null();
	if (ts_node_is_null(prm) || ts_node_is_null(w->body) || !w->events.len)
		return;
	const char *src = fa->src->parse_text;
	struct forward fw = {fa, w, src + ts_node_start_byte(prm), ts_node_end_byte(prm) - ts_node_start_byte(prm),
			     0, 0, NULL, false};
	flow_run(w);
	ts_walk(w->body, forward_visit, &fw);
	if (fw.bad || (!fw.call_line && !fw.reg))
		return;
	u->kind = USE_REGISTERED;
	u->ctx = fw.call_line ? CTX_CALLERS : fw.reg->ctx;
	char *reg = fw.reg ? xasprintf(" and hands it to %s() at line %u", fw.reg->name, fw.reg_line) : xstrdup("");
	u->reason = fw.call_line ? xasprintf("passed to %s() at line %u, which calls it with preemption off at line %u%s",
					     w->name, u->line, fw.call_line, reg)
				 : xasprintf("passed to %s() at line %u, which hands it to %s() at line %u", w->name,
					     u->line, fw.reg->name, fw.reg_line);
	free(reg);
}

/* Passed as an argument (CHILD of ARGS): request_irq(irq, f, ...), EXPORT_SYMBOL(f). */
static void registered_by_call(const struct file_analysis *fa, struct fn_use *u, TSNode args, TSNode child)
{
	const char *src = fa->src->parse_text;
	const char *name;
	size_t len = ts_call_name(ts_parent(args), src, &name);
	uint32_t argi = 0;
	for (uint32_t i = 0; i < ts_node_named_child_count(args); i++)
		if (ts_node_eq(ts_node_named_child(args, i), child))
			argi = i;
	if (len >= 13 && memcmp(name, "EXPORT_SYMBOL", 13) == 0) {
		u->kind = USE_EXPORT;
		return;
	}
	if (len && api_callback_arg(name, len) == (int)argi && ts_type_is(child, "identifier")) {
		u->kind = USE_CALL; /* NF_HOOK(..., okfn): run here, in the caller's context */
		u->call = ts_parent(args);
		return;
	}
	const struct registration *r = len ? api_registration(REG_CALL, name, len) : NULL;
	if (r && r->arg == argi)
		use_registered(u, r);
	else if (len && ts_type_is(child, "identifier"))
		registered_by_wrapper(fa, u, name, len, argi);
}

/* Stored in field FLD, a field some code copies into pm_idle. */
static void registered_as_idle(const struct ident_scan *is, struct fn_use *u, TSNode fld)
{
	const char *src = is->fa->src->parse_text;
	for (size_t k = 0; is && k < is->idle_fields.len; k++) {
		TSNode idf = is->idle_fields.items[k];
		uint32_t a = ts_node_start_byte(idf), b = ts_node_end_byte(idf);
		uint32_t x = ts_node_start_byte(fld), y = ts_node_end_byte(fld);
		if (b - a == y - x && memcmp(src + a, src + x, b - a) == 0 && u->kind != USE_REGISTERED) {
			u->kind = USE_REGISTERED;
			u->ctx = CTX_CALLERS;
			u->reason = xasprintf("the idle loop (stored in .%.*s at line %u, installed as "
					      "pm_idle at line %u) runs with preemption disabled",
					      (int)(b - a), src + a, u->line, is->idle_lines.items[k]);
		}
	}
}

/* Assigned to LEFT: a variable (pm_idle = f) or a field (t.function = f, dev->poll = f). */
static void registered_by_assignment(const struct ident_scan *is, struct fn_use *u, TSNode left,
				     const char *src)
{
	if (ts_type_is(left, "identifier"))
		use_registered(u, registration_at(REG_VARIABLE, left, src));
	if (ts_type_is(left, "field_expression")) {
		TSNode fld = ts_field(left, "field");
		if (is)
			registered_as_idle(is, u, fld);
		use_registered(u, registration_at(REG_FIELD, fld, src));
		/* dev->poll =, and a net_device embedded in another object:
		 * queue->blog_dev.poll =, adapter->polling_netdev[i].poll = (a global
		 * file_operations or tty_ldisc is named directly: fops.poll =) */
		TSNode obj = ts_field(left, "argument");
		if (ts_text_is(ts_field(left, "operator"), src, "->") || ts_type_is(obj, "field_expression") ||
		    ts_type_is(obj, "subscript_expression"))
			use_registered(u, registration_at(REG_POINTER_FIELD, fld, src));
	}
}

/* In a designated initialiser PAIR: { .function = f } (or GNU `function: f`). */
static void registered_by_designator(struct fn_use *u, TSNode pair, const char *src)
{
	TSNode des = ts_field(pair, "designator");
	if (ts_type_is(des, "field_designator") && ts_node_named_child_count(des) > 0)
		des = ts_node_named_child(des, 0);
	uint32_t s, e;
	declaration_type(pair, &s, &e);
	uint32_t a = ts_node_start_byte(des), b = ts_node_end_byte(des);
	use_registered(u, api_registration_in(REG_FIELD, src + a, b - a, src + s, e - s));
}

/*
 * The member CHILD of LIST, a positional initialiser of a declared struct
 * (or of an element of a declared array of them), given in order from the
 * first member: { ipgre_rcv, ipgre_err, 0, IPPROTO_GRE, ... }.
 */
static void registered_by_position(struct fn_use *u, TSNode list, TSNode child, const char *src)
{
	TSNode up = ts_parent(list);
	if (ts_type_is(up, "initializer_list"))
		up = ts_parent(up); /* an array of them */
	if (!ts_type_is(up, "init_declarator"))
		return;
	unsigned pos = 0;
	for (uint32_t i = 0; i < ts_node_named_child_count(list); i++) {
		TSNode m = ts_node_named_child(list, i);
		if (ts_node_eq(m, child))
			break;
		if (ts_type_is(m, "comment"))
			continue;
		if (ts_type_is(m, "initializer_pair"))
			return; /* designated members before it: its place is not its position */
		pos++;
	}
	uint32_t s, e;
	declaration_type(list, &s, &e);
	use_registered(u, api_registration_at(pos, src + s, e - s));
}

/* An identifier in a #define body or a file-scope macro call we cannot see through. */
static bool in_macro_text(TSNode n)
{
	for (TSNode p = ts_parent(n); !ts_node_is_null(p); p = ts_parent(p))
		if (ts_type_is(p, "preproc_arg") || ts_type_is(p, "ERROR"))
			return true;
	return false;
}

/* The identifier declarator D declares (through pointers, arrays, initialisers, parentheses), or a null node. */
static TSNode declared_name(TSNode d)
{
	while (!ts_node_is_null(d) && !ts_type_is(d, "identifier")) {
		if (ts_type_is(d, "function_declarator"))
			return ts_null(); /* a function: the name is not a variable's */
		TSNode next = ts_field(d, "declarator");
		d = ts_node_is_null(next) && ts_type_is(d, "parenthesized_declarator") ? ts_node_named_child(d, 0) : next;
	}
	return d;
}

/* Does declaration DECL (before OFF) declare a variable named like N? */
static bool declares(TSNode decl, TSNode n, const char *src)
{
	if (!ts_type_is(decl, "declaration") || ts_node_start_byte(decl) >= ts_node_start_byte(n))
		return false;
	uint32_t len = ts_node_end_byte(n) - ts_node_start_byte(n);
	for (uint32_t i = 0, k = ts_node_named_child_count(decl); i < k; i++) {
		TSNode v = declared_name(ts_node_named_child(decl, i));
		if (!ts_node_is_null(v) && !ts_node_eq(v, n) && ts_node_end_byte(v) - ts_node_start_byte(v) == len &&
		    memcmp(src + ts_node_start_byte(v), src + ts_node_start_byte(n), len) == 0)
			return true;
	}
	return false;
}

/*
 * Is identifier N not the function of its name: a parameter (`int xmon`
 * of my_console_wait_key() is not xmon()), or a use in the scope of a
 * parameter or variable declared with that name, in a block, the
 * function's parameters or at file scope?
 */
static bool shadowed(TSNode n, const char *src)
{
	uint32_t len = ts_node_end_byte(n) - ts_node_start_byte(n);
	for (TSNode p = ts_parent(n); !ts_node_is_null(p); p = ts_parent(p)) {
		if (ts_type_is(p, "parameter_declaration"))
			return ts_node_eq(declared_name(ts_field(p, "declarator")), n);
		if (ts_type_is(p, "compound_statement") || ts_type_is(p, "translation_unit")) {
			/* a cursor: ts_node_named_child(p, i) walks from the first child each time,
			 * and a file has thousands of top-level nodes */
			TSTreeCursor cur = ts_tree_cursor_new(p);
			bool found = false;
			for (bool more = ts_tree_cursor_goto_first_child(&cur); more && !found;
			     more = ts_tree_cursor_goto_next_sibling(&cur)) {
				TSNode c = ts_tree_cursor_current_node(&cur);
				if (ts_node_start_byte(c) >= ts_node_start_byte(n))
					break;
				found = ts_node_is_named(c) && declares(c, n, src);
			}
			ts_tree_cursor_delete(&cur);
			if (found)
				return true;
		}
		if (ts_type_is(p, "function_definition")) {
			TSNode fd = ts_field(p, "declarator");
			while (!ts_node_is_null(fd) && !ts_type_is(fd, "function_declarator"))
				fd = ts_field(fd, "declarator");
			TSNode params = ts_node_is_null(fd) ? fd : ts_field(fd, "parameters");
			for (uint32_t i = 0, k = ts_node_is_null(params) ? 0 : ts_node_named_child_count(params); i < k; i++) {
				TSNode prm = ts_node_named_child(params, i);
				TSNode v = ts_type_is(prm, "parameter_declaration") ? declared_name(ts_field(prm, "declarator"))
										    : ts_null();
				if (!ts_node_is_null(v) && ts_node_end_byte(v) - ts_node_start_byte(v) == len &&
				    memcmp(src + ts_node_start_byte(v), src + ts_node_start_byte(n), len) == 0)
					return true;
			}
		}
	}
	return false;
}

static void classify_use(const struct ident_scan *is, const struct file_analysis *fa, TSNode n,
			 struct fn_use *u)
{
	const char *src = fa->src->parse_text;
	memset(u, 0, sizeof *u);
	u->line = source_pos(fa->src, ts_node_start_byte(n)).line;
	TSNode direct = ts_parent(n);
	if (ts_type_is(direct, "call_expression") && ts_node_eq(ts_field(direct, "function"), n)) {
		u->kind = USE_CALL;
		u->call = direct;
		return;
	}
	bool value = ts_type_is(direct, "init_declarator") && ts_node_eq(ts_field(direct, "value"), n);
	if (!value && (ts_type_is(direct, "function_declarator") || ts_type_is(direct, "pointer_declarator") ||
		       ts_type_is(direct, "init_declarator") || ts_type_is(direct, "declaration"))) {
		u->kind = USE_DECLARATION;
		return; /* its own (re)declaration; `void (*p)(void) = f;` stores it */
	}
	if (shadowed(n, src)) {
		u->kind = USE_DECLARATION; /* another entity of that name: no use of the function */
		return;
	}
	u->kind = USE_ADDRESS;
	TSNode child;
	TSNode p = value_parent(n, &child);
	if (ts_type_is(p, "argument_list"))
		registered_by_call(fa, u, p, child);
	if (ts_type_is(p, "assignment_expression") && ts_node_eq(ts_field(p, "right"), child))
		registered_by_assignment(is, u, ts_field(p, "left"), src);
	else if (ts_type_is(p, "initializer_pair"))
		registered_by_designator(u, p, src);
	else if (ts_type_is(p, "initializer_list") && u->kind != USE_REGISTERED)
		registered_by_position(u, p, child, src);
	if (ts_type_is(p, "initializer_list") && in_timer_list_decl(p, src) && u->kind != USE_REGISTERED) {
		u->kind = USE_REGISTERED;
		u->ctx = CTX_SOFTIRQ;
		u->reason = xasprintf("timer function (static timer_list initialiser at line %u)", u->line);
	}
}

void context_classify_use(const struct file_analysis *fa, TSNode ident, struct fn_use *out)
{
	if (in_macro_text(ident)) {
		memset(out, 0, sizeof *out);
		out->kind = USE_ADDRESS;
		out->unread = true;
		out->line = source_pos(fa->src, ts_node_start_byte(ident)).line;
		return;
	}
	classify_use(NULL, fa, ident, out);
}

/* Every use of a function's name other than a call: its address is taken, maybe registered. */
static bool ident_visit(TSNode n, void *ctx)
{
	struct ident_scan *is = ctx;
	if (!ts_type_is(n, "identifier"))
		return true;
	const char *src = is->fa->src->parse_text;
	int idx = analysis_fn_index(is->fa, src + ts_node_start_byte(n),
				    ts_node_end_byte(n) - ts_node_start_byte(n));
	if (idx < 0)
		return false;
	struct fn *f = &is->fa->fns.items[idx];
	struct fn_use u;
	classify_use(is, is->fa, n, &u);
	if (u.kind == USE_CALL || u.kind == USE_DECLARATION || u.kind == USE_EXPORT)
		return false;
	f->addr_taken = true;
	if (u.kind == USE_REGISTERED)
		context_set_text(f, u.ctx, u.reason);
	/* stored in one struct field or one pointer only: the calls through it decide */
	char *fld = u.kind == USE_ADDRESS ? context_stored_field(n, src) : NULL;
	char *ptr = u.kind == USE_ADDRESS && !fld ? context_stored_pointer(n, src) : NULL;
	const char *have = fld ? f->via_field : f->via_pointer;
	if ((!fld && !ptr) || (fld && f->via_pointer) || (ptr && f->via_field) ||
	    (have && strcmp(have, fld ? fld : ptr) != 0))
		f->via_bad = true;
	if (fld && !f->via_field)
		f->via_field = fld, fld = NULL;
	if (ptr && !f->via_pointer)
		f->via_pointer = ptr, ptr = NULL;
	free(fld);
	free(ptr);
	return false;
}

/* P, CHILD's parent, is the statement `left = CHILD;` (of SRC): its left side, else a null node. */
static TSNode stored_by_statement(TSNode p, TSNode child, const char *src)
{
	if (ts_type_is(p, "assignment_expression") && ts_node_eq(ts_field(p, "right"), child) &&
	    ts_text_is(ts_field(p, "operator"), src, "=") && ts_type_is(ts_parent(p), "expression_statement"))
		return ts_field(p, "left");
	return ts_null();
}

char *context_stored_field(TSNode n, const char *src)
{
	TSNode child, p = value_parent(n, &child), fld = ts_null();
	TSNode left = stored_by_statement(p, child, src);
	if (ts_type_is(left, "field_expression"))
		fld = ts_field(left, "field");
	else if (ts_type_is(p, "initializer_pair")) {
		TSNode des = ts_field(p, "designator");
		if (ts_type_is(des, "field_designator") && ts_node_named_child_count(des) > 0)
			des = ts_node_named_child(des, 0);
		if (ts_type_is(des, "field_identifier"))
			fld = des;
	}
	if (ts_node_is_null(fld))
		return NULL;
	return xstrndup(src + ts_node_start_byte(fld), ts_node_end_byte(fld) - ts_node_start_byte(fld));
}

/* The identifier a declarator declares (through pointers, parentheses, a function's parameters), or null. */
static TSNode declarator_name(TSNode d)
{
	while (!ts_node_is_null(d) && !ts_type_is(d, "identifier")) {
		TSNode inner = ts_field(d, "declarator");
		if (ts_node_is_null(inner) && ts_type_is(d, "parenthesized_declarator") && ts_node_named_child_count(d))
			inner = ts_node_named_child(d, 0);
		d = inner;
	}
	return d;
}

char *context_stored_pointer(TSNode n, const char *src)
{
	TSNode child, p = value_parent(n, &child), name = ts_null();
	TSNode left = stored_by_statement(p, child, src);
	if (ts_type_is(left, "identifier"))
		name = left;
	else if (ts_type_is(p, "init_declarator") && ts_node_eq(ts_field(p, "value"), child))
		name = declarator_name(ts_field(p, "declarator"));
	if (ts_node_is_null(name))
		return NULL;
	return xstrndup(src + ts_node_start_byte(name), ts_node_end_byte(name) - ts_node_start_byte(name));
}

struct member_scan {
	const char *src;
	char **fields;   /* the candidate fields, distinct */
	unsigned *ok;    /* per field: the accesses that only store, call or test */
	size_t n;
};

/* Counts, per candidate field, the accesses that only store to it, call it or test it. */
static bool member_visit(TSNode n, void *ctx)
{
	struct member_scan *m = ctx;
	if (!ts_type_is(n, "field_expression"))
		return true;
	TSNode fld = ts_field(n, "field");
	size_t len = ts_node_end_byte(fld) - ts_node_start_byte(fld);
	const char *name = m->src + ts_node_start_byte(fld);
	size_t k = 0;
	while (k < m->n && (strlen(m->fields[k]) != len || memcmp(name, m->fields[k], len) != 0))
		k++;
	if (k == m->n)
		return true;
	TSNode p = ts_parent(n);
	if ((ts_type_is(p, "assignment_expression") && ts_node_eq(ts_field(p, "left"), n) &&
	     ts_text_is(ts_field(p, "operator"), m->src, "=")) ||
	    (ts_type_is(p, "call_expression") && ts_node_eq(ts_field(p, "function"), n)) ||
	    (ts_type_is(p, "binary_expression") && (ts_text_is(ts_field(p, "operator"), m->src, "==") ||
						    ts_text_is(ts_field(p, "operator"), m->src, "!="))) ||
	    (ts_type_is(p, "unary_expression") && ts_text_is(ts_field(p, "operator"), m->src, "!")))
		m->ok[k]++;
	return true;
}

static bool private_candidate(const struct file_analysis *fa, const struct fn *f)
{
	return f->via_field && !f->via_bad && f->is_static && f->ctx == CTX_PROCESS && !analysis_fn_is_shared(fa, f);
}

/*
 * The functions stored only in a field no other file of the tree accesses,
 * and whose every access in this file (its text, #define bodies included)
 * is a store, a call or a test: called through the field, so that the
 * file's calls through it are all there is to see. One walk serves every
 * candidate field.
 */
static void private_fields(struct file_analysis *fa)
{
	if (!fa->ext)
		return;
	struct member_scan m = {fa->src->parse_text, NULL, NULL, 0};
	for (size_t i = 0; i < fa->fns.len; i++) {
		const struct fn *f = &fa->fns.items[i];
		if (!private_candidate(fa, f))
			continue;
		size_t k = 0;
		while (k < m.n && strcmp(m.fields[k], f->via_field) != 0)
			k++;
		if (k < m.n)
			continue;
		m.fields = xrealloc(m.fields, (m.n + 1) * sizeof *m.fields);
		m.fields[m.n++] = f->via_field;
	}
	if (!m.n)
		return;
	m.ok = xcalloc(m.n, sizeof *m.ok);
	ts_walk(ts_tree_root_node(fa->tree), member_visit, &m);
	for (size_t i = 0; i < fa->fns.len; i++) {
		struct fn *f = &fa->fns.items[i];
		if (!private_candidate(fa, f))
			continue;
		size_t k = 0;
		while (strcmp(m.fields[k], f->via_field) != 0)
			k++;
		if (m.ok[k] != text_member_accesses(m.src, fa->src->len, f->via_field, 0) ||
		    !tree_field_private(fa->ext, fa->src->path, f->via_field))
			continue;
		f->via_private = true;
		f->addr_taken = false;
	}
	free(m.fields);
	free(m.ok);
}

static TSNode function_declarator(TSNode d)
{
	while (!ts_node_is_null(d) && !ts_type_is(d, "function_declarator"))
		d = ts_field(d, "declarator");
	return d;
}

/*
 * The 2.4 interrupt handler signature, void f(int, void *, struct pt_regs *),
 * or an architecture's interrupt entry point: a struct pt_regs * parameter
 * and a name like smp_apic_timer_interrupt or do_IRQ, or the NMI handler
 * do_nmi().
 */
static const char *irq_signature(const struct fn *f, const char *src)
{
	TSNode fd = function_declarator(ts_field(f->def, "declarator"));
	TSNode params = ts_field(fd, "parameters");
	if (ts_node_is_null(params))
		return NULL;
	uint32_t np = ts_node_named_child_count(params);
	bool regs = false;
	for (uint32_t i = 0; i < np; i++) {
		/* the parameter's own type: not a handler pointer it is given (ppc cpm_install_handler()) */
		TSNode t = ts_field(ts_node_named_child(params, i), "type");
		if (!ts_node_is_null(t) && memmem(src + ts_node_start_byte(t),
						  ts_node_end_byte(t) - ts_node_start_byte(t), "pt_regs", 7))
			regs = true;
	}
	if (!regs)
		return NULL;
	if (np == 3) {
		TSNode p1 = ts_node_named_child(params, 1);
		uint32_t s1 = ts_node_start_byte(p1), e1 = ts_node_end_byte(p1);
		if (memmem(src + s1, e1 - s1, "void", 4) && memchr(src + s1, '*', e1 - s1))
			return "interrupt handler (2.4 handler signature, line %u)";
	}
	size_t n = strlen(f->name);
	if (strcmp(f->name, "do_entInt") == 0)
		return "alpha's interrupt entry point (entInt in entry.S calls it for every interrupt, IPI, "
		       "machine check and timer tick the PALcode delivers, line %u)";
	if (strcmp(f->name, "do_nmi") == 0) /* i386, x86_64: `call do_nmi` in entry.S */
		return "NMI handler (do_nmi(), given struct pt_regs *, line %u): the NMI entry of entry.S calls it, "
		       "and no task switch happens until it returns (2.6.9 keeps its bare smp_processor_id())";
	if ((n > 10 && strcmp(f->name + n - 10, "_interrupt") == 0) || strcmp(f->name, "do_IRQ") == 0)
		return "interrupt entry point (named like one and given struct pt_regs *, line %u)";
	return NULL;
}

/* A lock implementation by its name (api_lock_impl()) and a spinlock_t or rwlock_t parameter. */
static bool lock_impl(const struct fn *f, const char *src)
{
	TSNode params = ts_field(function_declarator(ts_field(f->def, "declarator")), "parameters");
	if (ts_node_is_null(params) || !api_lock_impl(f->name, strlen(f->name)))
		return false;
	uint32_t s = ts_node_start_byte(params), e = ts_node_end_byte(params);
	return memmem(src + s, e - s, "spinlock_t", 10) || memmem(src + s, e - s, "rwlock_t", 8);
}

/* Functions named in DECLARE_TASKLET(t, f, data) and DEFINE_TIMER(t, f, ...). */
static void macro_contexts(struct file_analysis *fa)
{
	for (size_t i = 0; i < fa->src->uses.len; i++) {
		const struct macro_use *u = &fa->src->uses.items[i];
		bool tasklet = strncmp(u->name, "DECLARE_TASKLET", 15) == 0;
		bool timer = strcmp(u->name, "DEFINE_TIMER") == 0;
		if ((!tasklet && !timer) || u->args.len < 2)
			continue;
		int idx = analysis_fn_index(fa, u->args.items[1], strlen(u->args.items[1]));
		if (idx < 0)
			continue;
		fa->fns.items[idx].addr_taken = true;
		fa->fns.items[idx].via_bad = true;
		set_context(&fa->fns.items[idx], CTX_SOFTIRQ,
			    tasklet ? "tasklet function (DECLARE_TASKLET at line %u)"
				    : "timer function (DEFINE_TIMER at line %u)",
			    source_pos(fa->src, u->offset).line);
	}
}

/* Interrupt entry points: by signature, or calling irq_enter(); the task switch. */
static void irq_entry_contexts(struct file_analysis *fa)
{
	const char *src = fa->src->parse_text;
	for (size_t i = 0; i < fa->fns.len; i++) {
		struct fn *f = &fa->fns.items[i];
		if (strcmp(f->name, "__switch_to") == 0)
			set_context(f, CTX_CALLERS,
				    "the task switch (line %u), called from schedule() through switch_to(), which "
				    "2.6 runs with the runqueue locked and preemption off", f->pos.line);
		const char *sig = irq_signature(f, src);
		if (sig)
			set_context(f, CTX_HARDIRQ, sig, f->pos.line);
		const char *contract = api_contract(f->name, strlen(f->name), fa->src->path);
		if (contract)
			set_context(f, CTX_CALLERS, contract, f->pos.line);
		if (lock_impl(f, src))
			set_context(f, CTX_CALLERS, "a debug build's lock implementation (line %u): 2.6 runs it "
				    "between preempt_disable() and preempt_enable()", f->pos.line);
		for (size_t n = 0; n < f->events.len; n++)
			for (size_t e = 0; e < f->events.items[n].len; e++) {
				TSNode call = f->events.items[n].items[e].call;
				/* i386's irq_enter(cpu, irq); ppc's hardirq_enter(cpu) */
				bool irq = ts_call_is(call, src, "irq_enter");
				if (irq || ts_call_is(call, src, "hardirq_enter"))
					set_context(f, CTX_HARDIRQ, irq ? "calls irq_enter() at line %u"
									: "calls hardirq_enter() at line %u",
						    source_pos(fa->src, ts_node_start_byte(call)).line);
			}
	}
}

/* 1 for a byte of a word as the grammar reads identifiers (`$` and UTF-8 too, so no word is split). */
static uint8_t word_byte[256];

static void word_bytes_init(void)
{
	for (unsigned c = 0; c < 256; c++)
		word_byte[c] = is_ident_char((char)c) || c == '$' || c >= 0x80;
}

/*
 * VISIT on every identifier node naming a function of the file, in
 * document order, as a walk of the tree would: the names are found in the
 * text (a quick test of first byte and length first), their nodes by a
 * cursor moving forward.
 */
static void fn_idents(struct file_analysis *fa, bool (*visit)(TSNode n, void *ctx), void *ctx)
{
	uint64_t lens = 0;
	bool long_names = false;
	bool first[256] = {false};
	for (size_t i = 0; i < fa->fns.len; i++) {
		size_t n = strlen(fa->fns.items[i].name);
		if (n < 64)
			lens |= (uint64_t)1 << n;
		else
			long_names = true;
		first[(unsigned char)fa->fns.items[i].name[0]] = true;
	}
	if (!lens && !long_names)
		return;
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, word_bytes_init);
	const unsigned char *s = (const unsigned char *)fa->src->parse_text;
	size_t len = fa->src->len;
	struct ts_seek k;
	ts_seek_init(&k, ts_tree_root_node(fa->tree));
	for (size_t p = 0; p < len;) {
		if (!word_byte[s[p]]) {
			p++;
			continue;
		}
		size_t e = p + 1;
		while (e < len && word_byte[s[e]])
			e++;
		size_t n = e - p;
		if (first[s[p]] && (n < 64 ? (lens >> n) & 1 : long_names) &&
		    analysis_fn_index(fa, (const char *)s + p, n) >= 0) {
			TSNode id = ts_seek_range(&k, (uint32_t)p, (uint32_t)e);
			if (ts_type_is(id, "identifier") && ts_node_start_byte(id) == p && ts_node_end_byte(id) == e)
				visit(id, ctx);
		}
		p = e;
	}
	ts_seek_release(&k);
}

void context_find(struct file_analysis *fa)
{
	struct ident_scan is = {fa, VEC_INIT, VEC_INIT};
	if (memmem(fa->src->parse_text, fa->src->len, "pm_idle", 7)) /* a walk less for every other file */
		ts_walk(ts_tree_root_node(fa->tree), idle_field_visit, &is);
	fn_idents(fa, ident_visit, &is);
	vec_release(&is.idle_fields);
	vec_release(&is.idle_lines);
	macro_contexts(fa);
	irq_entry_contexts(fa);
	contract_find(fa);
	private_fields(fa);
}
