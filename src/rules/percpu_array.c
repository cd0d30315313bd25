/* File-scope `T x[NR_CPUS]` arrays: discovery, eligibility for DEFINE_PER_CPU, and the edits of their uses. */
#define _GNU_SOURCE /* memmem */
#include "rules/ctx.h"

#include <stdlib.h>
#include <string.h>


/*
 * TYPE on one line for a message: each `{ ... }` body abbreviated and
 * blanks (newlines included) folded, so that a finding stays one line
 * (`union { struct schedule_data { ... } schedule_data; ... }`).
 */
static char *one_line_type(const char *type)
{
	struct buf b = BUF_INIT;
	int depth = 0;
	for (const char *p = type; *p; p++) {
		if (*p == '{') {
			if (depth++ == 0)
				buf_puts(&b, "{ ... }");
		} else if (*p == '}') {
			depth -= depth > 0;
		} else if (depth == 0 && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
			if (b.len && b.ptr[b.len - 1] != ' ')
				buf_putc(&b, ' ');
		} else if (depth == 0) {
			buf_putc(&b, *p);
		}
	}
	while (b.len && b.ptr[b.len - 1] == ' ')
		b.ptr[--b.len] = '\0';
	return buf_detach(&b);
}

/* What goes between a type and a name: nothing after a star (`struct socket *x`). */
static const char *type_sep(const char *type)
{
	size_t n = strlen(type);
	return n && type[n - 1] == '*' ? "" : " ";
}

/* ---- NR_CPUS arrays: discovery ------------------------------------------------ */

/* The innermost array_declarator of ARR: the one whose declarator is the name. */
static TSNode innermost_array(TSNode arr)
{
	TSNode inner = arr;
	while (ts_type_is(ts_field(inner, "declarator"), "array_declarator"))
		inner = ts_field(inner, "declarator");
	return inner;
}

/*
 * The declarator of declaration N whose outermost dimension is NR_CPUS, or a
 * null node. *NDECL gets the number of names N declares, *INIT the value of
 * an initialiser (left alone when none).
 */
static TSNode nr_cpus_declarator(const struct ctx *c, TSNode n, uint32_t *ndecl, TSNode *init)
{
	TSNode arr;
	memset(&arr, 0, sizeof arr);
	for (uint32_t i = 0; i < ts_node_named_child_count(n); i++) {
		TSNode d = ts_node_named_child(n, i);
		if (!ts_node_eq(d, ts_field(n, "declarator")) && !ts_type_is(d, "array_declarator") &&
		    !ts_type_is(d, "init_declarator") && !ts_type_is(d, "identifier") &&
		    !ts_type_is(d, "pointer_declarator"))
			continue;
		if (ts_node_eq(d, ts_field(n, "type")))
			continue;
		(*ndecl)++;
		TSNode a = d;
		if (ts_type_is(a, "init_declarator")) {
			*init = ts_field(a, "value");
			a = ts_field(a, "declarator");
		}
		/* an array of pointers, `T *x[NR_CPUS]`: the array is inside the stars */
		while (ts_type_is(a, "pointer_declarator"))
			a = ts_field(a, "declarator");
		/* the outermost dimension is the last array_declarator wrapping the name */
		if (ts_type_is(a, "array_declarator")) {
			TSNode in = innermost_array(a), size = ts_field(in, "size");
			if (!ts_node_is_null(size) && ts_text_is(size, c->text, "NR_CPUS"))
				arr = a;
			/* `extern T x[];` of an array the tree converts */
			TSNode nm = ts_field(in, "declarator");
			if (ts_node_is_null(size) && ts_type_is(nm, "identifier")) {
				char *name = node_text(c, nm);
				const struct tree_array *t = tree_array_find(c->opts->arrays, name, c->src->path);
				if (t && !t->why_not)
					arr = a;
				free(name);
			}
		}
	}
	return arr;
}

/* The element type for DEFINE_PER_CPU: qualifiers, the type, and the inner dimensions. */
static char *element_type(const struct ctx *c, TSNode n, TSNode arr, TSNode inner)
{
	struct buf t = BUF_INIT;
	for (uint32_t i = 0; i < ts_node_named_child_count(n); i++) {
		TSNode ch = ts_node_named_child(n, i);
		if (ts_type_is(ch, "type_qualifier")) {
			char *q = node_text(c, ch);
			buf_printf(&t, "%s ", q);
			free(q);
		}
	}
	char *ty = node_text(c, ts_field(n, "type"));
	buf_puts(&t, ty);
	free(ty);
	/* `T *x[NR_CPUS]`: each pointer_declarator around the array is a star of the element */
	bool star = false;
	for (TSNode p = ts_parent(arr); !ts_node_is_null(p) && !ts_node_eq(p, n); p = ts_parent(p))
		if (ts_type_is(p, "pointer_declarator")) {
			buf_puts(&t, star ? "*" : " *");
			star = true;
		}
	for (TSNode d = arr; !ts_node_eq(d, inner); d = ts_field(d, "declarator")) {
		char *sz = node_text(c, ts_field(d, "size"));
		buf_printf(&t, "[%s]", sz);
		free(sz);
	}
	return buf_detach(&t);
}

/*
 * The attributes of declaration N that DEFINE_PER_CPU drops: those present
 * in the original text but blanked in the parse text by the neutraliser,
 * and any __attribute__. NULL when none.
 */
static char *dropped_attributes(const struct ctx *c, TSNode n)
{
	struct buf attrs = BUF_INIT;
	bool attribute = false;
	uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
	for (uint32_t k = s; k < e; k++) {
		if (c->src->text[k] != c->text[k] && is_ident_start(c->src->text[k]) &&
		    (k == s || c->text[k - 1] == ' ' || c->src->text[k - 1] != c->text[k - 1])) {
			if (k > s && c->src->text[k - 1] != c->text[k - 1] && is_ident_char(c->src->text[k - 1]))
				continue;
			uint32_t w = k;
			while (w < e && is_ident_char(c->src->text[w]))
				w++;
			if (w - k >= 11 && memcmp(c->src->text + k, "__attribute", 11) == 0)
				attribute = true; /* blanked before an initialiser (source.c) */
			else
				buf_printf(&attrs, "%s%.*s", attrs.len ? ", " : "", (int)(w - k), c->src->text + k);
			k = w;
		}
	}
	if (attribute || memmem(c->text + s, e - s, "__attribute__", 13))
		buf_printf(&attrs, "%s__attribute__((...))", attrs.len ? ", " : "");
	char *out = attrs.len ? buf_detach(&attrs) : NULL;
	buf_release(&attrs);
	return out;
}

/*
 * The one real member of a cache-line padding union `union { T v; char
 * pad[...]; }` (every other member a char array), or a null node.
 */
static TSNode padding_member(const struct ctx *c, TSNode type)
{
	TSNode none, member;
	memset(&none, 0, sizeof none);
	member = none;
	TSNode body = ts_field(type, "body");
	if (!ts_type_is(type, "union_specifier") || ts_node_is_null(body))
		return none;
	for (uint32_t i = 0; i < ts_node_named_child_count(body); i++) {
		TSNode fd = ts_node_named_child(body, i);
		if (ts_type_is(fd, "comment"))
			continue;
		TSNode d = ts_field(fd, "declarator");
		if (!ts_type_is(fd, "field_declaration") || ts_node_is_null(d))
			return none;
		TSNode t = ts_field(fd, "type");
		bool is_char = ts_text_is(t, c->text, "char") ||
			       (ts_type_is(t, "sized_type_specifier") && ts_text_is(t, c->text, "unsigned char"));
		if (ts_type_is(d, "array_declarator") && is_char &&
		    ts_type_is(ts_field(d, "declarator"), "field_identifier"))
			continue; /* padding */
		if (!ts_type_is(d, "field_identifier") || !ts_node_is_null(member))
			return none;
		member = fd;
	}
	return member;
}

