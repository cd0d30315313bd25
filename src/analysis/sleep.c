/*
 * May-sleep summaries: a function may sleep when it calls something that
 * sleeps (schedule(), kmalloc(GFP_KERNEL), ...; kernel_api.c) or a function
 * of this file that may, propagated over fn.calls to a fixed point.
 */
#include "analysis/flow.h"

#include <stdlib.h>
#include <string.h>

/* The strongest of F's own calls, with the first call that is that strong. */
static void direct_sleeps(const struct file_analysis *fa, struct fn *f)
{
	const char *src = fa->src->parse_text;
	for (size_t n = 0; n < f->events.len && f->sleeps != SLEEP_YES; n++)
		for (size_t e = 0; e < f->events.items[n].len; e++) {
			struct buf why = BUF_INIT;
			TSNode call = f->events.items[n].items[e].call;
			const char *name;
			size_t len = ts_call_name(call, src, &name);
			if (len && analysis_fn_index(fa, name, len) >= 0)
				continue; /* the file's own definition: judged by its body */
			enum sleep_kind k = api_may_sleep(call, src, fa->src->path, &why);
			if (k > f->sleeps) {
				f->sleeps = k;
				free(f->sleep_reason);
				f->sleep_reason = xasprintf("calls %s at line %u", buf_cstr(&why),
					source_pos(fa->src, ts_node_start_byte(call)).line);
			}
			buf_release(&why);
			if (k == SLEEP_YES)
				break;
		}
}

static bool has_key(const key_vec *v, const char *k)
{
	for (size_t i = 0; i < v->len; i++)
		if (strcmp(v->items[i], k) == 0)
			return true;
	return false;
}

/* Does G drop every key of KEYS (its caller's locks) itself? */
static bool drops_all(const struct fn *g, const key_vec *keys)
{
	for (size_t i = 0; i < keys->len; i++)
		if (!has_key(&g->dropped, keys->items[i]))
			return false;
	return keys->len > 0;
}

/*
 * A call to a function of the file that drops its caller's lock is a drop
 * of F's caller's lock too, when F does not take it itself (jfs:
 * lock_metapage() calls __lock_metapage(), which drops meta_lock around
 * schedule()). True if F's dropped keys grew.
 */
static bool drops_through_calls(const struct file_analysis *fa, struct fn *f)
{
	bool grew = false;
	for (size_t c = 0; c < f->calls.len; c++) {
		const struct fn *g = &fa->fns.items[f->calls.items[c].callee];
		for (size_t k = 0; g != f && k < g->dropped.len; k++) {
			const char *key = g->dropped.items[k];
			bool own = false;
			for (size_t a = 0; a < f->acqs.len && !own; a++)
				own = strcmp(f->acqs.items[a].key, key) == 0;
			if (!own && !has_key(&f->dropped, key)) {
				vec_push(&f->dropped, xstrdup(key));
				grew = true;
			}
		}
	}
	return grew;
}

/*
 * F's sleeps_held: the strongest sleep (its own calls, or a call to a
 * function of the file that may sleep) at a point where a lock its caller
 * holds may still be held. Only a function that drops its caller's locks
 * (F->dropped) can sleep with them released.
 */
static void sleeps_with_caller_locks(const struct file_analysis *fa, struct fn *f)
{
	f->sleeps_held = f->sleeps;
	if (f->sleeps == SLEEP_NO || !f->dropped.len)
		return;
	enum sleep_kind held = SLEEP_NO;
	for (size_t n = 0; n < f->events.len && held != SLEEP_YES; n++)
		for (size_t e = 0; e < f->events.items[n].len && held != SLEEP_YES; e++) {
			TSNode call = f->events.items[n].items[e].call;
			const char *name;
			size_t len = ts_call_name(call, f->src, &name);
			int idx = len ? analysis_fn_index(fa, name, len) : -1;
			enum sleep_kind k = idx >= 0 ? sleep_call_with_args(fa, call, &fa->fns.items[idx])
						     : api_may_sleep(call, f->src, fa->src->path, NULL);
			/* a callee that drops the same locks before it sleeps */
			if (idx >= 0 && idx != (int)(f - fa->fns.items) && drops_all(&fa->fns.items[idx], &f->dropped) &&
			    fa->fns.items[idx].sleeps_held < k)
				k = fa->fns.items[idx].sleeps_held;
			if (k > held && !flow_caller_keys_gone(f, f->dropped.items, f->dropped.len,
							       ts_node_start_byte(call)))
				held = k;
		}
	f->sleeps_held = held;
}

/*
 * Marks the calls of F that sleep, when F disables interrupts: 2.4's
 * schedule() returns with them enabled (`cli(); ... sleep_on(&q);`), so the
 * path replay of P007 (paths.c) has them on after such a call.
 */
static void mark_sleeping_events(const struct file_analysis *fa, struct fn *f)
{
	bool irq = false;
	for (size_t a = 0; a < f->acqs.len && !irq; a++)
		irq = strcmp(f->acqs.items[a].key, "irq") == 0;
	for (size_t n = 0; irq && n < f->events.len; n++)
		for (size_t e = 0; e < f->events.items[n].len; e++) {
			struct event *ev = &f->events.items[n].items[e];
			const char *name;
			size_t len = ev->api && ev->api->op != API_NONE ? 0 : ts_call_name(ev->call, f->src, &name);
			int idx = len ? analysis_fn_index(fa, name, len) : -1;
			if (!len)
				continue;
			enum sleep_kind k = idx >= 0 ? sleep_call_with_args(fa, ev->call, &fa->fns.items[idx])
						     : api_may_sleep(ev->call, f->src, fa->src->path, NULL);
			ev->sleeps = k == SLEEP_YES;
		}
}

