/* P004: 2.4 reschedule checks, SCHED_YIELD, macros that test need_resched and #define bodies. */
#define _GNU_SOURCE /* memmem */
#include "rules/ctx.h"
#include "parse/ctext.h"

#include <stdlib.h>
#include <string.h>

/*
 * F writes current->need_resched (or takes its address, or compares it with
 * a polling marker) at line c->fn_resched_write: its tests belong to that
 * protocol, so its P004 rewrites are refused too (P004's end_function hook).
 */
static void resched_tests_stay(struct ctx *c, const struct fn *f);

static const struct macro_def *resched_macro(const struct ctx *c, TSNode ident, bool function_like);

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

/*
 * Why the test CHILD (under P) is not a whole `if (test) schedule();`, or
 * NULL when it is; *IFS gets the statement the condition belongs to.
 */
static const char *resched_shape(const struct ctx *c, TSNode child, TSNode p, TSNode *ifs_out)
{
	/* climb through unlikely()/likely() */
	TSNode cond = child;
	while (ts_type_is(p, "argument_list") &&
	       (call_is(c, ts_parent(p), "unlikely") || call_is(c, ts_parent(p), "likely"))) {
		p = up(ts_parent(p), &cond);
	}
	TSNode ifs = ts_parent(cond);
	*ifs_out = ifs;
	bool exact = ts_type_is(cond, "parenthesized_expression") && ts_type_is(ifs, "if_statement") &&
		     ts_node_eq(ts_field(ifs, "condition"), cond);
	if (!exact)
		return "the test is part of a larger expression";
	if (!ts_node_is_null(ts_field(ifs, "alternative")))
		return "the if has an else branch";
	if (ts_type_is(ts_parent(ifs), "else_clause"))
		return "the test is an else-if";
	if (!is_resched_body(c, ts_field(ifs, "consequence")))
		return "the branch does more than schedule()";
	return NULL;
}

/*
 * How the field use CHILD (under parent P) is not a plain read: a sentence
 * with %s for the field ("writes %s"), with the kind of use in *NOUN; NULL
 * when it is a test.
 */
static const char *field_not_a_test(const struct ctx *c, TSNode child, TSNode p, const char **noun)
{
	*noun = "a write";
	if (ts_type_is(p, "assignment_expression") && ts_node_eq(ts_field(p, "left"), child))
		return "writes %s";
	if (ts_type_is(p, "update_expression"))
		return "writes %s";
	*noun = "an address";
	if (ts_type_is(p, "pointer_expression") && ts_text_is(ts_field(p, "operator"), c->text, "&"))
		return "takes the address of %s";
	*noun = "an asm operand";
	for (TSNode a = p; !ts_node_is_null(a); a = ts_parent(a))
		if (ts_type_is(a, "gnu_asm_expression"))
			return "uses %s as an inline asm operand";
	*noun = "a comparison with a value need_resched() does not return";
	if (ts_type_is(p, "binary_expression")) {
		TSNode other = ts_node_eq(ts_field(p, "left"), child) ? ts_field(p, "right") : ts_field(p, "left");
		char *op = node_text(c, ts_field(p, "operator"));
		bool cmp = strchr("=!<>", op[0]) != NULL;
		free(op);
		if (cmp && !(ts_type_is(other, "number_literal") && ts_text_is(other, c->text, "0")))
			return "compares %s with a value (a 2.4 polling marker such as -1)";
	}
	return NULL;
}

/* ---- writes of the flag: set_tsk_need_resched() / clear_tsk_need_resched() ---- */

/*
 * The 2.6 call that is the write P of FIELD (`T->need_resched = K;`, K a
 * constant: clear_tsk_need_resched(T) when it is 0, else
 * set_tsk_need_resched(T)), owned by the caller; NULL with *WHY saying why
 * the write has none (*WHY NULL: P is not an assignment of FIELD).
 */
