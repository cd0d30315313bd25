/*
 * Locks a function's callers hold when they call it. A function that
 * releases a lock before it first takes it on a path was entered with it
 * held: 2.4 mm/memory.c do_anonymous_page() drops mm->page_table_lock
 * around its allocation and takes it again, and every caller
 * (handle_pte_fault()) holds it. Until that release the CPU number cannot
 * go stale: update_mmu_cache() on the path that never dropped the lock
 * runs under it, as on the path that took it again. A must-analysis over
 * the CFG, seeded with every such lock held at the entry; a lock released
 * on some paths only (`if (locked) spin_unlock(l);`) is no contract.
 */
#include "analysis/flow.h"

#include <stdlib.h>
#include <string.h>

#define ENTRY_KEYS_MAX 16

/* The keys still held after E: a release clears; a take (never a trylock, which may fail) sets. */
static uint64_t step(const struct fn *f, const struct event *e, uint64_t held, char *const *keys, size_t n)
{
	if (!e->api || (e->api->op != API_RELEASE && e->api->op != API_ACQUIRE) || !(e->api->keys & KEY_LOCK))
		return held;
	uint64_t bit = flow_key_bit(f, e, KEY_LOCK, keys, n);
	return e->api->op == API_RELEASE ? held & ~bit : held | bit;
}

/* The line of the first release of key I in F. */
static unsigned release_line(const struct fn *f, const struct source *src, size_t i, char *const *keys, size_t n)
{
	for (size_t id = 0; id < f->events.len; id++)
		for (size_t e = 0; e < f->events.items[id].len; e++) {
			const struct event *ev = &f->events.items[id].items[e];
			if (ev->api && ev->api->op == API_RELEASE && (ev->api->keys & KEY_LOCK) &&
			    flow_key_bit(f, ev, KEY_LOCK, keys, n) == (uint64_t)1 << i)
				return source_pos(src, ts_node_start_byte(ev->call)).line;
		}
	return 0;
}

struct key_set {
	char *const *keys;
	size_t n;
};

static uint64_t step_bits(const struct fn *f, const struct event *e, uint64_t held, const void *ctx)
{
	const struct key_set *ks = ctx;
	return step(f, e, held, ks->keys, ks->n);
}

/*
 * Does F call a function-like macro of its file that may take a lock
 * (`#define TRACE_LOCK(f) spin_lock_irqsave(&trace_lock, f)`)? Its release
 * then only looks like the caller's: no contract is read from it.
 */
static bool calls_lock_macro(const struct fn *f, const struct source *src)
{
	for (size_t id = 0; id < f->events.len; id++)
		for (size_t e = 0; e < f->events.items[id].len; e++) {
			const struct event *ev = &f->events.items[id].items[e];
			const char *name;
			size_t n = ev->api ? 0 : ts_call_name(ev->call, f->src, &name);
			for (size_t d = 0; n && d < src->defs.len; d++) {
				const struct macro_def *m = &src->defs.items[d];
				if (strlen(m->name) == n && memcmp(m->name, name, n) == 0 && m->body &&
				    (strstr(m->body, "lock") || strstr(m->body, "cli") || strstr(m->body, "irq")))
					return true;
			}
		}
	return false;
}

char *flow_entry_lock_at(const struct fn *f, const struct source *src, uint32_t offset, unsigned *line)
{
	key_vec keys = VEC_INIT;
	if (calls_lock_macro(f, src))
		return NULL;
	flow_caller_keys(f, true, &keys);
	char *found = NULL;
	size_t w = 0;
	/*
	 * locks only (a restore of the caller's flags is no lock), and only
	 * those released on every path to the exit: `if (locked)
	 * spin_unlock(l);` says nothing of the callers that pass 0
	 */
	for (size_t i = 0; i < keys.len; i++)
		if (strcmp(keys.items[i], "irq") && strcmp(keys.items[i], "bh") && strcmp(keys.items[i], "preempt") &&
		    strcmp(keys.items[i], "?") && w < ENTRY_KEYS_MAX &&
		    flow_caller_keys_gone(f, &keys.items[i], 1, UINT32_MAX))
			keys.items[w++] = keys.items[i];
		else
			free(keys.items[i]);
	keys.len = w;
	if (keys.len) {
		struct key_set ks = {keys.items, keys.len};
		uint64_t h = 0;
		flow_bits_at(f, ((uint64_t)1 << keys.len) - 1, true, step_bits, &ks, offset, &h);
		for (size_t i = 0; i < keys.len && !found; i++)
			if (h & ((uint64_t)1 << i)) {
				found = xstrdup(keys.items[i]);
				*line = release_line(f, src, i, keys.items, keys.len);
			}
	}
	for (size_t i = 0; i < keys.len; i++)
		free(keys.items[i]);
	vec_release(&keys);
	return found;
}

bool flow_call_off(const struct fn *f, const struct source *src, uint32_t offset, struct buf *why)
{
	struct point_state ps = flow_state_at(f, offset);
	bool off = point_protected(&ps) && !point_bkl_only(f, &ps, offset);
	unsigned line = 0;
	bool irq = f->ctx == CTX_HARDIRQ || f->ctx == CTX_SOFTIRQ;
	char *key = off || irq ? NULL : flow_entry_lock_at(f, src, offset, &line);
	if (why && key)
		buf_printf(why, "%s() is entered with %s held: it releases it at line %u before it takes it, so its "
			   "callers hold it, and it is still held on every path to here", f->name, key, line);
	else if (why)
		point_explain(f, &ps, why);
	free(key);
	return off || key;
}

bool flow_caller_keys_back(const struct fn *f, char *const *keys, size_t n)
{
	if (n == 0)
		return true;
	if (n > ENTRY_KEYS_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(keys[i], "irq") || !strcmp(keys[i], "bh") || !strcmp(keys[i], "preempt") ||
		    !strcmp(keys[i], "?"))
			return false; /* a restore of the caller's flags is no lock taken back */
	struct key_set ks = {keys, n};
	uint64_t all = ((uint64_t)1 << n) - 1, h = 0;
	return flow_bits_at(f, all, true, step_bits, &ks, UINT32_MAX, &h) && h == all;
}

bool flow_irqs_off_at(const struct fn *f, uint32_t offset)
{
	struct point_state ps = flow_state_at(f, offset);
	if (!ps.reached)
		return false;
	if (ps.entry_held && f->entry_irqs_off)
		return true;
	name_vec held = VEC_INIT;
	flow_held_keys(f, offset, false, &held);
	bool off = false;
	for (size_t i = 0; i < held.len; i++)
		off = off || strcmp(held.items[i], "irq") == 0;
	vec_release(&held);
	return off;
}

struct decl_find {
	const char *src, *name;
	bool found;
};

static bool ident_visit(TSNode n, void *ctx)
{
	struct decl_find *d = ctx;
	if (!d->found && ts_type_is(n, "identifier") && ts_text_is(n, d->src, d->name))
		d->found = true;
	return !d->found;
}

static bool decl_visit(TSNode n, void *ctx)
{
	struct decl_find *d = ctx;
	if (d->found)
		return false;
	if (ts_type_is(n, "declaration") || ts_type_is(n, "parameter_declaration")) {
		ts_walk(n, ident_visit, d); /* any mention in a declaration counts: the safe side */
		return false;
	}
	return true;
}

bool fn_declares(const struct fn *f, const char *name)
{
	struct decl_find d = {f->src, name, false};
	ts_walk(f->def, decl_visit, &d);
	return d.found;
}
