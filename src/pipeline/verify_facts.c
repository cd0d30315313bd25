/*
 * The per-function facts of one text that verify.c judges a plan's text
 * by (verify_internal.h): each definition's span, its parse errors, text
 * spatch cannot parse, and its P006/P007 findings.
 */
#include "pipeline/verify_internal.h"
#include "pipeline/scan.h"
#include "parse/ctext.h"

#include <stdlib.h>
#include <string.h>

#include <tree_sitter/api.h>

#include "parse/source.h"
#include "parse/ts.h"
#include "rules/rules.h"

static char *definition_name(TSNode def, const char *text)
{
	TSNode d = ts_field(def, "declarator");
	while (!ts_node_is_null(d) && !ts_type_is(d, "identifier"))
		d = ts_field(d, "declarator");
	if (ts_node_is_null(d))
		return NULL;
	uint32_t s = ts_node_start_byte(d);
	return xstrndup(text + s, ts_node_end_byte(d) - s);
}

bool fn_name_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The slot of NAME in V's index (open addressing): its entry or the empty one where it goes. */
static size_t *index_slot(const fact_vec *v, const char *name)
{
	size_t mask = v->index_cap - 1, h = name ? (size_t)hash_bytes(name, strlen(name)) : 0;
	for (size_t i = h & mask;; i = (i + 1) & mask)
		if (!v->index[i] || fn_name_eq(v->items[v->index[i] - 1].name, name))
			return &v->index[i];
}

/* Rebuilds V's index at twice the entries' number, at least 64 slots. */
static void index_grow(fact_vec *v)
{
	size_t cap = 64;
	while (cap < 2 * (v->len + 1))
		cap *= 2;
	free(v->index);
	v->index = xcalloc(cap, sizeof *v->index);
	v->index_cap = cap;
	for (size_t i = 0; i < v->len; i++)
		*index_slot(v, v->items[i].name) = i + 1;
}

/*
 * The facts of function NAME in V, added if new; found through V's index
 * of names (a file of many functions made a search per definition
 * quadratic).
 */
struct fn_fact *fact_for(fact_vec *v, const char *name)
{
	if (2 * (v->len + 1) > v->index_cap)
		index_grow(v);
	size_t *slot = index_slot(v, name);
	if (*slot)
		return &v->items[*slot - 1];
	struct fn_fact f = {name ? xstrdup(name) : NULL, 0, 0, 0, 0, 0, false, 0, STRVEC_INIT};
	vec_push(v, f);
	*slot = v->len;
	return &v->items[v->len - 1];
}

/* Appends the spans of the ERROR and MISSING nodes under N. */
static void error_spans(TSNode n, span_vec *out)
{
	if (!ts_node_has_error(n))
		return;
	if (ts_node_is_missing(n) || ts_type_is(n, "ERROR")) {
		struct span sp = {ts_node_start_byte(n), ts_node_end_byte(n)};
		vec_push(out, sp);
		return;
	}
	for (uint32_t i = 0; i < ts_node_child_count(n); i++)
		error_spans(ts_node_child(n, i), out);
}

/* The first ERROR or MISSING node under N (N has an error). */
static TSNode first_error(TSNode n)
{
	if (ts_node_is_missing(n) || ts_type_is(n, "ERROR"))
		return n;
	for (uint32_t i = 0; i < ts_node_child_count(n); i++) {
		TSNode c = ts_node_child(n, i);
		if (ts_node_has_error(c))
			return first_error(c);
	}
	return n;
}

/* Is N a preprocessor conditional or one of its arms (#if around functions, or code)? */
static bool file_scope_conditional(TSNode n)
{
	return ts_type_is(n, "preproc_if") || ts_type_is(n, "preproc_ifdef") ||
	       ts_type_is(n, "preproc_else") || ts_type_is(n, "preproc_elif") ||
	       ts_type_is(n, "preproc_elifdef");
}

struct not_c_scan {
	const char *text;
	TSNode found;
};

