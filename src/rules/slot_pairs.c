/*
 * A CPU slot held across functions: `br_read_lock()` counts itself in this
 * CPU's slot of a per-CPU array and `br_read_unlock()` takes the count back
 * from this CPU's slot. Each function alone looks like a short per-CPU
 * access, but the pair only works if the task stays on one CPU from the
 * first call to the second. A get_cpu()/put_cpu() (or get_cpu_var()) inside
 * each function cannot give that, so the sites of such a pair are reported,
 * not fixed (2.6 made br_read_lock() disable preemption and br_read_unlock()
 * enable it, by hand).
 *
 * The pair is found by name: two functions of the file whose names differ
 * in one `_`-separated word that is a known opposite (lock/unlock, get/put,
 * enter/exit, ...), both indexing the same NR_CPUS array by the current CPU
 * outside any protection.
 */
#include "rules/cpu_shared.h"

#include <stdlib.h>
#include <string.h>

/* Opposite words; X/unX (lock/unlock, pin/unpin) is recognised without a row. */
static const char *const opposites[][2] = {
	{"get", "put"},   {"enter", "exit"},  {"enter", "leave"}, {"begin", "end"},
	{"start", "stop"}, {"start", "end"},  {"start", "finish"}, {"inc", "dec"},
	{"acquire", "release"}, {"hold", "release"}, {"down", "up"}, {"disable", "enable"},
	{"open", "close"}, {"in", "out"},     {"take", "give"},   {"claim", "release"},
};

static bool words_opposite(const char *a, size_t alen, const char *b, size_t blen)
{
	if (blen == alen + 2 && memcmp(b, "un", 2) == 0 && memcmp(b + 2, a, alen) == 0)
		return true;
	if (alen == blen + 2 && memcmp(a, "un", 2) == 0 && memcmp(a + 2, b, blen) == 0)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(opposites); i++)
		for (int k = 0; k < 2; k++) {
			const char *x = opposites[i][k], *y = opposites[i][!k];
			if (strlen(x) == alen && strlen(y) == blen && memcmp(a, x, alen) == 0 &&
			    memcmp(b, y, blen) == 0)
				return true;
		}
	return false;
}

/* The next `_`-separated word of *S (advanced past it and its separator); its length. */
static size_t next_word(const char **s, const char **word)
{
	*word = *s;
	size_t n = strcspn(*s, "_");
	*s += n;
	if (**s == '_')
		(*s)++;
	return n;
}

/* Do names A and B differ in exactly one word, and is that pair of words opposite? */
bool names_paired(const char *a, const char *b)
{
	const char *da = NULL, *db = NULL;
	size_t dal = 0, dbl = 0;
	int diffs = 0;
	while (*a || *b) {
		if (!*a || !*b)
			return false; /* different word counts */
		const char *wa, *wb;
		size_t la = next_word(&a, &wa), lb = next_word(&b, &wb);
		if (la == lb && memcmp(wa, wb, la) == 0)
			continue;
		if (++diffs > 1)
			return false;
		da = wa, dal = la, db = wb, dbl = lb;
	}
	return diffs == 1 && words_opposite(da, dal, db, dbl);
}

void note_slot_use(struct ctx *c, struct percpu_array *pa, const struct fn *f, TSNode at,
		   const struct finding *fd)
{
	struct slot_use u = {f, line_of(c, at), SIZE_MAX};
	if (fd)
		u.finding = (size_t)(fd - c->out->findings.items);
	vec_push(&pa->slot_uses, u);
}

/* Is finding FD one of the CPU-number findings of function F? */
static bool cpu_finding_of(const struct finding *fd, const struct fn *f)
{
	return (fd->rule == RULE_P001 || fd->rule == RULE_P002 || fd->rule == RULE_P003) &&
	       fd->function && strcmp(fd->function, f->name) == 0;
}

static void refuse_pair(struct ctx *c, struct percpu_array *pa, const struct slot_use *x,
			const struct slot_use *y, size_t first)
{
	for (size_t i = first; i < c->out->findings.len; i++) {
		struct finding *fd = &c->out->findings.items[i];
		if (fd->fix == FIX_NONE)
			continue;
		bool hit = cpu_finding_of(fd, x->f) || cpu_finding_of(fd, y->f);
		/* DEFINE_PER_CPU changes every use of the array: all of it or none */
		for (size_t k = 0; !hit && k < pa->slot_uses.len; k++)
			hit = pa->slot_uses.items[k].finding == i && fd->fix == FIX_DEFINE_PER_CPU;
		if (!hit)
			continue;
		const struct slot_use *self = cpu_finding_of(fd, y->f) ? y : x;
		const struct slot_use *other = self == x ? y : x;
		unfixable(fd, xasprintf(
			"%s() (line %u) and %s() (line %u) both use the current CPU's slot of %s: "
			"what one leaves in the slot the other must take back on the same CPU, so the "
			"task must not migrate between the two calls, which a get/put inside each "
			"function cannot ensure; disable preemption in %s() and enable it in %s() by hand",
			self->f->name, self->line, other->f->name, other->line, pa->name,
			x->line <= y->line ? x->f->name : y->f->name,
			x->line <= y->line ? y->f->name : x->f->name));
	}
}

/*
 * Makes report-only the CPU findings (from index FIRST on) of every pair of
 * functions that both use the current CPU's slot of one array.
 */
static void refuse_cross_function_slots(struct ctx *c, size_t first)
{
	for (size_t a = 0; a < c->arrays.len; a++) {
		struct percpu_array *pa = c->arrays.items[a];
		for (size_t i = 0; i < pa->slot_uses.len; i++)
			for (size_t j = i + 1; j < pa->slot_uses.len; j++) {
				const struct slot_use *x = &pa->slot_uses.items[i], *y = &pa->slot_uses.items[j];
				if (x->f != y->f && names_paired(x->f->name, y->f->name))
					refuse_pair(c, pa, x, y, first);
			}
	}
}

/* P001's hooks: after the file's functions, the slots held across two of them. */
static bool slots_end_file(struct ctx *c)
{
	refuse_cross_function_slots(c, c->first_finding);
	return false;
}

const struct rule_hooks percpu_array_hooks = {.end_file = slots_end_file};
