/*
 * Lock wrappers: functions of the file that take or drop a lock for their
 * callers. 2.4 net/ipv4/icmp.c has both kinds:
 *
 *	static int icmp_xmit_lock(void)
 *	{
 *		local_bh_disable();
 *		if (unlikely(!spin_trylock(&icmp_socket->sk->lock.slock))) {
 *			local_bh_enable();
 *			return 1;
 *		}
 *		return 0;
 *	}
 *	static void icmp_xmit_unlock(void)
 *	{
 *		spin_unlock_bh(&icmp_socket->sk->lock.slock);
 *	}
 *
 * and its callers write `if (icmp_xmit_lock()) return; ... icmp_xmit_unlock();`.
 * Each function's own flow, run from a free entry, tells what it leaves at
 * its returns: the same keys held at every exit (an acquire wrapper), held
 * at the returns of one constant and none at the others (a trylock; an
 * error number such as -EBUSY is a constant that is not 0), or the
 * caller's keys released and none taken (a release wrapper). The calls to a
 * wrapper then act as the locking calls it wraps, and its own imbalance is
 * its contract, not a P007.
 */
#include "analysis/flow.h"

#include <stdlib.h>
#include <string.h>

/* The KEY_* class of a key's text: "irq", "bh", "preempt", else a lock. */
static unsigned key_class(const char *key)
{
	if (strcmp(key, "irq") == 0)
		return KEY_IRQ;
	if (strcmp(key, "bh") == 0)
		return KEY_BH;
	if (strcmp(key, "preempt") == 0)
		return KEY_PREEMPT;
	return KEY_LOCK;
}

/*
 * The KEY_* bits of KEYS: at most one lock and two keys in all (an event
 * releases two at most), else 0.
 */
static unsigned key_bits(const char *const *keys, size_t n)
{
	unsigned bits = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned k = key_class(keys[i]);
		if (bits & k)
			return 0;
		bits |= k;
	}
	return n >= 1 && n <= 2 ? bits : 0;
}

static bool same_keys(const name_vec *a, const name_vec *b)
{
	if (a->len != b->len)
		return false;
	for (size_t i = 0; i < a->len; i++) {
		bool found = false;
		for (size_t k = 0; k < b->len && !found; k++)
			found = strcmp(a->items[i], b->items[k]) == 0;
		if (!found)
			return false;
	}
	return true;
}

static char *keys_text(const name_vec *keys)
{
	struct buf b = BUF_INIT;
	for (size_t i = 0; i < keys->len; i++)
		buf_printf(&b, "%s%s", i ? ", " : "", keys->items[i]);
	return buf_detach(&b);
}

/* Is N an error number by the kernel's names: an upper-case identifier starting with E (EBUSY)? */
static bool errno_name(TSNode n, const char *src)
{
	if (!ts_type_is(n, "identifier") || src[ts_node_start_byte(n)] != 'E')
		return false;
	for (uint32_t i = ts_node_start_byte(n); i < ts_node_end_byte(n); i++)
		if (!(src[i] >= 'A' && src[i] <= 'Z') && !(src[i] >= '0' && src[i] <= '9') && src[i] != '_')
			return false;
	return true;
}

/*
 * An integer constant return value: 0 or not (-1 when it is no constant);
 * -EBUSY is not 0, and sets *ERR; *NEG is set for a negative one.
 */
static int return_constant(const struct fn *f, TSNode ret, bool *err, bool *neg)
{
	TSNode v = ts_node_named_child_count(ret) ? ts_node_named_child(ret, 0) : ts_null();
	bool negated = false;
	while (ts_type_is(v, "parenthesized_expression") || ts_type_is(v, "unary_expression")) {
		negated |= ts_type_is(v, "unary_expression") && ts_text_is(ts_field(v, "operator"), f->src, "-");
		v = ts_node_named_child(v, 0);
	}
	*neg = negated;
	if (negated && errno_name(v, f->src)) {
		*err = true;
		return 1;
	}
	if (!ts_type_is(v, "number_literal"))
		return -1;
	uint32_t s = ts_node_start_byte(v), e = ts_node_end_byte(v);
	for (uint32_t i = s; i < e; i++)
		if (f->src[i] != '0' && f->src[i] != 'x' && f->src[i] != 'X' && f->src[i] != 'u' &&
		    f->src[i] != 'U' && f->src[i] != 'l' && f->src[i] != 'L')
			return 1;
	return 0;
}

