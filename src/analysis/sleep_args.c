/*
 * Whether a call to a function of the file may sleep given its constant
 * arguments: do_hwc_write(0, ...) reaches get_user() only under
 * `if (from_user)`, extract_entropy(..., EXTRACT_ENTROPY_SECONDARY) reaches
 * schedule() only under `flags & EXTRACT_ENTROPY_USER`. The callee's CFG is
 * walked with the constants (numbers, NULL, the file's numeric #defines) in
 * its parameters, leaving out the edges a condition over them rules out.
 */
#include "analysis/flow.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define ARGS_DEPTH 3   /* calls followed with their own constant arguments */
#define INTR_DEPTH 6   /* calls followed in interrupt context (in_interrupt() true all the way) */
#define MAX_PARAMS 16

struct env {
	const char *name[MAX_PARAMS];
	size_t len[MAX_PARAMS];
	long long val[MAX_PARAMS];
	bool known[MAX_PARAMS];
	size_t n;
	bool intr; /* the call is made in interrupt context: in_interrupt() is true */
	/*
	 * A field the caller set to a constant before the call: P->FLD is FVAL
	 * for every pointer P in FP (the callee's parameters handed that object).
	 */
	const char *fld;
	size_t fldl;
	long long fval;
	const char *fp[MAX_PARAMS];
	size_t fpl[MAX_PARAMS];
	size_t nfp;
};

struct walk {
	const struct file_analysis *fa;
	const char *src;
	bool *written; /* set when a node the walk reaches writes the field FLD (any object's) */
};

static bool eval(const struct walk *w, const struct env *env, TSNode n, long long *out);

/* The value of a numeric #define of the file named NAME. */
static bool macro_value(const struct walk *w, const char *name, size_t len, long long *out)
{
	const struct source *s = w->fa->src;
	for (size_t i = 0; i < s->defs.len; i++) {
		const struct macro_def *d = &s->defs.items[i];
		if (d->function_like || strlen(d->name) != len || memcmp(d->name, name, len) != 0)
			continue;
		const char *b = d->body;
		while (*b == ' ' || *b == '\t' || *b == '(')
			b++;
		char *end;
		long long v = strtoll(b, &end, 0);
		if (end == b)
			return false;
		while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L' || *end == ')' || *end == ' ' ||
		       *end == '\t')
			end++;
		if (*end)
			return false;
		*out = v;
		return true;
	}
	return false;
}

static bool eval_ident(const struct walk *w, const struct env *env, TSNode n, long long *out)
{
	const char *name = w->src + ts_node_start_byte(n);
	size_t len = ts_node_end_byte(n) - ts_node_start_byte(n);
	for (size_t i = 0; i < env->n; i++)
		if (env->len[i] == len && memcmp(env->name[i], name, len) == 0) {
			*out = env->val[i];
			return env->known[i];
		}
	if (len == 4 && memcmp(name, "NULL", 4) == 0) {
		*out = 0;
		return true;
	}
	return macro_value(w, name, len, out);
}

static bool eval_binary(const struct walk *w, const struct env *env, TSNode n, long long *out)
{
	TSNode op = ts_field(n, "operator");
	long long a, b;
	bool ka = eval(w, env, ts_field(n, "left"), &a), kb = eval(w, env, ts_field(n, "right"), &b);
	const char *o = w->src + ts_node_start_byte(op);
	size_t ol = ts_node_end_byte(op) - ts_node_start_byte(op);
	if (ol == 2 && memcmp(o, "&&", 2) == 0) {
		*out = (ka && !a) || (kb && !b) ? 0 : 1;
		return (ka && !a) || (kb && !b) || (ka && kb);
	}
	if (ol == 2 && memcmp(o, "||", 2) == 0) {
		*out = (ka && a) || (kb && b) ? 1 : 0;
		return (ka && a) || (kb && b) || (ka && kb);
	}
	if (!ka || !kb)
		return false;
	static const char *const ops[] = {"&", "|", "^", "+", "-", "==", "!=", "<", ">", "<=", ">=", "<<", ">>"};
	size_t i = 0;
	while (i < ARRAY_SIZE(ops) && !(strlen(ops[i]) == ol && memcmp(ops[i], o, ol) == 0))
		i++;
	/* wrapping, as the kernel's unsigned constants do: no signed overflow (0xf << 60) */
	unsigned long long ua = (unsigned long long)a, ub = (unsigned long long)b;
	long long r[] = {a & b, a | b, a ^ b, (long long)(ua + ub), (long long)(ua - ub), a == b, a != b, a < b,
			 a > b, a <= b, a >= b, b >= 0 && b < 63 ? (long long)(ua << b) : 0,
			 b >= 0 && b < 63 ? a >> b : 0};
	if (i == ARRAY_SIZE(ops))
		return false;
	*out = r[i];
	return true;
}

