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
 * back on. ppc (32-bit) exception entries are read by their own forms
 * (ppc_entry_off() below). Architectures not listed are not read: their
 * mentions stay calls in any context.
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

/*
 * ppc (32-bit) exception entries hand a C handler over through
 * transfer_to_handler, which enters it with the MSR built in a register:
 * MSR_KERNEL, EE clear, unless the entry copies the interrupted context's
 * EE bit in (`rlwimi rX,rY,0,16,16`, COPY_EE). 2.4 writes it by hand:
 *
 *	li	r20,MSR_KERNEL
 *	bl	transfer_to_handler
 *	.long	SingleStepException
 *
 * 2.6 with macros of head*.S (and head_booke.h): EXC_XFER_STD and
 * EXC_XFER_LITE keep EE clear, the _EE ones copy it; EXCEPTION(n, label,
 * hdlr, xfer) by its xfer; EXC_XFER_TEMPLATE by its NOCOPY; STD_EXCEPTION,
 * STND_EXCEPTION, CRIT_EXCEPTION, CRITICAL_EXCEPTION and MCHECK_EXCEPTION
 * never copy it. Any other mention (a macro unknown, a copy of EE, an
 * exported label on the handler's word) leaves the name a call in any
 * context.
 */
#define PPC_ARGS_MAX 8

struct ppc_args {
	const char *a[PPC_ARGS_MAX];
	size_t n[PPC_ARGS_MAX];
	size_t count;
};

/* The arguments of the macro call whose '(' is at P (TEXT ends at END), blanks trimmed; false when unread. */
static bool ppc_macro_args(const char *p, const char *end, struct ppc_args *args)
{
	int depth = 0;
	const char *start = p + 1;
	args->count = 0;
	for (const char *q = p; q < end && q < p + 512; q++) {
		if (*q == '(' && depth++ == 0)
			continue;
		if (*q != ')' && (*q != ',' || depth != 1))
			continue;
		if (*q == ')' && --depth > 0)
			continue;
		if (args->count == PPC_ARGS_MAX)
			return false;
		const char *s = start, *e = q;
		while (s < e && (*s == ' ' || *s == '\t' || *s == '\\' || *s == '\n'))
			s++;
		while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\\' || e[-1] == '\n'))
			e--;
		args->a[args->count] = s, args->n[args->count++] = (size_t)(e - s);
		start = q + 1;
		if (*q == ')')
			return true;
	}
	return false;
}

static bool arg_is(const struct ppc_args *args, size_t k, const char *s)
{
	return k < args->count && strlen(s) == args->n[k] && memcmp(args->a[k], s, args->n[k]) == 0;
}

static bool word_is(const struct asm_line *l, const char *w)
{
	return strlen(w) == l->wn && memcmp(l->w, w, l->wn) == 0;
}

/* The line before the one starting at S (TEXT starts at TEXT), read into L; false at the start. */
static bool line_before(const char *text, const char **s, struct asm_line *l)
{
	if (*s <= text)
		return false;
	const char *e = *s - 1, *b = e;
	while (b > text && b[-1] != '\n')
		b--;
	*s = b;
	line_read(b, e, l);
	return true;
}

/*
 * From the line starting at LS, which hands over to the handler (`bl
 * transfer_to_handler`, FINISH_EXCEPTION), up to `li rN,MSR_KERNEL` with
 * nothing between that may set EE (rlwimi, ori, a move to the MSR), leave
 * the line (a branch, a label, a macro call, a directive or conditional):
 * that li line's start, or NULL.
 */
static const char *ppc_msr_kernel_above(const char *text, const char *ls)
{
	struct asm_line l;
	const char *s = ls;
	for (unsigned walked = 0; walked < 12 && line_before(text, &s, &l); walked++) {
		if (!l.wn && !l.label)
			continue;
		if (l.label || line_breaks_walk(&l) || l.w[0] == 'b' || word_is(&l, "rlwimi") || word_is(&l, "ori") ||
		    word_is(&l, "oris") || word_is(&l, "or") || word_is(&l, "mtmsr") || l.e[-1] == '\\')
			return NULL;
		if (word_is(&l, "li")) {
			char ops[64];
			size_t n = 0;
			for (const char *p = l.rest; p < l.e && *p != ';' && n + 1 < sizeof ops; p++)
				if (*p != ' ' && *p != '\t')
					ops[n++] = *p;
			ops[n] = '\0';
			const char *c = strchr(ops, ',');
			if (c && strcmp(c, ",MSR_KERNEL") == 0 && ops[0] == 'r')
				return s;
			if (c && strstr(c, "MSR"))
				return NULL; /* another MSR: not read */
		}
	}
	return NULL;
}

