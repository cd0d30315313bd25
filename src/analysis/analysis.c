/*
 * The driver of one file's analysis: find the functions, build their CFGs
 * and events, find their contexts, run the fixed points.
 */
#include "analysis/flow.h"
#include "analysis/tree.h"

#include <stdlib.h>
#include <string.h>

static TSNode declarator_name(TSNode d)
{
	while (!ts_node_is_null(d) && !ts_type_is(d, "identifier")) {
		TSNode inner = ts_field(d, "declarator");
		if (ts_node_is_null(inner))
			return ts_null();
		d = inner;
	}
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
	struct file_analysis *fa = ctx;
	if (!ts_type_is(n, "function_definition"))
		return true;
	TSNode name = declarator_name(ts_field(n, "declarator"));
	TSNode body = ts_field(n, "body");
	if (ts_node_is_null(name) || ts_node_is_null(body))
		return false;
	const char *src = fa->src->parse_text;
	struct fn f;
	memset(&f, 0, sizeof f);
	f.name = xstrndup(src + ts_node_start_byte(name), ts_node_end_byte(name) - ts_node_start_byte(name));
	f.def = n;
	f.body = body;
	f.is_static = has_static(n, src);
	f.pos = source_pos(fa->src, ts_node_start_byte(name));
	f.sleeps = SLEEP_NO;
	vec_push(&fa->fns, f);
	return false; /* no nested functions in C */
}

/*
 * A file-scope `static int f(int);` before a definition without `static`
 * (2.4 s390io.c's s390_process_IRQ()): C gives the definition the
 * prototype's internal linkage, so no other file can call it.
 */
static bool static_proto_visit(TSNode n, void *ctx)
{
	struct file_analysis *fa = ctx;
	if (ts_type_is(n, "function_definition"))
		return false;
	if (!ts_type_is(n, "declaration"))
		return true;
	if (!has_static(n, fa->src->parse_text))
		return false;
	uint32_t k = ts_node_named_child_count(n);
	for (uint32_t i = 0; i < k; i++) {
		TSNode d = ts_node_named_child(n, i);
		TSNode fd = d;
		while (ts_type_is(fd, "pointer_declarator"))
			fd = ts_field(fd, "declarator");
		if (!ts_type_is(fd, "function_declarator"))
			continue;
		TSNode name = declarator_name(fd);
		if (ts_node_is_null(name))
			continue;
		const char *src = fa->src->parse_text;
		uint32_t a = ts_node_start_byte(name), b = ts_node_end_byte(name);
		for (size_t f = 0; f < fa->fns.len; f++)
			if (strlen(fa->fns.items[f].name) == b - a && memcmp(fa->fns.items[f].name, src + a, b - a) == 0)
				fa->fns.items[f].is_static = true;
	}
	return false;
}

static uint64_t name_hash(const char *name, size_t len)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 1099511628211ull;
	return h;
}

/* The name table: a file with thousands of functions must not cost a scan per identifier. */
static void index_names(struct file_analysis *fa)
{
	size_t cap = 16;
	while (cap < 2 * fa->fns.len + 1)
		cap *= 2;
	fa->by_name = xcalloc(cap, sizeof *fa->by_name);
	fa->by_name_cap = cap;
	for (size_t i = 0; i < fa->fns.len; i++) {
		const char *n = fa->fns.items[i].name;
		size_t k = name_hash(n, strlen(n)) & (cap - 1);
		while (fa->by_name[k]) {
			if (strcmp(fa->fns.items[fa->by_name[k] - 1].name, n) == 0)
				break; /* a second definition (#if arms): the first one answers */
			k = (k + 1) & (cap - 1);
		}
		if (!fa->by_name[k])
			fa->by_name[k] = (uint32_t)i + 1;
	}
}

int analysis_fn_index(const struct file_analysis *fa, const char *name, size_t len)
{
	if (!fa->by_name_cap)
		return -1;
	for (size_t k = name_hash(name, len) & (fa->by_name_cap - 1); fa->by_name[k];
	     k = (k + 1) & (fa->by_name_cap - 1)) {
		const char *n = fa->fns.items[fa->by_name[k] - 1].name;
		if (strlen(n) == len && memcmp(n, name, len) == 0)
			return (int)fa->by_name[k] - 1;
	}
	return -1;
}