/* Does [P, END) hold prose: four or more plain words in a row (`Wait logic goes here.`)? */
static bool prose(const char *p, const char *end)
{
	int words = 0;
	while (p < end) {
		const char *w = p;
		while (p < end && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
			p++;
		if (p > w && (p == end || *p == ' ' || *p == '\t' || *p == '.' || *p == ',' || *p == '\n')) {
			if (++words >= 4)
				return true;
		} else {
			words = 0;
		}
		if (p < end)
			p++;
	}
	return false;
}

/*
 * An iterator macro with an else arm (`task_for_first(t, q) { ... } else
 * { ... }`): read as a call missing its `;`, a block, and `else` as a name.
 * Not C, and spatch cannot parse it either.
 */
static bool iterator_else(TSNode n, const char *text)
{
	if (!(ts_type_is(n, "type_identifier") || ts_type_is(n, "identifier")) || !ts_text_is(n, text, "else"))
		return false;
	TSNode block = ts_node_prev_named_sibling(n);
	if (!ts_type_is(block, "compound_statement"))
		return false;
	TSNode call = ts_node_prev_named_sibling(block);
	if (!ts_type_is(call, "expression_statement") || ts_node_child_count(call) < 2 ||
	    !ts_type_is(ts_node_named_child(call, 0), "call_expression"))
		return false;
	return ts_node_is_missing(ts_node_child(call, ts_node_child_count(call) - 1));
}

/* Is the line holding byte AT (up to a comment) prose? */
static bool prose_line(const char *text, uint32_t at)
{
	const char *b = text + at, *e = text + at;
	while (b > text && b[-1] != '\n')
		b--;
	size_t n = strcspn(e, "\n"), k = 0;
	while (k < n && ctext_at(e, n, k) != CTEXT_BLOCK_COMMENT && ctext_at(e, n, k) != CTEXT_LINE_COMMENT)
		k++;
	return prose(b, e + k);
}

/*
 * Parse errors spatch shares: prose in a preprocessor arm (`#ifdef LATER`
 * notes: spatch parses every arm). Errors it reads past (a type as a macro
 * argument, a statement split across #if arms, a statement macro without
 * its semicolon) are not among them.
 */
static bool not_c_visit(TSNode n, void *ctx)
{
	struct not_c_scan *s = ctx;
	if (!ts_node_is_null(s->found))
		return false;
	if (iterator_else(n, s->text)) {
		s->found = n;
		return false;
	}
	if (!ts_node_has_error(n) && !ts_type_is(n, "compound_statement"))
		return false; /* a block holds the else of an iterator without holding an error */
	if ((ts_type_is(n, "ERROR") || ts_node_is_missing(n)) && prose_line(s->text, ts_node_start_byte(n))) {
		for (TSNode a = ts_parent(n); !ts_node_is_null(a) && !ts_type_is(a, "function_definition");
		     a = ts_parent(a))
			if (file_scope_conditional(a)) {
				s->found = n;
				return false;
			}
	}
	return true;
}

/* The facts of PARENT's children (file scope), into OUT; conditional blocks looked into. */
static void add_facts(TSNode parent, const struct source *src, fact_vec *out, span_vec *errs)
{
	/* a cursor: ts_node_child(parent, i) would scan i children each time */
	TSTreeCursor cur = ts_tree_cursor_new(parent);
	for (bool more = ts_tree_cursor_goto_first_child(&cur); more; more = ts_tree_cursor_goto_next_sibling(&cur)) {
		TSNode c = ts_tree_cursor_current_node(&cur);
		if (file_scope_conditional(c)) {
			add_facts(c, src, out, errs);
			continue;
		}
		char *name = ts_type_is(c, "function_definition") ? definition_name(c, src->parse_text) : NULL;
		struct fn_fact *f = fact_for(out, name);
		if (name) {
			f->start = ts_node_start_byte(c);
			f->end = ts_node_end_byte(c);
			for (uint32_t k = 0; k < ts_node_named_child_count(c) && !f->kr; k++)
				f->kr = ts_type_is(ts_node_named_child(c, k), "declaration");
			struct not_c_scan nc = {src->parse_text, ts_null()};
			if (ts_node_has_error(c))
				ts_walk(c, not_c_visit, &nc);
			if (!ts_node_is_null(nc.found) && !f->not_c)
				f->not_c = source_pos(src, ts_node_start_byte(nc.found)).line;
			/* a control-flow macro with an else, which the analysis reads as `if` */
			for (size_t k = 0; k < src->if_macros.len && !f->not_c; k++)
				if (src->if_macros.items[k] >= f->start && src->if_macros.items[k] < f->end)
					f->not_c = source_pos(src, src->if_macros.items[k]).line;
		}
		unsigned e = ts_count_errors(c);
		if (e && !f->errors)
			f->error_line = source_pos(src, ts_node_start_byte(first_error(c))).line;
		f->errors += e;
		if (e && errs)
			error_spans(c, errs);
		free(name);
	}
	ts_tree_cursor_delete(&cur);
}

/* Parse errors and definition spans per function of TEXT; the error spans in *ERRS if given. */
void parse_facts(const char *path, const char *text, size_t len, fact_vec *out,
			span_vec *errs)
{
	struct source src;
	source_init(&src, path, xstrndup(text, len), len);
	TSTree *tree = ts_parse_c(src.parse_text, len);
	if (tree)
		add_facts(ts_tree_root_node(tree), &src, out, errs);
	if (!tree)
		fact_for(out, NULL)->errors++;
	ts_parent_forget(tree);
	ts_tree_delete(tree);
	source_release(&src);
}

/*
 * "MESSAGE [RULE]" with numbers and "(which calls ...)" chains folded: edits
 * move lines and may change what a callee sleeps in (schedule() becomes
 * cond_resched()), not which calls are made where.
 */
static char *without_numbers(const char *msg, const char *rule)
{
	struct buf b = BUF_INIT;
	for (const char *p = msg; *p; p++) {
		if (strncmp(p, " (which ", 8) == 0) {
			int depth = 0;
			for (; *p; p++) {
				depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
				if (*p == ')' && depth == 0)
					break;
			}
			if (!*p)
				break;
		} else if (*p >= '0' && *p <= '9') {
			while (p[1] >= '0' && p[1] <= '9')
				p++;
			buf_putc(&b, 'N');
		} else {
			buf_putc(&b, *p);
		}
	}
	buf_printf(&b, " [%s]", rule);
	return buf_detach(&b);
}

/* Adds the P006/P007 findings of FS[0..n) to the facts, and the fixable ones of the user's rules. */
void add_findings(const struct finding *fs, size_t n, const struct scan_options *opts,
			 bool count_fixable, fact_vec *out)
{
	for (size_t i = 0; i < n; i++) {
		const struct finding *f = &fs[i];
		if (f->protected_site)
			continue;
		struct fn_fact *ff = fact_for(out, f->function);
		if (rule_has(f->rule, PROP_GUARD))
			vec_push(&ff->bad, without_numbers(f->message, rule_code(f->rule)));
		if (count_fixable && (opts->rules & (1u << f->rule)) && f->fix != FIX_NONE &&
		    f->edits.len > 0)
			ff->fixable++;
	}
}

/* Scans TEXT at verification DEPTH, with P006 and P007 on, into OUT. */
void scan_facts(const char *path, const char *text, size_t len,
		       const struct scan_options *opts, unsigned depth, bool count_fixable,
		       fact_vec *out)
{
	struct scan_options o = *opts;
	struct scan_result r = SCAN_RESULT_INIT;
	o.verbose = false;
	o.no_prefilter = true;
	o.jobs = 1;
	o.rules |= rule_mask(PROP_GUARD);
	o.verify_depth = depth;
	scan_buffer(path, text, len, &o, &r);
	add_findings(r.findings.items, r.findings.len, opts, count_fixable, out);
	scan_result_release(&r);
}

void facts_release(fact_vec *v)
{
	for (size_t i = 0; i < v->len; i++) {
		free(v->items[i].name);
		strvec_release(&v->items[i].bad);
	}
	vec_release(v);
	free(v->index);
	v->index = NULL;
	v->index_cap = 0;
}

