/* P006: a call that may sleep while preemption is off. */
#include "rules/ctx.h"
#include "analysis/kernel_api.h"

#include <stdlib.h>
#include <string.h>

/* Does G drop every key of HELD? */
static bool drops_keys(const struct fn *g, const name_vec *held)
{
	bool all = held->len > 0;
	for (size_t i = 0; i < held->len && all; i++) {
		bool found = false;
		for (size_t k = 0; k < g->dropped.len && !found; k++)
			found = strcmp(held->items[i], g->dropped.items[k]) == 0;
		all = found;
	}
	return all;
}

/*
 * F is protected by its callers' locks only (a static function every
 * call of the file makes with a lock held): does G drop, around its sleep,
 * every lock each of those calls holds (qla1280: slave_configure() takes
 * HOST_LOCK, calls get_target_parameters(), whose mailbox_command() drops
 * it around wait_for_completion())? One level of callers, taking the
 * locks themselves.
 */
static bool drops_callers_locks(const struct ctx *c, const struct fn *f, const struct fn *g)
{
	if (!f->is_static || f->addr_taken || g->sleeps_held == SLEEP_YES)
		return false;
	size_t self = (size_t)(f - c->fa->fns.items);
	bool any = false, all = true;
	for (size_t i = 0; i < c->fa->fns.len && all; i++) {
		const struct fn *h = &c->fa->fns.items[i];
		for (size_t k = 0; k < h->calls.len && all; k++) {
			if (h->calls.items[k].callee != self)
				continue;
			uint32_t at = ts_node_start_byte(h->calls.items[k].call);
			struct point_state hs = flow_state_at(h, at);
			name_vec held = VEC_INIT;
			flow_held_keys(h, at, true, &held);
			all = !hs.atomic_ctx && !hs.entry_held && drops_keys(g, &held);
			any = true;
			vec_release(&held);
		}
	}
	return any && all;
}

/*
 * Does the callee G sleep only after releasing every lock F holds at CALL?
 * (mm/filemap.c: truncate_list_pages() drops pagecache_lock, which its
 * caller holds, around wait_on_page().) Only locks F takes itself count,
 * and those its callers take (drops_callers_locks()): an atomic context is
 * not G's to drop. A G handed the lock it drops (a parameter) drops the
 * one CALL names.
 */
static bool releases_all_held(const struct ctx *c, const struct fn *f, const struct fn *g, TSNode call,
			      const struct point_state *ps)
{
	if (g->sleeps_held == SLEEP_YES || ps->atomic_ctx)
		return false;
	name_vec held = VEC_INIT;
	flow_held_keys(f, ts_node_start_byte(call), true, &held);
	if (ps->entry_held) {
		bool own = held.len == 0 || drops_keys(g, &held);
		vec_release(&held);
		return own && drops_callers_locks(c, f, g);
	}
	const struct wrapper *w = g->wraps;
	char *passed = w && w->lock && !w->api.lock
		     ? lock_key_arg(call, w->api.lock_arg, w->api.lock_field, f->src) : NULL;
	bool all = held.len > 0;
	for (size_t i = 0; i < held.len && all; i++) {
		bool found = false;
		for (size_t k = 0; k < g->dropped.len && !found; k++)
			found = strcmp(held.items[i], g->dropped.items[k]) == 0 ||
				(passed && strcmp(g->dropped.items[k], w->lock) == 0 &&
				 strcmp(held.items[i], passed) == 0);
		all = found;
	}
	free(passed);
	vec_release(&held);
	return all;
}

/* Is in_interrupt() true at PS in F: hard or soft IRQ context, or bottom halves held off? */
static bool in_interrupt_at(const struct fn *f, const struct point_state *ps, uint32_t offset)
{
	if (ps->atomic_ctx)
		return true;
	name_vec held = VEC_INIT;
	flow_held_keys(f, offset, false, &held);
	bool bh = false;
	for (size_t i = 0; i < held.len && !bh; i++)
		bh = strcmp(held.items[i], "bh") == 0;
	vec_release(&held);
	return bh;
}

/* ---- --fix-sleep: an allocation's GFP_KERNEL made GFP_ATOMIC ---- */

/* Flags that may go with GFP_ATOMIC as they went with GFP_KERNEL: none of them asks to wait. */
static const char *const nowait_flags[] = {"__GFP_DMA", "GFP_DMA", "__GFP_HIGHMEM", "__GFP_HIGH",
					   "__GFP_NOWARN", "__GFP_ZERO", "__GFP_COMP"};

static bool op_is(const struct ctx *c, TSNode e, const char *type, const char *op)
{
	return ts_type_is(e, type) && ts_text_is(ts_field(e, "operator"), c->text, op);
}

/*
 * Walks FLAGS, an operand of `|`s: sets *TOK to its one GFP_KERNEL and
 * says whether every other operand is a flag of nowait_flags[].
 */
