/*
 * The per-file pipeline: prefilter -> neutralise -> parse -> analyse ->
 * rules, and the parallel driver over many files (results merged in path
 * order). The second pass with the tree's index is scan_tree.c.
 */
#define _GNU_SOURCE /* memmem */
#include "pipeline/scan.h"
#include "pipeline/scan_internal.h"
#include "util/interrupt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "analysis/flow.h"
#include "util/parallel.h"
#include "rules/rules.h"
#include "pipeline/verify.h"
#include "parse/source.h"
#include "util/overlay.h"

const TSLanguage *tree_sitter_c(void);

bool scan_prefilter(const char *src, size_t len)
{
	/* A file that #defines a macro over a word contains the word itself,
	 * so scanning for the words covers the file's own macros. */
	return rules_prefilter(src, len);
}

/* Does TEXT name one of the tree's header macros that hide a site (a word)? */
static bool uses_tree_macro(const struct scan_options *opts, const char *text, size_t len)
{
	for (size_t i = 0; opts->macros && i < opts->macros->len; i++)
		if (text_has_word(text, len, opts->macros->items[i].def.name))
			return true;
	return false;
}

/* Does TEXT name one of the tree's arrays being converted (its EXPORT_SYMBOL, a use)? */
static bool names_tree_array(const struct scan_options *opts, const char *text, size_t len)
{
	for (size_t i = 0; opts->arrays && i < opts->arrays->len; i++)
		if (!opts->arrays->items[i].why_not && text_has_word(text, len, opts->arrays->items[i].name))
			return true;
	return false;
}

/* Identifiers that make a site (whole words), for the unparsed check. */
static const char *const site_words[] = {
	"smp_processor_id", "need_resched", "NR_CPUS", "SCHED_YIELD", "__get_cpu_var",
	"per_cpu", "preempt_enable_no_resched", "preempt_enable_noresched",
};

/*
 * Is A code the grammar did not read as a function: a K&R definition with
 * no return type (`kr(x) int x; { ... }` leaves a block at file scope;
 * `kr(x) { ... }` reads as a definition of `x` with type `kr`)?
 */
static bool not_a_function(TSNode a)
{
	TSNode p = ts_parent(a);
	if (ts_type_is(a, "compound_statement") && ts_type_is(p, "translation_unit"))
		return true;
	if (!ts_type_is(a, "function_definition"))
		return false;
	TSNode d = ts_node_child_by_field_name(a, "declarator", 10);
	while (!ts_node_is_null(d) && !ts_type_is(d, "function_declarator"))
		d = ts_node_child_by_field_name(d, "declarator", 10);
	return ts_node_is_null(d);
}

/* Candidate sites that fell in an ERROR region: say so instead of skipping silently. */
static void report_unparsed(const struct source *src, TSNode root, struct scan_result *out)
{
	bool odd = ts_node_has_error(root);
	for (uint32_t i = 0; !odd && i < ts_node_named_child_count(root); i++)
		odd = not_a_function(ts_node_named_child(root, i));
	if (!odd)
		return;
	const char *t = src->parse_text;
	unsigned last_line = 0;
	for (size_t i = 0; i < ARRAY_SIZE(site_words); i++) {
		size_t n = strlen(site_words[i]);
		for (const char *p = strstr(t, site_words[i]); p; p = strstr(p + 1, site_words[i])) {
			size_t off = (size_t)(p - t);
			if ((off > 0 && is_ident_char(t[off - 1])) || is_ident_char(t[off + n]) ||
			    source_in_directive(src, off))
				continue;
			TSNode d = ts_node_descendant_for_byte_range(root, (uint32_t)off, (uint32_t)(off + n));
			const char *why = NULL;
			for (TSNode a = d; !ts_node_is_null(a) && !why; a = ts_parent(a)) {
				if (ts_type_is(a, "comment") || ts_type_is(a, "string_literal") ||
				    ts_type_is(a, "preproc_arg"))
					break;
				if (ts_type_is(a, "ERROR"))
					why = "lies in code the C grammar could not parse";
				else if (not_a_function(a))
					why = "lies in code the C grammar did not read as a function (a K&R "
					      "definition without a return type, or a macro it cannot see through)";
			}
			if (!why)
				continue;
			struct srcpos pos = source_pos(src, off);
			if (pos.line == last_line)
				continue;
			last_line = pos.line;
			struct diagnostic dg = {DIAG_UNPARSED, xstrdup(src->path), pos.line, pos.column,
				xasprintf("unparsed: `%s` %s; not analysed", site_words[i], why),
				pos.column + (unsigned)n};
			vec_push(&out->diagnostics, dg);
		}
	}
}

