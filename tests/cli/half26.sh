#!/usr/bin/env bash
# A half-ported 2.6 tree judged by its own sources (fixtures/trees/half26):
# an architecture whose Kconfig has no CONFIG_PREEMPT is never compiled
# preemptible (its CPU reads left alone); the big kernel lock spins when the
# tree's include/linux/smp_lock.h takes spin_lock(&kernel_flag) under
# CONFIG_PREEMPT (a CPU read under it is protected, a sleep under it is no
# P006: the kernel drops it); a same-named uniprocessor stub
# (`#define smp_prepare_boot_cpu() do {} while (0)`) is no use of the
# function, whose one caller is start_kernel().
. "$(dirname "$0")/lib.sh"

tree=$SRC/fixtures/trees/half26
sites() { printf '%s\n' "$out" | sed -nE 's#^h/([^:]+:[0-9]+:[0-9]+): [a-z]+: .*\[(P[0-9]+)(, fixable)?\]$#\1 \2#p'; }

cp -r "$tree" h
run scan h; expect_rc 1 "the tree has findings"
if [ "$(sites)" = "$(cat "$SRC/fixtures/trees/half26.expect")" ]; then ok
else bad "whole tree: $(diff <(sites) "$SRC/fixtures/trees/half26.expect" | tr '\n' ' ')"; fi
run scan -v h
expect_out "arch/nopre/Kconfig has no CONFIG_PREEMPT" "-v: the architecture left alone, with the reason"
expect_out "lock_kernel\(kernel_flag\) at line 10 is held" "-v: the BKL named as the protection"

# the same tree where the BKL is no spinlock under CONFIG_PREEMPT: no protection (2.6's default)
rm -rf h && cp -r "$tree" h && sed -i 's/CONFIG_PREEMPT/CONFIG_NOTHING/' h/include/linux/smp_lock.h
run scan h
if sites | grep -qx 'drivers/misc/bkl_ioctl.c:11:17 P003'; then ok; else bad "a sleeping BKL: the read under it is P003"; fi

# a tree none of whose architectures offers CONFIG_PREEMPT predates it: every architecture is judged
rm -rf h && cp -r "$tree" h && printf 'config SMP\n' > h/arch/pre/Kconfig
run scan h
if sites | grep -qx 'arch/nopre/kernel/smp.c:8:19 P003'; then ok; else bad "no architecture preempts: nopre judged"; fi

finish
