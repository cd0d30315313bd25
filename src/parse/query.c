#include "parse/query.h"

#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "parse/ts.h"
#include "util/embedded.h"

const TSLanguage *tree_sitter_c(void);

enum pred_kind { PRED_EQ, PRED_NOT_EQ, PRED_ANY_OF, PRED_MATCH, PRED_HOST };

struct pred {
	enum pred_kind kind;
	uint32_t capture;
	int64_t other_capture;  /* #eq? @a @b; -1 when comparing with strings */
	VEC(const char *) strings;
	regex_t re;
	const char *host;       /* host predicate name without '#' and '?' */
};

typedef VEC(struct pred) pred_vec;

struct query {
	TSQuery *ts;
	VEC(pred_vec) preds; /* per pattern */
};

#define MAX_QUERIES 8

static struct {
	pthread_mutex_t lock;
	const char *names[MAX_QUERIES];
	struct query *queries[MAX_QUERIES];
	size_t n;
} cache = {PTHREAD_MUTEX_INITIALIZER, {0}, {0}, 0};

static int compile_preds(struct query *q, const char *name)
{
	uint32_t np = ts_query_pattern_count(q->ts);
	for (uint32_t p = 0; p < np; p++) {
		pred_vec pv = VEC_INIT;
		uint32_t steps;
		const TSQueryPredicateStep *s = ts_query_predicates_for_pattern(q->ts, p, &steps);
		for (uint32_t i = 0; i < steps; ) {
			uint32_t j = i;
			while (j < steps && s[j].type != TSQueryPredicateStepTypeDone)
				j++;
			/* s[i] is the predicate name, s[i+1..j) its arguments */
			uint32_t len;
			const char *op = ts_query_string_value_for_id(q->ts, s[i].value_id, &len);
			struct pred pr;
			memset(&pr, 0, sizeof pr);
			pr.other_capture = -1;
			if (j - i < 2 || s[i + 1].type != TSQueryPredicateStepTypeCapture)
				return error_set("%s: pattern %u: predicate %s needs a capture first", name, p, op);
			pr.capture = s[i + 1].value_id;
			if (strcmp(op, "eq?") == 0 || strcmp(op, "not-eq?") == 0) {
				pr.kind = op[0] == 'e' ? PRED_EQ : PRED_NOT_EQ;
				if (j - i != 3)
					return error_set("%s: pattern %u: #%s takes two arguments", name, p, op);
				if (s[i + 2].type == TSQueryPredicateStepTypeCapture)
					pr.other_capture = s[i + 2].value_id;
				else
					vec_push(&pr.strings, ts_query_string_value_for_id(q->ts, s[i + 2].value_id, &len));
			} else if (strcmp(op, "any-of?") == 0) {
				pr.kind = PRED_ANY_OF;
				for (uint32_t k = i + 2; k < j; k++)
					vec_push(&pr.strings, ts_query_string_value_for_id(q->ts, s[k].value_id, &len));
			} else if (strcmp(op, "match?") == 0) {
				pr.kind = PRED_MATCH;
				if (j - i != 3 || s[i + 2].type != TSQueryPredicateStepTypeString)
					return error_set("%s: pattern %u: #match? takes a capture and a regex", name, p);
				const char *re = ts_query_string_value_for_id(q->ts, s[i + 2].value_id, &len);
				if (regcomp(&pr.re, re, REG_EXTENDED | REG_NOSUB) != 0)
					return error_set("%s: pattern %u: bad regex '%s'", name, p, re);
			} else {
				pr.kind = PRED_HOST;
				pr.host = op;
			}
			vec_push(&pv, pr);
			i = j + 1;
		}
		vec_push(&q->preds, pv);
	}
	return 0;
}

