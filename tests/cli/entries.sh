#!/usr/bin/env bash
# Contexts read from how code is entered, and a tree that is already 2.6:
# an interrupt entry 2.6's BUILD_INTERRUPT(x, vector) builds (entry.S calls
# smp_x(); 2.6.9 voyager's CPIs) or an assembler macro that returns
# through ret_from_intr (x86_64's `apicinterrupt VECTOR,smp_x`); ppc's interrupts turned off by hand (xmon's set_msr(msr & ~MSR_EE) ...
# set_msr(msr)); a static helper some callers reach with preemption off and
# the others from bring-up; a DEFINE_PER_CPU with an attribute and an
# initialiser, which must not hide the file from the grammar; and an
# NR_CPUS array every use of which is protected, in a 2.4 and a 2.6 tree:
# left alone unless --modernize; a task pinned through a mask
# variable (2.6.9 p4-clockmod's `m = cpumask_of_cpu(cpu);
# set_cpus_allowed(current, m);`).
. "$(dirname "$0")/lib.sh"

cat > msr.c <<'C'
#include <linux/smp.h>
#define MSR_EE 0x8000
extern unsigned long get_msr(void);
extern void set_msr(unsigned long);
void note(int cpu);

void debugger_enter(void)
{
	unsigned long msr = get_msr();

	set_msr(msr & ~MSR_EE);	/* disable interrupts */
	note(smp_processor_id());
	set_msr(msr);		/* restore interrupt enable */
	note(smp_processor_id());
}

void trace_on(void)
{
	unsigned long msr = get_msr();

	set_msr(msr | 0x400);
	note(smp_processor_id());
}

void stub_step(int step)
{
	unsigned long msr = get_msr();

	set_msr(msr & ~MSR_EE);
	note(step);
	if (step)
		return;	/* the exception's return restores the MSR */
	set_msr(msr);
	note(0);
}
C
run scan -v --no-tree msr.c; expect_rc 1 "set_msr: reads after the restore are findings"
expect_out '^msr\.c:12:7: note: protected: ' "set_msr(msr & ~MSR_EE): interrupts off"
expect_out '^msr\.c:12:7: note: why: set_msr\(irq\) at line 11 is held on every path to here' "the MSR write named"
expect_out '^msr\.c:14:7: warning: .*\[P003, fixable\]' "set_msr(msr) gives interrupts back"
expect_out '^msr\.c:22:7: warning: .*\[P003, fixable\]' "a write that leaves MSR_EE alone says nothing"
expect_no_out 'P007' "MSR_EE left clear for the exception's return: no P007"

cat > mixed.c <<'C'
#include <linux/smp.h>
#include <linux/spinlock.h>
static spinlock_t demo_lock = SPIN_LOCK_UNLOCKED;
void note(int cpu);

static void demo_unmask_local(int irq)
{
	note(smp_processor_id() + irq);
}

void start_secondary(void *unused)
{
	demo_unmask_local(3);
}

void demo_enable(int irq)
{
	unsigned long flags;

	spin_lock_irqsave(&demo_lock, flags);
	demo_unmask_local(irq);
	spin_unlock_irqrestore(&demo_lock, flags);
}
C
run scan -v --no-tree mixed.c; expect_rc 0 "bring-up and locked callers: nothing to fix"
expect_out 'demo_unmask_local\(\) is called only from start_secondary\(\) \(line 13\), which runs bound to the new CPU during bring-up, or with preemption off' \
	"bring-up or preemption off: the CPU stays"
sed -i '$a\
void demo_user(void)\
{\
	demo_unmask_local(1);\
}' mixed.c
run scan --no-tree mixed.c; expect_rc 1 "a preemptible caller too"
expect_out '^mixed\.c:8:7: warning: .*\[P003, fixable\]' "a preemptible caller too: a finding"

cat > pin.c <<'C'
#include <linux/sched.h>
#include <linux/smp.h>
void note(int cpu);

void demo_pinned(int cpu)
{
	cpumask_t old = current->cpus_allowed, one;

	one = cpumask_of_cpu(cpu);
	set_cpus_allowed(current, one);
	note(smp_processor_id());
	set_cpus_allowed(current, old);
}