static bool text_eq(const char *src, TSNode n, const char *t, size_t len)
{
	return ts_node_end_byte(n) - ts_node_start_byte(n) == len &&
	       memcmp(src + ts_node_start_byte(n), t, len) == 0;
}

/* `p->fld` where ENV knows the field of the object P points to. */
static bool eval_field(const struct walk *w, const struct env *env, TSNode n, long long *out)
{
	TSNode base = ts_strip_parens(ts_field(n, "argument"), w->src);
	if (!env->nfp || !ts_text_is(ts_field(n, "operator"), w->src, "->") ||
	    !text_eq(w->src, ts_field(n, "field"), env->fld, env->fldl) || !ts_type_is(base, "identifier"))
		return false;
	for (size_t i = 0; i < env->nfp; i++)
		if (text_eq(w->src, base, env->fp[i], env->fpl[i])) {
			*out = env->fval;
			return true;
		}
	return false;
}

/* The value of expression N from ENV's constants, if it has one. */
static bool eval(const struct walk *w, const struct env *env, TSNode n, long long *out)
{
	n = ts_strip_parens(n, w->src);
	if (ts_type_is(n, "number_literal")) {
		char *end;
		*out = strtoll(w->src + ts_node_start_byte(n), &end, 0);
		return end != w->src + ts_node_start_byte(n);
	}
	if (ts_type_is(n, "null") || ts_type_is(n, "false")) {
		*out = 0;
		return true;
	}
	if (ts_type_is(n, "true")) {
		*out = 1;
		return true;
	}
	if (env->intr && ts_type_is(n, "call_expression") && ts_call_is(n, w->src, "in_interrupt")) {
		*out = 1;
		return true;
	}
	if (ts_type_is(n, "identifier"))
		return eval_ident(w, env, n, out);
	if (ts_type_is(n, "field_expression"))
		return eval_field(w, env, n, out);
	if (ts_type_is(n, "cast_expression"))
		return eval(w, env, ts_field(n, "value"), out);
	if (ts_type_is(n, "unary_expression")) {
		long long v;
		TSNode op = ts_field(n, "operator");
		if (!eval(w, env, ts_field(n, "argument"), &v))
			return false;
		*out = ts_text_is(op, w->src, "!") ? !v : ts_text_is(op, w->src, "~") ? ~v :
		       ts_text_is(op, w->src, "-") ? -v : v;
		return true;
	}
	if (ts_type_is(n, "binary_expression"))
		return eval_binary(w, env, n, out);
	return false;
}

/* The innermost identifier of declarator D (`*msg`, `buf[]`). */
static TSNode declarator_name(TSNode d)
{
	while (!ts_node_is_null(d) && !ts_type_is(d, "identifier"))
		d = ts_field(d, "declarator");
	return d;
}

struct assigned {
	const char *src;
	struct env *env;
};

static bool assigned_visit(TSNode n, void *ctx)
{
	struct assigned *a = ctx;
	TSNode w = ts_type_is(n, "assignment_expression") ? ts_field(n, "left")
		 : ts_type_is(n, "update_expression") ? ts_field(n, "argument")
		 : ts_type_is(n, "pointer_expression") && ts_text_is(ts_field(n, "operator"), a->src, "&")
		 ? ts_field(n, "argument") : ts_null();
	w = ts_strip_parens(w, a->src);
	if (!ts_type_is(w, "identifier"))
		return true;
	for (size_t i = 0; i < a->env->nfp; i++)
		if (text_eq(a->src, w, a->env->fp[i], a->env->fpl[i]))
			a->env->fpl[i] = 0; /* the pointer is made to point elsewhere */
	for (size_t i = 0; i < a->env->n; i++)
		if (ts_node_end_byte(w) - ts_node_start_byte(w) == a->env->len[i] &&
		    memcmp(a->src + ts_node_start_byte(w), a->env->name[i], a->env->len[i]) == 0)
			a->env->known[i] = false;
	return true;
}

/* Parameter K of OUT handed ARG, a pointer to the object whose field CALLER knows: it knows it too. */
static void bind_object(const char *src, const struct env *caller, TSNode arg, struct env *out, size_t k)
{
	out->fld = caller->fld;
	out->fldl = caller->fldl;
	out->fval = caller->fval;
	for (size_t i = 0; ts_type_is(arg, "identifier") && i < caller->nfp; i++)
		if (caller->fpl[i] && text_eq(src, arg, caller->fp[i], caller->fpl[i])) {
			out->fp[out->nfp] = out->name[k];
			out->fpl[out->nfp++] = out->len[k];
			return;
		}
}