static bool kernel_or_nowait(const struct ctx *c, TSNode e, TSNode *tok)
{
	e = ts_strip_parens(e, c->text);
	if (op_is(c, e, "binary_expression", "|"))
		return kernel_or_nowait(c, ts_field(e, "left"), tok) && kernel_or_nowait(c, ts_field(e, "right"), tok);
	if (!ts_type_is(e, "identifier"))
		return false;
	if (ts_text_is(e, c->text, "GFP_KERNEL")) {
		bool first = ts_node_is_null(*tok);
		*tok = e;
		return first;
	}
	for (size_t i = 0; i < ARRAY_SIZE(nowait_flags); i++)
		if (ts_text_is(e, c->text, nowait_flags[i]))
			return true;
	return false;
}

/* Is N the constant NULL or 0? */
static bool null_const(const struct ctx *c, TSNode n)
{
	return ts_text_is(n, c->text, "NULL") || ts_text_is(n, c->text, "0");
}

/*
 * The expression COND tests for null, its first operand when it is an
 * `||`: X of `!X`, `X == NULL`, `NULL == X`, `X == 0`; else a null node.
 */
static TSNode null_tested(const struct ctx *c, TSNode cond)
{
	TSNode e = ts_strip_parens(cond, c->text);
	if (op_is(c, e, "binary_expression", "||"))
		e = ts_strip_parens(ts_field(e, "left"), c->text);
	if (op_is(c, e, "unary_expression", "!"))
		return ts_strip_parens(ts_field(e, "argument"), c->text);
	if (!op_is(c, e, "binary_expression", "=="))
		return ts_null();
	TSNode l = ts_strip_parens(ts_field(e, "left"), c->text), r = ts_strip_parens(ts_field(e, "right"), c->text);
	return null_const(c, r) ? l : null_const(c, l) ? r : ts_null();
}

/* N's text with its blanks dropped; owned. */
static char *squeezed(const struct ctx *c, TSNode n)
{
	char *t = node_text(c, n), *w = t;
	for (const char *r = t; *r; r++)
		if (*r != ' ' && *r != '\t' && *r != '\n' && *r != '\r')
			*w++ = *r;
	*w = '\0';
	return t;
}

/* Do A and B read the same, blanks aside? */
static bool same_text(const struct ctx *c, TSNode a, TSNode b)
{
	if (ts_node_is_null(a) || ts_node_is_null(b))
		return false;
	char *x = squeezed(c, a), *y = squeezed(c, b);
	bool same = strcmp(x, y) == 0;
	free(x);
	free(y);
	return same;
}

/* N with the parentheses and casts around it: the outermost of them. */
static TSNode climb_wrappers(TSNode n)
{
	for (TSNode p = ts_parent(n); ts_type_is(p, "parenthesized_expression") || ts_type_is(p, "cast_expression");
	     p = ts_parent(n))
		n = p;
	return n;
}

/* STMT's next statement in its block (comments skipped), when it is an if that tests V for null. */
static bool next_tests_null(const struct ctx *c, TSNode stmt, TSNode v, unsigned *line)
{
	TSNode blk = ts_parent(stmt), nx = ts_node_next_named_sibling(stmt);
	while (ts_type_is(nx, "comment"))
		nx = ts_node_next_named_sibling(nx);
	if (!(ts_type_is(blk, "compound_statement") || ts_type_is(blk, "case_statement")) ||
	    !ts_type_is(nx, "if_statement") || !same_text(c, null_tested(c, ts_field(nx, "condition")), v))
		return false;
	*line = line_of(c, nx);
	return true;
}

/*
 * Is the result of the allocation CALL checked for NULL before any other
 * use? It is assigned to (or initialises) V and the very next statement is
 * `if (!V ...)`, or the assignment is what an if tests: `if (!(V = f(...)))`.
 * *LINE gets the line of that if.
 */
static bool null_checked(const struct ctx *c, TSNode call, unsigned *line)
{
	TSNode n = climb_wrappers(call), p = ts_parent(n);
	if (ts_type_is(p, "init_declarator") && ts_node_eq(ts_field(p, "value"), n)) {
		TSNode v = ts_field(p, "declarator");
		while (!ts_node_is_null(v) && !ts_type_is(v, "identifier"))
			v = ts_field(v, "declarator");
		return ts_type_is(ts_parent(p), "declaration") && next_tests_null(c, ts_parent(p), v, line);
	}
	if (!op_is(c, p, "assignment_expression", "=") || !ts_node_eq(ts_field(p, "right"), n))
		return false;
	TSNode a = climb_wrappers(p), q = ts_parent(a);
	if (ts_type_is(q, "expression_statement"))
		return next_tests_null(c, q, ts_field(p, "left"), line);
	/* in an if's condition: up through its operators to the if */
	for (int depth = 0; depth < 4 && !ts_node_is_null(q) && !ts_type_is(q, "if_statement"); depth++)
		q = ts_parent(q);
	if (!ts_type_is(q, "if_statement") || !ts_node_eq(null_tested(c, ts_field(q, "condition")), p))
		return false;
	*line = line_of(c, q);
	return true;
}

struct gfp_plan {
	TSNode tok;   /* the GFP_KERNEL to make GFP_ATOMIC; null: no fix */
	char *note;   /* the finding's fix note, or NULL; owned */
};

