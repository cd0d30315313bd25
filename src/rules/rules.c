#define _GNU_SOURCE /* memmem */
#include "rules/rules.h"
#include "parse/query.h"

#include <stdlib.h>
#include <string.h>

struct covered {
	uint32_t offset; /* of the smp_processor_id() call */
	size_t finding;  /* index of the finding whose region covers it */
};

struct ctx {
	const struct file_analysis *fa;
	const struct source *src;
	const char *text; /* parse text */
	const struct scan_options *opts;
	struct scan_result *out;
	VEC(struct percpu_array *) arrays;
	/* reads left as smp_processor_id() inside a region another finding opens */
	VEC(struct covered) covered;
};

/* A file-scope `T x[NR_CPUS]`. */
struct percpu_array {
	char *name;
	TSNode decl;
	bool is_static, eligible;
	char *why_not;   /* why define-per-cpu does not apply */
	char *type;      /* element type text for DEFINE_PER_CPU */
	char *dropped;   /* attributes dropped, or NULL */
	bool planned;    /* declaration edit already attached to a finding */
	VEC(TSNode) uses;
};

/*
 * Decides one site SITE of KIND (a capture of grammars/sites.scm, or
 * RULE_SITE_FUNCTION with the function body) in F: adds findings and their
 * edits to C. One per rule with a checker in rules/rules.def.
 */
typedef void rule_checker(struct ctx *c, const struct fn *f, TSNode site, const char *kind);
#define CHECK(fn) rule_checker fn;
#define NO_CHECK
#define RULE(id, code, name, sev, summary, help, check, sites, fixes) check
#include "rules/rules.def"
#undef CHECK
#undef NO_CHECK

static char *node_text(const struct ctx *c, TSNode n)
{
	return xstrndup(c->text + ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n));
}

static char *orig_text(const struct ctx *c, TSNode n)
{
	return xstrndup(c->src->text + ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n));
}

static unsigned line_of(const struct ctx *c, TSNode n)
{
	return source_pos(c->src, ts_node_start_byte(n)).line;
}

static bool name_eq(const char *s, size_t len, const char *want)
{
	return strlen(want) == len && memcmp(s, want, len) == 0;
}

static bool call_is(const struct ctx *c, TSNode call, const char *name)
{
	const char *s;
	size_t len;
	if (!ts_type_is(call, "call_expression"))
		return false;
	len = ts_call_name(call, c->text, &s);
	return len && name_eq(s, len, name);
}

/* ---- suppression, dead code, version guards ----------------------------- */

static bool suppressed(const struct ctx *c, unsigned line, enum rule_id rule)
{
	for (unsigned l = line > 1 ? line - 1 : line; l <= line; l++) {
		if (l > c->src->line_starts.len)
			break;
		size_t s = c->src->line_starts.items[l - 1];
		size_t e = l < c->src->line_starts.len ? c->src->line_starts.items[l] : c->src->len;
		const char *m = memmem(c->src->text + s, e - s, "preemptify: ignore", 18);
		if (!m)
			continue;
		const char *p = m + 18, *end = c->src->text + e;
		bool any = false;
		while (p < end && *p != '*' && *p != '\n') {
			while (p < end && (*p == ' ' || *p == ',' || *p == '\t'))
				p++;
			const char *w = p;
			while (p < end && is_ident_char(*p))
				p++;
			if (p == w)
				break;
			any = true;
			char *word = xstrndup(w, (size_t)(p - w));
			int r = rule_parse(word);
			free(word);
			if (r == (int)rule)
				return true;
		}
		if (!any)
			return true;
	}
	return false;
}

/* The preprocessor conditional owning N's arm: condition text, and whether N is in the #if arm. */
static bool in_dead_code(const struct ctx *c, TSNode n)
{
	TSNode child = n;
	for (TSNode p = ts_node_parent(n); !ts_node_is_null(p); child = p, p = ts_node_parent(p)) {
		if (!ts_type_is(p, "preproc_if") && !ts_type_is(p, "preproc_elif"))
			continue;
		TSNode cond = ts_field(p, "condition");
		TSNode alt = ts_field(p, "alternative");
		if (ts_node_eq(child, alt) || ts_node_eq(child, cond))
			continue;
		if (ts_text_is(cond, c->text, "0"))
			return true;
	}
	return false;
}

static bool version_guarded(const struct ctx *c, TSNode n)
{
	for (TSNode p = ts_node_parent(n); !ts_node_is_null(p); p = ts_node_parent(p)) {
		TSNode cond = ts_field(p, "condition");
		if ((ts_type_is(p, "preproc_if") || ts_type_is(p, "preproc_elif")) && !ts_node_is_null(cond)) {
			uint32_t s = ts_node_start_byte(cond), e = ts_node_end_byte(cond);
			if (memmem(c->text + s, e - s, "LINUX_VERSION_CODE", 18))
				return true;
		}
	}
	return false;
}

/* ---- findings ------------------------------------------------------------ */

static struct finding *add_finding(struct ctx *c, enum rule_id rule, TSNode at, const struct fn *f,
				   enum severity sev, enum confidence conf, enum fix_kind fix,
				   char *message, char *evidence)
{
	unsigned line = line_of(c, at);
	if (!(c->opts->rules & (1u << rule)) || suppressed(c, line, rule)) {
		free(message);
		free(evidence);
		return NULL;
	}
	struct finding fd;
	memset(&fd, 0, sizeof fd);
	fd.rule = rule;
	fd.file = xstrdup(c->src->path);
	fd.pos = source_pos(c->src, ts_node_start_byte(at));
	fd.function = f ? xstrdup(f->name) : NULL;
	fd.message = message;
	fd.evidence = evidence;
	fd.severity = sev;
	fd.confidence = conf;
	fd.fix = fix;
	vec_push(&c->out->findings, fd);
	return &c->out->findings.items[c->out->findings.len - 1];
}

/* Records a considered-and-protected site (kept only with --verbose). */
static void add_protected(struct ctx *c, enum rule_id rule, TSNode at, const struct fn *f,
			  char *message, char *evidence)
{
	if (!c->opts->verbose) {
		free(message);
		free(evidence);
		return;
	}
	struct finding *fd = add_finding(c, rule, at, f, SEV_NOTE, CONF_HIGH, FIX_NONE, message, evidence);
	if (fd)
		fd->protected_site = true;
}

static void add_edit(const struct ctx *c, struct finding *fd, enum edit_op op, TSNode anchor, const char *text)
{
	if (!fd)
		return;
	for (size_t i = 0; i < fd->edits.len; i++) {
		const struct edit *o = &fd->edits.items[i];
		if (o->op == op && o->start.offset == ts_node_start_byte(anchor) && strcmp(o->text, text) == 0)
			return; /* the same change, planned twice */
	}
	struct edit e;
	e.op = op;
	e.start = source_pos(c->src, ts_node_start_byte(anchor));
	e.end = source_pos(c->src, ts_node_end_byte(anchor));
	e.node = ts_node_type(anchor);
	e.text = xstrdup(text);
	vec_push(&fd->edits, e);
}

/* Sets FD's fix note (taking NOTE), replacing any earlier one. */
static void set_note(struct finding *fd, char *note)
{
	if (!fd) {
		free(note);
		return;
	}
	free(fd->fix_note);
	fd->fix_note = note;
}

static void unfixable(struct finding *fd, char *note)
{
	if (!fd) {
		free(note);
		return;
	}
	for (size_t i = 0; i < fd->edits.len; i++)
		free(fd->edits.items[i].text);
	fd->edits.len = 0;
	fd->fix = FIX_NONE;
	free(fd->fix_note);
	fd->fix_note = note;
}

static char *explain_state(const struct fn *f, const struct point_state *ps)
{
	struct buf b = BUF_INIT;
	point_explain(f, ps, &b);
	return buf_detach(&b);
}

/* ---- statement structure --------------------------------------------------- */

static bool is_block(TSNode n)
{
	return ts_type_is(n, "compound_statement") || ts_type_is(n, "case_statement") ||
	       ts_type_is(n, "preproc_if") || ts_type_is(n, "preproc_ifdef") ||
	       ts_type_is(n, "preproc_else") || ts_type_is(n, "preproc_elif") ||
	       ts_type_is(n, "labeled_statement");
}

/* The statement containing N that sits directly in a block. */
static TSNode block_stmt(TSNode n)
{
	TSNode child = n;
	for (TSNode p = ts_node_parent(n); !ts_node_is_null(p); child = p, p = ts_node_parent(p)) {
		if (is_block(p) && !ts_type_is(child, "comment") &&
		    !ts_node_eq(child, ts_field(p, "value")) && !ts_node_eq(child, ts_field(p, "condition")) &&
		    !ts_node_eq(child, ts_field(p, "label")))
			return child;
		if (ts_type_is(p, "function_definition"))
			break;
	}
	TSNode null_node;
	memset(&null_node, 0, sizeof null_node);
	return null_node;
}

static bool node_within(TSNode n, TSNode outer)
{
	return ts_node_start_byte(outer) <= ts_node_start_byte(n) &&
	       ts_node_end_byte(n) <= ts_node_end_byte(outer);
}

static bool is_jump(TSNode s)
{
	return ts_type_is(s, "return_statement") || ts_type_is(s, "goto_statement") ||
	       ts_type_is(s, "break_statement") || ts_type_is(s, "continue_statement");
}

/* Indentation (leading whitespace) of the line holding N, in original text. */
static char *indent_of(const struct ctx *c, TSNode n)
{
	size_t s = ts_node_start_byte(n);
	size_t b = s;
	while (b > 0 && c->src->text[b - 1] != '\n')
		b--;
	size_t e = b;
	while (e < s && (c->src->text[e] == ' ' || c->src->text[e] == '\t'))
		e++;
	return xstrndup(c->src->text + b, e - b);
}

/* ---- regions: where get/put pairs go ----------------------------------------- */

struct region_scan {
	const struct ctx *c;
	const struct fn *f;
	TSNode first, last;     /* block-level statements bounding the region */
	const char *var;        /* a value that must not be returned, or NULL */
	VEC(TSNode) exits;      /* jumps leaving the region */
	char *refuse;           /* why no region can be made */
};

static TSNode jump_target(TSNode jump, bool is_continue)
{
	for (TSNode p = ts_node_parent(jump); !ts_node_is_null(p); p = ts_node_parent(p)) {
		if (ts_type_is(p, "for_statement") || ts_type_is(p, "while_statement") ||
		    ts_type_is(p, "do_statement"))
			return p;
		if (!is_continue && ts_type_is(p, "switch_statement"))
			return p;
		if (ts_type_is(p, "function_definition"))
			break;
	}
	TSNode null_node;
	memset(&null_node, 0, sizeof null_node);
	return null_node;
}