/* Does the prefilter leave PATH's TEXT unparsed (no word of a site, of the tree's macros, arrays or atomic functions)? */
static bool prefiltered_out(const char *path, const char *text, size_t len, const struct scan_options *opts)
{
	return !opts->no_prefilter && !scan_prefilter(text, len) && !uses_tree_macro(opts, text, len) &&
	       !names_tree_array(opts, text, len) && !tree_context_names_atomic(opts->tree, path, text, len);
}

/*
 * The functions whose context decides a finding of OUT (from BEFORE on):
 * a site in a function that runs preemptible only because nothing in this
 * file says otherwise.
 */
static void collect_want(const struct file_analysis *fa, struct scan_result *out, size_t before)
{
	name_vec roots = VEC_INIT;
	for (size_t i = before; i < out->findings.len; i++) {
		const struct finding *f = &out->findings.items[i];
		if (f->protected_site || !rule_has(f->rule, PROP_TREE_CONTEXT))
			continue;
		const struct fn *fn = analysis_fn_at(fa, (uint32_t)f->pos.offset);
		if (!fn || fn->ctx != CTX_PROCESS)
			continue;
		roots.len = 0;
		if (!context_roots(fa, fn, &roots))
			continue;
		for (size_t k = 0; k < roots.len; k++) {
			bool dup = false;
			for (size_t w = 0; w < out->want.len && !dup; w++)
				dup = strcmp(out->want.items[w].name, roots.items[k]) == 0 &&
				      strcmp(out->want.items[w].file, fa->src->path) == 0;
			if (!dup) {
				struct tree_want tw = {xstrdup(roots.items[k]), xstrdup(fa->src->path)};
				vec_push(&out->want, tw);
			}
		}
	}
	vec_release(&roots);
}

int scan_buffer(const char *path, const char *text, size_t len, const struct scan_options *opts,
		struct scan_result *out)
{
	out->stats.files++;
	out->stats.bytes += len;
	if (prefiltered_out(path, text, len, opts))
		return 0;
	out->stats.parsed++;
	struct source src;
	source_init(&src, path, xstrndup(text, len), len);
	TSTree *tree = ts_parse_text(src.parse_text, len, interrupt_cancel_flag()); /* Ctrl-C stops a long parse */
	if (!tree) {
		source_release(&src);
		if (interrupted())
			return error_set("%s: interrupted", path);
		struct diagnostic dg = {DIAG_TOOL, xstrdup(path), 0, 0, xstrdup("the parser gave up on this file"), 0};
		vec_push(&out->diagnostics, dg);
		return error_set("%s: the parser gave up on this file", path);
	}
	struct file_analysis fa;
	analysis_run(&fa, &src, tree, opts->tree);
	size_t before = out->findings.len;
	int rc = interrupted() ? 0 : rules_run(&fa, opts, out);
	if (rc == 0 && opts->want && opts->verify_depth == 0)
		collect_want(&fa, out, before);
	if (rc == 0 && opts->verify_depth < 2 && !opts->no_verify && !interrupted())
		verify_plan(path, text, len, opts, out, before);
	if (out->findings.len > before) {
		uint64_t h = hash_bytes(text, len);
		for (size_t i = before; i < out->findings.len; i++)
			out->findings.items[i].file_hash = h, out->findings.items[i].file_len = len;
	}
	if (rc < 0) {
		struct diagnostic dg = {DIAG_TOOL, xstrdup(path), 0, 0, xstrdup(error_last()), 0};
		vec_push(&out->diagnostics, dg);
	}
	for (size_t i = before; i < out->findings.len; i++)
		if (!out->findings.items[i].protected_site)
			out->stats.per_rule[out->findings.items[i].rule]++;
	report_unparsed(&src, ts_tree_root_node(tree), out);
	for (size_t i = 0; i < fa.fns.len; i++)
		if (fa.fns.items[i].cfg.truncated) {
			struct diagnostic dg = {DIAG_UNPARSED, xstrdup(path), fa.fns.items[i].pos.line,
				fa.fns.items[i].pos.column,
				xasprintf("unparsed: %s() nests statements deeper than the analysis follows; "
					  "its innermost code was not analysed", fa.fns.items[i].name),
				fa.fns.items[i].pos.column + (unsigned)strlen(fa.fns.items[i].name)};
			vec_push(&out->diagnostics, dg);
		}
	analysis_release(&fa);
	ts_parent_forget(tree);
	ts_tree_delete(tree);
	source_release(&src);
	return rc;
}

