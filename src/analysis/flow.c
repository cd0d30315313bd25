/*
 * The data-flow of one function: the events of its CFG nodes (what each
 * call takes and drops), then a forward must/may analysis of what is held,
 * and the queries the rules ask of its result.
 */
#include "analysis/flow.h"

#include <stdlib.h>
#include <string.h>

/* ---- events ------------------------------------------------------------ */

struct event_collect {
	VEC(TSNode) calls;
};

static bool event_visit(TSNode n, void *ctx)
{
	struct event_collect *e = ctx;
	if (ts_type_is(n, "call_expression"))
		vec_push(&e->calls, n);
	return true;
}

static int by_end(const void *a, const void *b)
{
	uint32_t x = ts_node_end_byte(*(const TSNode *)a), y = ts_node_end_byte(*(const TSNode *)b);
	return x < y ? -1 : x > y;
}

static int trylock_polarity(TSNode call, TSNode root, const char *src)
{
	int pol = 1;
	TSNode n = call;
	while (!ts_node_eq(n, root)) {
		TSNode p = ts_parent(n);
		if (ts_node_is_null(p))
			return -1;
		const char *t = ts_node_type(p);
		if (strcmp(t, "unary_expression") == 0) {
			TSNode op = ts_field(p, "operator");
			if (!ts_text_is(op, src, "!"))
				return -1;
			pol ^= 1;
		} else if (strcmp(t, "binary_expression") == 0) {
			TSNode op = ts_field(p, "operator");
			TSNode l = ts_field(p, "left"), r = ts_field(p, "right");
			TSNode other = ts_node_eq(l, n) ? r : l;
			bool zero = ts_text_is(other, src, "0");
			if (ts_text_is(op, src, "&&")) {
				if (pol == 0)
					return -1;
			} else if (ts_text_is(op, src, "==") && zero) {
				pol ^= 1;
			} else if (!(zero && (ts_text_is(op, src, "!=") ||
					      (ts_text_is(op, src, "<") && ts_node_eq(l, n))))) {
				return -1; /* `x < 0` fails as `x != 0` does: a lock call's failures are negative */
			}
		} else if (strcmp(t, "parenthesized_expression") != 0 &&
			   strcmp(t, "argument_list") != 0 && strcmp(t, "call_expression") != 0) {
			return -1;
		}
		n = p;
	}
	return pol;
}

char *event_key(const struct event *e, unsigned key, const char *src)
{
	if (key == KEY_LOCK && e->api && e->api->hdr)
		return header_lock_key(e->api, e->call, src);
	if (key == KEY_LOCK && e->api && e->api->lock)
		return xstrdup(e->api->lock);
	if (key == KEY_LOCK && e->api && (e->api->lock_arg || e->api->lock_field))
		return lock_key_arg(e->call, e->api->lock_arg, e->api->lock_field, src);
	return lock_key(e->call, key, src);
}

/* Index of KEY in f->keys, or -1. */
static int32_t key_find(const struct fn *f, const char *key)
{
	for (size_t i = 0; i < f->keys.len; i++)
		if (strcmp(f->keys.items[i], key) == 0)
			return (int32_t)i;
	return -1;
}

static uint32_t key_intern(struct fn *f, const char *key)
{
	int32_t id = key_find(f, key);
	if (id >= 0)
		return (uint32_t)id;
	vec_push(&f->keys, xstrdup(key));
	return (uint32_t)(f->keys.len - 1);
}

/* After all acquisitions are known: the key ids each release event releases. */
static void resolve_releases(struct fn *f)
{
	for (size_t n = 0; n < f->events.len; n++)
		for (size_t e = 0; e < f->events.items[n].len; e++) {
			struct event *ev = &f->events.items[n].items[e];
			if (!ev->api || ev->api->op != API_RELEASE)
				continue;
			int r = 0;
			for (unsigned key = 1; key <= KEY_PREEMPT && r < 2; key <<= 1) {
				if (!(ev->api->keys & key))
					continue;
				char *k = event_key(ev, key, f->src);
				int32_t id = key_find(f, k);
				char *copied = id < 0 && key == KEY_LOCK ? paths_copied_key(f, k) : NULL;
				if (copied) /* spin_unlock(&card->lock) of a card copied from state->card */
					id = key_find(f, copied);
				ev->rel[r++] = id >= 0 ? id : -2;
				free(copied);
				free(k);
			}
		}
}

