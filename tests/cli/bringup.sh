#!/usr/bin/env bash
# Bring-up and boot code across files (fixtures/trees/bringup): a function
# every caller in the tree calls from start_secondary() (the new CPU's idle
# task) or from start_kernel() (the boot CPU's first task, before any other
# task exists), directly or through functions that run so, keeps its bare
# smp_processor_id(), as 2.6.9 kept cpu_init()'s. It must not sleep, nor be
# reached through a function that sleeps on the way (then other tasks run on
# the CPU), nor have a preemptible caller anywhere in the tree.
. "$(dirname "$0")/lib.sh"
command -v spatch >/dev/null || skip_all "spatch is not installed; this test checks the rewrite of the tree"

tree=$SRC/fixtures/trees/bringup
cp -r "$tree" bu

# findings as "PATH:LINE:COL RULE", PATH relative to the tree
sites() { printf '%s\n' "$out" | sed -nE 's#^bu/([^:]+:[0-9]+:[0-9]+): [a-z]+: .*\[(P[0-9]+)(, fixable)?\]$#\1 \2#p'; }

run scan bu; expect_rc 1 "the tree has findings"
if [ "$(sites)" = "$(cat "$SRC/fixtures/trees/bringup.expect")" ]; then ok
else bad "whole tree: bring-up and boot callers: $(diff <(sites) "$SRC/fixtures/trees/bringup.expect" | tr '\n' ' ')"; fi
# each file alone: demo_cpu_init()'s callers are unknown, so its read is a finding
run scan --no-tree bu
if sites | grep -qx 'arch/demo/kernel/setup.c:19:11 P003'; then ok; else bad "--no-tree: demo_cpu_init() flagged"; fi

run explain --context-root bu bu/arch/demo/kernel/setup.c:19; expect_rc 0 "bound: not a finding"
expect_out 'read where the CPU runs nothing else' "bound: the verdict"
expect_out 'every call in the tree runs on a task bound to its CPU: from (start_secondary\(\) at bu/arch/demo/kernel/smpboot.c:27|demo_trap_init\(\) at bu/arch/demo/kernel/traps.c:11)' "bound: the call that binds it"
run explain --context-root bu bu/arch/demo/kernel/setup.c:29; expect_rc 0 "a bound caller, but it sleeps"; expect_out ": flagged \(" "a bound caller, but it sleeps (flagged)"
expect_out 'called from start_secondary\(\) at bu/arch/demo/kernel/smpboot.c:29: .*but demo_cpu_late\(\) may sleep' "sleeping: named as the reason"
run explain --context-root bu bu/arch/demo/kernel/setup.c:38; expect_rc 0 "reached through a function that sleeps first"; expect_out ": flagged \(" "reached through a function that sleeps first (flagged)"
expect_out 'called from demo_rest_init\(\) at bu/init/main.c:22 .*start_kernel\(\) runs bound to its CPU, but a function on the way may sleep' "the sleeping caller on the way"
run explain --context-root bu bu/arch/demo/kernel/setup.c:46; expect_rc 0 "a preemptible caller too"; expect_out ": flagged \(" "a preemptible caller too (flagged)"
expect_out 'called from sys_demo_stats\(\) at bu/kernel/sys.c:11 with preemption on' "the system call named"

# the rewrite leaves the bound function alone and fixes the others
run apply bu; expect_rc 0 "apply"
if sed -n 19p bu/arch/demo/kernel/setup.c | grep -qx '	int nr = smp_processor_id();'; then ok; else bad "demo_cpu_init() untouched"; fi
if [ "$(grep -c 'get_cpu()' bu/arch/demo/kernel/setup.c)" -eq 3 ]; then ok; else bad "the three other reads use get_cpu()"; fi
for f in $(cd bu && find . -name '*.c' | sort); do
	if o=$(gcc -std=gnu89 -fsyntax-only -Wall -Werror -Wno-unused-function -nostdinc -I "$SRC/fixtures/include-2.6" \
		-I "$SRC/fixtures/include-2.4" -DCONFIG_SMP "bu/$f" 2>&1); then ok; else bad "$f compiles against the 2.6 shim: $o"; fi
done

# a call that sleeps in the bound function itself, or in a static function it calls, undoes it
for variant in own callee; do
	rm -rf v && cp -r "$tree" v
	if [ $variant = own ]; then
		sed -i 's|	printk("Initializing CPU#%d\\n", nr);|&\n\tcpu_late_buf = kmalloc(8, GFP_KERNEL);|' v/arch/demo/kernel/setup.c
	else
		sed -i 's|^/\* Called from start_secondary() and from demo_trap_init.*|static void demo_cpu_buf(void)\n{\n\tcpu_late_buf = kmalloc(8, GFP_KERNEL);\n}\n\n&|' v/arch/demo/kernel/setup.c
		sed -i 's|	printk("Initializing CPU#%d\\n", nr);|&\n\tdemo_cpu_buf();|' v/arch/demo/kernel/setup.c
	fi
	run explain --context-root v v/arch/demo/kernel/setup.c:$([ $variant = own ] && echo 19 || echo 24)
	expect_rc 0 "$variant sleep: explained"; expect_out ": flagged \\(" "$variant sleep: a finding"
	expect_out 'but demo_cpu_init\(\) may sleep' "$variant sleep: the reason"
