/*
 * Calls from assembly made with interrupts off. An exception or interrupt
 * entry of an architecture turns interrupts off (or keeps them off) before
 * it hands over to C, and says so in its own instructions:
 *
 *	DISABLE_INTS                    ppc64 head.S, do_hash_page
 *	bl	.hash_page
 *
 *	wrpr	%g0, 15, %pil            sparc64 entry.S: every level masked
 *	ba,pt	%xcc, etrap_irq
 *	 rd	%pc, %g7
 *	call	cheetah_deferred_handler
 *
 *	CLI                             mips ip27-irq-glue.S
 *	...
 *	bnez	t0, ip3
 *	...
 * ip3:	j	ip27_do_irq_mask1
 *
 * A mention of a C function in assembly is such a call when it is an
 * instruction's operand and the lines above it, back to the instruction
 * that turns interrupts off, hold nothing that turns them on again
 * (sti, ENABLE_INTS, another write of %pil or of the status register),
 * no preprocessor conditional, no macro call, no section change, and no
 * label that code outside those lines jumps to. Assembly routines the
 * lines branch through on the way (the entry's register saving:
 * sparc64's etrap_irq, which keeps %pil) are taken not to turn interrupts
 * back on. Architectures not listed are not read: their mentions stay
 * calls in any context.
 */
#define _GNU_SOURCE /* memmem */
#include "analysis/tree_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/source.h"
#include "util/util.h"

/* An instruction: its first word and, if set, its operands with the blanks taken out (whole, or within the line: WITHIN). */
struct asm_insn {
	const char *word;
	const char *ops;
	bool within;
};

struct asm_irq_arch {
	const char *arch;
	struct asm_insn off[2];
	struct asm_insn on[6];
	const char *calls[6]; /* the calls of the architecture: a routine called on the way may turn them on */
	bool delay_slot;      /* the instruction after a call runs before the routine called */
};

static const struct asm_irq_arch irq_archs[] = {
	/* DISABLE_INTS: soft-disable on iSeries, nothing elsewhere (the exception left MSR_EE clear) */
	{"ppc64", {{"DISABLE_INTS", NULL, false}}, {{"ENABLE_INTS", NULL, false}, {"mtmsrd", NULL, false},
						     {"mtmsr", NULL, false}},
	 {"bl", "bla", "bctrl", "blrl"}, false},
	/* %pil 15 masks every interrupt level; etrap_irq keeps it */
	{"sparc64", {{"wrpr", "%g0,15,%pil", false}}, {{"wrpr", "%pil", true}}, {"call", "jmpl"}, true},
	/* include/asm-mips/stackframe.h: CLI clears IE; STI sets it; KMODE keeps the previous one */
#define MIPS_IRQS {{"CLI", NULL, false}}, {{"STI", NULL, false}, {"KMODE", NULL, false}, {"mtc0", "CP0_STATUS", true}}, \
		  {"jal", "jalr", "bal", "bgezal", "bltzal"}, true
	{"mips", MIPS_IRQS},
	{"mips64", MIPS_IRQS}, /* 2.4 */
	{"i386", {{"cli", NULL, false}}, {{"sti", NULL, false}, {"popf", NULL, false}, {"popfl", NULL, false},
					  {"iret", NULL, false}},
	 {"call", "lcall"}, false},
	{"x86_64", {{"cli", NULL, false}}, {{"sti", NULL, false}, {"popf", NULL, false}, {"popfq", NULL, false},
					    {"iretq", NULL, false}},
	 {"call", "lcall"}, false},
};
#undef MIPS_IRQS

#define ASM_WALK_MAX 40 /* lines read above a call */

/* The architecture directory PATH is in (arch/A/ or include/asm-A/), or NULL. */
static const struct asm_irq_arch *path_arch(const char *path)
{
	const struct asm_irq_arch *found = NULL;
	for (const char *p = path; *p; p++) {
		if (p != path && p[-1] != '/')
			continue;
		size_t skip = strncmp(p, "arch/", 5) == 0 ? 5 : strncmp(p, "include/asm-", 12) == 0 ? 12 : 0;
		const char *a = p + skip, *e = skip ? strchr(a, '/') : NULL;
		for (size_t k = 0; e && k < ARRAY_SIZE(irq_archs); k++)
			if (strlen(irq_archs[k].arch) == (size_t)(e - a) && memcmp(irq_archs[k].arch, a, (size_t)(e - a)) == 0)
				found = &irq_archs[k];
	}
	return found;
}

/* One line of assembly: where its label ends (or its start), its first word, the rest. */
struct asm_line {
	const char *s, *e;       /* the line, without its newline */
	const char *label;       /* `name:` at its start, or NULL */
	size_t label_len;
	const char *w;           /* the first word after the label */
	size_t wn;
	const char *rest;        /* after the word */
};

