/* P007: an acquisition not released on every path. */
#include "rules/ctx.h"

#include <ctype.h>
#include <string.h>

/* Is there already a P007 at CALL (one report per call)? */
static bool reported_at(const struct ctx *c, TSNode call)
{
	size_t at = ts_node_start_byte(call);
	/* a P007 at CALL can only come from its own function: look at that one's findings */
	for (size_t i = c->fn_first_finding; i < c->out->findings.len; i++) {
		const struct finding *x = &c->out->findings.items[i];
		if (x->rule == RULE_P007 && x->pos.offset == at && strcmp(x->file, c->src->path) == 0)
			return true;
	}
	return false;
}

/* F's feasible paths (paths.c), replayed once the flow finds something to report. */
struct feasible {
	struct path_result r;
	bool run;
};

static const struct path_result *feasible_paths(struct feasible *p, const struct fn *f)
{
	if (!p->run)
		paths_explore(f, &p->r);
	p->run = true;
	return p->r.complete ? &p->r : NULL;
}

/* Does imbalance IM happen on a feasible path, or only on paths no run can take? */
static bool imbalance_feasible(struct feasible *p, const struct fn *f, const struct imbalance *im)
{
	const struct path_result *r = feasible_paths(p, f);
	if (!r)
		return true;
	unsigned seen = paths_at_call(f, r, im->call, im->key_id);
	return im->kind == IMB_REACQUIRE ? (seen & PATH_HELD) != 0 : (seen & PATH_FREE) != 0;
}

/* Releases and re-acquisitions that do not pair up on every path (flow_imbalances()). */
static void check_pairs(struct ctx *c, const struct fn *f, struct feasible *p)
{
	imbalance_vec v = VEC_INIT;
	flow_imbalances(f, &v);
	for (size_t i = 0; i < v.len; i++) {
		const struct imbalance *im = &v.items[i];
		if (reported_at(c, im->call) || !imbalance_feasible(p, f, im))
			continue;
		const char *key = f->keys.items[im->key_id];
		unsigned line = line_of(c, im->call);
		const struct acq *a = im->acq >= 0 ? &f->acqs.items[im->acq] : NULL;
		char *ev;
		if (im->kind == IMB_RELEASE_PARTIAL)
			ev = xasprintf("%s(%s) at line %u releases what is held on some paths only: "
				       "%s(%s) at line %u is not taken on every path to it",
				       im->api->name, key, line, a->api, a->key, a->line);
		else if (im->kind == IMB_RELEASE_UNHELD)
			ev = xasprintf("%s(%s) at line %u releases %s, which this function does not "
				       "hold on any path to it (released twice?)",
				       im->api->name, key, line, key);
		else
			ev = xasprintf("%s(%s) at line %u is reached again while it may still be held "
				       "from an earlier pass (taken in a loop, released after it?)",
				       im->api->name, key, line);
		add_finding(c, RULE_P007, im->call, f, SEV_WARNING, CONF_MEDIUM, FIX_NONE,
			    xasprintf("%s() not balanced on every path", im->api->name), ev);
	}
	vec_release(&v);
}

/*
 * Does F set the interrupt state it is given (__global_restore_flags(flags):
 * `case 2: __cli(); break; case 3: __sti(); break;`)? Leaving interrupts off
 * on some paths is then its job, not a leak.
 */
static bool sets_irq_state(const struct fn *f)
{
	size_t n = strlen(f->name), k = strlen("restore_flags");
	return n >= k && strcmp(f->name + n - k, "restore_flags") == 0;
}

static void check_exits(struct ctx *c, const struct fn *f, struct feasible *p);

/*
 * Does F hand KEY to its caller with the object it returns (isdn
 * isdn_net_get_locked_lp(), ipc_lock())? F returns a pointer; every
 * return of anything but null holds KEY, and every return of null (a null
 * constant, or a variable the path set to one) released it.
 */
