/*
 * A path-sensitive replay of one function's lock flow (ESP-style): the
 * states at a node are kept apart by what they hold (and the copies that
 * alias a lock), and carry the facts (paths_internal.h) true on every path
 * that reached them, so a branch taken one way cannot be taken the other
 * way further down the same path. What each release and acquisition, and
 * the exit, see on the feasible paths is what check_balance.c asks.
 */
#include "analysis/paths_internal.h"

#include <stdlib.h>
#include <string.h>

#define MAX_STATES 24      /* per node; more gives up (the flow's answer stands) */
#define MAX_STEPS 200000
#define COUNT_MAX 4        /* counts saturate; locks are held once */
#define MAX_READINGS 8     /* readings of a function's tested calls that may release */

/* A call that may release (event.may_drop) and the condition whose test tells which way it went. */
struct reading {
	TSNode call;
	uint32_t test;
};

struct pstate {
	uint64_t known, val;
	uint32_t alias;
	/* which way the bound call went (explorer.bind_call), until its test: 0, 1 held, 2 released */
	uint8_t way;
	uint8_t *depth;    /* per key */
};
typedef VEC(struct pstate) pstate_vec;

struct explorer {
	const struct fn *f;
	struct path_facts pf;
	struct path_result *out;
	size_t nk;
	pstate_vec *at;   /* per node: its states */
	VEC(uint32_t) work;       /* node, state index: two by two */
	bool *counts;             /* per key: a count (flow_key_counts()) */
	/* per key, over the exit's states: the facts every one holding it (or not) knows true or false */
	uint64_t *held_true, *held_false, *free_true, *free_false;
	int irq_key;              /* the key "irq", or -1 */
	size_t steps;
	bool failed;
	/*
	 * The reading of a tested call that releases its caller's lock on some
	 * of its paths (event.may_drop) this replay makes: its call, the test
	 * of its result bound to which way it went (POLARITY 1: true where it
	 * released, 0: false there); BIND UINT32_MAX for none.
	 */
	TSNode bind_call;
	uint32_t bind;
	int polarity;
};

static struct pstate state_copy(const struct explorer *x, const struct pstate *s)
{
	struct pstate c = *s;
	c.depth = xmalloc(x->nk + 1);
	memcpy(c.depth, s->depth, x->nk + 1);
	return c;
}

static void depth_set(struct explorer *x, struct pstate *s, uint32_t key, bool take)
{
	uint8_t *d = &s->depth[key];
	if (take)
		*d = x->counts[key] ? (uint8_t)(*d < COUNT_MAX ? *d + 1 : COUNT_MAX) : 1;
	else
		*d = x->counts[key] && *d > 0 ? (uint8_t)(*d - 1) : 0;
}

/*
 * Interrupts: 1 off by a plain disable (cli(), local_irq_disable()), 3 off
 * by a save from on (local_irq_save(), spin_lock_irqsave()), 2 a save over
 * an off state, which its restore gives back (1). OUT->irq_on when a path
 * turns on interrupts a plain disable turned off.
 */
static void irq_step(struct explorer *x, struct pstate *s, bool take, const char *api)
{
	uint8_t *d = &s->depth[x->irq_key];
	bool save = api && strstr(api, "save"), restore = api && strstr(api, "restore");
	if (take) {
		*d = *d == 0 ? (save ? 3 : 1) : save ? 2 : *d;
		return;
	}
	if (restore && *d == 2) {
		*d = 1;
		return;
	}
	if (*d == 1 || *d == 2)
		x->out->irq_on = true;
	*d = 0;
}

/* Takes or drops KEY, and every key an active alias makes the same lock. */
static void key_step(struct explorer *x, struct pstate *s, uint32_t key, bool take)
{
	depth_set(x, s, key, take);
	for (size_t a = 0; a < x->pf.aliases.len; a++) {
		if (!((s->alias >> a) & 1))
			continue;
		const struct alias *al = &x->pf.aliases.items[a];
		for (size_t i = 0; i + 1 < al->pairs.len; i += 2) {
			if (al->pairs.items[i] == key)
				s->depth[al->pairs.items[i + 1]] = s->depth[key];
			else if (al->pairs.items[i + 1] == key)
				s->depth[al->pairs.items[i]] = s->depth[key];
		}
	}
}