static const char *skip_blanks(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static void line_read(const char *s, const char *e, struct asm_line *l)
{
	memset(l, 0, sizeof *l);
	l->s = s, l->e = e;
	const char *p = skip_blanks(s, e), *q = p;
	while (q < e && (is_ident_char(*q) || *q == '.' || *q == '$'))
		q++;
	if (q > p && q < e && *q == ':') {
		l->label = p, l->label_len = (size_t)(q - p);
		p = skip_blanks(q + 1, e);
		q = p;
		while (q < e && (is_ident_char(*q) || *q == '.' || *q == '$' || *q == ','))
			q++;
	} else if (q == p) {
		while (q < e && *q != ' ' && *q != '\t')
			q++;
	}
	l->w = p, l->wn = (size_t)(q - p);
	l->rest = q;
}

/*
 * Does L's instruction match I: its word, and its operands without blanks,
 * up to a comment (`#`, sparc's `!`) or the next instruction (`;`), the
 * same; or, for a WITHIN form, anywhere in the rest of the line holding
 * them (a write of %pil with a comment after it still turns them on).
 */
static bool insn_is(const struct asm_line *l, const struct asm_insn *i)
{
	if (!i->word || strlen(i->word) != l->wn || memcmp(l->w, i->word, l->wn) != 0)
		return false;
	if (!i->ops)
		return true;
	char ops[128];
	size_t n = 0;
	for (const char *p = l->rest; p < l->e && n + 1 < sizeof ops; p++) {
		if (!i->within && (*p == '#' || *p == ';' || *p == '!'))
			break;
		if (*p != ' ' && *p != '\t')
			ops[n++] = *p;
	}
	ops[n] = '\0';
	return i->within ? strstr(ops, i->ops) != NULL : strcmp(ops, i->ops) == 0;
}

/* Is L's first word a directive, macro call or conditional that leaves the straight line? */
static bool line_breaks_walk(const struct asm_line *l)
{
	static const char *const directives[] = {".section", ".text", ".data", ".previous", ".org", ".macro", ".endm",
						 ".globl", ".global", ".type"};
	if (l->wn && l->w[0] == '#')
		return true; /* #if, #else, #endif: an arm may be compiled out */
	if (l->wn && l->rest < l->e && *skip_blanks(l->rest, l->e) == '(')
		return true; /* a macro call: _GLOBAL(x), ENTRY(x), END_FTR_SECTION(...) */
	if (l->wn && l->w[0] == '.' && l->wn > 1)
		for (size_t k = 0; k < ARRAY_SIZE(directives); k++)
			if (strlen(directives[k]) == l->wn && memcmp(directives[k], l->w, l->wn) == 0)
				return true;
	return l->wn == 1 && l->w[0] == '.'; /* `. = 0x300` */
}

/* Is every whole-word mention of label LAB (N bytes) in TEXT within [FROM, TO)? */
static bool label_local(const char *text, size_t len, const char *lab, size_t n, const char *from, const char *to)
{
	const char *end = text + len;
	if (n == 0 || (lab[0] >= '0' && lab[0] <= '9'))
		return false; /* 1: with 1b and 1f: not followed */
	for (const char *p = memmem(text, len, lab, n); p; p = memmem(p + 1, (size_t)(end - p - 1), lab, n)) {
		if ((p > text && is_ident_char(p[-1])) || (p + n < end && is_ident_char(p[n])))
			continue; /* `b .lab` (ppc64's dot names) is a jump to it too */
		if (p < from || p >= to)
			return false;
		if ((size_t)(end - p) <= 1)
			break;
	}
	return true;
}

/* Does the instruction after the line ending at LE (its delay slot; the text ends at END) turn interrupts on? */
static bool delay_slot_turns_on(const struct asm_irq_arch *a, const char *le, const char *end)
{
	for (const char *s = le; s < end;) {
		s++;
		const char *e = memchr(s, '\n', (size_t)(end - s));
		e = e ? e : end;
		struct asm_line l;
		line_read(s, e, &l);
		if (l.wn) {
			for (size_t k = 0; k < ARRAY_SIZE(a->on); k++)
				if (insn_is(&l, &a->on[k]))
					return true;
			return line_breaks_walk(&l);
		}
		s = e;
	}
	return false;
}

/*
 * The call of the name at AT on the line [LS, LE) of TEXT, made with interrupts off
 * by A's instructions: the line number of the instruction that turned
 * them off, or 0.
 */
static unsigned call_irqs_off(const struct asm_irq_arch *a, const char *text, size_t len, const char *ls,
			      const char *le, const char *at)
{
	struct asm_line l;
	line_read(ls, le, &l);
	if (!l.wn || line_breaks_walk(&l) || l.w[0] == '.' || at < l.rest)
		return 0; /* not an instruction's operand: a table entry, a directive, a macro's argument */
	if (a->delay_slot && delay_slot_turns_on(a, le, text + len))
		return 0;
	const char *labels[ASM_WALK_MAX + 1];
	size_t lens[ASM_WALK_MAX + 1], nl = 0;
	if (l.label)
		labels[nl] = l.label, lens[nl++] = l.label_len;
	const char *s = ls;
	for (unsigned walked = 0; s > text && walked < ASM_WALK_MAX; walked++) {
		const char *e = s - 1;
		s = e;
		while (s > text && s[-1] != '\n')
			s--;
		line_read(s, e, &l);
		if (!l.wn && !l.label)
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(a->off); k++)
			if (insn_is(&l, &a->off[k])) {
				for (size_t j = 0; j < nl; j++)
					if (!label_local(text, len, labels[j], lens[j], e, le))
						return 0; /* code outside the lines jumps in */
				unsigned line = 1;
				for (const char *c = text; c < s; c++)
					line += *c == '\n';
				return line;
			}
		for (size_t k = 0; k < ARRAY_SIZE(a->on); k++)
			if (insn_is(&l, &a->on[k]))
				return 0;
		if (line_breaks_walk(&l))
			return 0;
		for (size_t k = 0; k < ARRAY_SIZE(a->calls) && a->calls[k]; k++)
			if (strlen(a->calls[k]) == l.wn && memcmp(a->calls[k], l.w, l.wn) == 0)
				return 0; /* another routine called on the way (schedule() turns interrupts on) */
		if (l.label)
			labels[nl] = l.label, lens[nl++] = l.label_len;
	}
	return 0;
}

