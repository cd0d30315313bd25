#include "analysis/cfg.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
/* Statement nesting the builder follows (it recurses once per level, on a
 * PARALLEL_STACK_SIZE worker stack); deeper code is left out and reported. */
#define MAX_NESTING 4000

struct label {
	const char *name;
	size_t len;
	uint32_t node;
};

struct builder {
	struct cfg *g;
	const char *src;
	VEC(struct label) labels;
	VEC(uint32_t) break_to;
	VEC(uint32_t) continue_to;
	unsigned depth;
};

static uint32_t new_node(struct builder *b, enum cfg_kind kind, TSNode ast)
{
	struct cfg_node n;
	memset(&n, 0, sizeof n);
	n.kind = kind;
	n.ast = ast;
	vec_push(&b->g->nodes, n);
	return (uint32_t)(b->g->nodes.len - 1);
}

static uint32_t new_join(struct builder *b)
{
	return new_node(b, CFG_JOIN, ts_null());
}

static void connect(struct builder *b, uint32_t from, uint32_t to, enum cfg_edge_label label)
{
	if (from == NONE || to == NONE)
		return;
	struct cfg_edge e = {to, label};
	vec_push(&b->g->nodes.items[from].succ, e);
}

/* A new node reached from CUR. */
static uint32_t append(struct builder *b, enum cfg_kind kind, TSNode ast, uint32_t cur)
{
	uint32_t n = new_node(b, kind, ast);
	connect(b, cur, n, EDGE_ALWAYS);
	return n;
}

static uint32_t label_node(struct builder *b, TSNode ident)
{
	const char *name = b->src + ts_node_start_byte(ident);
	size_t len = ts_node_end_byte(ident) - ts_node_start_byte(ident);
	for (size_t i = 0; i < b->labels.len; i++)
		if (b->labels.items[i].len == len && memcmp(b->labels.items[i].name, name, len) == 0)
			return b->labels.items[i].node;
	struct label l = {name, len, new_join(b)};
	vec_push(&b->labels, l);
	return l.node;
}

/* 1 / 0 for a condition that is the literal 1 or 0, -1 otherwise. */
static int constant_cond(TSNode cond, const char *src)
{
	cond = ts_strip_parens(cond, src);
	if (!ts_type_is(cond, "number_literal"))
		return -1;
	if (ts_text_is(cond, src, "0"))
		return 0;
	return ts_text_is(cond, src, "1") ? 1 : -1;
}

static uint32_t build(struct builder *b, TSNode s, uint32_t cur);

static uint32_t build_children(struct builder *b, TSNode parent, uint32_t from_child,
			       TSNode skip1, TSNode skip2, uint32_t cur)
{
	uint32_t n = ts_node_named_child_count(parent);
	for (uint32_t i = from_child; i < n; i++) {
		TSNode c = ts_node_named_child(parent, i);
		if (ts_node_eq(c, skip1) || ts_node_eq(c, skip2))
			continue;
		cur = build(b, c, cur);
	}
	return cur;
}

static uint32_t join2(struct builder *b, uint32_t x, uint32_t y)
{
	if (x == NONE)
		return y;
	if (y == NONE)
		return x;
	uint32_t j = new_join(b);
	connect(b, x, j, EDGE_ALWAYS);
	connect(b, y, j, EDGE_ALWAYS);
	return j;
}

static uint32_t build_loop_body(struct builder *b, TSNode body, uint32_t from,
				uint32_t brk, uint32_t cont)
{
	vec_push(&b->break_to, brk);
	vec_push(&b->continue_to, cont);
	uint32_t end = build(b, body, from);
	b->break_to.len--;
	b->continue_to.len--;
	return end;
}

/*
 * A loop test's edges into the body (labelled INTO_BODY) and out of the
 * loop; K, the test's constant_cond(), drops the edge never taken.
 */
static void loop_test_edges(struct builder *b, uint32_t test, int k, uint32_t body,
			    enum cfg_edge_label into_body, uint32_t exit)
{
	if (k != 0)
		connect(b, test, body, into_body);
	if (k != 1)
		connect(b, test, exit, EDGE_FALSE);
}