/*
 * A trylock wrapper: every reachable return gives a constant; those of one
 * kind (0, or not 0) hold the same keys on every path, the others none; an
 * error number is never the kind that holds.
 */
static bool trylock_wrapper(const struct fn *f, name_vec *held, struct wrapper *w)
{
	name_vec side[2] = {VEC_INIT, VEC_INIT}, may = VEC_INIT;
	bool seen[2] = {false, false}, ok = true, any_held[2] = {false, false}, any_err[2] = {false, false};
	bool all_neg[2] = {true, true};
	for (size_t n = 0; n < f->cfg.nodes.len && ok; n++) {
		const struct cfg_node *node = &f->cfg.nodes.items[n];
		if (node->kind != CFG_RETURN || !f->reached[n])
			continue;
		bool err = false, neg = false;
		int c = return_constant(f, node->ast, &err, &neg);
		if (c < 0) {
			ok = false;
			break;
		}
		uint32_t at = ts_node_end_byte(node->ast) - 1;
		name_vec must = VEC_INIT;
		may.len = 0;
		flow_held_keys(f, at, false, &must);
		flow_held_keys(f, at, true, &may);
		if (!same_keys(&must, &may) || (seen[c] && !same_keys(&must, &side[c])))
			ok = false;
		if (!seen[c]) {
			side[c] = must;
			seen[c] = true;
		} else {
			vec_release(&must);
		}
		any_held[c] = side[c].len > 0;
		any_err[c] |= err;
		all_neg[c] &= neg;
	}
	/* a return falling off the end of an int function gives no constant */
	ok = ok && seen[0] && seen[1] && any_held[0] != any_held[1];
	int h = any_held[0] ? 0 : 1;
	ok = ok && !any_err[h]; /* `return -EBUSY;` with the lock held is a leak, no success */
	if (ok) {
		w->zero_success = h == 0;
		w->fail_negative = all_neg[!h];
		for (size_t i = 0; i < side[h].len; i++)
			vec_push(held, side[h].items[i]);
	}
	vec_release(&side[0]);
	vec_release(&side[1]);
	vec_release(&may);
	return ok;
}

/* Does every reachable return of F give 0 (aacraid's aac_queue_get(), which its callers test)? */
static bool returns_zero(const struct fn *f)
{
	bool any = false;
	for (size_t n = 0; n < f->cfg.nodes.len; n++) {
		const struct cfg_node *node = &f->cfg.nodes.items[n];
		if (node->kind != CFG_RETURN || !f->reached[n])
			continue;
		bool err = false, neg = false;
		if (return_constant(f, node->ast, &err, &neg) != 0)
			return false;
		any = true;
	}
	return any;
}

static bool calls_wrapper(const struct fn *f, const wrapper_vec *w)
{
	for (size_t n = 0; n < f->events.len; n++)
		for (size_t e = 0; e < f->events.items[n].len; e++) {
			const char *name;
			size_t len = ts_call_name(f->events.items[n].items[e].call, f->src, &name);
			for (size_t i = 0; len && i < w->len; i++)
				if (strlen(w->items[i].api.name) == len && memcmp(w->items[i].api.name, name, len) == 0)
					return true;
		}
	return false;
}

/*
 * Does F call a function of the file that takes or drops something itself?
 * F's own flow does not see what that call does (fs/buffer.c:
 * wait_for_locked_buffers() takes lru_list_lock and calls
 * wait_for_buffers(), which drops it on every path): F is no wrapper.
 */
static bool calls_locking_fn(const struct file_analysis *fa, const struct fn *f)
{
	for (size_t n = 0; n < f->events.len; n++)
		for (size_t e = 0; e < f->events.items[n].len; e++) {
			const struct event *ev = &f->events.items[n].items[e];
			const char *name;
			size_t len = ev->api ? 0 : ts_call_name(ev->call, f->src, &name);
			int idx = len ? analysis_fn_index(fa, name, len) : -1;
			if (idx < 0 || &fa->fns.items[idx] == f)
				continue;
			const struct fn *g = &fa->fns.items[idx];
			if (g->acqs.len)
				return true;
			for (size_t gn = 0; gn < g->events.len; gn++)
				for (size_t ge = 0; ge < g->events.items[gn].len; ge++)
					if (g->events.items[gn].items[ge].api &&
					    g->events.items[gn].items[ge].api->op == API_RELEASE)
						return true;
		}
	return false;
}

