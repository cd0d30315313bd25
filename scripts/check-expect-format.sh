#!/usr/bin/env bash
# Check that every fixture .c under DIR has a .expect file beside it (and
# maybe a .modernize.expect, its findings with --modernize, and a
# .fix-sleep.expect, with --fix-sleep) and that
# each line of them is `LINE:COL RULE FIX` with a known rule and fix kind,
# sorted by line then column, pointing inside the fixture (LINE within the
# file, COL within that line).
# usage: check-expect-format.sh DIR
set -u
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
bad=0
count=0
# check_lines C E: E's lines are well formed and point inside fixture C
check_lines() {
	local c=$1 e=$2
	LC_ALL=C awk -v src="$c" -v ef="$e" '
		BEGIN {
			n = 0
			while ((getline l < src) > 0) { n++; len[n] = length(l) }
			close(src)
			fixes = "none get-cpu define-per-cpu get-cpu-var move-inside cond-resched need-resched-call yield check-resched resched-flag preempt-region gfp-atomic"
			split(fixes, fl, " ")
			for (i in fl) okfix[fl[i]] = 1
			pl = 0; pc = 0; rc = 0
		}
		{
			if ($0 !~ /^[1-9][0-9]*:[1-9][0-9]* P00[1-8] [a-z-]+$/) {
				printf "%s:%d: malformed line: %s\n", ef, NR, $0; rc = 1; next
			}
			split($1, lc, ":")
			ln = lc[1] + 0; col = lc[2] + 0
			if (!($3 in okfix)) { printf "%s:%d: unknown fix %s\n", ef, NR, $3; rc = 1 }
			if ($2 == "P007" && $3 != "none") {
				printf "%s:%d: %s is report-only, fix must be none\n", ef, NR, $2; rc = 1
			}
			if ($2 == "P006" && !($3 == "none" || ($3 == "gfp-atomic" && ef ~ /\.fix-sleep\.expect$/))) {
				printf "%s:%d: P006 is report-only but for gfp-atomic with --fix-sleep\n", ef, NR; rc = 1
			}
			if (ln > n) { printf "%s:%d: line %d beyond end of %s\n", ef, NR, ln, src; rc = 1 }
			else if (col > len[ln]) { printf "%s:%d: column %d beyond end of line %d\n", ef, NR, col, ln; rc = 1 }
			if (ln < pl || (ln == pl && col < pc)) {
				printf "%s:%d: not sorted by line, column\n", ef, NR; rc = 1
			}
			pl = ln; pc = col
		}
		END { exit rc }' "$e"
}
while IFS= read -r -d '' c; do
	count=$((count + 1))
	e=${c%.c}.expect
	if [ ! -f "$e" ]; then
		echo "MISSING: $e"
		bad=1
		continue
	fi
	check_lines "$c" "$e" || bad=1
	for m in "${c%.c}.modernize.expect" "${c%.c}.fix-sleep.expect"; do
		if [ -f "$m" ]; then
			check_lines "$c" "$m" || bad=1
		fi
	done
done < <(find "$1" -name '*.c' -type f -print0 | sort -z)
while IFS= read -r -d '' e; do
	if [ ! -f "${e%.expect}.c" ] && [ ! -f "${e%.modernize.expect}.c" ] && [ ! -f "${e%.fix-sleep.expect}.c" ]; then
		echo "ORPHAN: $e has no fixture"
		bad=1
	fi
done < <(find "$1" -name '*.expect' -type f -print0 | sort -z)
if [ "$count" -eq 0 ]; then
	echo "$0: no fixtures under $1" >&2
	exit 1
fi
[ "$bad" -eq 0 ] && echo "$count fixtures, all .expect files well-formed"
exit "$bad"