static bool hands_off_with_value(const struct fn *f, const struct path_result *r, uint32_t key)
{
	TSNode d = ts_field(f->def, "declarator");
	return r && ts_type_is(d, "pointer_declarator") && r->ret_value[key] == PATH_HELD &&
	       r->ret_null[key] == PATH_FREE && r->exit[key] == (PATH_HELD | PATH_FREE);
}

/* Does comment N name a call that releases one of KEYS (`restore_flags(flags);` inside a comment)? */
static bool comment_releases(TSNode n, const char *src, unsigned keys)
{
	uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
	for (uint32_t i = a; i < b; i++) {
		bool start = (isalpha((unsigned char)src[i]) || src[i] == '_') &&
			     (i == a || !(isalnum((unsigned char)src[i - 1]) || src[i - 1] == '_'));
		if (!start)
			continue;
		uint32_t e = i;
		while (e < b && (isalnum((unsigned char)src[e]) || src[e] == '_'))
			e++;
		uint32_t k = e;
		while (k < b && (src[k] == ' ' || src[k] == '\t'))
			k++;
		const struct api *api = k < b && src[k] == '(' ? api_lookup(src + i, e - i) : NULL;
		if (api && api->op == API_RELEASE && (api->keys & keys))
			return true;
		i = e;
	}
	return false;
}

/* Is there a comment naming a release of KEYS before statement S in its block? */
static bool release_commented_before(const struct fn *f, TSNode s, unsigned keys)
{
	TSNode block = ts_node_parent(s);
	for (uint32_t i = 0; i < ts_node_child_count(block); i++) {
		TSNode n = ts_node_child(block, i);
		if (ts_node_start_byte(n) >= ts_node_start_byte(s))
			break;
		if (ts_type_is(n, "comment") && comment_releases(n, f->src, keys))
			return true;
	}
	return false;
}

/* Is KEY held at OFFSET of F on some path? */
static bool held_at(const struct fn *f, uint32_t offset, const char *key)
{
	name_vec v = VEC_INIT;
	flow_held_keys(f, offset, true, &v);
	bool held = false;
	for (size_t k = 0; k < v.len && !held; k++)
		held = strcmp(v.items[k], key) == 0;
	vec_release(&v);
	return held;
}

/*
 * Does every return that may leave A held follow a comment that holds
 * A's release in the same block, and the end of the body leave it
 * released? The author took the release out there on purpose (2.4
 * NCR5380_abort(): a commented-out restore_flags(flags) before the return
 * of a failed abort, which the midlayer calls with interrupts off and
 * keeps that way; 2.6.9 still comments out its local_irq_restore()).
 */
static bool release_commented_out(const struct fn *f, const struct acq *a)
{
	const struct api *api = api_lookup(a->api, strlen(a->api));
	if (!api || ts_node_is_null(f->body) || held_at(f, ts_node_end_byte(f->body) - 1, a->key))
		return false;
	bool any = false;
	for (size_t n = 0; n < f->cfg.nodes.len; n++) {
		const struct cfg_node *node = &f->cfg.nodes.items[n];
		if (node->kind != CFG_RETURN || !f->reached[n] || !held_at(f, ts_node_start_byte(node->ast), a->key))
			continue;
		if (!release_commented_before(f, node->ast, api->keys))
			return false;
		any = true;
	}
	return any;
}

static void check_balance(struct ctx *c, const struct fn *f, TSNode site, const char *kind)
{
	(void)site;
	(void)kind;
	if (f->wraps)
		return; /* a lock wrapper: leaving its lock held, or dropping the caller's, is its job */
	struct feasible p = {.run = false};
	check_pairs(c, f, &p);
	check_exits(c, f, &p);
	if (p.run)
		paths_release(&p.r);
}

