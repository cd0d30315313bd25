/*
 * File-scope `T x[NR_CPUS]` arrays, the decision: why an array can or
 * cannot become DEFINE_PER_CPU (its declaration, its storage across the
 * tree, its sites and macros), and its P008 finding with the evidence.
 */
#include "rules/percpu_internal.h"

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

/* Is initialiser V all zero ({0}, {{0}}, { NULL, }, ...)? DEFINE_PER_CPU data starts zeroed. */
bool percpu_all_zero(const struct ctx *c, TSNode v)
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
char *percpu_declaration_why_not(const struct ctx *c, TSNode n, const struct percpu_array *pa,
				 uint32_t ndecl, TSNode init)
{
	if (!ts_node_is_null(ts_field(ts_field(n, "type"), "body")) && !pa->member)
		return xstrdup("the declaration also defines its element type");
	if (ndecl != 1)
		return xstrdup("the declaration declares more than one name");
	if (!ts_node_is_null(init) && !percpu_all_zero(c, init)) {
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
void percpu_global_storage(struct ctx *c, struct percpu_array *pa, TSNode n)
{
	if (!pa->is_extern && c->opts->want && c->opts->verify_depth == 0 && is_c_file(c->src->path)) {
		/* one refused here still refuses another architecture's array of its name */
		struct tree_array t = {xstrdup(pa->name), xstrdup(pa->type), xstrdup(c->src->path),
				       line_of(c, n), pa->why_not ? xstrdup(pa->why_not) : NULL, NULL, NULL, NULL, 0,
				       NULL, NULL, NULL, pa->why_not != NULL, false};
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

void percpu_refuse(struct percpu_array *pa, char *why)
{
	pa->eligible = false;
	free(pa->why_not);
	pa->why_not = why;
}

/* Every unprotected this-CPU site of PA must be fixable, or the array stays as it is. */
void percpu_check_sites_fixable(struct ctx *c, struct percpu_array *pa)
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
			pa->unfixable_use = sub;
			free(no);
		}
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
void percpu_check_macro_uses(struct ctx *c, struct percpu_array *pa)
{
	for (size_t k = 0; k < c->src->defs.len && pa->eligible; k++) {
		const struct macro_def *d = &c->src->defs.items[k];
		if (!text_has_word(d->body, strlen(d->body), pa->name))
			continue;
		if (!pa->is_static || pa->global || pa->member || pa->is_extern) {
			percpu_refuse(pa, xasprintf("%s is used in the body of #define %s (line %u), which a conversion "
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
			percpu_refuse(pa, why);
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

/* Arrays an earlier check of this file kept as they are (rules_run()). */
void percpu_apply_kept(struct ctx *c)
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

/* A struct of arrays the tree leaves as it is: why, at its definition (-v). */
void percpu_soa_refused(struct ctx *c)
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
		percpu_soa_decls_find(c, &pa);
		if (ts_node_is_null(pa.soa_struct))
			continue;
		add_protected(c, RULE_P008, ts_field(pa.soa_struct, "name"), NULL,
			      e->name[0] ? xasprintf("the NR_CPUS fields of struct %s (instance %s) are left as they are",
						     e->soa_tag, e->name)
					 : xasprintf("the NR_CPUS fields of struct %s are left as they are", e->soa_tag),
			      xstrdup(e->why_not));
	}
}

/*
 * Why the this-CPU use SUB (x[smp_processor_id()]) in G is safe as it is
 * (owned), or NULL: preemption off there, the lock G's callers hold on
 * entry, or bring-up code the CPU runs alone (*BOUND set). As
 * check_cpu_read() decides: such a use has no finding of its own, so the
 * conversion gives it __get_cpu_var(x).
 */
static char *this_cpu_use_why(struct ctx *c, const struct fn *g, TSNode sub, TSNode idx, bool *bound)
{
	if (!g)
		return NULL;
	struct point_state ps = flow_state_at(g, ts_node_start_byte(sub));
	if (point_protected(&ps))
		return explain_state(g, &ps);
	char *held = cpu_entry_lock(c, g, idx);
	if (held)
		return held;
	bool whole = false;
	char *why = cpu_stable(c, g, idx, &whole);
	if (why && whole) {
		*bound = true;
		return why;
	}
	free(why);
	return NULL;
}

bool percpu_this_cpu_use_safe(struct ctx *c, const struct fn *g, TSNode sub, TSNode idx)
{
	bool bound = false;
	char *why = this_cpu_use_why(c, g, sub, idx, &bound);
	free(why);
	return why != NULL;
}

/* The uses of an array by the running CPU in one function, and what protects the first of them. */
struct guarded_fn {
	const struct fn *f;
	char *why;      /* owned */
	struct buf lines;
	unsigned n;
};

/* Appends the groups G[0..n) to B, "in f() at lines 3, 7 (why); ...", at most six of them. */
static void guarded_fns_put(struct buf *b, const struct guarded_fn *g, size_t n)
{
	for (size_t i = 0; i < n && i < 6; i++)
		buf_printf(b, "%sin %s() at line%s %s (%s)", i ? "; " : "", g[i].f->name, g[i].n == 1 ? "" : "s",
			   buf_cstr(&g[i].lines), g[i].why);
	if (n > 6)
		buf_printf(b, "; and in %zu other function%s", n - 6, n - 6 == 1 ? "" : "s");
}

/*
 * Every use of PA by the running CPU in this file, and the uses of its
 * macros, already have preemption off: where, and what holds it off there
 * (owned: "in f() at line 3 (spin_lock(&l) at line 2 is held ...)"); *BOUND
 * set when one is bring-up code instead. NULL when one is neither: the
 * array converts, get_cpu_var() there.
 */
static char *uses_protected_why(struct ctx *c, const struct percpu_array *pa, bool *bound)
{
	VEC(struct guarded_fn) groups = VEC_INIT;
	char *out = NULL;
	bool all = !pa->slot_uses.len;
	for (size_t i = 0; i < pa->uses.len && all; i++) {
		TSNode sub = pa->uses.items[i];
		if (!percpu_indexes_this_cpu(c, sub))
			continue;
		TSNode idx = ts_strip_parens(ts_field(sub, "index"), c->text);
		const struct fn *g = analysis_fn_at(c->fa, ts_node_start_byte(sub));
		/* x[get_cpu()] holds preemption off itself (2.6 ppc xmon.c); x[cpu]: the use, in its function */
		char *why = call_is(c, idx, "get_cpu") && g
			? xasprintf("its index get_cpu() turns preemption off")
			: this_cpu_use_why(c, g, sub, call_is(c, idx, "smp_processor_id") ? idx : sub, bound);
		all = why != NULL;
		struct guarded_fn *gf = NULL;
		for (size_t k = 0; k < groups.len && why && !gf; k++)
			if (groups.items[k].f == g)
				gf = &groups.items[k];
		if (!why) {
			break;
		} else if (gf) {
			free(why);
		} else {
			struct guarded_fn n = {g, why, BUF_INIT, 0};
			vec_push(&groups, n);
			gf = &groups.items[groups.len - 1];
		}
		buf_printf(&gf->lines, "%s%u", gf->n++ ? ", " : "", line_of(c, sub));
	}
	const struct macro_def *md = NULL;
	for (size_t i = 0; i < pa->macro_slots.len && !md; i++)
		if (pa->macro_slots.items[i].this_cpu)
			md = pa->macro_slots.items[i].d;
	if (all && (groups.len || md)) {
		struct buf b = BUF_INIT;
		guarded_fns_put(&b, groups.items, groups.len);
		if (md) /* percpu_check_macro_uses() kept it eligible: every use of the macro is protected */
			buf_printf(&b, "%sthe %u use%s of #define %s (line %u), each with preemption off",
				   groups.len ? "; " : "", pa->macro_uses, pa->macro_uses == 1 ? "" : "s", md->name,
				   source_pos(c->src, md->offset).line);
		out = buf_detach(&b);
	}
	for (size_t k = 0; k < groups.len; k++) {
		free(groups.items[k].why);
		buf_release(&groups.items[k].lines);
	}
	vec_release(&groups);
	return out;
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
		if (percpu_this_cpu_use_safe(c, g, sub, idx))
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
 * An array whose every use by the running CPU already has preemption off
 * needs no preemption fix: DEFINE_PER_CPU would change its storage, not its
 * safety (maintainers reading whole-tree 2.4 hunks called such conversions,
 * i386's tsc_values[] in boot code, churn), so it waits for --modernize.
 * WHY (owned) says where and by what; NULL keeps the conversion.
 */
static char *kept_protected(struct ctx *c, const struct percpu_array *pa, bool *bound)
{
	if (!pa->eligible || pa->slot_uses.len || c->opts->modernize)
		return NULL;
	return uses_protected_why(c, pa, bound);
}

/*
 * The evidence of an array left as it is with this file's uses WHERE
 * (taken), some of them bring-up code when BOUND; USERS, the files of a
 * shared array, or NULL.
 */
static char *kept_evidence(const struct percpu_array *pa, char *where, bool bound, const char *users)
{
	const char *safe = bound ? "is already safe (preemption off, or bring-up code the CPU runs alone)"
				 : "already has preemption off";
	char *ev = users ? xasprintf("every use of %s by the running CPU is already safe, in every file naming it "
				     "(%s); in this one it %s: %s; DEFINE_PER_CPU would change its storage, not its "
				     "safety (--modernize converts it)", pa->name, users, safe, where)
			 : xasprintf("every use of %s by the running CPU %s: %s; DEFINE_PER_CPU would change its "
				     "storage, not its safety (--modernize converts it)", pa->name, safe, where);
	free(where);
	return ev;
}

/*
 * This file's part of an array shared across the tree that the tree keeps
 * (every file's uses by the running CPU protected): a protected note at
 * [AT, END) with this file's uses, WHERE (taken; NULL: it has none).
 */
static void report_global_kept(struct ctx *c, const struct percpu_array *pa, size_t at, size_t end, char *where,
			       bool bound)
{
	const struct tree_array *t = pa->global;
	const char *users = t->users ? t->users : t->file;
	if (!c->opts->verbose) {
		free(where);
		return;
	}
	char *ev = where ? kept_evidence(pa, where, bound, users)
		: xasprintf("every use of %s by the running CPU is already safe in the files naming it (%s), and "
			    "this file does not index it by the running CPU; DEFINE_PER_CPU would change its storage, "
			    "not its safety (--modernize converts it)", pa->name, users);
	struct finding *fd = add_finding_at(c, RULE_P008, at, end, NULL, SEV_NOTE, CONF_HIGH, FIX_NONE,
		xasprintf("NR_CPUS array %s, used across files, is left as it is: no preemption fix needed", pa->name),
		ev);
	if (fd)
		fd->protected_site = true;
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
	/* this file's uses by the running CPU, all protected: the tree keeps it when every file's are */
	bool bound = false;
	char *where = pa->eligible && !pa->slot_uses.len ? uses_protected_why(c, pa, &bound) : NULL;
	bool protected_here = !pa->slot_uses.len && (where || (!pa->this_cpu && !pa->macro_slots.len));
	if (t->kept) {
		report_global_kept(c, pa, at, end, where, bound);
		return;
	}
	free(where);
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
	fd->array_protected = protected_here;
	if (pa->eligible)
		plan_define_per_cpu_rest(c, pa, fd);
	else
		set_note(fd, xasprintf("not converted: %s", pa->why_not));
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

/*
 * After the functions are checked: one P008 per NR_CPUS array used as
 * per-CPU data. Returns true when an array planned as converted turned out
 * not to be (a use that cannot be fixed), recorded in c->kept: the file
 * must be checked again.
 */
static bool percpu_arrays_report(struct ctx *c)
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
		bool bound = false;
		char *kept = kept_protected(c, pa, &bound);
		if (kept) {
			add_protected(c, RULE_P008, pa->name_node, NULL,
				      xasprintf("NR_CPUS array %s is left as it is: no preemption fix needed", pa->name),
				      kept_evidence(pa, kept, bound, NULL));
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

/* P008's hooks: the file's NR_CPUS arrays, found before its functions are checked, reported after. */
const struct rule_hooks percpu_decl_hooks = {
	.begin_file = percpu_arrays_find,
	.end_file = percpu_arrays_report,
	.release = percpu_arrays_free,
};
