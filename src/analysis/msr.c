/*
 * ppc's interrupts turned off by hand: the debuggers (xmon, the gdb stubs)
 * write the machine state register themselves,
 *
 *	msr = get_msr();
 *	set_msr(msr & ~MSR_EE);	// disable interrupts
 *	...
 *	set_msr(msr);		// restore interrupt enable
 *
 * which is what the architecture's own local_irq_disable() and
 * local_irq_restore() do (2.6.9 include/asm-ppc/hw_irq.h). A write that
 * clears MSR_EE (0x8000) takes interrupts off; a write of a saved word
 * gives them back, in a function that cleared the bit (elsewhere a write
 * of a variable says nothing of interrupts).
 */
#define _GNU_SOURCE /* memmem */
#include "analysis/flow.h"

#include <string.h>

static const char *const msr_writers[] = {"set_msr", "set_msrd", "mtmsr", "mtmsrd", "__mtmsrd"};

static const struct api msr_off = {"mtmsr", API_ACQUIRE, KEY_IRQ, NULL, 0, NULL, NULL};
static const struct api msr_restore = {"mtmsr", API_RELEASE, KEY_IRQ, NULL, 0, NULL, NULL};

void msr_writer_words(void (*visit)(const char *word, unsigned cls, void *ctx), void *ctx)
{
	for (size_t i = 0; i < sizeof msr_writers / sizeof *msr_writers; i++)
		visit(msr_writers[i], API_WORD_LOCK, ctx);
}

static bool is_msr_writer(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof msr_writers / sizeof *msr_writers; i++)
		if (strlen(msr_writers[i]) == len && memcmp(msr_writers[i], name, len) == 0)
			return true;
	return false;
}

/* Does the text [S, E) clear the interrupt-enable bit: `& ~MSR_EE`, `& ~0x8000`? */
static bool clears_ee(const char *s, const char *e)
{
	for (const char *p = s; p < e; p++) {
		if (*p != '~')
			continue;
		const char *q = p + 1;
		while (q < e && (*q == ' ' || *q == '\t' || *q == '('))
			q++;
		if ((size_t)(e - q) >= 6 && memcmp(q, "MSR_EE", 6) == 0 && (q + 6 == e || !is_ident_char(q[6])))
			return true;
		if ((size_t)(e - q) >= 6 && memcmp(q, "0x8000", 6) == 0 && (q + 6 == e || !is_ident_char(q[6])))
			return true;
	}
	return false;
}

/* Does F's body write the MSR with the interrupt-enable bit cleared? */
static bool fn_clears_ee(const struct fn *f, const char *src)
{
	const char *s = src + ts_node_start_byte(f->body), *e = src + ts_node_end_byte(f->body);
	for (size_t i = 0; i < sizeof msr_writers / sizeof *msr_writers; i++) {
		size_t n = strlen(msr_writers[i]);
		for (const char *p = s; (p = memmem(p, (size_t)(e - p), msr_writers[i], n)) != NULL; p += n) {
			if ((p > s && is_ident_char(p[-1])) || is_ident_char(p[n]))
				continue;
			const char *close = memchr(p, ';', (size_t)(e - p));
			if (close && clears_ee(p + n, close))
				return true;
		}
	}
	return false;
}

const struct api *api_msr_write(const struct fn *f, TSNode call, const char *name, size_t len, const char *src)
{
	if (!is_msr_writer(name, len) || ts_node_is_null(f->body))
		return NULL;
	TSNode args = ts_field(call, "arguments");
	if (ts_node_named_child_count(args) < 1)
		return NULL;
	TSNode a = ts_strip_parens(ts_node_named_child(args, 0), src);
	if (clears_ee(src + ts_node_start_byte(a), src + ts_node_end_byte(a)))
		return &msr_off;
	if (ts_type_is(a, "identifier") && fn_clears_ee(f, src))
		return &msr_restore;
	return NULL;
}