done

# a function of the entry's own file: start_secondary()'s static helper that sleeps
run explain --context-root bu bu/arch/demo/kernel/smpboot.c:20; expect_rc 0 "a sleeping static helper of start_secondary(): a finding"; expect_out ": flagged \(" "a sleeping static helper of start_secondary(): a finding (flagged)"
expect_out 'demo_callin_alloc\(\) is called only from start_secondary\(\) \(line 28\), which runs bound to its CPU, but it may sleep \(calls kmalloc\(GFP_KERNEL\) at line 22\)' "the sleep named as the reason"

# the idle loop: each CPU's idle task never leaves its CPU, so the number it
# reads stays right (its per-CPU data keeps its rules)
mkdir -p idle && cat > idle/process.c <<'C'
#include <linux/smp.h>
#include <linux/percpu.h>
DEFINE_PER_CPU(int, idle_ticks);
void note(int cpu);

void cpu_idle(void)
{
	for (;;) {
		note(smp_processor_id());
		__get_cpu_var(idle_ticks)++;
	}
}

void not_idle(void)
{
	note(smp_processor_id());
}
C
run scan -v --no-tree idle/process.c; expect_rc 1 "cpu_idle(): its per-CPU data and another function are still flagged"
expect_out '^idle/process\.c:9:8: note: why: cpu_idle\(\) is the loop of this CPU.s idle task, which never leaves its CPU' \
	"cpu_idle(): the CPU number is stable"
expect_out '^idle/process\.c:10:3: warning: .*\[P002(, fixable)?\]' "cpu_idle(): per-CPU data is still flagged"
expect_out '^idle/process\.c:16:7: warning: .*\[P003(, fixable)?\]' "another function: flagged"
# boot before the other CPUs run tasks: smp_prepare_cpus() (2.6) and
# smp_boot_cpus() (2.4) and what only they call
mkdir -p boot && cat > boot/smpboot.c <<'C'
#include <linux/smp.h>
void note(int cpu);

static void sync_tsc(void)
{
	note(smp_processor_id());
}

void smp_prepare_cpus(unsigned int max)
{
	note(smp_processor_id());
	sync_tsc();
}

void smp_boot_cpus(void)
{
	note(smp_processor_id());
}

void later(void)
{
	note(smp_processor_id());
}
C
run scan -v --no-tree boot/smpboot.c; expect_rc 1 "boot: a function called later is still flagged"
expect_out '^boot/smpboot\.c:6:7: note: protected: ' "boot: the static helper only smp_prepare_cpus() calls"
expect_out '^boot/smpboot\.c:11:7: note: why: .*smp_prepare_cpus\(\) runs at boot before the other CPUs run tasks' \
	"boot: smp_prepare_cpus()"
expect_out '^boot/smpboot\.c:17:7: note: why: .*smp_boot_cpus\(\) runs at boot before the other CPUs run tasks' \
	"boot: smp_boot_cpus()"
expect_out '^boot/smpboot\.c:22:7: warning: .*\[P003(, fixable)?\]' "boot: a later function: flagged"
# a call compiled only without CONFIG_SMP is no use: the uniprocessor arm
# of another file does not make the SMP function preemptible
mkdir -p upt/include/linux upt/kernel
printf 'VERSION = 2\nPATCHLEVEL = 4\n' > upt/Makefile
cat > upt/kernel/helper.c <<'C'
#include <linux/smp.h>
void note(int cpu);

void helper(void)
{
	note(smp_processor_id());
}
C
cat > upt/kernel/users.c <<'C'
#include <linux/spinlock.h>
void helper(void);
static spinlock_t l = SPIN_LOCK_UNLOCKED;

#ifndef CONFIG_SMP
void up_init(void)
{
	helper();
}
#endif

void smp_user(void)
{
	spin_lock(&l);
	helper();
	spin_unlock(&l);
}
C
run scan -v upt/kernel/helper.c; expect_rc 0 "a uniprocessor caller: no finding"
expect_out '^upt/kernel/helper\.c:6:7: note: why: helper\(\) is called with preemption off: every call in the tree is made with preemption off: from smp_user\(\)' \
	"a uniprocessor caller: the SMP caller decides"
finish