struct label_find {
	const char *text;
	const char *name;
	size_t len;
	bool found;
};

static bool label_visit(TSNode n, void *ctx)
{
	struct label_find *lf = ctx;
	if (ts_type_is(n, "labeled_statement")) {
		TSNode l = ts_field(n, "label");
		uint32_t s = ts_node_start_byte(l), e = ts_node_end_byte(l);
		if (e - s == lf->len && memcmp(lf->text + s, lf->name, lf->len) == 0)
			lf->found = true;
	}
	return !lf->found;
}

static bool label_inside(const struct ctx *c, TSNode label, TSNode from, TSNode to)
{
	struct label_find lf = {c->text, c->text + ts_node_start_byte(label),
				ts_node_end_byte(label) - ts_node_start_byte(label), false};
	TSNode parent = ts_node_parent(from);
	for (uint32_t i = 0; i < ts_node_named_child_count(parent); i++) {
		TSNode s = ts_node_named_child(parent, i);
		if (ts_node_start_byte(s) < ts_node_start_byte(from) || ts_node_start_byte(s) > ts_node_start_byte(to))
			continue;
		ts_walk(s, label_visit, &lf);
	}
	return lf.found;
}

static bool region_visit(TSNode n, void *ctx)
{
	struct region_scan *rs = ctx;
	if (rs->refuse)
		return false;
	const struct ctx *c = rs->c;
	if (ts_type_is(n, "call_expression")) {
		struct buf why = BUF_INIT;
		enum sleep_kind k = api_may_sleep(n, c->text, &why);
		const char *name;
		size_t len = ts_call_name(n, c->text, &name);
		int idx = len ? analysis_fn_index(c->fa, name, len) : -1;
		if (k == SLEEP_NO && idx >= 0 && c->fa->fns.items[idx].sleeps != SLEEP_NO) {
			k = c->fa->fns.items[idx].sleeps;
			buf_printf(&why, "%s() (which %s)", c->fa->fns.items[idx].name,
				   c->fa->fns.items[idx].sleep_reason);
		}
		if (k != SLEEP_NO)
			rs->refuse = xasprintf("the region would contain %s at line %u, which %s sleep",
					       buf_cstr(&why), line_of(c, n), k == SLEEP_YES ? "may" : "might");
		buf_free(&why);
		return true;
	}
	if (ts_type_is(n, "return_statement")) {
		if (rs->var) {
			TSNode v = ts_node_named_child_count(n) ? ts_node_named_child(n, 0) : n;
			if (ts_node_named_child_count(n) && ts_text_is(ts_strip_parens(v, c->text), c->text, rs->var)) {
				rs->refuse = xasprintf("the value is returned at line %u; put_cpu() cannot follow it "
						       "without a temporary", line_of(c, n));
				return false;
			}
		}
		vec_push(&rs->exits, n);
		return true;
	}
	if (ts_type_is(n, "goto_statement")) {
		if (!label_inside(c, ts_field(n, "label"), rs->first, rs->last))
			vec_push(&rs->exits, n);
		return false;
	}
	if (ts_type_is(n, "break_statement") || ts_type_is(n, "continue_statement")) {
		TSNode t = jump_target(n, ts_type_is(n, "continue_statement"));
		bool inside = !ts_node_is_null(t) && ts_node_start_byte(t) >= ts_node_start_byte(rs->first) &&
			      ts_node_end_byte(t) <= ts_node_end_byte(rs->last);
		if (!inside)
			vec_push(&rs->exits, n);
		return false;
	}
	return true;
}

/*
 * Plans `put` after LAST and before every jump leaving [FIRST, LAST].
 * Returns NULL, or why not (owned).
 */
static char *plan_region(const struct ctx *c, const struct fn *f, TSNode first, TSNode last,
			 const char *var, const char *put, struct finding *fd)
{
	struct region_scan rs;
	memset(&rs, 0, sizeof rs);
	rs.c = c;
	rs.f = f;
	rs.first = first;
	rs.last = last;
	rs.var = var;
	TSNode parent = ts_node_parent(first);
	if (!ts_node_eq(parent, ts_node_parent(last)))
		return xstrdup("the uses are not in the block of the read");
	for (uint32_t i = 0; i < ts_node_named_child_count(parent) && !rs.refuse; i++) {
		TSNode s = ts_node_named_child(parent, i);
		if (ts_node_start_byte(s) < ts_node_start_byte(first) || ts_node_start_byte(s) > ts_node_start_byte(last))
			continue;
		if (ts_type_is(s, "preproc_if") || ts_type_is(s, "preproc_ifdef")) {
			rs.refuse = xasprintf("an #if/#ifdef at line %u splits the region", line_of(c, s));
			break;
		}
		ts_walk(s, region_visit, &rs);
	}
	if (rs.refuse) {
		vec_free(&rs.exits);
		return rs.refuse;
	}
	if (source_in_directive(c->src, ts_node_start_byte(first))) {
		vec_free(&rs.exits);
		return xstrdup("the site is inside a #define body");
	}
	char *stmt = xasprintf("%s;", put);
	for (size_t i = 0; i < rs.exits.len; i++)
		add_edit(c, fd, EDIT_INSERT_BEFORE, rs.exits.items[i], stmt);
	if (!is_jump(last))
		add_edit(c, fd, EDIT_INSERT_AFTER, last, stmt);
	free(stmt);
	vec_free(&rs.exits);
	return NULL;
}

static char *plan_site_region(struct ctx *c, const struct fn *f, TSNode site, const char *put,
			      struct finding *fd);