static char *flag_write_call(const struct ctx *c, TSNode field, TSNode p, const char **why)
{
	*why = NULL;
	if (!ts_type_is(p, "assignment_expression") || !ts_node_eq(ts_field(p, "left"), field) ||
	    !ts_type_is(field, "field_expression"))
		return NULL;
	*why = "a compound assignment, which also reads the flag";
	if (!ts_text_is(ts_field(p, "operator"), c->text, "="))
		return NULL;
	*why = "its value is used";
	if (!ts_type_is(ts_parent(p), "expression_statement"))
		return NULL;
	*why = "a structure, not a task pointer, holds the field";
	if (!ts_text_is(ts_field(field, "operator"), c->text, "->"))
		return NULL;
	*why = "the value written is not a constant 0 or positive number (a 2.4 polling marker, or a "
	       "saved value)";
	TSNode v = ts_field(p, "right");
	if (!ts_type_is(v, "number_literal"))
		return NULL;
	char *vt = orig_text(c, v), *end;
	unsigned long long k = strtoull(vt, &end, 0);
	bool integer = vt[0] >= '0' && vt[0] <= '9' && end != vt && strspn(end, "uUlL") == strlen(end);
	free(vt);
	if (!integer)
		return NULL;
	*why = "a comment inside it";
	char *all = orig_text(c, p);
	bool comment = strstr(all, "/*") || strstr(all, "//");
	free(all);
	if (comment)
		return NULL;
	*why = NULL;
	char *task = orig_text(c, ts_field(field, "argument"));
	char *call = xasprintf("%s_tsk_need_resched(%s)", k ? "set" : "clear", task);
	free(task);
	return call;
}

/* The first use of a need_resched field in a function that has no 2.6 call form. */
struct flag_use {
	const struct ctx *c;
	bool only_current;   /* uses of current->need_resched only */
	TSNode use;          /* the field expression, or null */
	char *what;          /* "takes the address of current->need_resched" */
};

static bool flag_use_visit(TSNode n, void *ctx)
{
	struct flag_use *u = ctx;
	if (!ts_node_is_null(u->use))
		return false;
	if (!ts_type_is(n, "field_expression") || !ts_text_is(ts_field(n, "field"), u->c->text, "need_resched"))
		return true;
	bool cur = ts_text_is(ts_field(n, "argument"), u->c->text, "current");
	if (u->only_current && !cur)
		return true;
	TSNode child;
	TSNode p = up(n, &child);
	const char *why, *noun;
	char *call = flag_write_call(u->c, child, p, &why);
	const char *use = call ? NULL : field_not_a_test(u->c, child, p, &noun);
	free(call);
	if (!call && !use && !cur)
		use = "reads %s";
	if (use) {
		char *field = orig_text(u->c, n);
		u->use = n;
		u->what = xasprintf(use, field);
		free(field);
	}
	return true;
}

/* The first use of a need_resched field in F without a 2.6 call form; U->what owned by the caller. */
static void first_flag_use(const struct ctx *c, const struct fn *f, bool only_current, struct flag_use *u)
{
	*u = (struct flag_use){c, only_current, ts_null(), NULL};
	ts_walk(f->body, flag_use_visit, u);
}

/* Is U `xchg(&T->need_resched, -K)`: the 2.4 idle loop's polling marker? */
static bool polling_marker(const struct flag_use *u)
{
	TSNode child;
	TSNode addr = up(u->use, &child);
	if (!ts_type_is(addr, "pointer_expression"))
		return false;
	TSNode args = ts_parent(addr);
	if (!ts_type_is(args, "argument_list") || !call_is(u->c, ts_parent(args), "xchg") ||
	    ts_node_named_child_count(args) != 2)
		return false;
	TSNode v = ts_node_named_child(args, 1); /* -1 is one number_literal to the grammar */
	return (ts_type_is(v, "number_literal") && u->c->text[ts_node_start_byte(v)] == '-') ||
	       (ts_type_is(v, "unary_expression") && ts_text_is(ts_field(v, "operator"), u->c->text, "-"));
}

/* Why F's P004 rewrites stay, given its first use U without a call form (owned by the caller). */
static char *flag_use_refusal(const struct fn *f, const struct flag_use *u)
{
	unsigned line = line_of(u->c, u->use);
	if (polling_marker(u))
		return xasprintf("not rewritten: %s() also %s at line %u to store the 2.4 idle-polling "
				 "marker -1, which reads as a pending reschedule in this flag; need_resched() "
				 "and set_tsk_need_resched() know no marker, and 2.6 polls with "
				 "TIF_POLLING_NRFLAG instead: port the idle loop by hand", f->name, u->what, line);
	return xasprintf("not rewritten: %s() also %s at line %u, which has no 2.6 call form; the "
			 "tests and writes of the flag in it work with that use, so port them together by hand",
			 f->name, u->what, line);
}

