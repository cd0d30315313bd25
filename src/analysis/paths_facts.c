/*
 * The facts a path through one function can carry (paths_internal.h): the
 * conditions of its ifs and loops over values it does not change (or sets
 * to constants), the first test of `for (i = 0; i < n; i++)` over an
 * unchanged bound, the #if/#ifdef arms each node sits in, and `p = q;`
 * copies that make p->lock and q->lock one lock.
 */
#include "analysis/paths_internal.h"

#include <stdlib.h>
#include <string.h>

/* NODE's text without blanks. */
static char *canon(TSNode n, const char *src)
{
	struct buf b = BUF_INIT;
	for (uint32_t i = ts_node_start_byte(n); i < ts_node_end_byte(n); i++)
		if (src[i] != ' ' && src[i] != '\t' && src[i] != '\n' && src[i] != '\r')
			buf_putc(&b, src[i]);
	return buf_detach(&b);
}

/* A macro by the kernel's convention: no lower-case letter. */
static bool upper_name(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] >= 'a' && s[i] <= 'z')
			return false;
	return n > 0;
}

/*
 * Can a path keep the value of expression N? No call (but a macro, a
 * predicate macro of the tree's headers, or a test of the running
 * context: in_irq()), no side effect.
 */
static bool pure_visit(TSNode n, void *ctx)
{
	const char *src = ((const char **)ctx)[0];
	bool *ok = (bool *)((const char **)ctx)[1];
	if (ts_type_is(n, "assignment_expression") || ts_type_is(n, "update_expression") ||
	    ts_type_is(n, "comma_expression") || ts_type_is(n, "ERROR")) {
		*ok = false;
	} else if (ts_type_is(n, "call_expression")) {
		const char *name;
		size_t len = ts_call_name(n, src, &name);
		if (!upper_name(name, len) && !api_context_test(name, len) && !api_pure_macro(name, len))
			*ok = false;
	}
	return *ok;
}

static bool pure(TSNode n, const char *src)
{
	bool ok = true;
	const char *ctx[2] = {src, (const char *)&ok};
	ts_walk(n, pure_visit, ctx);
	return ok;
}

struct reads_ctx {
	const char *src;
	struct strvec *out;
};

static bool reads_visit(TSNode n, void *ctx)
{
	struct reads_ctx *r = ctx;
	if (ts_type_is(n, "identifier") || ts_type_is(n, "field_expression")) {
		char *t = canon(n, r->src);
		vec_push(r->out, t);
	}
	return true;
}

static void reads_of(TSNode n, const char *src, struct strvec *out)
{
	struct reads_ctx r = {src, out};
	ts_walk(n, reads_visit, &r);
}

static bool is_zero(TSNode n, const char *src)
{
	return ts_text_is(n, src, "0") || ts_text_is(n, src, "NULL") || ts_type_is(n, "null");
}

static int fact_intern(struct path_facts *pf, char *text, TSNode reads, const char *src)
{
	for (size_t i = 0; i < pf->facts.len; i++)
		if (strcmp(pf->facts.items[i].text, text) == 0) {
			free(text);
			return (int)i;
		}
	if (pf->facts.len >= PATH_MAX_FACTS) {
		free(text);
		return -1;
	}
	struct fact f = {text, STRVEC_INIT, NULL, 0, 0};
	if (!ts_node_is_null(reads)) {
		reads_of(reads, src, &f.reads);
		fact_range_note(&f, reads, src);
	}
	vec_push(&pf->facts, f);
	return (int)(pf->facts.len - 1);
}

static int cond_push(struct path_facts *pf, enum cond_op op, int fact, int l, int r)
{
	struct cond_node c = {op, fact, l, r};
	vec_push(&pf->conds, c);
	return (int)(pf->conds.len - 1);
}

