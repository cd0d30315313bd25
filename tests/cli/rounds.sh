#!/usr/bin/env bash
# One spatch run per step, not per group: the replacements of one fix kind
# whose rules differ (a declaration, __get_cpu_var, per_cpu) share a run
# when they lie in different top-level definitions, and keep runs of their
# own when one function holds two of them (spatch re-parses a function a
# rule changed). The rewrite is the same either way. And a brace spatch
# opens after a line ending in a `//` comment goes before the comment, as a
# hand writes it (checkpatch: OPEN_BRACE).
. "$(dirname "$0")/lib.sh"
command -v spatch >/dev/null || skip_all "spatch is not installed; this test checks rewrite rounds"

mkdir three one
cat >three/counts.c <<'C'
#include <linux/spinlock.h>
#include <linux/smp.h>

static spinlock_t count_lock = SPIN_LOCK_UNLOCKED;
static int hits[NR_CPUS];

void count_hit(void)
{
	spin_lock(&count_lock);
	hits[smp_processor_id()]++;
	spin_unlock(&count_lock);
}

int count_total(void)
{
	int cpu, sum = 0;

	for (cpu = 0; cpu < NR_CPUS; cpu++)
		sum += hits[cpu];
	return sum;
}
C
cat >one/reset.c <<'C'
#include <linux/spinlock.h>
#include <linux/smp.h>

static spinlock_t count_lock = SPIN_LOCK_UNLOCKED;
static int hits[NR_CPUS];

void count_reset(void)
{
	int cpu;

	spin_lock(&count_lock);
	hits[smp_processor_id()] = -1;
	for (cpu = 0; cpu < NR_CPUS; cpu++)
		hits[cpu] = 0;
	spin_unlock(&count_lock);
}
C

# spatch processes are counted: nothing may come from the steps cache. Every
# use of hits by the running CPU holds count_lock, so only --modernize
# converts it: the groups below are that conversion's.
run diff -v --no-cache --no-batch --modernize three; expect_rc 1 "three definitions: changes"
expect_out '^\+static DEFINE_PER_CPU\(int, hits\);$' "three definitions: the declaration"
expect_out '^\+	__get_cpu_var\(hits\)\+\+;$' "three definitions: the use under the lock"
expect_out '^\+		sum \+= per_cpu\(hits, cpu\);$' "three definitions: the loop over CPUs"
expect_err 'preemptify: 1 spatch process ' "three groups in three definitions: one run"

run diff -v --no-cache --no-batch --modernize one; expect_rc 1 "one function: changes"
sliced=$out
expect_out '^\+	__get_cpu_var\(hits\) = -1;$' "one function: the use under the lock"
expect_out '^\+		per_cpu\(hits, cpu\) = 0;$' "one function: the loop over CPUs"
expect_err 'preemptify: 2 spatch processes ' "two groups in one function: a run each"
run diff --no-slice --modernize one
if [ "$out" = "$sliced" ]; then ok; else bad "one process per group on whole files gives the same diff"; fi

mkdir brace
cat >brace/kmap.c <<'C'
#include <linux/smp.h>

extern int slots[];

void unmap_slot(int type, unsigned long vaddr)
{
	int idx = type + 4 * smp_processor_id();

	if (vaddr < 4096) // FIXME
		return;
	slots[idx] = 0;
}
C
run diff brace; expect_rc 1 "brace: changes"
expect_out '^\+	if \(vaddr < 4096\) \{ // FIXME$' "the new brace goes before the // comment"
expect_no_out '^\+	\{$' "no brace on a line of its own"
expect_err '1 site to fix' "the validator accepts the comment after the brace"
finish
