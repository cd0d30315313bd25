/*
 * File-scope `T x[NR_CPUS]` arrays, the edits: each use's per-CPU slot
 * (get_cpu_var, __get_cpu_var, per_cpu, this_cpu_*), the DEFINE_PER_CPU
 * or DECLARE_PER_CPU declaration and exports, and a struct of arrays'
 * per-CPU part moved out of its struct.
 */
#include "rules/percpu_internal.h"
#include "parse/ctext.h"

#include <stdlib.h>
#include <string.h>

TSNode percpu_slot(const struct percpu_array *pa, TSNode sub)
{
	return pa->member ? ts_parent(sub) : sub;
}

void percpu_slot_edit(const struct ctx *c, const struct percpu_array *pa, TSNode sub, const char *rep,
		      struct finding *fd)
{
	/* a field of a struct of arrays: a rule of its own, so a run of its own */
	if (!ts_node_is_null(percpu_soa_field_expr(c, pa, sub)))
		add_span_edit(c, fd, ts_node_start_byte(sub), ts_node_end_byte(sub), "field_subscript", rep);
	else
		add_edit(c, fd, EDIT_REPLACE, percpu_slot(pa, sub), rep);
}

char *percpu_slot_text(const struct ctx *c, const struct percpu_array *pa, TSNode sub, const char *acc)
{
	TSNode fe = percpu_soa_field_expr(c, pa, sub);
	if (ts_node_is_null(fe))
		return xstrdup(acc);
	char *f = node_text(c, ts_field(fe, "field"));
	char *out = xasprintf("%s.%s", acc, f);
	free(f);
	return out;
}

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
	bool modern = c->opts->target == TARGET_MODERN && plan_this_cpu(c, slot, name, is_protected, fd);
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

/* Does the field declaration FD (of a struct of arrays PA's struct) declare fields that move? */
static bool soa_moves(const struct ctx *c, const struct percpu_array *pa, TSNode fd)
{
	TSNode d = ts_field(fd, "declarator");
	while (ts_type_is(d, "array_declarator") || ts_type_is(d, "pointer_declarator"))
		d = ts_field(d, "declarator");
	if (!ts_type_is(d, "field_identifier"))
		return false;
	char *f = node_text(c, d);
	bool moves = percpu_soa_field(pa, f);
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
		alone = ctext_at(t, e, k) != CTEXT_BLOCK_COMMENT && ctext_at(t, e, k) != CTEXT_LINE_COMMENT;
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
			if (percpu_this_cpu_use_safe(c, g, sub, idx))
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