/* A release at event SLOT of a key F never takes, which an active alias makes one it does. */
static void alias_release(struct explorer *x, struct pstate *s, uint32_t slot)
{
	for (size_t a = 0; a < x->pf.aliases.len; a++) {
		const struct alias *al = &x->pf.aliases.items[a];
		for (size_t i = 0; ((s->alias >> a) & 1) && i + 1 < al->rels.len; i += 2)
			if (al->rels.items[i] == slot)
				key_step(x, s, al->rels.items[i + 1], false);
	}
}

static void observe(struct explorer *x, uint32_t slot, uint32_t key, const struct pstate *s)
{
	x->out->ev[slot] |= s->depth[key] ? PATH_HELD : PATH_FREE;
}

/*
 * Applies event E (at observation slot SLOT) to the states V from index
 * FROM on: a trylock whose result no edge decides both holds and does not.
 */
static void event_step(struct explorer *x, const struct event *e, uint32_t slot, bool on_edge,
		       pstate_vec *v)
{
	const struct api *api = e->api;
	size_t n = v->len;
	for (size_t i = 0; i < n; i++) {
		struct pstate *s = &v->items[i];
		if (api->op == API_RELEASE) {
			for (int r = 0; r < 2; r++)
				if (e->rel[r] >= 0) {
					observe(x, slot * 2 + (uint32_t)r, (uint32_t)e->rel[r], s);
					if (e->rel[r] == x->irq_key)
						irq_step(x, s, false, api->name);
					else
						key_step(x, s, (uint32_t)e->rel[r], false);
				}
			if (e->rel[0] == -2)
				alias_release(x, s, slot);
			continue;
		}
		if (api->op == API_TRYLOCK && !on_edge) {
			struct pstate c = state_copy(x, s);
			vec_push(v, c);
			s = &v->items[i];
		}
		unsigned k = 0;
		for (unsigned key = 1; key <= KEY_PREEMPT; key <<= 1)
			if (api->keys & key) {
				uint32_t id = x->f->acqs.items[e->acq + k].key_id;
				if (k < 2)
					observe(x, slot * 2 + k, id, s);
				if ((int)id == x->irq_key)
					irq_step(x, s, true, api->name);
				else
					key_step(x, s, id, true);
				k++;
			}
	}
}

/* Joins S into node TO: kept apart by what it holds, its facts met. */
static void join(struct explorer *x, uint32_t to, struct pstate *s)
{
	pstate_vec *v = &x->at[to];
	for (size_t i = 0; i < v->len; i++) {
		struct pstate *t = &v->items[i];
		if (t->alias != s->alias || t->way != s->way || memcmp(t->depth, s->depth, x->nk + 1) != 0)
			continue;
		uint64_t known = t->known & s->known & ~(t->val ^ s->val);
		free(s->depth);
		if (known != t->known) {
			t->known = known;
			t->val &= known;
			vec_push(&x->work, to);
			vec_push(&x->work, (uint32_t)i);
		}
		return;
	}
	if (v->len >= MAX_STATES) {
		x->failed = true;
		free(s->depth);
		return;
	}
	vec_push(v, *s);
	vec_push(&x->work, to);
	vec_push(&x->work, (uint32_t)(v->len - 1));
}

/* The facts of an edge out of condition node ID; false when the path cannot take it. */
static bool edge_facts(const struct explorer *x, uint32_t id, int cond, enum cfg_edge_label label,
		       struct pstate *s)
{
	(void)id;
	if (cond < 0 || label == EDGE_ALWAYS)
		return true;
	bool v = label == EDGE_TRUE;
	int now = path_cond_eval(&x->pf, cond, s->known, s->val);
	if (now >= 0 && now != (int)v)
		return false;
	path_cond_assume(&x->pf, cond, v, &s->known, &s->val);
	return true;
}

static bool fact_set(struct pstate *s, int fact, bool v)
{
	uint64_t bit = (uint64_t)1 << fact;
	if ((s->known & bit) && ((s->val & bit) != 0) != v)
		return false;
	s->known |= bit;
	s->val = v ? s->val | bit : s->val & ~bit;
	return true;
}

