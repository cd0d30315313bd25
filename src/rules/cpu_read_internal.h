/*
 * Shared by check_cpu_read.c (P001-P003 at smp_processor_id()),
 * cpu_read_region.c (the get_cpu()/put_cpu() region of a read) and
 * cpu_macro.c (CPU reads inside macros); not for other files.
 */
#ifndef PREEMPTIFY_RULES_CPU_READ_INTERNAL_H
#define PREEMPTIFY_RULES_CPU_READ_INTERNAL_H

#include "rules/cpu_shared.h"

typedef VEC(TSNode) node_vec;

/* P003's checker (rules/rules.def, its hooks: cpu_read_hooks). */
void check_cpu_read(struct ctx *c, const struct fn *f, TSNode call, const char *kind);
/*
 * The #define of this file that identifier N names when its body reads
 * smp_processor_id() (not a statistics update: those only count), or NULL.
 * A function-like macro counts only where it is called.
 */
const struct macro_def *cpu_macro_of(struct ctx *c, TSNode n);
/* Does a #define body read the CPU where the macro is used? */
bool macro_reads_cpu(const char *body);

/*
 * The finding of this function whose get_cpu()/put_cpu() region already
 * covers CALL and the uses USES[0..n) of the number it reads, or NULL.
 */
const struct finding *covering_region(const struct ctx *c, const struct fn *f, TSNode call,
				       const TSNode *uses, size_t n);

/* Gives FD the edits of OWNER, whose region covers its read (and a note saying so). */
void share_region(struct finding *fd, const struct finding *owner);

/*
 * CALL inside the region an earlier read of the block opened (c->covered):
 * true, with FD (may be NULL) given that region's edits, and *NO why not
 * (owned) when that read is not fixed, else NULL.
 */
bool covered_read(struct ctx *c, TSNode call, struct finding *fd, char **no);

/*
 * get_cpu() at CALL and put_cpu() after its statement (and the plain reads
 * of the statements after it), or the edits of a region that covers it
 * already. FD may be NULL. Returns NULL or why not (owned).
 */
char *plan_direct_get_cpu(struct ctx *c, const struct fn *f, TSNode call, struct finding *fd);

/*
 * cpu_read_hoist.c: one get_cpu() into a new local before statement ST
 * (before LOOP's statement when LOOP is not null), CALL and every other
 * read from there to ST, or to GUARD_END (a guard's region, when not
 * null), replaced by the local, put_cpu() after it: for the reads
 * read_hoist_reason() names. FD may be NULL. NULL or why not (owned).
 */
char *plan_hoisted_read(struct ctx *c, const struct fn *f, TSNode call, TSNode st, TSNode guard_end,
			TSNode loop, struct finding *fd);

/* True if N (a use of the CPU number) is an argument of a print-like call, maybe through a lookup. */
bool only_printed(const struct ctx *c, TSNode n);

/* P003 for IDENT, the use of a macro that reads the CPU number (cpu_macro.c). */
void check_cpu_macro(struct ctx *c, const struct fn *f, TSNode ident);

#endif
