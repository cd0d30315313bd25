#include "parse/ts.h"
#include "util/util.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

TSNode ts_null(void)
{
	TSNode n;
	memset(&n, 0, sizeof n);
	return n;
}

/* ---- parents ---- */

/* Trees with fewer top-level nodes than this use ts_node_parent() as it is. */
#define PARENT_INDEX_MIN 64

/* The index of one big tree's root children, per thread (one tree at a time is big). */
static _Thread_local struct {
	const TSTree *tree;
	const void *root_id;
	TSNode *kids;
	uint32_t n, cap;
} top;

/* Parents found while walking down the big tree, per thread: a walk up from a
 * node then costs one walk down, not one per step. Direct-mapped by node id;
 * GEN empties it when the big tree changes. Small, and on the heap only
 * while a big tree is indexed: 8192 slots or more raised diff's peak RSS
 * on the 2.4 tree from 176 to over 250 MB (measured). */
#define PARENT_CACHE_BITS 10
static _Thread_local struct parent_slot {
	const void *id;
	uint32_t gen;
	TSNode parent;
} *parent_cache;
static _Thread_local uint32_t parent_gen = 1;

static struct parent_slot *parent_slot(const void *id)
{
	uintptr_t h = (uintptr_t)id;
	h ^= h >> 17;
	h *= 0x9E3779B1u;
	return &parent_cache[(h >> 7) & ((1u << PARENT_CACHE_BITS) - 1)];
}

static void parent_remember(TSNode child, TSNode parent)
{
	if (!parent_cache)
		return;
	struct parent_slot *slot = parent_slot(child.id);
	slot->id = child.id;
	slot->gen = parent_gen;
	slot->parent = parent;
}

const TSLanguage *tree_sitter_c(void);

/*
 * The memo of recent parses. One text is parsed several times on its way
 * through the pipeline (the scan, the plan's checks, the re-analysis of
 * the planned text, the slicer, the validation), each time the same tree;
 * a tree is immutable once made, so each caller gets its own copy
 * (ts_tree_copy(): shared nodes, a reference count). Bounded by slots and
 * by the bytes of text the trees stand for (one text over the bound is
 * kept alone); texts are compared whole. A kept tree costs memory only
 * once its callers have deleted their copies.
 */
#define MEMO_SLOTS 32
#define MEMO_TEXT_BYTES ((size_t)4 << 20)
static struct memo_slot {
	char *text;
	size_t len;
	uint64_t hash;
	TSTree *tree;
	unsigned long used;
} memo[MEMO_SLOTS];
static size_t memo_bytes;
static unsigned long memo_clock;
static pthread_mutex_t memo_mu = PTHREAD_MUTEX_INITIALIZER;

/* A copy of the memo's tree of TEXT, or NULL. */
static TSTree *memo_find(const char *text, size_t len, uint64_t h)
{
	TSTree *tree = NULL;
	pthread_mutex_lock(&memo_mu);
	for (size_t i = 0; i < MEMO_SLOTS && !tree; i++)
		if (memo[i].tree && memo[i].len == len && memo[i].hash == h && memcmp(memo[i].text, text, len) == 0) {
			memo[i].used = ++memo_clock;
			tree = ts_tree_copy(memo[i].tree);
		}
	pthread_mutex_unlock(&memo_mu);
	return tree;
}

static void memo_drop(struct memo_slot *s)
{
	ts_tree_delete(s->tree);
	free(s->text);
	memo_bytes -= s->len;
	*s = (struct memo_slot){0};
}

/* Keeps a copy of TREE, TEXT's parse, evicting the least recently used. */
static void memo_keep(const char *text, size_t len, uint64_t h, const TSTree *tree)
{
	pthread_mutex_lock(&memo_mu);
	for (;;) {
		struct memo_slot *old = NULL, *free_slot = NULL;
		for (size_t i = 0; i < MEMO_SLOTS; i++) {
			if (!memo[i].tree)
				free_slot = free_slot ? free_slot : &memo[i];
			else if (!old || memo[i].used < old->used)
				old = &memo[i];
		}
		/* a text over the bound is kept alone: its next parse is the costliest */
		if (free_slot && (memo_bytes + len <= MEMO_TEXT_BYTES || memo_bytes == 0)) {
			*free_slot = (struct memo_slot){xstrndup(text, len), len, h, ts_tree_copy(tree), ++memo_clock};
			memo_bytes += len;
			break;
		}
		memo_drop(old);
	}
	pthread_mutex_unlock(&memo_mu);
}