static void resched_tests_stay(struct ctx *c, const struct fn *f)
{
	struct flag_use u;
	first_flag_use(c, f, true, &u);
	for (size_t i = c->fn_first_finding; i < c->out->findings.len && !ts_node_is_null(u.use); i++) {
		struct finding *fd = &c->out->findings.items[i];
		if (fd->rule != RULE_P004 || fd->fix == FIX_NONE)
			continue;
		unfixable(fd, flag_use_refusal(f, &u));
	}
	free(u.what);
}

/*
 * A write of the flag, FIELD (`T->need_resched`, under P): the 2.6 call
 * when it has one and nothing else in F uses the flag in a way that has none.
 */
static void flag_write(struct ctx *c, const struct fn *f, TSNode field, TSNode p, const char *use)
{
	const char *why;
	char *call = flag_write_call(c, field, p, &why);
	char *lhs = orig_text(c, field);
	char *what = xasprintf(use, lhs);
	if (!call && ts_text_is(ts_field(field, "argument"), c->text, "current") && !c->fn_resched_write)
		c->fn_resched_write = line_of(c, field);
	struct finding *fd = add_finding(c, RULE_P004, field, f, SEV_WARNING, CONF_HIGH,
		call ? FIX_RESCHED_FLAG : FIX_NONE, xasprintf("%s, which 2.6 does not have", what),
		call ? xasprintf("the 2.4 task field is gone; 2.6 keeps the flag in the thread flags, "
				 "and `%s` is the same write", call)
		     : xstrdup("the 2.4 task field is gone, and a write is not a test: need_resched() "
			       "is a call, with no address, that cannot be written"));
	if (!call) {
		set_note(fd, xasprintf("not rewritten: %s, so there is no set_tsk_need_resched()/"
				       "clear_tsk_need_resched() call that is the same; port it by hand",
				       why ? why : "it is not a plain assignment"));
	} else if (fd && source_in_directive(c->src, ts_node_start_byte(field))) {
		unfixable(fd, xstrdup("inside a #define body: rewrite the macro by hand"));
	} else if (fd) {
		struct flag_use u;
		first_flag_use(c, f, false, &u);
		if (!ts_node_is_null(u.use))
			unfixable(fd, flag_use_refusal(f, &u));
		else
			add_edit(c, fd, EDIT_REPLACE, p, call);
		free(u.what);
	}
	free(what);
	free(lhs);
	free(call);
}

/* TEST, current->need_resched under P, used other than as a test: USE says how, NOUN what it is. */
static void flag_use_report(struct ctx *c, const struct fn *f, TSNode test, TSNode p, const char *use,
			    const char *noun)
{
	if (ts_type_is(p, "assignment_expression")) {
		flag_write(c, f, test, p, use);
		return;
	}
	if (!c->fn_resched_write)
		c->fn_resched_write = line_of(c, test);
	char *what = xasprintf(use, "current->need_resched");
	struct finding *fd = add_finding(c, RULE_P004, test, f, SEV_WARNING, CONF_HIGH, FIX_NONE,
		xasprintf("%s, which 2.6 does not have", what),
		xasprintf("the 2.4 task field is gone, and %s is not a test: need_resched() "
			  "is a call, with no address, that cannot be written", noun));
	free(what);
	bool cmp = strncmp(use, "compares", 8) == 0;
	set_note(fd, xasprintf("not rewritten: %s; port by hand (2.6 sets the flag with "
			       "set_tsk_need_resched(current), clears it with "
			       "clear_tsk_need_resched(current), and an idle loop that polls it "
			       "sets TIF_POLLING_NRFLAG)",
			       cmp ? "the 2.6 flag is only set or clear, so a comparison with another "
				     "value has no 2.6 form"
				   : "the 2.6 flag is one bit of the thread flags, with no address of its "
				     "own for xchg() or asm"));
}

