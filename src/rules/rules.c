/*
 * The driver: runs the site query (grammars/sites.scm) over each function
 * and hands every site to the checker of the rule that decides its kind,
 * from the table rules/rules.def expands into.
 */
#include "rules/ctx.h"
#include "parse/query.h"

#include <stdlib.h>
#include <string.h>

struct site_scan {
	struct ctx *c;
	const struct fn *f;
};

/* Host predicates of grammars/sites.scm. */
static bool site_host_pred(const char *name, TSNode n, void *ctx)
{
	struct ctx *c = ((struct site_scan *)ctx)->c;
	if (strcmp(name, "cpu-macro?") == 0)
		return cpu_macro_of(c, n) != NULL;
	return resched_host_pred(c, name, n);
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
	/* every rule that decides this kind (several may share one, e.g. "call") */
	for (size_t i = 0; i < ARRAY_SIZE(registry); i++)
		for (size_t k = 0; k < RULE_MAX_SITES && registry[i].sites[k]; k++)
			if (strcmp(registry[i].sites[k], kind) == 0 && registry[i].check)
				registry[i].check(ss->c, ss->f, n, kind);
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
	percpu_arrays_find(&c);
	size_t first = out->findings.len;
	for (size_t i = 0; i < fa->fns.len; i++) {
		const struct fn *f = &fa->fns.items[i];
		if (in_dead_code(&c, f->def))
			continue;
		struct site_scan ss = {&c, f};
		c.fn_first_finding = out->findings.len;
		c.fn_resched_write = 0;
		query_run(sites, f->body, c.text, site_host_pred, &ss, site_match, &ss);
		function_checks(&c, f);
		if (c.fn_resched_write)
			resched_tests_stay(&c, f);
	}
	/* #define bodies are not sites: each use of a macro that tests need_resched is
	 * reported and fixed where it is used (check_macro_stmt, check_resched). */
	refuse_cross_function_slots(&c, first);
	cpu_stable_release(&c);
	percpu_arrays_free(&c);
	vec_release(&c.covered);
	vec_release(&c.cpu_macros);
	return 0;
}