void demo_widened(int cpu, cpumask_t wide)
{
	cpumask_t m = cpumask_of_cpu(cpu);

	if (cpu < 0)
		m = wide;
	set_cpus_allowed(current, m);
	note(smp_processor_id());
}
C
run scan -v --no-tree pin.c; expect_rc 1 "a mask variable: the widened one is a finding"
expect_out '^pin\.c:11:7: note: why: the task is pinned to one CPU by set_cpus_allowed\(current, \.\.\.\) at line 10' \
	"a variable holding cpumask_of_cpu(): pinned"
expect_out '^pin\.c:22:7: warning: .*\[P003, fixable\]' "a variable also set to a wider mask: not pinned"

cat > percpu_def.c <<'C'
#include <linux/percpu.h>
#include <linux/smp.h>
struct demo_state { int a, b; };
DEFINE_PER_CPU(struct demo_state, demo_state) ____cacheline_aligned = { 0, 1 };
void note(int cpu);

void demo_poke(void)
{
	note(smp_processor_id());
}
C
run scan --no-tree percpu_def.c; expect_rc 1 "DEFINE_PER_CPU with an initialiser: the file is read"
expect_no_out 'unparsed' "DEFINE_PER_CPU(...) attribute = { ... }: no unparsed code"
expect_out '^percpu_def\.c:9:7: warning: .*\[P003, fixable\]' "the function after it is analysed"

# a protected NR_CPUS array is left as it is in a 2.4 tree and in a 2.6 tree
# (include/linux/percpu.h) alike; --modernize converts it in both
mkdir -p t26/include/linux t26/arch/demo/kernel
printf 'VERSION = 2\nPATCHLEVEL = 6\n' > t26/Makefile
cat > t26/arch/demo/kernel/ipi.c <<'C'
#include <linux/smp.h>
static unsigned long ipi_count[NR_CPUS];

asmlinkage void smp_demo_flush_interrupt(void)
{
	ipi_count[smp_processor_id()]++;
}
C
mkdir -p t26/include/asm-demo
printf 'BUILD_INTERRUPT(demo_flush_interrupt, DEMO_FLUSH_VECTOR)\n' > t26/include/asm-demo/entry_arch.h
cp -r t26 t24
printf 'VERSION = 2\nPATCHLEVEL = 4\n' > t24/Makefile
touch t26/include/linux/percpu.h
for t in t24 t26; do
	run scan -v $t; expect_rc 0 "$t: the array is kept"
	expect_out "^$t/arch/demo/kernel/ipi\.c:6:2: note: why: smp_demo_flush_interrupt\(\) runs in hard-IRQ context: interrupt entry: BUILD_INTERRUPT\(demo_flush_interrupt, \.\.\.\) at $t/include/asm-demo/entry_arch\.h:1" \
		"$t: BUILD_INTERRUPT(x, ...): smp_x() in hard-IRQ context"
	expect_out "^$t/arch/demo/kernel/ipi\.c:2:22: note: why: every use of ipi_count by the running CPU already has preemption off: in smp_demo_flush_interrupt\(\) at line 6 \(smp_demo_flush_interrupt\(\) runs in hard-IRQ context: interrupt entry" \
		"$t: the reason, with the context"
	expect_no_out 'fixable' "$t: nothing to fix"
	run scan --modernize $t; expect_rc 1 "$t: --modernize: a fix"
	expect_out "^$t/arch/demo/kernel/ipi\.c:2:22: note: 2\.4 per-CPU array .*\[P008, fixable\]" "$t: --modernize converts it"
done

# assembly: a name handed to an interrupt entry macro, and one merely called
mkdir -p tx/include/linux tx/arch/demo/kernel
printf 'VERSION = 2\nPATCHLEVEL = 6\n' > tx/Makefile
cat > tx/arch/demo/kernel/entry.S <<'S'
	.macro apicinterrupt num,func
	pushq $\num-256
	call \func
	jmp ret_from_intr
	.endm

	.macro plaincall func
	call \func
	ret
	.endm

ENTRY(demo_tlb_interrupt)
	apicinterrupt DEMO_TLB_VECTOR,smp_demo_tlb_interrupt
ENTRY(demo_helper)
	plaincall demo_helper_c
S
cat > tx/arch/demo/kernel/smp.c <<'C'
#include <linux/smp.h>
void note(int cpu);

asmlinkage void smp_demo_tlb_interrupt(void)
{
	note(smp_processor_id());
}