/* Leaves node ID with S: its kills, the constant it sets, the alias it makes. */
static void node_writes(struct explorer *x, uint32_t id, struct pstate *s)
{
	const struct node_facts *nf = &x->pf.nodes[id];
	s->known &= ~x->pf.kills[id];
	s->val &= s->known;
	s->alias &= ~x->pf.alias_kills[id];
	if (nf->gen_fact >= 0)
		fact_set(s, nf->gen_fact, nf->gen_value);
	if (nf->try_key >= 0) {
		/* the copy that took the lock got the success value: 0 for a zero-success wrapper */
		bool ok = s->depth[nf->try_key] > 0;
		if (nf->try_fact >= 0)
			fact_set(s, nf->try_fact, nf->try_zero_success ? !ok : ok);
		if (nf->try_neg_fact >= 0)
			fact_set(s, nf->try_neg_fact, !ok && nf->try_zero_success && nf->try_fail_negative);
	}
	if (nf->alias >= 0) {
		const struct alias *al = &x->pf.aliases.items[nf->alias];
		s->alias |= (uint32_t)1 << nf->alias;
		for (size_t i = 0; i + 1 < al->pairs.len; i += 2)
			s->depth[al->pairs.items[i]] = s->depth[al->pairs.items[i + 1]];
	}
}

/*
 * The edge LABEL out of condition ID, taken by C: false when ID is the
 * bound test and the edge is not the one C's way takes under the polarity.
 */
static bool result_way(const struct explorer *x, uint32_t id, enum cfg_edge_label label, struct pstate *c)
{
	if (!c->way || id != x->bind || (label != EDGE_TRUE && label != EDGE_FALSE))
		return true;
	bool released = c->way == 2;
	c->way = 0;
	return (label == EDGE_TRUE) == (released == (x->polarity == 1));
}

/* Follows edge E out of condition or statement ID with state C (consumed). */
static void follow(struct explorer *x, uint32_t id, const struct cfg_edge *e, struct pstate *c)
{
	const struct cfg_node *node = &x->f->cfg.nodes.items[id];
	if (node->kind == CFG_COND) {
		/* a trylock in the condition holds on its success edge */
		const event_vec *ev = &x->f->events.items[id];
		int pol = e->label == EDGE_TRUE ? 1 : e->label == EDGE_FALSE ? 0 : -2;
		for (size_t k = 0; k < ev->len; k++) {
			const struct event *t = &ev->items[k];
			if (t->api && t->api->op != API_TRYLOCK && t->polarity >= 0 && pol >= 0 && t->polarity != pol) {
				free(c->depth); /* the failure edge of a wrapper that never fails */
				return;
			}
			if (t->api && t->api->op == API_TRYLOCK && t->polarity >= 0 && t->polarity == pol) {
				pstate_vec one = {c, 1, 1};
				event_step(x, t, x->out->ev_first[id] + (uint32_t)k, true, &one);
			}
		}
		if (!edge_facts(x, id, x->pf.nodes[id].cond, e->label, c) || !result_way(x, id, e->label, c)) {
			free(c->depth);
			return;
		}
	}
	const struct node_facts *to = &x->pf.nodes[e->to];
	if (to->first_fact < 0 || to->init != id || x->f->events.items[e->to].len) {
		join(x, e->to, c);
		return;
	}
	/* the first test of a counted loop: taken as every other first test of it */
	const struct cfg_node *head = &x->f->cfg.nodes.items[e->to];
	for (size_t k = 0; k < head->succ.len; k++) {
		struct pstate c2 = state_copy(x, c);
		const struct cfg_edge *e2 = &head->succ.items[k];
		if (e2->label == EDGE_ALWAYS || fact_set(&c2, to->first_fact, e2->label == EDGE_TRUE))
			join(x, e2->to, &c2);
		else
			free(c2.depth);
	}
	free(c->depth);
}

/* A call to G, which leaves its caller's locks (G->dropped) released on every path. */
static void callee_drops(struct explorer *x, const struct event *e, pstate_vec *v)
{
	const struct fn *g = e->drops;
	for (size_t d = 0; d < g->dropped.len; d++) {
		char *key = flow_callee_key(g, e->call, x->f->src, g->dropped.items[d]);
		for (size_t k = 0; key && k < x->nk; k++) {
			if (strcmp(x->f->keys.items[k], key) != 0)
				continue;
			for (size_t i = 0; i < v->len; i++) {
				if ((int)k == x->irq_key)
					irq_step(x, &v->items[i], false, NULL);
				else
					key_step(x, &v->items[i], (uint32_t)k, false);
			}
		}
		free(key);
	}
}

/*
 * The bound call G, which leaves its caller's locks released on some of
 * its paths (G->dropped): each state that holds one goes on both ways,
 * each bound to its edge of the bound test (result_way()).
 */
