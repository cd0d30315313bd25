/*
 * Hand-made locks a get/put region must cover (region.c): a lock-like
 * acquisition the kernel's lock calls do not make (a spin on
 * test_and_set_bit(), lock_set_bit(), xchg() or cmpxchg(); a *_lock() of
 * the file that spins or is paired with its *_unlock(); alpha's
 * pointer_lock() on a pointer word) taken inside the region and still held
 * at its end would let the holder be preempted while every other CPU spins
 * on it with preemption off: a hang. The region is extended to the
 * release, or refused.
 */
#include "rules/cpu_shared.h"

#include <stdlib.h>
#include <string.h>

/* One hand-made acquisition: the call, the word it spins on, what it is. */
struct hand_lock {
	TSNode call;
	char *key;      /* the lock word's text, blanks and a leading `&` dropped */
	bool addr;      /* the argument was `&word`: a store to `word` releases it */
	char *unlock;   /* the *_unlock() that pairs with a *_lock(), or NULL */
	char *how;      /* "pointer_lock()", "a spin on test_and_set_bit()" */
};

struct lock_scan {
	const struct ctx *c;
	struct hand_lock found; /* the first acquisition found (call null: none) */
	const struct hand_lock *want; /* release_visit(): the acquisition released */
	TSNode release;
};

/* The text of N without blanks (and a leading `&`, noted in *ADDR); owned. */
static char *word_text(const struct ctx *c, TSNode n, bool *addr)
{
	char *s = node_text(c, n), *o = s;
	for (const char *p = s; *p; p++)
		if (*p != ' ' && *p != '\t' && *p != '\n')
			*o++ = *p;
	*o = '\0';
	*addr = s[0] == '&';
	if (*addr)
		memmove(s, s + 1, strlen(s));
	return s;
}

static TSNode call_arg(TSNode call, uint32_t i)
{
	TSNode args = ts_field(call, "arguments");
	return !ts_node_is_null(args) && ts_node_named_child_count(args) > i ? ts_node_named_child(args, i)
									 : ts_null();
}

/* Is CALL the condition, or in the condition, of a loop (a spin)? */
static bool in_loop_condition(TSNode call)
{
	for (TSNode n = call, p = ts_parent(n); !ts_node_is_null(p); n = p, p = ts_parent(p)) {
		if (ts_type_is(p, "while_statement") || ts_type_is(p, "do_statement") || ts_type_is(p, "for_statement"))
			return ts_node_eq(n, ts_field(p, "condition"));
		if (ts_type_is(p, "expression_statement") || ts_type_is(p, "compound_statement"))
			return false;
	}
	return false;
}

static bool loop_visit(TSNode n, void *ctx)
{
	bool *found = ctx;
	if (ts_type_is(n, "while_statement") || ts_type_is(n, "do_statement") || ts_type_is(n, "for_statement"))
		*found = true;
	return !*found;
}

/*
 * A *_lock() call the data-flow does not know: of the file and spinning (a
 * loop in its body), or paired with a *_unlock() of the same name anywhere
 * in the file's text. Its unlock name (owned), or NULL.
 */
static char *home_made_lock(const struct ctx *c, const char *name, size_t len)
{
	if (len < 6 || memcmp(name + len - 5, "_lock", 5) != 0 || api_lookup(name, len))
		return NULL;
	char *unlock = xasprintf("%.*s_unlock", (int)(len - 5), name);
	int idx = analysis_fn_index(c->fa, name, len);
	const struct fn *f = idx >= 0 ? &c->fa->fns.items[idx] : NULL;
	bool spins = false;
	if (f && !f->wraps)
		ts_walk(f->body, loop_visit, &spins);
	if (!spins && !text_has_word(c->text, c->src->len, unlock)) {
		free(unlock);
		return NULL;
	}
	return unlock;
}

