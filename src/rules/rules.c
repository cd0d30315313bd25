/*
 * The driver: runs the site query (grammars/sites.scm) over each function
 * and hands every site to the checker of the rule that decides its kind,
 * and calls the rules' other hooks around files and functions, from the
 * table rules/rules.def expands into. It names no rule.
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

/* The rules' hooks and the sites each decides (rules/rules.def). */
#define RULE_MAX_SITES 5
static const struct rule_entry {
	enum rule_id rule;
	const struct rule_hooks *hooks;
	const char *sites[RULE_MAX_SITES]; /* NULL-terminated */
} registry[] = {
#define HOOKS(h) &h
#define NO_HOOKS NULL
#define SITES(...) {__VA_ARGS__}
#define NO_SITES {NULL}
#define RULE(id, code, name, sev, summary, help, hooks, sites, fixes, props, words) {RULE_##id, hooks, sites},
#include "rules/rules.def"
#undef HOOKS
#undef NO_HOOKS
#undef SITES
#undef NO_SITES
};

/* Visits every rule's hooks H (NULL rows skipped), in row order. */
#define FOR_EACH_HOOKS(h) \
	for (size_t i_ = 0; i_ < ARRAY_SIZE(registry); i_++) \
		for (const struct rule_hooks *h = registry[i_].hooks; h; h = NULL)

/* Host predicates of grammars/sites.scm: asked of the rule that answers NAME. */
static bool site_host_pred(const char *name, TSNode n, void *ctx)
{
	struct ctx *c = ((struct site_scan *)ctx)->c;
	FOR_EACH_HOOKS(h)
		for (size_t k = 0; h->pred && h->preds[k]; k++)
			if (strcmp(h->preds[k], name) == 0)
				return h->pred(c, name, n);
	return false;
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

/* The kind of tree macro D of this header is, the lowest any rule claims; -1 if none. */
static int header_macro_kind(const struct ctx *c, const struct macro_def *d)
{
	int kind = -1;
	FOR_EACH_HOOKS(h) {
		int k = h->header_macro ? h->header_macro(c, d) : -1;
		if (k >= 0 && (kind < 0 || k < kind))
			kind = k;
	}
	return kind;
}

/* Records this header's macros that hide a site into c->out->macros. */
static void header_macros_collect(struct ctx *c)
{
	size_t n = strlen(c->src->path);
	if (n < 2 || strcmp(c->src->path + n - 2, ".h") != 0)
		return;
	for (size_t i = 0; i < c->src->defs.len; i++) {
		const struct macro_def *d = &c->src->defs.items[i];
		int kind = header_macro_kind(c, d);
		if (kind < 0 || define_conditional(c, d))
			continue;
		struct tree_macro t = {{xstrdup(d->name), d->function_like, xstrdup(d->body), d->offset, d->end},
				       xstrdup(c->src->path), source_pos(c->src, d->offset).line,
				       (enum tree_macro_kind)kind};
		vec_push(&c->out->macros, t);
	}
}

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
			if (strcmp(registry[i].sites[k], kind) == 0 && registry[i].hooks && registry[i].hooks->check)
				registry[i].hooks->check(ss->c, ss->f, n, kind);
}

/* Runs the checkers that take the whole function (RULE_SITE_FUNCTION), if their rule is on. */
static void function_checks(struct ctx *c, const struct fn *f)
{
	for (size_t i = 0; i < ARRAY_SIZE(registry); i++)
		for (size_t k = 0; k < RULE_MAX_SITES && registry[i].sites[k]; k++)
			if (strcmp(registry[i].sites[k], RULE_SITE_FUNCTION) == 0 && registry[i].hooks &&
			    registry[i].hooks->check && (c->opts->rules & (1u << registry[i].rule)))
				registry[i].hooks->check(c, f, f->body, RULE_SITE_FUNCTION);
}

/*
 * Can F's body hold a site of grammars/sites.scm that a checker acts on?
 * Every call is a site, but P006 decides only where preemption may be off:
 * a function entered preemptible that takes no lock has no such point.
 * The other sites need a word of their rule's site_words in the body, or a
 * macro hiding them.
 */
static const char *site_words[RULE_COUNT * RULE_MAX_SITE_WORDS];
static size_t n_site_words;
static pthread_once_t site_words_once = PTHREAD_ONCE_INIT;

static void site_words_collect(void)
{
	FOR_EACH_HOOKS(h)
		for (size_t k = 0; h->site_words[k]; k++)
			site_words[n_site_words++] = h->site_words[k];
}