static void callee_may_drop(struct explorer *x, const struct event *e, pstate_vec *v)
{
	const struct fn *g = e->may_drop;
	for (size_t d = 0; d < g->dropped.len; d++) {
		char *key = flow_callee_key(g, e->call, x->f->src, g->dropped.items[d]);
		for (size_t k = 0; key && k < x->nk; k++) {
			if (strcmp(x->f->keys.items[k], key) != 0)
				continue;
			size_t n = v->len;
			for (size_t i = 0; i < n; i++) {
				if (!v->items[i].depth[k])
					continue;
				struct pstate c = state_copy(x, &v->items[i]);
				if ((int)k == x->irq_key)
					irq_step(x, &c, false, NULL);
				else
					key_step(x, &c, (uint32_t)k, false);
				c.way = 2;
				v->items[i].way = 1;
				vec_push(v, c);
			}
		}
		free(key);
	}
}

/* The function's exit reached with state S. */
static void exits(struct explorer *x, const struct pstate *s)
{
	for (size_t k = 0; k < x->nk; k++) {
		x->out->exit[k] |= s->depth[k] ? PATH_HELD : PATH_FREE;
		*(s->depth[k] ? &x->held_true[k] : &x->free_true[k]) &= s->known & s->val;
		*(s->depth[k] ? &x->held_false[k] : &x->free_false[k]) &= s->known & ~s->val;
	}
}

/* A return with state S: what each key is where it returns null, and elsewhere. */
static void returned(struct explorer *x, const struct node_facts *nf, const struct pstate *s)
{
	uint64_t bit = nf->ret_fact >= 0 ? (uint64_t)1 << nf->ret_fact : 0;
	bool null = nf->ret_null || (bit && (s->known & bit) && !(s->val & bit));
	uint8_t *at = null ? x->out->ret_null : x->out->ret_value;
	for (size_t k = 0; k < x->nk; k++)
		at[k] |= s->depth[k] ? PATH_HELD : PATH_FREE;
}

/* Runs node ID from state IN (consumed). */
static void visit(struct explorer *x, uint32_t id, struct pstate in)
{
	const struct node_facts *nf = &x->pf.nodes[id];
	for (size_t a = 0; a < nf->arms.len; a++)
		if (!fact_set(&in, nf->arms.items[a] / 2, nf->arms.items[a] & 1)) {
			free(in.depth);
			return;
		}
	const struct cfg_node *node = &x->f->cfg.nodes.items[id];
	const event_vec *ev = &x->f->events.items[id];
	for (size_t k = 0; k < ev->len; k++) {
		const char *name;
		size_t len = ev->items[k].api ? 0 : ts_call_name(ev->items[k].call, x->f->src, &name);
		if (len && api_noreturn(name, len)) {
			free(in.depth); /* panic(): the path ends here, it leaves nothing held */
			return;
		}
	}
	pstate_vec v = VEC_INIT;
	vec_push(&v, in);
	for (size_t k = 0; k < ev->len; k++) {
		const struct event *e = &ev->items[k];
		if (e->sleeps && x->irq_key >= 0)
			for (size_t i = 0; i < v.len; i++)
				irq_step(x, &v.items[i], false, NULL); /* schedule() enables irqs */
		if (e->drops)
			callee_drops(x, e, &v);
		else if (e->may_drop && x->bind != UINT32_MAX && ts_node_eq(e->call, x->bind_call))
			callee_may_drop(x, e, &v);
		if (e->returns) { /* a macro that returns: the function's exit, with what is held */
			for (size_t i = 0; i < v.len; i++) {
				exits(x, &v.items[i]);
				for (size_t kk = 0; kk < x->nk; kk++)
					x->out->ret_value[kk] |= v.items[i].depth[kk] ? PATH_HELD : PATH_FREE;
				free(v.items[i].depth);
			}
			vec_release(&v);
			return;
		}
		if (!e->api || e->api->op == API_NONE ||
		    (node->kind == CFG_COND && e->api->op == API_TRYLOCK && e->polarity >= 0))
			continue;
		event_step(x, e, x->out->ev_first[id] + (uint32_t)k, false, &v);
	}
	for (size_t i = 0; i < v.len; i++) {
		struct pstate *s = &v.items[i];
		node_writes(x, id, s);
		if (id == CFG_EXIT_ID)
			exits(x, s);
		if (node->kind == CFG_RETURN)
			returned(x, nf, s);
		for (size_t e = 0; e < node->succ.len; e++) {
			struct pstate c = state_copy(x, s);
			follow(x, id, &node->succ.items[e], &c);
		}
		free(s->depth);
	}
	vec_release(&v);
}