/*
 * A lock KEY that F names through one of its parameters (`spinlock_t *lock`
 * gives "lock", `struct port *p` gives "p->lock"): its callers hand it the
 * lock, so each call takes or drops the one its argument names. Sets W's
 * argument and field; false when KEY names no parameter.
 */
static bool lock_parameter(const struct fn *f, const char *key, struct wrapper *w)
{
	TSNode fd = ts_field(f->def, "declarator");
	while (!ts_node_is_null(fd) && !ts_type_is(fd, "function_declarator"))
		fd = ts_field(fd, "declarator");
	TSNode params = ts_node_is_null(fd) ? fd : ts_field(fd, "parameters");
	uint32_t np = ts_node_is_null(params) ? 0 : ts_node_named_child_count(params);
	for (uint32_t i = 0; i < np; i++) {
		TSNode d = ts_field(ts_node_named_child(params, i), "declarator");
		while (!ts_node_is_null(d) && !ts_type_is(d, "identifier"))
			d = ts_field(d, "declarator");
		if (ts_node_is_null(d))
			continue;
		size_t n = ts_node_end_byte(d) - ts_node_start_byte(d);
		if (strncmp(key, f->src + ts_node_start_byte(d), n) != 0 ||
		    (key[n] != '\0' && strncmp(key + n, "->", 2) != 0))
			continue;
		w->api.lock_arg = i;
		w->api.lock_field = key[n] ? key + n : NULL;
		return true;
	}
	return false;
}

static bool names_key(const name_vec *keys, const char *key)
{
	for (size_t i = 0; i < keys->len; i++)
		if (strcmp(keys->items[i], key) == 0)
			return true;
	return false;
}

/*
 * Does F release KEY where it holds it more than once, so that it is still
 * held after the release (two get_cpu(), one put_cpu(): a leak, P007's, no
 * wrapper)? A release that lets go of it wholly, taken again on the way to
 * every exit, is a retry: 2.6 kernel/sched.c task_rq_lock() drops the
 * runqueue's lock and interrupts when the task moved meanwhile, and goes
 * back to take them again.
 */
static bool releases_nested(const struct fn *f, const char *key)
{
	bool nested = false;
	for (size_t n = 0; n < f->events.len && !nested; n++)
		for (size_t e = 0; e < f->events.items[n].len && !nested; e++) {
			const struct event *ev = &f->events.items[n].items[e];
			bool mine = false;
			for (unsigned k = 1; ev->api && ev->api->op == API_RELEASE && k <= KEY_PREEMPT && !mine; k <<= 1)
				if (ev->api->keys & k) {
					char *name = event_key(ev, k, f->src);
					mine = strcmp(name, key) == 0;
					free(name);
				}
			if (!mine)
				continue;
			name_vec after = VEC_INIT;
			flow_held_keys(f, ts_node_end_byte(ev->call), false, &after);
			nested = names_key(&after, key);
			vec_release(&after);
		}
	return nested;
}

/* Removes from KEYS (F's own strings) those named in GONE. */
static void drop_keys(name_vec *keys, const key_vec *gone)
{
	size_t w = 0;
	for (size_t i = 0; i < keys->len; i++) {
		bool drop = false;
		for (size_t k = 0; k < gone->len && !drop; k++)
			drop = strcmp(keys->items[i], gone->items[k]) == 0;
		if (!drop)
			keys->items[w++] = keys->items[i];
	}
	keys->len = w;
}

/*
 * Are the keys MAY holds beyond HELD (F's exit, on some paths only) locks,
 * not a CPU state? 2.6.9 sched.c double_rq_lock(rq1, rq2) always holds
 * rq1->lock and rq2->lock on some paths (rq1 == rq2 takes one): its
 * callers get rq1->lock; the other is not taken for held, as the call
 * without a wrapper took none. Only a lock held on every path makes one:
 * x86_64 oops_begin() turns interrupts off and takes die_lock unless the
 * oops is nested, and stays no wrapper.
 */