/* One acquisition per key E's call takes (spin_lock_irqsave: the lock, then irq). */
static void add_acquisitions(struct fn *f, const struct source *src, struct event *e,
			     const char *name, size_t len)
{
	e->acq = (uint32_t)f->acqs.len;
	for (unsigned key = 1; key <= KEY_PREEMPT; key <<= 1) {
		if (!(e->api->keys & key))
			continue;
		struct acq a;
		a.key = event_key(e, key, src->parse_text);
		a.key_id = key_intern(f, a.key);
		a.call = e->call;
		a.api = xstrndup(name, len);
		a.line = source_pos(src, ts_node_start_byte(e->call)).line;
		vec_push(&f->acqs, a);
	}
}

/* The lock wrapper of F's file named NAME, or NULL. */
static const struct wrapper *wrapper_lookup(const struct fn *f, const char *name, size_t len)
{
	for (size_t i = 0; f->wrappers && i < f->wrappers->len; i++) {
		const char *n = f->wrappers->items[i].api.name;
		if (strlen(n) == len && memcmp(n, name, len) == 0 && strcmp(n, f->name) != 0)
			return &f->wrappers->items[i];
	}
	return NULL;
}

/* The events of NODE: its calls in the order they complete. */
static event_vec node_events(struct fn *f, const struct source *src, const struct cfg_node *node)
{
	event_vec ev = VEC_INIT;
	if (ts_node_is_null(node->ast))
		return ev;
	struct event_collect ec = {VEC_INIT};
	ts_walk(node->ast, event_visit, &ec);
	if (ec.calls.len > 1)
		qsort(ec.calls.items, ec.calls.len, sizeof(TSNode), by_end);
	for (size_t k = 0; k < ec.calls.len; k++) {
		TSNode call = ec.calls.items[k];
		const char *name;
		size_t len = ts_call_name(call, src->parse_text, &name);
		struct event e = {call, len ? api_lookup(name, len) : NULL, 0, -1, {-1, -1}, false, NULL, NULL, false};
		const struct wrapper *w = !e.api && len ? wrapper_lookup(f, name, len) : NULL;
		if (w)
			e.api = &w->api;
		if (!e.api && len)
			e.api = api_msr_write(f, call, name, len, src->parse_text);
		if (!e.api && len && !source_defines(src, name, len))
			e.api = api_header_lock(name, len);
		if (e.api && (e.api->op == API_ACQUIRE || e.api->op == API_TRYLOCK)) {
			add_acquisitions(f, src, &e, name, len);
			if (e.api->op == API_TRYLOCK)
				e.polarity = node->kind == CFG_COND ?
					trylock_polarity(call, node->ast, src->parse_text) : -1;
			if (w && w->zero_success && e.polarity >= 0)
				e.polarity ^= 1; /* `if (icmp_xmit_lock()) return;`: held on the false edge */
		}
		/* `if (aac_queue_get(...) < 0) return;`: a wrapper that never fails takes only the false edge */
		if (w && w->never_fails && node->kind == CFG_COND) {
			e.polarity = trylock_polarity(call, node->ast, src->parse_text);
			e.polarity = e.polarity >= 0 ? e.polarity ^ 1 : -1;
		}
		vec_push(&ev, e);
	}
	vec_release(&ec.calls);
	return ev;
}

void flow_prepare(struct fn *f, const struct source *src)
{
	f->src = src->parse_text;
	for (size_t i = 0; i < f->cfg.nodes.len; i++) {
		event_vec ev = node_events(f, src, &f->cfg.nodes.items[i]);
		vec_push(&f->events, ev);
	}
	resolve_releases(f);
	f->words = (f->acqs.len + 1 + 63) / 64;
	size_t n = f->cfg.nodes.len;
	f->must = xcalloc(n * (f->keys.len + 1), 1);
	f->may = xcalloc(n * f->words, sizeof(uint64_t));
	f->reached = xcalloc(n, 1);
}

