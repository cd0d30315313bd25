#!/usr/bin/env bash
# NR_CPUS arrays every use of which by the running CPU already has
# preemption off need no preemption fix: on fixtures/trees/keptcpu, a 2.4
# tree (no include/linux/percpu.h), they stay arrays by default, with a P008
# note (-v) naming what protects each use, and --modernize converts them.
# demo_tsc is static (interrupts off); demo_irqs is shared by three files
# (a handler, a lock with interrupts off, an extern in a header): the tree's
# verdict, the same whichever file or directory is scanned. demo_busy has a
# preemptible use and converts as before.
. "$(dirname "$0")/lib.sh"

tree=$SRC/fixtures/trees/keptcpu
if command -v gcc >/dev/null; then
	for f in arch/demo/kernel/irq.c drivers/demo/counter.c; do
		if out=$(gcc -std=gnu89 -fsyntax-only -Wall -Werror -Wno-unused-function -nostdinc \
			-I "$SRC/fixtures/include-2.4" -I "$tree/include" -DCONFIG_SMP "$tree/$f" 2>&1); then ok
		else bad "the 2.4 fixture $f compiles: $out"; fi
	done
fi
cp -r "$tree" kc
[ ! -e kc/include/linux/percpu.h ] && ok || bad "the fixture is a 2.4 tree without include/linux/percpu.h"

run scan kc; expect_rc 1 "the preemptible array is a finding"
expect_err '^preemptify: 2 findings in 3 files: 2 fixable' "only demo_busy's conversion and its preemptible use"
expect_out '^kc/drivers/demo/counter\.c:12:12: note: 2\.4 per-CPU array int demo_busy\[NR_CPUS\]: DEFINE_PER_CPU in 2\.6 \[P008, fixable\]$' \
	"an array with a preemptible use converts"
expect_out '^kc/drivers/demo/counter\.c:26:2: warning: .*\[P001, fixable\]$' "its preemptible use"
expect_no_out 'demo_tsc|demo_irqs' "the protected arrays are no finding"
run scan -f json kc
expect_out '"findings": 2, "fixable": 2' "JSON: the same counts"

run scan -v kc; expect_rc 1 "-v"
expect_out '^kc/arch/demo/kernel/irq\.c:19:27: note: protected: NR_CPUS array demo_tsc is left as it is: no preemption fix needed \[P008\]$' \
	"a static array: a protected note"
expect_out '^kc/arch/demo/kernel/irq\.c:19:27: note: why: every use of demo_tsc by the running CPU already has preemption off: in demo_sync_tsc\(\) at line 31 \(local_irq_save\(irq\) at line 30 is held on every path to here\); DEFINE_PER_CPU would change its storage, not its safety \(--modernize converts it\)$' \
	"why: the function, the line and what holds preemption off"
expect_out '^kc/arch/demo/kernel/irq\.c:16:15: note: why: every use of demo_irqs by the running CPU is already safe, in every file naming it \(kc/arch/demo/kernel/irq\.c, kc/drivers/demo/counter\.c, kc/include/linux/demo_irqstat\.h\); in this one it already has preemption off: in demo_timer_interrupt\(\) at line 23 \(demo_timer_interrupt\(\) runs in hard-IRQ context' \
	"a shared array: its definition's part names the handler"
expect_out '^kc/drivers/demo/counter\.c:19:2: note: why: every use of demo_irqs .* in this one it already has preemption off: in counter_seen\(\) at line 19 \(spin_lock_irqsave\(irq\) at line 18 is held' \
	"a shared array: a user's part names its lock"
expect_out '^kc/include/linux/demo_irqstat\.h:7:22: note: protected: NR_CPUS array demo_irqs, used across files, is left as it is' \
	"a shared array: the header's extern stays too"
whole=$(printf '%s\n' "$out" | grep '^kc/drivers/demo/counter\.c:')

# the tree's verdict whatever is scanned: the file alone, its directory
for p in kc/drivers/demo/counter.c kc/drivers; do
	run scan -v "$p"
	part=$(printf '%s\n' "$out" | grep '^kc/drivers/demo/counter\.c:')
	[ -n "$part" ] && [ "$part" = "$whole" ] && ok || bad "scan -v $p: counter.c's findings as the whole tree's"
done
run explain kc/drivers/demo/counter.c:19
expect_out 'NR_CPUS array demo_irqs, used across files, is left as it is' "explain: the array is left"
expect_out 'in counter_seen\(\) at line 19 \(spin_lock_irqsave\(irq\) at line 18' "explain: what protects the use"

run scan --modernize kc; expect_rc 1 "--modernize"
expect_err '^preemptify: 6 findings in 3 files: 6 fixable' "--modernize: every array converts"
expect_out '^kc/arch/demo/kernel/irq\.c:19:27: note: 2\.4 per-CPU array unsigned long long demo_tsc\[NR_CPUS\]: DEFINE_PER_CPU in 2\.6 \[P008, fixable\]$' \
	"--modernize: the static array"
expect_out '^kc/arch/demo/kernel/irq\.c:16:15: note: 2\.4 per-CPU array unsigned long demo_irqs\[NR_CPUS\], used across files: DEFINE_PER_CPU in 2\.6 \[P008, fixable\]$' \
	"--modernize: the shared array's definition"
expect_out '^kc/include/linux/demo_irqstat\.h:7:22: note: extern per-CPU array demo_irqs .*DECLARE_PER_CPU in 2\.6 \[P008, fixable\]$' \
	"--modernize: and its extern"

# an index that is get_cpu() holds preemption off itself (2.6.9 ppc xmon.c's
# xmon_trace[get_cpu()]), as does a local given get_cpu()
cat > getcpu.c <<'C'
#include <linux/smp.h>
static int trace[NR_CPUS];

void trace_on(void)
{
	trace[get_cpu()] = 1;
	put_cpu();
}

int trace_test(void)
{
	int cpu = get_cpu();
	int on = trace[cpu];

	put_cpu();
	return on;
}
C
run scan -v --no-tree getcpu.c; expect_rc 0 "x[get_cpu()]: the array is kept"
expect_out '^getcpu\.c:2:12: note: why: every use of trace by the running CPU already has preemption off: in trace_on\(\) at line 6 \(its index get_cpu\(\) turns preemption off\); in trace_test\(\) at line 13 \(get_cpu\(preempt\) at line 12' \
	"x[get_cpu()], x[cpu] after cpu = get_cpu(): the reasons"

if command -v spatch >/dev/null; then
	run diff kc; expect_rc 1 "diff: demo_busy"
	expect_out '^\+static DEFINE_PER_CPU\(int, demo_busy\);$' "diff: the preemptible array converts"
	expect_no_out '^\+.*[(]demo_(tsc|irqs)\b' "diff: the protected arrays are untouched"
	expect_no_out '^diff --git a/kc/(arch|include)/' "diff: nothing but the driver changes"
	run diff --modernize kc; expect_rc 1 "diff --modernize"
	expect_out '^\+static DEFINE_PER_CPU\(unsigned long long, demo_tsc\);$' "diff --modernize: the static array"
	expect_out '^\+	__get_cpu_var\(demo_tsc\) = 0;$' "diff --modernize: its protected use"
	expect_out '^\+DEFINE_PER_CPU\(unsigned long, demo_irqs\);$' "diff --modernize: the shared array"
	expect_out '^\+EXPORT_PER_CPU_SYMBOL\(demo_irqs\);$' "diff --modernize: its export"
	expect_out '^\+DECLARE_PER_CPU\(unsigned long, demo_irqs\);$' "diff --modernize: its extern"
else
	skip_part diffs "spatch is not installed"
fi
finish
