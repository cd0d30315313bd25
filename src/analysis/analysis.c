/*
 * The driver of one file's analysis: find the functions, build their CFGs
 * and events, find their contexts, run the fixed points.
 */
#include "analysis/flow.h"

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

void analysis_run(struct file_analysis *out, const struct source *src, TSTree *tree)
{
	memset(out, 0, sizeof *out);
	out->src = src;
	out->tree = tree;
	ts_walk(ts_tree_root_node(tree), collect_visit, out);
	for (size_t i = 0; i < out->fns.len; i++) {
		struct fn *f = &out->fns.items[i];
		cfg_build(&f->cfg, f->body, src->parse_text);
		flow_prepare(f, src);
	}
	context_find(out);
	context_callers_fixpoint(out);
	sleep_summarise(out);
}

void analysis_release(struct file_analysis *fa)
{
	for (size_t i = 0; i < fa->fns.len; i++) {
		struct fn *f = &fa->fns.items[i];
		free(f->name);
		free(f->ctx_reason);
		free(f->sleep_reason);
		cfg_release(&f->cfg);
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