void flow_unprepare(struct fn *f)
{
	for (size_t k = 0; k < f->acqs.len; k++) {
		free(f->acqs.items[k].key);
		free(f->acqs.items[k].api);
	}
	vec_release(&f->acqs);
	for (size_t k = 0; k < f->keys.len; k++)
		free(f->keys.items[k]);
	vec_release(&f->keys);
	for (size_t k = 0; k < f->events.len; k++)
		vec_release(&f->events.items[k]);
	vec_release(&f->events);
	free(f->must);
	free(f->may);
	free(f->reached);
	f->must = NULL;
	f->may = NULL;
	f->reached = NULL;
}

/* ---- data-flow ----------------------------------------------------------- */

#define DEPTH_MAX 15 /* depths saturate: loops that only acquire still terminate */

static bool bit_get(const uint64_t *s, size_t i) { return (s[i / 64] >> (i % 64)) & 1; }
static void bit_set(uint64_t *s, size_t i) { s[i / 64] |= (uint64_t)1 << (i % 64); }
static void bit_clear(uint64_t *s, size_t i) { s[i / 64] &= ~((uint64_t)1 << (i % 64)); }

static void acquire(const struct fn *f, uint8_t *must, uint64_t *may, uint32_t acq, bool certain)
{
	uint32_t k = f->acqs.items[acq].key_id + 1;
	if (certain && must[k] < DEPTH_MAX)
		must[k]++;
	bit_set(may, acq + 1);
}

/*
 * Releases key id K (-2: a key this function never takes). The must depth
 * drops by one (a lock to zero: it cannot be held twice); releasing what
 * this function did not take on every path drops the caller's protection.
 * In the may-set every site of the key goes: after the release none of them
 * is held on this path (`lock; while () { unlock; lock; }` joins two sites).
 */
static void release(const struct fn *f, uint8_t *must, uint64_t *may, int32_t k, bool is_lock)
{
	/* a plain unlock of the caller's lock leaves interrupts off: the callers' are (entry_irqs_off) */
	bool keep = is_lock && f->entry_irqs_off;
	if (k < 0 || must[k + 1] == 0 || (uint32_t)(k + 1) == f->entry_key) /* the callers' lock: entry_lock */
		must[0] = keep ? must[0] : 0;
	if (k >= 0 && must[k + 1] > 0)
		must[k + 1] = is_lock ? 0 : (uint8_t)(must[k + 1] - 1);
	bool found = false;
	for (size_t i = 0; k >= 0 && i < f->acqs.len; i++)
		if (f->acqs.items[i].key_id == (uint32_t)k && bit_get(may, i + 1)) {
			bit_clear(may, i + 1);
			found = true;
		}
	if (!found && !keep)
		bit_clear(may, 0);
}

static void apply_event(const struct fn *f, const struct event *e, uint8_t *must, uint64_t *may, int edge)
{
	if (!e->api)
		return;
	if (e->api->op == API_ACQUIRE || e->api->op == API_TRYLOCK) {
		/* a trylock is certain only on its success edge; elsewhere it may hold */
		bool certain = e->api->op == API_ACQUIRE || (e->polarity >= 0 && e->polarity == edge);
		if (e->api->op == API_TRYLOCK && !certain && e->polarity >= 0)
			return; /* the failure edge, or the condition before branching */
		unsigned k = 0;
		for (unsigned key = 1; key <= KEY_PREEMPT; key <<= 1)
			if (e->api->keys & key)
				acquire(f, must, may, e->acq + k++, certain);
	} else if (e->api->op == API_RELEASE) {
		int r = 0;
		for (unsigned key = 1; key <= KEY_PREEMPT && r < 2; key <<= 1)
			if (e->api->keys & key)
				release(f, must, may, e->rel[r++], key == KEY_LOCK);
	}
}

/*
 * Copies node ID's in-state to (M, Y) and applies its events that end by
 * UPTO (UINT32_MAX: all of them). A trylock in a condition waits for the
 * edge taken.
 */
