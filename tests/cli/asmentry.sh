#!/usr/bin/env bash
# C functions called from assembly entries (fixtures/trees/asmentry): a call
# the entry makes after its own instruction that turns interrupts off
# (sparc64 `wrpr %g0, 15, %pil`, ppc64 DISABLE_INTS, mips CLI, i386 cli), with
# nothing on the way that turns them back on and no label code elsewhere
# jumps to, runs atomic, and so do the static functions only it calls; a
# call after %pil is written back (in the call's delay slot too) or after
# another call, after ENABLE_INTS, or behind a label another entry reaches
# after STI, or after an #ifdef arm between (it may hold an sti) keeps its
# finding. Another architecture of the family whose assembly defines its
# own global routine of the name (ppc's demo_hash_page in hashtable.S)
# does not use ppc64's C function: its mentions are of its own routine.
# ppc (32-bit) exception entries: a handler entered through EXC_XFER_STD,
# EXC_XFER_LITE, EXC_XFER_TEMPLATE(..., NOCOPY, ...) or a hand-written
# `li r20,MSR_KERNEL; bl transfer_to_handler; .long handler` runs with
# MSR_EE clear; one entered with EE copied in (EXC_XFER_EE, rlwimi), in any
# head*.S, keeps its finding.
. "$(dirname "$0")/lib.sh"

cp -r "$SRC/fixtures/trees/asmentry" ae

sites() { printf '%s\n' "$out" | sed -nE 's#^ae/([^:]+:[0-9]+:[0-9]+): [a-z]+: .*\[(P[0-9]+)(, fixable)?\]$#\1 \2#p'; }

run scan ae; expect_rc 1 "the tree has findings"
if [ "$(sites)" = "$(cat "$SRC/fixtures/trees/asmentry.expect")" ]; then ok
else bad "whole tree: assembly entries: $(diff <(sites) "$SRC/fixtures/trees/asmentry.expect" | tr '\n' ' ')"; fi

run explain --context-root ae ae/arch/sparc64/kernel/traps.c:8; expect_rc 0 "sparc64: not a finding"
expect_out 'called from assembly with interrupts off: `call[[:space:]]+demo_err_handler` \(line 8\) comes after the instruction that turns them off \(line 5\)' "sparc64: the entry's lines"
run explain --context-root ae ae/arch/ppc64/mm/hash.c:7; expect_rc 0 "ppc64 helper: not a finding"
expect_out 'demo_hash_page\(\) is called with preemption off: called from assembly with interrupts off: `bl	.demo_hash_page` \(line 15\)' "ppc64: through the static helper's caller, ppc's own routine aside"
run explain --context-root ae ae/arch/i386/kernel/traps.c:8; expect_rc 0 "i386: not a finding"
expect_out 'called from assembly with interrupts off: `call demo_gate_handler` \(line 6\)' "i386: after cli"
run explain --context-root ae ae/arch/mips/kernel/irq.c:14; expect_rc 0 "mips: the shared label"
expect_out 'named in assembly code, which may call it in any context' "mips: a label reached after STI"
run explain --context-root ae ae/arch/ppc/kernel/traps.c:8; expect_rc 0 "ppc: EXC_XFER_STD"
expect_out 'demo_sstep_exc\(\) is called with preemption off: called from assembly with interrupts off: `EXCEPTION\(0xd00, SingleStep, demo_sstep_exc, EXC_XFER_STD\)` \(line 8\) is a ppc exception entry' "ppc: the 2.6 macro"
run explain --context-root ae ae/arch/ppc/kernel/traps.c:32; expect_rc 0 "ppc: EXC_XFER_TEMPLATE NOCOPY"
expect_out 'head_4xx.S' "ppc: the template in head_4xx.S"
run explain --context-root ae ae/arch/ppc/kernel/traps.c:38; expect_rc 0 "ppc: hand-written entry"
expect_out '`.long	demo_iabr_exc` \(line 9\) is a ppc exception entry whose MSR \(line 6\) keeps MSR_EE clear' "ppc: li r20,MSR_KERNEL"
run explain --context-root ae ae/arch/ppc/kernel/traps.c:26; expect_rc 0 "ppc: the mixed handler explained"
expect_out "named in assembly code, which may call it in any context \\(ae/arch/ppc/kernel/head_4xx.S\\)" "ppc: EE copied in another head file"
finish
