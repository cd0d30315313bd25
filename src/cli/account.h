/*
 * The porter's account of a run: what was fixed (or will be), and what is
 * left for hand work, in words rather than rule codes. Every command that
 * scans or rewrites ends with it (scan, diff, apply, commit); the commit
 * run's git note and the series' cover letter carry the same list.
 *
 *   41 sites fixed in 22 files; 38 findings need you: 33 calls that may
 *   sleep with preemption off, 4 unbalanced locks, 1 per-CPU array to
 *   convert by hand
 *
 * A finding is hand work when no fix was planned for it, or its fix was
 * refused, or its file failed; a finding its checker made a note below its
 * rule's usual level (a CPU number only printed, a statistics counter) is
 * left as 2.6 left it and counted apart.
 */
#ifndef PREEMPTIFY_ACCOUNT_H
#define PREEMPTIFY_ACCOUNT_H

#include <stdio.h>

#include "fix/rewrite.h"

/* One finding left for the porter. */
struct account_item {
	const struct finding *f;
	const char *why; /* why its fix was not made (a refusal, a file's error), or NULL: no fix planned */
};

struct account {
	size_t files;                 /* files changed (or, before a rewrite, files with a fixable site) */
	size_t fixed;                 /* sites fixed (or fixable) */
	size_t failed;                /* fixable sites whose fix was not made */
	size_t left;                  /* findings that need hand work, FAILED included */
	size_t left_rule[RULE_COUNT]; /* of them, those with no fix planned, per rule */
	size_t notes;                 /* notes that need no change */
	size_t unanalysed;            /* files the prefilter skipped (no site possible) */
	VEC(struct account_item) items; /* the LEFT findings, in scan order */
	/*
	 * The files a DEFINE_PER_CPU conversion made here also changes that
	 * this run did not (a file asked alone: the array's definition, its
	 * header): the tree builds only once they change together.
	 */
	struct strvec elsewhere;
};
#define ACCOUNT_INIT {0, 0, 0, 0, {0}, 0, 0, VEC_INIT, STRVEC_INIT}

/*
 * The account of SR after the rewrite RR (NULL: before any rewrite, what
 * diff would do from the plans SR proved). The files of SKIPPED (paths as
 * walked; may be NULL) were not written: their fixes count as left, for
 * SKIP_WHY. SR and RR must outlive OUT.
 */
void account_build(const struct scan_result *sr, const struct rewrite_result *rr, const struct strvec *skipped,
		   const char *skip_why, struct account *out);

void account_release(struct account *a);

/*
 * The counts in one sentence, without a full stop: "41 sites fixed in 22
 * files; 38 findings need you: 33 calls that may sleep with preemption off,
 * ..." DONE is the verb for the fixes ("fixed", "to fix"). Appended to OUT.
 */
void account_sentence(const struct account *a, const char *done, struct buf *out);

/*
 * The hand work, one line per finding, as a compiler writes a note, so an
 * editor's quickfix list walks them: "FILE:LINE:COL: note: left for you:
 * MESSAGE [P006]", with "; not fixed: WHY" when a fix was refused.
 * Appended to OUT.
 */
void account_list(const struct account *a, struct buf *out);

/*
 * Prints the end of a rewriting command's run on stderr: the list (unless
 * QUIET) and "preemptify: " + the sentence (always: --quiet keeps the counts).
 */
void account_print(const struct account *a, const char *done, bool quiet);

#endif