static void node_state(const struct fn *f, uint32_t id, uint32_t upto, uint8_t *m, uint64_t *y)
{
	size_t w = f->words, nk = f->keys.len + 1;
	memcpy(m, f->must + id * nk, nk);
	memcpy(y, f->may + id * w, w * sizeof(uint64_t));
	const struct cfg_node *node = &f->cfg.nodes.items[id];
	const struct event *ev = f->events.items[id].items;
	for (size_t e = 0; e < f->events.items[id].len; e++) {
		if (upto != UINT32_MAX && ts_node_end_byte(ev[e].call) > upto)
			break;
		if (!(ev[e].api && ev[e].api->op == API_TRYLOCK && node->kind == CFG_COND))
			apply_event(f, &ev[e], m, y, -1);
	}
}

/* A condition's trylocks, on the edge taken. */
static void edge_state(const struct fn *f, uint32_t id, const struct cfg_edge *edge, uint8_t *m, uint64_t *y)
{
	if (f->cfg.nodes.items[id].kind != CFG_COND)
		return;
	int pol = edge->label == EDGE_TRUE ? 1 : edge->label == EDGE_FALSE ? 0 : -2;
	const struct event *ev = f->events.items[id].items;
	for (size_t e = 0; e < f->events.items[id].len; e++)
		if (ev[e].api && ev[e].api->op == API_TRYLOCK)
			apply_event(f, &ev[e], m, y, pol);
}

/*
 * Joins (M, Y) into node TO's in-state: the minimum depth of each key, the
 * union of the sites; the first path to reach TO sets it. True if it changed.
 */
static bool join_into(struct fn *f, uint32_t to, const uint8_t *m, const uint64_t *y)
{
	size_t w = f->words, nk = f->keys.len + 1;
	uint8_t *tm = f->must + to * nk;
	uint64_t *ty = f->may + to * w;
	if (!f->reached[to]) {
		memcpy(tm, m, nk);
		memcpy(ty, y, w * sizeof(uint64_t));
		f->reached[to] = 1;
		return true;
	}
	bool changed = false;
	for (size_t k = 0; k < nk; k++)
		if (m[k] < tm[k]) {
			tm[k] = m[k];
			changed = true;
		}
	for (size_t k = 0; k < w; k++) {
		uint64_t ny = ty[k] | y[k];
		if (ny != ty[k])
			changed = true;
		ty[k] = ny;
	}
	return changed;
}

/* Clears every node's state; the entry holds the caller's protection (bit 0) if any. */
static void flow_reset(struct fn *f)
{
	size_t n = f->cfg.nodes.len, w = f->words, nk = f->keys.len + 1;
	memset(f->must, 0, n * nk);
	memset(f->may, 0, n * w * sizeof(uint64_t));
	memset(f->reached, 0, n);
	f->reached[CFG_ENTRY_ID] = 1;
	if (f->ctx == CTX_CALLERS) {
		f->must[0] = 1;
		bit_set(f->may, 0);
	}
	int32_t k = f->ctx == CTX_CALLERS && f->entry_lock ? key_find(f, f->entry_lock) : -1;
	f->entry_key = (uint32_t)(k + 1);
	if (k >= 0)
		f->must[k + 1] = 1;
}

void flow_run(struct fn *f)
{
	size_t n = f->cfg.nodes.len, w = f->words, nk = f->keys.len + 1;
	flow_reset(f);
	VEC(uint32_t) work = VEC_INIT;
	uint8_t *queued = xcalloc(n, 1);
	vec_push(&work, CFG_ENTRY_ID);
	queued[CFG_ENTRY_ID] = 1;
	uint8_t *m = xmalloc(2 * nk);
	uint8_t *m2 = m + nk;
	uint64_t *y = xmalloc(2 * w * sizeof(uint64_t)), *y2 = y + w;
	while (work.len) {
		uint32_t id = work.items[--work.len];
		queued[id] = 0;
		node_state(f, id, UINT32_MAX, m, y);
		const struct cfg_node *node = &f->cfg.nodes.items[id];
		for (size_t s = 0; s < node->succ.len; s++) {
			const struct cfg_edge *edge = &node->succ.items[s];
			memcpy(m2, m, nk);
			memcpy(y2, y, w * sizeof(uint64_t));
			edge_state(f, id, edge, m2, y2);
			if (join_into(f, edge->to, m2, y2) && !queued[edge->to]) {
				queued[edge->to] = 1;
				vec_push(&work, edge->to);
			}
		}
	}
	free(m);
	free(y);
	free(queued);
	vec_release(&work);
}

