#define _GNU_SOURCE /* memmem */
#include "analysis/flow.h"

#include <stdlib.h>
#include <string.h>

static const struct api apis[] = {
	{"spin_lock", API_ACQUIRE, KEY_LOCK},
	{"_raw_spin_lock", API_ACQUIRE, KEY_LOCK},
	{"read_lock", API_ACQUIRE, KEY_LOCK},
	{"write_lock", API_ACQUIRE, KEY_LOCK},
	{"spin_lock_irq", API_ACQUIRE, KEY_LOCK | KEY_IRQ},
	{"read_lock_irq", API_ACQUIRE, KEY_LOCK | KEY_IRQ},
	{"write_lock_irq", API_ACQUIRE, KEY_LOCK | KEY_IRQ},
	{"spin_lock_irqsave", API_ACQUIRE, KEY_LOCK | KEY_IRQ},
	{"read_lock_irqsave", API_ACQUIRE, KEY_LOCK | KEY_IRQ},
	{"write_lock_irqsave", API_ACQUIRE, KEY_LOCK | KEY_IRQ},
	{"spin_lock_bh", API_ACQUIRE, KEY_LOCK | KEY_BH},
	{"read_lock_bh", API_ACQUIRE, KEY_LOCK | KEY_BH},
	{"write_lock_bh", API_ACQUIRE, KEY_LOCK | KEY_BH},
	{"spin_unlock", API_RELEASE, KEY_LOCK},
	{"_raw_spin_unlock", API_RELEASE, KEY_LOCK},
	{"read_unlock", API_RELEASE, KEY_LOCK},
	{"write_unlock", API_RELEASE, KEY_LOCK},
	{"spin_unlock_irq", API_RELEASE, KEY_LOCK | KEY_IRQ},
	{"read_unlock_irq", API_RELEASE, KEY_LOCK | KEY_IRQ},
	{"write_unlock_irq", API_RELEASE, KEY_LOCK | KEY_IRQ},
	{"spin_unlock_irqrestore", API_RELEASE, KEY_LOCK | KEY_IRQ},
	{"read_unlock_irqrestore", API_RELEASE, KEY_LOCK | KEY_IRQ},
	{"write_unlock_irqrestore", API_RELEASE, KEY_LOCK | KEY_IRQ},
	{"spin_unlock_bh", API_RELEASE, KEY_LOCK | KEY_BH},
	{"read_unlock_bh", API_RELEASE, KEY_LOCK | KEY_BH},
	{"write_unlock_bh", API_RELEASE, KEY_LOCK | KEY_BH},
	{"spin_trylock", API_TRYLOCK, KEY_LOCK},
	{"read_trylock", API_TRYLOCK, KEY_LOCK},
	{"write_trylock", API_TRYLOCK, KEY_LOCK},
	{"spin_trylock_bh", API_TRYLOCK, KEY_LOCK | KEY_BH},
	{"spin_trylock_irq", API_TRYLOCK, KEY_LOCK | KEY_IRQ},
	{"spin_trylock_irqsave", API_TRYLOCK, KEY_LOCK | KEY_IRQ},
	{"local_irq_disable", API_ACQUIRE, KEY_IRQ},
	{"local_irq_save", API_ACQUIRE, KEY_IRQ},
	{"__cli", API_ACQUIRE, KEY_IRQ},
	{"cli", API_ACQUIRE, KEY_IRQ},
	{"save_and_cli", API_ACQUIRE, KEY_IRQ},
	{"__save_and_cli", API_ACQUIRE, KEY_IRQ},
	{"local_irq_enable", API_RELEASE, KEY_IRQ},
	{"local_irq_restore", API_RELEASE, KEY_IRQ},
	{"__sti", API_RELEASE, KEY_IRQ},
	{"sti", API_RELEASE, KEY_IRQ},
	{"restore_flags", API_RELEASE, KEY_IRQ},
	{"__restore_flags", API_RELEASE, KEY_IRQ},
	{"local_bh_disable", API_ACQUIRE, KEY_BH},
	{"local_bh_enable", API_RELEASE, KEY_BH},
	{"preempt_disable", API_ACQUIRE, KEY_PREEMPT},
	{"get_cpu", API_ACQUIRE, KEY_PREEMPT},
	{"get_cpu_var", API_ACQUIRE, KEY_PREEMPT},
	{"preempt_enable", API_RELEASE, KEY_PREEMPT},
	{"preempt_enable_no_resched", API_RELEASE, KEY_PREEMPT},
	{"preempt_enable_noresched", API_RELEASE, KEY_PREEMPT},
	{"put_cpu", API_RELEASE, KEY_PREEMPT},
	{"put_cpu_no_resched", API_RELEASE, KEY_PREEMPT},
	{"put_cpu_var", API_RELEASE, KEY_PREEMPT},
};