char *asm_irqs_off_call(const char *path, const char *text, size_t len, const char *name, unsigned *line)
{
	const struct asm_irq_arch *a = path_arch(path);
	if (!a)
		return NULL;
	size_t n = strlen(name);
	const char *end = text + len;
	char *why = NULL;
	for (const char *p = memmem(text, len, name, n); p; p = memmem(p + n, (size_t)(end - p - n), name, n)) {
		if ((p > text && is_ident_char(p[-1])) || (p + n < end && is_ident_char(p[n])))
			continue;
		const char *ls = p, *le = memchr(p, '\n', (size_t)(end - p));
		while (ls > text && ls[-1] != '\n')
			ls--;
		le = le ? le : end;
		unsigned off = call_irqs_off(a, text, len, ls, le, p);
		if (!off) {
			free(why);
			return NULL;
		}
		if (!why) {
			unsigned cl = 1;
			for (const char *c = text; c < ls; c++)
				cl += *c == '\n';
			const char *w = skip_blanks(ls, le), *we = le;
			while (we > w && (we[-1] == ' ' || we[-1] == '\t'))
				we--; /* a comment blanked at the end */
			*line = cl;
			why = xasprintf("called from assembly with interrupts off: `%.*s` (line %u) comes after the "
					"instruction that turns them off (line %u), with nothing on the way that turns "
					"them on", (int)(we - w), w, cl, off);
		}
		if ((size_t)(end - p) <= n)
			break;
	}
	return why;
}

/* The architecture directory's name in PATH (arch/X/, include/asm-X/): its start and length, or 0. */
static size_t arch_name(const char *path, const char **at)
{
	size_t n = 0;
	for (const char *p = path; *p; p++) {
		if (p != path && p[-1] != '/')
			continue;
		size_t skip = strncmp(p, "arch/", 5) == 0 ? 5 : strncmp(p, "include/asm-", 12) == 0 ? 12 : 0;
		const char *e = skip ? strchr(p + skip, '/') : NULL;
		if (e)
			*at = p + skip, n = (size_t)(e - p - skip); /* the last one: the tree may lie below a dir named arch */
	}
	return n;
}

bool asm_same_arch(const char *a, const char *b)
{
	const char *x = NULL, *y = NULL;
	size_t nx = arch_name(a, &x), ny = arch_name(b, &y);
	return nx && nx == ny && memcmp(x, y, nx) == 0;
}

/* Does TEXT hold FORM (a printf format of one %s) with NAME, as whole words? */
static bool has_form(const char *text, size_t len, const char *form, const char *name)
{
	char *f = xasprintf(form, name);
	size_t fn = strlen(f);
	const char *end = text + len;
	bool found = false;
	for (const char *p = memmem(text, len, f, fn); p && !found; p = memmem(p + 1, (size_t)(end - p - 1), f, fn))
		found = (p == text || !is_ident_char(p[-1])) && (p + fn == end || !is_ident_char(p[fn]));
	free(f);
	return found;
}

bool asm_defines_routine(const char *text, size_t len, const char *name)
{
	if (has_form(text, len, "_GLOBAL(%s)", name) || has_form(text, len, "ENTRY(%s)", name))
		return true;
	/* a label of the file made global (a .globl alone may name another file's symbol) */
	bool global = has_form(text, len, ".globl %s", name) || has_form(text, len, ".globl\t%s", name) ||
		      has_form(text, len, ".global %s", name) || has_form(text, len, ".global\t%s", name);
	if (!global)
		return false;
	char *label = xasprintf("\n%s:", name);
	bool at = memmem(text, len, label, strlen(label)) != NULL;
	free(label);
	return at;
}
