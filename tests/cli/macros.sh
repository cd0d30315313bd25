#!/usr/bin/env bash
# Functions named only in macro bodies: the macro's own uses decide their
# context (followed like a caller, through chains of macros), and a macro
# compiled only without CONFIG_SMP is no use at all (the CPU number is
# always 0 there). Before, any name in a macro body made the function
# "callable in any context", so 2.6's own TLB and context-switch code was
# rewritten.
. "$(dirname "$0")/lib.sh"

tree() {
	mkdir -p "$1/include/linux" "$1/include/asm-demo" "$1/arch/demo/mm" "$1/arch/demo/kernel" "$1/mm" "$1/kernel"
	printf 'VERSION = 2\nPATCHLEVEL = 4\n' > "$1/Makefile"
	cat > "$1/arch/demo/mm/tlb.c" <<'C'
#include <linux/smp.h>
extern int mmu_ctx[];
void local_flush_tlb_mm(int *mm)
{
	int cpu = smp_processor_id();

	mmu_ctx[cpu] = *mm;
}
C
	cat > "$1/arch/demo/kernel/smp.c" <<'C'
#include <linux/smp.h>
void local_flush_tlb_mm(int *mm);
void flush_tlb_mm(int *mm)
{
	preempt_disable();
	local_flush_tlb_mm(mm);
	preempt_enable();
}
C
	cat > "$1/arch/demo/kernel/process.c" <<'C'
#include <linux/smp.h>
extern int last_task[];
void save_extra(int task)
{
	last_task[smp_processor_id()] = task;
}
C
	cat > "$1/include/asm-demo/system.h" <<'C'
void save_extra(int task);
#define __switch_to(prev, next) do { save_extra(prev); } while (0)
#define switch_to(prev, next) __switch_to(prev, next)
C
	cat > "$1/kernel/sched.c" <<'C'
#include <linux/spinlock.h>
#include <asm/system.h>
static spinlock_t runqueue_lock = SPIN_LOCK_UNLOCKED;
void schedule_demo(int prev, int next)
{
	spin_lock_irq(&runqueue_lock);
	switch_to(prev, next);
	spin_unlock_irq(&runqueue_lock);
}
C
	cat > "$1/mm/memory.c" <<'C'
#include <asm/tlbflush.h>
void zap_demo(int *mm)
{
	flush_tlb_mm(mm);
}
C
}

# the uniprocessor macro: on SMP, flush_tlb_mm() is the function, which
# holds preemption off around the call
tree up
cat > up/include/asm-demo/tlbflush.h <<'C'
#ifdef CONFIG_SMP
void flush_tlb_mm(int *mm);
#else
#define flush_tlb_mm(mm) local_flush_tlb_mm(mm)
#endif
C
run scan -v up/arch/demo/mm/tlb.c
expect_out '^up/arch/demo/mm/tlb\.c:5:12: note: protected: .*\[P003' "a macro only compiled without CONFIG_SMP is no use"
expect_out 'local_flush_tlb_mm\(\) is called with preemption off: every call in the tree is made with preemption off: from flush_tlb_mm\(\) at up/arch/demo/kernel/smp\.c:6' \
	"the reason names the protected call"
expect_no_out 'tlb\.c:5:12: warning' "no P003 in the TLB flush"
cp -r up up-not
sed -i 's/^#ifndef CONFIG_SMP$/#ifdef CONFIG_SMP/; s/^#ifdef CONFIG_SMP$/#ifndef CONFIG_SMP/' up-not/include/asm-demo/tlbflush.h
run scan -v up-not/arch/demo/mm/tlb.c
expect_out '^up-not/arch/demo/mm/tlb\.c:5:12: warning: .*\[P003, fixable\]' "the same macro compiled with CONFIG_SMP counts"
run explain up-not/arch/demo/mm/tlb.c:5
expect_out 'named in the body of the macro flush_tlb_mm \(up-not/include/asm-demo/tlbflush\.h:4\), which is used with preemption on: called from zap_demo\(\) at up-not/mm/memory\.c:4' \
	"the reason names the macro and the use that makes it preemptible"

# a macro in every configuration and a chain of two: their uses decide
tree all
cat > all/include/asm-demo/tlbflush.h <<'C'
#if !defined(CONFIG_SMP)
void flush_tlb_mm(int *mm);
#else
#define flush_tlb_mm(mm) local_flush_tlb_mm(mm)
#endif
C
run scan -v all/arch/demo/mm/tlb.c all/arch/demo/kernel/process.c
expect_out '^all/arch/demo/mm/tlb\.c:5:12: warning: .*\[P003, fixable\]' "#if !defined(CONFIG_SMP) ... #else: the SMP arm counts"
expect_out '^all/arch/demo/kernel/process\.c:5:12: note: protected: .*\[P00[13]' "a function used only through a chain of macros under a lock"
run explain all/arch/demo/kernel/process.c:5
expect_out 'named in the body of the macro __switch_to \(all/include/asm-demo/system\.h:2\): .*named in the body of the macro switch_to \(all/include/asm-demo/system\.h:3\): .*from schedule_demo\(\) at all/kernel/sched\.c:7' \
	"the chain of macros is named in the reason"
# the same chain used once with preemption on: flagged
printf '#include <asm/system.h>\nvoid yield_demo(int a, int b)\n{\n\tswitch_to(a, b);\n}\n' > all/kernel/yield.c
run scan -v all/arch/demo/kernel/process.c
expect_out '^all/arch/demo/kernel/process\.c:5:12: warning: .*\[P00[13]' "a use of the chain with preemption on flags the function"

finish