/* The condition tree of pure expression N (`!`, `&&`, `||`, `== 0`, `!=` folded). */
static int cond_build(struct path_facts *pf, TSNode n, const char *src)
{
	n = ts_strip_parens(n, src);
	if (ts_type_is(n, "unary_expression") && ts_text_is(ts_field(n, "operator"), src, "!")) {
		int c = cond_build(pf, ts_field(n, "argument"), src);
		return c < 0 ? -1 : cond_push(pf, COND_NOT, -1, c, -1);
	}
	if (ts_type_is(n, "binary_expression")) {
		TSNode op = ts_field(n, "operator"), l = ts_field(n, "left"), r = ts_field(n, "right");
		bool and = ts_text_is(op, src, "&&"), or = ts_text_is(op, src, "||");
		bool eq = ts_text_is(op, src, "=="), ne = ts_text_is(op, src, "!=");
		if (and || or) {
			int a = cond_build(pf, l, src), b = cond_build(pf, r, src);
			return cond_push(pf, and ? COND_AND : COND_OR, fact_intern(pf, canon(n, src), n, src), a, b);
		}
		if ((eq || ne) && (is_zero(r, src) || is_zero(l, src))) {
			int c = cond_build(pf, is_zero(r, src) ? l : r, src);
			return eq && c >= 0 ? cond_push(pf, COND_NOT, -1, c, -1) : c;
		}
		if (ne) {
			char *a = canon(l, src), *b = canon(r, src);
			int fact = fact_intern(pf, xasprintf("%s==%s", a, b), n, src);
			free(a);
			free(b);
			int c = cond_push(pf, COND_ATOM, fact, -1, -1);
			return cond_push(pf, COND_NOT, -1, c, -1);
		}
	}
	return cond_push(pf, COND_ATOM, fact_intern(pf, canon(n, src), n, src), -1, -1);
}

int path_cond_eval(const struct path_facts *pf, int c, uint64_t known, uint64_t val)
{
	if (c < 0)
		return -1;
	const struct cond_node *n = &pf->conds.items[c];
	if (n->fact >= 0 && (known >> n->fact) & 1)
		return (int)((val >> n->fact) & 1);
	if (n->op == COND_NOT) {
		int v = path_cond_eval(pf, n->left, known, val);
		return v < 0 ? -1 : !v;
	}
	if (n->op == COND_ATOM)
		return -1;
	int a = path_cond_eval(pf, n->left, known, val), b = path_cond_eval(pf, n->right, known, val);
	if (n->op == COND_AND)
		return a == 0 || b == 0 ? 0 : a == 1 && b == 1 ? 1 : -1;
	return a == 1 || b == 1 ? 1 : a == 0 && b == 0 ? 0 : -1;
}

void path_cond_assume(const struct path_facts *pf, int c, bool v, uint64_t *known, uint64_t *val)
{
	if (c < 0)
		return;
	const struct cond_node *n = &pf->conds.items[c];
	if (n->fact >= 0) {
		*known |= (uint64_t)1 << n->fact;
		*val = v ? *val | (uint64_t)1 << n->fact : *val & ~((uint64_t)1 << n->fact);
		path_ranges_derive(pf, n->fact, v, known, val);
	}
	if (n->op == COND_NOT) {
		path_cond_assume(pf, n->left, !v, known, val);
	} else if ((n->op == COND_AND && v) || (n->op == COND_OR && !v)) {
		path_cond_assume(pf, n->left, v, known, val);
		path_cond_assume(pf, n->right, v, known, val);
	}
}

/* ---- what each node changes -------------------------------------------- */

/*
 * Does a call to NAME store the interrupt state in its argument? The names
 * that end in "save" (local_irq_save, spin_lock_irqsave and the tree's own
 * *_irqsave lock macros) and the save_flags/save_and_cli forms; not a
 * function that merely has the word inside (sh64's switch_and_save_asid()
 * takes its argument by value).
 */
static bool saves_flags(const char *name, size_t len)
{
	static const char *const forms[] = {"save_flags", "save_and_cli"};
	if (len >= 4 && memcmp(name + len - 4, "save", 4) == 0)
		return true;
	for (size_t f = 0; f < sizeof forms / sizeof *forms; f++) {
		size_t fl = strlen(forms[f]);
		for (size_t i = 0; i + fl <= len; i++)
			if (memcmp(name + i, forms[f], fl) == 0)
				return true;
	}
	return false;
}