/* Is initialiser V all zero ({0}, {{0}}, { NULL, }, ...)? DEFINE_PER_CPU data starts zeroed. */
static bool all_zero(const struct ctx *c, TSNode v)
{
	uint32_t s = ts_node_start_byte(v), e = ts_node_end_byte(v);
	for (uint32_t k = s; k < e; k++) {
		char ch = c->text[k];
		if (ch == '{' || ch == '}' || ch == ',' || ch == '0' || ch == ' ' || ch == '\t' || ch == '\n')
			continue;
		if (e - k >= 4 && memcmp(c->text + k, "NULL", 4) == 0 && (k + 4 == e || !is_ident_char(c->text[k + 4])))
			k += 3;
		else
			return false;
	}
	return true;
}

/*
 * Is conditional P one every build of the kernel compiles: a header's
 * include guard (`#ifndef _LINUX_X_H`) or `#ifdef __KERNEL__`?
 */
static bool always_compiled(const struct ctx *c, TSNode p)
{
	if (!ts_type_is(p, "preproc_ifdef"))
		return false;
	TSNode name = ts_field(p, "name");
	if (ts_node_is_null(name))
		return false;
	uint32_t s = ts_node_start_byte(name), e = ts_node_end_byte(name);
	const char *t = c->text + s;
	size_t n = e - s;
	const char *d = c->text + ts_node_start_byte(p) + 1; /* after the '#' */
	while (*d == ' ' || *d == '\t')
		d++;
	bool ifndef = strncmp(d, "ifndef", 6) == 0;
	if (!ifndef)
		return n == 10 && memcmp(t, "__KERNEL__", 10) == 0 && ts_node_is_null(ts_field(p, "alternative"));
	return ((n > 2 && memcmp(t + n - 2, "_H", 2) == 0) || (n > 3 && memcmp(t + n - 3, "_H_", 3) == 0)) &&
	       ts_node_is_null(ts_field(p, "alternative"));
}

/* Why declaration N of PA cannot become DEFINE_PER_CPU whatever its storage class (owned), or NULL. */
static char *declaration_why_not(const struct ctx *c, TSNode n, const struct percpu_array *pa,
				 uint32_t ndecl, TSNode init)
{
	if (!ts_node_is_null(ts_field(ts_field(n, "type"), "body")) && !pa->member)
		return xstrdup("the declaration also defines its element type");
	if (ndecl != 1)
		return xstrdup("the declaration declares more than one name");
	if (!ts_node_is_null(init) && !all_zero(c, init)) {
		char *t = node_text(c, init);
		char *why = xasprintf("the array has an initialiser that is not all zero (%s%s): DEFINE_PER_CPU "
				      "gives every CPU the same initial value; set the slots at boot by hand",
				      strlen(t) > 40 ? "" : t, strlen(t) > 40 ? "..." : "");
		free(t);
		return why;
	}
	for (TSNode p = ts_parent(n); !ts_node_is_null(p) && !ts_type_is(p, "translation_unit"); p = ts_parent(p))
		if (!always_compiled(c, p))
			return xasprintf("the declaration is inside a preprocessor conditional (line %u)", line_of(c, p));
	return NULL;
}

static bool is_c_file(const char *path)
{
	size_t n = strlen(path);
	return n > 2 && strcmp(path + n - 2, ".c") == 0;
}

/*
 * A declaration N of PA that is not static: converted with the tree's
 * entry when the tree converts it, else why not. The definition of a .c
 * file is recorded for the tree (scan_with_tree()).
 */
static void global_storage(struct ctx *c, struct percpu_array *pa, TSNode n)
{
	if (!pa->is_extern && c->opts->want && c->opts->verify_depth == 0 && is_c_file(c->src->path)) {
		/* one refused here still refuses another architecture's array of its name */
		struct tree_array t = {xstrdup(pa->name), xstrdup(pa->type), xstrdup(c->src->path),
				       line_of(c, n), pa->why_not ? xstrdup(pa->why_not) : NULL, NULL, NULL, NULL, 0,
				       NULL, NULL, NULL, pa->why_not != NULL};
		vec_push(&c->out->arrays, t);
	}
	const struct tree_array *t = tree_array_find(c->opts->arrays, pa->name, c->src->path);
	if (pa->why_not)
		return;
	if (t && !t->why_not) {
		pa->global = t;
		return;
	}
	if (t)
		pa->why_not = xstrdup(t->why_not);
	else
		pa->why_not = xstrdup(pa->is_extern ? "the array is extern and its definition is not among the files "
					      "scanned (convert it with the tree: scan its directory, or the "
					      "whole tree)"
					   : "the array is not static and its other files were not indexed "
					     "(--no-tree, or explain without --context-root DIR)");
}

/* PA's declaration N: static, extern or neither. */
static void storage_class(const struct ctx *c, struct percpu_array *pa, TSNode n)
{
	for (uint32_t i = 0; i < ts_node_named_child_count(n); i++) {
		TSNode ch = ts_node_named_child(n, i);
		if (ts_type_is(ch, "storage_class_specifier") && ts_text_is(ch, c->text, "static"))
			pa->is_static = true;
		if (ts_type_is(ch, "storage_class_specifier") && ts_text_is(ch, c->text, "extern"))
			pa->is_extern = true;
	}
}

/* Records a file-scope declaration of an NR_CPUS array. */
static bool array_decl_visit(TSNode n, void *ctx)
{
	struct ctx *c = ctx;
	if (ts_type_is(n, "function_definition"))
		return false;
	if (!ts_type_is(n, "declaration"))
		return true;
	uint32_t ndecl = 0;
	TSNode init;
	memset(&init, 0, sizeof init);
	TSNode arr = nr_cpus_declarator(c, n, &ndecl, &init);
	if (ts_node_is_null(arr))
		return false;
	TSNode inner = innermost_array(arr);
	TSNode name = ts_field(inner, "declarator");
	/* a declarator the parser had to repair (a missing name or dimension) is not rewritten */
	if (!ts_type_is(name, "identifier") || ts_node_has_error(arr) || ts_node_start_byte(name) == ts_node_end_byte(name))
		return false;
	struct percpu_array *pa = xcalloc(1, sizeof *pa);
	pa->name = node_text(c, name);
	pa->decl = n;
	storage_class(c, pa, n);
	pa->name_node = name;
	TSNode member = padding_member(c, ts_field(n, "type"));
	if (!ts_node_is_null(member) && ts_node_eq(arr, inner)) {
		pa->member = node_text(c, ts_field(member, "declarator"));
		pa->type = node_text(c, ts_field(member, "type"));
	} else {
		pa->type = element_type(c, n, arr, inner);
	}
	pa->dropped = dropped_attributes(c, n);
	if (!ts_node_is_null(init) && all_zero(c, init)) {
		char *d = xasprintf("%s%sthe all-zero initialiser", pa->dropped ? pa->dropped : "",
				    pa->dropped ? ", " : "");
		free(pa->dropped);
		pa->dropped = d;
	}
	if (pa->member) {
		char *d = xasprintf("the padding union (per-CPU data has no false sharing)%s%s",
				    pa->dropped ? ", " : "", pa->dropped ? pa->dropped : "");
		free(pa->dropped);
		pa->dropped = d;
	}
	pa->why_not = declaration_why_not(c, n, pa, ndecl, init);
	if (!pa->is_static)
		global_storage(c, pa, n);
	if (!pa->why_not && !rule_reported_at(c, RULE_P008, ts_node_start_byte(name)))
		pa->why_not = xstrdup("rule P008 (percpu-array-convertible) is off or suppressed at the "
				      "declaration");
	pa->eligible = pa->why_not == NULL;
	vec_push(&c->arrays, pa);
	return false;
}

static void refuse(struct percpu_array *pa, char *why)
{
	pa->eligible = false;
	free(pa->why_not);
	pa->why_not = why;
}

/* Is N a call of smp_processor_id() or get_cpu()? */
static bool reads_this_cpu(const struct ctx *c, TSNode n)
{
	n = ts_strip_parens(n, c->text);
	return call_is(c, n, "smp_processor_id") || call_is(c, n, "get_cpu");
}

struct cpu_var_scan {
	const struct ctx *c;
	const char *name;
	bool found;
};

