/*
 * The driver: runs the site query (grammars/sites.scm) over each function
 * and hands every site to the checker of the rule that decides its kind,
 * from the table rules/rules.def expands into.
 */
#define _GNU_SOURCE /* memmem */
#include "rules/ctx.h"
#include "util/interrupt.h"
#include "parse/query.h"

#include <pthread.h>
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

/* ---- macros of the tree's headers that hide a site ------------------------------- */

const struct macro_def *tree_macro_find(const struct ctx *c, const char *name, size_t len,
					bool function_like, enum tree_macro_kind kind)
{
	const tree_macro_vec *m = c->opts->macros;
	for (size_t i = 0; m && i < m->len; i++) {
		const struct tree_macro *t = &m->items[i];
		if (t->kind == kind && t->def.function_like == function_like && t->def.name[0] == name[0] &&
		    strlen(t->def.name) == len && memcmp(t->def.name, name, len) == 0 &&
		    strcmp(t->file, c->src->path) != 0)
			return &t->def;
	}
	return NULL;
}

char *macro_location(const struct ctx *c, const struct macro_def *d)
{
	const tree_macro_vec *m = c->opts->macros;
	for (size_t i = 0; m && i < m->len; i++)
		if (&m->items[i].def == d)
			return xasprintf("%s:%u", m->items[i].file, m->items[i].line);
	return xasprintf("line %u", source_pos(c->src, d->offset).line);
}

TSNode define_node(const struct ctx *c, const struct macro_def *d)
{
	TSNode root = ts_tree_root_node(c->fa->tree);
	return ts_node_descendant_for_byte_range(root, (uint32_t)d->offset, (uint32_t)d->offset);
}

bool define_conditional(const struct ctx *c, const struct macro_def *d)
{
	for (size_t k = 0; k < c->src->defs.len; k++)
		if (&c->src->defs.items[k] != d && strcmp(c->src->defs.items[k].name, d->name) == 0)
			return true; /* #if arms: the name means different things */
	return version_guarded(c, define_node(c, d));
}

/* Is PATH under an include/ directory (the kernel's own API headers)? */
static bool in_include_dir(const char *path)
{
	return strncmp(path, "include/", 8) == 0 || strstr(path, "/include/") != NULL;
}