static uint32_t build_preproc(struct builder *b, TSNode s, uint32_t cur)
{
	TSNode cond = ts_field(s, "condition");
	TSNode alt = ts_field(s, "alternative");
	int k = -1;
	if (!ts_node_is_null(cond) && !ts_type_is(s, "preproc_ifdef"))
		k = constant_cond(cond, b->src);
	/* Children after the condition/name are the arm's items. */
	uint32_t first = ts_type_is(s, "preproc_ifdef") || !ts_node_is_null(cond) ? 1 : 0;
	if (k == 0) /* #if 0: the arm is dead */
		return ts_node_is_null(alt) ? cur : build(b, alt, cur);
	if (k == 1) /* #if 1: the alternative is dead */
		return build_children(b, s, first, alt, ts_null(), cur);
	/* each arm entered through a join of its own, so a path knows which it took */
	uint32_t arm_in = append(b, CFG_JOIN, ts_null(), cur);
	uint32_t other_in = append(b, CFG_JOIN, ts_null(), cur);
	struct cfg_arm yes = {arm_in, s, true}, no = {other_in, s, false};
	vec_push(&b->g->arms, yes);
	vec_push(&b->g->arms, no);
	uint32_t arm = build_children(b, s, first, alt, ts_null(), arm_in);
	uint32_t other = ts_node_is_null(alt) ? other_in : build(b, alt, other_in);
	return join2(b, arm, other);
}

static uint32_t build_switch(struct builder *b, TSNode s, uint32_t cur)
{
	uint32_t sw = append(b, CFG_STMT, ts_field(s, "condition"), cur);
	uint32_t exit = new_join(b);
	TSNode body = ts_field(s, "body");
	bool has_default = false;
	uint32_t prev = NONE;
	vec_push(&b->break_to, exit);
	/* continue inside a switch goes to the enclosing loop: keep continue_to */
	uint32_t n = ts_node_named_child_count(body);
	for (uint32_t i = 0; i < n; i++) {
		TSNode c = ts_node_named_child(body, i);
		if (ts_type_is(c, "case_statement")) {
			uint32_t l = new_join(b);
			connect(b, sw, l, EDGE_ALWAYS);
			connect(b, prev, l, EDGE_ALWAYS); /* fall-through */
			TSNode value = ts_field(c, "value");
			if (ts_node_is_null(value))
				has_default = true;
			prev = build_children(b, c, 0, value, ts_null(), l);
		} else {
			prev = build(b, c, prev);
		}
	}
	b->break_to.len--;
	connect(b, prev, exit, EDGE_ALWAYS);
	if (!has_default)
		connect(b, sw, exit, EDGE_ALWAYS);
	return exit;
}

static uint32_t build_if(struct builder *b, TSNode s, uint32_t cur)
{
	uint32_t c = append(b, CFG_COND, ts_field(s, "condition"), cur);
	uint32_t t_in = new_join(b);
	uint32_t f_in = new_join(b);
	connect(b, c, t_in, EDGE_TRUE);
	connect(b, c, f_in, EDGE_FALSE);
	uint32_t t_out = build(b, ts_field(s, "consequence"), t_in);
	TSNode alt = ts_field(s, "alternative");
	uint32_t f_out = f_in;
	if (!ts_node_is_null(alt)) /* else_clause wraps one statement */
		f_out = build_children(b, alt, 0, ts_null(), ts_null(), f_in);
	return join2(b, t_out, f_out);
}

static uint32_t build_while(struct builder *b, TSNode s, uint32_t cur)
{
	TSNode cond = ts_field(s, "condition");
	uint32_t head = append(b, CFG_COND, cond, cur);
	uint32_t body_in = new_join(b);
	uint32_t exit = new_join(b);
	loop_test_edges(b, head, constant_cond(cond, b->src), body_in, EDGE_TRUE, exit);
	uint32_t end = build_loop_body(b, ts_field(s, "body"), body_in, exit, head);
	connect(b, end, head, EDGE_ALWAYS);
	return exit;
}

static uint32_t build_do(struct builder *b, TSNode s, uint32_t cur)
{
	TSNode cond = ts_field(s, "condition");
	uint32_t body_in = append(b, CFG_JOIN, ts_null(), cur);
	uint32_t test = new_node(b, CFG_COND, cond);
	uint32_t exit = new_join(b);
	uint32_t end = build_loop_body(b, ts_field(s, "body"), body_in, exit, test);
	connect(b, end, test, EDGE_ALWAYS);
	loop_test_edges(b, test, constant_cond(cond, b->src), body_in, EDGE_TRUE, exit);
	return exit;
}

