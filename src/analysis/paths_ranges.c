/*
 * Comparisons of one value with integer constants (paths_internal.h):
 * where a path has learned `pid > 0`, it knows `pid < 0` is false.
 * kernel/capability.c takes tasklist_lock under `if (pid > 0 && ...)`
 * and later skips the release under `if (pid < 0) goto spin_out;`; the
 * two tests are one value seen twice, and no path takes the lock and
 * the jump both.
 */
#include "analysis/paths_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* An integer literal, maybe negated: `0`, `-1`, `0x10`. */
static bool int_literal(TSNode n, const char *src, long long *out)
{
	bool neg = false;
	n = ts_strip_parens(n, src);
	if (ts_type_is(n, "unary_expression") && ts_text_is(ts_field(n, "operator"), src, "-")) {
		neg = true;
		n = ts_strip_parens(ts_field(n, "argument"), src);
	}
	if (!ts_type_is(n, "number_literal"))
		return false;
	uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
	char buf[32];
	if (e - s >= sizeof buf)
		return false;
	memcpy(buf, src + s, e - s);
	buf[e - s] = '\0';
	char *end;
	errno = 0;
	long long v = strtoll(buf, &end, 0);
	while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')
		end++;
	if (errno || *end || end == buf)
		return false;
	*out = neg ? -v : v;
	return true;
}

/* A plain value: a variable or a field path (`pid`, `dev->state`). */
static bool plain_value(TSNode n, const char *src)
{
	n = ts_strip_parens(n, src);
	if (ts_type_is(n, "identifier"))
		return true;
	return ts_type_is(n, "field_expression") && plain_value(ts_field(n, "argument"), src);
}

void fact_range_note(struct fact *f, TSNode n, const char *src)
{
	static const char *const ops[] = {"<", "<=", ">", ">=", "==", "!="};
	if (!ts_type_is(n, "binary_expression"))
		return;
	TSNode op = ts_field(n, "operator"), l = ts_field(n, "left"), r = ts_field(n, "right");
	int o = -1;
	for (int i = 0; i < 6 && o < 0; i++)
		if (ts_text_is(op, src, ops[i]))
			o = i;
	long long c;
	bool swap = false;
	if (o < 0)
		return;
	if (!int_literal(r, src, &c)) {
		if (!int_literal(l, src, &c))
			return;
		swap = true;
	}
	TSNode v = swap ? r : l;
	if (!plain_value(v, src))
		return;
	if (swap && o < 4)
		o ^= 2; /* 0 < pid is pid > 0 */
	long long lo = LLONG_MIN, hi = LLONG_MAX;
	switch (o) {
	case 0: if (c == LLONG_MIN) return; hi = c - 1; break;
	case 1: hi = c; break;
	case 2: if (c == LLONG_MAX) return; lo = c + 1; break;
	case 3: lo = c; break;
	default: lo = hi = c; break; /* `!=` is the fact `==`, negated by its tree */
	}
	uint32_t s = ts_node_start_byte(v), e = ts_node_end_byte(v);
	f->range_var = xstrndup(src + s, e - s);
	f->range_lo = lo;
	f->range_hi = hi;
}

/* Is [A, B] inside [C, D]? */
static bool inside(long long a, long long b, long long c, long long d)
{
	return a >= c && b <= d;
}

/*
 * What fact X being V says of fact Y over the same value: 1 true, 0
 * false, -1 nothing. X true is its interval; X false is the one interval
 * left of it, when it is bounded on one side only.
 */
static int implied(const struct fact *x, bool v, const struct fact *y)
{
	long long lo = x->range_lo, hi = x->range_hi;
	if (!v) {
		if (lo == LLONG_MIN && hi != LLONG_MAX)
			lo = hi + 1, hi = LLONG_MAX;
		else if (hi == LLONG_MAX && lo != LLONG_MIN)
			hi = lo - 1, lo = LLONG_MIN;
		else
			return -1; /* `pid != 3`: two intervals, not kept */
	}
	if (inside(lo, hi, y->range_lo, y->range_hi))
		return 1;
	if (hi < y->range_lo || lo > y->range_hi)
		return 0;
	return -1;
}

void path_ranges_derive(const struct path_facts *pf, int fact, bool v, uint64_t *known, uint64_t *val)
{
	const struct fact *x = &pf->facts.items[fact];
	if (!x->range_var)
		return;
	for (size_t i = 0; i < pf->facts.len; i++) {
		const struct fact *y = &pf->facts.items[i];
		if ((int)i == fact || !y->range_var || strcmp(y->range_var, x->range_var) != 0 ||
		    (*known >> i) & 1)
			continue;
		int t = implied(x, v, y);
		if (t < 0)
			continue;
		*known |= (uint64_t)1 << i;
		*val = t ? *val | (uint64_t)1 << i : *val & ~((uint64_t)1 << i);
	}
}
