#!/usr/bin/env bash
# Ctrl-C during the analysis of one big file (reliability D12): the scan
# stops within a couple of seconds (the parse is cancelled, the rules and
# the plan proof stop between functions), exits 130 and shows no partial
# report. It waited for the whole analysis (37.9 s on a 4 MB file).
. "$(dirname "$0")/lib.sh"

awk 'BEGIN {
	print "#include <linux/sched.h>\nstatic spinlock_t big_lock;\nstatic int big_count[NR_CPUS];\n"
	for (i = 0; i < 12000; i++)
		printf "static int big_%d(int a)\n{\n\tint cpu = smp_processor_id();\n\n\tif (current->need_resched)\n\t\tschedule();\n\tspin_lock(&big_lock);\n\tbig_count[smp_processor_id()]++;\n\tspin_unlock(&big_lock);\n\tif (a > %d)\n\t\ta += big_%d(a - 1);\n\treturn a + cpu;\n}\n\n", i, i, (i > 0 ? i - 1 : 0)
}' >big.c
"$BIN" scan -f json big.c >"$WORK/.out" 2>"$WORK/.err" &
pid=$!
sleep 1.5
start=$(date +%s%N)
kill -INT "$pid"
wait "$pid"
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
out=$(cat "$WORK/.out")
err=$(cat "$WORK/.err")
expect_rc 130 "interrupted scan: exit 130"
[ "$ms" -lt 3000 ] && ok || bad "interrupted scan: stopped ${ms} ms after the signal (at most 3000)"
expect_no_out '"findings"' "interrupted scan: no partial report"
expect_err "interrupted by signal 2" "interrupted scan: says so"
finish