/* G's parameters bound to CALL's arguments (evaluated in CALLER's ENV); false if none is constant. */
static bool bind_args(const struct walk *w, const struct env *caller, TSNode call, const struct fn *g,
		      struct env *out)
{
	memset(out, 0, sizeof *out);
	TSNode d = ts_field(g->def, "declarator");
	while (!ts_node_is_null(d) && !ts_type_is(d, "function_declarator"))
		d = ts_field(d, "declarator");
	TSNode params = ts_field(d, "parameters"), args = ts_field(call, "arguments");
	if (ts_node_is_null(params) || ts_node_is_null(args))
		return false; /* a definition read without its declarator (recovered from an error) */
	uint32_t np = ts_node_named_child_count(params), na = ts_node_named_child_count(args);
	bool any = false;
	for (uint32_t i = 0, a = 0; i < np && a < na && out->n < MAX_PARAMS; i++) {
		TSNode p = ts_node_named_child(params, i);
		if (!ts_type_is(p, "parameter_declaration"))
			continue;
		TSNode name = declarator_name(ts_field(p, "declarator"));
		TSNode arg = ts_node_named_child(args, a++);
		if (ts_node_is_null(name))
			continue;
		size_t k = out->n++;
		out->name[k] = w->src + ts_node_start_byte(name);
		out->len[k] = ts_node_end_byte(name) - ts_node_start_byte(name);
		out->known[k] = eval(w, caller, arg, &out->val[k]);
		any = any || out->known[k];
		bind_object(w->src, caller, ts_strip_parens(arg, w->src), out, k);
	}
	any = any || out->nfp > 0;
	struct assigned as = {w->src, out};
	if (any)
		ts_walk(g->body, assigned_visit, &as);
	return any;
}

static enum sleep_kind walk_fn(const struct walk *w, const struct fn *g, const struct env *env, unsigned depth);

/* How CALL, made where ENV holds, may sleep. */
static enum sleep_kind call_sleeps(const struct walk *w, TSNode call, const struct env *env, unsigned depth)
{
	const char *name;
	size_t len = ts_call_name(call, w->src, &name);
	int idx = len ? analysis_fn_index(w->fa, name, len) : -1;
	if (idx < 0)
		return api_may_sleep(call, w->src, w->fa->src->path, NULL);
	const struct fn *h = &w->fa->fns.items[idx];
	struct env bound;
	if (h->sleeps == SLEEP_NO || depth >= (env->intr || env->nfp ? INTR_DEPTH : ARGS_DEPTH))
		return h->sleeps;
	bool any = bind_args(w, env, call, h, &bound);
	bound.intr = env->intr;
	if (!any && !bound.intr)
		return h->sleeps;
	return walk_fn(w, h, &bound, depth + 1);
}

struct field_write {
	const char *src, *fld;
	size_t fldl;
	bool found;
};

static bool field_write_visit(TSNode n, void *ctx)
{
	struct field_write *x = ctx;
	TSNode l = ts_type_is(n, "assignment_expression") ? ts_field(n, "left")
		 : ts_type_is(n, "update_expression") ? ts_field(n, "argument")
		 : ts_type_is(n, "pointer_expression") && ts_text_is(ts_field(n, "operator"), x->src, "&")
		 ? ts_field(n, "argument") : ts_null();
	l = ts_strip_parens(l, x->src);
	if (ts_type_is(l, "field_expression") && text_eq(x->src, ts_field(l, "field"), x->fld, x->fldl))
		x->found = true;
	return !x->found;
}

/* Does N write (or take the address of) a field named FLD, of any object? */
static bool writes_field(const char *src, TSNode n, const char *fld, size_t fldl)
{
	struct field_write x = {src, fld, fldl, false};
	ts_walk(n, field_write_visit, &x);
	return x.found;
}