static uint32_t build_for(struct builder *b, TSNode s, uint32_t cur)
{
	TSNode init = ts_field(s, "initializer");
	TSNode cond = ts_field(s, "condition");
	TSNode upd = ts_field(s, "update");
	if (!ts_node_is_null(init))
		cur = append(b, CFG_STMT, init, cur);
	/* no condition: a join that always enters the body */
	uint32_t head = ts_node_is_null(cond) ? append(b, CFG_JOIN, ts_null(), cur)
					      : append(b, CFG_COND, cond, cur);
	uint32_t body_in = new_join(b);
	uint32_t exit = new_join(b);
	uint32_t step = ts_node_is_null(upd) ? head : new_node(b, CFG_STMT, upd);
	if (step != head)
		connect(b, step, head, EDGE_ALWAYS);
	if (ts_node_is_null(cond))
		loop_test_edges(b, head, 1, body_in, EDGE_ALWAYS, exit);
	else
		loop_test_edges(b, head, constant_cond(cond, b->src), body_in, EDGE_TRUE, exit);
	uint32_t end = build_loop_body(b, ts_field(s, "body"), body_in, exit, step);
	connect(b, end, step, EDGE_ALWAYS);
	return exit;
}

/* break, continue, return and goto (type T): no statement follows them on this path. */
static uint32_t build_jump(struct builder *b, TSNode s, const char *t, uint32_t cur)
{
	if (strcmp(t, "break_statement") == 0) {
		if (b->break_to.len)
			connect(b, cur, b->break_to.items[b->break_to.len - 1], EDGE_ALWAYS);
	} else if (strcmp(t, "continue_statement") == 0) {
		if (b->continue_to.len)
			connect(b, cur, b->continue_to.items[b->continue_to.len - 1], EDGE_ALWAYS);
	} else if (strcmp(t, "return_statement") == 0) {
		uint32_t r = append(b, CFG_RETURN, s, cur);
		connect(b, r, CFG_EXIT_ID, EDGE_ALWAYS);
	} else { /* goto_statement */
		TSNode l = ts_field(s, "label");
		if (!ts_node_is_null(l))
			connect(b, cur, label_node(b, l), EDGE_ALWAYS);
	}
	return NONE;
}

static bool is_jump(const char *t)
{
	return strcmp(t, "break_statement") == 0 || strcmp(t, "continue_statement") == 0 ||
	       strcmp(t, "return_statement") == 0 || strcmp(t, "goto_statement") == 0;
}

/* Code the flow does not see: comments, directives, nested functions, empty nodes. */
static bool is_no_code(TSNode s, const char *t)
{
	return strcmp(t, "comment") == 0 || strcmp(t, "preproc_def") == 0 ||
	       strcmp(t, "preproc_function_def") == 0 || strcmp(t, "preproc_call") == 0 ||
	       strcmp(t, "preproc_include") == 0 || strcmp(t, "function_definition") == 0 ||
	       ts_node_named_child_count(s) == 0;
}

/*
 * Adds statement S, entered from CUR. Returns the node the next statement
 * follows, NONE when no path falls through.
 */
static uint32_t build_stmt(struct builder *b, TSNode s, uint32_t cur)
{
	const char *t = ts_node_type(s);
	if (strcmp(t, "compound_statement") == 0 || strcmp(t, "preproc_else") == 0 ||
	    strcmp(t, "attributed_statement") == 0 || strcmp(t, "else_clause") == 0)
		return build_children(b, s, 0, ts_null(), ts_null(), cur);
	if (strcmp(t, "if_statement") == 0)
		return build_if(b, s, cur);
	if (strcmp(t, "while_statement") == 0)
		return build_while(b, s, cur);
	if (strcmp(t, "do_statement") == 0)
		return build_do(b, s, cur);
	if (strcmp(t, "for_statement") == 0)
		return build_for(b, s, cur);
	if (strcmp(t, "switch_statement") == 0)
		return build_switch(b, s, cur);
	if (is_jump(t))
		return build_jump(b, s, t, cur);
	if (strcmp(t, "labeled_statement") == 0) {
		TSNode l = ts_field(s, "label");
		uint32_t ln = label_node(b, l);
		connect(b, cur, ln, EDGE_ALWAYS);
		return build_children(b, s, 0, l, ts_null(), ln);
	}
	if (strcmp(t, "preproc_if") == 0 || strcmp(t, "preproc_ifdef") == 0 ||
	    strcmp(t, "preproc_elif") == 0 || strcmp(t, "preproc_elifdef") == 0)
		return build_preproc(b, s, cur);
	if (is_no_code(s, t))
		return cur;
	/* expression_statement, declaration, ERROR, ...: one step */
	return append(b, CFG_STMT, s, cur);
}