struct point_state flow_state_at(const struct fn *f, uint32_t offset)
{
	struct point_state ps = {false, f->ctx == CTX_HARDIRQ || f->ctx == CTX_SOFTIRQ, -1, -1, false};
	uint32_t id = cfg_node_at(&f->cfg, offset);
	if (id == UINT32_MAX || !f->reached[id]) {
		/* unreachable code or outside any node: assume the entry state */
		ps.entry_held = f->ctx == CTX_CALLERS;
		return ps;
	}
	ps.reached = true;
	size_t w = f->words, nk = f->keys.len + 1;
	uint8_t *m = xmalloc(nk);
	uint64_t *y = xmalloc(w * sizeof(uint64_t));
	node_state(f, id, offset, m, y);
	ps.entry_held = m[0] > 0;
	/* explain with the latest site of a key held on every path */
	for (size_t i = f->acqs.len; i-- > 0; ) {
		bool held = m[f->acqs.items[i].key_id + 1] > 0;
		if (held && ps.must_acq < 0 && bit_get(y, i + 1))
			ps.must_acq = (int)i;
		if (!held && ps.may_acq < 0 && bit_get(y, i + 1))
			ps.may_acq = (int)i;
	}
	for (size_t i = f->acqs.len; ps.must_acq < 0 && i-- > 0; )
		if (m[f->acqs.items[i].key_id + 1] > 0)
			ps.must_acq = (int)i;
	free(m);
	free(y);
	return ps;
}

uint64_t flow_key_bit(const struct fn *f, const struct event *e, unsigned key, char *const *keys, size_t n)
{
	char *k = event_key(e, key, f->src);
	uint64_t bit = 0;
	for (size_t i = 0; i < n && i < 64 && !bit; i++)
		if (strcmp(keys[i], k) == 0)
			bit = (uint64_t)1 << i;
	free(k);
	return bit;
}

char *flow_callee_key(const struct fn *g, TSNode call, const char *src, const char *gkey)
{
	TSNode d = ts_field(g->def, "declarator");
	while (!ts_node_is_null(d) && !ts_type_is(d, "function_declarator"))
		d = ts_field(d, "declarator");
	TSNode params = ts_field(d, "parameters"), args = ts_field(call, "arguments");
	for (uint32_t i = 0; !ts_node_is_null(params) && i < ts_node_named_child_count(params); i++) {
		TSNode p = ts_field(ts_node_named_child(params, i), "declarator");
		while (!ts_node_is_null(p) && !ts_type_is(p, "identifier"))
			p = ts_field(p, "declarator");
		size_t pl = ts_node_is_null(p) ? 0 : ts_node_end_byte(p) - ts_node_start_byte(p);
		const char *rest = gkey + pl;
		if (!pl || strncmp(gkey, g->src + ts_node_start_byte(p), pl) != 0 ||
		    (*rest && strncmp(rest, "->", 2) != 0 && *rest != '.'))
			continue;
		/* a key through parameter I: named at the call by its argument, when that is a name */
		TSNode a = i < ts_node_named_child_count(args) ? ts_strip_parens(ts_node_named_child(args, i), src)
							       : ts_null();
		if (!ts_type_is(a, "identifier") && !ts_type_is(a, "field_expression"))
			return NULL;
		struct buf b = BUF_INIT;
		for (uint32_t k = ts_node_start_byte(a); k < ts_node_end_byte(a); k++)
			if (src[k] != ' ' && src[k] != '\t' && src[k] != '\n')
				buf_putc(&b, src[k]);
		buf_puts(&b, rest);
		return buf_detach(&b);
	}
	return xstrdup(gkey);
}

