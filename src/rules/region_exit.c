/*
 * One exit for a region whose returns compute their value inside it
 * (region.c asks): `return f(x);` becomes `ret = f(x);`, and the region
 * ends in `put_cpu(); return ret;` after its last statement, with a `ret`
 * local of the function's return type. The 2.6.9 shape of
 * arch/i386/kernel/msr.c do_wrmsr(): one ret local, preemption off before
 * the test, back on before the single return. Only where that keeps the
 * meaning as it is: every path through the region's last statement ends
 * in one of those returns, and that statement ends the function.
 */
#include "rules/cpu_shared.h"

#include <stdlib.h>
#include <string.h>

/* Is the return R the last thing statement S does on its path (S itself, a block's last, an arm's)? */
static bool in_tail(TSNode s, TSNode r)
{
	if (ts_node_eq(s, r))
		return true;
	if (ts_type_is(s, "compound_statement")) {
		for (uint32_t n = ts_node_named_child_count(s); n-- > 0;) {
			TSNode k = ts_node_named_child(s, n);
			if (!ts_type_is(k, "comment"))
				return in_tail(k, r);
		}
		return false;
	}
	if (ts_type_is(s, "if_statement")) {
		TSNode alt = ts_field(s, "alternative");
		if (ts_type_is(alt, "else_clause"))
			alt = ts_node_named_child(alt, 0);
		return in_tail(ts_field(s, "consequence"), r) || (!ts_node_is_null(alt) && in_tail(alt, r));
	}
	return false;
}

/* The last statement of F's body (skipping comments), or a null node. */
static TSNode body_last(const struct fn *f)
{
	for (uint32_t n = ts_node_named_child_count(f->body); n-- > 0;) {
		TSNode k = ts_node_named_child(f->body, n);
		if (!ts_type_is(k, "comment"))
			return k;
	}
	return ts_null();
}

/* F's return type as a declaration prefix ("int ", "struct x *"), or NULL when not a plain one. */
static char *return_type(const struct ctx *c, const struct fn *f)
{
	TSNode t = ts_field(f->def, "type");
	if (ts_node_is_null(t) || ts_text_is(t, c->text, "void"))
		return NULL;
	for (uint32_t i = 0; i < ts_node_named_child_count(f->def); i++)
		if (ts_type_is(ts_node_named_child(f->def, i), "type_qualifier"))
			return NULL;
	unsigned stars = 0;
	TSNode d = ts_field(f->def, "declarator");
	for (; ts_type_is(d, "pointer_declarator"); d = ts_field(d, "declarator"))
		stars++;
	if (!ts_type_is(d, "function_declarator") || stars > 2)
		return NULL;
	char *name = orig_text(c, t);
	char *r = xasprintf("%s %s", name, stars == 2 ? "**" : stars ? "*" : "");
	free(name);
	return r;
}

/* A name for the value local that F and the file's #defines do not use, or NULL. */
static const char *value_name(const struct ctx *c, const struct fn *f)
{
	static const char *const names[] = {"ret", "rc", "retval"};
	return fresh_local_name(c, f, names, ARRAY_SIZE(names));
}

/* The last declaration of F's body that get-cpu.cocci can insert after, or a null node. */
static TSNode last_decl(TSNode body)
{
	TSNode last = ts_null();
	for (uint32_t i = 0; i < ts_node_named_child_count(body); i++) {
		TSNode s = ts_node_named_child(body, i);
		if (ts_type_is(s, "comment"))
			continue;
		if (!ts_type_is(s, "declaration"))
			break;
		last = s;
	}
	return last;
}

/* Why the region's exits cannot become one, or NULL (the returns in EXITS checked one by one). */
static char *exits_refusal(const struct ctx *c, TSNode last, TSNode *exits, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		TSNode r = exits[i];
		if (!ts_type_is(r, "return_statement") || !ts_node_named_child_count(r))
			return xasprintf("the %s at line %u leaves the region without a value to keep",
					 ts_node_type(r), line_of(c, r));
		if (!in_tail(last, r))
			return xasprintf("the return at line %u is not the last thing its path does in the "
					 "region, so it cannot become an assignment", line_of(c, r));
		TSNode v = ts_node_named_child(r, 0);
		if (line_of(c, v) != source_pos(c->src, ts_node_end_byte(v)).line || count_cpu_reads(c, v))
			return xasprintf("the value returned at line %u spans lines or reads the CPU number",
					 line_of(c, r));
	}
	return NULL;
}

char *plan_single_exit(const struct ctx *c, TSNode last, TSNode *exits, size_t n, const char *put,
		       struct finding *fd)
{
	const struct fn *f = analysis_fn_at(c->fa, ts_node_start_byte(last));
	if (!f || !ts_node_eq(ts_parent(last), f->body) || !ts_node_eq(body_last(f), last))
		return xstrdup("the region does not end the function, so its returns cannot become one "
			       "after it");
	char *no = exits_refusal(c, last, exits, n);
	if (no)
		return no;
	TSNode decl = last_decl(f->body);
	if (!ts_type_is(decl, "declaration") || ts_node_named_child_count(decl) != 2)
		return xstrdup("the function has no plain declaration to put the value's local after");
	char *type = return_type(c, f);
	const char *name = value_name(c, f);
	if (!type || !name) {
		free(type);
		return xstrdup(!type ? "the function's return type is not one a local can be declared with "
				       "as it is written"
				     : "every name for the value's local (ret, rc, retval) is taken");
	}
	char *text = xasprintf("%s%s;", type, name);
	add_edit(c, fd, EDIT_INSERT_AFTER, decl, text);
	free(text);
	for (size_t i = 0; i < n; i++) {
		char *v = orig_text(c, ts_node_named_child(exits[i], 0));
		text = xasprintf("%s = %s;", name, v);
		add_edit(c, fd, EDIT_REPLACE, exits[i], text);
		free(text);
		free(v);
	}
	/* one line in the plan (the checks keep every line's number); get-cpu.cocci breaks it in two */
	text = xasprintf("%s; return %s;", put, name);
	add_edit(c, fd, EDIT_INSERT_AFTER, last, text);
	free(text);
	free(type);
	return NULL;
}