/* The strongest sleep G reaches with ENV in its parameters. */
static enum sleep_kind walk_fn(const struct walk *w, const struct fn *g, const struct env *env, unsigned depth)
{
	size_t n = g->cfg.nodes.len;
	uint8_t *seen = xcalloc(n, 1);
	VEC(uint32_t) work = VEC_INIT;
	vec_push(&work, CFG_ENTRY_ID);
	seen[CFG_ENTRY_ID] = 1;
	enum sleep_kind most = SLEEP_NO;
	while (work.len && most != SLEEP_YES) {
		uint32_t id = work.items[--work.len];
		const struct cfg_node *node = &g->cfg.nodes.items[id];
		if (env->nfp && w->written && !ts_node_is_null(node->ast) &&
		    writes_field(w->src, node->ast, env->fld, env->fldl))
			*w->written = true;
		for (size_t e = 0; e < g->events.items[id].len && most != SLEEP_YES; e++) {
			enum sleep_kind k = call_sleeps(w, g->events.items[id].items[e].call, env, depth);
			most = k > most ? k : most;
		}
		long long v = 0;
		bool known = node->kind == CFG_COND && eval(w, env, node->ast, &v);
		for (size_t s = 0; s < node->succ.len; s++) {
			const struct cfg_edge *edge = &node->succ.items[s];
			if (known && ((edge->label == EDGE_TRUE && !v) || (edge->label == EDGE_FALSE && v)))
				continue;
			if (!seen[edge->to]) {
				seen[edge->to] = 1;
				vec_push(&work, edge->to);
			}
		}
	}
	free(seen);
	vec_release(&work);
	return most;
}

enum sleep_kind sleep_call_in_interrupt(const struct file_analysis *fa, TSNode call, const struct fn *g)
{
	struct walk w = {fa, fa->src->parse_text, NULL};
	struct env none, bound;
	memset(&none, 0, sizeof none);
	none.intr = true;
	if (g->sleeps == SLEEP_NO)
		return SLEEP_NO;
	bind_args(&w, &none, call, g, &bound);
	bound.intr = true;
	return walk_fn(&w, g, &bound, 1);
}

enum sleep_kind sleep_call_with_args(const struct file_analysis *fa, TSNode call, const struct fn *g)
{
	struct walk w = {fa, fa->src->parse_text, NULL};
	struct env none, bound;
	memset(&none, 0, sizeof none);
	if (g->sleeps == SLEEP_NO || !bind_args(&w, &none, call, g, &bound))
		return g->sleeps;
	return walk_fn(&w, g, &bound, 1);
}

/* ---- a field the caller sets before the call ------------------------------ */

/* `p->fld = CONST;` as statement S: P, FLD and the value into OUT. */
static bool field_set(const struct walk *w, TSNode s, struct env *out)
{
	TSNode a = ts_node_named_child(s, 0);
	if (!ts_type_is(s, "expression_statement") || !ts_type_is(a, "assignment_expression") ||
	    !ts_text_is(ts_field(a, "operator"), w->src, "="))
		return false;
	TSNode l = ts_strip_parens(ts_field(a, "left"), w->src);
	TSNode p = ts_strip_parens(ts_field(l, "argument"), w->src), fld = ts_field(l, "field");
	struct env none;
	memset(&none, 0, sizeof none);
	if (!ts_type_is(l, "field_expression") || !ts_text_is(ts_field(l, "operator"), w->src, "->") ||
	    !ts_type_is(p, "identifier") || !eval(w, &none, ts_field(a, "right"), &out->fval))
		return false;
	memset(out, 0, offsetof(struct env, fval));
	out->fld = w->src + ts_node_start_byte(fld);
	out->fldl = ts_node_end_byte(fld) - ts_node_start_byte(fld);
	out->fp[0] = w->src + ts_node_start_byte(p);
	out->fpl[0] = ts_node_end_byte(p) - ts_node_start_byte(p);
	out->nfp = 1;
	return true;
}

/* The nearest `p->fld = CONST;` before CALL in a block around it, into OUT; its end offset, or 0. */
static uint32_t set_before(const struct walk *w, const struct fn *f, TSNode call, struct env *out)
{
	for (TSNode n = call, p = ts_node_parent(call); !ts_node_is_null(p) && !ts_node_eq(n, f->body);
	     n = p, p = ts_node_parent(p)) {
		if (!ts_type_is(p, "compound_statement"))
			continue;
		TSNode set = ts_null();
		for (uint32_t i = 0; i < ts_node_named_child_count(p); i++) {
			TSNode s = ts_node_named_child(p, i);
			if (ts_node_start_byte(s) >= ts_node_start_byte(n))
				break;
			struct env e;
			if (field_set(w, s, &e)) {
				*out = e;
				set = s;
			}
		}
		if (!ts_node_is_null(set))
			return ts_node_end_byte(set);
	}
	return 0;
}

struct between {
	const char *src, *p;
	size_t pl;
	uint32_t from, to;
	bool bad;
};