/* KEYS' bits possibly held after E: a take (a trylock too) sets, a release clears. */
static uint64_t caller_keys_step(const struct fn *f, const struct event *e, uint64_t held, char *const *keys,
				 size_t n)
{
	for (size_t d = 0; e->drops && d < e->drops->dropped.len; d++) {
		char *k = flow_callee_key(e->drops, e->call, f->src, e->drops->dropped.items[d]);
		for (size_t i = 0; k && i < n; i++)
			if (strcmp(keys[i], k) == 0)
				held &= ~((uint64_t)1 << i); /* a callee that leaves it released */
		free(k);
	}
	if (!e->api || e->api->op == API_NONE)
		return held;
	for (unsigned key = 1; key <= KEY_PREEMPT; key <<= 1) {
		if (!(e->api->keys & key))
			continue;
		uint64_t bit = flow_key_bit(f, e, key, keys, n);
		held = e->api->op == API_RELEASE ? held & ~bit : held | bit;
	}
	return held;
}

struct key_set {
	char *const *keys;
	size_t n;
};

static uint64_t caller_keys_bits(const struct fn *f, const struct event *e, uint64_t held, const void *ctx)
{
	const struct key_set *ks = ctx;
	return caller_keys_step(f, e, held, ks->keys, ks->n);
}

bool flow_caller_keys_gone(const struct fn *f, char *const *keys, size_t n, uint32_t offset)
{
	if (n == 0 || n > 64)
		return false;
	struct key_set ks = {keys, n};
	uint64_t h = 0;
	return flow_bits_at(f, n == 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1, false, caller_keys_bits, &ks, offset,
			    &h) && h == 0;
}

/* The keys held in state (M, Y) of F on every path (MAY: on some path), into OUT. */
static void held_keys(const struct fn *f, const uint8_t *m, const uint64_t *y, bool may, name_vec *out)
{
	for (size_t k = 0; k < f->keys.len; k++) {
		bool held = m[k + 1] > 0;
		for (size_t i = 0; may && !held && i < f->acqs.len; i++)
			held = f->acqs.items[i].key_id == k && bit_get(y, i + 1);
		if (held)
			vec_push(out, f->keys.items[k]);
	}
}

void flow_held_keys(const struct fn *f, uint32_t offset, bool may, name_vec *out)
{
	uint32_t id = cfg_node_at(&f->cfg, offset);
	if (id == UINT32_MAX || !f->reached[id])
		return;
	uint8_t *m = xmalloc(f->keys.len + 1);
	uint64_t *y = xmalloc(f->words * sizeof(uint64_t));
	node_state(f, id, offset, m, y);
	held_keys(f, m, y, may, out);
	free(m);
	free(y);
}

void flow_exit_keys(const struct fn *f, bool may, name_vec *out)
{
	if (f->reached[CFG_EXIT_ID])
		held_keys(f, f->must + CFG_EXIT_ID * (f->keys.len + 1), f->may + CFG_EXIT_ID * f->words, may, out);
}

bool flow_caller_keys(const struct fn *f, bool retaken, key_vec *out)
{
	bool own = false;
	for (size_t n = 0; n < f->events.len; n++)
		for (size_t e = 0; e < f->events.items[n].len; e++) {
			const struct event *ev = &f->events.items[n].items[e];
			if (!ev->api || ev->api->op != API_RELEASE)
				continue;
			int r = 0;
			for (unsigned key = 1; key <= KEY_PREEMPT && r < 2; key <<= 1) {
				if (!(ev->api->keys & key))
					continue;
				int32_t rel = ev->rel[r++];
				char *k = event_key(ev, key, f->src);
				bool caller = rel == -2 || (retaken && fn_drops_caller_lock(f, k));
				own = own || !caller;
				for (size_t i = 0; caller && i < out->len; i++)
					caller = strcmp(out->items[i], k) != 0;
				if (caller)
					vec_push(out, k);
				else
					free(k);
			}
		}
	return own;
}