/* `if (need_resched()) schedule();` is already correct under 2.6: a note, unless --modernize. */
static bool already_26(struct ctx *c, const struct fn *f, TSNode test, const char *testtext)
{
	TSNode fn = ts_type_is(test, "call_expression") ? ts_field(test, "function") : ts_null();
	if (ts_node_is_null(fn) || !ts_text_is(fn, c->text, "need_resched") || c->opts->modernize)
		return false;
	struct finding *nd = add_finding(c, RULE_P004, test, f, SEV_NOTE, CONF_HIGH, FIX_NONE,
		xstrdup("2.6 reschedule check: cond_resched() says the same"),
		xasprintf("`if (%s) schedule();` is already 2.6: need_resched() is its test", testtext));
	if (nd)
		set_note(nd, xstrdup("not rewritten: correct under 2.6 as it is (--modernize makes it cond_resched())"));
	return true;
}

/* A reschedule test TEST: current->need_resched (IS_FIELD), need_resched() or a macro testing it. */
static void resched_test(struct ctx *c, const struct fn *f, TSNode test, bool is_field)
{
	/* the definition of need_resched() itself: the 2.4 field read is its body, and
	 * need_resched() there would call itself for ever */
	if (f && (strcmp(f->name, "need_resched") == 0 || strcmp(f->name, "_need_resched") == 0)) {
		add_protected(c, RULE_P004, test, f, xstrdup("the definition of need_resched()"),
			      xstrdup("this is what need_resched() reads; it stays as it is"));
		return;
	}
	if (version_guarded(c, test)) {
		add_protected(c, RULE_P004, test, f, xstrdup("reschedule check in version-guarded code"),
			      xstrdup("inside #if on LINUX_VERSION_CODE: a compatibility shim, left alone"));
		return;
	}
	TSNode child;
	TSNode p = up(test, &child);
	const char *noun = NULL;
	const char *use = is_field ? field_not_a_test(c, child, p, &noun) : NULL;
	if (use) {
		flag_use_report(c, f, test, p, use, noun);
		return;
	}
	TSNode ifs;
	const char *shape = resched_shape(c, child, p, &ifs);
	struct point_state ps = flow_state_at(f, ts_node_start_byte(test));
	char *testtext = orig_text(c, test);
	if (!shape && !is_field && already_26(c, f, test, testtext))
		shape = NULL; /* reported as a note */
	else if (!shape) {
		char *ev = xasprintf("`if (%s) schedule();` is the 2.4 spelling of cond_resched()", testtext);
		TSNode fn = ts_type_is(test, "call_expression") ? ts_field(test, "function") : ts_null();
		const struct macro_def *d = ts_node_is_null(fn) || ts_text_is(fn, c->text, "need_resched") ? NULL
			: resched_macro(c, fn, true);
		if (d) {
			char *where = macro_location(c, d), *more = xasprintf("%s; %s() is defined at %s as `%s`",
									      ev, d->name, where, d->body);
			free(where);
			free(ev);
			ev = more;
		}
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
			buf_release(&t);
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

/* Does a #define body test the current task's need_resched (not another task's)? */
static bool body_tests_resched(const char *body)
{
	return strstr(body, "need_resched") != NULL;
}

/* ---- reschedule checks inside #define bodies ------------------------------ */

/* A token of a #define body: [s, e) in the text it was cut from. */
struct mtok {
	size_t s, e;
};

#define BODY_MAX_TOKENS 64

/*
 * The tokens of T[s, e) (whitespace, backslash-newlines and comments
 * skipped; identifiers and `->` whole, any other character alone). Returns how many,
 * or BODY_MAX_TOKENS + 1 when there are more (no shape is that long).
 */
static size_t body_tokens(const char *t, size_t s, size_t e, struct mtok *out)
{
	size_t n = 0;
	while (s < e) {
		char ch = t[s];
		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\\') {
			s++;
		} else if (ctext_at(t, e, s) == CTEXT_BLOCK_COMMENT) {
			s = ctext_skip(t, e, s);
		} else {
			size_t b = s++;
			if (ch == '-' && s < e && t[s] == '>')
				s++;
			else if (is_ident_char(ch))
				while (s < e && is_ident_char(t[s]))
					s++;
			if (n == BODY_MAX_TOKENS)
				return n + 1;
			out[n++] = (struct mtok){b, s};
		}
	}
	return n;
}

/* Do the tokens K[*i..n) start with WORDS (space-separated)? Advances *i past them if so. */
static bool body_seq(const char *t, const struct mtok *k, size_t n, size_t *i, const char *words)
{
	size_t j = *i;
	for (const char *w = words; *w;) {
		size_t wl = strcspn(w, " ");
		if (j >= n || k[j].e - k[j].s != wl || memcmp(t + k[j].s, w, wl) != 0)
			return false;
		j++;
		w += wl;
		w += *w == ' ';
	}
	*i = j;
	return true;
}

/*
 * Is the body K[0..n) the 2.4 reschedule check as one statement spatch can
 * rewrite: `if (<test>) schedule();` (braces around schedule() allowed),
 * alone or in `do { ... } while (0)`? Sets [*from, *to) to the if statement.
 * `if (<test>) schedule()` without its `;` is not: spatch does not parse it
 * as a statement (its uses are rewritten instead, check_macro_stmt).
 */
static bool body_is_resched_stmt(const char *t, const struct mtok *k, size_t n, size_t *from, size_t *to)
{
	size_t i = 0;
	bool loop = body_seq(t, k, n, &i, "do {");
	size_t at = i;
	if (!body_seq(t, k, n, &i, "if ("))
		return false;
	if (!body_seq(t, k, n, &i, "current -> need_resched )") && !body_seq(t, k, n, &i, "need_resched ( ) )") &&
	    !body_seq(t, k, n, &i, "unlikely ( current -> need_resched ) )") &&
	    !body_seq(t, k, n, &i, "unlikely ( need_resched ( ) ) )"))
		return false;
	if (!body_seq(t, k, n, &i, "schedule ( ) ;") && !body_seq(t, k, n, &i, "{ schedule ( ) ; }"))
		return false;
	*from = k[at].s;
	*to = k[i - 1].e;
	if (loop && !body_seq(t, k, n, &i, "} while ( 0 )"))
		return false;
	return i == n;
}

/* Is the #define D a compatibility shim (the 2.6 API's own name, or defined in two #if arms)? */
static bool define_is_shim(const struct ctx *c, const struct macro_def *d)
{
	if (strcmp(d->name, "need_resched") == 0 || strcmp(d->name, "cond_resched") == 0)
		return true;
	return define_conditional(c, d) || in_dead_code(c, define_node(c, d));
}

/* The body of this file's #define D: tokens of its replacement text (after the name and parameters). */
static size_t define_body(const struct ctx *c, const struct macro_def *d, struct mtok *k)
{
	size_t s = d->offset;
	while (s < d->end && is_ident_char(c->text[s]))
		s++;
	if (d->function_like) {
		const char *close = memchr(c->text + s, ')', d->end - s);
		if (!close)
			return 0;
		s = (size_t)(close - c->text) + 1;
	}
	return body_tokens(c->text, s, d->end, k);
}

/* Is this file's #define D rewritten in its body (so its uses are not sites)? */
static bool define_rewritten(const struct ctx *c, const struct macro_def *d)
{
	struct mtok k[BODY_MAX_TOKENS + 1];
	size_t n = define_body(c, d, k), from, to;
	return n <= BODY_MAX_TOKENS && body_is_resched_stmt(c->text, k, n, &from, &to) && !define_is_shim(c, d);
}

/* A macro of another file of the tree, rewritten there by the same rule (define_rewritten)? */
static bool tree_define_rewritten(const struct macro_def *d)
{
	struct mtok k[BODY_MAX_TOKENS + 1];
	size_t n = body_tokens(d->body, 0, strlen(d->body), k), from, to;
	return n <= BODY_MAX_TOKENS && body_is_resched_stmt(d->body, k, n, &from, &to);
}

/* P004 sites inside this file's #define bodies: rewritten in the body. */
static void check_resched_defines(struct ctx *c)
{
	struct mtok k[BODY_MAX_TOKENS + 1];
	for (size_t i = 0; i < c->src->defs.len; i++) {
		const struct macro_def *d = &c->src->defs.items[i];
		if (!strstr(d->body, "need_resched"))
			continue;
		size_t n = define_body(c, d, k), from, to;
		if (n > BODY_MAX_TOKENS || define_is_shim(c, d))
			continue;
		const char *paren = d->function_like ? "()" : "";
		if (body_is_resched_stmt(c->text, k, n, &from, &to)) {
			struct finding *fd = add_finding_at(c, RULE_P004, from, to, NULL, SEV_WARNING, CONF_HIGH,
				FIX_COND_RESCHED,
				xasprintf("2.4 reschedule check in the body of #define %s%s: use cond_resched()",
					  d->name, paren),
				xasprintf("#define %s%s expands to `%s`, the 2.4 spelling of cond_resched(); "
					  "rewritten inside the macro (as 2.6 did), so every use gets it",
					  d->name, paren, d->body));
			add_define_edit(c, fd, from, to, "if_statement", "cond_resched();");
			continue;
		}
		/* an expression testing the current task's flag: current->need_resched ->
		 * need_resched(). A statement body spatch cannot parse (`if (...) schedule()`
		 * without its `;`) is left to its uses (check_macro_stmt). */
		bool expression = true;
		for (size_t j = 0; j < n && expression; j++) {
			static const char *const stmt_words[] = {"if", "do", "while", "for", "return", "schedule",
								 "{", ";", NULL};
			for (const char *const *w = stmt_words; *w && expression; w++)
				expression = !body_seq(c->text, k, n, &(size_t){j}, *w);
		}
		for (size_t j = 0; expression && j + 2 < n; j++) {
			if (!body_seq(c->text, k, n, &(size_t){j}, "current -> need_resched"))
				continue;
			bool written = j + 3 < n && strchr("=+-|&^", c->text[k[j + 3].s]) &&
				       !(j + 4 < n && c->text[k[j + 3].s] == '=' && c->text[k[j + 4].s] == '=');
			bool addressed = j > 0 && c->text[k[j - 1].s] == '&';
			if (written || addressed)
				break; /* the scheduler's own protocol: left alone, as in functions */
			struct finding *fd = add_finding_at(c, RULE_P004, k[j].s, k[j + 2].e, NULL, SEV_WARNING, CONF_HIGH,
				FIX_NEED_RESCHED_CALL,
				xasprintf("2.4 current->need_resched in the body of #define %s%s: use need_resched()",
					  d->name, paren),
				xasprintf("#define %s%s expands to `%s`; 2.6 has no need_resched field, need_resched() "
					  "tests the current task's flag", d->name, paren, d->body));
			add_define_edit(c, fd, k[j].s, k[j + 2].e, "field_expression", "need_resched()");
			j += 2;
		}
	}
}

/* This file's macro NAME testing need_resched, else one of the tree's headers', or NULL. */
static const struct macro_def *resched_macro_named(const struct ctx *c, const char *name, size_t len,
						   bool function_like)
{
	if (!c->may_resched_macro)
		return NULL;
	for (size_t i = 0; i < c->src->defs.len; i++) {
		const struct macro_def *d = &c->src->defs.items[i];
		if (strlen(d->name) == len && memcmp(d->name, name, len) == 0)
			return d->function_like == function_like && body_tests_resched(d->body) &&
			       !define_rewritten(c, d) ? d : NULL;
	}
	const struct macro_def *d = tree_macro_find(c, name, len, function_like, MACRO_RESCHED);
	return d && !tree_define_rewritten(d) ? d : NULL;
}

/*
 * CALL, a use of function-like macro D testing need_resched: does it test
 * the current task's flag? A body that names no task (`current->need_resched`,
 * need_resched()) does; `((tsk)->need_resched)` only when called with current.
 */
static bool tests_current(const struct ctx *c, const struct macro_def *d, TSNode call)
{
	if (strstr(d->body, "current") || strstr(d->body, "need_resched()"))
		return true;
	TSNode args = ts_field(call, "arguments");
	for (uint32_t i = 0; i < ts_node_named_child_count(args); i++)
		if (ts_text_is(ts_node_named_child(args, i), c->text, "current"))
			return true;
	return false;
}

static bool macro_tests_resched(const struct ctx *c, TSNode fn_ident)
{
	uint32_t s = ts_node_start_byte(fn_ident), e = ts_node_end_byte(fn_ident);
	const struct macro_def *d = resched_macro_named(c, c->text + s, e - s, true);
	return d && tests_current(c, d, ts_parent(fn_ident));
}

/* The #define called NAME (function-like or not) whose body tests need_resched, or NULL. */
static const struct macro_def *resched_macro(const struct ctx *c, TSNode ident, bool function_like)
{
	uint32_t s = ts_node_start_byte(ident), e = ts_node_end_byte(ident);
	return resched_macro_named(c, c->text + s, e - s, function_like);
}

/* Answers #resched-test? and #resched-macro? of grammars/sites.scm. */
static bool resched_host_pred(struct ctx *c, const char *name, TSNode n)
{
	uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
	if (strcmp(name, "resched-test?") == 0)
		return name_eq(c->text + s, e - s, "need_resched") || macro_tests_resched(c, n);
	if (strcmp(name, "resched-macro?") == 0) {
		if (!c->may_resched_macro)
			return false;
		TSNode p = ts_parent(n);
		if (ts_type_is(p, "call_expression") && ts_node_eq(ts_field(p, "function"), n))
			return false;
		return resched_macro(c, n, false) != NULL;
	}
	return false;
}

/* `RESCHED_CHECK();` where the macro is `if (<test>) schedule()`: the whole check. */
static bool check_macro_stmt(struct ctx *c, const struct fn *f, TSNode call, const struct macro_def *d)
{
	TSNode st = ts_parent(call);
	if (!ts_type_is(st, "expression_statement") || strncmp(d->body, "if", 2) != 0 ||
	    !strstr(d->body, "schedule()") || strstr(d->body, "else"))
		return false;
	if (version_guarded(c, call))
		return true;
	char *where = macro_location(c, d);
	struct finding *fd = add_finding(c, RULE_P004, call, f, SEV_WARNING, CONF_HIGH, FIX_COND_RESCHED,
		xasprintf("2.4 reschedule check in macro %s(): use cond_resched()", d->name),
		xasprintf("%s() (%s) expands to `%s`, the 2.4 spelling of cond_resched()", d->name, where, d->body));
	free(where);
	struct point_state ps = flow_state_at(f, ts_node_start_byte(call));
	if (fd && point_protected(&ps))
		unfixable(fd, xstrdup("not rewritten: preemption is off here, so the schedule() in the macro "
				      "already sleeps in atomic context (P006)"));
	else
		add_edit(c, fd, EDIT_REPLACE, st, "cond_resched();");
	return true;
}

static void check_resched(struct ctx *c, const struct fn *f, TSNode site, const char *kind)
{
	if (strcmp(kind, "yield") == 0) {
		check_yield(c, f, site);
	} else if (strcmp(kind, "resched_field") == 0 &&
		   !ts_text_is(ts_field(site, "argument"), c->text, "current")) {
		/* another task's flag: only its writes are sites (sites.scm) */
		if (!version_guarded(c, site))
			flag_write(c, f, site, ts_parent(site), "writes %s");
	} else if (strcmp(kind, "resched_call") == 0) {
		const struct macro_def *d = resched_macro(c, ts_field(site, "function"), true);
		if (!d || !check_macro_stmt(c, f, site, d))
			resched_test(c, f, site, false);
	} else {
		resched_test(c, f, site, strcmp(kind, "resched_field") == 0);
	}
}

/* ---- hooks (rules/rules.def) ------------------------------------------------ */

/* Might a macro of the file or of the tree's headers test need_resched here? */
static void resched_begin_file(struct ctx *c)
{
	for (size_t i = 0; i < c->src->defs.len && !c->may_resched_macro; i++)
		c->may_resched_macro = body_tests_resched(c->src->defs.items[i].body);
	const tree_macro_vec *m = c->opts->macros;
	for (size_t i = 0; m && i < m->len; i++)
		c->may_resched_macro |= m->items[i].kind == MACRO_RESCHED;
	c->may_macro_site |= c->may_resched_macro;
}

static void resched_end_function(struct ctx *c, const struct fn *f)
{
	if (c->fn_resched_write)
		resched_tests_stay(c, f);
	c->fn_resched_write = 0;
}

/* A #define body testing need_resched (not another task's) is rewritten in its body; the uses of
 * other macros testing it are fixed where they are used (check_macro_stmt, check_resched). */
static bool resched_end_file(struct ctx *c)
{
	check_resched_defines(c);
	return false;
}

static int resched_header_macro(const struct ctx *c, const struct macro_def *d)
{
	(void)c;
	return strstr(d->body, "need_resched") ? MACRO_RESCHED : -1;
}

const struct rule_hooks resched_hooks = {
	.check = check_resched,
	.site_words = {"need_resched", "SCHED_YIELD"},
	.begin_file = resched_begin_file,
	.end_function = resched_end_function,
	.end_file = resched_end_file,
	.preds = {"resched-test?", "resched-macro?"},
	.pred = resched_host_pred,
	.macro_preds = {"resched-macro?"},
	.header_macro = resched_header_macro,
};