const struct api *api_lookup(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(apis); i++)
		if (strlen(apis[i].name) == len && memcmp(apis[i].name, name, len) == 0)
			return &apis[i];
	return NULL;
}

/* Calls that may sleep whatever their arguments. */
static const char *const sleepers[] = {
	"schedule", "schedule_timeout", "interruptible_sleep_on",
	"interruptible_sleep_on_timeout", "sleep_on", "sleep_on_timeout",
	"wait_event", "wait_event_interruptible", "wait_event_timeout",
	"wait_event_interruptible_timeout", "wait_for_completion",
	"wait_for_completion_interruptible", "down", "down_interruptible",
	"down_read", "down_write", "msleep", "ssleep", "msleep_interruptible",
	"cond_resched", "yield", "lock_kernel", "request_irq", "free_irq",
	"filp_open", "vmalloc", "vfree", "copy_to_user", "copy_from_user",
	"__copy_to_user", "__copy_from_user", "get_user", "put_user",
	"clear_user", "strncpy_from_user", "kernel_thread", "flush_scheduled_tasks",
	"flush_scheduled_work", "synchronize_irq", "synchronize_net",
};

/* Allocators: the index of their GFP argument. */
static const struct {
	const char *name;
	unsigned gfp_arg;
} allocators[] = {
	{"kmalloc", 1}, {"kzalloc", 1}, {"kcalloc", 2}, {"kmem_cache_alloc", 1},
	{"__get_free_pages", 0}, {"__get_free_page", 0}, {"get_free_page", 0},
	{"get_zeroed_page", 0}, {"alloc_pages", 0}, {"alloc_page", 0},
	{"alloc_skb", 1}, {"__alloc_pages", 0}, {"pci_alloc_consistent", 99},
};

static bool name_is(const char *name, size_t len, const char *want)
{
	return strlen(want) == len && memcmp(name, want, len) == 0;
}

enum sleep_kind api_may_sleep(TSNode call, const char *src, struct buf *why)
{
	const char *name;
	size_t len = ts_call_name(call, src, &name);
	if (!len)
		return SLEEP_NO;
	for (size_t i = 0; i < ARRAY_SIZE(sleepers); i++)
		if (name_is(name, len, sleepers[i])) {
			if (why)
				buf_printf(why, "%s()", sleepers[i]);
			return SLEEP_YES;
		}
	for (size_t i = 0; i < ARRAY_SIZE(allocators); i++) {
		if (!name_is(name, len, allocators[i].name))
			continue;
		TSNode args = ts_field(call, "arguments");
		if (allocators[i].gfp_arg >= ts_node_named_child_count(args))
			return SLEEP_NO;
		TSNode a = ts_node_named_child(args, allocators[i].gfp_arg);
		uint32_t s = ts_node_start_byte(a), e = ts_node_end_byte(a);
		char *text = xstrndup(src + s, e - s);
		enum sleep_kind k = SLEEP_MAYBE;
		if (strstr(text, "GFP_ATOMIC"))
			k = SLEEP_NO;
		else if (strstr(text, "GFP_KERNEL") || strstr(text, "GFP_USER") ||
			 strstr(text, "GFP_NOFS") || strstr(text, "GFP_NOIO") ||
			 strstr(text, "GFP_HIGHUSER") || strstr(text, "GFP_BUFFER") ||
			 strstr(text, "__GFP_WAIT"))
			k = SLEEP_YES;
		else if (strcmp(text, "GFP_DMA") == 0)
			k = SLEEP_NO;
		if (why && k != SLEEP_NO)
			buf_printf(why, "%s(%s)", allocators[i].name, text);
		free(text);
		return k;
	}
	return SLEEP_NO;
}

const char *fn_context_name(enum fn_context c)
{
	static const char *const n[] = {"process context", "hard-IRQ context",
					"softirq context", "called with preemption off"};
	return n[c];
}

/* ---- collecting functions ---------------------------------------------- */

struct collect {
	struct file_analysis *fa;
};