bool flow_exit_state(const struct fn *f, uint32_t acq, bool *must_held, bool *may_held)
{
	if (!f->reached[CFG_EXIT_ID])
		return false;
	size_t nk = f->keys.len + 1;
	*must_held = f->must[CFG_EXIT_ID * nk + f->acqs.items[acq].key_id + 1] > 0;
	*may_held = bit_get(f->may + CFG_EXIT_ID * f->words, acq + 1);
	return true;
}

bool point_protected(const struct point_state *s)
{
	return s->atomic_ctx || s->must_acq >= 0 || s->entry_held;
}

void point_explain(const struct fn *f, const struct point_state *s, struct buf *out)
{
	if (s->atomic_ctx) {
		buf_printf(out, "%s() runs in %s: %s", f->name, fn_context_name(f->ctx), f->ctx_reason);
		return;
	}
	if (s->must_acq >= 0) {
		const struct acq *a = &f->acqs.items[s->must_acq];
		const struct wrapper *w = wrapper_lookup(f, a->api, strlen(a->api));
		if (w)
			buf_printf(out, "%s() %s at line %u, so %s (which this lock wrapper of the file takes) "
				   "%s held on every path to here", a->api,
				   w->api.op != API_TRYLOCK ? "was called" : w->zero_success ? "returned 0" : "succeeded",
				   a->line, w->held, strchr(w->held, ',') ? "are" : "is");
		else
			buf_printf(out, "%s(%s) at line %u is held on every path to here",
				   a->api, strcmp(a->key, a->api) ? a->key : "", a->line);
		if (a->key_id + 1 == f->entry_key) /* the paths that never dropped it hold the callers' */
			buf_printf(out, " (or its callers', held on entry: %s)", f->ctx_reason);
		return;
	}
	if (s->entry_held) {
		buf_printf(out, "%s() is %s: %s", f->name, fn_context_name(f->ctx), f->ctx_reason);
		return;
	}
	if (!s->reached)
		buf_puts(out, "unreachable from the function entry; assumed preemptible");
	else if (s->may_acq >= 0) {
		const struct acq *a = &f->acqs.items[s->may_acq];
		buf_printf(out, "%s(%s) at line %u is held on some paths to here but not all",
			   a->api, a->key, a->line);
	} else if (f->ctx == CTX_CALLERS) {
		buf_printf(out, "%s() is entered with preemption off, but the caller's protection "
			   "is released before this point", f->name);
	} else {
		buf_puts(out, "no lock held, interrupts and preemption enabled on every path "
			 "from entry");
		if (f->tree_note && f->via_root)
			buf_printf(out, "; it is stored in %s %s, and the calls through it decide: %s",
				   fn_store_kind(f), fn_store_name(f), f->tree_note);
		else if (f->tree_note)
			buf_printf(out, "; %s", f->tree_note);
		else if (f->callers_note)
			buf_printf(out, "; %s", f->callers_note);
		else if (f->is_static && !f->addr_taken)
			buf_puts(out, "; no call to it in this file");
	}
}

/* True if EV takes or drops KEY. */
static bool event_has_key(const struct fn *f, const struct event *ev, const char *key)
{
	for (unsigned k = 1; k <= KEY_PREEMPT; k <<= 1) {
		if (!(ev->api->keys & k))
			continue;
		char *kt = event_key(ev, k, f->src);
		bool same = strcmp(kt, key) == 0;
		free(kt);
		if (same)
			return true;
	}
	return false;
}

bool fn_releases(const struct fn *f, const char *key)
{
	for (size_t n = 0; n < f->events.len; n++)
		for (size_t e = 0; e < f->events.items[n].len; e++) {
			const struct event *ev = &f->events.items[n].items[e];
			if (ev->api && ev->api->op == API_RELEASE && event_has_key(f, ev, key))
				return true;
		}
	return false;
}