/* Does TEXT end its lines in bare CRs (more lone CRs than LFs)? Then no line break is seen. */
static bool cr_only(const char *text, size_t len)
{
	size_t cr = 0, lf = 0;
	for (size_t i = 0; i < len; i++) {
		lf += text[i] == '\n';
		cr += text[i] == '\r' && (i + 1 == len || text[i + 1] != '\n');
	}
	return cr > lf;
}

/*
 * scan_buffer() through the memo of opts->memo in the context CTX: a
 * file the prefilter parses is scanned only when no result of the same
 * bytes, path and context is kept, and its result is kept then. OUT holds
 * this file's result only.
 */
static int scan_memoised(const char *path, const char *text, size_t len, const struct scan_options *opts,
			 const uint64_t ctx[2], struct scan_result *out)
{
	int rc;
	if (!ctx)
		return scan_buffer(path, text, len, opts, out);
	if (prefiltered_out(path, text, len, opts)) { /* as scan_buffer() would, without asking twice */
		out->stats.files++;
		out->stats.bytes += len;
		return 0;
	}
	if (scan_memo_get(opts->memo, ctx, path, text, len, out, &rc))
		return rc < 0 ? error_set("%s: could not be analysed (an earlier run's result)", path) : 0;
	rc = scan_buffer(path, text, len, opts, out);
	if (!interrupted()) /* an interrupted scan may be partial */
		scan_memo_put(opts->memo, ctx, path, text, len, out, rc);
	return rc;
}

/*
 * scan_file(), also hashing the file's identifiers into IDS (may be NULL)
 * for the tree index; CTX: scan_memoised()'s, or NULL.
 */
static int scan_path(const char *path, const struct scan_options *opts, struct scan_result *out,
		     struct tree_ids *ids, const uint64_t *ctx)
{
	char *text;
	size_t len;
	if (overlay_read(path, &text, &len) < 0) {
		struct diagnostic dg = {DIAG_IO, xstrdup(path), 0, 0, xstrdup(error_last()), 0};
		vec_push(&out->diagnostics, dg);
		return -1;
	}
	if (memchr(text, '\0', len)) {
		free(text);
		struct diagnostic dg = {DIAG_IO, xstrdup(path), 0, 0, xasprintf("%s: binary file (contains NUL bytes); skipped", path), 0};
		vec_push(&out->diagnostics, dg);
		return error_set("%s: binary file", path);
	}
	if (cr_only(text, len)) {
		free(text);
		struct diagnostic dg = {DIAG_IO, xstrdup(path), 0, 0,
			xasprintf("%s: its lines end in a bare CR (old Mac line endings), which the C grammar "
				  "preemptify parses with reads as one long line; not analysed (convert it "
				  "first: tr '\\r' '\\n')", path), 0};
		vec_push(&out->diagnostics, dg);
		return error_set("%s: CR line endings", path);
	}
	if (ids)
		tree_ids_of(text, len, ids);
	int rc = scan_memoised(path, text, len, opts, ctx, out);
	free(text);
	return rc;
}