/* Fills LS->found from CALL when it acquires a hand-made lock. */
static void acquisition_at(struct lock_scan *ls, TSNode call)
{
	const struct ctx *c = ls->c;
	const char *name;
	size_t len = ts_call_name(call, c->text, &name);
	if (!len)
		return;
	uint32_t argi = 0;
	char *unlock = NULL;
	bool bit = name_eq(name, len, "test_and_set_bit") || name_eq(name, len, "lock_set_bit");
	if (bit || name_eq(name, len, "xchg") || name_eq(name, len, "cmpxchg")) {
		if (!in_loop_condition(call))
			return;
		argi = bit ? 1 : 0;
	} else if (!(unlock = home_made_lock(c, name, len))) {
		return;
	}
	TSNode arg = call_arg(call, argi);
	if (ts_node_is_null(arg)) {
		free(unlock);
		return;
	}
	ls->found.call = call;
	ls->found.key = word_text(c, arg, &ls->found.addr);
	ls->found.unlock = unlock;
	ls->found.how = unlock ? xasprintf("%.*s()", (int)len, name) : xasprintf("a spin on %.*s()", (int)len, name);
}

static bool acquisition_visit(TSNode n, void *ctx)
{
	struct lock_scan *ls = ctx;
	if (!ts_node_is_null(ls->found.call))
		return false;
	if (ts_type_is(n, "call_expression"))
		acquisition_at(ls, n);
	return ts_node_is_null(ls->found.call);
}

/* Is N (an argument) the word of ACQ? */
static bool same_word(const struct ctx *c, TSNode n, const struct hand_lock *acq)
{
	bool addr;
	char *k = word_text(c, n, &addr);
	bool same = addr == acq->addr && strcmp(k, acq->key) == 0;
	free(k);
	return same;
}

/* Is N a store of zero (`0`, `NULL`, a cast of them) to ACQ's word? */
static bool zero_store(const struct ctx *c, TSNode n, const struct hand_lock *acq)
{
	if (!ts_type_is(n, "assignment_expression") || !ts_text_is(ts_field(n, "operator"), c->text, "="))
		return false;
	TSNode r = ts_field(n, "right");
	while (ts_type_is(r, "cast_expression") || ts_type_is(r, "parenthesized_expression"))
		r = ts_type_is(r, "cast_expression") ? ts_field(r, "value") : ts_node_named_child(r, 0);
	if (!ts_text_is(r, c->text, "0") && !ts_text_is(r, c->text, "NULL"))
		return false;
	bool addr;
	char *l = word_text(c, ts_field(n, "left"), &addr);
	bool same = acq->addr ? strcmp(l, acq->key) == 0 : l[0] == '*' && strcmp(l + 1, acq->key) == 0;
	free(l);
	return same;
}

/* Does N release ACQ: its *_unlock(), clear_bit() or xchg() to zero, or a store of zero? */
static bool is_release(const struct ctx *c, TSNode n, const struct hand_lock *acq)
{
	if (zero_store(c, n, acq))
		return true;
	if (!ts_type_is(n, "call_expression"))
		return false;
	const char *name;
	size_t len = ts_call_name(n, c->text, &name);
	if (acq->unlock)
		return name_eq(name, len, acq->unlock) && same_word(c, call_arg(n, 0), acq);
	if (name_eq(name, len, "clear_bit") || name_eq(name, len, "lock_clear_bit"))
		return !ts_node_is_null(call_arg(n, 1)) && same_word(c, call_arg(n, 1), acq);
	if (name_eq(name, len, "xchg"))
		return !ts_node_is_null(call_arg(n, 0)) && same_word(c, call_arg(n, 0), acq) &&
		       ts_text_is(call_arg(n, 1), c->text, "0");
	return false;
}