bool fn_drops_caller_lock(const struct fn *f, const char *key)
{
	TSNode first = ts_null();
	bool first_is_release = false;
	for (size_t n = 0; n < f->events.len; n++)
		for (size_t e = 0; e < f->events.items[n].len; e++) {
			const struct event *ev = &f->events.items[n].items[e];
			if (!ev->api || ev->api->op == API_NONE || !event_has_key(f, ev, key))
				continue;
			if (ts_node_is_null(first) || ts_node_start_byte(ev->call) < ts_node_start_byte(first)) {
				first = ev->call;
				first_is_release = ev->api->op == API_RELEASE;
			}
		}
	return first_is_release;
}

/* ---- imbalances ------------------------------------------------------------ */

/* Is some site of key id K in the may-set Y? Its index, or -1. */
static int held_site(const struct fn *f, const uint64_t *y, int32_t k)
{
	for (size_t i = f->acqs.len; i-- > 0; )
		if (f->acqs.items[i].key_id == (uint32_t)k && bit_get(y, i + 1))
			return (int)i;
	return -1;
}

static void push_imbalance(imbalance_vec *out, enum imbalance_kind kind, const struct event *e,
			   int32_t key, int acq)
{
	for (size_t i = 0; i < out->len; i++)
		if (out->items[i].kind == kind && ts_node_eq(out->items[i].call, e->call) &&
		    out->items[i].key_id == key)
			return;
	struct imbalance im = {kind, e->call, e->api, key, acq};
	vec_push(out, im);
}

/*
 * Only the counting keys pair up exactly: preemption (get_cpu/put_cpu,
 * preempt_disable/enable) and bottom halves. cli()/sti() are idempotent,
 * and locks keep their own end-of-function check.
 */
bool flow_key_counts(const char *key)
{
	return strcmp(key, "preempt") == 0 || strcmp(key, "bh") == 0;
}

static bool counting_key(const struct fn *f, int32_t k)
{
	return flow_key_counts(f->keys.items[k]);
}

/* Checks event E against the state (M, Y) just before it. */
static void check_event(const struct fn *f, const struct event *e, const uint8_t *m,
			const uint64_t *y, imbalance_vec *out)
{
	if (e->api->op == API_RELEASE) {
		for (int r = 0; r < 2; r++) {
			int32_t k = e->rel[r];
			if (k < 0 || !counting_key(f, k))
				continue;
			if (m[k + 1] > 0 || fn_drops_caller_lock(f, f->keys.items[k]))
				continue; /* held here, or the caller's lock dropped and retaken */
			int site = held_site(f, y, k);
			if (site >= 0)
				push_imbalance(out, IMB_RELEASE_PARTIAL, e, k, site);
			else if (!bit_get(y, 0))
				push_imbalance(out, IMB_RELEASE_UNHELD, e, k, -1);
		}
		return;
	}
	unsigned n = 0;
	for (unsigned key = 1; key <= KEY_PREEMPT; key <<= 1) {
		if (!(e->api->keys & key))
			continue;
		uint32_t a = e->acq + n++;
		if (bit_get(y, a + 1) && counting_key(f, (int32_t)f->acqs.items[a].key_id))
			push_imbalance(out, IMB_REACQUIRE, e, (int32_t)f->acqs.items[a].key_id, (int)a);
	}
}

void flow_imbalances(const struct fn *f, imbalance_vec *out)
{
	size_t w = f->words, nk = f->keys.len + 1;
	uint8_t *m = xmalloc(nk);
	uint64_t *y = xmalloc(w * sizeof(uint64_t));
	for (uint32_t id = 0; id < f->cfg.nodes.len; id++) {
		if (!f->reached[id])
			continue;
		memcpy(m, f->must + id * nk, nk);
		memcpy(y, f->may + id * w, w * sizeof(uint64_t));
		bool cond = f->cfg.nodes.items[id].kind == CFG_COND;
		const event_vec *ev = &f->events.items[id];
		for (size_t e = 0; e < ev->len; e++) {
			const struct event *x = &ev->items[e];
			if (!x->api || x->api->op == API_NONE || (cond && x->api->op == API_TRYLOCK))
				continue;
			if (x->api->op != API_TRYLOCK)
				check_event(f, x, m, y, out);
			apply_event(f, x, m, y, -1);
		}
	}
	free(m);
	free(y);
}