const struct fn *analysis_fn_at(const struct file_analysis *fa, uint32_t offset)
{
	/* definitions are in source order and do not overlap */
	size_t lo = 0, hi = fa->fns.len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		TSNode d = fa->fns.items[mid].def;
		if (offset < ts_node_start_byte(d))
			hi = mid;
		else if (offset >= ts_node_end_byte(d))
			lo = mid + 1;
		else
			return &fa->fns.items[mid];
	}
	return NULL;
}

bool analysis_fn_is_shared(const struct file_analysis *fa, const struct fn *f)
{
	size_t n = strlen(fa->src->path);
	return !f->is_static || (n >= 2 && strcmp(fa->src->path + n - 2, ".h") == 0);
}

const char *fn_store_kind(const struct fn *f)
{
	return f->via_field ? "field" : "pointer";
}

const char *fn_store_name(const struct fn *f)
{
	return f->via_field ? f->via_field : f->via_pointer;
}

/*
 * A static function stored only in a field other files access, or in one
 * pointer: the tree
 * follows the calls through that field (`.field`), and says whether they
 * are all made with preemption off.
 */
static void tree_field_context(struct file_analysis *fa, struct fn *f)
{
	enum fn_context ctx;
	const char *why;
	f->via_root = f->via_field ? xasprintf(".%s", f->via_field) : xstrdup(f->via_pointer);
	if (!fa->ext || !tree_context_lookup(fa->ext, f->via_root, strlen(f->via_root), fa->src->path, &ctx, &why))
		return;
	if (ctx == CTX_PROCESS)
		f->tree_note = why;
	else
		f->via_tree = why;
}

/* The contexts the rest of the tree gives the functions other files call. */
static void tree_contexts(struct file_analysis *fa)
{
	for (size_t i = 0; i < fa->fns.len; i++) {
		struct fn *f = &fa->fns.items[i];
		enum fn_context ctx;
		const char *why;
		if (f->ctx == CTX_PROCESS && f->addr_taken && (f->via_field || f->via_pointer) && !f->via_bad &&
		    !f->via_private &&
		    !analysis_fn_is_shared(fa, f)) {
			tree_field_context(fa, f); /* the first look, without a tree, names the field to follow */
			continue;
		}
		if (!fa->ext || f->ctx != CTX_PROCESS || !analysis_fn_is_shared(fa, f) ||
		    !tree_context_lookup(fa->ext, f->name, strlen(f->name), fa->src->path, &ctx, &why))
			continue;
		if (ctx == CTX_PROCESS) {
			f->tree_note = why;
			continue;
		}
		f->ctx = ctx;
		free(f->ctx_reason);
		f->ctx_reason = xstrdup(why);
	}
}

void analysis_run(struct file_analysis *out, const struct source *src, TSTree *tree,
		  const struct tree_context *ext)
{
	memset(out, 0, sizeof *out);
	out->src = src;
	out->tree = tree;
	out->ext = ext;
	ts_walk(ts_tree_root_node(tree), collect_visit, out);
	ts_walk(ts_tree_root_node(tree), static_proto_visit, out);
	index_names(out);
	for (size_t i = 0; i < out->fns.len; i++) {
		struct fn *f = &out->fns.items[i];
		cfg_build(&f->cfg, f->body, src->parse_text);
		flow_prepare(f, src);
	}
	wrap_find(out);
	context_find(out);
	tree_contexts(out);
	context_callers_fixpoint(out);
	sleep_summarise(out);
}

void analysis_release(struct file_analysis *fa)
{
	context_release(fa);
	free(fa->by_name);
	for (size_t i = 0; i < fa->fns.len; i++) {
		struct fn *f = &fa->fns.items[i];
		free(f->name);
		free(f->via_field);
		free(f->via_root);
		free(f->via_pointer);
		free(f->ctx_reason);
		free(f->entry_lock);
		free(f->callers_note);
		free(f->sleep_reason);
		for (size_t k = 0; k < f->dropped.len; k++)
			free(f->dropped.items[k]);
		vec_release(&f->dropped);
		cfg_release(&f->cfg);
		flow_unprepare(f);
		vec_release(&f->calls);
	}
	vec_release(&fa->fns);
	for (size_t i = 0; i < fa->wrappers.len; i++) {
		free(fa->wrappers.items[i].held);
		free(fa->wrappers.items[i].lock);
	}
	vec_release(&fa->wrappers);
}