void header_macros_collect(struct ctx *c)
{
	size_t n = strlen(c->src->path);
	if (n < 2 || strcmp(c->src->path + n - 2, ".h") != 0)
		return;
	for (size_t i = 0; i < c->src->defs.len; i++) {
		const struct macro_def *d = &c->src->defs.items[i];
		enum tree_macro_kind kind;
		if (strstr(d->body, "need_resched"))
			kind = MACRO_RESCHED;
		else if (macro_reads_cpu(d->body) && !in_include_dir(c->src->path))
			kind = MACRO_CPU; /* the kernel's own macros (in_interrupt()) are 2.6's to port */
		else
			continue;
		if (define_conditional(c, d))
			continue;
		struct tree_macro t = {{xstrdup(d->name), d->function_like, xstrdup(d->body), d->offset, d->end},
				       xstrdup(c->src->path), source_pos(c->src, d->offset).line, kind};
		vec_push(&c->out->macros, t);
	}
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
#define RULE(id, code, name, sev, summary, help, check, sites, fixes, props, words) {RULE_##id, check, sites},
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

/*
 * Can F's body hold a site of grammars/sites.scm that a checker acts on?
 * Every call is a site, but P006 decides only where preemption may be off:
 * a function entered preemptible that takes no lock has no such point.
 * The other sites need their words in the body, or a macro hiding them.
 */
static const char *const site_words[] = {"smp_processor_id", "__get_cpu_var", "per_cpu", "preempt_enable_no",
					  "preempt_check_resched", "need_resched", "SCHED_YIELD"};

const char *const *rules_site_words(size_t *n)
{
	*n = ARRAY_SIZE(site_words);
	return site_words;
}

static const char *prefilter_words[RULE_COUNT * RULE_MAX_WORDS];
static size_t n_prefilter_words;
static pthread_once_t prefilter_once = PTHREAD_ONCE_INIT;

static void prefilter_words_collect(void)
{
	for (int r = 0; r < RULE_COUNT; r++)
		for (const char *const *w = rule_words((enum rule_id)r); *w; w++) {
			bool seen = false;
			for (size_t k = 0; k < n_prefilter_words && !seen; k++)
				seen = strcmp(prefilter_words[k], *w) == 0;
			if (!seen)
				prefilter_words[n_prefilter_words++] = *w;
		}
}

const char *const *rules_prefilter_words(size_t *n)
{
	pthread_once(&prefilter_once, prefilter_words_collect);
	*n = n_prefilter_words;
	return prefilter_words;
}

static bool body_may_hold_site(const struct ctx *c, const struct fn *f)
{
	if (c->may_cpu_macro || c->may_resched_macro || f->ctx != CTX_PROCESS || f->acqs.len)
		return true;
	uint32_t s = ts_node_start_byte(f->body), e = ts_node_end_byte(f->body);
	for (size_t i = 0; i < ARRAY_SIZE(site_words); i++)
		if (memmem(c->text + s, e - s, site_words[i], strlen(site_words[i])))
			return true;
	return false;
}

int rules_run(const struct file_analysis *fa, const struct scan_options *opts, struct scan_result *out)
{
	/* the patterns matching every identifier, for a macro that cannot be there */
	static const char *const macro_preds[] = {"cpu-macro?", "resched-macro?", NULL};
	const struct query *sites = query_get("sites.scm");
	const struct query *no_macros = query_get_without("sites.scm", "sites.scm without macros", macro_preds);
	if (!sites || !no_macros)
		return -1;
	struct array_refusals kept = {VEC_INIT, VEC_INIT};
	size_t first = out->findings.len, arrays0 = out->arrays.len;
	struct ctx c;
	/*
	 * An array found ineligible only after its uses were planned (a use
	 * that cannot be fixed): the file is checked again with it kept.
	 */
	for (unsigned round = 0;; round++) {
		memset(&c, 0, sizeof c);
		c.fa = fa;
		c.src = fa->src;
		c.text = fa->src->parse_text;
		c.opts = opts;
		c.out = out;
		c.kept = &kept;
		ctx_prescan(&c);
		percpu_arrays_find(&c);
		for (size_t i = 0; i < fa->fns.len && !interrupted(); i++) {
			const struct fn *f = &fa->fns.items[i];
			if (in_dead_code(&c, f->def))
				continue;
			struct site_scan ss = {&c, f};
			c.fn_first_finding = out->findings.len;
			c.fn_resched_write = 0;
			if (body_may_hold_site(&c, f))
				query_run(c.may_cpu_macro || c.may_resched_macro ? sites : no_macros, f->body, c.text,
					  site_host_pred, &ss, site_match, &ss);
			function_checks(&c, f);
			if (c.fn_resched_write)
				resched_tests_stay(&c, f);
		}
		/* A #define whose body is the reschedule check as one statement is rewritten in its
		 * body; the uses of other macros testing need_resched are fixed where they are used
		 * (check_macro_stmt, check_resched). */
		check_resched_defines(&c);
		refuse_cross_function_slots(&c, first);
		if (!percpu_arrays_report(&c) || round == 3)
			break;
		for (size_t i = first; i < out->findings.len; i++)
			finding_release(&out->findings.items[i]);
		out->findings.len = first;
		for (size_t i = arrays0; i < out->arrays.len; i++)
			tree_array_release(&out->arrays.items[i]);
		out->arrays.len = arrays0;
		cpu_stable_release(&c);
		percpu_arrays_free(&c);
		vec_release(&c.covered);
		vec_release(&c.cpu_macros);
	}
	if (opts->want && opts->verify_depth == 0)
		header_macros_collect(&c);
	cpu_stable_release(&c);
	percpu_arrays_free(&c);
	vec_release(&c.covered);
	vec_release(&c.cpu_macros);
	for (size_t i = 0; i < kept.names.len; i++)
		free(kept.names.items[i]), free(kept.whys.items[i]);
	vec_release(&kept.names);
	vec_release(&kept.whys);
	return 0;
}