/* Acquisitions still held at the exit on some paths only, or a count left up at every exit. */
static void check_exits(struct ctx *c, const struct fn *f, struct feasible *p)
{
	bool count_reported = false; /* one report of a count left up at every exit */
	for (size_t i = 0; i < f->acqs.len; i++) {
		const struct acq *a = &f->acqs.items[i];
		bool m, y;
		if (!flow_exit_state(f, (uint32_t)i, &m, &y))
			return;
		if (reported_at(c, a->call) || (strcmp(a->key, "irq") == 0 && sets_irq_state(f)))
			continue;
		/*
		 * MSR_EE cleared by hand (analysis/msr.c) comes back with the
		 * exception's return, which restores the saved MSR: ppc's gdb
		 * stub leaves for a single step with it still clear
		 */
		if (strcmp(a->api, "set_msr") == 0 || strcmp(a->api, "set_msrd") == 0 || strncmp(a->api, "mtmsr", 5) == 0 ||
		    strcmp(a->api, "__mtmsrd") == 0)
			continue;
		/*
		 * Released everywhere, or held on every exit by design (a lock
		 * wrapper); but a count still up at every exit of a function
		 * that releases it was taken once more than it is given back
		 * (two get_cpu(), one put_cpu()).
		 */
		bool count_left = m && flow_key_counts(a->key) && !count_reported;
		if (!count_left && (m || !y))
			continue;
		if (i > 0 && ts_node_eq(f->acqs.items[i - 1].call, a->call))
			continue; /* one report per call (spin_lock_irqsave: lock + irq) */
		/* only when this function also releases it, and not a caller's lock it retakes */
		if (!fn_releases(f, a->key) || fn_drops_caller_lock(f, a->key))
			continue;
		/* held at some feasible exit and free at another; a count left up is held at all */
		const struct path_result *r = feasible_paths(p, f);
		unsigned at_exit = r ? r->exit[a->key_id] : PATH_HELD | PATH_FREE;
		if (!(at_exit & PATH_HELD) || (!count_left && !(at_exit & PATH_FREE)))
			continue;
		if (!count_left && hands_off_with_value(f, r, a->key_id))
			continue; /* the lock goes to the caller with the object returned */
		if (!count_left && r && r->param_split[a->key_id])
			continue; /* kept for the caller when its argument asks: the caller's to release */
		if (r && !r->irq_on && strcmp(a->key, "irq") == 0 && !strstr(a->api, "save"))
			continue; /* never turns interrupts back on: left off on purpose, as a lock wrapper does */
		if (!count_left && release_commented_out(f, a))
			continue; /* its release commented out where it returns holding it: on purpose */
		if (count_left) {
			count_reported = true;
			add_finding(c, RULE_P007, a->call, f, SEV_WARNING, CONF_MEDIUM, FIX_NONE,
				    xasprintf("%s() not balanced on every path", a->api),
				    xasprintf("%s(%s) at line %u is still held at every return, though the "
					      "function releases %s elsewhere: it is taken more often than "
					      "it is given back", a->api, a->key, a->line, a->key));
			continue;
		}
		/* the return that leaks it */
		unsigned leak_line = 0;
		for (size_t n = 0; n < f->cfg.nodes.len && !leak_line; n++) {
			const struct cfg_node *node = &f->cfg.nodes.items[n];
			if (node->kind != CFG_RETURN || !f->reached[n])
				continue;
			struct point_state ps = flow_state_at(f, ts_node_end_byte(node->ast) - 1);
			if (ps.must_acq == (int)i || ps.may_acq == (int)i)
				leak_line = line_of(c, node->ast);
		}
		char *ev = leak_line ? xasprintf("%s(%s) at line %u is still held at the return at line %u, "
						 "but released on other paths", a->api, a->key, a->line, leak_line)
				     : xasprintf("%s(%s) at line %u is still held at the end of the function on "
						 "some path, but released on others", a->api, a->key, a->line);
		add_finding(c, RULE_P007, a->call, f, SEV_WARNING, CONF_MEDIUM, FIX_NONE,
			    xasprintf("%s() not balanced on every path", a->api), ev);
	}
}

/* Every key P007 pairs is taken or dropped by a locking call of the file (or a wrapper of one). */
static bool balance_wants(const char *text, size_t len)
{
	return api_text_words(text, len, API_WORD_LOCK) != 0;
}

const struct rule_hooks balance_hooks = {.check = check_balance, .wants = balance_wants};
