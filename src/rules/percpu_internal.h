/*
 * What the three files of the per-CPU array rule share: percpu_array.c
 * (discovery), percpu_verdict.c (the decision and the P008 finding) and
 * percpu_plan.c (the edits). Not for other rules: theirs is the per-CPU
 * arrays section of rules/cpu_shared.h.
 */
#ifndef PREEMPTIFY_RULES_PERCPU_INTERNAL_H
#define PREEMPTIFY_RULES_PERCPU_INTERNAL_H

#include "rules/cpu_shared.h"

/* ---- discovery (percpu_array.c) ---- */

/* Is F one of the per-CPU fields of the struct of arrays PA? */
bool percpu_soa_field(const struct percpu_array *pa, const char *f);
/* The field expression `x.f` SUB (x.f[i]) subscripts, when PA is a struct of arrays; else a null node. */
TSNode percpu_soa_field_expr(const struct ctx *c, const struct percpu_array *pa, TSNode sub);
/* Into PA: the file's declaration of a struct of arrays' instance, and its struct's definition. */
void percpu_soa_decls_find(struct ctx *c, struct percpu_array *pa);
/* Does subscript SUB index by the running CPU (smp_processor_id(), get_cpu(), a local given one)? */
bool percpu_indexes_this_cpu(const struct ctx *c, TSNode sub);
/* Finds the file's NR_CPUS arrays, their uses and whether define-per-cpu applies (P008's begin_file). */
void percpu_arrays_find(struct ctx *c);
/* Frees them (P008's release). */
void percpu_arrays_free(struct ctx *c);

/* ---- the decision (percpu_verdict.c) ---- */

/* Is initialiser V all zero ({0}, {{0}}, { NULL, }, ...)? */
bool percpu_all_zero(const struct ctx *c, TSNode v);
/* Why declaration N of PA cannot become DEFINE_PER_CPU whatever its storage class (owned), or NULL. */
char *percpu_declaration_why_not(const struct ctx *c, TSNode n, const struct percpu_array *pa,
				 uint32_t ndecl, TSNode init);
/* A declaration N of PA that is not static: the tree's verdict on it, and its record for the tree. */
void percpu_global_storage(struct ctx *c, struct percpu_array *pa, TSNode n);
/* PA stays as it is, for WHY (consumed). */
void percpu_refuse(struct percpu_array *pa, char *why);
/* Refuses PA when an unprotected this-CPU site of it cannot be fixed. */
void percpu_check_sites_fixable(struct ctx *c, struct percpu_array *pa);
/* Collects PA's slots in #define bodies, refusing PA when a macro cannot convert. */
void percpu_check_macro_uses(struct ctx *c, struct percpu_array *pa);
/* Refuses the arrays an earlier check of this file kept as they are. */
void percpu_apply_kept(struct ctx *c);
/* Reports the structs of arrays the tree leaves as they are, at their definitions. */
void percpu_soa_refused(struct ctx *c);
/* Is the this-CPU use SUB (index IDX) in G safe as it is: preemption off, or bring-up code? */
bool percpu_this_cpu_use_safe(struct ctx *c, const struct fn *g, TSNode sub, TSNode idx);

#endif