static bool partial_ok(const name_vec *held, const name_vec *may)
{
	bool lock = false; /* a lock held on every path, as double_rq_lock()'s rq1->lock */
	for (size_t i = 0; i < held->len; i++)
		lock = lock || key_class(held->items[i]) == KEY_LOCK;
	if (!lock)
		return false;
	for (size_t i = 0; i < may->len; i++)
		if (!names_key(held, may->items[i]) && key_class(may->items[i]) != KEY_LOCK)
			return false;
	return true;
}

/*
 * Keeps in DROPPED (owned strings) the caller's keys F releases on every
 * path; true if one is left and the others are locks released on some
 * paths only (double_rq_unlock(rq1, rq2) releases rq2->lock when rq1 !=
 * rq2): the release wrapper releases those it always does.
 */
static bool keep_gone(const struct fn *f, key_vec *dropped)
{
	size_t w = 0;
	bool ok = true;
	for (size_t i = 0; i < dropped->len; i++)
		if (flow_caller_keys_gone(f, &dropped->items[i], 1, UINT32_MAX))
			dropped->items[w++] = dropped->items[i];
		else {
			ok = ok && key_class(dropped->items[i]) == KEY_LOCK;
			free(dropped->items[i]);
		}
	dropped->len = w;
	return ok && w > 0;
}

/* Classifies F from its flow; true with W filled when it is a wrapper. */
static bool classify(const struct file_analysis *fa, struct fn *f, struct wrapper *w)
{
	name_vec held = VEC_INIT, may = VEC_INIT;
	key_vec dropped = VEC_INIT;
	bool ok = false;
	memset(w, 0, sizeof *w);
	w->api.name = f->name;
	bool own = flow_caller_keys(f, false, &dropped);
	bool pure_release = dropped.len > 0 && !own;
	/*
	 * the caller's locks it drops before it takes them, taken back on every
	 * path, leave the caller as it was (double_lock_balance())
	 */
	key_vec retaken = VEC_INIT;
	flow_caller_keys(f, true, &retaken);
	bool back = !dropped.len && retaken.len && flow_caller_keys_back(f, retaken.items, retaken.len);
	if (f->acqs.len && (!dropped.len || back)) {
		flow_exit_keys(f, false, &held);
		flow_exit_keys(f, true, &may);
		if (back) {
			drop_keys(&held, &retaken);
			drop_keys(&may, &retaken);
			/* interrupts turned off again with the caller's lock (2.4 IDE ide_do_request())
			 * are the caller's state given back, no key of its own */
			for (size_t i = 0; i < held.len; i++)
				if (key_class(held.items[i]) != KEY_LOCK)
					held.len = 0;
		}
		bool releases = false; /* two get_cpu(), one put_cpu(): a leak (P007), no lock */
		for (size_t i = 0; i < held.len && !releases; i++)
			releases = fn_releases(f, held.items[i]) && releases_nested(f, held.items[i]);
		/* held on every path: what callers get (partial_ok(): double_rq_lock()) */
		if (held.len && (same_keys(&held, &may) || partial_ok(&held, &may)) && key_bits(held.items, held.len) &&
		    !releases) {
			w->api.op = API_ACQUIRE;
			w->never_fails = returns_zero(f);
			ok = true;
		} else {
			held.len = 0;
			if (trylock_wrapper(f, &held, w) && key_bits(held.items, held.len)) {
				w->api.op = API_TRYLOCK;
				ok = true;
			}
		}
	} else if (!f->acqs.len && pure_release && keep_gone(f, &dropped) &&
		   key_bits((const char *const *)dropped.items, dropped.len)) {
		w->api.op = API_RELEASE;
		w->never_fails = returns_zero(f);
		for (size_t i = 0; i < dropped.len; i++)
			vec_push(&held, dropped.items[i]);
		ok = true;
	}
	/* a caller's lock dropped and taken again (prune_one_dentry()) leaves the caller as it was */
	for (size_t i = 0; ok && i < held.len; i++)
		ok = !fn_drops_caller_lock(f, held.items[i]) || w->api.op == API_RELEASE;
	if (ok && calls_locking_fn(fa, f))
		ok = false;
	if (ok) {
		w->api.keys = key_bits(held.items, held.len);
		w->held = keys_text(&held);
		for (size_t i = 0; i < held.len; i++)
			if (key_class(held.items[i]) == KEY_LOCK)
				w->lock = xstrdup(held.items[i]);
		w->api.lock = w->lock;
		if (w->lock && lock_parameter(f, w->lock, w))
			w->api.lock = NULL; /* named at each call by its argument */
	}
	for (size_t i = 0; i < dropped.len; i++)
		free(dropped.items[i]);
	vec_release(&dropped);
	for (size_t i = 0; i < retaken.len; i++)
		free(retaken.items[i]);
	vec_release(&retaken);
	vec_release(&held);
	vec_release(&may);
	return ok;
}