/* Is the line [LS, LE) `.long NAME` handed over by a `bl transfer_to_handler` above it that keeps EE clear? */
static const char *ppc_handler_word(const char *text, const char *ls, const char *le, const char *at, size_t n)
{
	struct asm_line l;
	line_read(ls, le, &l);
	if (!word_is(&l, ".long") || skip_blanks(l.rest, le) != at)
		return NULL;
	const char *after = skip_blanks(at + n, le);
	if (after < le && *after != ';')
		return NULL; /* .long a, b: a table, not the handler's word */
	const char *s = ls;
	while (line_before(text, &s, &l)) {
		if (!l.wn && !l.label)
			continue;
		if (l.label && !l.wn)
			continue; /* i0x700: a label on the word, named by data (intercept_table); an exported one stops at .globl */
		if (!word_is(&l, "bl"))
			return NULL;
		char ops[64];
		size_t k = 0;
		for (const char *p = l.rest; p < l.e && k + 1 < sizeof ops; p++)
			if (*p != ' ' && *p != '\t')
				ops[k++] = *p;
		ops[k] = '\0';
		if (strcmp(ops, "transfer_to_handler") != 0 && strcmp(ops, "transfer_to_handler_full") != 0)
			return NULL;
		return ppc_msr_kernel_above(text, s);
	}
	return NULL;
}

/* The xfer macros that leave EE clear (EXC_XFER_EE and EXC_XFER_EE_LITE copy it). */
static bool ppc_xfer_nocopy(const struct ppc_args *args, size_t k)
{
	return arg_is(args, k, "EXC_XFER_STD") || arg_is(args, k, "EXC_XFER_LITE");
}

/* Is the name at AT (N bytes) on the line [LS, LE) the handler of an entry macro that keeps EE clear? */
static const char *ppc_macro_entry(const char *text, size_t len, const char *ls, const char *le, const char *at,
				   size_t n)
{
	struct asm_line l, prev;
	line_read(ls, le, &l);
	const char *paren = skip_blanks(l.rest, le), *s = ls;
	if (!l.wn || paren >= le || *paren != '(' || at < paren)
		return NULL;
	if (line_before(text, &s, &prev) && prev.e > prev.s && prev.e[-1] == '\\')
		return NULL; /* within a macro's definition */
	struct ppc_args args;
	if (!ppc_macro_args(paren, text + len, &args))
		return NULL;
	size_t k = 0;
	while (k < args.count && (args.a[k] != at || args.n[k] != n))
		k++;
	if (k == args.count)
		return NULL;
	static const char *const nocopy[] = {"STD_EXCEPTION", "STND_EXCEPTION", "CRIT_EXCEPTION", "CRITICAL_EXCEPTION",
					     "MCHECK_EXCEPTION"};
	for (size_t j = 0; j < ARRAY_SIZE(nocopy); j++)
		if (word_is(&l, nocopy[j]))
			return k == 2 && args.count == 3 ? ls : NULL;
	if (word_is(&l, "EXC_XFER_STD") || word_is(&l, "EXC_XFER_LITE"))
		return k == 1 && args.count == 2 ? ls : NULL;
	if (word_is(&l, "EXCEPTION"))
		return k == 2 && args.count == 4 && ppc_xfer_nocopy(&args, 3) ? ls : NULL;
	if (word_is(&l, "EXC_XFER_TEMPLATE")) {
		bool nocopy_arg = false, copy_arg = false;
		for (size_t j = 0; j < args.count; j++)
			nocopy_arg |= arg_is(&args, j, "NOCOPY"), copy_arg |= !arg_is(&args, j, "NOCOPY") &&
									   memmem(args.a[j], args.n[j], "COPY", 4);
		return k <= 1 && args.count == 6 && nocopy_arg && !copy_arg ? ls : NULL;
	}
	if (word_is(&l, "FINISH_EXCEPTION") && k + 1 == args.count)
		return ppc_msr_kernel_above(text, ls);
	return NULL;
}

/* The ppc mention at AT (N bytes) on [LS, LE): the start of the line keeping EE clear for it, or NULL. */
static const char *ppc_entry_off(const char *text, size_t len, const char *ls, const char *le, const char *at,
				 size_t n)
{
	const char *off = ppc_macro_entry(text, len, ls, le, at, n);
	return off ? off : ppc_handler_word(text, ls, le, at, n);
}

char *asm_irqs_off_call(const char *path, const char *text, size_t len, const char *name, unsigned *line)
{
	const struct asm_irq_arch *a = path_arch(path);
	const char *an = NULL;
	bool ppc = arch_name(path, &an) == 3 && memcmp(an, "ppc", 3) == 0;
	if (!a && !ppc)
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
		unsigned off = 0;
		if (ppc) {
			const char *ol = ppc_entry_off(text, len, ls, le, p, n);
			for (const char *c = text; ol && c <= ol; c++)
				off += c == ol || *c == '\n';
		} else {
			off = call_irqs_off(a, text, len, ls, le, p);
		}
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
			if (ppc)
				why = xasprintf("called from assembly with interrupts off: `%.*s` (line %u) is a ppc "
						"exception entry whose MSR (line %u) keeps MSR_EE clear: the interrupted "
						"context's EE bit is not copied in", (int)(we - w), w, cl, off);
			else
				why = xasprintf("called from assembly with interrupts off: `%.*s` (line %u) comes after "
						"the instruction that turns them off (line %u), with nothing on the way "
						"that turns them on", (int)(we - w), w, cl, off);
		}
		if ((size_t)(end - p) <= n)
			break;
	}
	return why;
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