static uint32_t build(struct builder *b, TSNode s, uint32_t cur)
{
	if (++b->depth > MAX_NESTING) {
		b->g->truncated = true;
		b->depth--;
		return cur;
	}
	uint32_t out = build_stmt(b, s, cur);
	b->depth--;
	return out;
}

/* qsort has no context argument: the graph being sorted, per thread. */
static _Thread_local const struct cfg *sort_graph;

static int by_start(const void *a, const void *b)
{
	uint32_t x = ts_node_start_byte(sort_graph->nodes.items[*(const uint32_t *)a].ast);
	uint32_t y = ts_node_start_byte(sort_graph->nodes.items[*(const uint32_t *)b].ast);
	return x < y ? -1 : x > y;
}

void cfg_build(struct cfg *out, TSNode body, const char *src)
{
	struct builder b;
	memset(&b, 0, sizeof b);
	memset(out, 0, sizeof *out);
	b.g = out;
	b.src = src;
	new_node(&b, CFG_ENTRY, ts_null());
	new_node(&b, CFG_EXIT, ts_null());
	uint32_t end = build(&b, body, CFG_ENTRY_ID);
	connect(&b, end, CFG_EXIT_ID, EDGE_ALWAYS);
	for (uint32_t i = 0; i < out->nodes.len; i++)
		if (!ts_node_is_null(out->nodes.items[i].ast))
			vec_push(&out->by_pos, i);
	sort_graph = out;
	if (out->by_pos.len > 1)
		qsort(out->by_pos.items, out->by_pos.len, sizeof(uint32_t), by_start);
	vec_release(&b.labels);
	vec_release(&b.break_to);
	vec_release(&b.continue_to);
}

void cfg_release(struct cfg *g)
{
	for (size_t i = 0; i < g->nodes.len; i++)
		vec_release(&g->nodes.items[i].succ);
	vec_release(&g->nodes);
	vec_release(&g->by_pos);
	vec_release(&g->arms);
}

uint32_t cfg_node_at(const struct cfg *g, uint32_t offset)
{
	size_t lo = 0, hi = g->by_pos.len;
	uint32_t best = UINT32_MAX;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		TSNode a = g->nodes.items[g->by_pos.items[mid]].ast;
		if (ts_node_start_byte(a) <= offset) {
			if (offset < ts_node_end_byte(a))
				best = g->by_pos.items[mid];
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	if (best != UINT32_MAX)
		return best;
	/* fall back to a linear search (overlapping ranges, e.g. ERROR nodes) */
	for (size_t i = 0; i < g->by_pos.len; i++) {
		TSNode a = g->nodes.items[g->by_pos.items[i]].ast;
		if (ts_node_start_byte(a) <= offset && offset < ts_node_end_byte(a))
			return g->by_pos.items[i];
	}
	return UINT32_MAX;
}

void cfg_dump(const struct cfg *g, const char *src, struct buf *out)
{
	static const char *const kinds[] = {"entry", "exit", "join", "stmt", "cond", "return"};
	for (size_t i = 0; i < g->nodes.len; i++) {
		const struct cfg_node *n = &g->nodes.items[i];
		buf_printf(out, "%zu %s", i, kinds[n->kind]);
		if (!ts_node_is_null(n->ast)) {
			uint32_t s = ts_node_start_byte(n->ast), e = ts_node_end_byte(n->ast);
			size_t len = e - s;
			if (len > 30)
				len = 30;
			buf_puts(out, " `");
			for (size_t k = 0; k < len; k++)
				buf_putc(out, src[s + k] == '\n' ? ' ' : src[s + k]);
			buf_puts(out, "`");
		}
		buf_puts(out, " ->");
		for (size_t k = 0; k < n->succ.len; k++)
			buf_printf(out, " %u%s", n->succ.items[k].to,
				   n->succ.items[k].label == EDGE_TRUE ? "t" :
				   n->succ.items[k].label == EDGE_FALSE ? "f" : "");
		buf_putc(out, '\n');
	}
}