/*
 * The kernel call a function-like macro of the file stands for, when its
 * body is that one call and it takes or drops no lock of its own (the CPU's
 * state only): 2.6.9 fs/buffer.c `#define bh_lru_lock() local_irq_disable()`
 * (preempt_disable() without CONFIG_SMP: the first definition is taken,
 * and its partner's too, so the pair stays one key). NULL if not so.
 */
static const struct api *macro_api(const struct macro_def *d)
{
	if (!d->function_like || !d->body)
		return NULL;
	const char *b = d->body;
	while (*b == ' ' || *b == '\t')
		b++;
	size_t n = 0;
	while (is_ident_char(b[n]))
		n++;
	const char *open = b + n;
	while (*open == ' ' || *open == '\t')
		open++;
	if (!n || *open != '(')
		return NULL;
	const char *close = strchr(open, ')');
	if (!close || memchr(open + 1, '(', (size_t)(close - open - 1)))
		return NULL;
	for (const char *t = close + 1; *t; t++)
		if (*t != ' ' && *t != '\t' && *t != ';' && *t != '\n')
			return NULL;
	const struct api *a = api_lookup(b, n);
	return a && a->op != API_TRYLOCK && !(a->keys & KEY_LOCK) ? a : NULL;
}

/* Adds a wrapper for each macro of the file that stands for one kernel call (macro_api()). */
static void macro_wrappers(const struct file_analysis *fa, wrapper_vec *found)
{
	const struct source *src = fa->src;
	for (size_t i = 0; i < src->defs.len; i++) {
		const struct macro_def *d = &src->defs.items[i];
		const struct api *a = macro_api(d);
		bool first = true;
		for (size_t k = 0; k < i && first; k++)
			first = strcmp(src->defs.items[k].name, d->name) != 0;
		if (!a || !first || analysis_fn_index(fa, d->name, strlen(d->name)) >= 0)
			continue;
		struct wrapper w;
		memset(&w, 0, sizeof w);
		w.api = *a;
		w.api.name = d->name;
		w.held = xstrdup(a->keys & KEY_IRQ ? "irq" : a->keys & KEY_BH ? "bh" : "preempt");
		vec_push(found, w);
	}
}

void wrap_find(struct file_analysis *fa)
{
	wrapper_vec found = VEC_INIT;
	VEC(size_t) owner = VEC_INIT;
	for (size_t i = 0; i < fa->fns.len; i++) {
		struct fn *f = &fa->fns.items[i];
		if (!f->events.len)
			continue;
		bool locks = f->acqs.len > 0;
		for (size_t n = 0; n < f->events.len && !locks; n++)
			for (size_t e = 0; e < f->events.items[n].len && !locks; e++) {
				const struct event *ev = &f->events.items[n].items[e];
				locks = ev->api && ev->api->op == API_RELEASE;
			}
		if (!locks)
			continue;
		flow_run(f);
		struct wrapper w;
		if (classify(fa, f, &w)) {
			vec_push(&found, w);
			vec_push(&owner, i);
		}
	}
	size_t fn_wrappers = found.len;
	macro_wrappers(fa, &found);
	fa->wrappers = found; /* final: the events below point into it */
	for (size_t k = 0; k < owner.len && k < fn_wrappers; k++)
		fa->fns.items[owner.items[k]].wraps = &fa->wrappers.items[k];
	vec_release(&owner);
	if (!fa->wrappers.len)
		return;
	for (size_t i = 0; i < fa->fns.len; i++) {
		struct fn *f = &fa->fns.items[i];
		f->wrappers = &fa->wrappers;
		if (!calls_wrapper(f, &fa->wrappers))
			continue;
		flow_unprepare(f);
		flow_prepare(f, fa->src);
	}
}