static TSNode declarator_name(TSNode d)
{
	while (!ts_node_is_null(d) && !ts_type_is(d, "identifier")) {
		TSNode inner = ts_field(d, "declarator");
		if (ts_node_is_null(inner)) {
			TSNode null_node;
			memset(&null_node, 0, sizeof null_node);
			return null_node;
		}
		d = inner;
	}
	return d;
}

static TSNode function_declarator(TSNode d)
{
	while (!ts_node_is_null(d) && !ts_type_is(d, "function_declarator"))
		d = ts_field(d, "declarator");
	return d;
}

static bool has_static(TSNode def, const char *src)
{
	uint32_t n = ts_node_named_child_count(def);
	for (uint32_t i = 0; i < n; i++) {
		TSNode c = ts_node_named_child(def, i);
		if (ts_type_is(c, "storage_class_specifier") && ts_text_is(c, src, "static"))
			return true;
	}
	return false;
}

static bool collect_visit(TSNode n, void *ctx)
{
	struct collect *c = ctx;
	if (!ts_type_is(n, "function_definition"))
		return true;
	TSNode name = declarator_name(ts_field(n, "declarator"));
	TSNode body = ts_field(n, "body");
	if (ts_node_is_null(name) || ts_node_is_null(body))
		return false;
	const char *src = c->fa->src->parse_text;
	struct fn f;
	memset(&f, 0, sizeof f);
	f.name = xstrndup(src + ts_node_start_byte(name), ts_node_end_byte(name) - ts_node_start_byte(name));
	f.def = n;
	f.body = body;
	f.is_static = has_static(n, src);
	f.pos = source_pos(c->fa->src, ts_node_start_byte(name));
	f.sleeps = SLEEP_NO;
	vec_push(&c->fa->fns, f);
	return false; /* no nested functions in C */
}

int analysis_fn_index(const struct file_analysis *fa, const char *name, size_t len)
{
	for (size_t i = 0; i < fa->fns.len; i++)
		if (strlen(fa->fns.items[i].name) == len && memcmp(fa->fns.items[i].name, name, len) == 0)
			return (int)i;
	return -1;
}

const struct fn *analysis_fn_at(const struct file_analysis *fa, uint32_t offset)
{
	for (size_t i = 0; i < fa->fns.len; i++) {
		TSNode d = fa->fns.items[i].def;
		if (ts_node_start_byte(d) <= offset && offset < ts_node_end_byte(d))
			return &fa->fns.items[i];
	}
	return NULL;
}

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

/* Key text of a lock argument: whitespace and a leading '&' removed. */
static char *lock_key(TSNode call, const char *src)
{
	TSNode args = ts_field(call, "arguments");
	if (ts_node_named_child_count(args) == 0)
		return xstrdup("?");
	TSNode a = ts_node_named_child(args, 0);
	struct buf b = BUF_INIT;
	for (uint32_t i = ts_node_start_byte(a); i < ts_node_end_byte(a); i++)
		if (src[i] != ' ' && src[i] != '\t' && src[i] != '\n')
			buf_putc(&b, src[i]);
	char *k = buf_detach(&b);
	if (k[0] == '&')
		memmove(k, k + 1, strlen(k));
	return k;
}

static int trylock_polarity(TSNode call, TSNode root, const char *src)
{
	int pol = 1;
	TSNode n = call;
	while (!ts_node_eq(n, root)) {
		TSNode p = ts_node_parent(n);
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
			} else if (!(ts_text_is(op, src, "!=") && zero)) {
				return -1;
			}
		} else if (strcmp(t, "parenthesized_expression") != 0 &&
			   strcmp(t, "argument_list") != 0 && strcmp(t, "call_expression") != 0) {
			return -1;
		}
		n = p;
	}
	return pol;
}

static const char *key_class_name(unsigned key)
{
	switch (key) {
	case KEY_IRQ: return "irq";
	case KEY_BH: return "bh";
	case KEY_PREEMPT: return "preempt";
	default: return NULL;
	}
}

static uint32_t key_intern(struct fn *f, const char *key)
{
	for (size_t i = 0; i < f->keys.len; i++)
		if (strcmp(f->keys.items[i], key) == 0)
			return (uint32_t)i;
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
				char *k = key == KEY_LOCK ? lock_key(ev->call, f->src) : xstrdup(key_class_name(key));
				int32_t id = -2;
				for (size_t i = 0; i < f->keys.len; i++)
					if (strcmp(f->keys.items[i], k) == 0)
						id = (int32_t)i;
				ev->rel[r++] = id;
				free(k);
			}
		}
}

