/*
 * Whether a call to a function of the file may sleep given its constant
 * arguments: do_hwc_write(0, ...) reaches get_user() only under
 * `if (from_user)`, extract_entropy(..., EXTRACT_ENTROPY_SECONDARY) reaches
 * schedule() only under `flags & EXTRACT_ENTROPY_USER`. The callee's CFG is
 * walked with the constants (numbers, NULL, the file's numeric #defines) in
 * its parameters, leaving out the edges a condition over them rules out.
 */
#include "analysis/flow.h"

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
};

struct walk {
	const struct file_analysis *fa;
	const char *src;
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
	long long r[] = {a & b, a | b, a ^ b, a + b, a - b, a == b, a != b, a < b, a > b, a <= b, a >= b,
			 b >= 0 && b < 63 ? a << b : 0, b >= 0 && b < 63 ? a >> b : 0};
	if (i == ARRAY_SIZE(ops))
		return false;
	*out = r[i];
	return true;
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
	for (size_t i = 0; i < a->env->n; i++)
		if (ts_node_end_byte(w) - ts_node_start_byte(w) == a->env->len[i] &&
		    memcmp(a->src + ts_node_start_byte(w), a->env->name[i], a->env->len[i]) == 0)
			a->env->known[i] = false;
	return true;
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
	}
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
		return api_may_sleep(call, w->src, NULL);
	const struct fn *h = &w->fa->fns.items[idx];
	struct env bound;
	if (h->sleeps == SLEEP_NO || depth >= (env->intr ? INTR_DEPTH : ARGS_DEPTH))
		return h->sleeps;
	bool any = bind_args(w, env, call, h, &bound);
	bound.intr = env->intr;
	if (!any && !bound.intr)
		return h->sleeps;
	return walk_fn(w, h, &bound, depth + 1);
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
	struct walk w = {fa, fa->src->parse_text};
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
	struct walk w = {fa, fa->src->parse_text};
	struct env none, bound;
	memset(&none, 0, sizeof none);
	if (g->sleeps == SLEEP_NO || !bind_args(&w, &none, call, g, &bound))
		return g->sleeps;
	return walk_fn(&w, g, &bound, 1);
}