/* Calls that may compile to nothing: function-like macros of this file, debug printers. */
static bool call_may_vanish(const struct ctx *c, const char *name, size_t len)
{
	for (size_t i = 0; i < c->src->defs.len; i++) {
		const struct macro_def *d = &c->src->defs.items[i];
		if (d->function_like && strlen(d->name) == len && memcmp(d->name, name, len) == 0)
			return true;
	}
	char *s = xstrndup(name, len);
	for (char *p = s; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	bool r = strstr(s, "dbg") || strstr(s, "debug") || strcmp(s, "dprintk") == 0 ||
		 strcmp(s, "dprint") == 0 || strcmp(s, "pr_debug") == 0;
	free(s);
	return r;
}

struct count_reads {
	const struct ctx *c;
	unsigned n;
};

static bool count_reads_visit(TSNode n, void *ctx)
{
	struct count_reads *cr = ctx;
	if (call_is(cr->c, n, "smp_processor_id"))
		cr->n++;
	return true;
}

/* ---- NR_CPUS arrays ---------------------------------------------------------- */

struct array_scan {
	struct ctx *c;
};

static bool array_decl_visit(TSNode n, void *ctx)
{
	struct array_scan *as = ctx;
	struct ctx *c = as->c;
	if (ts_type_is(n, "function_definition"))
		return false;
	if (!ts_type_is(n, "declaration"))
		return true;
	uint32_t ndecl = 0;
	TSNode arr;
	memset(&arr, 0, sizeof arr);
	bool has_init = false;
	for (uint32_t i = 0; i < ts_node_named_child_count(n); i++) {
		TSNode d = ts_node_named_child(n, i);
		const char *fname = ts_node_field_name_for_child(n, i);
		(void)fname;
		if (!ts_node_eq(d, ts_field(n, "declarator")) && !ts_type_is(d, "array_declarator") &&
		    !ts_type_is(d, "init_declarator") && !ts_type_is(d, "identifier") &&
		    !ts_type_is(d, "pointer_declarator"))
			continue;
		if (ts_node_eq(d, ts_field(n, "type")))
			continue;
		ndecl++;
		TSNode a = d;
		if (ts_type_is(a, "init_declarator")) {
			has_init = true;
			a = ts_field(a, "declarator");
		}
		if (ts_type_is(a, "array_declarator")) {
			/* the outermost dimension is the last array_declarator wrapping the name */
			TSNode inner = a;
			while (ts_type_is(ts_field(inner, "declarator"), "array_declarator"))
				inner = ts_field(inner, "declarator");
			TSNode size = ts_field(inner, "size");
			if (!ts_node_is_null(size) && ts_text_is(size, c->text, "NR_CPUS"))
				arr = a;
		}
	}
	if (ts_node_is_null(arr))
		return false;
	TSNode inner = arr;
	while (ts_type_is(ts_field(inner, "declarator"), "array_declarator"))
		inner = ts_field(inner, "declarator");
	TSNode name = ts_field(inner, "declarator");
	if (!ts_type_is(name, "identifier"))
		return false;
	struct percpu_array *pa = xcalloc(1, sizeof *pa);
	pa->name = node_text(c, name);
	pa->decl = n;
	bool is_extern = false;
	struct buf attrs = BUF_INIT;
	for (uint32_t i = 0; i < ts_node_named_child_count(n); i++) {
		TSNode ch = ts_node_named_child(n, i);
		if (ts_type_is(ch, "storage_class_specifier")) {
			if (ts_text_is(ch, c->text, "static"))
				pa->is_static = true;
			if (ts_text_is(ch, c->text, "extern"))
				is_extern = true;
		}
	}
	/* element type: the type, plus inner dimensions; attributes the neutraliser blanked are dropped */
	TSNode type = ts_field(n, "type");
	struct buf t = BUF_INIT;
	for (uint32_t i = 0; i < ts_node_named_child_count(n); i++) {
		TSNode ch = ts_node_named_child(n, i);
		if (ts_type_is(ch, "type_qualifier")) {
			char *q = node_text(c, ch);
			buf_printf(&t, "%s ", q);
			free(q);
		}
	}
	char *ty = node_text(c, type);
	buf_puts(&t, ty);
	free(ty);
	for (TSNode d = arr; !ts_node_eq(d, inner); d = ts_field(d, "declarator")) {
		char *sz = node_text(c, ts_field(d, "size"));
		buf_printf(&t, "[%s]", sz);
		free(sz);
	}
	pa->type = buf_detach(&t);
	/* attributes present in the original text but not the parse text were blanked */
	uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
	for (uint32_t k = s; k < e; k++) {
		if (c->src->text[k] != c->text[k] && is_ident_start(c->src->text[k]) &&
		    (k == s || c->text[k - 1] == ' ' || c->src->text[k - 1] != c->text[k - 1])) {
			if (k > s && c->src->text[k - 1] != c->text[k - 1] && is_ident_char(c->src->text[k - 1]))
				continue;
			uint32_t w = k;
			while (w < e && is_ident_char(c->src->text[w]))
				w++;
			buf_printf(&attrs, "%s%.*s", attrs.len ? ", " : "", (int)(w - k), c->src->text + k);
			k = w;
		}
	}
	if (memmem(c->text + s, e - s, "__attribute__", 13))
		buf_printf(&attrs, "%s__attribute__((...))", attrs.len ? ", " : "");
	pa->dropped = attrs.len ? buf_detach(&attrs) : NULL;
	buf_free(&attrs);
	pa->eligible = true;
	TSNode body = ts_field(type, "body");
	if (!ts_node_is_null(body))
		pa->eligible = false, pa->why_not = xstrdup("the declaration also defines its element type");
	else if (!pa->is_static)
		pa->eligible = false, pa->why_not = xstrdup(is_extern ? "the array is extern" : "the array is not static");
	else if (ndecl != 1)
		pa->eligible = false, pa->why_not = xstrdup("the declaration declares more than one name");
	else if (has_init)
		pa->eligible = false, pa->why_not = xstrdup("the array has an initialiser");
	else if (!ts_node_eq(ts_node_parent(n), ts_tree_root_node(c->fa->tree)) &&
		 !ts_type_is(ts_node_parent(n), "translation_unit"))
		pa->eligible = false, pa->why_not = xstrdup("the declaration is inside a preprocessor conditional");
	vec_push(&c->arrays, pa);
	return false;
}

struct use_scan {
	struct ctx *c;
};

static bool array_use_visit(TSNode n, void *ctx)
{
	struct use_scan *us = ctx;
	struct ctx *c = us->c;
	if (!ts_type_is(n, "identifier"))
		return true;
	for (size_t i = 0; i < c->arrays.len; i++) {
		struct percpu_array *pa = c->arrays.items[i];
		if (!ts_text_is(n, c->text, pa->name) || node_within(n, pa->decl))
			continue;
		if (in_dead_code(c, n))
			continue;
		TSNode p = ts_node_parent(n);
		if (ts_type_is(p, "subscript_expression") && ts_node_eq(ts_field(p, "argument"), n)) {
			vec_push(&pa->uses, p);
		} else if (pa->eligible) {
			pa->eligible = false;
			pa->why_not = xasprintf("%s is used other than by subscript at line %u", pa->name,
						line_of(c, n));
		}
	}
	return false;
}

static void find_arrays(struct ctx *c)
{
	struct array_scan as = {c};
	TSNode root = ts_tree_root_node(c->fa->tree);
	ts_walk(root, array_decl_visit, &as);
	if (!c->arrays.len)
		return;
	struct use_scan us = {c};
	ts_walk(root, array_use_visit, &us);
	/* Every unprotected this-CPU site must be fixable, or the array stays as it is. */
	for (size_t i = 0; i < c->arrays.len; i++) {
		struct percpu_array *pa = c->arrays.items[i];
		for (size_t k = 0; k < pa->uses.len && pa->eligible; k++) {
			TSNode sub = pa->uses.items[k];
			TSNode idx = ts_strip_parens(ts_field(sub, "index"), c->text);
			const struct fn *g = analysis_fn_at(c->fa, ts_node_start_byte(sub));
			if (!g || !call_is(c, idx, "smp_processor_id"))
				continue;
			struct point_state ps = flow_state_at(g, ts_node_start_byte(sub));
			if (point_protected(&ps))
				continue;
			char *no = plan_site_region(c, g, sub, "put_cpu_var(x)", NULL);
			if (no) {
				pa->eligible = false;
				pa->why_not = xasprintf("the use at line %u cannot be fixed (%s)", line_of(c, sub), no);
				free(no);
			}
		}
	}
}

static struct percpu_array *array_of_subscript(const struct ctx *c, TSNode sub)
{
	if (!ts_type_is(sub, "subscript_expression"))
		return NULL;
	TSNode a = ts_field(sub, "argument");
	for (size_t i = 0; i < c->arrays.len; i++)
		if (ts_type_is(a, "identifier") && ts_text_is(a, c->text, c->arrays.items[i]->name))
			return c->arrays.items[i];
	return NULL;
}

/* ---- P001 / P002 / P003: smp_processor_id() ---------------------------------- */

/* Climbs from N through parentheses and casts. */
static TSNode up(TSNode n, TSNode *child)
{
	TSNode p = ts_node_parent(n);
	while (ts_type_is(p, "parenthesized_expression") || ts_type_is(p, "cast_expression")) {
		n = p;
		p = ts_node_parent(p);
	}
	if (child)
		*child = n;
	return p;
}

static bool is_print_call(const struct ctx *c, TSNode call)
{
	const char *name;
	size_t len = ts_call_name(call, c->text, &name);
	if (!len)
		return false;
	char *s = xstrndup(name, len);
	for (char *p = s; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	bool r = strstr(s, "print") || strstr(s, "dbg") || strstr(s, "debug") || strstr(s, "panic") ||
		 strcmp(s, "bug") == 0;
	free(s);
	return r;
}

/* True if N (a use of the value) is an argument of a print-like call. */
static bool only_printed(const struct ctx *c, TSNode n)
{
	TSNode child;
	TSNode p = up(n, &child);
	/* dprintk((KERN_DEBUG "...", cpu)): through the comma list and the extra parentheses */
	while (ts_type_is(p, "comma_expression") || ts_type_is(p, "parenthesized_expression"))
		p = ts_node_parent(p);
	return ts_type_is(p, "argument_list") && is_print_call(c, ts_node_parent(p));
}

struct var_uses {
	const struct ctx *c;
	TSNode read;        /* the smp_processor_id() call */
	const char *var;
	uint32_t after;     /* uses start after this byte */
	uint32_t stop;      /* first reassignment after `after`, or UINT32_MAX */
	VEC(TSNode) uses;
};

/* True if A lies in an #else/#elif arm that does not hold B, of a conditional that does. */
static bool in_other_arm_of(TSNode a, TSNode b)
{
	for (TSNode e = ts_node_parent(a); !ts_node_is_null(e); e = ts_node_parent(e)) {
		if (!ts_type_is(e, "preproc_else") && !ts_type_is(e, "preproc_elif"))
			continue;
		if (node_within(b, e))
			continue;
		TSNode owner = ts_node_parent(e);
		while (ts_type_is(owner, "preproc_elif"))
			owner = ts_node_parent(owner);
		if (!ts_node_is_null(owner) && node_within(b, owner))
			return true;
	}
	return false;
}

/* A and B can never both be compiled: they sit in different arms of one #if. */
static bool exclusive_arms(TSNode a, TSNode b)
{
	return in_other_arm_of(a, b) || in_other_arm_of(b, a);
}

static bool var_use_visit(TSNode n, void *ctx)
{
	struct var_uses *vu = ctx;
	if (ts_type_is(n, "assignment_expression")) {
		TSNode l = ts_field(n, "left");
		/* a reassignment ends the live range, unless it is in another
		 * configuration (`#ifdef CONFIG_SMP cpu = smp_processor_id(); #else cpu = 0;`) */
		if (ts_type_is(l, "identifier") && ts_text_is(l, vu->c->text, vu->var) &&
		    ts_node_start_byte(n) > vu->after && ts_node_start_byte(n) < vu->stop &&
		    !exclusive_arms(n, vu->read))
			vu->stop = ts_node_start_byte(n);
		return true;
	}
	if (ts_type_is(n, "identifier") && ts_text_is(n, vu->c->text, vu->var) &&
	    ts_node_start_byte(n) > vu->after)
		vec_push(&vu->uses, n);
	return true;
}

static void var_uses_find(struct var_uses *vu, TSNode body)
{
	vu->stop = UINT32_MAX;
	ts_walk(body, var_use_visit, vu);
	size_t k = 0;
	for (size_t i = 0; i < vu->uses.len; i++)
		if (ts_node_start_byte(vu->uses.items[i]) < vu->stop && !in_dead_code(vu->c, vu->uses.items[i]) &&
		    !exclusive_arms(vu->uses.items[i], vu->read))
			vu->uses.items[k++] = vu->uses.items[i];
	vu->uses.len = k;
}

/* The first call that may sleep in F strictly between offsets A and B, or a null node. */
struct sleep_find {
	const struct ctx *c;
	uint32_t a, b;
	TSNode found;
	char *why;
};

static bool sleep_visit(TSNode n, void *ctx)
{
	struct sleep_find *sf = ctx;
	if (!ts_node_is_null(sf->found))
		return false;
	if (ts_node_end_byte(n) <= sf->a || ts_node_start_byte(n) >= sf->b)
		return ts_node_end_byte(n) > sf->a && ts_node_start_byte(n) < sf->b;
	if (ts_type_is(n, "call_expression") && ts_node_start_byte(n) > sf->a) {
		struct buf why = BUF_INIT;
		enum sleep_kind k = api_may_sleep(n, sf->c->text, &why);
		const char *name;
		size_t len = ts_call_name(n, sf->c->text, &name);
		int idx = len ? analysis_fn_index(sf->c->fa, name, len) : -1;
		if (k != SLEEP_YES && idx >= 0 && sf->c->fa->fns.items[idx].sleeps == SLEEP_YES) {
			k = SLEEP_YES;
			buf_clear(&why);
			buf_printf(&why, "%s()", sf->c->fa->fns.items[idx].name);
		}
		if (k == SLEEP_YES) {
			sf->found = n;
			sf->why = buf_detach(&why);
		}
		buf_free(&why);
	}
	return true;
}

static bool find_sleep_between(const struct ctx *c, const struct fn *f, uint32_t a, uint32_t b,
			       TSNode *out, char **why)
{
	struct sleep_find sf;
	memset(&sf, 0, sizeof sf);
	sf.c = c;
	sf.a = a;
	sf.b = b;
	ts_walk(f->body, sleep_visit, &sf);
	*out = sf.found;
	*why = sf.why;
	return !ts_node_is_null(sf.found);
}

/* The statement after S in its block (skipping comments), or a null node. */
static TSNode next_stmt(TSNode s)
{
	TSNode n = ts_node_next_named_sibling(s);
	while (ts_type_is(n, "comment"))
		n = ts_node_next_named_sibling(n);
	return n;
}

static bool stmt_acquires(const struct ctx *c, TSNode s)
{
	if (!ts_type_is(s, "expression_statement"))
		return false;
	TSNode e = ts_node_named_child(s, 0);
	const char *name;
	size_t len = ts_type_is(e, "call_expression") ? ts_call_name(e, c->text, &name) : 0;
	const struct api *a = len ? api_lookup(name, len) : NULL;
	return a && a->op == API_ACQUIRE;
}

struct local_find {
	const struct ctx *c;
	const char *name;
	bool found;
};

static bool local_visit(TSNode n, void *ctx)
{
	struct local_find *lf = ctx;
	if (lf->found)
		return false;
	if (ts_type_is(n, "declaration") || ts_type_is(n, "parameter_declaration")) {
		for (uint32_t i = 0; i < ts_node_named_child_count(n); i++) {
			TSNode d = ts_node_named_child(n, i);
			if (ts_node_eq(d, ts_field(n, "type")))
				continue;
			while (!ts_node_is_null(d) && !ts_type_is(d, "identifier"))
				d = ts_field(d, "declarator");
			if (!ts_node_is_null(d) && ts_text_is(d, lf->c->text, lf->name)) {
				/* `static int cpu;` inside a function is not a local value either */
				bool is_static = false;
				for (uint32_t k = 0; k < ts_node_named_child_count(n); k++) {
					TSNode sc = ts_node_named_child(n, k);
					if (ts_type_is(sc, "storage_class_specifier") && ts_text_is(sc, lf->c->text, "static"))
						is_static = true;
				}
				lf->found = !is_static;
			}
		}
		return false;
	}
	return true;
}

/* True if NAME is a parameter or an automatic variable of F. */
static bool is_local(const struct ctx *c, const struct fn *f, const char *name)
{
	struct local_find lf = {c, name, false};
	TSNode decl = ts_field(f->def, "declarator");
	while (!ts_node_is_null(decl) && !ts_type_is(decl, "function_declarator"))
		decl = ts_field(decl, "declarator");
	if (!ts_node_is_null(decl))
		ts_walk(ts_field(decl, "parameters"), local_visit, &lf);
	if (!lf.found)
		ts_walk(f->body, local_visit, &lf);
	return lf.found;
}

/*
 * The get/put region for a site used within one statement: that statement,
 * extended to the last use of a local the statement derives from the site
 * (`s = &x[smp_processor_id()]; s->n++;` keeps s pointing at this CPU's
 * slot, so the region must cover s's uses). Returns NULL or why not (owned).
 */
static char *plan_site_region(struct ctx *c, const struct fn *f, TSNode site, const char *put,
			      struct finding *fd)
{
	TSNode st = block_stmt(site);
	if (ts_node_is_null(st))
		return xstrdup("the site is not in a statement of a block");
	if (ts_type_is(st, "return_statement"))
		return xstrdup("the value is returned; the release cannot follow it");
	/* inside the arguments of a macro: it may expand to nothing (dprintk when
	 * debugging is off), leaving the release unbalanced */
	for (TSNode a = ts_node_parent(site); !ts_node_is_null(a) && !ts_node_eq(a, st); a = ts_node_parent(a)) {
		if (!ts_type_is(a, "call_expression") || node_within(site, ts_field(a, "function")))
			continue;
		const char *mn;
		size_t ml = ts_call_name(a, c->text, &mn);
		if (ml && call_may_vanish(c, mn, ml))
			return xasprintf("the site is an argument of %.*s(), a macro that may expand to nothing; "
					 "a release after it would then be unbalanced", (int)ml, mn);
	}
	/* two reads in one statement: each would get its own pair, in an unspecified order */
	struct count_reads cr = {c, 0};
	ts_walk(st, count_reads_visit, &cr);
	if (cr.n > 1)
		return xasprintf("the statement reads the CPU number %u times; read it once into a local "
				 "with get_cpu() by hand", cr.n);
	/* a local assigned from an expression holding the site */
	TSNode dv;
	memset(&dv, 0, sizeof dv);
	TSNode def = st;
	for (TSNode a = ts_node_parent(site); !ts_node_is_null(a) && !ts_node_eq(a, st); a = ts_node_parent(a)) {
		if (ts_type_is(a, "init_declarator") && node_within(site, ts_field(a, "value"))) {
			dv = ts_field(a, "declarator");
			while (!ts_node_is_null(dv) && !ts_type_is(dv, "identifier"))
				dv = ts_field(dv, "declarator");
			def = a;
			break;
		}
		if (ts_type_is(a, "assignment_expression") && node_within(site, ts_field(a, "right"))) {
			dv = ts_field(a, "left");
			def = a;
			break;
		}
	}
	TSNode last = st;
	char *var = NULL;
	if (!ts_node_is_null(dv)) {
		/* stored through a field or pointer: it outlives the region like a global,
		 * and the region is the statement itself */
		if (!ts_type_is(dv, "identifier"))
			return plan_region(c, f, st, st, NULL, put, fd);
		var = node_text(c, dv);
		if (!is_local(c, f, var) && !call_is(c, site, "smp_processor_id")) {
			char *no = xasprintf("the value is stored in %s, which outlives any region", var);
			free(var);
			return no;
		}
		struct var_uses vu;
		memset(&vu, 0, sizeof vu);
		vu.c = c;
		vu.read = site;
		vu.var = var;
		vu.after = ts_node_end_byte(def);
		if (is_local(c, f, var))
			var_uses_find(&vu, f->body);
		for (size_t i = 0; i < vu.uses.len; i++) {
			TSNode u = vu.uses.items[i];
			TSNode s2 = ts_node_parent(u);
			while (!ts_node_is_null(s2) && !ts_node_eq(ts_node_parent(s2), ts_node_parent(st)))
				s2 = ts_node_parent(s2);
			if (ts_node_is_null(s2)) {
				char *no = xasprintf("%s, derived from it, is used at line %u outside the block",
						     var, line_of(c, u));
				vec_free(&vu.uses);
				free(var);
				return no;
			}
			if (ts_node_start_byte(s2) > ts_node_start_byte(last))
				last = s2;
		}
		vec_free(&vu.uses);
	}
	char *no = plan_region(c, f, st, last, var, put, fd);
	free(var);
	return no;
}

static void plan_define_per_cpu_rest(struct ctx *c, const struct fn *f, struct percpu_array *pa,
				     struct finding *fd);

/* Edits for one this-CPU subscript x[smp_processor_id()] of an eligible array. */
/*
 * Modern kernels: when the statement holding SLOT (the per-CPU lvalue
 * x[smp_processor_id()] or __get_cpu_var(x)) is one operation on a field
 * path of it, the this_cpu_* statement doing the same, with NAME in place of
 * SLOT: `x[smp_processor_id()].n++;` -> `this_cpu_inc(x.n);`. NULL otherwise.
 */
static char *this_cpu_op(const struct ctx *c, TSNode slot, const char *name, TSNode *stmt_out)
{
	TSNode lv = slot;
	for (TSNode p = ts_node_parent(lv); ts_type_is(p, "field_expression") &&
	     ts_node_eq(ts_field(p, "argument"), lv) && ts_text_is(ts_field(p, "operator"), c->text, ".");
	     p = ts_node_parent(p))
		lv = p;
	TSNode op = ts_node_parent(lv);
	TSNode st = ts_node_parent(op);
	if (!ts_type_is(st, "expression_statement"))
		return NULL;
	const char *src = c->src->text;
	uint32_t ls = ts_node_start_byte(lv), le = ts_node_end_byte(lv);
	uint32_t ss = ts_node_start_byte(slot), se = ts_node_end_byte(slot);
	char *target = xasprintf("%.*s%s%.*s", (int)(ss - ls), src + ls, name, (int)(le - se), src + se);
	char *out = NULL;
	if (ts_type_is(op, "update_expression")) {
		TSNode o = ts_field(op, "operator");
		bool inc = ts_text_is(o, c->text, "++");
		out = xasprintf("this_cpu_%s(%s);", inc ? "inc" : "dec", target);
	} else if (ts_type_is(op, "assignment_expression") && ts_node_eq(ts_field(op, "left"), lv)) {
		TSNode r = ts_field(op, "right");
		struct count_reads cr = {c, 0};
		ts_walk(r, count_reads_visit, &cr);
		const char *o = NULL;
		TSNode opn = ts_field(op, "operator");
		if (ts_text_is(opn, c->text, "+="))
			o = "add";
		else if (ts_text_is(opn, c->text, "-="))
			o = "sub";
		else if (ts_text_is(opn, c->text, "="))
			o = "write";
		if (o && cr.n == 0) {
			uint32_t rs = ts_node_start_byte(r), re = ts_node_end_byte(r);
			out = xasprintf("this_cpu_%s(%s, %.*s);", o, target, (int)(re - rs), src + rs);
		}
	}
	free(target);
	if (out)
		*stmt_out = st;
	return out;
}

/*
 * Modern kernels, a this-CPU slot: one this_cpu_* operation when the
 * statement is a single update; else (*this_cpu_ptr(&x)) where preemption is
 * already off. Returns true if planned; false leaves the get_cpu_var() path.
 */
static bool plan_this_cpu(struct ctx *c, TSNode slot, const char *name, bool is_protected, struct finding *fd)
{
	TSNode st;
	char *op = this_cpu_op(c, slot, name, &st);
	if (op) {
		add_edit(c, fd, EDIT_REPLACE, st, op);
		free(op);
		return true;
	}
	if (!is_protected)
		return false;
	char *rep = xasprintf("(*this_cpu_ptr(&%s))", name);
	add_edit(c, fd, EDIT_REPLACE, slot, rep);
	free(rep);
	return true;
}

static void plan_percpu_site(struct ctx *c, const struct fn *f, struct percpu_array *pa, TSNode sub,
			     bool is_protected, struct finding *fd)
{
	if (c->opts->modern && plan_this_cpu(c, sub, pa->name, is_protected, fd))
		return;
	char *rep;
	if (is_protected) {
		rep = xasprintf("__get_cpu_var(%s)", pa->name);
		add_edit(c, fd, EDIT_REPLACE, sub, rep);
	} else {
		rep = xasprintf("get_cpu_var(%s)", pa->name);
		add_edit(c, fd, EDIT_REPLACE, sub, rep);
		char *put = xasprintf("put_cpu_var(%s)", pa->name);
		char *why = plan_site_region(c, f, sub, put, fd);
		free(put);
		if (why && fd) {
			unfixable(fd, why);
			why = NULL;
		}
		free(why);
	}
	free(rep);
}

static const struct fn *fn_of(const struct ctx *c, TSNode n)
{
	return analysis_fn_at(c->fa, ts_node_start_byte(n));
}

/* An unprotected plain read of the CPU number that a region may cover as it is. */
static bool plain_read(struct ctx *c, const struct fn *f, TSNode call)
{
	TSNode child;
	TSNode p = up(call, &child);
	if (ts_type_is(p, "init_declarator") || ts_type_is(p, "assignment_expression"))
		return false; /* a variable: its own live range */
	if (ts_type_is(p, "subscript_expression")) {
		struct percpu_array *pa = array_of_subscript(c, p);
		if (pa && pa->is_static && pa->eligible)
			return false; /* becomes get_cpu_var() */
	}
	struct point_state ps = flow_state_at(f, ts_node_start_byte(call));
	return !point_protected(&ps);
}

struct read_list {
	struct ctx *c;
	VEC(TSNode) calls;
};

static bool read_list_visit(TSNode n, void *ctx)
{
	struct read_list *rl = ctx;
	if (call_is(rl->c, n, "smp_processor_id"))
		vec_push(&rl->calls, n);
	return true;
}

/*
 * get_cpu() at CALL and put_cpu() after its statement. When the next
 * statements of the block read the CPU number too, one region covers them
 * and they keep smp_processor_id(), which is legal inside it: two pairs in a
 * row could run on two CPUs. A read covered by an earlier region shares that
 * region's edits. Returns NULL or why not (owned).
 */
static char *plan_direct_get_cpu(struct ctx *c, const struct fn *f, TSNode call, struct finding *fd)
{
	for (size_t i = 0; i < c->covered.len; i++) {
		if (c->covered.items[i].offset != ts_node_start_byte(call))
			continue;
		const struct finding *owner = &c->out->findings.items[c->covered.items[i].finding];
		if (owner->fix == FIX_NONE)
			return xasprintf("it is inside the region of the read at line %u, which is not fixed",
					 owner->pos.line);
		for (size_t k = 0; fd && k < owner->edits.len; k++) {
			struct edit e = owner->edits.items[k];
			e.text = xstrdup(e.text);
			vec_push(&fd->edits, e);
		}
		if (fd)
			set_note(fd, xasprintf("stays smp_processor_id(): inside the get_cpu()/put_cpu() region "
						 "opened at line %u", owner->pos.line));
		return NULL;
	}
	TSNode st = block_stmt(call);
	struct read_list rl = {c, VEC_INIT};
	TSNode last = st;
	VEC(TSNode) extra = VEC_INIT;
	if (!ts_node_is_null(st) && ts_type_is(st, "expression_statement")) {
		ts_walk(st, read_list_visit, &rl);
		bool single = rl.calls.len == 1;
		TSNode e = ts_node_named_child(st, 0);
		if (single && !(ts_type_is(e, "assignment_expression") &&
				ts_type_is(ts_field(e, "left"), "identifier"))) {
			for (TSNode nx = next_stmt(st); ts_type_is(nx, "expression_statement"); nx = next_stmt(nx)) {
				rl.calls.len = 0;
				ts_walk(nx, read_list_visit, &rl);
				bool all_plain = rl.calls.len > 0;
				for (size_t k = 0; k < rl.calls.len && all_plain; k++)
					all_plain = plain_read(c, f, rl.calls.items[k]);
				if (!all_plain)
					break;
				for (size_t k = 0; k < rl.calls.len; k++)
					vec_push(&extra, rl.calls.items[k]);
				last = nx;
			}
		}
	}
	vec_free(&rl.calls);
	char *no;
	add_edit(c, fd, EDIT_REPLACE, call, "get_cpu()");
	if (ts_node_eq(last, st)) {
		no = plan_site_region(c, f, call, "put_cpu()", fd);
	} else {
		no = plan_region(c, f, st, last, NULL, "put_cpu()", fd);
		for (size_t k = 0; !no && fd && k < extra.len; k++) {
			struct covered cv = {ts_node_start_byte(extra.items[k]), (size_t)(fd - c->out->findings.items)};
			vec_push(&c->covered, cv);
		}
	}
	vec_free(&extra);
	return no;
}

void check_cpu_read(struct ctx *c, const struct fn *f, TSNode call, const char *kind)
{
	(void)kind;
	TSNode child;
	TSNode p = up(call, &child);
	struct point_state ps = flow_state_at(f, ts_node_start_byte(call));
	bool prot = point_protected(&ps);
	char *why = explain_state(f, &ps);
	unsigned line = line_of(c, call);

	/* per_cpu(x, smp_processor_id()) is P002's site */
	if (ts_type_is(p, "argument_list") && call_is(c, ts_node_parent(p), "per_cpu")) {
		free(why);
		return;
	}
	/* x[smp_processor_id()] */
	if (ts_type_is(p, "subscript_expression") && ts_node_eq(ts_field(p, "index"), child)) {
		struct percpu_array *pa = array_of_subscript(c, p);
		if (pa && pa->is_static) {
			if (prot) {
				add_protected(c, RULE_P001, p, f,
					      xasprintf("%s[smp_processor_id()] with preemption off", pa->name), why);
				return;
			}
			struct finding *fd = add_finding(c, RULE_P001, p, f, SEV_WARNING, CONF_HIGH,
				pa->eligible ? FIX_DEFINE_PER_CPU : FIX_GET_CPU,
				xasprintf("per-CPU array %s indexed by smp_processor_id() in preemptible code", pa->name),
				why);
			if (!fd)
				return;
			if (pa->eligible) {
				plan_percpu_site(c, f, pa, p, false, fd);
				if (fd->fix != FIX_NONE)
					plan_define_per_cpu_rest(c, f, pa, fd);
			} else {
				set_note(fd, xasprintf("%s: it stays an NR_CPUS array; the index is read with get_cpu()",
							 pa->why_not));
				char *no = plan_direct_get_cpu(c, f, call, fd);
				if (no)
					unfixable(fd, no);
			}
			return;
		}
		if (pa) {
			if (prot) {
				add_protected(c, RULE_P002, p, f,
					      xasprintf("%s[smp_processor_id()] with preemption off", pa->name), why);
				return;
			}
			struct finding *fd = add_finding(c, RULE_P002, p, f, SEV_WARNING, CONF_HIGH, FIX_GET_CPU,
				xasprintf("this-CPU element of non-static per-CPU array %s in preemptible code", pa->name),
				why);
			if (!fd)
				return;
			set_note(fd, xasprintf("%s, so it cannot become DEFINE_PER_CPU here", pa->why_not));
			char *no = plan_direct_get_cpu(c, f, call, fd);
			if (no)
				unfixable(fd, no);
			return;
		}
	}

	/* int cpu = smp_processor_id();  /  cpu = smp_processor_id(); */
	TSNode var;
	memset(&var, 0, sizeof var);
	TSNode def_node = p;
	if (ts_type_is(p, "init_declarator") && ts_node_eq(ts_field(p, "value"), child))
		var = ts_field(p, "declarator");
	else if (ts_type_is(p, "assignment_expression") && ts_node_eq(ts_field(p, "right"), child) &&
		 ts_text_is(ts_field(p, "operator"), c->text, "="))
		var = ts_field(p, "left");
	if (!ts_node_is_null(var) && !ts_type_is(var, "identifier"))
		memset(&var, 0, sizeof var);

	if (ts_node_is_null(var)) {
		/* used directly: an argument, a comparison, an index of another array */
		bool printed = only_printed(c, call);
		if (prot) {
			add_protected(c, RULE_P003, call, f, xstrdup("smp_processor_id() with preemption off"), why);
			return;
		}
		struct finding *fd = add_finding(c, RULE_P003, call, f, printed ? SEV_NOTE : SEV_WARNING,
			CONF_HIGH, FIX_GET_CPU,
			xstrdup(printed ? "smp_processor_id() in preemptible code, only printed"
					: "smp_processor_id() used in preemptible code"), why);
		if (!fd)
			return;
		char *no = plan_direct_get_cpu(c, f, call, fd);
		if (no)
			unfixable(fd, no);
		return;
	}

	/* A variable holds the CPU number: follow its uses. */
	char *name = node_text(c, var);
	if (!is_local(c, f, name)) {
		/* A global (or static) outlives any region: the number it keeps is a hint
		 * once preemption is back on. get_cpu()/put_cpu() around the store makes
		 * the read itself legal in 2.6 (DEBUG_PREEMPT warns otherwise). */
		if (prot) {
			add_protected(c, RULE_P003, call, f,
				      xasprintf("CPU number stored in %s with preemption off", name), why);
		} else {
			struct finding *fd = add_finding(c, RULE_P003, call, f, SEV_WARNING, CONF_MEDIUM, FIX_GET_CPU,
				xasprintf("CPU number from smp_processor_id() stored in %s, which is not local, "
					  "in preemptible code", name), why);
			char *no = plan_site_region(c, f, call, "put_cpu()", fd);
			if (no) {
				unfixable(fd, no);
			} else if (fd) {
				add_edit(c, fd, EDIT_REPLACE, call, "get_cpu()");
				set_note(fd, xasprintf("%s outlives the get_cpu()/put_cpu() pair: what it keeps is "
							 "only a hint once preemption is back on", name));
			}
		}
		free(name);
		return;
	}
	struct var_uses vu;
	memset(&vu, 0, sizeof vu);
	vu.c = c;
	vu.read = call;
	vu.var = name;
	vu.after = ts_node_end_byte(def_node);
	var_uses_find(&vu, f->body);
	bool all_prot = prot, all_printed = vu.uses.len > 0;
	TSNode first_unprot;
	memset(&first_unprot, 0, sizeof first_unprot);
	for (size_t i = 0; i < vu.uses.len; i++) {
		TSNode u = vu.uses.items[i];
		struct point_state us = flow_state_at(f, ts_node_start_byte(u));
		if (!point_protected(&us)) {
			all_prot = false;
			if (ts_node_is_null(first_unprot))
				first_unprot = u;
		}
		if (!only_printed(c, u))
			all_printed = false;
	}
	/* Unprotected subscripts x[cpu] of per-CPU arrays are P001/P002 sites of their own. */
	for (size_t i = 0; i < vu.uses.len; i++) {
		TSNode u = vu.uses.items[i];
		TSNode uc;
		TSNode up_ = up(u, &uc);
		struct percpu_array *pa = ts_type_is(up_, "subscript_expression") &&
			ts_node_eq(ts_field(up_, "index"), uc) ? array_of_subscript(c, up_) : NULL;
		if (!pa)
			continue;
		struct point_state us = flow_state_at(f, ts_node_start_byte(u));
		char *uwhy = explain_state(f, &us);
		enum rule_id r = pa->is_static ? RULE_P001 : RULE_P002;
		if (point_protected(&us)) {
			add_protected(c, r, up_, f, xasprintf("%s[%s] with preemption off", pa->name, name), uwhy);
			continue;
		}
		struct finding *fd = add_finding(c, r, up_, f, SEV_WARNING, CONF_HIGH,
			pa->is_static && pa->eligible ? FIX_DEFINE_PER_CPU : FIX_NONE,
			xasprintf("per-CPU array %s indexed by CPU number %s (from smp_processor_id() at line %u) "
				  "in preemptible code", pa->name, name, line),
			uwhy);
		if (!fd)
			continue;
		if (fd->fix == FIX_DEFINE_PER_CPU) {
			char *rep = xasprintf("per_cpu(%s, %s)", pa->name, name);
			add_edit(c, fd, EDIT_REPLACE, up_, rep);
			free(rep);
			plan_define_per_cpu_rest(c, f, pa, fd);
		} else {
			set_note(fd, xasprintf("%s; the CPU number read at line %u is protected by its own fix (P003)",
						 pa->why_not ? pa->why_not : "not a static array", line));
		}
	}

	if (all_prot) {
		add_protected(c, RULE_P003, call, f,
			      xasprintf("CPU number %s read and used with preemption off", name), xstrdup(why));
		goto done;
	}
	struct buf ev = BUF_INIT;
	if (prot)
		buf_printf(&ev, "read with preemption off (%s), but used at line %u where ", why,
			   line_of(c, first_unprot));
	else
		buf_printf(&ev, "read where ");
	if (prot) {
		struct point_state us = flow_state_at(f, ts_node_start_byte(first_unprot));
		point_explain(f, &us, &ev);
	} else {
		buf_puts(&ev, why);
	}
	/* a sleeping call between the read and a use: the value is stale, and no get_cpu() region may cover it */
	TSNode last_use = vu.uses.len ? vu.uses.items[vu.uses.len - 1] : call;
	TSNode sleeper;
	char *sleep_why = NULL;
	if (find_sleep_between(c, f, ts_node_end_byte(call), ts_node_start_byte(last_use), &sleeper, &sleep_why)) {
		buf_printf(&ev, "; the value is used at line %u after a possible sleep at line %u (%s)",
			   line_of(c, last_use), line_of(c, sleeper), sleep_why);
		struct finding *fd = add_finding(c, RULE_P003, call, f, SEV_WARNING, CONF_HIGH, FIX_NONE,
			xasprintf("CPU number %s from smp_processor_id() used in preemptible code", name),
			buf_detach(&ev));
		if (fd)
			set_note(fd, xasprintf("not rewritten: a get_cpu()/put_cpu() region would contain %s "
						 "at line %u, which may sleep; restructure by hand", sleep_why,
						 line_of(c, sleeper)));
		add_finding(c, RULE_P006, sleeper, f, SEV_WARNING, CONF_MEDIUM, FIX_NONE,
			xasprintf("%s may sleep inside the live range of CPU number %s (read at line %u)",
				  sleep_why, name, line),
			xasprintf("a get_cpu()/put_cpu() region from line %u to line %u would sleep in atomic "
				  "context; the CPU number is stale after the sleep anyway",
				  line, line_of(c, last_use)));
		free(sleep_why);
		goto done;
	}
	free(sleep_why);

	TSNode read_stmt = block_stmt(call);
	/* move-inside: read just before a lock, used only under it */
	TSNode nx = ts_node_is_null(read_stmt) ? read_stmt : next_stmt(read_stmt);
	bool move = !prot && !ts_node_is_null(nx) && stmt_acquires(c, nx) && vu.uses.len > 0;
	for (size_t i = 0; move && i < vu.uses.len; i++) {
		struct point_state us = flow_state_at(f, ts_node_start_byte(vu.uses.items[i]));
		if (ts_node_start_byte(vu.uses.items[i]) < ts_node_end_byte(nx) || !point_protected(&us))
			move = false;
	}
	if (move && ts_type_is(read_stmt, "declaration") && ts_node_named_child_count(read_stmt) > 2)
		move = false; /* int a, cpu = ...; keep it simple */
	if (move) {
		struct finding *fd = add_finding(c, RULE_P003, call, f, SEV_WARNING, CONF_HIGH, FIX_MOVE_INSIDE,
			xasprintf("CPU number %s read before the lock/irq-disable at line %u that protects its uses",
				  name, line_of(c, nx)),
			buf_detach(&ev));
		if (fd) {
			char *assign = xasprintf("%s = smp_processor_id();", name);
			if (ts_type_is(read_stmt, "declaration"))
				add_edit(c, fd, EDIT_REPLACE, p, name);
			else
				add_edit(c, fd, EDIT_REPLACE, read_stmt, "");
			add_edit(c, fd, EDIT_INSERT_AFTER, nx, assign);
			free(assign);
		}
		goto done;
	}
	struct finding *fd = add_finding(c, RULE_P003, call, f, all_printed ? SEV_NOTE : SEV_WARNING,
		CONF_HIGH, FIX_GET_CPU,
		xasprintf(all_printed ? "CPU number %s from smp_processor_id() is only printed, in preemptible code"
				      : "CPU number %s from smp_processor_id() used in preemptible code", name),
		buf_detach(&ev));
	if (fd) {
		/* the region: from the read's statement to the statement of the last use in the same block */
		TSNode last = read_stmt;
		char *no = NULL;
		for (size_t i = 0; i < vu.uses.len && !no; i++) {
			TSNode u = vu.uses.items[i];
			TSNode s = ts_node_parent(u);
			while (!ts_node_is_null(s) && !ts_node_eq(ts_node_parent(s), ts_node_parent(read_stmt)))
				s = ts_node_parent(s);
			if (ts_node_is_null(s)) {
				TSNode blk = ts_node_parent(read_stmt);
				if (ts_type_is(blk, "preproc_ifdef") || ts_type_is(blk, "preproc_if") ||
				    ts_type_is(blk, "preproc_else") || ts_type_is(blk, "preproc_elif"))
					no = xasprintf("the read is inside an #if/#ifdef arm (line %u) and %s is used "
						       "after it at line %u: get_cpu()/put_cpu() could not be balanced "
						       "in every configuration", line_of(c, blk), name, line_of(c, u));
				else
					no = xasprintf("%s is used at line %u outside the block it is read in",
						       name, line_of(c, u));
			}
			else if (ts_node_start_byte(s) > ts_node_start_byte(last))
				last = s;
		}
		if (ts_node_is_null(read_stmt))
			no = xstrdup("the read is not in a statement of a block");
		if (!no) {
			add_edit(c, fd, EDIT_REPLACE, call, "get_cpu()");
			no = plan_region(c, f, read_stmt, last, name, "put_cpu()", fd);
		}
		if (no) {
			unfixable(fd, no);
		}
	}
done:
	free(why);
	free(name);
	vec_free(&vu.uses);
}

/* Attaches the declaration edit and the edits of x's other uses to the first P001 finding. */
static void plan_define_per_cpu_rest(struct ctx *c, const struct fn *f, struct percpu_array *pa,
				     struct finding *fd)
{
	(void)f;
	if (pa->planned)
		return;
	pa->planned = true;
	char *decl = xasprintf("static DEFINE_PER_CPU(%s, %s);", pa->type, pa->name);
	add_edit(c, fd, EDIT_REPLACE, pa->decl, decl);
	free(decl);
	if (pa->dropped) {
		char *note = xasprintf("DEFINE_PER_CPU data is per-CPU by construction; dropped: %s", pa->dropped);
		free(fd->fix_note);
		fd->fix_note = note;
	}
	/* every other use: protected this-CPU -> __get_cpu_var, x[i] -> per_cpu(x, i) */
	for (size_t i = 0; i < pa->uses.len; i++) {
		TSNode sub = pa->uses.items[i];
		TSNode idx = ts_strip_parens(ts_field(sub, "index"), c->text);
		const struct fn *g = fn_of(c, sub);
		if (call_is(c, idx, "smp_processor_id")) {
			struct point_state ps = g ? flow_state_at(g, ts_node_start_byte(sub)) : (struct point_state){0};
			if (g && point_protected(&ps))
				plan_percpu_site(c, g, pa, sub, true, fd);
			continue; /* unprotected ones are findings with their own edits */
		}
		char *it = orig_text(c, ts_field(sub, "index"));
		char *rep = xasprintf("per_cpu(%s, %s)", pa->name, it);
		add_edit(c, fd, EDIT_REPLACE, sub, rep);
		free(rep);
		free(it);
	}
}

/* ---- P002: __get_cpu_var(x), per_cpu(x, smp_processor_id()) ------------------ */

static void cpu_var_site(struct ctx *c, const struct fn *f, TSNode call, bool is_per_cpu)
{
	TSNode args = ts_field(call, "arguments");
	if (ts_node_named_child_count(args) < 1)
		return;
	if (is_per_cpu) {
		if (ts_node_named_child_count(args) != 2 ||
		    !call_is(c, ts_strip_parens(ts_node_named_child(args, 1), c->text), "smp_processor_id"))
			return;
	}
	char *var = node_text(c, ts_node_named_child(args, 0));
	struct point_state ps = flow_state_at(f, ts_node_start_byte(call));
	char *why = explain_state(f, &ps);
	const char *form = is_per_cpu ? "per_cpu(%s, smp_processor_id())" : "__get_cpu_var(%s)";
	char *shown = xasprintf(form, var);
	bool prot = point_protected(&ps);
	if (prot && c->opts->modern && !is_per_cpu) {
		/* safe where it is, but modern kernels have no __get_cpu_var() */
		struct finding *fd = add_finding(c, RULE_P002, call, f, SEV_NOTE, CONF_HIGH, FIX_GET_CPU_VAR,
			xasprintf("%s: modern kernels have no __get_cpu_var()", shown), why);
		if (fd)
			plan_this_cpu(c, call, var, true, fd);
	} else if (prot) {
		add_protected(c, RULE_P002, call, f, xasprintf("%s with preemption off", shown), why);
	} else {
		struct finding *fd = add_finding(c, RULE_P002, call, f, SEV_WARNING, CONF_HIGH, FIX_GET_CPU_VAR,
			xasprintf("%s in preemptible code", shown), why);
		if (fd && c->opts->modern && plan_this_cpu(c, call, var, false, fd)) {
			/* one this_cpu_* operation */
		} else if (fd) {
			char *rep = xasprintf("get_cpu_var(%s)", var);
			char *put = xasprintf("put_cpu_var(%s)", var);
			add_edit(c, fd, EDIT_REPLACE, call, rep);
			char *no = plan_site_region(c, f, call, put, fd);
			if (no)
				unfixable(fd, no);
			free(rep);
			free(put);
		}
	}
	free(shown);
	free(var);
}

void check_cpu_var(struct ctx *c, const struct fn *f, TSNode site, const char *kind)
{
	cpu_var_site(c, f, site, strcmp(kind, "per_cpu") == 0);
}

/* ---- P004: reschedule checks ------------------------------------------------- */

static bool is_schedule_stmt(const struct ctx *c, TSNode s)
{
	if (!ts_type_is(s, "expression_statement") || ts_node_named_child_count(s) != 1)
		return false;
	return call_is(c, ts_node_named_child(s, 0), "schedule");
}

static bool is_running_stmt(const struct ctx *c, TSNode s)
{
	if (!ts_type_is(s, "expression_statement") || ts_node_named_child_count(s) != 1)
		return false;
	TSNode e = ts_node_named_child(s, 0);
	if (call_is(c, e, "set_current_state") || call_is(c, e, "__set_current_state")) {
		TSNode a = ts_field(e, "arguments");
		return ts_node_named_child_count(a) == 1 && ts_text_is(ts_node_named_child(a, 0), c->text, "TASK_RUNNING");
	}
	if (ts_type_is(e, "assignment_expression")) {
		TSNode l = ts_field(e, "left");
		return ts_text_is(l, c->text, "current->state") &&
		       ts_text_is(ts_field(e, "right"), c->text, "TASK_RUNNING");
	}
	return false;
}

/* `schedule();` or `{ [set_current_state(TASK_RUNNING);] schedule(); }` (comments allowed). */
static bool is_resched_body(const struct ctx *c, TSNode body)
{
	if (is_schedule_stmt(c, body))
		return true;
	if (!ts_type_is(body, "compound_statement"))
		return false;
	TSNode st[3];
	unsigned n = 0;
	for (uint32_t i = 0; i < ts_node_named_child_count(body); i++) {
		TSNode ch = ts_node_named_child(body, i);
		if (ts_type_is(ch, "comment"))
			continue;
		if (n == 2)
			return false;
		st[n++] = ch;
	}
	if (n == 1)
		return is_schedule_stmt(c, st[0]);
	return n == 2 && is_running_stmt(c, st[0]) && is_schedule_stmt(c, st[1]);
}

struct comment_collect {
	const struct ctx *c;
	struct buf *out;
	const char *indent;
};

static bool comment_visit(TSNode n, void *ctx)
{
	struct comment_collect *cc = ctx;
	if (!ts_type_is(n, "comment"))
		return true;
	char *t = orig_text(cc->c, n);
	buf_printf(cc->out, "%s\n%s", t, cc->indent);
	free(t);
	return false;
}

static void resched_test(struct ctx *c, const struct fn *f, TSNode test, bool is_field)
{
	if (version_guarded(c, test)) {
		add_protected(c, RULE_P004, test, f, xstrdup("reschedule check in version-guarded code"),
			      xstrdup("inside #if on LINUX_VERSION_CODE: a compatibility shim, left alone"));
		return;
	}
	TSNode child;
	TSNode p = up(test, &child);
	if (is_field && ts_type_is(p, "assignment_expression") && ts_node_eq(ts_field(p, "left"), child)) {
		struct finding *fd = add_finding(c, RULE_P004, test, f, SEV_WARNING, CONF_HIGH, FIX_NONE,
			xstrdup("writes current->need_resched, which 2.6 does not have"),
			xstrdup("the 2.4 task field is gone; 2.6 sets the flag with set_tsk_need_resched()"));
		if (fd)
			set_note(fd, xstrdup("use set_tsk_need_resched(current) by hand"));
		return;
	}
	/* climb through unlikely()/likely() */
	TSNode cond = child;
	while (ts_type_is(p, "argument_list") &&
	       (call_is(c, ts_node_parent(p), "unlikely") || call_is(c, ts_node_parent(p), "likely"))) {
		p = up(ts_node_parent(p), &cond);
	}
	TSNode ifs = ts_node_parent(cond);
	bool exact = ts_type_is(cond, "parenthesized_expression") && ts_type_is(ifs, "if_statement") &&
		     ts_node_eq(ts_field(ifs, "condition"), cond);
	const char *shape = NULL;
	if (!exact)
		shape = "the test is part of a larger expression";
	else if (!ts_node_is_null(ts_field(ifs, "alternative")))
		shape = "the if has an else branch";
	else if (ts_type_is(ts_node_parent(ifs), "else_clause"))
		shape = "the test is an else-if";
	else if (!is_resched_body(c, ts_field(ifs, "consequence")))
		shape = "the branch does more than schedule()";
	struct point_state ps = flow_state_at(f, ts_node_start_byte(test));
	char *testtext = orig_text(c, test);
	if (!shape) {
		char *ev = xasprintf("`if (%s) schedule();` is the 2.4 spelling of cond_resched()", testtext);
		struct finding *fd = add_finding(c, RULE_P004, test, f, SEV_WARNING, CONF_HIGH, FIX_COND_RESCHED,
			xstrdup("2.4 reschedule check: use cond_resched()"), ev);
		if (fd && point_protected(&ps)) {
			struct buf w = BUF_INIT;
			buf_puts(&w, "not rewritten: preemption is off here (");
			point_explain(f, &ps, &w);
			buf_puts(&w, "), so schedule() here already sleeps in atomic context (P006)");
			unfixable(fd, buf_detach(&w));
		} else if (fd) {
			struct buf t = BUF_INIT;
			char *ind = indent_of(c, ifs);
			struct comment_collect cc = {c, &t, ind};
			ts_walk(ifs, comment_visit, &cc);
			buf_puts(&t, "cond_resched();");
			add_edit(c, fd, EDIT_REPLACE, ifs, buf_cstr(&t));
			buf_free(&t);
			free(ind);
		}
	} else if (is_field) {
		char *ev = xasprintf("%s; only the test changes", shape);
		struct finding *fd = add_finding(c, RULE_P004, test, f, SEV_WARNING, CONF_HIGH,
			FIX_NEED_RESCHED_CALL, xstrdup("2.4 current->need_resched: use need_resched()"), ev);
		if (fd && source_in_directive(c->src, ts_node_start_byte(test)))
			unfixable(fd, xstrdup("inside a #define body: rewrite the macro by hand"));
		else
			add_edit(c, fd, EDIT_REPLACE, test, "need_resched()");
	}
	free(testtext);
}

/* `current->policy |= SCHED_YIELD;` [then schedule();] */
static void check_yield(struct ctx *c, const struct fn *f, TSNode stmt)
{
	if (version_guarded(c, stmt))
		return;
	TSNode nx = next_stmt(stmt);
	bool sched = !ts_node_is_null(nx) && is_schedule_stmt(c, nx);
	struct finding *fd = add_finding(c, RULE_P004, stmt, f, SEV_WARNING, CONF_HIGH,
		sched ? FIX_YIELD : FIX_NONE, xstrdup("2.4 SCHED_YIELD: use yield()"),
		xstrdup(sched ? "`current->policy |= SCHED_YIELD; schedule();` is the 2.4 spelling of yield()"
			      : "2.6 has no SCHED_YIELD policy bit"));
	if (!fd)
		return;
	if (sched) {
		add_edit(c, fd, EDIT_REPLACE, stmt, "");
		add_edit(c, fd, EDIT_REPLACE, ts_node_named_child(nx, 0), "yield()");
	} else {
		set_note(fd, xstrdup("not followed by schedule(): call yield() where the task gives up the CPU"));
	}
}

/* ---- P005: preempt_enable_no_resched() ------------------------------------------ */

static bool p005_good_call(const struct ctx *c, TSNode call)
{
	return call_is(c, call, "preempt_check_resched") || call_is(c, call, "schedule") ||
	       call_is(c, call, "preempt_enable") || call_is(c, call, "cond_resched") ||
	       call_is(c, call, "put_cpu") || call_is(c, call, "yield");
}

/* Follows the CFG from CALL; returns the first bad point (return / may-sleep) or null. */
static TSNode p005_search(const struct ctx *c, const struct fn *f, TSNode call, const char **what)
{
	TSNode bad;
	memset(&bad, 0, sizeof bad);
	uint32_t start = cfg_node_at(&f->cfg, ts_node_start_byte(call));
	if (start == UINT32_MAX)
		return bad;
	size_t n = f->cfg.nodes.len;
	uint8_t *seen = xcalloc(n, 1);
	VEC(uint32_t) work = VEC_INIT;
	vec_push(&work, start);
	bool first = true;
	while (work.len && ts_node_is_null(bad)) {
		uint32_t id = work.items[--work.len];
		if (!first && seen[id])
			continue;
		seen[id] = 1;
		const struct cfg_node *node = &f->cfg.nodes.items[id];
		bool stop = false;
		const event_vec *ev = &f->events.items[id];
		for (size_t e = 0; e < ev->len && !stop; e++) {
			TSNode ec = ev->items[e].call;
			if (first && ts_node_end_byte(ec) <= ts_node_end_byte(call))
				continue;
			if (p005_good_call(c, ec)) {
				stop = true;
				break;
			}
			enum sleep_kind k = api_may_sleep(ec, c->text, NULL);
			const char *name;
			size_t len = ts_call_name(ec, c->text, &name);
			int idx = len ? analysis_fn_index(c->fa, name, len) : -1;
			if (k != SLEEP_NO || (idx >= 0 && c->fa->fns.items[idx].sleeps != SLEEP_NO)) {
				bad = ec;
				*what = "a call that may sleep";
				stop = true;
			}
		}
		first = false;
		if (stop)
			continue;
		if (node->kind == CFG_RETURN) {
			bad = node->ast;
			*what = "the return";
			break;
		}
		if (id == CFG_EXIT_ID) {
			bad = f->body;
			*what = "the end of the function";
			break;
		}
		for (size_t s = 0; s < node->succ.len; s++)
			if (!seen[node->succ.items[s].to])
				vec_push(&work, node->succ.items[s].to);
	}
	free(seen);
	vec_free(&work);
	return bad;
}

/* Modern target: modules may not call preempt_check_resched(); preempt_enable() reschedules. */
static void check_check_resched(struct ctx *c, const struct fn *f, TSNode call)
{
	if (!c->opts->modern)
		return;
	TSNode st = ts_node_parent(call);
	struct finding *fd = add_finding(c, RULE_P005, call, f, SEV_WARNING, CONF_HIGH, FIX_CHECK_RESCHED,
		xstrdup("preempt_check_resched() is not available to modules on modern kernels"),
		xstrdup("the preempt_enable_no_resched() it follows becomes preempt_enable(), which "
			"reschedules itself"));
	if (!fd)
		return;
	if (ts_type_is(st, "expression_statement"))
		add_edit(c, fd, EDIT_REPLACE, st, "");
	else
		unfixable(fd, xstrdup("the call is not a statement of its own"));
}

static void noresched_site(struct ctx *c, const struct fn *f, TSNode call, bool misspelt)
{
	const char *what = NULL;
	TSNode bad = p005_search(c, f, call, &what);
	if (ts_node_is_null(bad) && !misspelt && !c->opts->modern)
		return;
	struct buf ev = BUF_INIT;
	if (!ts_node_is_null(bad)) {
		unsigned l = ts_node_eq(bad, f->body) ? source_pos(c->src, ts_node_end_byte(bad) - 1).line
						      : line_of(c, bad);
		buf_printf(&ev, "no preempt_check_resched() or schedule() before %s at line %u", what, l);
	} else {
		buf_puts(&ev, "a reschedule check follows on every path");
		if (c->opts->modern)
			buf_puts(&ev, "; modules on modern kernels may not call preempt_enable_no_resched()");
	}
	struct finding *fd = add_finding(c, RULE_P005, call, f, SEV_WARNING, CONF_HIGH,
		FIX_CHECK_RESCHED,
		misspelt ? xstrdup("preempt_enable_noresched() is a misspelling of preempt_enable_no_resched()")
			 : xstrdup("preempt_enable_no_resched() without a later preempt_check_resched()"),
		buf_detach(&ev));
	if (!fd)
		return;
	if (c->opts->modern) {
		/* modules may not call preempt_enable_no_resched() or preempt_check_resched() */
		add_edit(c, fd, EDIT_REPLACE, call, "preempt_enable()");
		return;
	}
	if (misspelt)
		add_edit(c, fd, EDIT_REPLACE, call, "preempt_enable_no_resched()");
	if (!ts_node_is_null(bad)) {
		TSNode st = block_stmt(call);
		if (ts_node_is_null(st) || !ts_type_is(st, "expression_statement"))
			unfixable(fd, xstrdup("the call is not a statement of its own"));
		else
			add_edit(c, fd, EDIT_INSERT_AFTER, st, "preempt_check_resched();");
	}
}

void check_noresched(struct ctx *c, const struct fn *f, TSNode site, const char *kind)
{
	if (strcmp(kind, "check_resched") == 0)
		check_check_resched(c, f, site);
	else
		noresched_site(c, f, site, strcmp(kind, "noresched_misspelt") == 0);
}

/* ---- P006: sleeping while atomic ------------------------------------------------ */

void check_sleep(struct ctx *c, const struct fn *f, TSNode call, const char *kind)
{
	(void)kind;
	struct buf why = BUF_INIT;
	enum sleep_kind k = api_may_sleep(call, c->text, &why);
	const char *name;
	size_t len = ts_call_name(call, c->text, &name);
	int idx = len ? analysis_fn_index(c->fa, name, len) : -1;
	bool via_callee = false;
	if (k != SLEEP_YES && idx >= 0 && c->fa->fns.items[idx].sleeps == SLEEP_YES) {
		const struct fn *g = &c->fa->fns.items[idx];
		via_callee = true;
		buf_clear(&why);
		buf_printf(&why, "%s() (which %s)", g->name, g->sleep_reason);
		k = SLEEP_YES;
	}
	if (k != SLEEP_YES) {
		buf_free(&why);
		return;
	}
	struct point_state ps = flow_state_at(f, ts_node_start_byte(call));
	if (!point_protected(&ps)) {
		buf_free(&why);
		return;
	}
	/* 2.4's cli()/save_flags() + sleep_on() is an old idiom: medium confidence */
	bool irq_only = !ps.atomic_ctx && !ps.entry_held && ps.must_acq >= 0 &&
			strcmp(f->acqs.items[ps.must_acq].key, "irq") == 0;
	add_finding(c, RULE_P006, call, f, irq_only ? SEV_WARNING : SEV_ERROR,
		    irq_only || ps.entry_held || via_callee ? CONF_MEDIUM : CONF_HIGH, FIX_NONE,
		    xasprintf("%s may sleep, but preemption is off here", buf_cstr(&why)),
		    explain_state(f, &ps));
	buf_free(&why);
}

/* ---- P007: unbalanced ------------------------------------------------------------ */

void check_balance(struct ctx *c, const struct fn *f, TSNode site, const char *kind)
{
	(void)site;
	(void)kind;
	for (size_t i = 0; i < f->acqs.len; i++) {
		const struct acq *a = &f->acqs.items[i];
		bool m, y;
		if (!flow_exit_state(f, (uint32_t)i, &m, &y))
			return;
		if (m || !y)
			continue; /* released everywhere, or held on every exit by design */
		if (i > 0 && ts_node_eq(f->acqs.items[i - 1].call, a->call))
			continue; /* one report per call (spin_lock_irqsave: lock + irq) */
		/* only when this function also releases it, and not a caller's lock it retakes */
		if (!fn_releases(f, a->key) || fn_drops_caller_lock(f, a->key))
			continue;
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

/* ---- driver ------------------------------------------------------------------------ */

struct site_scan {
	struct ctx *c;
	const struct fn *f;
};

static bool macro_tests_resched(const struct ctx *c, const char *name, size_t len)
{
	for (size_t i = 0; i < c->src->defs.len; i++) {
		const struct macro_def *d = &c->src->defs.items[i];
		if (d->function_like && strlen(d->name) == len && memcmp(d->name, name, len) == 0)
			return strstr(d->body, "need_resched") != NULL;
	}
	return false;
}

/* The #define called NAME (function-like or not) whose body tests need_resched, or NULL. */
static const struct macro_def *resched_macro(const struct ctx *c, TSNode ident, bool function_like)
{
	for (size_t i = 0; i < c->src->defs.len; i++) {
		const struct macro_def *d = &c->src->defs.items[i];
		if (d->function_like == function_like && ts_text_is(ident, c->text, d->name))
			return strstr(d->body, "need_resched") ? d : NULL;
	}
	return NULL;
}

/* `RESCHED_CHECK();` where the macro is `if (<test>) schedule()`: the whole check. */
static bool check_macro_stmt(struct ctx *c, const struct fn *f, TSNode call, const struct macro_def *d)
{
	TSNode st = ts_node_parent(call);
	if (!ts_type_is(st, "expression_statement") || strncmp(d->body, "if", 2) != 0 ||
	    !strstr(d->body, "schedule()") || strstr(d->body, "else"))
		return false;
	if (version_guarded(c, call))
		return true;
	struct finding *fd = add_finding(c, RULE_P004, call, f, SEV_WARNING, CONF_HIGH, FIX_COND_RESCHED,
		xasprintf("2.4 reschedule check in macro %s(): use cond_resched()", d->name),
		xasprintf("%s() expands to `%s`, the 2.4 spelling of cond_resched()", d->name, d->body));
	struct point_state ps = flow_state_at(f, ts_node_start_byte(call));
	if (fd && point_protected(&ps))
		unfixable(fd, xstrdup("not rewritten: preemption is off here, so the schedule() in the macro "
				      "already sleeps in atomic context (P006)"));
	else
		add_edit(c, fd, EDIT_REPLACE, st, "cond_resched();");
	return true;
}

/* Host predicates of grammars/sites.scm. */
static bool site_host_pred(const char *name, TSNode n, void *ctx)
{
	const struct ctx *c = ((struct site_scan *)ctx)->c;
	uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
	if (strcmp(name, "resched-test?") == 0)
		return name_eq(c->text + s, e - s, "need_resched") || macro_tests_resched(c, c->text + s, e - s);
	if (strcmp(name, "resched-macro?") == 0) {
		TSNode p = ts_node_parent(n);
		if (ts_type_is(p, "call_expression") && ts_node_eq(ts_field(p, "function"), n))
			return false;
		return resched_macro(c, n, false) != NULL;
	}
	return false;
}

void check_resched(struct ctx *c, const struct fn *f, TSNode site, const char *kind)
{
	if (strcmp(kind, "yield") == 0) {
		check_yield(c, f, site);
	} else if (strcmp(kind, "resched_call") == 0) {
		const struct macro_def *d = resched_macro(c, ts_field(site, "function"), true);
		if (!d || !check_macro_stmt(c, f, site, d))
			resched_test(c, f, site, false);
	} else {
		resched_test(c, f, site, strcmp(kind, "resched_field") == 0);
	}
}

/* The rules with a checker, and the sites each decides (rules/rules.def). */
#define RULE_MAX_SITES 5
static const struct rule_entry {
	enum rule_id rule;
	rule_checker *check;
	const char *sites[RULE_MAX_SITES]; /* NULL-terminated */
} registry[] = {
#define CHECK(fn) fn
#define NO_CHECK NULL
#define SITES(...) {__VA_ARGS__}
#define NO_SITES {NULL}
#define RULE(id, code, name, sev, summary, help, check, sites, fixes) {RULE_##id, check, sites},
#include "rules/rules.def"
#undef CHECK
#undef NO_CHECK
#undef SITES
#undef NO_SITES
};

/* The entry whose checker decides sites of KIND, or NULL. */
static const struct rule_entry *site_entry(const char *kind)
{
	for (size_t i = 0; i < ARRAY_SIZE(registry); i++)
		for (size_t k = 0; k < RULE_MAX_SITES && registry[i].sites[k]; k++)
			if (strcmp(registry[i].sites[k], kind) == 0)
				return &registry[i];
	return NULL;
}

int rules_site_rule(const char *kind)
{
	const struct rule_entry *e = site_entry(kind);
	return e ? (int)e->rule : -1;
}

static void site_match(const struct query_match *m, void *ctx)
{
	struct site_scan *ss = ctx;
	TSNode n;
	const char *kind = query_site(m, &n);
	if (!kind || in_dead_code(ss->c, n))
		return;
	const struct rule_entry *e = site_entry(kind);
	if (e && e->check)
		e->check(ss->c, ss->f, n, kind);
}

/* Runs the checkers that take the whole function (RULE_SITE_FUNCTION), if their rule is on. */
static void function_checks(struct ctx *c, const struct fn *f)
{
	for (size_t i = 0; i < ARRAY_SIZE(registry); i++)
		for (size_t k = 0; k < RULE_MAX_SITES && registry[i].sites[k]; k++)
			if (strcmp(registry[i].sites[k], RULE_SITE_FUNCTION) == 0 && registry[i].check &&
			    (c->opts->rules & (1u << registry[i].rule)))
				registry[i].check(c, f, f->body, RULE_SITE_FUNCTION);
}

int rules_run(const struct file_analysis *fa, const struct scan_options *opts, struct scan_result *out)
{
	const struct query *sites = query_get("sites.scm");
	if (!sites)
		return -1;
	struct ctx c;
	memset(&c, 0, sizeof c);
	c.fa = fa;
	c.src = fa->src;
	c.text = fa->src->parse_text;
	c.opts = opts;
	c.out = out;
	find_arrays(&c);
	for (size_t i = 0; i < fa->fns.len; i++) {
		const struct fn *f = &fa->fns.items[i];
		if (in_dead_code(&c, f->def))
			continue;
		struct site_scan ss = {&c, f};
		query_run(sites, f->body, c.text, site_host_pred, &ss, site_match, &ss);
		function_checks(&c, f);
	}
	/* #define bodies are not sites: each use of a macro that tests need_resched is
	 * reported and fixed where it is used (check_macro_stmt, check_resched). */
	for (size_t i = 0; i < c.arrays.len; i++) {
		struct percpu_array *pa = c.arrays.items[i];
		free(pa->name);
		free(pa->why_not);
		free(pa->type);
		free(pa->dropped);
		vec_free(&pa->uses);
		free(pa);
	}
	vec_free(&c.arrays);
	vec_free(&c.covered);
	return 0;
}