TSTree *ts_parse_text(const char *text, size_t len, const size_t *cancel)
{
	uint64_t h = hash_bytes(text, len);
	TSTree *tree = memo_find(text, len, h);
	if (tree)
		return tree;
	TSParser *p = ts_parser_new();
	ts_parser_set_language(p, tree_sitter_c());
	if (cancel)
		ts_parser_set_cancellation_flag(p, cancel);
	tree = ts_parser_parse_string(p, NULL, text, (uint32_t)len);
	ts_parser_delete(p);
	if (tree)
		memo_keep(text, len, h, tree);
	return tree;
}

TSTree *ts_parse_c(const char *text, size_t len)
{
	return ts_parse_text(text, len, NULL);
}

void ts_parent_forget(const TSTree *tree)
{
	if (top.tree == tree) {
		free(top.kids);
		memset(&top, 0, sizeof top);
		free(parent_cache);
		parent_cache = NULL;
		parent_gen++;
	}
}

static bool index_root(TSNode root)
{
	if (top.tree == root.tree && top.root_id == root.id)
		return top.n > 0;
	/* small trees (a function re-parsed to verify a plan) keep the big one's index */
	uint32_t count = ts_node_child_count(root);
	if (count < PARENT_INDEX_MIN)
		return false;
	top.tree = root.tree;
	top.root_id = root.id;
	top.n = 0;
	parent_gen++;
	if (!parent_cache)
		parent_cache = xcalloc(1u << PARENT_CACHE_BITS, sizeof *parent_cache);
	if (count > top.cap) {
		top.kids = xrealloc(top.kids, (size_t)count * sizeof *top.kids);
		top.cap = count;
	}
	TSTreeCursor cur = ts_tree_cursor_new(root);
	if (ts_tree_cursor_goto_first_child(&cur))
		do
			top.kids[top.n++] = ts_tree_cursor_current_node(&cur);
		while (ts_tree_cursor_goto_next_sibling(&cur));
	ts_tree_cursor_delete(&cur);
	return top.n > 0;
}