/* Is WORD a whole word of TEXT? */
static bool has_word(const char *text, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = strstr(text, word); p; p = strstr(p + 1, word)) {
		bool before = p == text || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') ||
					     (p[-1] >= 'A' && p[-1] <= 'Z') || (p[-1] >= '0' && p[-1] <= '9'));
		char c = p[n];
		if (before && !(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			return true;
	}
	return false;
}

/*
 * Does the function-like macro NAME of FA's file always return: a body
 * with a `return` and no branch or loop but a closing `while (0)`
 * (2.4 ip_queue.c `#define RCV_SKB_FAIL(err) do { ...; return; } while (0)`)?
 */
static bool macro_returns(const struct file_analysis *fa, const char *name, size_t len)
{
	const struct source *src = fa->src;
	for (size_t i = 0; i < src->defs.len; i++) {
		const struct macro_def *d = &src->defs.items[i];
		if (!d->function_like || strlen(d->name) != len || memcmp(d->name, name, len) != 0)
			continue;
		const char *w = strstr(d->body, "while");
		bool loop_end = !w || strspn(w + 5, " \t(0)") == strlen(w + 5);
		return has_word(d->body, "return") && !has_word(d->body, "if") && !has_word(d->body, "for") &&
		       !has_word(d->body, "switch") && !has_word(d->body, "goto") && !strchr(d->body, '?') &&
		       loop_end && (!w || !strstr(w + 5, "while"));
	}
	return false;
}

/*
 * Marks F's calls to functions of the file that leave their caller's locks
 * released on every path (event.drops). True if one was marked.
 */
static bool mark_dropping_calls(const struct file_analysis *fa, struct fn *f)
{
	bool marked = false;
	for (size_t n = 0; n < f->events.len; n++)
		for (size_t e = 0; e < f->events.items[n].len; e++) {
			struct event *ev = &f->events.items[n].items[e];
			const char *name;
			size_t len = ev->drops || (ev->api && ev->api->op != API_NONE) ? 0
				   : ts_call_name(ev->call, f->src, &name);
			int idx = len ? analysis_fn_index(fa, name, len) : -1;
			if (len && idx < 0 && !ev->returns && macro_returns(fa, name, len)) {
				ev->returns = true;
				marked = true;
			}
			const struct fn *g = idx >= 0 ? &fa->fns.items[idx] : NULL;
			if (!g || g == f || g->wraps || !g->dropped.len)
				continue;
			if (!flow_caller_keys_gone(g, g->dropped.items, g->dropped.len, UINT32_MAX)) {
				ev->may_drop = g; /* on some of its paths only */
				continue;
			}
			ev->drops = g;
			ev->may_drop = NULL;
			marked = true;
		}
	return marked;
}

void sleep_summarise(struct file_analysis *fa)
{
	for (size_t i = 0; i < fa->fns.len; i++)
		direct_sleeps(fa, &fa->fns.items[i]);
	for (bool changed = true; changed; ) {
		changed = false;
		for (size_t i = 0; i < fa->fns.len; i++) {
			struct fn *f = &fa->fns.items[i];
			for (size_t c = 0; c < f->calls.len; c++) {
				const struct fn *g = &fa->fns.items[f->calls.items[c].callee];
				if (g->sleeps <= f->sleeps)
					continue;
				enum sleep_kind k = sleep_call_with_args(fa, f->calls.items[c].call, g);
				if (k > f->sleeps) {
					f->sleeps = k;
					free(f->sleep_reason);
					f->sleep_reason = xasprintf("calls %s() at line %u, which %s", g->name,
						source_pos(fa->src, ts_node_start_byte(f->calls.items[c].call)).line,
						g->sleep_reason);
					changed = true;
				}
			}
		}
	}
	for (size_t i = 0; i < fa->fns.len; i++)
		flow_caller_keys(&fa->fns.items[i], true, &fa->fns.items[i].dropped);
	for (bool grew = true; grew; ) {
		grew = false;
		for (size_t i = 0; i < fa->fns.len; i++)
			grew = drops_through_calls(fa, &fa->fns.items[i]) || grew;
	}
	/* from the plain summaries down: a few rounds settle the chains of callees */
	for (size_t i = 0; i < fa->fns.len; i++)
		fa->fns.items[i].sleeps_held = fa->fns.items[i].sleeps;
	for (int round = 0; round < 3; round++)
		for (size_t i = 0; i < fa->fns.len; i++)
			sleeps_with_caller_locks(fa, &fa->fns.items[i]);
	for (size_t i = 0; i < fa->fns.len; i++)
		mark_sleeping_events(fa, &fa->fns.items[i]);
	/* a few rounds: a callee that drops the lock through its own callee (handle_pte_fault()) */
	for (int round = 0, more = 1; more && round < 4; round++) {
		more = 0;
		for (size_t i = 0; i < fa->fns.len; i++)
			more |= mark_dropping_calls(fa, &fa->fns.items[i]);
	}
}