asmlinkage void demo_helper_c(void)
{
	note(smp_processor_id());
}
C
run scan -v tx; expect_rc 1 "assembly: the plain call is a finding"
expect_out '^tx/arch/demo/kernel/smp\.c:6:7: note: why: smp_demo_tlb_interrupt\(\) runs in hard-IRQ context: interrupt entry: `apicinterrupt DEMO_TLB_VECTOR,smp_demo_tlb_interrupt` \(line 13\), an assembler macro that returns through ret_from_intr' \
	"apicinterrupt VECTOR,smp_x: hard-IRQ context"
expect_out '^tx/arch/demo/kernel/smp\.c:11:7: warning: .*\[P003, fixable\]' "a macro that does not return through ret_from_intr: any context"
expect_out 'named in assembly code, which may call it in any context' "the plain call: the reason"

# drivers/s390/ belongs to s390: its call decides s390's function, not i386's
mkdir -p ta/include/linux ta/arch/i386/kernel ta/arch/s390/kernel ta/drivers/s390
printf 'VERSION = 2\nPATCHLEVEL = 4\n' > ta/Makefile
for a in i386 s390; do
cat > ta/arch/$a/kernel/stop.c <<'C'
#include <linux/smp.h>
#include <linux/spinlock.h>
void note(int cpu);
spinlock_t stop_lock = SPIN_LOCK_UNLOCKED;

void demo_stop_cpu(void)
{
	note(smp_processor_id());
}

void demo_stop_all(void)
{
	spin_lock(&stop_lock);
	demo_stop_cpu();
	spin_unlock(&stop_lock);
}
C
done
cat > ta/drivers/s390/mach.c <<'C'
void demo_stop_cpu(void);

void demo_machine_check(void)
{
	demo_stop_cpu();
}
C
run scan ta; expect_rc 1 "an architecture's driver: a finding"
expect_out '^ta/arch/s390/kernel/stop\.c:8:7: warning: .*\[P003' "drivers/s390 calls s390's function preemptibly"
expect_no_out '^ta/arch/i386/kernel/stop\.c:8:7: warning' "i386's function of the same name is not its callee"
# the caller's lock: released before it is taken, on every path to the exit
cat > entry_lock.c <<'C'
#include <linux/smp.h>
#include <linux/spinlock.h>
struct mm { spinlock_t page_table_lock; };
void note(int cpu);

static int demo_anonymous_page(struct mm *mm, int write)
{
	if (write) {
		spin_unlock(&mm->page_table_lock);
		note(0);
		spin_lock(&mm->page_table_lock);
	}
	note(smp_processor_id());
	spin_unlock(&mm->page_table_lock);
	note(smp_processor_id());
	return 1;
}

int demo_fault(struct mm *mm, int write)
{
	spin_lock(&mm->page_table_lock);
	return demo_anonymous_page(mm, write);
}

void demo_maybe_unlock(spinlock_t *l, int locked)
{
	note(smp_processor_id());
	if (locked)
		spin_unlock(l);
}
C
run scan -v --no-tree entry_lock.c; expect_rc 1 "the caller's lock: findings after it"
expect_out '^entry_lock\.c:13:7: note: why: demo_anonymous_page\(\) is entered with mm->page_table_lock held: it releases it at line 9 before it takes it' \
	"held from the entry on one path, taken again on the other: protected"
expect_out '^entry_lock\.c:15:7: warning: .*\[P003, fixable\]' "after the last release: a finding"
expect_out '^entry_lock\.c:27:7: warning: .*\[P003, fixable\]' "released on some paths only: no contract"
# s390 builds request_irq() not to sleep (it only claims the subchannel under its lock)
mkdir -p ta/drivers/misc
for d in s390 misc; do
cat > ta/drivers/$d/probe.c <<'C'
#include <linux/spinlock.h>
#include <linux/interrupt.h>
spinlock_t probe_lock = SPIN_LOCK_UNLOCKED;
void probe_irq(int irq, void *dev);

int demo_probe(int irq, void *dev)
{
	int rc;

	spin_lock(&probe_lock);
	rc = request_irq(irq, probe_irq, 0, "demo", dev);
	spin_unlock(&probe_lock);
	return rc;
}
C
done
run scan ta
expect_no_out '^ta/drivers/s390/probe\.c:11:7: .*\[P006\]' "s390's request_irq() under a lock: no sleep"
expect_out '^ta/drivers/misc/probe\.c:11:7: .*\[P006\]' "another architecture's request_irq() under a lock: P006"
finish