/* The last root child starting at or before byte AT (children are in order). */
static uint32_t top_child_at(uint32_t at)
{
	uint32_t lo = 0, hi = top.n;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (ts_node_start_byte(top.kids[mid]) <= at)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Is node A (with N's range) an ancestor-or-self of N by range? */
static bool covers(TSNode a, uint32_t s, uint32_t e)
{
	return ts_node_start_byte(a) <= s && ts_node_end_byte(a) >= e;
}

/* The parent of N below TOP (an ancestor of N), walking down with a cursor. */
static TSNode parent_below(TSNode topnode, TSNode n)
{
	uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
	TSTreeCursor cur = ts_tree_cursor_new(topnode);
	TSNode parent = topnode, found = ts_null();
	/* a node with width starts inside the first child ending after its start: the
	 * library skips the children before it without making nodes of them */
	while (e > s ? ts_tree_cursor_goto_first_child_for_byte(&cur, s) >= 0
		     : ts_tree_cursor_goto_first_child(&cur)) {
		bool down = false;
		do {
			TSNode c = ts_tree_cursor_current_node(&cur);
			if (ts_node_eq(c, n)) {
				found = parent;
				break;
			}
			if (ts_node_start_byte(c) > s)
				break;
			if (covers(c, s, e) && ts_node_child_count(c) > 0) {
				/* a zero-width or equal-range sibling may still hold N: only descend
				 * when this child is not followed by one that also covers N */
				parent_remember(c, parent);
				parent = c;
				down = true;
				break;
			}
		} while (ts_tree_cursor_goto_next_sibling(&cur));
		if (!ts_node_is_null(found) || !down)
			break;
	}
	ts_tree_cursor_delete(&cur);
	return found;
}

TSNode ts_parent(TSNode n)
{
	if (ts_node_is_null(n))
		return ts_null();
	TSNode root = ts_tree_root_node(n.tree);
	if (ts_node_eq(n, root) || !index_root(root))
		return ts_node_parent(n);
	struct parent_slot *slot = parent_cache ? parent_slot(n.id) : NULL;
	if (slot && slot->id == n.id && slot->gen == parent_gen)
		return slot->parent;
	uint32_t s = ts_node_start_byte(n);
	uint32_t k = top_child_at(s);
	/* N may start where an earlier, zero-width or ending, child also starts */
	for (uint32_t j = k + 1; j-- > 0;) {
		TSNode t = top.kids[j];
		if (ts_node_eq(t, n))
			return root;
		if (ts_node_end_byte(t) < ts_node_end_byte(n) && ts_node_start_byte(t) < s)
			break;
		if (covers(t, s, ts_node_end_byte(n))) {
			TSNode p = parent_below(t, n);
			if (!ts_node_is_null(p)) {
				parent_remember(t, root);
				parent_remember(n, p);
				return p;
			}
		}
	}
	return ts_node_parent(n); /* not found by ranges (should not happen): the slow way */
}

bool ts_type_is(TSNode n, const char *type)
{
	return !ts_node_is_null(n) && strcmp(ts_node_type(n), type) == 0;
}

TSNode ts_field(TSNode n, const char *field)
{
	if (ts_node_is_null(n))
		return n;
	return ts_node_child_by_field_name(n, field, (uint32_t)strlen(field));
}

bool ts_text_is(TSNode n, const char *src, const char *text)
{
	if (ts_node_is_null(n))
		return false;
	uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
	size_t len = strlen(text);
	return e - s == len && memcmp(src + s, text, len) == 0;
}

size_t ts_call_name(TSNode call, const char *src, const char **out)
{
	TSNode f = ts_field(call, "function");
	if (!ts_type_is(f, "identifier"))
		return 0;
	*out = src + ts_node_start_byte(f);
	return ts_node_end_byte(f) - ts_node_start_byte(f);
}

bool ts_call_is(TSNode call, const char *src, const char *name)
{
	const char *callee;
	size_t len = ts_call_name(call, src, &callee);
	return len && len == strlen(name) && memcmp(callee, name, len) == 0;
}

TSNode ts_strip_parens(TSNode n, const char *src)
{
	for (;;) {
		if (ts_type_is(n, "parenthesized_expression") && ts_node_named_child_count(n) == 1) {
			n = ts_node_named_child(n, 0);
			continue;
		}
		if (ts_type_is(n, "call_expression")) {
			const char *name;
			size_t len = ts_call_name(n, src, &name);
			TSNode args = ts_field(n, "arguments");
			if (((len == 6 && memcmp(name, "likely", 6) == 0) ||
			     (len == 8 && memcmp(name, "unlikely", 8) == 0)) &&
			    ts_node_named_child_count(args) == 1) {
				n = ts_node_named_child(args, 0);
				continue;
			}
		}
		return n;
	}
}

void ts_walk(TSNode root, bool (*visit)(TSNode n, void *ctx), void *ctx)
{
	TSTreeCursor c = ts_tree_cursor_new(root);
	bool descend = visit(root, ctx);
	for (;;) {
		if (descend && ts_tree_cursor_goto_first_child(&c)) {
			descend = visit(ts_tree_cursor_current_node(&c), ctx);
			continue;
		}
		for (;;) {
			if (ts_tree_cursor_goto_next_sibling(&c))
				break;
			if (!ts_tree_cursor_goto_parent(&c)) {
				ts_tree_cursor_delete(&c);
				return;
			}
		}
		descend = visit(ts_tree_cursor_current_node(&c), ctx);
	}
}

void ts_seek_init(struct ts_seek *k, TSNode root)
{
	k->c = ts_tree_cursor_new(root);
}

void ts_seek_release(struct ts_seek *k)
{
	ts_tree_cursor_delete(&k->c);
}

static bool spans(TSNode n, uint32_t start, uint32_t end)
{
	return ts_node_start_byte(n) <= start && end <= ts_node_end_byte(n);
}

TSNode ts_seek_range(struct ts_seek *k, uint32_t start, uint32_t end)
{
	/* forward through siblings, up when a level is done, until a node spans the range */
	for (;;) {
		TSNode n = ts_tree_cursor_current_node(&k->c);
		if (spans(n, start, end))
			break;
		if (ts_node_end_byte(n) <= start && ts_tree_cursor_goto_next_sibling(&k->c))
			continue;
		if (!ts_tree_cursor_goto_parent(&k->c))
			return ts_null(); /* the root does not span it */
	}
	/* down to the deepest (the child found may end right at START: `!` before `f()`) */
	while (ts_tree_cursor_goto_first_child_for_byte(&k->c, start) >= 0) {
		TSNode c = ts_tree_cursor_current_node(&k->c);
		while (ts_node_end_byte(c) <= start && ts_tree_cursor_goto_next_sibling(&k->c))
			c = ts_tree_cursor_current_node(&k->c);
		if (!spans(c, start, end)) {
			ts_tree_cursor_goto_parent(&k->c);
			break;
		}
	}
	return ts_tree_cursor_current_node(&k->c);
}

unsigned ts_count_errors(TSNode n)
{
	if (ts_node_is_null(n) || !ts_node_has_error(n))
		return 0;
	unsigned c = ts_node_is_missing(n) || ts_type_is(n, "ERROR");
	uint32_t k = ts_node_child_count(n);
	for (uint32_t i = 0; i < k; i++)
		c += ts_count_errors(ts_node_child(n, i));
	return c;
}

bool ts_in_if0_arm(const char *text, TSNode n)
{
	TSNode child = n;
	for (TSNode p = ts_parent(n); !ts_node_is_null(p); child = p, p = ts_parent(p)) {
		if (!ts_type_is(p, "preproc_if") && !ts_type_is(p, "preproc_elif"))
			continue;
		TSNode cond = ts_field(p, "condition");
		TSNode alt = ts_field(p, "alternative");
		if (ts_node_eq(child, alt) || ts_node_eq(child, cond))
			continue;
		if (ts_text_is(cond, text, "0"))
			return true;
	}
	return false;
}

/* Does COND (the condition of an #if, in TEXT) test CONFIG_SMP: 1 as is, -1 negated, 0 not? */
static int smp_test(const char *text, TSNode cond)
{
	cond = ts_strip_parens(cond, text);
	int sign = 1;
	if (ts_type_is(cond, "unary_expression") && ts_text_is(ts_field(cond, "operator"), text, "!")) {
		sign = -1;
		cond = ts_strip_parens(ts_field(cond, "argument"), text);
	}
	if (ts_type_is(cond, "preproc_defined") || ts_type_is(cond, "identifier")) {
		TSNode id = ts_type_is(cond, "identifier") ? cond : ts_node_named_child(cond, 0);
		return ts_text_is(id, text, "CONFIG_SMP") ? sign : 0;
	}
	return 0;
}

bool ts_in_up_arm(const char *text, TSNode n)
{
	TSNode child = n;
	for (TSNode p = ts_parent(n); !ts_node_is_null(p); child = p, p = ts_parent(p)) {
		int test;
		if (ts_type_is(p, "preproc_ifdef")) {
			TSNode name = ts_field(p, "name");
			bool ifndef = ts_node_child_count(p) > 0 &&
				      ts_text_is(ts_node_child(p, 0), text, "#ifndef");
			test = ts_text_is(name, text, "CONFIG_SMP") ? (ifndef ? -1 : 1) : 0;
		} else if (ts_type_is(p, "preproc_if")) {
			test = smp_test(text, ts_field(p, "condition"));
		} else {
			continue;
		}
		if (test == 0 || ts_node_eq(child, ts_field(p, "condition")) || ts_node_eq(child, ts_field(p, "name")))
			continue;
		bool alt = ts_node_eq(child, ts_field(p, "alternative"));
		if (alt && !ts_type_is(child, "preproc_else"))
			continue; /* an #elif: its own condition decides */
		if ((test < 0) != alt)
			return true;
	}
	return false;
}

