/*
 * Commit messages in the kernel's style, built from what the rewrite did.
 *
 *   net: foo: use cond_resched()
 *
 *   Make this code safe under the 2.6 preemptible kernel.
 *
 *   Sites changed:
 *
 *   - P004 resched, line 120: <finding message>. <first sentence of the
 *     evidence>
 *
 *   Sites left unchanged for manual review:
 *
 *   - P003 cpu-id, line 88: <finding message>. Not changed: <reason>
 *
 *   Signed-off-by: A U Thor <author@example.com>
 *
 * The subject prefix comes from the path (message_prefix()); the summary
 * names the kinds of fix applied (message_summary()). The body is wrapped
 * at 72 columns. `series` reads the "- Pnnn name, line N:" bullets back to
 * count sites per rule, so their shape is part of the contract.
 */
#ifndef PREEMPTIFY_MESSAGE_H
#define PREEMPTIFY_MESSAGE_H

#include "fix/rewrite.h"

/* The subject line is at most this long (prefix included). */
#define MESSAGE_SUBJECT_MAX 75
/* The body is wrapped at this column. */
#define MESSAGE_BODY_WIDTH 72

/* The heading lines series parses back (message_count_sites()). */
#define MESSAGE_FIXED_HEADING "Sites changed:"
#define MESSAGE_REFUSED_HEADING "Sites left unchanged for manual review:"

struct message_options {
	/*
	 * Replaces the path-derived prefix, e.g. "net: e100" or "net: e100:";
	 * a trailing colon is optional. NULL: derive it. "" means no prefix.
	 */
	const char *prefix;
	/* "Name <email>" for a Signed-off-by trailer, or NULL for none. */
	const char *signoff;
};
#define MESSAGE_OPTIONS_INIT {NULL, NULL}

/*
 * The subject prefix for a repository-relative PATH, without the trailing
 * ": ". The rule:
 *   1. split the path into its directories and the file name without its
 *      extension (drivers/usb/serial/x.c -> drivers usb serial x);
 *   2. drop a leading "drivers", "fs" or "arch" directory: those only group
 *      subsystems, the subsystem is the next one;
 *   3. keep at most two directories (the subsystem and its first
 *      subdirectory) followed by the file name;
 *   4. drop the file name when it repeats the last kept directory
 *      (fs/jbd/jbd.c -> "jbd").
 * Joined with ": ": drivers/net/foo.c -> "net: foo", drivers/char/lp.c ->
 * "char: lp", drivers/usb/serial/x.c -> "usb: serial: x", fs/jbd/commit.c
 * -> "jbd: commit", kernel/sched.c -> "kernel: sched". Caller frees.
 */
char *message_prefix(const char *path);

/*
 * The prefix shared by several paths: the longest common leading run of
 * their message_prefix() components (drivers/net/a.c and drivers/net/b.c ->
 * "net"); "" when they share nothing. Caller frees.
 */
char *message_common_prefix(const char *const *paths, size_t n);

/*
 * What changed, from the fix kinds of the fixed findings of CHANGES[0..n):
 * one kind gives its own phrase ("use cond_resched()"); several give a
 * combined phrase ("make per-CPU statistics preempt-safe, use cond_resched()
 * and yield()"). BUDGET is the room left on the subject line; what does not
 * fit falls back to a shorter form ("make preempt-safe: per-CPU data,
 * cond_resched() and yield()", then "make preempt-safe (3 kinds of fix)").
 * Caller frees.
 */
char *message_summary(const struct file_change *const *changes, size_t n, size_t budget);

/*
 * The whole commit message for the changes of one commit. PATHS[i] is the
 * repository-relative path of CHANGES[i] (used for the prefix and, with
 * several files, for per-file headings). The result ends in one newline.
 * Caller frees.
 */
char *message_build(const struct file_change *const *changes, const char *const *paths,
		    size_t n, const struct message_options *opts);

/* Site counts read back from commit message bodies. */
struct message_sites {
	size_t fixed[RULE_COUNT];
	size_t refused[RULE_COUNT];
};

/* Adds the bullets of MSG (a message made by message_build()) to OUT. */
void message_count_sites(const char *msg, struct message_sites *out);

#endif