static void collect_events(struct file_analysis *fa, struct fn *f)
{
	const char *src = fa->src->parse_text;
	for (size_t i = 0; i < f->cfg.nodes.len; i++) {
		struct cfg_node *node = &f->cfg.nodes.items[i];
		event_vec ev = VEC_INIT;
		if (!ts_node_is_null(node->ast)) {
			struct event_collect ec = {VEC_INIT};
			ts_walk(node->ast, event_visit, &ec);
			if (ec.calls.len > 1)
				qsort(ec.calls.items, ec.calls.len, sizeof(TSNode), by_end);
			for (size_t k = 0; k < ec.calls.len; k++) {
				TSNode call = ec.calls.items[k];
				const char *name;
				size_t len = ts_call_name(call, src, &name);
				struct event e = {call, len ? api_lookup(name, len) : NULL, 0, -1, {-1, -1}};
				if (e.api && (e.api->op == API_ACQUIRE || e.api->op == API_TRYLOCK)) {
					e.acq = (uint32_t)f->acqs.len;
					for (unsigned key = 1; key <= KEY_PREEMPT; key <<= 1) {
						if (!(e.api->keys & key))
							continue;
						struct acq a;
						a.key = key == KEY_LOCK ? lock_key(call, src) : xstrdup(key_class_name(key));
						a.key_id = key_intern(f, a.key);
						a.call = call;
						a.api = xstrndup(name, len);
						a.line = source_pos(fa->src, ts_node_start_byte(call)).line;
						vec_push(&f->acqs, a);
					}
					if (e.api->op == API_TRYLOCK)
						e.polarity = node->kind == CFG_COND ?
							trylock_polarity(call, node->ast, src) : -1;
				}
				e.rel[0] = e.rel[1] = -1;
				vec_push(&ev, e);
			}
			vec_release(&ec.calls);
		}
		vec_push(&f->events, ev);
	}
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
	if (k < 0 || must[k + 1] == 0)
		must[0] = 0;
	else
		must[k + 1] = is_lock ? 0 : (uint8_t)(must[k + 1] - 1);
	bool found = false;
	for (size_t i = 0; k >= 0 && i < f->acqs.len; i++)
		if (f->acqs.items[i].key_id == (uint32_t)k && bit_get(may, i + 1)) {
			bit_clear(may, i + 1);
			found = true;
		}
	if (!found)
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

static void run_flow(struct file_analysis *fa, struct fn *f)
{
	(void)fa;
	size_t n = f->cfg.nodes.len, w = f->words, nk = f->keys.len + 1;
	memset(f->must, 0, n * nk);
	memset(f->may, 0, n * w * sizeof(uint64_t));
	memset(f->reached, 0, n);
	f->reached[CFG_ENTRY_ID] = 1;
	if (f->ctx == CTX_CALLERS) {
		f->must[0] = 1;
		bit_set(f->may, 0);
	}
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
		const struct cfg_node *node = &f->cfg.nodes.items[id];
		memcpy(m, f->must + id * nk, nk);
		memcpy(y, f->may + id * w, w * sizeof(uint64_t));
		const struct event *ev = f->events.items[id].items;
		size_t nev = f->events.items[id].len;
		for (size_t e = 0; e < nev; e++)
			if (!(ev[e].api && ev[e].api->op == API_TRYLOCK && node->kind == CFG_COND))
				apply_event(f, &ev[e], m, y, -1);
		for (size_t s = 0; s < node->succ.len; s++) {
			const struct cfg_edge *edge = &node->succ.items[s];
			memcpy(m2, m, nk);
			memcpy(y2, y, w * sizeof(uint64_t));
			if (node->kind == CFG_COND) {
				int pol = edge->label == EDGE_TRUE ? 1 : edge->label == EDGE_FALSE ? 0 : -2;
				for (size_t e = 0; e < nev; e++)
					if (ev[e].api && ev[e].api->op == API_TRYLOCK)
						apply_event(f, &ev[e], m2, y2, pol);
			}
			uint8_t *tm = f->must + edge->to * nk;
			uint64_t *ty = f->may + edge->to * w;
			bool changed = false;
			if (!f->reached[edge->to]) {
				memcpy(tm, m2, nk);
				memcpy(ty, y2, w * sizeof(uint64_t));
				f->reached[edge->to] = 1;
				changed = true;
			} else {
				for (size_t k = 0; k < nk; k++)
					if (m2[k] < tm[k]) {
						tm[k] = m2[k];
						changed = true;
					}
				for (size_t k = 0; k < w; k++) {
					uint64_t ny = ty[k] | y2[k];
					if (ny != ty[k])
						changed = true;
					ty[k] = ny;
				}
			}
			if (changed && !queued[edge->to]) {
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
	memcpy(m, f->must + id * nk, nk);
	memcpy(y, f->may + id * w, w * sizeof(uint64_t));
	const struct cfg_node *node = &f->cfg.nodes.items[id];
	const struct event *ev = f->events.items[id].items;
	for (size_t e = 0; e < f->events.items[id].len; e++) {
		if (ts_node_end_byte(ev[e].call) > offset)
			break;
		if (!(ev[e].api && ev[e].api->op == API_TRYLOCK && node->kind == CFG_COND))
			apply_event(f, &ev[e], m, y, -1);
	}
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
		buf_printf(out, "%s(%s) at line %u is held on every path to here",
			   a->api, strcmp(a->key, a->api) ? a->key : "", a->line);
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
		if (f->is_static && !f->addr_taken)
			buf_puts(out, "; not every caller in this file holds a lock");
	}
}

/* ---- contexts ---------------------------------------------------------- */

struct registration {
	const char *what; /* callee, or field name prefixed with '.' */
	unsigned arg;
	enum fn_context ctx;
	const char *fmt;  /* %u = line */
};

static const struct registration registrations[] = {
	{"request_irq", 1, CTX_HARDIRQ, "interrupt handler passed to request_irq() at line %u"},
	{"setup_timer", 1, CTX_SOFTIRQ, "timer function set by setup_timer() at line %u"},
	{"tasklet_init", 1, CTX_SOFTIRQ, "tasklet function set by tasklet_init() at line %u"},
	{"open_softirq", 1, CTX_SOFTIRQ, "softirq action registered by open_softirq() at line %u"},
	{"init_bh", 1, CTX_SOFTIRQ, "bottom half registered by init_bh() at line %u"},
	{".function", 0, CTX_SOFTIRQ, "timer function (assigned to a timer's .function at line %u)"},
	{".hard_start_xmit", 0, CTX_SOFTIRQ,
	 "net_device hard_start_xmit (set at line %u): the network core calls it with bottom halves disabled"},
	{"smp_call_function", 0, CTX_HARDIRQ,
	 "run on other CPUs by smp_call_function() at line %u (IPI handler)"},
	{"=pm_idle", 0, CTX_CALLERS,
	 "the idle loop (installed as pm_idle at line %u) runs with preemption disabled"},
	{"->poll", 0, CTX_SOFTIRQ,
	 "NAPI poll function (assigned to ->poll at line %u): run by the NET_RX softirq"},
	{".tx_timeout", 0, CTX_SOFTIRQ,
	 "net_device tx_timeout (set at line %u): called from the netdev watchdog timer"},
};

static void set_context(struct fn *f, enum fn_context ctx, const char *fmt, unsigned line)
{
	if (f->ctx == CTX_HARDIRQ || (f->ctx == CTX_SOFTIRQ && ctx != CTX_HARDIRQ))
		return; /* keep the first, strongest reason */
	f->ctx = ctx;
	free(f->ctx_reason);
	f->ctx_reason = xasprintf(fmt, line);
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
	TSNode p = ts_node_parent(n);
	while (!ts_node_is_null(p) && (ts_type_is(p, "parenthesized_expression") ||
				       ts_type_is(p, "cast_expression") ||
				       ts_type_is(p, "pointer_expression"))) {
		n = p;
		p = ts_node_parent(p);
	}
	*child = n;
	return p;
}

static bool in_timer_list_decl(TSNode n, const char *src)
{
	for (TSNode p = ts_node_parent(n); !ts_node_is_null(p); p = ts_node_parent(p)) {
		if (ts_type_is(p, "declaration")) {
			TSNode type = ts_field(p, "type");
			uint32_t s = ts_node_start_byte(type), e = ts_node_end_byte(type);
			return e - s >= 10 && memmem(src + s, e - s, "timer_list", 10) != NULL;
		}
		if (ts_type_is(p, "function_definition"))
			return false;
	}
	return false;
}

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
	TSNode direct = ts_node_parent(n);
	if (ts_type_is(direct, "call_expression") && ts_node_eq(ts_field(direct, "function"), n))
		return false; /* a call */
	if (ts_type_is(direct, "function_declarator") || ts_type_is(direct, "pointer_declarator") ||
	    ts_type_is(direct, "init_declarator") || ts_type_is(direct, "declaration"))
		return false; /* its own (re)declaration */
	f->addr_taken = true;
	unsigned line = source_pos(is->fa->src, ts_node_start_byte(n)).line;
	TSNode child;
	TSNode p = value_parent(n, &child);
	if (ts_type_is(p, "argument_list")) {
		TSNode call = ts_node_parent(p);
		const char *name;
		size_t len = ts_call_name(call, src, &name);
		uint32_t argi = 0;
		for (uint32_t i = 0; i < ts_node_named_child_count(p); i++)
			if (ts_node_eq(ts_node_named_child(p, i), child))
				argi = i;
		for (size_t r = 0; r < ARRAY_SIZE(registrations); r++)
			if (registrations[r].what[0] != '.' && registrations[r].what[0] != '=' &&
			    name_is(name, len, registrations[r].what) &&
			    registrations[r].arg == argi)
				set_context(f, registrations[r].ctx, registrations[r].fmt, line);
	}
	if (ts_type_is(p, "assignment_expression") && ts_node_eq(ts_field(p, "right"), child)) {
		TSNode left = ts_field(p, "left");
		if (ts_type_is(left, "identifier")) {
			for (size_t r = 0; r < ARRAY_SIZE(registrations); r++)
				if (registrations[r].what[0] == '=' && ts_text_is(left, src, registrations[r].what + 1))
					set_context(f, registrations[r].ctx, registrations[r].fmt, line);
		}
		if (ts_type_is(left, "field_expression")) {
			TSNode fld = ts_field(left, "field");
			for (size_t k = 0; k < is->idle_fields.len; k++) {
				TSNode idf = is->idle_fields.items[k];
				uint32_t a = ts_node_start_byte(idf), b = ts_node_end_byte(idf);
				uint32_t x = ts_node_start_byte(fld), y = ts_node_end_byte(fld);
				if (b - a == y - x && memcmp(src + a, src + x, b - a) == 0) {
					char *fmt = xasprintf("the idle loop (stored in .%.*s at line %%u, installed as "
							      "pm_idle at line %u) runs with preemption disabled",
							      (int)(b - a), src + a, is->idle_lines.items[k]);
					set_context(f, CTX_CALLERS, fmt, line);
					free(fmt);
				}
			}
			bool arrow = ts_text_is(ts_field(left, "operator"), src, "->");
			for (size_t r = 0; r < ARRAY_SIZE(registrations); r++) {
				const char *w = registrations[r].what;
				/* "->poll": only a runtime assignment through a pointer (dev->poll =);
				 * file_operations' .poll runs in process context */
				if ((w[0] == '.' && ts_text_is(fld, src, w + 1)) ||
				    (w[0] == '-' && arrow && ts_text_is(fld, src, w + 2)))
					set_context(f, registrations[r].ctx, registrations[r].fmt, line);
			}
		}
	} else if (ts_type_is(p, "initializer_pair")) {
		TSNode des = ts_field(p, "designator");
		if (ts_type_is(des, "field_designator") && ts_node_named_child_count(des) > 0)
			des = ts_node_named_child(des, 0);
		for (size_t r = 0; r < ARRAY_SIZE(registrations); r++)
			if (registrations[r].what[0] == '.' && ts_text_is(des, src, registrations[r].what + 1))
				set_context(f, registrations[r].ctx, registrations[r].fmt, line);
	} else if (ts_type_is(p, "initializer_list") && in_timer_list_decl(p, src)) {
		set_context(f, CTX_SOFTIRQ, "timer function (static timer_list initialiser at line %u)", line);
	}
	return false;
}

/*
 * The 2.4 interrupt handler signature, void f(int, void *, struct pt_regs *),
 * or an architecture's interrupt entry point: a struct pt_regs * parameter
 * and a name like smp_apic_timer_interrupt or do_IRQ.
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
		TSNode p = ts_node_named_child(params, i);
		uint32_t s = ts_node_start_byte(p), e = ts_node_end_byte(p);
		if (memmem(src + s, e - s, "pt_regs", 7))
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
	if ((n > 10 && strcmp(f->name + n - 10, "_interrupt") == 0) || strcmp(f->name, "do_IRQ") == 0)
		return "interrupt entry point (named like one and given struct pt_regs *, line %u)";
	return NULL;
}

static void find_contexts(struct file_analysis *fa)
{
	const char *src = fa->src->parse_text;
	struct ident_scan is = {fa, VEC_INIT, VEC_INIT};
	ts_walk(ts_tree_root_node(fa->tree), idle_field_visit, &is);
	ts_walk(ts_tree_root_node(fa->tree), ident_visit, &is);
	vec_release(&is.idle_fields);
	vec_release(&is.idle_lines);
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
		set_context(&fa->fns.items[idx], CTX_SOFTIRQ,
			    tasklet ? "tasklet function (DECLARE_TASKLET at line %u)"
				    : "timer function (DEFINE_TIMER at line %u)",
			    source_pos(fa->src, u->offset).line);
	}
	for (size_t i = 0; i < fa->fns.len; i++) {
		struct fn *f = &fa->fns.items[i];
		const char *sig = irq_signature(f, src);
		if (sig)
			set_context(f, CTX_HARDIRQ, sig, f->pos.line);
		for (size_t n = 0; n < f->events.len; n++)
			for (size_t e = 0; e < f->events.items[n].len; e++) {
				TSNode call = f->events.items[n].items[e].call;
				const char *name;
				size_t len = ts_call_name(call, src, &name);
				if (name_is(name, len, "irq_enter"))
					set_context(f, CTX_HARDIRQ, "calls irq_enter() at line %u",
						    source_pos(fa->src, ts_node_start_byte(call)).line);
			}
	}
}

/* ---- call graph ---------------------------------------------------------- */

static void collect_calls(struct file_analysis *fa, struct fn *f)
{
	const char *src = fa->src->parse_text;
	f->calls.len = 0;
	for (size_t n = 0; n < f->events.len; n++)
		for (size_t e = 0; e < f->events.items[n].len; e++) {
			TSNode call = f->events.items[n].items[e].call;
			const char *name;
			size_t len = ts_call_name(call, src, &name);
			int idx = len ? analysis_fn_index(fa, name, len) : -1;
			if (idx < 0)
				continue;
			struct point_state ps = flow_state_at(f, ts_node_start_byte(call));
			struct call_site cs = {(uint32_t)idx, call, point_protected(&ps)};
			vec_push(&f->calls, cs);
		}
}

/* Pessimistic fixed point: a static function becomes atomic at entry once
 * every call to it in the file is made with preemption off. */
static void callers_fixpoint(struct file_analysis *fa)
{
	size_t nf = fa->fns.len;
	uint8_t *dirty = xcalloc(nf ? nf : 1, 1);
	memset(dirty, 1, nf);
	for (size_t round = 0; round <= nf; round++) {
		for (size_t i = 0; i < nf; i++)
			if (dirty[i]) {
				run_flow(fa, &fa->fns.items[i]);
				collect_calls(fa, &fa->fns.items[i]);
				dirty[i] = 0;
			}
		bool changed = false;
		for (size_t g = 0; g < nf; g++) {
			struct fn *callee = &fa->fns.items[g];
			if (callee->ctx != CTX_PROCESS || !callee->is_static || callee->addr_taken)
				continue;
			size_t ncalls = 0;
			bool all = true;
			struct buf why = BUF_INIT;
			for (size_t i = 0; i < nf && all; i++) {
				const struct fn *caller = &fa->fns.items[i];
				for (size_t c = 0; c < caller->calls.len; c++) {
					if (caller->calls.items[c].callee != g)
						continue;
					ncalls++;
					if (!caller->calls.items[c].protected_call || i == g) {
						all = false;
						break;
					}
					if (ncalls <= 3) {
						struct point_state ps = flow_state_at(caller,
							ts_node_start_byte(caller->calls.items[c].call));
						buf_printf(&why, "%sfrom %s() at line %u (", ncalls > 1 ? "; " : "",
							   caller->name,
							   source_pos(fa->src, ts_node_start_byte(caller->calls.items[c].call)).line);
						point_explain(caller, &ps, &why);
						buf_putc(&why, ')');
					}
				}
			}
			if (all && ncalls > 0) {
				callee->ctx = CTX_CALLERS;
				free(callee->ctx_reason);
				callee->ctx_reason = xasprintf("every call in this file is made with preemption off: %s%s",
							       buf_cstr(&why), ncalls > 3 ? "; ..." : "");
				dirty[g] = 1;
				changed = true;
			}
			buf_release(&why);
		}
		if (!changed)
			break;
	}
	free(dirty);
}

static void sleep_fixpoint(struct file_analysis *fa)
{
	const char *src = fa->src->parse_text;
	for (size_t i = 0; i < fa->fns.len; i++) {
		struct fn *f = &fa->fns.items[i];
		for (size_t n = 0; n < f->events.len && f->sleeps != SLEEP_YES; n++)
			for (size_t e = 0; e < f->events.items[n].len; e++) {
				struct buf why = BUF_INIT;
				TSNode call = f->events.items[n].items[e].call;
				enum sleep_kind k = api_may_sleep(call, src, &why);
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
	for (bool changed = true; changed; ) {
		changed = false;
		for (size_t i = 0; i < fa->fns.len; i++) {
			struct fn *f = &fa->fns.items[i];
			for (size_t c = 0; c < f->calls.len; c++) {
				const struct fn *g = &fa->fns.items[f->calls.items[c].callee];
				if (g->sleeps > f->sleeps) {
					f->sleeps = g->sleeps;
					free(f->sleep_reason);
					f->sleep_reason = xasprintf("calls %s() at line %u, which %s", g->name,
						source_pos(fa->src, ts_node_start_byte(f->calls.items[c].call)).line,
						g->sleep_reason);
					changed = true;
				}
			}
		}
	}
}

void analysis_run(struct file_analysis *out, const struct source *src, TSTree *tree)
{
	memset(out, 0, sizeof *out);
	out->src = src;
	out->tree = tree;
	struct collect c = {out};
	ts_walk(ts_tree_root_node(tree), collect_visit, &c);
	for (size_t i = 0; i < out->fns.len; i++) {
		struct fn *f = &out->fns.items[i];
		f->src = src->parse_text;
		cfg_build(&f->cfg, f->body, src->parse_text);
		collect_events(out, f);
		resolve_releases(f);
		f->words = (f->acqs.len + 1 + 63) / 64;
		size_t n = f->cfg.nodes.len;
		f->must = xcalloc(n * (f->keys.len + 1), 1);
		f->may = xcalloc(n * f->words, sizeof(uint64_t));
		f->reached = xcalloc(n, 1);
	}
	find_contexts(out);
	callers_fixpoint(out);
	sleep_fixpoint(out);
}

void analysis_free(struct file_analysis *fa)
{
	for (size_t i = 0; i < fa->fns.len; i++) {
		struct fn *f = &fa->fns.items[i];
		free(f->name);
		free(f->ctx_reason);
		free(f->sleep_reason);
		cfg_free(&f->cfg);
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
		vec_release(&f->calls);
	}
	vec_release(&fa->fns);
}

bool fn_releases(const struct fn *f, const char *key)
{
	for (size_t n = 0; n < f->events.len; n++)
		for (size_t e = 0; e < f->events.items[n].len; e++) {
			const struct event *ev = &f->events.items[n].items[e];
			if (!ev->api || ev->api->op != API_RELEASE)
				continue;
			for (unsigned k = 1; k <= KEY_PREEMPT; k <<= 1) {
				if (!(ev->api->keys & k))
					continue;
				char *kt = k == KEY_LOCK ? lock_key(ev->call, f->src) : xstrdup(key_class_name(k));
				bool same = strcmp(kt, key) == 0;
				free(kt);
				if (same)
					return true;
			}
		}
	return false;
}

bool fn_drops_caller_lock(const struct fn *f, const char *key)
{
	TSNode first;
	memset(&first, 0, sizeof first);
	bool first_is_release = false;
	for (size_t n = 0; n < f->events.len; n++)
		for (size_t e = 0; e < f->events.items[n].len; e++) {
			const struct event *ev = &f->events.items[n].items[e];
			if (!ev->api || ev->api->op == API_NONE)
				continue;
			bool match = false;
			for (unsigned k = 1; k <= KEY_PREEMPT && !match; k <<= 1) {
				if (!(ev->api->keys & k))
					continue;
				char *kt = k == KEY_LOCK ? lock_key(ev->call, f->src) : xstrdup(key_class_name(k));
				match = strcmp(kt, key) == 0;
				free(kt);
			}
			if (match && (ts_node_is_null(first) ||
				      ts_node_start_byte(ev->call) < ts_node_start_byte(first))) {
				first = ev->call;
				first_is_release = ev->api->op == API_RELEASE;
			}
		}
	return first_is_release;
}
