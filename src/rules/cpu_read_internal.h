/*
 * Shared by check_cpu_read.c (P001-P003 at smp_processor_id()) and
 * cpu_read_region.c (the get_cpu()/put_cpu() region of a read); not for
 * other files.
 */
#ifndef PREEMPTIFY_RULES_CPU_READ_INTERNAL_H
#define PREEMPTIFY_RULES_CPU_READ_INTERNAL_H

#include "rules/cpu_shared.h"

typedef VEC(TSNode) node_vec;

/*
 * The finding of this function whose get_cpu()/put_cpu() region already
 * covers CALL and the uses USES[0..n) of the number it reads, or NULL.
 */
const struct finding *covering_region(const struct ctx *c, const struct fn *f, TSNode call,
				       const TSNode *uses, size_t n);

/* Gives FD the edits of OWNER, whose region covers its read (and a note saying so). */
void share_region(struct finding *fd, const struct finding *owner);

/*
 * get_cpu() at CALL and put_cpu() after its statement (and the plain reads
 * of the statements after it), or the edits of a region that covers it
 * already. FD may be NULL. Returns NULL or why not (owned).
 */
char *plan_direct_get_cpu(struct ctx *c, const struct fn *f, TSNode call, struct finding *fd);

#endif