static void result_alloc(const struct fn *f, struct path_result *out)
{
	size_t n = f->cfg.nodes.len, total = 0;
	memset(out, 0, sizeof *out);
	out->ev_first = xcalloc(n + 1, sizeof *out->ev_first);
	for (size_t i = 0; i < n; i++) {
		out->ev_first[i] = (uint32_t)total;
		total += f->events.items[i].len;
	}
	out->nslots = 2 * total + 1;
	out->ev = xcalloc(out->nslots, 1);
	out->exit = xcalloc(f->keys.len + 1, 1);
	out->ret_null = xcalloc(f->keys.len + 1, 1);
	out->ret_value = xcalloc(f->keys.len + 1, 1);
	out->param_split = xcalloc(f->keys.len + 1, 1);
}

/* One replay of F into OUT (result_alloc()), READING's test read as POLARITY says. */
static void explore_once(const struct fn *f, struct path_result *out, const struct reading *reading, int polarity)
{
	size_t n = f->cfg.nodes.len;
	struct explorer x;
	memset(&x, 0, sizeof x);
	x.f = f;
	x.out = out;
	x.nk = f->keys.len;
	x.polarity = polarity;
	x.bind = reading ? reading->test : UINT32_MAX;
	if (reading)
		x.bind_call = reading->call;
	x.at = xcalloc(n, sizeof *x.at);
	x.counts = xcalloc(x.nk + 1, sizeof *x.counts);
	x.irq_key = -1;
	for (size_t k = 0; k < x.nk; k++) {
		x.counts[k] = flow_key_counts(f->keys.items[k]);
		if (strcmp(f->keys.items[k], "irq") == 0)
			x.irq_key = (int)k;
	}
	x.held_true = xcalloc(4 * (x.nk + 1), sizeof *x.held_true);
	x.held_false = x.held_true + x.nk + 1;
	x.free_true = x.held_false + x.nk + 1;
	x.free_false = x.free_true + x.nk + 1;
	memset(x.held_true, 0xff, 4 * (x.nk + 1) * sizeof *x.held_true);
	path_facts_find(&x.pf, f);
	struct pstate s0 = {x.pf.init_known, x.pf.init_val, 0, 0, xcalloc(x.nk + 1, 1)};
	join(&x, CFG_ENTRY_ID, &s0);
	while (x.work.len && !x.failed) {
		uint32_t idx = x.work.items[--x.work.len];
		uint32_t id = x.work.items[--x.work.len];
		if (++x.steps > MAX_STEPS)
			x.failed = true;
		else
			visit(&x, id, state_copy(&x, &x.at[id].items[idx]));
	}
	out->complete = !x.failed;
	for (size_t k = 0; out->complete && k < x.nk; k++) {
		uint64_t split = (x.held_true[k] & x.free_false[k]) | (x.held_false[k] & x.free_true[k]);
		out->param_split[k] = out->exit[k] == (PATH_HELD | PATH_FREE) &&
				      (split & path_release_guards(&x.pf, f, (uint32_t)k)) != 0;
	}
	free(x.held_true);
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < x.at[i].len; k++)
			free(x.at[i].items[k].depth);
		vec_release(&x.at[i]);
	}
	free(x.at);
	free(x.counts);
	vec_release(&x.work);
	path_facts_release(&x.pf, n);
}

struct ident_find {
	const char *src, *name;
	size_t len;
	bool found;
};

static bool ident_visit(TSNode n, void *ctx)
{
	struct ident_find *w = ctx;
	if (w->found)
		return false;
	uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
	if (ts_type_is(n, "identifier") && b - a == w->len && memcmp(w->src + a, w->name, w->len) == 0)
		w->found = true;
	return true;
}

/* The variable the value of CALL is stored in (`rck = check(...)`, `int rck = ...`), or a null node. */
static TSNode result_var(TSNode call)
{
	TSNode p = ts_node_parent(call), none = {0};
	while (ts_type_is(p, "parenthesized_expression") || ts_type_is(p, "cast_expression"))
		p = ts_node_parent(p);
	TSNode v = ts_type_is(p, "assignment_expression") ? ts_field(p, "left")
		 : ts_type_is(p, "init_declarator") ? ts_field(p, "declarator") : none;
	return !ts_node_is_null(v) && ts_type_is(v, "identifier") ? v : none;
}

