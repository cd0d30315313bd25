#!/usr/bin/env bash
# Scaling with file size: generates one C file of each SIZE (MB) made of
# many small 2.4-style functions (sites, locks, callers), scans it, and
# prints seconds (wall and CPU: the CPU figure holds on a busy machine),
# peak RSS and seconds per MB; time per MB must stay flat (linear time).
# The files are generated here, in a temporary directory.
#
#   bench/scale.sh [SIZES...]      (default: 1 5 20 50)
#   BUDGET_S_PER_MB=0.5 bench/scale.sh 50     fail when a size exceeds the budget
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${PREEMPTIFY:-build/preemptify}")
[ -x "$bin" ] || { echo "scale: $bin not built" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "scale: needs GNU time" >&2; exit 2; }
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1 5 20 50)
budget=${BUDGET_S_PER_MB:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/preemptify-scale.XXXXXX")
trap 'rm -rf "$work"' EXIT
# timed runs measure the work, never a replay of the result cache (nor touch the user's)
export XDG_CACHE_HOME=$work/cache

# gen MB FILE: functions until the file reaches MB megabytes
gen() {
	awk -v mb="$1" 'BEGIN {
		print "#include <linux/sched.h>\n#include <linux/smp.h>\n#include <linux/spinlock.h>\n"
		print "static spinlock_t gen_lock = SPIN_LOCK_UNLOCKED;\nstatic int gen_count[NR_CPUS];\n"
		limit = mb * 1048576; size = 0
		for (i = 0; size < limit; i++) {
			s = sprintf("static int gen_%d(int a)\n{\n\tint cpu = smp_processor_id();\n\tint r = a;\n\n" \
				"\tif (current->need_resched)\n\t\tschedule();\n\tspin_lock(&gen_lock);\n" \
				"\tgen_count[smp_processor_id()]++;\n\tspin_unlock(&gen_lock);\n" \
				"\tif (a > %d)\n\t\tr += gen_%d(a - 1);\n\treturn r + cpu;\n}\n\n", i, i, i > 0 ? i - 1 : 0)
			printf "%s", s
			size += length(s)
		}
	}' > "$2"
}

printf '%-8s %10s %10s %10s %12s %10s %12s\n' "MB" "functions" "seconds" "CPU s" "peak RSS MB" "s per MB" "CPU s per MB"
status=0
for mb in "${sizes[@]}"; do
	f=$work/gen_$mb.c
	gen "$mb" "$f"
	nf=$(grep -c '^static int gen_' "$f")
	/usr/bin/time -o "$work/t" -f '%e %M %U %S' "$bin" scan --format=json "$f" >/dev/null 2>&1 || true
	read -r t m u s < <(tail -1 "$work/t")
	cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
	per=$(awk -v t="$t" -v mb="$mb" 'BEGIN { printf "%.3f", t / mb }')
	cper=$(awk -v c="$cpu" -v mb="$mb" 'BEGIN { printf "%.3f", c / mb }')
	printf '%-8s %10s %10s %10s %12s %10s %12s\n' "$mb" "$nf" "$t" "$cpu" "$((m / 1024))" "$per" "$cper"
	if [ -n "$budget" ] && awk -v p="$per" -v b="$budget" 'BEGIN { exit !(p > b) }'; then
		echo "scale: $mb MB over the budget of $budget s per MB" >&2
		status=1
	fi
	rm -f "$f"
done
exit $status