const char *const *rules_site_words(size_t *n)
{
	pthread_once(&site_words_once, site_words_collect);
	*n = n_site_words;
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

bool rules_prefilter(const char *text, size_t len)
{
	size_t n;
	const char *const *words = rules_prefilter_words(&n);
	for (size_t i = 0; i < n; i++)
		if (memmem(text, len, words[i], strlen(words[i])))
			return true;
	FOR_EACH_HOOKS(h)
		if (h->wants && h->wants(text, len))
			return true;
	return false;
}

static bool body_may_hold_site(const struct ctx *c, const struct fn *f)
{
	if (c->may_macro_site || f->ctx != CTX_PROCESS || f->acqs.len)
		return true;
	uint32_t s = ts_node_start_byte(f->body), e = ts_node_end_byte(f->body);
	size_t n;
	const char *const *words = rules_site_words(&n);
	for (size_t i = 0; i < n; i++)
		if (memmem(c->text + s, e - s, words[i], strlen(words[i])))
			return true;
	return false;
}

/* The host predicates that match every identifier to find a macro (rule_hooks.macro_preds). */
static const char *macro_preds[RULE_COUNT * RULE_MAX_PREDS + 1];
static pthread_once_t macro_preds_once = PTHREAD_ONCE_INIT;

static void macro_preds_collect(void)
{
	size_t n = 0;
	FOR_EACH_HOOKS(h)
		for (size_t k = 0; h->macro_preds[k]; k++)
			macro_preds[n++] = h->macro_preds[k];
}

/* Starts a round of checking FA: a zeroed C, then every rule's begin_file. */
static void file_begin(struct ctx *c, const struct file_analysis *fa, const struct scan_options *opts,
		       struct scan_result *out, struct array_refusals *kept)
{
	memset(c, 0, sizeof *c);
	c->fa = fa;
	c->src = fa->src;
	c->text = fa->src->parse_text;
	c->opts = opts;
	c->out = out;
	c->kept = kept;
	c->first_finding = out->findings.len;
	ctx_prescan(c);
	FOR_EACH_HOOKS(h)
		if (h->begin_file)
			h->begin_file(c);
}

/* Runs the site query and the checks of each function of the file, and the end_function hooks. */
static void functions_check(struct ctx *c, const struct query *sites, const struct query *no_macros)
{
	const struct file_analysis *fa = c->fa;
	for (size_t i = 0; i < fa->fns.len && !interrupted(); i++) {
		const struct fn *f = &fa->fns.items[i];
		if (in_dead_code(c, f->def))
			continue;
		struct site_scan ss = {c, f};
		c->fn_first_finding = c->out->findings.len;
		if (body_may_hold_site(c, f))
			query_run(c->may_macro_site ? sites : no_macros, f->body, c->text, site_host_pred, &ss,
				  site_match, &ss);
		function_checks(c, f);
		FOR_EACH_HOOKS(h)
			if (h->end_function)
				h->end_function(c, f);
	}
}

/* Every rule's end_file: true when one asks for another round. */
static bool file_end(struct ctx *c)
{
	bool again = false;
	FOR_EACH_HOOKS(h)
		if (h->end_file)
			again |= h->end_file(c);
	return again;
}

static void file_release(struct ctx *c)
{
	FOR_EACH_HOOKS(h)
		if (h->release)
			h->release(c);
}

/* A fix that only holds the CPU number (no storage change), and the rules that read it. */
static bool cpu_number_fix(enum fix_kind k)
{
	return k == FIX_GET_CPU || k == FIX_PREEMPT_REGION || k == FIX_MOVE_INSIDE;
}

static bool cpu_rule(enum rule_id r)
{
	return r == RULE_P001 || r == RULE_P002 || r == RULE_P003;
}

/*
 * A function one of whose uses of the running CPU is left to the porter
 * (2.4 perfmon pfm_enable(): SET_PMU_OWNER() and its activation macros
 * read the CPU inside macros) gets none of its CPU-number regions
 * written: the uses work on one CPU together, and a region around one of
 * them alone leaves the race open while it reads as done. The findings
 * FIRST.. of OUT are the file's.
 */
static void withhold_partial_functions(struct scan_result *out, size_t first)
{
	for (size_t i = first; i < out->findings.len; i++) {
		const struct finding *left = &out->findings.items[i];
		if (!cpu_rule(left->rule) || left->severity != SEV_WARNING || left->protected_site ||
		    left->fix != FIX_NONE || !left->function)
			continue;
		for (size_t k = first; k < out->findings.len; k++) {
			struct finding *f = &out->findings.items[k];
			if (k == i || !cpu_rule(f->rule) || !cpu_number_fix(f->fix) || !f->function ||
			    strcmp(f->function, left->function) != 0)
				continue;
			finding_unfixable(f, xasprintf("not rewritten: %s() also uses the running CPU at line %u, which "
						       "is left to you; one region must hold both, so this use is "
						       "left with it", left->function, left->pos.line));
		}
	}
}

int rules_run(const struct file_analysis *fa, const struct scan_options *opts, struct scan_result *out)
{
	pthread_once(&macro_preds_once, macro_preds_collect);
	const struct query *sites = query_get("sites.scm");
	const struct query *no_macros = query_get_without("sites.scm", "sites.scm without macros", macro_preds);
	if (!sites || !no_macros)
		return -1;
	struct array_refusals kept = {VEC_INIT, VEC_INIT};
	size_t first = out->findings.len, arrays0 = out->arrays.len;
	struct ctx c;
	/*
	 * A rule may find only at the end of the file that it must be checked
	 * again (an array found ineligible only after its uses were planned:
	 * the file is checked again with it kept).
	 */
	for (unsigned round = 0;; round++) {
		file_begin(&c, fa, opts, out, &kept);
		functions_check(&c, sites, no_macros);
		if (!file_end(&c) || round == 3)
			break;
		for (size_t i = first; i < out->findings.len; i++)
			finding_release(&out->findings.items[i]);
		out->findings.len = first;
		for (size_t i = arrays0; i < out->arrays.len; i++)
			tree_array_release(&out->arrays.items[i]);
		out->arrays.len = arrays0;
		file_release(&c);
	}
	withhold_partial_functions(out, first);
	if (opts->want && opts->verify_depth == 0)
		header_macros_collect(&c);
	file_release(&c);
	for (size_t i = 0; i < kept.names.len; i++)
		free(kept.names.items[i]), free(kept.whys.items[i]);
	vec_release(&kept.names);
	vec_release(&kept.whys);
	return 0;
}