static bool cpu_var_visit(TSNode n, void *ctx)
{
	struct cpu_var_scan *v = ctx;
	TSNode lhs, rhs;
	if (ts_type_is(n, "init_declarator"))
		lhs = ts_field(n, "declarator"), rhs = ts_field(n, "value");
	else if (ts_type_is(n, "assignment_expression") && ts_text_is(ts_field(n, "operator"), v->c->text, "="))
		lhs = ts_field(n, "left"), rhs = ts_field(n, "right");
	else
		return !v->found;
	if (ts_type_is(lhs, "identifier") && ts_text_is(lhs, v->c->text, v->name) && reads_this_cpu(v->c, rhs))
		v->found = true;
	return !v->found;
}

/*
 * Does subscript SUB index by the running CPU: smp_processor_id(),
 * get_cpu(), or a local of its function given one of them?
 */
static bool indexes_this_cpu(const struct ctx *c, TSNode sub)
{
	TSNode idx = ts_strip_parens(ts_field(sub, "index"), c->text);
	if (reads_this_cpu(c, idx))
		return true;
	const struct fn *g = analysis_fn_at(c->fa, ts_node_start_byte(sub));
	if (!g || !ts_type_is(idx, "identifier"))
		return false;
	char *name = node_text(c, idx);
	struct cpu_var_scan v = {c, name, false};
	ts_walk(g->body, cpu_var_visit, &v);
	free(name);
	return v.found;
}

TSNode percpu_slot(const struct percpu_array *pa, TSNode sub)
{
	return pa->member ? ts_parent(sub) : sub;
}

/* Is F one of the per-CPU fields of the struct of arrays PA? */
static bool soa_field(const struct percpu_array *pa, const char *f)
{
	const char *fs = pa->global->soa_fields;
	size_t n = strlen(f);
	for (const char *p = strstr(fs, f); p; p = strstr(p + 1, f))
		if ((p == fs || p[-1] == ' ') && p[n] == ' ')
			return true;
	return false;
}

/* The field expression `x.f` SUB (x.f[i]) subscripts, when PA is a struct of arrays; else a null node. */
static TSNode soa_field_expr(const struct ctx *c, const struct percpu_array *pa, TSNode sub)
{
	TSNode none, fe = ts_field(sub, "argument");
	memset(&none, 0, sizeof none);
	if (!pa->global || !pa->global->soa_tag || !ts_type_is(fe, "field_expression") ||
	    !ts_text_is(ts_field(fe, "operator"), c->text, "."))
		return none;
	TSNode x = ts_field(fe, "argument");
	if (!ts_type_is(x, "identifier") || !ts_text_is(x, c->text, pa->name))
		return none;
	return fe;
}

void percpu_slot_edit(const struct ctx *c, const struct percpu_array *pa, TSNode sub, const char *rep,
		      struct finding *fd)
{
	/* a field of a struct of arrays: a rule of its own, so a run of its own */
	if (!ts_node_is_null(soa_field_expr(c, pa, sub)))
		add_span_edit(c, fd, ts_node_start_byte(sub), ts_node_end_byte(sub), "field_subscript", rep);
	else
		add_edit(c, fd, EDIT_REPLACE, percpu_slot(pa, sub), rep);
}

char *percpu_slot_text(const struct ctx *c, const struct percpu_array *pa, TSNode sub, const char *acc)
{
	TSNode fe = soa_field_expr(c, pa, sub);
	if (ts_node_is_null(fe))
		return xstrdup(acc);
	char *f = node_text(c, ts_field(fe, "field"));
	char *out = xasprintf("%s.%s", acc, f);
	free(f);
	return out;
}

/*
 * A use N of the instance of a struct of arrays PA: `x.f[i]` of a field
 * that moves is a use; `x.g` of a field that stays is none; anything else
 * (x's address, a copy of x) keeps the struct as it is.
 */
static void soa_use(struct ctx *c, struct percpu_array *pa, TSNode n)
{
	TSNode fe = ts_parent(n);
	if (!ts_type_is(fe, "field_expression") || !ts_node_eq(ts_field(fe, "argument"), n) ||
	    !ts_text_is(ts_field(fe, "operator"), c->text, ".")) {
		if (pa->eligible)
			refuse(pa, xasprintf("%s is used whole at line %u (its address or a copy): the per-CPU "
					     "fields would not go with it", pa->name, line_of(c, n)));
		return;
	}
	char *f = node_text(c, ts_field(fe, "field"));
	bool moves = soa_field(pa, f);
	TSNode sub = ts_parent(fe);
	if (moves && ts_type_is(sub, "subscript_expression") && ts_node_eq(ts_field(sub, "argument"), fe)) {
		vec_push(&pa->uses, sub);
		if (indexes_this_cpu(c, sub))
			pa->this_cpu++;
		else if (ts_node_is_null(pa->other_index))
			pa->other_index = sub;
	} else if (moves && pa->eligible) {
		refuse(pa, xasprintf("%s.%s is used other than by subscript at line %u", pa->name, f, line_of(c, n)));
	}
	free(f);
}

/* Records the subscripts of each array; any other use makes it ineligible. */
static bool array_use_visit(TSNode n, void *ctx)
{
	struct ctx *c = ctx;
	if (!ts_type_is(n, "identifier"))
		return true;
	for (size_t i = 0; i < c->arrays.len; i++) {
		struct percpu_array *pa = c->arrays.items[i];
		if (!ts_text_is(n, c->text, pa->name) || (!ts_node_is_null(pa->decl) && node_within(n, pa->decl)))
			continue;
		if (in_dead_code(c, n))
			continue;
		TSNode p = ts_parent(n);
		if (pa->global && pa->global->soa_tag) {
			soa_use(c, pa, n);
			continue;
		}
		if (ts_type_is(p, "subscript_expression") && ts_node_eq(ts_field(p, "argument"), n)) {
			vec_push(&pa->uses, p);
			if (indexes_this_cpu(c, p))
				pa->this_cpu++;
			else if (ts_node_is_null(pa->other_index))
				pa->other_index = p;
			TSNode fe = ts_parent(p);
			if (pa->member && pa->eligible &&
			    !(ts_type_is(fe, "field_expression") && ts_node_eq(ts_field(fe, "argument"), p) &&
			      ts_text_is(ts_field(fe, "operator"), c->text, ".") &&
			      ts_text_is(ts_field(fe, "field"), c->text, pa->member))) {
				pa->eligible = false;
				pa->why_not = xasprintf("%s is used other than as %s[i].%s at line %u", pa->name,
							pa->name, pa->member, line_of(c, n));
			}
		} else if (pa->eligible) {
			pa->eligible = false;
			pa->why_not = xasprintf("%s is used other than by subscript at line %u", pa->name,
						line_of(c, n));
		}
	}
	return false;
}