static bool writes_visit(TSNode n, void *ctx)
{
	struct reads_ctx *r = ctx;
	TSNode w = ts_null();
	if (ts_type_is(n, "assignment_expression"))
		w = ts_field(n, "left");
	else if (ts_type_is(n, "update_expression"))
		w = ts_field(n, "argument");
	else if (ts_type_is(n, "pointer_expression") && ts_text_is(ts_field(n, "operator"), r->src, "&"))
		w = ts_field(n, "argument");
	else if (ts_type_is(n, "init_declarator"))
		w = ts_field(n, "declarator");
	else if (ts_type_is(n, "call_expression")) {
		/* save_flags(flags), local_irq_save(flags), spin_lock_irqsave(l, flags) */
		const char *name;
		size_t len = ts_call_name(n, r->src, &name);
		TSNode args = ts_field(n, "arguments");
		if (saves_flags(name, len))
			for (uint32_t k = 0; k < ts_node_named_child_count(args); k++)
				if (ts_type_is(ts_node_named_child(args, k), "identifier"))
					vec_push(r->out, canon(ts_node_named_child(args, k), r->src));
	}
	if (!ts_node_is_null(w))
		vec_push(r->out, canon(ts_strip_parens(w, r->src), r->src));
	return true;
}

/* Does writing W change the value R (W is R, or a prefix of it: p for p->x)? */
static bool changes(const char *w, const char *r)
{
	size_t n = strlen(w);
	return strncmp(w, r, n) == 0 && (r[n] == '\0' || r[n] == '-' || r[n] == '.' || r[n] == '[');
}

struct copy_decl {
	const char *src, *name;
	size_t len;
	TSNode value;
	unsigned found;
};

/* The init_declarators of a pointer named C->name: `struct card *card = ...`. */
static bool copy_decl_visit(TSNode n, void *ctx)
{
	struct copy_decl *c = ctx;
	if (!ts_type_is(n, "init_declarator"))
		return true;
	TSNode d = ts_field(n, "declarator");
	if (!ts_type_is(d, "pointer_declarator"))
		return true;
	while (ts_type_is(d, "pointer_declarator"))
		d = ts_field(d, "declarator");
	uint32_t s = ts_node_start_byte(d), e = ts_node_end_byte(d);
	if (ts_type_is(d, "identifier") && e - s == c->len && memcmp(c->src + s, c->name, c->len) == 0) {
		c->value = ts_field(n, "value");
		c->found++;
	}
	return true;
}

char *paths_copied_key(const struct fn *f, const char *key)
{
	size_t n = 0;
	while (is_ident_char(key[n]))
		n++;
	if (!n || (key[n] != '-' && key[n] != '.'))
		return NULL;
	struct copy_decl c = {f->src, key, n, ts_null(), 0};
	ts_walk(f->body, copy_decl_visit, &c);
	TSNode v = c.found == 1 ? ts_strip_parens(c.value, f->src) : ts_null();
	/* `card = state ? state->card : NULL`: where it is no null pointer, card is state->card */
	if (ts_type_is(v, "conditional_expression") && is_zero(ts_field(v, "alternative"), f->src))
		v = ts_strip_parens(ts_field(v, "consequence"), f->src);
	if (!(ts_type_is(v, "identifier") || ts_type_is(v, "field_expression")) || !pure(v, f->src))
		return NULL;
	char *q = canon(v, f->src), *name = xstrndup(key, n);
	struct strvec writes = STRVEC_INIT;
	struct reads_ctx w = {f->src, &writes};
	ts_walk(f->body, writes_visit, &w);
	bool kept = true; /* neither the copy nor what it copies written in F */
	for (size_t i = 0; i < writes.len && kept; i++)
		kept = strcmp(writes.items[i], name) != 0 && !changes(writes.items[i], q);
	char *out = kept ? xasprintf("%s%s", q, key + n) : NULL;
	strvec_release(&writes);
	free(name);
	free(q);
	return out;
}

/*
 * `target = current;` on one path and `target = find_task_by_pid(pid);` on
 * the other, then `if (target != current) read_unlock(...)`: the variable
 * records which way the function went. The fact `target==current` is set
 * true where the variable is assigned that very value, and false where it
 * is assigned what a call returns: the author's lookup of another object
 * (kernel/capability.c, perfmon's sys_perfmonctl()). Only for a value that
 * is a variable or a field, never a constant: `ret = f(); if (ret ==
 * -EAGAIN)` stays unknown, the error path it is.
 */