/* The first release of LS->want after it anywhere in the function, for the reason. */
static bool release_visit(TSNode n, void *ctx)
{
	struct lock_scan *ls = ctx;
	if (!ts_node_is_null(ls->release))
		return false;
	if (ts_node_end_byte(n) <= ts_node_start_byte(ls->want->call))
		return false; /* before the acquisition */
	if (ts_node_start_byte(n) < ts_node_end_byte(ls->want->call))
		return true; /* holds it: the release may follow it inside */
	if (is_release(ls->c, n, ls->want))
		ls->release = n;
	return ts_node_is_null(ls->release);
}

/*
 * The statement after FROM in its block that releases ACQ on every path
 * through the block (an expression statement of its own), or a null node.
 */
static TSNode block_release(const struct ctx *c, TSNode from, const struct hand_lock *acq)
{
	for (TSNode s = next_stmt(from); !ts_node_is_null(s); s = next_stmt(s)) {
		if (!ts_type_is(s, "expression_statement") || ts_node_named_child_count(s) == 0)
			continue;
		TSNode e = ts_node_named_child(s, 0);
		while (ts_type_is(e, "parenthesized_expression") || ts_type_is(e, "cast_expression"))
			e = ts_type_is(e, "cast_expression") ? ts_field(e, "value") : ts_node_named_child(e, 0);
		if (is_release(c, e, acq))
			return s;
	}
	return ts_null();
}

static void hand_lock_release(struct hand_lock *h)
{
	free(h->key);
	free(h->unlock);
	free(h->how);
	memset(h, 0, sizeof *h);
}

/* Why LS->found, taken inside the region, cannot be covered (owned). */
static char *uncovered(const struct ctx *c, const struct fn *f, struct lock_scan *ls)
{
	ls->want = &ls->found;
	ls->release = ts_null();
	ts_walk(f->body, release_visit, ls);
	const struct hand_lock *h = &ls->found;
	if (ts_node_is_null(ls->release))
		return xasprintf("%s at line %u takes a hand-made lock on %s inside the region, and the function "
				 "does not release it; the holder could be preempted while other CPUs spin on it "
				 "with preemption off: cover it by hand", h->how, line_of(c, h->call), h->key);
	return xasprintf("%s at line %u takes a hand-made lock on %s inside the region, released at line %u "
			 "on some paths only or outside the region's block; the holder could be preempted while "
			 "other CPUs spin on it with preemption off: cover it by hand", h->how,
			 line_of(c, h->call), h->key, line_of(c, ls->release));
}

/*
 * One pass: the first hand-made acquisition in [FIRST, *LAST] whose
 * release lies after *LAST moves *LAST to the statement of the block that
 * releases it on every path. 1 moved, 0 nothing to move, -1 refused (*WHY
 * set).
 */
static int cover_once(const struct ctx *c, TSNode first, TSNode *last, char **why)
{
	const struct fn *f = analysis_fn_at(c->fa, ts_node_start_byte(first));
	if (!f)
		return 0;
	for (TSNode s = first; !ts_node_is_null(s); s = next_stmt(s)) {
		struct lock_scan ls = {c, {ts_null(), NULL, false, NULL, NULL}, NULL, ts_null()};
		ts_walk(s, acquisition_visit, &ls);
		int moved = 0;
		if (!ts_node_is_null(ls.found.call)) {
			ls.want = &ls.found;
			ts_walk(s, release_visit, &ls); /* taken and given back inside S */
			TSNode rel = ts_node_is_null(ls.release) ? block_release(c, s, &ls.found) : s;
			if (ts_node_is_null(rel))
				*why = uncovered(c, f, &ls), moved = -1;
			else if (ts_node_start_byte(rel) > ts_node_start_byte(*last))
				*last = rel, moved = 1;
		}
		hand_lock_release(&ls.found);
		if (moved || ts_node_eq(s, *last))
			return moved;
	}
	return 0;
}

char *region_cover_locks(const struct ctx *c, TSNode first, TSNode *last)
{
	char *why = NULL;
	for (int round = 0; round < 8 && cover_once(c, first, last, &why) > 0; round++)
		;
	return why;
}