/* Every unprotected this-CPU site of PA must be fixable, or the array stays as it is. */
static void check_sites_fixable(struct ctx *c, struct percpu_array *pa)
{
	for (size_t k = 0; k < pa->uses.len && pa->eligible; k++) {
		TSNode sub = pa->uses.items[k];
		TSNode idx = ts_strip_parens(ts_field(sub, "index"), c->text);
		const struct fn *g = analysis_fn_at(c->fa, ts_node_start_byte(sub));
		if (!g) {
			/* a conversion would leave this use as it is: x[...] of a per-CPU variable */
			pa->eligible = false;
			pa->why_not = xasprintf("%s is used at line %u outside any function the parser "
						"recognised (a K&R definition without a return type?)",
						pa->name, line_of(c, sub));
			break;
		}
		if (!call_is(c, idx, "smp_processor_id"))
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

/*
 * The file-scope `EXPORT_SYMBOL(x)` / `EXPORT_SYMBOL_GPL(x)` of PA, in the
 * user's text (the parse text blanks them: they are not C).
 */
static void find_exports(struct ctx *c, struct percpu_array *pa)
{
	const char *t = c->src->text;
	size_t len = c->src->len, n = strlen(pa->name);
	for (const char *p = memmem(t, len, "EXPORT_SYMBOL", 13); p;
	     p = memmem(p + 1, len - (size_t)(p + 1 - t), "EXPORT_SYMBOL", 13)) {
		if (p > t && is_ident_char(p[-1]))
			continue;
		const char *q = p + 13;
		bool gpl = (size_t)(t + len - q) >= 4 && memcmp(q, "_GPL", 4) == 0;
		if (gpl)
			q += 4;
		while (q < t + len && (*q == ' ' || *q == '\t'))
			q++;
		if (q >= t + len || *q != '(')
			continue;
		q++;
		while (q < t + len && (*q == ' ' || *q == '\t'))
			q++;
		if ((size_t)(t + len - q) < n || memcmp(q, pa->name, n) != 0 || is_ident_char(q[n]))
			continue;
		q += n;
		while (q < t + len && (*q == ' ' || *q == '\t'))
			q++;
		if (q >= t + len || *q != ')' || analysis_fn_at(c->fa, (size_t)(p - t)))
			continue;
		struct export_use e = {(size_t)(p - t), (size_t)(q + 1 - t), gpl};
		vec_push(&pa->exports, e);
	}
}


/*
 * The slots `x[i]` of PA in the body of D, into PA's macro_slots; a reason
 * (owned) when the body names PA otherwise.
 */
static char *macro_body_slots(struct ctx *c, struct percpu_array *pa, const struct macro_def *d)
{
	const char *t = c->src->text;
	size_t n = strlen(pa->name), from = d->offset + strlen(d->name), to = d->end;
	for (size_t p = from; p + n <= to; p++) {
		if (memcmp(t + p, pa->name, n) != 0 || is_ident_char(t[p + n]) || (p > 0 && is_ident_char(t[p - 1])))
			continue;
		size_t q = p + n;
		while (q < to && (t[q] == ' ' || t[q] == '\t'))
			q++;
		if (q >= to || t[q] != '[')
			return xasprintf("%s is used other than as %s[i] in the body of #define %s (line %u)", pa->name,
					 pa->name, d->name, source_pos(c->src, d->offset).line);
		size_t open = q;
		int depth = 0;
		for (; q < to; q++) {
			if (t[q] == '[' || t[q] == '(')
				depth++;
			else if ((t[q] == ']' || t[q] == ')') && --depth == 0)
				break;
		}
		if (q >= to || t[q] != ']')
			return xasprintf("the subscript of %s in the body of #define %s (line %u) does not close on "
					 "its line", pa->name, d->name, source_pos(c->src, d->offset).line);
		struct buf idx = BUF_INIT, bare = BUF_INIT;
		for (size_t k = open + 1; k < q; k++) {
			buf_putc(&idx, t[k]);
			if (t[k] != ' ' && t[k] != '\t')
				buf_putc(&bare, t[k]);
		}
		struct macro_slot m = {p, q + 1, buf_detach(&idx), strcmp(buf_cstr(&bare), "smp_processor_id()") == 0, d};
		buf_release(&bare);
		vec_push(&pa->macro_slots, m);
		p = q;
	}
	return NULL;
}

/*
 * With D's body holding PA's running-CPU slot, D becomes __get_cpu_var():
 * only when every use of D is a use in a function with preemption off. A
 * reason (owned) otherwise. PA->macro_uses counts them.
 */
static char *macro_uses_protected(struct ctx *c, struct percpu_array *pa, const struct macro_def *d)
{
	const char *t = c->src->text;
	size_t n = strlen(d->name);
	TSNode root = ts_tree_root_node(c->fa->tree);
	for (size_t p = 0; p + n <= c->src->len; p++) {
		if (memcmp(t + p, d->name, n) != 0 || is_ident_char(t[p + n]) || (p > 0 && is_ident_char(t[p - 1])))
			continue;
		if (p == d->offset)
			continue;
		unsigned line = source_pos(c->src, p).line;
		if (source_in_directive(c->src, p)) {
			size_t wl;
			const char *w = NULL;
			for (size_t k = 0; k < c->src->defs.len && !w; k++)
				if (c->src->defs.items[k].offset < p && p < c->src->defs.items[k].end)
					w = c->src->defs.items[k].name;
			wl = w ? strlen(w) : 0;
			if (!w) /* #undef, #ifdef of it: not a use */
				continue;
			return xasprintf("#define %s (line %u) reads the running CPU's %s, and #define %.*s (line %u) "
					 "uses it: the uses of that macro are not followed", d->name,
					 source_pos(c->src, d->offset).line, pa->name, (int)wl, w, line);
		}
		TSNode at = ts_node_descendant_for_byte_range(root, (uint32_t)p, (uint32_t)(p + n));
		if (!ts_type_is(at, "identifier"))
			continue; /* a comment, a string, a struct tag or a field of that name */
		const struct fn *g = analysis_fn_at(c->fa, (uint32_t)p);
		if (!g)
			return xasprintf("%s, which reads the running CPU's %s, is used outside a function at line %u",
					 d->name, pa->name, line);
		struct point_state ps = flow_state_at(g, (uint32_t)p);
		if (!point_protected(&ps))
			return xasprintf("the use of %s in %s() at line %u is in preemptible code: the macro would "
					 "need get_cpu_var()/put_cpu_var() around each use; port it by hand", d->name,
					 g->name, line);
		pa->macro_uses++;
	}
	return NULL;
}

/*
 * A #define body naming PA: a static array's `x[smp_processor_id()]` there
 * becomes __get_cpu_var(x) when every use of the macro has preemption off
 * (2.4 net/ipv4/icmp.c: #define icmp_socket (&__icmp_inode[smp_processor_id()]...)),
 * `x[i]` becomes per_cpu(x, i); anything else keeps the array as it is.
 */
static void check_macro_uses(struct ctx *c, struct percpu_array *pa)
{
	for (size_t k = 0; k < c->src->defs.len && pa->eligible; k++) {
		const struct macro_def *d = &c->src->defs.items[k];
		if (!text_has_word(d->body, strlen(d->body), pa->name))
			continue;
		if (!pa->is_static || pa->global || pa->member || pa->is_extern) {
			refuse(pa, xasprintf("%s is used in the body of #define %s (line %u), which a conversion "
					     "would have to change by hand", pa->name, d->name,
					     source_pos(c->src, d->offset).line));
			break;
		}
		size_t first = pa->macro_slots.len;
		char *why = macro_body_slots(c, pa, d);
		bool this_cpu = false;
		for (size_t i = first; i < pa->macro_slots.len; i++)
			this_cpu |= pa->macro_slots.items[i].this_cpu;
		if (!why && this_cpu)
			why = macro_uses_protected(c, pa, d);
		if (why)
			refuse(pa, why);
	}
}

/* The #define whose body indexes PA by the running CPU (`x[smp_processor_id()]`), or NULL. */
static const struct macro_def *cpu_macro_naming(struct ctx *c, const struct percpu_array *pa)
{
	for (size_t k = 0; k < c->src->defs.len; k++) {
		const struct macro_def *d = &c->src->defs.items[k];
		size_t n = strlen(d->body);
		if (text_has_word(d->body, n, pa->name) && text_has_word(d->body, n, "smp_processor_id"))
			return d;
	}
	return NULL;
}

struct soa_find {
	struct ctx *c;
	struct percpu_array *pa;
};

/* A file-scope declaration of a struct of arrays' instance, or its struct's definition. */
static bool soa_decl_visit(TSNode n, void *ctx)
{
	struct soa_find *v = ctx;
	struct ctx *c = v->c;
	struct percpu_array *pa = v->pa;
	if (ts_type_is(n, "function_definition"))
		return false;
	if (ts_type_is(n, "struct_specifier") && !ts_node_is_null(ts_field(n, "body")) &&
	    ts_text_is(ts_field(n, "name"), c->text, pa->global->soa_tag)) {
		if (strcmp(c->src->path, pa->global->soa_file) == 0 && ts_node_is_null(pa->soa_struct))
			pa->soa_struct = n;
		return false;
	}
	TSNode type = ts_field(n, "type");
	if (!ts_type_is(n, "declaration") || !ts_type_is(type, "struct_specifier") ||
	    !ts_text_is(ts_field(type, "name"), c->text, pa->global->soa_tag))
		return !ts_type_is(n, "declaration");
	if (!ts_node_is_null(ts_field(type, "body"))) {
		if (strcmp(c->src->path, pa->global->soa_file) == 0 && ts_node_is_null(pa->soa_struct))
			pa->soa_struct = type;
		return false;
	}
	TSNode d = ts_field(n, "declarator");
	if (ts_type_is(d, "init_declarator"))
		d = ts_field(d, "declarator");
	if (!ts_type_is(d, "identifier") || !ts_text_is(d, c->text, pa->name) || !ts_node_is_null(pa->decl))
		return false;
	pa->decl = n;
	pa->name_node = d;
	storage_class(c, pa, n);
	return false;
}

/* The tree's converted arrays this file names without declaring them: their uses convert here too. */
static void tree_arrays_used(struct ctx *c)
{
	const tree_array_vec *t = c->opts->arrays;
	for (size_t i = 0; t && i < t->len; i++) {
		if (t->items[i].why_not || !text_has_word(c->src->text, c->src->len, t->items[i].name))
			continue;
		bool declared = false;
		for (size_t k = 0; k < c->arrays.len && !declared; k++)
			declared = strcmp(c->arrays.items[k]->name, t->items[i].name) == 0;
		if (declared)
			continue;
		struct percpu_array *pa = xcalloc(1, sizeof *pa);
		pa->name = xstrdup(t->items[i].name);
		pa->type = xstrdup(t->items[i].type);
		pa->global = &t->items[i];
		pa->var = t->items[i].soa_var ? t->items[i].soa_var : pa->name;
		pa->eligible = true;
		/* a file naming the per-CPU part has its declarations converted already (verify_plan()) */
		if (t->items[i].soa_tag && !text_has_word(c->src->text, c->src->len, pa->var))
			ts_walk(ts_tree_root_node(c->fa->tree), soa_decl_visit, &(struct soa_find){c, pa});
		vec_push(&c->arrays, pa);
	}
}

static char *conversion_evidence(struct ctx *c, const struct percpu_array *pa);

/* Arrays an earlier check of this file kept as they are (rules_run()). */
static void apply_kept(struct ctx *c)
{
	for (size_t i = 0; c->kept && i < c->arrays.len; i++) {
		struct percpu_array *pa = c->arrays.items[i];
		for (size_t k = 0; k < c->kept->names.len; k++)
			if (strcmp(c->kept->names.items[k], pa->name) == 0) {
				pa->eligible = false;
				free(pa->why_not);
				pa->why_not = xstrdup(c->kept->whys.items[k]);
			}
	}
}

/*
 * This file's part of the conversion of an array shared across the tree:
 * its P008 at the declaration (DEFINE_PER_CPU or DECLARE_PER_CPU), the
 * EXPORT_SYMBOL or the first use, carrying the file's edits.
 */
static void report_global_part(struct ctx *c, struct percpu_array *pa)
{
	size_t at, end; /* the span shown: the name, the EXPORT_SYMBOL or the use */
	if (!ts_node_is_null(pa->name_node))
		at = ts_node_start_byte(pa->name_node), end = ts_node_end_byte(pa->name_node);
	else if (pa->exports.len)
		at = pa->exports.items[0].start, end = pa->exports.items[0].end;
	else if (pa->uses.len)
		at = ts_node_start_byte(pa->uses.items[0]), end = ts_node_end_byte(pa->uses.items[0]);
	else
		return; /* named only where it is no use (a comment): nothing converts here */
	const struct tree_array *t = pa->global;
	bool def = !ts_node_is_null(pa->decl) && !pa->is_extern;
	char *msg = t->soa_tag
		? (!ts_node_is_null(pa->soa_struct)
			? xasprintf("2.4 struct %s holds per-CPU arrays (%.*s) for its one instance %s: they move to "
				    "DEFINE_PER_CPU(%s, %s) in 2.6", t->soa_tag, (int)strlen(t->soa_fields) - 2,
				    t->soa_fields + 1, pa->name, t->type, pa->var)
			: xasprintf("the per-CPU fields of %s (struct %s, defined at %s:%u) move to per-CPU variable "
				    "%s: this file's %s", pa->name, t->soa_tag, t->file, t->line, pa->var,
				    ts_node_is_null(pa->decl) ? "uses" : pa->is_extern ? "declaration" : "definition"))
		: def ? xasprintf("2.4 per-CPU array %s%s%s[NR_CPUS], used across files: DEFINE_PER_CPU in 2.6",
				    pa->type, type_sep(pa->type), pa->name)
		    : !ts_node_is_null(pa->decl)
			? xasprintf("extern per-CPU array %s (defined at %s:%u): DECLARE_PER_CPU in 2.6", pa->name,
				    t->file, t->line)
			: xasprintf("per-CPU array %s (defined at %s:%u) becomes DEFINE_PER_CPU: this file's uses",
				    pa->name, t->file, t->line);
	char *ev = conversion_evidence(c, pa);
	char *evidence = xasprintf("%s; the files naming it convert together: %s", ev, t->users ? t->users : t->file);
	free(ev);
	struct finding *fd = add_finding_at(c, RULE_P008, at, end, NULL, SEV_NOTE, CONF_HIGH,
					    pa->eligible ? FIX_DEFINE_PER_CPU : FIX_NONE, msg, evidence);
	if (!fd)
		return; /* off or suppressed here: scan_with_tree() refuses the other files' parts */
	fd->array = xstrdup(pa->name);
	fd->array_this_cpu = pa->this_cpu > 0;
	if (pa->eligible)
		plan_define_per_cpu_rest(c, pa, fd);
	else
		set_note(fd, xasprintf("not converted: %s", pa->why_not));
}

/* A struct of arrays the tree leaves as it is: why, at its definition (-v). */
static void soa_refused(struct ctx *c)
{
	const tree_array_vec *t = c->opts->arrays;
	for (size_t i = 0; t && i < t->len; i++) {
		const struct tree_array *e = &t->items[i];
		if (!e->soa_tag || !e->why_not || strcmp(e->soa_file, c->src->path) != 0)
			continue;
		struct percpu_array pa;
		memset(&pa, 0, sizeof pa);
		pa.name = e->name;
		pa.global = e;
		ts_walk(ts_tree_root_node(c->fa->tree), soa_decl_visit, &(struct soa_find){c, &pa});
		if (ts_node_is_null(pa.soa_struct))
			continue;
		add_protected(c, RULE_P008, ts_field(pa.soa_struct, "name"), NULL,
			      e->name[0] ? xasprintf("the NR_CPUS fields of struct %s (instance %s) are left as they are",
						     e->soa_tag, e->name)
					 : xasprintf("the NR_CPUS fields of struct %s are left as they are", e->soa_tag),
			      xstrdup(e->why_not));
	}
}

void percpu_arrays_find(struct ctx *c)
{
	TSNode root = ts_tree_root_node(c->fa->tree);
	soa_refused(c);
	ts_walk(root, array_decl_visit, c);
	tree_arrays_used(c);
	for (size_t i = 0; i < c->arrays.len; i++) {
		struct percpu_array *pa = c->arrays.items[i];
		/* a struct of arrays whose per-CPU part this file names already exports it (verify_plan()) */
		if (pa->global && !(pa->var && strcmp(pa->var, pa->name) != 0 &&
				    text_has_word(c->src->text, c->src->len, pa->var)))
			find_exports(c, pa);
	}
	if (!c->arrays.len)
		return;
	ts_walk(root, array_use_visit, c);
	for (size_t i = 0; i < c->arrays.len; i++) {
		check_macro_uses(c, c->arrays.items[i]);
		check_sites_fixable(c, c->arrays.items[i]);
	}
	apply_kept(c);
}

void percpu_arrays_free(struct ctx *c)
{
	for (size_t i = 0; i < c->arrays.len; i++) {
		struct percpu_array *pa = c->arrays.items[i];
		free(pa->name);
		free(pa->why_not);
		free(pa->type);
		free(pa->dropped);
		free(pa->member);
		vec_release(&pa->exports);
		vec_release(&pa->uses);
		vec_release(&pa->slot_uses);
		for (size_t k = 0; k < pa->macro_slots.len; k++)
			free(pa->macro_slots.items[k].index);
		vec_release(&pa->macro_slots);
		free(pa);
	}
	vec_release(&c->arrays);
}

struct percpu_array *array_of_subscript(const struct ctx *c, TSNode sub)
{
	if (!ts_type_is(sub, "subscript_expression"))
		return NULL;
	TSNode a = ts_field(sub, "argument");
	for (size_t i = 0; i < c->arrays.len; i++) {
		struct percpu_array *pa = c->arrays.items[i];
		if (pa->global && pa->global->soa_tag) {
			TSNode fe = soa_field_expr(c, pa, sub);
			char *f = ts_node_is_null(fe) ? NULL : node_text(c, ts_field(fe, "field"));
			bool moves = f && soa_field(pa, f);
			free(f);
			if (moves)
				return pa;
		} else if (ts_type_is(a, "identifier") && ts_text_is(a, c->text, pa->name)) {
			return pa;
		}
	}
	return NULL;
}

/* ---- planning the uses ------------------------------------------------------- */

/*
 * Modern kernels: when the statement holding SLOT (the per-CPU lvalue
 * x[smp_processor_id()] or __get_cpu_var(x)) is one operation on a field
 * path of it, the this_cpu_* statement doing the same, with NAME in place of
 * SLOT: `x[smp_processor_id()].n++;` -> `this_cpu_inc(x.n);`. NULL otherwise.
 */
static char *this_cpu_op(const struct ctx *c, TSNode slot, const char *name, TSNode *stmt_out)
{
	TSNode lv = slot;
	for (TSNode p = ts_parent(lv); ts_type_is(p, "field_expression") &&
	     ts_node_eq(ts_field(p, "argument"), lv) && ts_text_is(ts_field(p, "operator"), c->text, ".");
	     p = ts_parent(p))
		lv = p;
	TSNode op = ts_parent(lv);
	TSNode st = ts_parent(op);
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
		unsigned reads = count_cpu_reads(c, r);
		const char *o = NULL;
		TSNode opn = ts_field(op, "operator");
		if (ts_text_is(opn, c->text, "+="))
			o = "add";
		else if (ts_text_is(opn, c->text, "-="))
			o = "sub";
		else if (ts_text_is(opn, c->text, "="))
			o = "write";
		if (o && reads == 0) {
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
bool plan_this_cpu(struct ctx *c, TSNode slot, const char *name, bool is_protected, struct finding *fd)
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
	/* NAME v.f: the field x.f[i] of a struct of arrays, a rule of its own */
	if (strchr(name, '.') && ts_type_is(slot, "subscript_expression"))
		add_span_edit(c, fd, ts_node_start_byte(slot), ts_node_end_byte(slot), "field_subscript", rep);
	else
		add_edit(c, fd, EDIT_REPLACE, slot, rep);
	free(rep);
	return true;
}

/* Edits for one this-CPU subscript x[smp_processor_id()] of an eligible array. */
void plan_percpu_site(struct ctx *c, const struct fn *f, struct percpu_array *pa, TSNode sub,
			     bool is_protected, struct finding *fd)
{
	TSNode slot = percpu_slot(pa, sub);
	const char *var = pa->var ? pa->var : pa->name;
	char *name = percpu_slot_text(c, pa, sub, var);
	bool modern = c->opts->modern && plan_this_cpu(c, slot, name, is_protected, fd);
	free(name);
	if (modern)
		return;
	char *acc = xasprintf("%s(%s)", is_protected ? "__get_cpu_var" : "get_cpu_var", var);
	char *rep = percpu_slot_text(c, pa, sub, acc);
	free(acc);
	percpu_slot_edit(c, pa, sub, rep, fd);
	if (!is_protected) {
		char *put = xasprintf("put_cpu_var(%s)", var);
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

/*
 * Is the this-CPU use SUB (x[smp_processor_id()]) in G safe as it is:
 * preemption off there, or bring-up code the CPU runs alone? As
 * check_cpu_read() decides: such a use has no finding of its own, so the
 * conversion gives it __get_cpu_var(x).
 */
static bool this_cpu_use_safe(struct ctx *c, const struct fn *g, TSNode sub, TSNode idx)
{
	if (!g)
		return false;
	struct point_state ps = flow_state_at(g, ts_node_start_byte(sub));
	if (point_protected(&ps))
		return true;
	bool whole = false;
	char *why = cpu_stable(c, g, idx, &whole);
	free(why);
	return why && whole;
}

/* Does the field declaration FD (of a struct of arrays PA's struct) declare fields that move? */
static bool soa_moves(const struct ctx *c, const struct percpu_array *pa, TSNode fd)
{
	TSNode d = ts_field(fd, "declarator");
	while (ts_type_is(d, "array_declarator") || ts_type_is(d, "pointer_declarator"))
		d = ts_field(d, "declarator");
	if (!ts_type_is(d, "field_identifier"))
		return false;
	char *f = node_text(c, d);
	bool moves = soa_field(pa, f);
	free(f);
	return moves;
}

/* The start of the lines of comments just above byte AT's line (AT's line start when none). */
static uint32_t comment_lines_above(const struct ctx *c, uint32_t at)
{
	const char *t = c->src->text;
	while (at > 0 && t[at - 1] != '\n')
		at--;
	for (;;) {
		if (at == 0)
			return at;
		uint32_t prev = at - 1; /* the previous line: [ls, prev) */
		uint32_t ls = prev;
		while (ls > 0 && t[ls - 1] != '\n')
			ls--;
		uint32_t a = ls, b = prev;
		while (a < b && (t[a] == ' ' || t[a] == '\t'))
			a++;
		while (b > a && (t[b - 1] == ' ' || t[b - 1] == '\t' || t[b - 1] == '\r'))
			b--;
		bool line_comment = b - a >= 2 && t[a] == '/' && t[a + 1] == '/';
		bool block = b - a >= 2 && t[b - 2] == '*' && t[b - 1] == '/';
		if (!line_comment && !block)
			return at;
		if (block) { /* to the line its comment opens on */
			const char *open = NULL;
			for (uint32_t k = b - 2; k > 0 && !open; k--)
				if (t[k - 1] == '/' && t[k] == '*')
					open = t + k - 1;
			if (!open)
				return at;
			uint32_t os = (uint32_t)(open - t), q = os;
			while (q > 0 && t[q - 1] != '\n')
				q--;
			for (uint32_t k = q; k < os; k++)
				if (t[k] != ' ' && t[k] != '\t')
					return at; /* code before the comment on its first line */
			ls = q;
		}
		at = ls;
	}
}

/*
 * Why member M of a struct of arrays cannot move by spatch's removal, or
 * NULL: code or a comment shares its lines (spatch keeps a trailing comment
 * and puts it on the line before; the moved copy would hold it twice).
 */
static char *member_alone(const struct ctx *c, TSNode m)
{
	const char *t = c->src->text;
	uint32_t s = ts_node_start_byte(m), e = ts_node_end_byte(m), k;
	for (k = s; k > 0 && (t[k - 1] == ' ' || t[k - 1] == '\t'); k--)
		;
	bool alone = k == 0 || t[k - 1] == '\n';
	for (k = e; alone && t[k] && t[k] != '\n'; k++)
		alone = t[k] == ' ' || t[k] == '\t' || t[k] == '\r';
	for (k = s; alone && k + 1 < e; k++)
		alone = !(t[k] == '/' && (t[k + 1] == '*' || t[k + 1] == '/'));
	if (!alone)
		return xasprintf("the field at line %u shares its lines with a comment or other code, which "
				 "spatch would leave misplaced: move it by hand", line_of(c, m));
	uint32_t ls = s;
	while (ls > 0 && t[ls - 1] != '\n')
		ls--;
	if (comment_lines_above(c, s) < ls)
		return xasprintf("the field at line %u has a comment above it, which spatch removes with the "
				 "field: move it by hand", line_of(c, m));
	return NULL;
}

/* Is S (N bytes) a conditional's directive line (#if, #ifdef, #ifndef, #elif, #else, #endif)? */
static bool cond_directive(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i == n || s[i++] != '#')
		return false;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	static const char *const words[] = {"ifdef", "ifndef", "if", "elif", "else", "endif"};
	for (size_t k = 0; k < ARRAY_SIZE(words); k++) {
		size_t w = strlen(words[k]);
		if (n - i >= w && memcmp(s + i, words[k], w) == 0 && (n - i == w || !is_ident_char(s[i + w])))
			return true;
	}
	return false;
}

/*
 * The end of the directive line at byte AT of TEXT (LEN bytes), its
 * continuation lines included: the offset of its last newline, or LEN.
 */
static uint32_t directive_end(const char *t, size_t len, uint32_t at)
{
	for (;;) {
		const char *nl = memchr(t + at, '\n', len - at);
		uint32_t le = nl ? (uint32_t)(nl - t) : (uint32_t)len, z = le;
		while (z > at && (t[z - 1] == ' ' || t[z - 1] == '\t' || t[z - 1] == '\r'))
			z--;
		if (!nl || z == at || t[z - 1] != '\\')
			return le;
		at = le + 1;
	}
}

/*
 * The conditional M of a struct body holds only fields that move: its
 * directives (its arms' and any nested one's, continuation lines
 * included) go too, removed after spatch (by_text edits), which never
 * removes a directive.
 */
static void soa_drop_directives(struct ctx *c, TSNode m, struct finding *fd)
{
	const char *t = c->src->text;
	uint32_t e = ts_node_end_byte(m);
	for (uint32_t ls = ts_node_start_byte(m); ls < e;) {
		uint32_t le = directive_end(t, c->src->len, ls);
		const char *nl = memchr(t + ls, '\n', c->src->len - ls);
		if (cond_directive(t + ls, (nl ? (uint32_t)(nl - t) : le) - ls)) {
			uint32_t a = ls, z = le;
			while (t[a] == ' ' || t[a] == '\t')
				a++;
			while (z > a && (t[z - 1] == ' ' || t[z - 1] == '\t' || t[z - 1] == '\r'))
				z--;
			add_span_edit(c, fd, a, z, "preproc_directive", "");
			if (fd)
				fd->edits.items[fd->edits.len - 1].by_text = true;
		} else {
			le = nl ? (uint32_t)(nl - t) : le; /* a field's line: only it */
		}
		ls = le + 1;
	}
}

/*
 * The members of the struct body BODY that move, into OUT (the user's text
 * of their lines, `[NR_CPUS]` dropped), and their removal edits into FD.
 * A conditional moves whole when all it holds moves; TOP (BODY is the
 * struct's own) plans the removal of its directives. A reason (owned)
 * when one holds both kinds, else NULL.
 */
static char *soa_members(struct ctx *c, struct percpu_array *pa, TSNode body, struct buf *out,
			 struct finding *fd, unsigned *moved, unsigned *kept, bool top)
{
	for (uint32_t i = 0; i < ts_node_named_child_count(body); i++) {
		TSNode m = ts_node_named_child(body, i);
		if (ts_type_is(m, "field_declaration")) {
			if (!soa_moves(c, pa, m)) {
				++*kept;
				continue;
			}
			++*moved;
			char *why = member_alone(c, m);
			if (why)
				return why;
			/* the member's lines, as written */
			uint32_t s = ts_node_start_byte(m), e = ts_node_end_byte(m);
			while (s > 0 && c->src->text[s - 1] != '\n')
				s--;
			const char *t = c->src->text;
			for (uint32_t k = s; k < e; k++) {
				if (t[k] == '[') {
					uint32_t q = k + 1;
					while (q < e && (t[q] == ' ' || t[q] == '\t'))
						q++;
					if (e - q >= 7 && memcmp(t + q, "NR_CPUS", 7) == 0) {
						q += 7;
						while (q < e && (t[q] == ' ' || t[q] == '\t'))
							q++;
						if (q < e && t[q] == ']') {
							k = q;
							continue;
						}
					}
				}
				buf_putc(out, t[k]);
			}
			buf_putc(out, '\n');
			add_edit(c, fd, EDIT_REPLACE, m, "");
		} else if (ts_type_is(m, "preproc_ifdef") || ts_type_is(m, "preproc_if") ||
			   ts_type_is(m, "preproc_else") || ts_type_is(m, "preproc_elif")) {
			unsigned mv = 0, kp = 0;
			struct buf inner = BUF_INIT;
			char *why = soa_members(c, pa, m, &inner, fd, &mv, &kp, false);
			if (!why && mv && kp)
				why = xasprintf("the conditional at line %u holds fields that move and fields that "
						"stay", line_of(c, m));
			if (!why && mv && top)
				soa_drop_directives(c, m, fd);
			if (!why && mv) {
				/* its directives (continuation lines too), with the members that move */
				uint32_t s = ts_node_start_byte(m);
				const char *t = c->src->text;
				uint32_t le = directive_end(t, ts_node_end_byte(m), s);
				buf_printf(out, "%.*s\n%s", (int)(le - s), t + s, buf_cstr(&inner));
				if (!ts_type_is(m, "preproc_else") && !ts_type_is(m, "preproc_elif"))
					buf_puts(out, "#endif\n");
			}
			buf_release(&inner);
			*moved += mv;
			*kept += kp;
			if (why)
				return why;
		}
		/* anything else is a comment or a conditional's condition */
	}
	return NULL;
}

/*
 * A struct of arrays: this file's declaration of the instance gets the
 * per-CPU part after it (with, where the struct is defined, the per-CPU
 * struct holding the fields that move, removed from the struct).
 */
static void plan_soa_decls(struct ctx *c, struct percpu_array *pa, struct finding *fd)
{
	const struct tree_array *t = pa->global;
	if (ts_node_is_null(pa->decl))
		return;
	struct buf text = BUF_INIT;
	if (!ts_node_is_null(pa->soa_struct)) {
		struct buf members = BUF_INIT;
		unsigned moved = 0, kept = 0;
		char *why = soa_members(c, pa, ts_field(pa->soa_struct, "body"), &members, fd, &moved, &kept, true);
		if (!why && !moved)
			why = xasprintf("the parse of struct %s shows none of its fields %s", t->soa_tag, t->soa_fields);
		if (why) {
			unfixable(fd, why);
			buf_release(&members);
			buf_release(&text);
			return;
		}
		buf_printf(&text, "\n%s {\n%s};\n\n", t->type, buf_cstr(&members));
		buf_release(&members);
	}
	buf_printf(&text, "%s%s_PER_CPU(%s, %s);", pa->is_static ? "static " : "", pa->is_extern ? "DECLARE" : "DEFINE",
		   t->type, pa->var);
	add_edit(c, fd, EDIT_INSERT_AFTER, pa->decl, buf_cstr(&text));
	buf_release(&text);
}

/* Attaches the declaration edit and the edits of x's other uses to FD (the array's P008). */
void plan_define_per_cpu_rest(struct ctx *c, struct percpu_array *pa, struct finding *fd)
{
	if (pa->planned)
		return;
	pa->planned = true;
	if (pa->global && pa->global->soa_tag)
		plan_soa_decls(c, pa, fd);
	else if (!ts_node_is_null(pa->decl)) {
		char *decl = pa->is_extern ? xasprintf("DECLARE_PER_CPU(%s, %s);", pa->type, pa->name)
			     : xasprintf("%sDEFINE_PER_CPU(%s, %s);", pa->is_static ? "static " : "", pa->type, pa->name);
		add_edit(c, fd, EDIT_REPLACE, pa->decl, decl);
		free(decl);
	}
	for (size_t i = 0; i < pa->exports.len; i++) {
		const struct export_use *x = &pa->exports.items[i];
		/* a struct of arrays keeps its instance: its per-CPU part is exported next to it */
		char *rep = pa->var && strcmp(pa->var, pa->name) != 0
			? xasprintf("EXPORT_SYMBOL%s(%s);\nEXPORT_PER_CPU_SYMBOL%s(%s)", x->gpl ? "_GPL" : "", pa->name,
				    x->gpl ? "_GPL" : "", pa->var)
			: xasprintf("EXPORT_PER_CPU_SYMBOL%s(%s)", x->gpl ? "_GPL" : "", pa->name);
		add_span_edit(c, fd, x->start, x->end, "declaration", rep);
		free(rep);
	}
	if (pa->dropped) {
		char *note = xasprintf("DEFINE_PER_CPU data is per-CPU by construction; dropped: %s", pa->dropped);
		free(fd->fix_note);
		fd->fix_note = note;
	}
	for (size_t i = 0; i < pa->macro_slots.len; i++) {
		const struct macro_slot *m = &pa->macro_slots.items[i];
		char *rep = m->this_cpu ? xasprintf("__get_cpu_var(%s)", pa->name)
					: xasprintf("per_cpu(%s, %s)", pa->name, m->index);
		add_define_edit(c, fd, m->start, m->end, "subscript_expression", rep);
		free(rep);
	}
	/* every other use: protected this-CPU -> __get_cpu_var, x[i] -> per_cpu(x, i) */
	for (size_t i = 0; i < pa->uses.len; i++) {
		TSNode sub = pa->uses.items[i];
		TSNode idx = ts_strip_parens(ts_field(sub, "index"), c->text);
		const struct fn *g = analysis_fn_at(c->fa, ts_node_start_byte(sub));
		if (call_is(c, idx, "smp_processor_id")) {
			if (this_cpu_use_safe(c, g, sub, idx))
				plan_percpu_site(c, g, pa, sub, true, fd);
			continue; /* unprotected ones are findings with their own edits */
		}
		char *it = orig_text(c, ts_field(sub, "index"));
		char *acc = xasprintf("per_cpu(%s, %s)", pa->var ? pa->var : pa->name, it);
		char *rep = percpu_slot_text(c, pa, sub, acc);
		percpu_slot_edit(c, pa, sub, rep, fd);
		free(rep);
		free(acc);
		free(it);
	}
}

/* The evidence of PA's P008: where it is indexed by the running CPU, and how each use converts. */
static char *conversion_evidence(struct ctx *c, const struct percpu_array *pa)
{
	struct buf b = BUF_INIT;
	const char *v = pa->var ? pa->var : pa->name;
	unsigned prot = 0, unprot = 0, other = 0;
	for (size_t i = 0; i < pa->uses.len; i++) {
		TSNode sub = pa->uses.items[i];
		TSNode idx = ts_strip_parens(ts_field(sub, "index"), c->text);
		const struct fn *g = analysis_fn_at(c->fa, ts_node_start_byte(sub));
		if (!call_is(c, idx, "smp_processor_id")) {
			other++;
			continue;
		}
		if (this_cpu_use_safe(c, g, sub, idx))
			prot++;
		else
			unprot++;
	}
	unsigned mcpu = 0, mother = 0;
	const struct macro_def *md = NULL;
	for (size_t i = 0; i < pa->macro_slots.len; i++) {
		if (pa->macro_slots.items[i].this_cpu && !md)
			md = pa->macro_slots.items[i].d;
		if (pa->macro_slots.items[i].this_cpu)
			mcpu++;
		else
			mother++;
	}
	if (!pa->uses.len && !pa->macro_slots.len) {
		buf_printf(&b, "%s has no use in this file", pa->name);
		return buf_detach(&b);
	}
	if (md) {
		buf_printf(&b, "%s is indexed by the running CPU in the body of #define %s (line %u), whose %u "
			   "use%s all %s preemption off", pa->name, md->name, source_pos(c->src, md->offset).line,
			   pa->macro_uses, pa->macro_uses == 1 ? "" : "s", pa->macro_uses == 1 ? "has" : "have");
		if (pa->this_cpu)
			buf_printf(&b, ", and in %u of its %zu other uses", pa->this_cpu, pa->uses.len);
		buf_puts(&b, "; as DEFINE_PER_CPU: ");
	} else
		buf_printf(&b, "%s is indexed by the running CPU in %u of its %zu uses; as DEFINE_PER_CPU: ", pa->name,
			   pa->this_cpu, pa->uses.len);
	const char *sep = "";
	if (mcpu)
		buf_printf(&b, "%u in a macro body -> __get_cpu_var(%s)", mcpu, pa->name), sep = ", ";
	if (mother)
		buf_printf(&b, "%s%u in a macro body by an explicit CPU -> per_cpu(%s, i)", sep, mother, pa->name),
			sep = ", ";
	if (prot)
		buf_printf(&b, "%u with preemption off -> __get_cpu_var(%s)", prot, v), sep = ", ";
	if (unprot)
		buf_printf(&b, "%s%u in preemptible code -> get_cpu_var(%s) ... put_cpu_var(%s) (%s)", sep, unprot,
			   v, v, pa->is_static ? "P001" : "P002"), sep = ", ";
	if (other)
		buf_printf(&b, "%s%u by an explicit CPU -> per_cpu(%s, i)", sep, other, v);
	return buf_detach(&b);
}

/*
 * An unprotected this-CPU use whose own finding could not be fixed keeps
 * the array as it is: recorded for the file's next check. True if so.
 */
static bool check_uses_fixed(struct ctx *c, struct percpu_array *pa)
{
	for (size_t k = 0; k < pa->slot_uses.len && pa->eligible; k++) {
		const struct slot_use *u = &pa->slot_uses.items[k];
		if (u->finding == SIZE_MAX || c->out->findings.items[u->finding].fix != FIX_NONE)
			continue;
		pa->eligible = false;
		free(pa->why_not);
		pa->why_not = xasprintf("the use in %s() at line %u cannot be fixed: %s", u->f->name, u->line,
					c->out->findings.items[u->finding].fix_note
						? c->out->findings.items[u->finding].fix_note : "see its finding");
		if (c->kept) {
			vec_push(&c->kept->names, xstrdup(pa->name));
			vec_push(&c->kept->whys, xstrdup(pa->why_not));
			return true;
		}
	}
	return false;
}

bool percpu_arrays_report(struct ctx *c)
{
	bool again = false;
	for (size_t i = 0; i < c->arrays.len; i++)
		again |= check_uses_fixed(c, c->arrays.items[i]);
	if (again)
		return true;
	for (size_t i = 0; i < c->arrays.len; i++) {
		struct percpu_array *pa = c->arrays.items[i];
		if (pa->global) {
			report_global_part(c, pa);
			continue;
		}
		if (!pa->this_cpu && !pa->is_static && pa->why_not) { /* the tree's verdict, or its lack */
			add_protected(c, RULE_P008, pa->name_node, NULL,
				      xasprintf("NR_CPUS array %s is left as it is", pa->name), xstrdup(pa->why_not));
			continue;
		}
		const struct macro_def *via = pa->this_cpu ? NULL : cpu_macro_naming(c, pa);
		if (via && !pa->eligible) {
			add_protected(c, RULE_P008, pa->name_node, NULL,
				      xasprintf("NR_CPUS array %s is left as it is", pa->name),
				      xasprintf("%s is indexed by the running CPU in the body of #define %s (line %u); "
						"not converted: %s", pa->name, via->name,
						source_pos(c->src, via->offset).line, pa->why_not));
			continue;
		}
		if (!pa->this_cpu && !via) {
			char *why = ts_node_is_null(pa->other_index)
				? xasprintf("%s has no use in this file", pa->name)
				: xasprintf("%s is never indexed by the running CPU (first use: line %u): a table of "
					    "the CPUs' data, left as it is", pa->name, line_of(c, pa->other_index));
			add_protected(c, RULE_P008, pa->name_node, NULL,
				      xasprintf("NR_CPUS array %s is not this CPU's data", pa->name), why);
			continue;
		}
		char *short_type = one_line_type(pa->type);
		char *type = pa->member ? xasprintf("union { %s %s; ... }", short_type, pa->member)
				 : xstrdup(short_type);
		free(short_type);
		struct finding *fd = add_finding(c, RULE_P008, pa->name_node, NULL, SEV_NOTE, CONF_HIGH,
			pa->eligible ? FIX_DEFINE_PER_CPU : FIX_NONE,
			xasprintf("2.4 per-CPU array %s%s%s[NR_CPUS]: %s in 2.6", type, type_sep(type), pa->name,
				  pa->eligible ? "DEFINE_PER_CPU" : "DEFINE_PER_CPU by hand"),
			conversion_evidence(c, pa));
		free(type);
		if (!fd)
			continue;
		if (pa->eligible)
			plan_define_per_cpu_rest(c, pa, fd);
		else
			set_note(fd, xasprintf("not converted: %s", pa->why_not));
	}
	return false;
}

const struct tree_array *tree_array_find(const tree_array_vec *t, const char *name, const char *file)
{
	const struct tree_array *first = NULL;
	for (size_t i = 0; t && i < t->len; i++)
		if (strcmp(t->items[i].name, name) == 0) {
			if (file && strcmp(t->items[i].file, file) == 0)
				return &t->items[i];
			if (!first)
				first = &t->items[i];
		}
	return first;
}
