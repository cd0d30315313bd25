/*
 * File-scope `T x[NR_CPUS]` arrays, discovery: the declarations of a file
 * (and the tree's arrays it only uses), their uses, exports and the struct
 * of arrays' instance; what converts is decided in percpu_verdict.c and
 * planned in percpu_plan.c.
 */
#define _GNU_SOURCE /* memmem */
#include "rules/percpu_internal.h"

#include <stdlib.h>
#include <string.h>

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
	if (!ts_node_is_null(init) && percpu_all_zero(c, init)) {
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
	pa->why_not = percpu_declaration_why_not(c, n, pa, ndecl, init);
	if (!pa->is_static)
		percpu_global_storage(c, pa, n);
	if (!pa->why_not && !rule_reported_at(c, RULE_P008, ts_node_start_byte(name)))
		pa->why_not = xstrdup("rule P008 (percpu-array-convertible) is off or suppressed at the "
				      "declaration");
	pa->eligible = pa->why_not == NULL;
	vec_push(&c->arrays, pa);
	return false;
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
bool percpu_indexes_this_cpu(const struct ctx *c, TSNode sub)
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

/* Is F one of the per-CPU fields of the struct of arrays PA? */
bool percpu_soa_field(const struct percpu_array *pa, const char *f)
{
	const char *fs = pa->global->soa_fields;
	size_t n = strlen(f);
	for (const char *p = strstr(fs, f); p; p = strstr(p + 1, f))
		if ((p == fs || p[-1] == ' ') && p[n] == ' ')
			return true;
	return false;
}

/* The field expression `x.f` SUB (x.f[i]) subscripts, when PA is a struct of arrays; else a null node. */
TSNode percpu_soa_field_expr(const struct ctx *c, const struct percpu_array *pa, TSNode sub)
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
			percpu_refuse(pa, xasprintf("%s is used whole at line %u (its address or a copy): the per-CPU "
					     "fields would not go with it", pa->name, line_of(c, n)));
		return;
	}
	char *f = node_text(c, ts_field(fe, "field"));
	bool moves = percpu_soa_field(pa, f);
	TSNode sub = ts_parent(fe);
	if (moves && ts_type_is(sub, "subscript_expression") && ts_node_eq(ts_field(sub, "argument"), fe)) {
		vec_push(&pa->uses, sub);
		if (percpu_indexes_this_cpu(c, sub))
			pa->this_cpu++;
		else if (ts_node_is_null(pa->other_index))
			pa->other_index = sub;
	} else if (moves && pa->eligible) {
		percpu_refuse(pa, xasprintf("%s.%s is used other than by subscript at line %u", pa->name, f, line_of(c, n)));
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
			if (percpu_indexes_this_cpu(c, p))
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

void percpu_soa_decls_find(struct ctx *c, struct percpu_array *pa)
{
	ts_walk(ts_tree_root_node(c->fa->tree), soa_decl_visit, &(struct soa_find){c, pa});
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
			percpu_soa_decls_find(c, pa);
		vec_push(&c->arrays, pa);
	}
}

void percpu_arrays_find(struct ctx *c)
{
	TSNode root = ts_tree_root_node(c->fa->tree);
	percpu_soa_refused(c);
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
		percpu_check_macro_uses(c, c->arrays.items[i]);
		percpu_check_sites_fixable(c, c->arrays.items[i]);
	}
	percpu_apply_kept(c);
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
			TSNode fe = percpu_soa_field_expr(c, pa, sub);
			char *f = ts_node_is_null(fe) ? NULL : node_text(c, ts_field(fe, "field"));
			bool moves = f && percpu_soa_field(pa, f);
			free(f);
			if (moves)
				return pa;
		} else if (ts_type_is(a, "identifier") && ts_text_is(a, c->text, pa->name)) {
			return pa;
		}
	}
	return NULL;
}

