#!/usr/bin/env bash
# The context switch (fixtures/trees/ctxswitch): schedule() calling the
# architecture's switch_to() is made with preemption off in 2.6 (2.6.9
# context_switch() runs with the runqueue locked and interrupts off), so
# what the switch calls, through the macro's body and the files of the tree
# (the extra state a task switch saves and loads, as 2.4 ia64 perfmon's
# pfm_save_regs()/pfm_load_regs()), reads the CPU number safely; the same
# macro in a system call is still a finding.
. "$(dirname "$0")/lib.sh"

tree=$SRC/fixtures/trees/ctxswitch
cp -r "$tree" cs

run scan cs; expect_rc 1 "the tree has a finding"
sites=$(printf '%s\n' "$out" | grep -cE '^cs/.*\[P[0-9]+')
[ "$sites" -eq 1 ] && ok || bad "one finding, the system call's (got $sites)"
expect_out '^cs/arch/demo/kernel/pmu.c:34:9: warning: .*DEMO_PMU_OWNER.*\[P003\]' "the system call's read is flagged"

run explain --context-root cs cs/arch/demo/kernel/pmu.c:28; expect_rc 0 "explain"
expect_out 'protected \(not a finding\)' "the load the switch makes is protected"
expect_out 'the context switch in schedule\(\), which 2.6 makes with preemption off' "the context switch named as the reason"
run explain --context-root cs cs/arch/demo/kernel/pmu.c:22; expect_rc 0 "explain"
expect_out 'protected \(not a finding\)' "the save the switch makes is protected"

# another caller of switch_to() than schedule() does not count
rm -rf v && cp -r "$tree" v
sed -i 's/^void schedule(void)$/void demo_yield_to(void)/' v/kernel/sched.c
run scan v; expect_rc 1 "findings"
expect_out '^v/arch/demo/kernel/pmu.c:28:2: warning: .*\[P003\]' "switch_to() outside schedule(): the load is flagged"

finish