static void node_assign_compared(struct path_facts *pf, const struct fn *f, struct node_facts *nf,
				 const char *name, TSNode r)
{
	size_t n = strlen(name);
	char *value = canon(r, f->src);
	bool call = ts_type_is(r, "call_expression");
	for (size_t i = 0; i < pf->facts.len && nf->gen_fact < 0; i++) {
		const char *t = pf->facts.items[i].text, *k = NULL;
		if (strncmp(t, name, n) == 0 && strncmp(t + n, "==", 2) == 0)
			k = t + n + 2;
		else if (strlen(t) > n + 2 && strcmp(t + strlen(t) - n, name) == 0 &&
			 strncmp(t + strlen(t) - n - 2, "==", 2) == 0 && is_ident_char(t[0]))
			k = t; /* K==name: K is the text before "==" */
		if (!k || !is_ident_char(k[0]) || (k[0] >= '0' && k[0] <= '9') || upper_name(k, strcspn(k, "=")))
			continue;
		size_t kl = k == t ? strlen(t) - n - 2 : strlen(k);
		if (strspn(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_->.") < kl)
			continue; /* K is a variable or a field path, nothing computed */
		if (strlen(value) == kl && strncmp(value, k, kl) == 0) {
			nf->gen_fact = (int)i;
			nf->gen_value = true;
		} else if (call) {
			nf->gen_fact = (int)i;
			nf->gen_value = false;
		}
	}
	free(value);
}

/*
 * `v = 1;`, `int v = 0;`: sets the fact that is exactly v; `p = q;`,
 * `p = q->r;` and their declarations: an alias.
 */
static void node_assign(struct path_facts *pf, const struct fn *f, struct node_facts *nf, TSNode ast)
{
	TSNode l = ts_null(), r = ts_null();
	if (ts_type_is(ast, "expression_statement") && ts_node_named_child_count(ast) == 1) {
		TSNode a = ts_node_named_child(ast, 0);
		if (ts_type_is(a, "assignment_expression") && ts_text_is(ts_field(a, "operator"), f->src, "="))
			l = ts_field(a, "left"), r = ts_field(a, "right");
	} else if (ts_type_is(ast, "declaration")) {
		TSNode d = ts_field(ast, "declarator");
		if (ts_type_is(d, "init_declarator"))
			l = ts_field(d, "declarator"), r = ts_field(d, "value");
		while (ts_type_is(l, "pointer_declarator")) /* `struct card *card = ...` */
			l = ts_field(l, "declarator");
	}
	if (!ts_type_is(l, "identifier") || ts_node_is_null(r))
		return;
	r = ts_strip_parens(r, f->src);
	char *name = canon(l, f->src);
	bool lit = ts_type_is(r, "number_literal") || ts_type_is(r, "true") || ts_type_is(r, "false") ||
		   ts_type_is(r, "null") || ts_text_is(r, f->src, "NULL");
	/* `bd = &boards[crd];`: an address is never null */
	bool addr = ts_type_is(r, "pointer_expression") && ts_text_is(ts_field(r, "operator"), f->src, "&");
	for (size_t i = 0; (lit || addr) && i < pf->facts.len && nf->gen_fact < 0; i++)
		if (strcmp(pf->facts.items[i].text, name) == 0) {
			nf->gen_fact = (int)i;
			nf->gen_value = addr || (!is_zero(r, f->src) && !ts_type_is(r, "false"));
		}
	if (nf->gen_fact < 0)
		node_assign_compared(pf, f, nf, name, r);
	/* `card = state ? state->card : 0;`: where it is no null pointer, card is state->card */
	if (ts_type_is(r, "conditional_expression") && is_zero(ts_field(r, "alternative"), f->src))
		r = ts_strip_parens(ts_field(r, "consequence"), f->src);
	if ((ts_type_is(r, "identifier") || ts_type_is(r, "field_expression")) && pure(r, f->src) &&
	    pf->aliases.len < PATH_MAX_ALIASES) {
		struct alias a = {name, canon(r, f->src), VEC_INIT, VEC_INIT};
		vec_push(&pf->aliases, a);
		nf->alias = (int)(pf->aliases.len - 1);
		return;
	}
	free(name);
}

/* `return NULL;`, `return (void *)0;`, `return lp;`: what a path knows of the value returned. */
static void node_return(struct path_facts *pf, const struct fn *f, struct node_facts *nf, TSNode ast)
{
	if (!ts_type_is(ast, "return_statement") || ts_node_named_child_count(ast) != 1)
		return;
	TSNode v = ts_strip_parens(ts_node_named_child(ast, 0), f->src);
	if (ts_type_is(v, "cast_expression"))
		v = ts_strip_parens(ts_field(v, "value"), f->src);
	if (is_zero(v, f->src))
		nf->ret_null = true;
	else if (ts_type_is(v, "identifier"))
		nf->ret_fact = fact_intern(pf, canon(v, f->src), v, f->src);
}

static int fact_find(const struct path_facts *pf, const char *text)
{
	for (size_t i = 0; i < pf->facts.len; i++)
		if (strcmp(pf->facts.items[i].text, text) == 0)
			return (int)i;
	return -1;
}

/*
 * `ret = sharp_wait(...);` then `if (ret < 0)`: a trylock (or trylock
 * wrapper) whose result a variable keeps; the path that took the lock and
 * the one that did not know the variable's test apart.
 */
static void node_try_result(struct path_facts *pf, const struct fn *f, uint32_t id)
{
	const event_vec *ev = &f->events.items[id];
	struct node_facts *nf = &pf->nodes[id];
	for (size_t k = 0; k < ev->len && nf->try_key < 0; k++) {
		const struct event *e = &ev->items[k];
		if (!e->api || e->api->op != API_TRYLOCK || e->polarity >= 0)
			continue;
		TSNode p = ts_parent(e->call), v = ts_null();
		if (ts_type_is(p, "assignment_expression") && ts_node_eq(ts_field(p, "right"), e->call) &&
		    ts_text_is(ts_field(p, "operator"), f->src, "="))
			v = ts_field(p, "left");
		else if (ts_type_is(p, "init_declarator") && ts_node_eq(ts_field(p, "value"), e->call))
			v = ts_field(p, "declarator");
		if (!ts_type_is(v, "identifier"))
			continue;
		const struct wrapper *w = NULL;
		for (size_t i = 0; f->wrappers && i < f->wrappers->len && !w; i++)
			if (&f->wrappers->items[i].api == e->api)
				w = &f->wrappers->items[i];
		char *name = canon(v, f->src), *neg = xasprintf("%s<0", name);
		nf->try_key = (int)f->acqs.items[e->acq].key_id;
		nf->try_fact = fact_find(pf, name);
		nf->try_neg_fact = fact_find(pf, neg);
		nf->try_zero_success = w && w->zero_success;
		nf->try_fail_negative = w && w->fail_negative;
		free(name);
		free(neg);
	}
}

/* The releases of p->x that drop q->x while the alias holds (p->x is no key of F). */
static void alias_releases(struct alias *a, const struct fn *f)
{
	size_t np = strlen(a->p);
	uint32_t slot = 0;
	for (size_t n = 0; n < f->events.len; n++)
		for (size_t k = 0; k < f->events.items[n].len; k++, slot++) {
			const struct event *e = &f->events.items[n].items[k];
			if (!e->api || e->api->op != API_RELEASE || !(e->api->keys & KEY_LOCK) || e->rel[0] != -2)
				continue;
			char *key = event_key(e, KEY_LOCK, f->src);
			if (strncmp(key, a->p, np) == 0 && (key[np] == '-' || key[np] == '.')) {
				char *q = xasprintf("%s%s", a->q, key + np);
				for (size_t i = 0; i < f->keys.len; i++)
					if (strcmp(f->keys.items[i], q) == 0) {
						vec_push(&a->rels, slot);
						vec_push(&a->rels, (uint32_t)i);
					}
				free(q);
			}
			free(key);
		}
}

/* The key pairs an alias joins: p->x and q->x, both keys of F. */
static void alias_pairs(struct alias *a, const struct fn *f)
{
	size_t np = strlen(a->p), nq = strlen(a->q);
	for (size_t i = 0; i < f->keys.len; i++) {
		const char *k = f->keys.items[i];
		if (strncmp(k, a->p, np) != 0 || (k[np] != '-' && k[np] != '.'))
			continue;
		for (size_t j = 0; j < f->keys.len; j++) {
			const char *m = f->keys.items[j];
			if (strncmp(m, a->q, nq) == 0 && strcmp(m + nq, k + np) == 0) {
				vec_push(&a->pairs, (uint32_t)i);
				vec_push(&a->pairs, (uint32_t)j);
			}
		}
	}
}

/* ---- #if arms and counted loops ------------------------------------------ */

/* The fact of the #if arm entered at ARM (its condition, `defined(X)` for #ifdef). */
static void arm_fact(struct path_facts *pf, const struct fn *f, const struct cfg_arm *arm)
{
	TSNode n = arm->directive;
	bool ifdef = ts_type_is(n, "preproc_ifdef") || ts_type_is(n, "preproc_elifdef");
	TSNode cond = ts_field(n, ifdef ? "name" : "condition");
	if (ts_node_is_null(cond))
		return;
	char *c = canon(cond, f->src);
	bool neg = ifdef && strncmp(f->src + ts_node_start_byte(n), "#ifndef", 7) == 0;
	int fact = fact_intern(pf, xasprintf(ifdef ? "defined(%s)" : "#if(%s)", c), ts_null(), f->src);
	free(c);
	if (fact >= 0)
		vec_push(&pf->nodes[arm->node].arms, fact * 2 + (arm->taken != neg));
}

/*
 * `#ifdef USE_TASKLET` where the file itself says `#define USE_TASKLET`
 * before the function, outside any #if: known at entry.
 */
static void arm_facts_at_entry(struct path_facts *pf, const struct fn *f)
{
	for (size_t i = 0; i < pf->facts.len; i++) {
		const char *t = pf->facts.items[i].text;
		size_t n = strlen(t);
		if (n < 10 || strncmp(t, "defined(", 8) != 0 || t[n - 1] != ')')
			continue;
		int v = text_defined_before(f->src, ts_node_start_byte(f->def), t + 8, n - 9);
		if (v < 0)
			continue;
		pf->init_known |= (uint64_t)1 << i;
		if (v)
			pf->init_val |= (uint64_t)1 << i;
	}
}

/*
 * The bound N of a loop counting from 0 up to it or from N - 1 down to 0
 * (`for (i = 0; i < n; ...)`, `for (i = n - 1; i >= 0; ...)`): its first
 * test, entered from INIT, holds exactly when 0 < N. A null node for
 * other shapes.
 */
static TSNode counted_bound(TSNode init, TSNode cond, const char *src)
{
	if (!ts_type_is(init, "assignment_expression") || !ts_type_is(cond, "binary_expression") ||
	    !ts_text_is(ts_field(init, "operator"), src, "="))
		return ts_null();
	TSNode x = ts_field(init, "left"), v = ts_field(init, "right");
	TSNode l = ts_field(cond, "left"), r = ts_field(cond, "right"), op = ts_field(cond, "operator");
	if (!ts_type_is(x, "identifier") || !ts_type_is(l, "identifier"))
		return ts_null();
	char *a = canon(x, src), *b = canon(l, src);
	bool same = strcmp(a, b) == 0;
	free(a);
	free(b);
	if (!same)
		return ts_null();
	if (ts_text_is(op, src, "<") && ts_text_is(v, src, "0"))
		return r;
	if (ts_text_is(op, src, ">=") && ts_text_is(r, src, "0") && ts_type_is(v, "binary_expression") &&
	    ts_text_is(ts_field(v, "operator"), src, "-") && ts_text_is(ts_field(v, "right"), src, "1"))
		return ts_field(v, "left");
	return ts_null();
}

/*
 * `for (i = 0; i < n; i++)` entered from its initializer: a fact of its
 * own, the same for every loop counting over the same bound (up, or down
 * from n - 1: counted_bound()).
 */
static void loop_first_test(struct path_facts *pf, const struct fn *f, uint32_t id)
{
	TSNode cond = f->cfg.nodes.items[id].ast, loop = ts_parent(cond);
	if (!ts_type_is(loop, "for_statement") || !ts_node_eq(ts_field(loop, "condition"), cond))
		return;
	TSNode init = ts_field(loop, "initializer");
	if (ts_node_is_null(init) || !pure(cond, f->src))
		return;
	for (uint32_t k = 0; k < f->cfg.nodes.len; k++)
		if (ts_node_eq(f->cfg.nodes.items[k].ast, init)) {
			TSNode bound = counted_bound(init, cond, f->src);
			if (!ts_node_is_null(bound)) {
				if (!pure(bound, f->src))
					return;
				char *t = canon(bound, f->src);
				int fact = fact_intern(pf, xasprintf("0<(%s)", t), bound, f->src);
				free(t);
				if (fact < 0)
					return;
				pf->nodes[id].first_fact = fact;
				pf->nodes[id].init = k;
				return;
			}
			char *a = canon(init, f->src), *b = canon(cond, f->src);
			int fact = fact_intern(pf, xasprintf("%s;%s", a, b), ts_null(), f->src);
			free(a);
			free(b);
			if (fact < 0)
				return;
			/* the bound's values: what the test reads, but the counter the initializer sets */
			struct strvec reads = STRVEC_INIT, set = STRVEC_INIT;
			reads_of(cond, f->src, &reads);
			struct reads_ctx w = {f->src, &set};
			ts_walk(init, writes_visit, &w);
			for (size_t i = 0; i < reads.len; i++) {
				bool counter = false;
				for (size_t j = 0; j < set.len && !counter; j++)
					counter = strcmp(set.items[j], reads.items[i]) == 0;
				if (!counter)
					strvec_push(&pf->facts.items[fact].reads, reads.items[i]);
			}
			strvec_release(&reads);
			strvec_release(&set);
			pf->nodes[id].first_fact = fact;
			pf->nodes[id].init = k;
			return;
		}
}

/* ---- the table ------------------------------------------------------------ */

static void node_kills(struct path_facts *pf, uint32_t id)
{
	const struct strvec *w = &pf->nodes[id].writes;
	for (size_t i = 0; i < w->len; i++) {
		for (size_t k = 0; k < pf->facts.len; k++)
			for (size_t r = 0; r < pf->facts.items[k].reads.len; r++)
				if (changes(w->items[i], pf->facts.items[k].reads.items[r]))
					pf->kills[id] |= (uint64_t)1 << k;
		for (size_t a = 0; a < pf->aliases.len; a++)
			if (strcmp(w->items[i], pf->aliases.items[a].p) == 0 ||
			    changes(w->items[i], pf->aliases.items[a].q))
				pf->alias_kills[id] |= (uint32_t)1 << a;
	}
}

void path_facts_find(struct path_facts *pf, const struct fn *f)
{
	size_t n = f->cfg.nodes.len;
	memset(pf, 0, sizeof *pf);
	pf->nodes = xcalloc(n, sizeof *pf->nodes);
	pf->kills = xcalloc(n, sizeof *pf->kills);
	pf->alias_kills = xcalloc(n, sizeof *pf->alias_kills);
	for (uint32_t id = 0; id < n; id++)
		pf->nodes[id].cond = pf->nodes[id].first_fact = pf->nodes[id].gen_fact = pf->nodes[id].alias =
			pf->nodes[id].try_key = pf->nodes[id].ret_fact = -1;
	for (size_t a = 0; a < f->cfg.arms.len; a++)
		arm_fact(pf, f, &f->cfg.arms.items[a]);
	arm_facts_at_entry(pf, f);
	for (uint32_t id = 0; id < n; id++) {
		const struct cfg_node *node = &f->cfg.nodes.items[id];
		struct node_facts *nf = &pf->nodes[id];
		if (ts_node_is_null(node->ast))
			continue;
		if (node->kind == CFG_COND && pure(node->ast, f->src))
			nf->cond = cond_build(pf, node->ast, f->src);
		if (node->kind == CFG_COND)
			loop_first_test(pf, f, id);
		if (node->kind == CFG_RETURN)
			node_return(pf, f, nf, node->ast);
	}
	/* writes last: a `v = 1;` sets a fact only once every condition has named its facts */
	for (uint32_t id = 0; id < n; id++) {
		TSNode ast = f->cfg.nodes.items[id].ast;
		if (ts_node_is_null(ast))
			continue;
		struct reads_ctx w = {f->src, &pf->nodes[id].writes};
		ts_walk(ast, writes_visit, &w);
		node_assign(pf, f, &pf->nodes[id], ast);
		node_try_result(pf, f, id);
	}
	for (size_t a = 0; a < pf->aliases.len; a++) {
		alias_pairs(&pf->aliases.items[a], f);
		alias_releases(&pf->aliases.items[a], f);
	}
	for (uint32_t id = 0; id < n; id++)
		node_kills(pf, id);
}

/* Is NAME one of F's parameters? */
static bool is_param(const struct fn *f, const char *name)
{
	TSNode d = ts_field(f->def, "declarator");
	while (!ts_node_is_null(d) && !ts_type_is(d, "function_declarator"))
		d = ts_field(d, "declarator");
	if (ts_node_is_null(d))
		return false; /* a definition the grammar read without a declarator (recovered from an error) */
	TSNode params = ts_field(d, "parameters");
	for (uint32_t i = 0; !ts_node_is_null(params) && i < ts_node_named_child_count(params); i++) {
		TSNode p = ts_field(ts_node_named_child(params, i), "declarator");
		while (ts_type_is(p, "pointer_declarator") || ts_type_is(p, "array_declarator"))
			p = ts_field(p, "declarator");
		if (ts_type_is(p, "identifier") && ts_text_is(p, f->src, name))
			return true;
	}
	return false;
}

/* Does FACT read nothing but F's parameters and constants (upper-case names)? */
static bool param_fact(const struct fact *x, const struct fn *f)
{
	for (size_t r = 0; r < x->reads.len; r++) {
		const char *n = x->reads.items[r];
		if (!upper_name(n, strlen(n)) && !is_param(f, n))
			return false;
	}
	return x->reads.len > 0;
}

/* The facts of condition tree C, into *MASK. */
static void cond_facts(const struct path_facts *pf, int c, uint64_t *mask)
{
	if (c < 0)
		return;
	const struct cond_node *n = &pf->conds.items[c];
	if (n->fact >= 0)
		*mask |= (uint64_t)1 << n->fact;
	cond_facts(pf, n->left, mask);
	cond_facts(pf, n->right, mask);
}

uint64_t path_release_guards(const struct path_facts *pf, const struct fn *f, uint32_t key)
{
	uint64_t mask = 0;
	for (size_t id = 0; id < f->cfg.nodes.len; id++) {
		const struct cfg_node *node = &f->cfg.nodes.items[id];
		bool guards = false;
		/* the if whose arm holds the release: not the statement after it, where both edges go */
		TSNode stmt = ts_null();
		if (node->kind == CFG_COND)
			for (stmt = ts_node_parent(node->ast); !ts_node_is_null(stmt) &&
			     ts_type_is(stmt, "parenthesized_expression"); stmt = ts_node_parent(stmt))
				;
		if (!ts_type_is(stmt, "if_statement"))
			continue;
		for (size_t e = 0; e < node->succ.len && !guards; e++) {
			uint32_t to = node->succ.items[e].to;
			for (int hop = 0; hop < 8 && f->cfg.nodes.items[to].kind == CFG_JOIN &&
					  f->cfg.nodes.items[to].succ.len == 1; hop++)
				to = f->cfg.nodes.items[to].succ.items[0].to; /* the arm's entry, a block */
			const event_vec *ev = &f->events.items[to];
			for (size_t k = 0; k < ev->len && !guards; k++)
				guards = ev->items[k].api && ev->items[k].api->op == API_RELEASE &&
					 (ev->items[k].rel[0] == (int32_t)key || ev->items[k].rel[1] == (int32_t)key) &&
					 ts_node_start_byte(ev->items[k].call) >= ts_node_start_byte(stmt) &&
					 ts_node_end_byte(ev->items[k].call) <= ts_node_end_byte(stmt);
		}
		if (guards)
			cond_facts(pf, pf->nodes[id].cond, &mask);
	}
	for (size_t i = 0; i < pf->facts.len; i++)
		if (((mask >> i) & 1) && !param_fact(&pf->facts.items[i], f))
			mask &= ~((uint64_t)1 << i);
	return mask;
}

void path_facts_release(struct path_facts *pf, size_t nodes)
{
	for (size_t i = 0; i < pf->facts.len; i++) {
		free(pf->facts.items[i].text);
		free(pf->facts.items[i].range_var);
		strvec_release(&pf->facts.items[i].reads);
	}
	vec_release(&pf->facts);
	vec_release(&pf->conds);
	for (size_t i = 0; i < pf->aliases.len; i++) {
		free(pf->aliases.items[i].p);
		free(pf->aliases.items[i].q);
		vec_release(&pf->aliases.items[i].pairs);
		vec_release(&pf->aliases.items[i].rels);
	}
	vec_release(&pf->aliases);
	for (size_t i = 0; pf->nodes && i < nodes; i++) {
		vec_release(&pf->nodes[i].arms);
		strvec_release(&pf->nodes[i].writes);
	}
	free(pf->nodes);
	free(pf->kills);
	free(pf->alias_kills);
}