/* A label or a goto in [FROM, TO), or P assigned anywhere: the set may not hold at the call. */
static bool between_visit(TSNode n, void *ctx)
{
	struct between *b = ctx;
	uint32_t at = ts_node_start_byte(n);
	if ((ts_type_is(n, "labeled_statement") || ts_type_is(n, "goto_statement")) && at >= b->from && at < b->to)
		b->bad = true;
	if (ts_type_is(n, "assignment_expression") &&
	    text_eq(b->src, ts_strip_parens(ts_field(n, "left"), b->src), b->p, b->pl))
		b->bad = true;
	return !b->bad;
}

/*
 * Does no function the calls between FROM and TO in F reach (CALL's callee
 * G included) write the field, but behind a test of it that ENV rules out
 * (`if (!card->in_suspend) return; card->in_suspend++;`)?
 */
static bool field_kept(const struct walk *w, const struct fn *f, const struct fn *g, uint32_t from,
		       uint32_t to, const struct env *env)
{
	const struct file_analysis *fa = w->fa;
	uint8_t *seen = xcalloc(fa->fns.len + 1, 1);
	VEC(uint32_t) work = VEC_INIT;
	vec_push(&work, (uint32_t)(g - fa->fns.items));
	for (size_t c = 0; c < f->calls.len; c++) {
		uint32_t at = ts_node_start_byte(f->calls.items[c].call);
		if (at >= from && at < to)
			vec_push(&work, f->calls.items[c].callee);
	}
	bool kept = true;
	while (work.len && kept) {
		uint32_t i = work.items[--work.len];
		if (seen[i])
			continue;
		seen[i] = 1;
		const struct fn *h = &fa->fns.items[i];
		for (size_t c = 0; c < h->calls.len; c++)
			vec_push(&work, h->calls.items[c].callee);
		if (h == f || !writes_field(w->src, h->body, env->fld, env->fldl))
			continue;
		/* every pointer parameter may be the object: a write it reaches is a change */
		struct env all = *env;
		all.nfp = 0;
		TSNode d = ts_field(h->def, "declarator");
		while (!ts_node_is_null(d) && !ts_type_is(d, "function_declarator"))
			d = ts_field(d, "declarator");
		TSNode params = ts_field(d, "parameters");
		for (uint32_t k = 0; !ts_node_is_null(params) && k < ts_node_named_child_count(params) &&
				     all.nfp < MAX_PARAMS; k++) {
			TSNode name = declarator_name(ts_field(ts_node_named_child(params, k), "declarator"));
			if (ts_node_is_null(name))
				continue;
			all.fp[all.nfp] = w->src + ts_node_start_byte(name);
			all.fpl[all.nfp++] = ts_node_end_byte(name) - ts_node_start_byte(name);
		}
		bool written = false;
		struct walk hw = {fa, w->src, &written};
		walk_fn(&hw, h, &all, 1);
		kept = !written;
	}
	free(seen);
	vec_release(&work);
	return kept;
}

struct other_sets {
	const struct walk *w;
	const struct env *set;
	bool bad;
};

/* A write of the field in F other than a set to the same constant (in a loop, it reaches the call again). */
static bool other_sets_visit(TSNode n, void *ctx)
{
	struct other_sets *o = ctx;
	struct env e;
	if (field_set(o->w, n, &e)) {
		o->bad = e.fval != o->set->fval || e.fldl != o->set->fldl || memcmp(e.fld, o->set->fld, e.fldl) != 0 ||
			 e.fpl[0] != o->set->fpl[0] || memcmp(e.fp[0], o->set->fp[0], e.fpl[0]) != 0;
		return false; /* a set to the same constant: its own write is fine */
	}
	struct field_write x = {o->w->src, o->set->fld, o->set->fldl, false};
	field_write_visit(n, &x);
	o->bad = x.found;
	return !o->bad;
}

enum sleep_kind sleep_call_after_set(const struct file_analysis *fa, const struct fn *f, TSNode call,
				     const struct fn *g)
{
	bool written = false;
	struct walk w = {fa, fa->src->parse_text, &written};
	struct env set, bound;
	uint32_t from = set_before(&w, f, call, &set);
	if (!from || g->sleeps == SLEEP_NO)
		return g->sleeps;
	/* F itself: the set's pointer never reassigned, no other write of the field, no jump around */
	struct between b = {w.src, set.fp[0], set.fpl[0], from, ts_node_start_byte(call), false};
	ts_walk(f->body, between_visit, &b);
	struct other_sets o = {&w, &set, false};
	ts_walk(f->body, other_sets_visit, &o);
	if (b.bad || o.bad || !field_kept(&w, f, g, from, ts_node_start_byte(call), &set) || !bind_args(&w, &set, call, g, &bound) ||
	    !bound.nfp)
		return g->sleeps;
	enum sleep_kind k = walk_fn(&w, g, &bound, 1);
	return written ? g->sleeps : k;
}