/*
 * --fix-sleep's decision for CALL, a P006 site: an allocation of the API
 * list made with GFP_KERNEL itself (DIRECT), where UNPROVEN (NULL when the
 * context is proven atomic) says why preemption may be off only.
 */
static void gfp_decide(const struct ctx *c, TSNode call, bool direct, const char *unproven,
		       struct gfp_plan *out)
{
	out->tok = ts_null();
	out->note = NULL;
	int arg = direct ? api_gfp_arg(call, c->text) : -1;
	if (arg < 0)
		return;
	TSNode flags = ts_node_named_child(ts_field(call, "arguments"), (uint32_t)arg), tok = ts_null();
	char *why = NULL, *ft = NULL;
	unsigned line = 0;
	if (!kernel_or_nowait(c, flags, &tok) || ts_node_is_null(tok))
		why = xasprintf("its flags are `%s`, not GFP_KERNEL (alone or with flags that do not wait)",
				ft = orig_text(c, flags));
	else if (unproven)
		why = xstrdup(unproven);
	else if (source_in_directive(c->src, ts_node_start_byte(tok)))
		why = xstrdup("it is inside a #define body");
	else if (!null_checked(c, call, &line))
		why = xstrdup("the result is not checked for NULL before its first use");
	free(ft);
	if (why && c->opts->fix_sleep)
		out->note = xasprintf("not made GFP_ATOMIC: %s; fix it by hand", why);
	else if (!why && !c->opts->fix_sleep)
		out->note = xstrdup("--fix-sleep would use GFP_ATOMIC here");
	else if (!why)
		out->note = xasprintf("GFP_ATOMIC: the allocation may now fail under memory pressure; "
				      "the NULL check at line %u handles it", line);
	if (!why && c->opts->fix_sleep)
		out->tok = tok;
	free(why);
}

static void check_sleep(struct ctx *c, const struct fn *f, TSNode call, const char *kind)
{
	(void)kind;
	struct buf why = BUF_INIT;
	const struct fn *via;
	enum sleep_kind k = call_may_sleep(c, call, SLEEP_YES, &why, &via);
	bool via_callee = via != NULL;
	if (via)
		buf_printf(&why, "%s() (which %s)", via->name, via->sleep_reason);
	if (k != SLEEP_YES) {
		buf_release(&why);
		return;
	}
	struct point_state ps = flow_state_at(f, ts_node_start_byte(call));
	if (!point_protected(&ps) || (via && releases_all_held(c, f, via, call, &ps)) ||
	    point_bkl_only(f, &ps, ts_node_start_byte(call)) ||
	    (via && in_interrupt_at(f, &ps, ts_node_start_byte(call)) &&
	     sleep_call_in_interrupt(c->fa, call, via) != SLEEP_YES) ||
	    (via && sleep_call_after_set(c->fa, f, call, via) != SLEEP_YES)) {
		buf_release(&why);
		return;
	}
	/* 2.4's cli()/save_flags() + sleep_on() is an old idiom: medium confidence */
	bool irq_only = !ps.atomic_ctx && !ps.entry_held && ps.must_acq >= 0 &&
			strcmp(f->acqs.items[ps.must_acq].key, "irq") == 0;
	struct gfp_plan gp;
	gfp_decide(c, call, !via_callee,
		   irq_only ? "preemption is off here only because interrupts are off (cli(), "
			     "local_irq_save()), a medium-confidence finding"
		   : ps.entry_held ? "preemption is off here only because its callers hold it off on entry, "
				     "a medium-confidence finding" : NULL, &gp);
	struct finding *fd = add_finding(c, RULE_P006, call, f, irq_only ? SEV_WARNING : SEV_ERROR,
		    irq_only || ps.entry_held || via_callee ? CONF_MEDIUM : CONF_HIGH,
		    ts_node_is_null(gp.tok) ? FIX_NONE : FIX_GFP_ATOMIC,
		    xasprintf("%s may sleep, but preemption is off here", buf_cstr(&why)),
		    explain_state(f, &ps));
	if (fd && gp.note)
		set_note(fd, gp.note);
	else
		free(gp.note);
	if (!ts_node_is_null(gp.tok))
		add_edit(c, fd, EDIT_REPLACE, gp.tok, "GFP_ATOMIC");
	buf_release(&why);
}

/*
 * A site needs a call that may sleep and something that turns preemption
 * off: a locking call (a lock's holder, or a caller's lock released
 * here), or a registration, shape or comment contract that makes a function atomic. The
 * tree's contexts for the file's functions are the scan's to add.
 */
static bool sleep_wants(const char *text, size_t len)
{
	unsigned w = api_text_words(text, len, API_WORD_SLEEP | API_WORD_LOCK);
	if (!(w & API_WORD_SLEEP))
		return false;
	return (w & API_WORD_LOCK) || api_text_words(text, len, API_WORD_CONTEXT) ||
	       contract_text_may_state(text, len); /* "Must be called with interrupts disabled" */
}

const struct rule_hooks sleep_hooks = {.check = check_sleep, .wants = sleep_wants};