/*
 * The readings of F's calls that release their caller's lock on some of
 * their paths (event.may_drop): a call that is itself a condition, or each
 * condition that reads the variable its value is stored in.
 */
static size_t readings_of(const struct fn *f, struct reading *out)
{
	size_t n = 0;
	for (uint32_t id = 0; id < f->events.len; id++)
		for (size_t k = 0; k < f->events.items[id].len; k++) {
			const struct event *e = &f->events.items[id].items[k];
			if (!e->may_drop)
				continue;
			if (f->cfg.nodes.items[id].kind == CFG_COND) {
				if (n < MAX_READINGS)
					out[n++] = (struct reading){e->call, id};
				continue;
			}
			TSNode v = result_var(e->call);
			if (ts_node_is_null(v))
				continue;
			for (uint32_t c = 0; c < f->cfg.nodes.len && n < MAX_READINGS; c++) {
				const struct cfg_node *node = &f->cfg.nodes.items[c];
				if (node->kind != CFG_COND || c == id || ts_node_is_null(node->ast))
					continue;
				struct ident_find w = {f->src, f->src + ts_node_start_byte(v),
						       ts_node_end_byte(v) - ts_node_start_byte(v), false};
				ts_walk(node->ast, ident_visit, &w);
				if (w.found)
					out[n++] = (struct reading){e->call, c};
			}
		}
	return n;
}

/* Keeps in OUT what O2 sees too. */
static void result_meet(const struct fn *f, struct path_result *out, const struct path_result *o2)
{
	out->complete = out->complete && o2->complete;
	out->irq_on = out->irq_on && o2->irq_on;
	for (size_t i = 0; i < out->nslots; i++)
		out->ev[i] &= o2->ev[i];
	for (size_t k = 0; k <= f->keys.len; k++) {
		out->exit[k] &= o2->exit[k];
		out->ret_null[k] &= o2->ret_null[k];
		out->ret_value[k] &= o2->ret_value[k];
		out->param_split[k] |= o2->param_split[k];
	}
}

/*
 * A function that tests the result of a call releasing its lock on some
 * paths is replayed once per reading: one test of that result tells which
 * way the call went, true where it released or the other way round. What
 * it reports must happen on every reading, for the analysis does not know
 * which one the callee's values give (2.4 write_some_buffers(),
 * __check_for_io_and_kill() and its three tests of one result).
 */
void paths_explore(const struct fn *f, struct path_result *out)
{
	struct reading r[MAX_READINGS];
	size_t n = readings_of(f, r);
	result_alloc(f, out);
	explore_once(f, out, n ? &r[0] : NULL, n ? 1 : -1);
	for (size_t i = 1; i < 2 * n; i++) { /* reading i / 2, true where it released when i is even */
		struct path_result o2;
		result_alloc(f, &o2);
		explore_once(f, &o2, &r[i / 2], (int)(1 - i % 2));
		result_meet(f, out, &o2);
		paths_release(&o2);
	}
}

void paths_release(struct path_result *r)
{
	free(r->ev);
	free(r->ev_first);
	free(r->exit);
	free(r->ret_null);
	free(r->ret_value);
	free(r->param_split);
	memset(r, 0, sizeof *r);
}

unsigned paths_at_call(const struct fn *f, const struct path_result *r, TSNode call, int32_t key)
{
	uint32_t id = cfg_node_at(&f->cfg, ts_node_start_byte(call));
	if (id == UINT32_MAX)
		return PATH_HELD | PATH_FREE;
	const event_vec *ev = &f->events.items[id];
	for (size_t k = 0; k < ev->len; k++) {
		const struct event *e = &ev->items[k];
		if (!ts_node_eq(e->call, call) || !e->api)
			continue;
		uint32_t slot = (r->ev_first[id] + (uint32_t)k) * 2, nkeys = 0;
		for (unsigned b = 1; b <= KEY_PREEMPT; b <<= 1)
			nkeys += (e->api->keys & b) != 0;
		bool take = e->api->op == API_ACQUIRE || e->api->op == API_TRYLOCK;
		for (uint32_t s = 0; s < 2; s++) {
			int32_t id2 = e->api->op == API_RELEASE ? e->rel[s]
				    : take && s < nkeys ? (int32_t)f->acqs.items[e->acq + s].key_id : -1;
			if (id2 == key)
				return r->ev[slot + s] ? r->ev[slot + s] : PATH_NEVER;
		}
	}
	return PATH_HELD | PATH_FREE;
}