/* Does F return void (the plain type, not a pointer to it)? */
static bool returns_void(const struct ctx *c, const struct fn *f)
{
	return ts_text_is(ts_field(f->def, "type"), c->text, "void") &&
	       ts_type_is(ts_field(f->def, "declarator"), "function_declarator");
}

/* Why the return R cannot keep its value's computation inside the region, or NULL. */
static char *kept_refusal(const struct ctx *c, TSNode r)
{
	if (!ts_type_is(r, "return_statement") || !ts_node_named_child_count(r))
		return xasprintf("the %s at line %u leaves the region without a value to keep", ts_node_type(r),
				 line_of(c, r));
	TSNode v = ts_node_named_child(r, 0);
	if (line_of(c, v) != source_pos(c->src, ts_node_end_byte(v)).line || count_cpu_reads(c, v))
		return xasprintf("the value returned at line %u spans lines or reads the CPU number",
				 line_of(c, r));
	return NULL;
}

/*
 * plan_kept_exits() (cpu_shared.h). `return f(x);` becomes `f(x); put_cpu();`
 * and `return;` in a void function (so an unbraced arm gets its braces from
 * the semantic patch), `ret = f(x); put_cpu();` and `return ret;` in another.
 */
char *plan_kept_exits(const struct ctx *c, TSNode *exits, const bool *kept, size_t n, const char *put,
		      struct finding *fd)
{
	const struct fn *f = n ? analysis_fn_at(c->fa, ts_node_start_byte(exits[0])) : NULL;
	if (!f)
		return xstrdup("the region's returns are not in a function");
	bool is_void = returns_void(c, f);
	for (size_t i = 0; i < n; i++) {
		char *no = kept[i] ? kept_refusal(c, exits[i]) : NULL;
		if (no)
			return no;
	}
	char *type = is_void ? NULL : return_type(c, f);
	const char *name = is_void ? "" : value_name(c, f);
	TSNode decl = last_decl(f->body);
	if (!is_void && (!ts_type_is(decl, "declaration") || ts_node_named_child_count(decl) != 2 || !type ||
			 !name)) {
		free(type);
		return xstrdup(!ts_type_is(decl, "declaration") || ts_node_named_child_count(decl) != 2
			       ? "the function has no plain declaration to put the value's local after"
			       : !type ? "the function's return type is not one a local can be declared with as it "
					 "is written"
			       : "every name for the value's local (ret, rc, retval) is taken");
	}
	if (!fd) {
		free(type);
		return NULL;
	}
	char *text;
	if (!is_void) {
		text = xasprintf("%s%s;", type, name);
		add_edit(c, fd, EDIT_INSERT_AFTER, decl, text);
		free(text);
	}
	for (size_t i = 0; i < n; i++) {
		if (!kept[i]) {
			text = xasprintf("%s;", put);
			add_edit(c, fd, EDIT_INSERT_BEFORE, exits[i], text);
			free(text);
			continue;
		}
		char *v = orig_text(c, ts_node_named_child(exits[i], 0));
		/* one line in the plan (the checks keep every line's number); get-cpu.cocci breaks it in two */
		text = xasprintf("%s%s%s; %s;", name, is_void ? "" : " = ", v, put);
		add_edit(c, fd, EDIT_INSERT_BEFORE, exits[i], text);
		free(text);
		text = xasprintf("return%s%s;", is_void ? "" : " ", name);
		add_edit(c, fd, EDIT_REPLACE, exits[i], text);
		free(text);
		free(v);
	}
	free(type);
	return NULL;
}

struct cpu_free {
	const struct ctx *c;
	const char *var; /* the region's CPU number, or NULL */
	bool dep;        /* something in the return may depend on this CPU */
};

static bool any_call_visit(TSNode n, void *ctx)
{
	bool *found = ctx;
	if (ts_type_is(n, "call_expression") || ts_type_is(n, "gnu_asm_expression"))
		*found = true;
	return !*found;
}

/*
 * Is F's body plain C: no call (no smp_processor_id(), no call on this
 * CPU's state, nothing that could) and no inline asm, which may work on
 * this CPU's registers (i386 msr.c wrmsr_eio() is all asm)?
 */
static bool leaf_fn(const struct fn *f)
{
	bool found = false;
	ts_walk(f->body, any_call_visit, &found);
	return !found;
}

static bool cpu_free_visit(TSNode n, void *ctx)
{
	struct cpu_free *cf = ctx;
	if (cf->dep)
		return false;
	if (cf->var && ts_type_is(n, "identifier") && ts_text_is(n, cf->c->text, cf->var)) {
		cf->dep = true;
		return false;
	}
	if (!ts_type_is(n, "call_expression"))
		return true;
	const char *name;
	size_t len = ts_call_name(n, cf->c->text, &name);
	int i = len ? analysis_fn_index(cf->c->fa, name, len) : -1;
	cf->dep = i < 0 || !leaf_fn(&cf->c->fa->fns.items[i]);
	return !cf->dep;
}

bool exit_cpu_free(const struct ctx *c, TSNode exit, const char *var)
{
	struct cpu_free cf = {c, var, false};
	ts_walk(exit, cpu_free_visit, &cf);
	return !cf.dep;
}
