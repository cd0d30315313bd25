/*
 * Calls that may compile to nothing, or evaluate an argument on some
 * paths only, so that a get inside the argument and a put after the call
 * would not pair (region.c asks): function-like macros of the file unless
 * every definition evaluates that argument unconditionally, and debug
 * printers.
 */
#include "rules/cpu_shared.h"

#include <stdlib.h>
#include <string.h>

/* The index of the argument of CALL that holds SITE (comments not counted), or -1. */
static int arg_index(TSNode call, TSNode site)
{
	TSNode args = ts_field(call, "arguments");
	int k = 0;
	for (uint32_t i = 0; i < ts_node_named_child_count(args); i++) {
		TSNode a = ts_node_named_child(args, i);
		if (ts_type_is(a, "comment"))
			continue;
		if (node_within(site, a))
			return k;
		k++;
	}
	return -1;
}

/* Does BODY hold WORD (N bytes) as a whole identifier? */
static bool has_word(const char *body, const char *word, size_t n)
{
	for (const char *p = body; (p = strchr(p, word[0])) != NULL; p++)
		if (strncmp(p, word, n) == 0 && (p == body || !is_ident_char(p[-1])) && !is_ident_char(p[n]))
			return true;
	return false;
}

/* Does BODY evaluate what it holds on every path: no test, loop or short-circuit in it? */
static bool straight_body(const char *body)
{
	static const char *const words[] = {"if", "while", "for", "switch", "do"};
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (has_word(body, words[i], strlen(words[i])))
			return false;
	return !strchr(body, '?') && !strstr(body, "&&") && !strstr(body, "||") && !strchr(body, '#');
}

/* Does D (a function-like macro of the file) evaluate its parameter number K on every path? */
static bool def_keeps_arg(const struct ctx *c, const struct macro_def *d, int k)
{
	const char *t = c->src->text + d->offset + strlen(d->name);
	if (*t != '(' || k < 0 || !straight_body(d->body))
		return false;
	t++;
	for (int i = 0;; i++) {
		while (*t == ' ' || *t == '\t' || *t == '\\' || *t == '\n')
			t++;
		const char *p = t;
		while (is_ident_char(*t))
			t++;
		if (i == k)
			return t > p && has_word(d->body, p, (size_t)(t - p));
		while (*t && *t != ',' && *t != ')')
			t++;
		if (*t != ',')
			return false;
		t++;
	}
}

bool call_may_vanish(const struct ctx *c, TSNode call, TSNode site)
{
	const char *name;
	size_t len = ts_call_name(call, c->text, &name);
	if (!len)
		return false;
	int k = arg_index(call, site);
	bool defined = false;
	for (size_t i = 0; i < c->src->defs.len; i++) {
		const struct macro_def *d = &c->src->defs.items[i];
		if (!d->function_like || strlen(d->name) != len || memcmp(d->name, name, len) != 0)
			continue;
		if (!def_keeps_arg(c, d, k))
			return true;
		defined = true;
	}
	if (defined)
		return false;
	char *s = xstrndup(name, len);
	for (char *p = s; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	bool r = strstr(s, "dbg") || strstr(s, "debug") || strcmp(s, "dprintk") == 0 ||
		 strcmp(s, "dprint") == 0 || strcmp(s, "pr_debug") == 0;
	free(s);
	return r;
}

char *plan_vanish_region(const struct ctx *c, TSNode site, struct finding *fd)
{
	TSNode st = block_stmt(site);
	if (!ts_type_is(st, "expression_statement") || !ts_type_is(ts_parent(st), "compound_statement"))
		return xstrdup("the statement is not an expression statement of a block");
	char *no = plan_region(c, st, st, NULL, "preempt_enable()", fd);
	if (no)
		return no;
	add_edit(c, fd, EDIT_INSERT_BEFORE, st, "preempt_disable();");
	return NULL;
}
