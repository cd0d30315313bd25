/* Regions: where get/put pairs go, and the live ranges they must cover. */
#include "rules/cpu_shared.h"

#include <stdlib.h>
#include <string.h>

/* ---- regions: where get/put pairs go ----------------------------------------- */

static bool is_jump(TSNode s)
{
	return ts_type_is(s, "return_statement") || ts_type_is(s, "goto_statement") ||
	       ts_type_is(s, "break_statement") || ts_type_is(s, "continue_statement");
}

struct region_scan {
	const struct ctx *c;
	TSNode first, last;     /* block-level statements bounding the region */
	const char *var;        /* a value that must not be returned, or NULL */
	VEC(TSNode) exits;      /* jumps leaving the region */
	char *refuse;           /* why no region can be made */
};

static TSNode jump_target(TSNode jump, bool is_continue)
{
	for (TSNode p = ts_parent(jump); !ts_node_is_null(p); p = ts_parent(p)) {
		if (ts_type_is(p, "for_statement") || ts_type_is(p, "while_statement") ||
		    ts_type_is(p, "do_statement"))
			return p;
		if (!is_continue && ts_type_is(p, "switch_statement"))
			return p;
		if (ts_type_is(p, "function_definition"))
			break;
	}
	return ts_null();
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
	TSNode parent = ts_parent(from);
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
		const struct fn *via;
		enum sleep_kind k = call_may_sleep(c, n, SLEEP_MAYBE, &why, &via);
		if (via)
			buf_printf(&why, "%s() (which %s)", via->name, via->sleep_reason);
		if (k != SLEEP_NO)
			rs->refuse = xasprintf("the region would contain %s at line %u, which %s sleep",
					       buf_cstr(&why), line_of(c, n), k == SLEEP_YES ? "may" : "might");
		buf_release(&why);
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

static bool call_visit(TSNode n, void *ctx)
{
	TSNode *found = ctx;
	if (!ts_node_is_null(*found))
		return false;
	if (ts_type_is(n, "call_expression")) {
		*found = n;
		return false;
	}
	return true;
}

/* The first call in statement S (a return's value), or a null node. */
static TSNode first_call(TSNode s)
{
	TSNode found = ts_null();
	ts_walk(s, call_visit, &found);
	return found;
}

/*
 * Is the region inside the definition of a call that 2.6 makes the start of
 * a preemption-off section (kmap_atomic(): inc_preempt_count() until
 * kunmap_atomic())? Its result is only good on this CPU after it returns,
 * so no region inside it is long enough. Or of the call that ends one
 * (kunmap_atomic()): it runs inside the section, so a region of its own
 * would only hide an acquire not yet ported. NULL, or why (owned).
 */
static char *region_in_acquire(const struct ctx *c, TSNode first)
{
	const struct fn *f = analysis_fn_at(c->fa, ts_node_start_byte(first));
	const struct api *a = f ? api_lookup(f->name, strlen(f->name)) : NULL;
	if (!a || !(a->keys & KEY_PREEMPT) || (a->op != API_ACQUIRE && a->op != API_RELEASE))
		return NULL;
	if (a->op == API_RELEASE)
		return xasprintf("%s() ends a section that 2.6 runs with preemption off from its acquire on "
				 "(kmap_atomic() and kunmap_atomic()): its CPU reads are protected once the pair "
				 "is ported, and a region of its own would hide an acquire left unported; port "
				 "the pair by hand as 2.6 did (dec_preempt_count() at its end)", f->name);
	return xasprintf("%s() disables preemption in 2.6 until its release, and what it returns is "
			 "only good on this CPU: a region ending inside it is too short; port it by hand "
			 "as 2.6 did (inc_preempt_count() at its top)", f->name);
}

/*
 * Does statement S never run to its end (a jump, a block ending in one, an
 * if whose both arms do)? A put_cpu() after it would be dead code.
 */
static bool never_completes(TSNode s)
{
	if (is_jump(s))
		return true;
	if (ts_type_is(s, "compound_statement")) {
		for (uint32_t n = ts_node_named_child_count(s); n-- > 0; ) {
			TSNode last = ts_node_named_child(s, n);
			if (!ts_type_is(last, "comment"))
				return never_completes(last);
		}
		return false;
	}
	if (ts_type_is(s, "if_statement")) {
		TSNode alt = ts_field(s, "alternative");
		if (ts_type_is(alt, "else_clause"))
			alt = ts_node_named_child(alt, 0);
		return !ts_node_is_null(alt) && never_completes(ts_field(s, "consequence")) &&
		       never_completes(alt);
	}
	return false;
}

static bool is_group(TSNode s)
{
	return ts_type_is(s, "preproc_if") || ts_type_is(s, "preproc_ifdef");
}

/* Can the semantic patches insert a put after S? */
static bool is_put_anchor(TSNode s)
{
	return ts_type_is(s, "expression_statement") || ts_type_is(s, "if_statement") ||
	       ts_type_is(s, "for_statement") || ts_type_is(s, "while_statement");
}

/* Does N contain a call? */
static bool has_call(TSNode n)
{
	return !ts_node_is_null(first_call(n));
}

/*
 * May the region cover the #if/#ifdef group G among its statements? Its
 * arms are scanned as the region's other statements (a jump leaving the
 * region from inside an arm is an exit like another). NULL, or why not
 * (owned).
 */
static char *region_across_group(struct region_scan *rs, TSNode g)
{
	const struct ctx *c = rs->c;
	if (ts_node_eq(g, rs->first) || ts_node_eq(g, rs->last))
		return xasprintf("the region would %s inside an arm of the #if/#ifdef at line %u; a get or put "
				 "is not placed in an arm%s", ts_node_eq(g, rs->first) ? "start" : "end",
				 line_of(c, g), ts_node_eq(g, rs->first) ? "" :
				 ", and no statement after the group takes the put (the semantic patch cannot "
				 "anchor on #endif)");
	if (ts_node_has_error(g))
		return xasprintf("an arm of the #if/#ifdef at line %u does not parse as C, so the group is "
				 "not read as a whole", line_of(c, g));
	/*
	 * A jump leaving the region from inside an arm gets its put in that
	 * arm, before it: compiled with the jump, after the get before the
	 * group, so every configuration pairs them.
	 */
	ts_walk(g, region_visit, rs);
	return rs->refuse;
}

/* A region ending among declarations ends after them: no statement between declarations. */
static TSNode region_end(TSNode last)
{
	for (TSNode nx = next_stmt(last); ts_type_is(last, "declaration") && ts_type_is(nx, "declaration") &&
	     !has_call(nx); nx = next_stmt(last))
		last = nx;
	return last;
}

/*
 * The edits at the region's exits: a put before each, and a return whose
 * value calls what may depend on this CPU (`return f(x);`) kept inside: the
 * region made one exit after its end where every path ends in such a
 * return (2.6.9 msr.c), else the value computed before the put at the
 * return itself (plan_kept_exits()). NULL, or why not (owned); *ENDED when
 * the edits made already end the region (its one exit).
 */
static char *plan_exits(const struct ctx *c, TSNode *exits, size_t n, TSNode last, const char *var,
			const char *put, struct finding *fd, bool *ended)
{
	bool *kept = xcalloc(n ? n : 1, sizeof *kept); /* the returns that may depend on this CPU */
	size_t dep = n;                                 /* the first of them */
	for (size_t i = 0; i < n; i++) {
		kept[i] = !ts_node_is_null(first_call(exits[i])) && !exit_cpu_free(c, exits[i], var);
		dep = dep < n || !kept[i] ? dep : i;
	}
	char *why = NULL;
	if (dep == n) {
		char *stmt = xasprintf("%s;", put);
		for (size_t i = 0; i < n; i++)
			add_edit(c, fd, EDIT_INSERT_BEFORE, exits[i], stmt);
		free(stmt);
		goto done;
	}
	/* `return f(x);`: one exit after the region, as 2.6.9 msr.c has it */
	bool pc = strcmp(put, "put_cpu()") == 0;
	char *one = pc ? plan_single_exit(c, last, exits, n, put, NULL) :
		    xstrdup("only a put_cpu() region keeps a returned call inside");
	if (!one) {
		plan_single_exit(c, last, exits, n, put, fd);
		*ended = true;
		goto done;
	}
	char *in = pc ? plan_kept_exits(c, exits, kept, n, put, NULL) : NULL;
	if (pc && !in) {
		plan_kept_exits(c, exits, kept, n, put, fd);
		free(one);
		goto done;
	}
	char *name = node_text(c, ts_field(first_call(exits[dep]), "function"));
	why = xasprintf("the return at line %u calls %s() after %s would end the region, and the call may "
			"depend on this CPU; keep it inside by hand (save its result in a local first; not "
			"done here: %s%s%s)", line_of(c, exits[dep]), name, put, one, in ? "; " : "",
			in ? in : "");
	free(in);
	free(one);
	free(name);
done:
	free(kept);
	return why;
}

/*
 * plan_region() (cpu_shared.h). A region ending with an #if group (uses in
 * its arms) ends after the statement that follows the group, where the
 * put can go: it cannot anchor on #endif.
 */
char *plan_region(const struct ctx *c, TSNode first, TSNode last, const char *var, const char *put,
		  struct finding *fd)
{
	struct region_scan rs = {0};
	TSNode local_call = cpu_local_extend(c, first, &last);
	last = region_end(last);
	if (!ts_node_eq(ts_parent(first), ts_parent(last)))
		return xstrdup("the uses are not in the block of the read");
	char *held = region_cover_locks(c, first, &last);
	if (held)
		return held;
	if (!ts_node_eq(first, last) && is_group(last) && is_put_anchor(next_stmt(last)))
		last = next_stmt(last);
	rs = (struct region_scan){.c = c, .first = first, .last = last, .var = var};
	if (!ts_node_is_null(local_call))
		rs.refuse = value_outlives(c, first, last);
	TSNode parent = ts_parent(first);
	if (!ts_node_eq(parent, ts_parent(last)))
		return xstrdup("the uses are not in the block of the read");
	for (uint32_t i = 0; i < ts_node_named_child_count(parent) && !rs.refuse; i++) {
		TSNode s = ts_node_named_child(parent, i);
		if (ts_node_start_byte(s) < ts_node_start_byte(first) || ts_node_start_byte(s) > ts_node_start_byte(last))
			continue;
		if (is_group(s))
			rs.refuse = region_across_group(&rs, s);
		else
			ts_walk(s, region_visit, &rs);
	}
	if (rs.refuse) {
		vec_release(&rs.exits);
		return extended_refusal(c, local_call, rs.refuse);
	}
	if (source_in_directive(c->src, ts_node_start_byte(first))) {
		vec_release(&rs.exits);
		return xstrdup("the site is inside a #define body");
	}
	char *outside = region_in_acquire(c, first);
	if (!outside)
		outside = cpu_local_outside(c, first, last);
	if (outside) {
		vec_release(&rs.exits);
		return outside;
	}
	bool ended = false;
	char *why = plan_exits(c, rs.exits.items, rs.exits.len, last, var, put, fd, &ended);
	vec_release(&rs.exits);
	if (why || ended)
		return why;
	/* after `L: S` is after S, which the semantic patch anchors on (it cannot on the label) */
	TSNode after = last;
	while (ts_type_is(after, "labeled_statement") && ts_node_named_child_count(after) > 1)
		after = ts_node_named_child(after, ts_node_named_child_count(after) - 1);
	char *stmt = xasprintf("%s;", put);
	if (!never_completes(last))
		add_edit(c, fd, EDIT_INSERT_AFTER, after, stmt);
	free(stmt);
	return NULL;
}

/*
 * A CPU number compared inside a loop (`for (i...) if (smp_processor_id() != i)`):
 * a get/put around each pass lets the task change CPU between passes, so the
 * loop may skip two CPUs or none. NULL, or why (owned).
 */
static char *loop_compare_refusal(const struct ctx *c, TSNode site, TSNode st, TSNode *loop)
{
	TSNode p = ts_parent(site);
	while (ts_type_is(p, "parenthesized_expression"))
		p = ts_parent(p);
	if (!ts_type_is(p, "binary_expression"))
		return NULL;
	char *op = node_text(c, ts_field(p, "operator"));
	bool cmp = strcmp(op, "==") == 0 || strcmp(op, "!=") == 0;
	free(op);
	if (!cmp)
		return NULL;
	for (TSNode a = ts_parent(st); !ts_node_is_null(a) && !ts_type_is(a, "function_definition"); a = ts_parent(a))
		if (ts_type_is(a, "for_statement") || ts_type_is(a, "while_statement") ||
		    ts_type_is(a, "do_statement")) {
			*loop = a;
			return xasprintf("the CPU number is compared inside the loop at line %u; a get/put per "
					 "pass lets the task change CPU between passes; read it once before "
					 "the loop with get_cpu() by hand", line_of(c, a));
		}
	return NULL;
}

/* True if A lies in an #else/#elif arm that does not hold B, of a conditional that does. */
static bool in_other_arm_of(TSNode a, TSNode b)
{
	for (TSNode e = ts_parent(a); !ts_node_is_null(e); e = ts_parent(e)) {
		if (!ts_type_is(e, "preproc_else") && !ts_type_is(e, "preproc_elif"))
			continue;
		if (node_within(b, e))
			continue;
		TSNode owner = ts_parent(e);
		while (ts_type_is(owner, "preproc_elif"))
			owner = ts_parent(owner);
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

/*
 * Does ASSIGN run on every path that continues past it from the read READ,
 * i.e. it sits in READ's block, not under an if, loop, switch, `?:`, `&&`
 * or `||`? Only such a reassignment ends the read's live range; after
 * `if (x) cpu = other;` the old value still reaches later uses.
 */
static bool always_after(const struct ctx *c, TSNode assign, TSNode read)
{
	TSNode block = ts_parent(read);
	while (!ts_node_is_null(block) && !ts_type_is(block, "compound_statement"))
		block = ts_parent(block);
	static const char *const branches[] = {"if_statement", "while_statement", "for_statement",
		"do_statement", "switch_statement", "case_statement", "conditional_expression"};
	for (TSNode a = ts_parent(assign); !ts_node_is_null(a); a = ts_parent(a)) {
		if (ts_node_eq(a, block))
			return true;
		for (size_t i = 0; i < ARRAY_SIZE(branches); i++)
			if (ts_type_is(a, branches[i]))
				return false;
		TSNode op = ts_type_is(a, "binary_expression") ? ts_field(a, "operator") : ts_null();
		if (ts_text_is(op, c->text, "&&") || ts_text_is(op, c->text, "||"))
			return false;
	}
	return false;
}

struct mention {
	const struct ctx *c;
	const char *var;
	bool found;
};

static bool mention_visit(TSNode n, void *ctx)
{
	struct mention *m = ctx;
	if (m->found)
		return false;
	if (ts_type_is(n, "identifier") && ts_text_is(n, m->c->text, m->var))
		m->found = true;
	return !m->found;
}

/*
 * Does assignment N give VAR a value that no longer derives from the old
 * one? `cpu = 0;` does; `mask = mask << 24;` and `mask |= bit;` carry the
 * CPU number on.
 */
static bool fresh_value(const struct ctx *c, TSNode n, const char *var)
{
	if (!ts_text_is(ts_field(n, "operator"), c->text, "="))
		return false;
	struct mention m = {c, var, false};
	ts_walk(ts_field(n, "right"), mention_visit, &m);
	return !m.found;
}

static bool var_use_visit(TSNode n, void *ctx)
{
	struct var_uses *vu = ctx;
	if (ts_type_is(n, "assignment_expression")) {
		TSNode l = ts_field(n, "left");
		/* a reassignment ends the live range, unless it is in another
		 * configuration (`#ifdef CONFIG_SMP cpu = smp_processor_id(); #else cpu = 0;`)
		 * or the new value is made from the old one */
		if (ts_type_is(l, "identifier") && ts_text_is(l, vu->c->text, vu->var) && fresh_value(vu->c, n, vu->var) &&
		    ts_node_start_byte(n) > vu->after && ts_node_start_byte(n) < vu->stop &&
		    !exclusive_arms(n, vu->read) && always_after(vu->c, n, vu->read))
			vu->stop = ts_node_start_byte(n);
		return true;
	}
	if (ts_type_is(n, "identifier") && ts_text_is(n, vu->c->text, vu->var) &&
	    ts_node_start_byte(n) > vu->after)
		vec_push(&vu->uses, n);
	return true;
}

void var_uses_find(struct var_uses *vu, TSNode body)
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

struct local_find {
	const struct ctx *c;
	const char *name;
	bool found;
	bool scalar; /* declared as a plain name of a value type (local_is_value) */
};

/* Is type node T a value type: a builtin, a struct/union/enum, a uN/sN or an X_t typedef? */
static bool value_type(const struct ctx *c, TSNode t)
{
	if (ts_type_is(t, "primitive_type") || ts_type_is(t, "sized_type_specifier") ||
	    ts_type_is(t, "struct_specifier") || ts_type_is(t, "union_specifier") ||
	    ts_type_is(t, "enum_specifier"))
		return true;
	if (!ts_type_is(t, "type_identifier"))
		return false;
	char *name = node_text(c, t);
	const char *b = name + (strncmp(name, "__", 2) == 0 ? 2 : 0);
	size_t n = strlen(name);
	bool ok = (n > 2 && strcmp(name + n - 2, "_t") == 0) ||
		  ((b[0] == 'u' || b[0] == 's') && (!strcmp(b + 1, "8") || !strcmp(b + 1, "16") ||
						    !strcmp(b + 1, "32") || !strcmp(b + 1, "64")));
	free(name);
	return ok;
}

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
			bool plain = true;
			while (!ts_node_is_null(d) && !ts_type_is(d, "identifier")) {
				plain = plain && ts_type_is(d, "init_declarator");
				d = ts_field(d, "declarator");
			}
			if (!ts_node_is_null(d) && ts_text_is(d, lf->c->text, lf->name)) {
				lf->scalar = plain && value_type(lf->c, ts_field(n, "type"));
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

static bool find_local(const struct ctx *c, const struct fn *f, const char *name, bool *scalar)
{
	struct local_find lf = {c, name, false, false};
	TSNode decl = ts_field(f->def, "declarator");
	while (!ts_node_is_null(decl) && !ts_type_is(decl, "function_declarator"))
		decl = ts_field(decl, "declarator");
	if (!ts_node_is_null(decl))
		ts_walk(ts_field(decl, "parameters"), local_visit, &lf);
	if (!lf.found)
		ts_walk(f->body, local_visit, &lf);
	*scalar = lf.found && lf.scalar;
	return lf.found;
}

/* True if NAME is a parameter or an automatic variable of F. */
bool is_local(const struct ctx *c, const struct fn *f, const char *name)
{
	bool scalar;
	return find_local(c, f, name, &scalar);
}

/*
 * Does the assignment DEF copy a value out of this CPU's slot, with SITE
 * (the CPU number) only as the index: `n = x[smp_processor_id()].count;`
 * into a local of a value type? Then the copy no longer depends on the CPU
 * and the region ends with the statement. A pointer (`s = &x[...]`), an
 * array that decays to one, or the CPU number itself keeps the region open
 * up to the local's last use.
 */
static bool copies_slot_value(const struct ctx *c, const struct fn *f, TSNode site, TSNode def,
			      const char *var)
{
	TSNode rhs = ts_type_is(def, "init_declarator") ? ts_field(def, "value") : ts_field(def, "right");
	TSNode sub = ts_parent(site);
	if (!ts_type_is(sub, "subscript_expression") || !ts_node_eq(ts_field(sub, "index"), site))
		return false;
	for (TSNode n = sub; !ts_node_eq(n, rhs);) {
		TSNode p = ts_parent(n);
		if (ts_node_is_null(p))
			return false;
		bool through = (ts_type_is(p, "subscript_expression") && ts_node_eq(ts_field(p, "argument"), n)) ||
			       (ts_type_is(p, "field_expression") && ts_node_eq(ts_field(p, "argument"), n)) ||
			       ts_type_is(p, "parenthesized_expression");
		if (!through)
			return false;
		n = p;
	}
	bool scalar;
	return find_local(c, f, var, &scalar) && scalar;
}

/*
 * Why SITE cannot take a get/put pair of its own in statement ST, though
 * one get_cpu() into a local before ST can serve it (cpu_read_hoist.c), or
 * NULL: the site is evaluated on some paths only (the right operand of
 * &&/||, an arm of ?:), ST reads the CPU number more than once (each read
 * would get its own pair, in an unspecified order), or the number is
 * compared inside a loop. *LOOP gets that loop, or a null node.
 */
char *read_hoist_reason(const struct ctx *c, TSNode site, TSNode st, TSNode *loop)
{
	*loop = ts_null();
	/* *LOOP first: whatever the reason given, a comparison in a loop needs the whole loop */
	char *in_loop = loop_compare_refusal(c, site, st, loop);
	for (TSNode a = ts_parent(site); !ts_node_is_null(a) && !ts_node_eq(a, st) && !in_loop; a = ts_parent(a)) {
		/* evaluated on some paths only: the release after the statement runs on all
		 * (the control flow graph does not split expressions, so the re-analysis
		 * would not see it) */
		TSNode op = ts_type_is(a, "binary_expression") ? ts_field(a, "operator") : ts_null();
		if ((ts_text_is(op, c->text, "&&") || ts_text_is(op, c->text, "||")) &&
		    node_within(site, ts_field(a, "right")))
			return xasprintf("the site is in the right operand of %s at line %u, evaluated on some "
					 "paths only; a release after the statement would run on all of them",
					 ts_text_is(op, c->text, "&&") ? "&&" : "||", line_of(c, a));
		if (ts_type_is(a, "conditional_expression") && !node_within(site, ts_field(a, "condition")))
			return xasprintf("the site is in one branch of ?: at line %u, evaluated on some paths "
					 "only; a release after the statement would run on all of them",
					 line_of(c, a));
	}
	unsigned reads = count_cpu_reads(c, st);
	if (reads < 2)
		return in_loop;
	free(in_loop);
	return xasprintf("the statement reads the CPU number %u times; read it once into a local "
			 "with get_cpu() by hand", reads);
}

/*
 * Why statement ST cannot hold a get/put pair for SITE as it is, or NULL:
 * the site is an argument of a macro that may expand to nothing (dprintk
 * when debugging is off), leaving the release unbalanced; or one of
 * read_hoist_reason()'s.
 */
static char *site_stmt_refusal(const struct ctx *c, TSNode site, TSNode st)
{
	for (TSNode a = ts_parent(site); !ts_node_is_null(a) && !ts_node_eq(a, st); a = ts_parent(a)) {
		if (!ts_type_is(a, "call_expression") || node_within(site, ts_field(a, "function")))
			continue;
		const char *mn;
		size_t ml = ts_call_name(a, c->text, &mn);
		if (ml && call_may_vanish(c, a, site))
			return xasprintf("the site is an argument of %.*s(), a macro that may expand to nothing "
					 "or evaluate it on some paths only; a release after it would then be "
					 "unbalanced", (int)ml, mn);
	}
	TSNode loop;
	return read_hoist_reason(c, site, st, &loop);
}

TSNode guard_region_end(TSNode site, TSNode st)
{
	if (!ts_type_is(st, "if_statement") || !node_within(site, ts_field(st, "condition")) ||
	    !ts_node_is_null(ts_field(st, "alternative")) || !never_completes(ts_field(st, "consequence")))
		return ts_null();
	TSNode last = st;
	for (TSNode nx = next_stmt(st); !ts_node_is_null(nx); nx = next_stmt(nx))
		last = nx;
	return ts_node_eq(last, st) ? ts_null() : last;
}

char *read_refusal(const struct ctx *c, TSNode site)
{
	TSNode st = block_stmt(site);
	return ts_node_is_null(st) ? NULL : site_stmt_refusal(c, site, st);
}

/*
 * The variable statement ST assigns from an expression holding SITE (an
 * identifier, or the lvalue it is stored through), or a null node; *DEF
 * gets the defining node.
 */
static TSNode derived_var(TSNode site, TSNode st, TSNode *def)
{
	TSNode dv;
	memset(&dv, 0, sizeof dv);
	*def = st;
	for (TSNode a = ts_parent(site); !ts_node_is_null(a) && !ts_node_eq(a, st); a = ts_parent(a)) {
		if (ts_type_is(a, "init_declarator") && node_within(site, ts_field(a, "value"))) {
			dv = ts_field(a, "declarator");
			while (!ts_node_is_null(dv) && !ts_type_is(dv, "identifier"))
				dv = ts_field(dv, "declarator");
			*def = a;
			break;
		}
		if (ts_type_is(a, "assignment_expression") && node_within(site, ts_field(a, "right"))) {
			dv = ts_field(a, "left");
			*def = a;
			break;
		}
	}
	return dv;
}

/*
 * Extends *LAST (the statement ST to begin with) to the statement of the
 * last use of local VAR, defined at DEF from SITE. NULL, or why not (owned).
 */
static char *extend_to_uses(const struct ctx *c, const struct fn *f, TSNode site, TSNode st, TSNode def,
			    const char *var, TSNode *last)
{
	struct var_uses vu;
	memset(&vu, 0, sizeof vu);
	vu.c = c;
	vu.read = site;
	vu.var = var;
	vu.after = ts_node_end_byte(def);
	if (is_local(c, f, var))
		var_uses_find(&vu, f->body);
	char *no = NULL;
	for (size_t i = 0; i < vu.uses.len && !no; i++) {
		TSNode u = vu.uses.items[i];
		TSNode s2 = ts_parent(u);
		while (!ts_node_is_null(s2) && !ts_node_eq(ts_parent(s2), ts_parent(st)))
			s2 = ts_parent(s2);
		if (ts_node_is_null(s2))
			no = xasprintf("%s, derived from it, is used at line %u outside the block", var, line_of(c, u));
		else if (ts_node_start_byte(s2) > ts_node_start_byte(*last))
			*last = s2;
	}
	vec_release(&vu.uses);
	return no;
}

/*
 * The get/put region for a site used within one statement: that statement,
 * extended to the last use of a local the statement derives from the site
 * (`s = &x[smp_processor_id()]; s->n++;` keeps s pointing at this CPU's
 * slot, so the region must cover s's uses).
 */
/*
 * The statement of ST that holds SITE as the lone body of an if, else or
 * loop (`if (c) x[smp_processor_id()]--;`), the innermost, or ST itself:
 * a region around the whole if would put_cpu() on the path that never got.
 */
static TSNode lone_body_of(TSNode site, TSNode st)
{
	TSNode body = st;
	for (TSNode a = site, p = ts_parent(site); !ts_node_is_null(p) && !ts_node_eq(a, st); a = p, p = ts_parent(p)) {
		bool lone = (ts_type_is(p, "if_statement") && (ts_node_eq(a, ts_field(p, "consequence")) ||
							       ts_node_eq(a, ts_field(p, "alternative")))) ||
			    ts_type_is(p, "else_clause") ||
			    ((ts_type_is(p, "while_statement") || ts_type_is(p, "for_statement") ||
			      ts_type_is(p, "do_statement")) && ts_node_eq(a, ts_field(p, "body")));
		if (lone && !ts_type_is(a, "compound_statement") && !ts_type_is(a, "else_clause"))
			return a;
	}
	return body;
}

char *plan_site_region(struct ctx *c, const struct fn *f, TSNode site, const char *put, struct finding *fd)
{
	TSNode st = block_stmt(site);
	if (ts_node_is_null(st))
		return xstrdup("the site is not in a statement of a block");
	if (ts_type_is(st, "return_statement"))
		return xstrdup("the value is returned: what the function computes from the CPU number stays this "
			       "CPU's only while its caller keeps preemption off, so the get/put belongs in the "
			       "caller (as 2.6.9 pairs tlb_gather_mmu()'s get_cpu_var() with tlb_finish_mmu()); "
			       "fix by hand");
	char *no = site_stmt_refusal(c, site, st);
	if (no)
		return no;
	TSNode def;
	TSNode dv = derived_var(site, st, &def);
	/* stored through a field or pointer: it outlives the region like a global,
	 * and the region is the statement itself */
	if (ts_node_is_null(dv) || !ts_type_is(dv, "identifier")) {
		TSNode body = lone_body_of(site, st);
		return plan_region(c, body, body, NULL, put, fd);
	}
	char *var = node_text(c, dv);
	TSNode last = st;
	if (copies_slot_value(c, f, site, def, var))
		last = st;
	else if (!is_local(c, f, var) && !call_is(c, site, "smp_processor_id"))
		no = xasprintf("the value is stored in %s, which outlives any region", var);
	else
		no = extend_to_uses(c, f, site, st, def, var, &last);
	if (!no)
		no = plan_region(c, st, last, var, put, fd);
	free(var);
	return no;
}
