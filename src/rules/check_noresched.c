/* P005: preempt_enable_no_resched() without a later reschedule check. */
#include "rules/ctx.h"

#include <stdlib.h>
#include <string.h>

/* A call that reschedules if one is due, or tests for it (2.6.9 schedule(): `if
 * (test_thread_flag(TIF_NEED_RESCHED)) goto need_resched;`). */
static bool p005_resched_call(const struct ctx *c, TSNode call)
{
	static const char *const names[] = {
		"preempt_check_resched", "schedule", "preempt_enable", "cond_resched", "put_cpu", "yield",
		"__cond_resched", "preempt_schedule", "cond_resched_lock", "cond_resched_softirq", "need_resched",
	};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (call_is(c, call, names[i]))
			return true;
	if (!call_is(c, call, "test_thread_flag") && !call_is(c, call, "test_tsk_thread_flag"))
		return false;
	char *t = node_text(c, ts_field(call, "arguments"));
	bool yes = strstr(t, "TIF_NEED_RESCHED") != NULL;
	free(t);
	return yes;
}

/* A reschedule, or a call to a function of this file that reschedules itself (a callee's cond_resched()). */
static bool p005_good_call(const struct ctx *c, TSNode call)
{
	if (p005_resched_call(c, call))
		return true;
	const char *name;
	size_t len = ts_call_name(call, c->text, &name);
	int g = len ? analysis_fn_index(c->fa, name, len) : -1;
	if (g < 0)
		return false;
	const struct fn *callee = &c->fa->fns.items[g];
	for (size_t n = 0; n < callee->events.len; n++)
		for (size_t e = 0; e < callee->events.items[n].len; e++)
			if (p005_resched_call(c, callee->events.items[n].items[e].call))
				return true;
	return false;
}

/* Follows the CFG from CALL; returns the first bad point (return / may-sleep) or null. */
static TSNode p005_search(const struct ctx *c, const struct fn *f, TSNode call, const char **what)
{
	TSNode bad;
	memset(&bad, 0, sizeof bad);
	uint32_t start = cfg_node_at(&f->cfg, ts_node_start_byte(call));
	if (start == UINT32_MAX)
		return bad;
	size_t n = f->cfg.nodes.len;
	uint8_t *seen = xcalloc(n, 1);
	VEC(uint32_t) work = VEC_INIT;
	vec_push(&work, start);
	bool first = true;
	while (work.len && ts_node_is_null(bad)) {
		uint32_t id = work.items[--work.len];
		if (!first && seen[id])
			continue;
		seen[id] = 1;
		const struct cfg_node *node = &f->cfg.nodes.items[id];
		bool stop = false;
		const event_vec *ev = &f->events.items[id];
		for (size_t e = 0; e < ev->len && !stop; e++) {
			TSNode ec = ev->items[e].call;
			if (first && ts_node_end_byte(ec) <= ts_node_end_byte(call))
				continue;
			if (p005_good_call(c, ec)) {
				stop = true;
				break;
			}
			if (call_may_sleep(c, ec, SLEEP_MAYBE, NULL, NULL) != SLEEP_NO) {
				bad = ec;
				*what = "a call that may sleep";
				stop = true;
			}
		}
		first = false;
		if (stop)
			continue;
		if (node->kind == CFG_RETURN) {
			bad = node->ast;
			*what = "the return";
			break;
		}
		if (id == CFG_EXIT_ID) {
			bad = f->body;
			*what = "the end of the function";
			break;
		}
		for (size_t s = 0; s < node->succ.len; s++)
			if (!seen[node->succ.items[s].to])
				vec_push(&work, node->succ.items[s].to);
	}
	free(seen);
	vec_release(&work);
	return bad;
}

/* Modern target: modules may not call preempt_check_resched(); preempt_enable() reschedules. */
static void check_check_resched(struct ctx *c, const struct fn *f, TSNode call)
{
	if (c->opts->target != TARGET_MODERN)
		return;
	TSNode st = ts_parent(call);
	struct finding *fd = add_finding(c, RULE_P005, call, f, SEV_WARNING, CONF_HIGH, FIX_CHECK_RESCHED,
		xstrdup("preempt_check_resched() is not available to modules on modern kernels"),
		xstrdup("the preempt_enable_no_resched() it follows becomes preempt_enable(), which "
			"reschedules itself"));
	if (!fd)
		return;
	if (ts_type_is(st, "expression_statement"))
		add_edit(c, fd, EDIT_REPLACE, st, "");
	else
		unfixable(fd, xstrdup("the call is not a statement of its own"));
}

static void noresched_site(struct ctx *c, const struct fn *f, TSNode call, bool misspelt)
{
	const char *what = NULL;
	/*
	 * In hard-IRQ context the return from the interrupt reschedules; in a
	 * function its callers (or its contract) call with preemption off, the
	 * count stays above zero until they give it back, and that reschedules.
	 */
	bool callers_off = false;
	if (f->ctx != CTX_PROCESS) {
		struct point_state ps = flow_state_at(f, ts_node_start_byte(call));
		callers_off = ps.atomic_ctx || ps.entry_held;
	}
	TSNode bad = f->ctx == CTX_HARDIRQ || callers_off ? ts_null() : p005_search(c, f, call, &what);
	if (ts_node_is_null(bad) && !misspelt && c->opts->target != TARGET_MODERN)
		return;
	struct buf ev = BUF_INIT;
	if (!ts_node_is_null(bad)) {
		unsigned l = ts_node_eq(bad, f->body) ? source_pos(c->src, ts_node_end_byte(bad) - 1).line
						      : line_of(c, bad);
		buf_printf(&ev, "no preempt_check_resched() or schedule() before %s at line %u", what, l);
	} else {
		buf_puts(&ev, "a reschedule check follows on every path");
		if (c->opts->target == TARGET_MODERN)
			buf_puts(&ev, "; modules on modern kernels may not call preempt_enable_no_resched()");
	}
	struct finding *fd = add_finding(c, RULE_P005, call, f, SEV_WARNING, CONF_HIGH,
		FIX_CHECK_RESCHED,
		misspelt ? xstrdup("preempt_enable_noresched() is a misspelling of preempt_enable_no_resched()")
			 : xstrdup("preempt_enable_no_resched() without a later preempt_check_resched()"),
		buf_detach(&ev));
	if (!fd)
		return;
	if (c->opts->target == TARGET_MODERN) {
		/* modules may not call preempt_enable_no_resched() or preempt_check_resched() */
		add_edit(c, fd, EDIT_REPLACE, call, "preempt_enable()");
		return;
	}
	if (misspelt)
		add_edit(c, fd, EDIT_REPLACE, call, "preempt_enable_no_resched()");
	if (!ts_node_is_null(bad)) {
		TSNode st = block_stmt(call);
		if (ts_node_is_null(st) || !ts_type_is(st, "expression_statement"))
			unfixable(fd, xstrdup("the call is not a statement of its own"));
		else
			add_edit(c, fd, EDIT_INSERT_AFTER, st, "preempt_check_resched();");
	}
}

static void check_noresched(struct ctx *c, const struct fn *f, TSNode site, const char *kind)
{
	if (strcmp(kind, "check_resched") == 0)
		check_check_resched(c, f, site);
	else
		noresched_site(c, f, site, strcmp(kind, "noresched_misspelt") == 0);
}

const struct rule_hooks noresched_hooks = {
	.check = check_noresched,
	.site_words = {"preempt_enable_no", "preempt_check_resched"},
};