int scan_file(const char *path, const struct scan_options *opts, struct scan_result *out)
{
	return scan_path(path, opts, out, NULL, NULL);
}

struct job {
	char *const *paths;
	const struct scan_options *opts;
	struct scan_result *results;
	int *rcs;
	const uint64_t *ctx; /* scan_memo_context(), with opts->memo; else NULL */
};

static void scan_one(size_t i, void *ctx)
{
	struct job *j = ctx;
	if (interrupted())
		return; /* the command stops; nothing of this run is shown */
	j->rcs[i] = scan_path(j->paths[i], j->opts, &j->results[i], j->opts->ids ? &j->opts->ids[i] : NULL,
			      j->ctx);
	if (j->opts->progress) {
		size_t sites = 0;
		for (size_t k = 0; k < j->results[i].findings.len; k++)
			sites += !j->results[i].findings.items[k].protected_site;
		progress_add(j->opts->progress, 1, sites, 0);
	}
}

int scan_diag_cmp(const void *a, const void *b)
{
	const struct diagnostic *x = a, *y = b;
	int c = strcmp(x->file, y->file);
	if (c)
		return c;
	return x->line < y->line ? -1 : x->line > y->line;
}

int scan_files(char *const *paths, size_t n, const struct scan_options *opts, struct scan_result *out)
{
	struct scan_result *results = xcalloc(n ? n : 1, sizeof *results);
	int *rcs = xcalloc(n ? n : 1, sizeof *rcs);
	uint64_t ctx[2];
	if (opts->memo)
		scan_memo_context(opts, ctx);
	struct job j = {paths, opts, results, rcs, opts->memo ? ctx : NULL};
	parallel_for(n, opts->jobs, scan_one, &j);
	int failed = 0;
	/* merge in path order: the output never depends on thread timing */
	for (size_t i = 0; i < n; i++) {
		struct scan_result *r = &results[i];
		vec_reserve(&out->findings, r->findings.len);
		for (size_t k = 0; k < r->findings.len; k++)
			out->findings.items[out->findings.len++] = r->findings.items[k];
		vec_reserve(&out->diagnostics, r->diagnostics.len);
		for (size_t k = 0; k < r->diagnostics.len; k++)
			out->diagnostics.items[out->diagnostics.len++] = r->diagnostics.items[k];
		out->stats.files += r->stats.files;
		out->stats.bytes += r->stats.bytes;
		out->stats.parsed += r->stats.parsed;
		for (int k = 0; k < RULE_COUNT; k++)
			out->stats.per_rule[k] += r->stats.per_rule[k];
		for (size_t k = 0; k < r->want.len; k++)
			vec_push(&out->want, r->want.items[k]);
		vec_release(&r->want);
		for (size_t k = 0; k < r->macros.len; k++)
			vec_push(&out->macros, r->macros.items[k]);
		vec_release(&r->macros);
		for (size_t k = 0; k < r->arrays.len; k++)
			vec_push(&out->arrays, r->arrays.items[k]);
		vec_release(&r->arrays);
		vec_release(&r->findings);
		vec_release(&r->diagnostics);
		if (rcs[i] < 0)
			failed++;
	}
	if (out->findings.len > 1)
		qsort(out->findings.items, out->findings.len, sizeof(struct finding), finding_cmp);
	if (out->diagnostics.len > 1)
		qsort(out->diagnostics.items, out->diagnostics.len, sizeof(struct diagnostic), scan_diag_cmp);
	free(results);
	free(rcs);
	return failed;
}