/* Compiles the embedded query NAME, with the patterns testing a host predicate of OFF disabled. */
static struct query *query_compile(const char *name, const char *const *off)
{
	const struct embedded_file *f = embedded_find(name);
	if (!f) {
		error_set("query file grammars/%s is not in this build", name);
		return NULL;
	}
	uint32_t at;
	TSQueryError err;
	TSQuery *ts = ts_query_new(tree_sitter_c(), f->data, (uint32_t)f->len, &at, &err);
	if (!ts) {
		error_set("grammars/%s: query error %d at byte %u", name, (int)err, at);
		return NULL;
	}
	struct query *q = xcalloc(1, sizeof *q);
	q->ts = ts;
	if (compile_preds(q, name) < 0)
		return NULL; /* leaked on purpose: a build defect, reported once */
	for (uint32_t p = 0; off && p < q->preds.len; p++) {
		bool drop = false;
		for (size_t i = 0; i < q->preds.items[p].len && !drop; i++)
			for (const char *const *o = off; *o && !drop; o++)
				drop = q->preds.items[p].items[i].kind == PRED_HOST &&
				       strcmp(q->preds.items[p].items[i].host, *o) == 0;
		if (drop)
			ts_query_disable_pattern(q->ts, p);
	}
	return q;
}

static const struct query *query_cached(const char *name, const char *key, const char *const *off)
{
	struct query *found = NULL;
	pthread_mutex_lock(&cache.lock);
	for (size_t i = 0; i < cache.n; i++)
		if (strcmp(cache.names[i], key) == 0)
			found = cache.queries[i];
	if (!found && cache.n < MAX_QUERIES) {
		found = query_compile(name, off);
		if (found) {
			cache.names[cache.n] = key;
			cache.queries[cache.n++] = found;
		}
	}
	pthread_mutex_unlock(&cache.lock);
	return found;
}

const struct query *query_get(const char *name)
{
	return query_cached(name, name, NULL);
}

const struct query *query_get_without(const char *name, const char *key, const char *const *off)
{
	return query_cached(name, key, off);
}

static TSNode capture_node(const TSQueryMatch *m, uint32_t id, bool *ok)
{
	for (uint16_t i = 0; i < m->capture_count; i++)
		if (m->captures[i].index == id) {
			*ok = true;
			return m->captures[i].node;
		}
	*ok = false;
	return ts_null();
}

static bool preds_hold(const struct query *q, const TSQueryMatch *m, const char *text,
		       query_host_pred host, void *host_ctx)
{
	const pred_vec *pv = &q->preds.items[m->pattern_index];
	for (size_t i = 0; i < pv->len; i++) {
		const struct pred *p = &pv->items[i];
		bool ok;
		TSNode n = capture_node(m, p->capture, &ok);
		if (!ok)
			return false;
		bool r = false;
		switch (p->kind) {
		case PRED_EQ:
		case PRED_NOT_EQ:
			if (p->other_capture >= 0) {
				bool ok2;
				TSNode o = capture_node(m, (uint32_t)p->other_capture, &ok2);
				uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
				uint32_t c = ts_node_start_byte(o), d = ts_node_end_byte(o);
				r = ok2 && b - a == d - c && memcmp(text + a, text + c, b - a) == 0;
			} else {
				r = ts_text_is(n, text, p->strings.items[0]);
			}
			if (p->kind == PRED_NOT_EQ)
				r = !r;
			break;
		case PRED_ANY_OF:
			for (size_t k = 0; k < p->strings.len && !r; k++)
				r = ts_text_is(n, text, p->strings.items[k]);
			break;
		case PRED_MATCH: {
			uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
			char *s = xstrndup(text + a, b - a);
			r = regexec(&p->re, s, 0, NULL, 0) == 0;
			free(s);
			break;
		}
		case PRED_HOST:
			r = host && host(p->host, n, host_ctx);
			break;
		}
		if (!r)
			return false;
	}
	return true;
}

const char *query_site(const struct query_match *m, TSNode *out)
{
	for (uint16_t i = 0; i < m->m->capture_count; i++) {
		uint32_t len;
		const char *cn = ts_query_capture_name_for_id(m->q->ts, m->m->captures[i].index, &len);
		if (len > 5 && memcmp(cn, "site.", 5) == 0) {
			*out = m->m->captures[i].node;
			return cn + 5;
		}
	}
	return NULL;
}

void query_run(const struct query *q, TSNode root, const char *text, query_host_pred host, void *host_ctx,
	       void (*fn)(const struct query_match *m, void *ctx), void *ctx)
{
	TSQueryCursor *cur = ts_query_cursor_new();
	ts_query_cursor_exec(cur, q->ts, root);
	TSQueryMatch m;
	while (ts_query_cursor_next_match(cur, &m)) {
		if (!preds_hold(q, &m, text, host, host_ctx))
			continue;
		struct query_match qm = {q, &m};
		fn(&qm, ctx);
	}
	ts_query_cursor_delete(cur);
}
