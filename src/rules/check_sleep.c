/* P006: a call that may sleep while preemption is off. */
#include "rules/ctx.h"

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
	add_finding(c, RULE_P006, call, f, irq_only ? SEV_WARNING : SEV_ERROR,
		    irq_only || ps.entry_held || via_callee ? CONF_MEDIUM : CONF_HIGH, FIX_NONE,
		    xasprintf("%s may sleep, but preemption is off here", buf_cstr(&why)),
		    explain_state(f, &ps));
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
