#!/usr/bin/env bash
# Benchmark preemptify scan on a tree: wall time (median of RUNS), peak memory,
# throughput, and the ratios that matter: parallel speed-up, what the
# prefilter saves, what following callers across files costs (scan against
# scan --no-tree), and the cost relative to a plain grep for the trigger tokens.
#
#   bench/bench.sh [TREE] [RUNS]      (default: fixtures/drivers, 5 runs)
#   PREEMPTIFY=path/to/preemptify bench/bench.sh /path/to/linux-2.4
#   BASE=path/to/older/preemptify bench/bench.sh TREE   (also: this scan / BASE's,
#                                        the two run alternately)
#   DIFF=1 bench/bench.sh TREE [RUNS]   (also: diff against the plain-Coccinelle
#                                        baseline of bench/plain/, spatch process counts)
#   TOUCH=1 bench/bench.sh TREE [RUNS]  (also: scan (and with DIFF=1 diff) with one file's
#                                        bytes changed before each run, on a copy of TREE)
#   QUICK=1 ...                         (with DIFF=1: no --no-batch --no-slice row, about
#                                        10 minutes on a whole kernel tree)
# Every run but the warm-cache rows says --no-cache; the warm rows use a result
# cache in a temporary directory (never the user's), filled by one run first.
set -euo pipefail
cd "$(dirname "$0")/.."
tree=${1:-fixtures/drivers}
runs=${2:-5}
bin=${PREEMPTIFY:-build/preemptify}
command -v /usr/bin/time >/dev/null || { echo "bench: needs GNU time (apt-get install time)" >&2; exit 2; }
[ -x "$bin" ] || { echo "bench: $bin not built (cmake --build build)" >&2; exit 2; }
[ -d "$tree" ] || { echo "bench: $tree: not a directory" >&2; exit 2; }
cpus=$(nproc)
XDG_CACHE_HOME=$(mktemp -d)
export XDG_CACHE_HOME
trap 'rm -rf "$XDG_CACHE_HOME" ${copy:+"$copy"}' EXIT

# median wall seconds and max RSS (KiB) of a command over $runs runs
measure() {
	local times=() rss=0 t m out tf
	tf=$(mktemp)
	for _ in $(seq "$runs"); do
		/usr/bin/time -o "$tf" -f '%e %M' "$@" >/dev/null 2>&1 || true
		out=$(tail -1 "$tf")
		t=${out% *}; m=${out#* }
		times+=("$t")
		[ "$m" -gt "$rss" ] && rss=$m
	done
	rm -f "$tf"
	printf '%s %s\n' "$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")" "$rss"
}

# as measure, with COPY/FILE's bytes changed (a comment added) before each run
measure_touched() {
	local copy=$1 file=$2 times=() rss=0 out tf
	shift 2
	tf=$(mktemp)
	for i in $(seq "$runs"); do
		printf '/* bench %s %s */\n' "$i" "$RANDOM" >>"$copy/$file"
		/usr/bin/time -o "$tf" -f '%e %M' "$@" >/dev/null 2>&1 || true
		out=$(tail -1 "$tf")
		times+=("${out% *}")
		[ "${out#* }" -gt "$rss" ] && rss=${out#* }
	done
	rm -f "$tf"
	printf '%s %s\n' "$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")" "$rss"
}

# BIN_A (with --no-cache after the command) and BIN_B run alternately with the same ARGS, $runs times each (a drifting
# machine slows both alike): median wall and max RSS of each, and the median of
# the per-pair ratios a / b
measure_pair() {
	local a=$1 b=$2 ta=() tb=() rs=() ra=0 rb=0 out x y tf
	shift 2
	tf=$(mktemp)
	for _ in $(seq "$runs"); do
		/usr/bin/time -o "$tf" -f '%e %M' "$a" "$1" --no-cache "${@:2}" >/dev/null 2>&1 || true
		out=$(tail -1 "$tf"); x=${out% *}; ta+=("$x"); [ "${out#* }" -gt "$ra" ] && ra=${out#* }
		/usr/bin/time -o "$tf" -f '%e %M' "$b" "$@" >/dev/null 2>&1 || true
		out=$(tail -1 "$tf"); y=${out% *}; tb+=("$y"); [ "${out#* }" -gt "$rb" ] && rb=${out#* }
		rs+=("$(awk -v a="$x" -v b="$y" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print 0 }')")
	done
	rm -f "$tf"
	local mid=$(( (runs + 1) / 2 ))
	printf '%s %s %s %s %s\n' "$(printf '%s\n' "${ta[@]}" | sort -n | sed -n "${mid}p")" "$ra" \
		"$(printf '%s\n' "${tb[@]}" | sort -n | sed -n "${mid}p")" "$rb" \
		"$(printf '%s\n' "${rs[@]}" | sort -n | sed -n "${mid}p")"
}

files=$(find "$tree" -name '*.[ch]' -type f | wc -l)
bytes=$(find "$tree" -name '*.[ch]' -type f -print0 | du -cb --files0-from=- | tail -1 | cut -f1)
read -r findings < <("$bin" scan --no-cache "$tree" 2>&1 >/dev/null | sed -E 's/^preemptify: ([0-9]+) finding.*/\1/')

read -r t1 m1 < <(measure "$bin" scan --no-cache -j 1 "$tree")
tb=""
if [ -n "${BASE:-}" ]; then
	read -r tn mn tb mb rb < <(measure_pair "$bin" "$BASE" scan -j "$cpus" "$tree")
else
	read -r tn mn < <(measure "$bin" scan --no-cache -j "$cpus" "$tree")
fi
read -r tall mall < <(measure "$bin" scan --no-cache -j "$cpus" --no-prefilter "$tree")
read -r tnt mnt < <(measure "$bin" scan --no-cache -j "$cpus" --no-tree "$tree")
"$bin" scan -j "$cpus" "$tree" >/dev/null 2>&1 || true # fills the cache
read -r tw mw < <(measure "$bin" scan -j "$cpus" "$tree")
if [ -n "${TOUCH:-}" ]; then
	copy=$(mktemp -d)
	cp -a "$tree/." "$copy/"
	victim=$(cd "$copy" && grep -rlE --include='*.c' 'smp_processor_id' . | sort | sed -n 1p)  # not head: sort must not die of SIGPIPE under pipefail
	"$bin" scan -j "$cpus" "$copy" >/dev/null 2>&1 || true
	read -r tt mt < <(measure_touched "$copy" "$victim" "$bin" scan -j "$cpus" "$copy")
fi
read -r tg _ < <(measure grep -rlE --include='*.[ch]' 'smp_processor_id|need_resched|NR_CPUS|preempt_|cpu_var|per_cpu|SCHED_YIELD' "$tree")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
mbps() { awk -v b="$bytes" -v t="$1" 'BEGIN { if (t > 0) printf "%.1f", b / t / 1048576; else print "n/a" }'; }

printf 'tree            %s\n' "$tree"
printf 'files           %s (.c/.h), %s bytes, %s findings\n' "$files" "$bytes" "$findings"
printf 'runs            %s (median wall time), %s CPUs\n\n' "$runs" "$cpus"
printf '%-28s %8s %10s %12s\n' "run" "seconds" "MiB/s" "peak RSS KiB"
printf '%-28s %8s %10s %12s\n' "scan -j 1" "$t1" "$(mbps "$t1")" "$m1"
printf '%-28s %8s %10s %12s\n' "scan -j $cpus" "$tn" "$(mbps "$tn")" "$mn"
printf '%-28s %8s %10s %12s\n' "scan -j $cpus --no-prefilter" "$tall" "$(mbps "$tall")" "$mall"
printf '%-28s %8s %10s %12s\n' "scan -j $cpus --no-tree" "$tnt" "$(mbps "$tnt")" "$mnt"
[ -n "$tb" ] && printf '%-28s %8s %10s %12s\n' "BASE scan -j $cpus" "$tb" "$(mbps "$tb")" "$mb"
printf '%-28s %8s %10s %12s\n' "scan -j $cpus, warm cache" "$tw" "$(mbps "$tw")" "$mw"
[ -n "${TOUCH:-}" ] && printf '%-28s %8s %10s %12s\n' "scan -j $cpus, 1 file changed" "$tt" "$(mbps "$tt")" "$mt"
printf '%-28s %8s %10s\n\n' "grep -rlE (trigger tokens)" "$tg" "$(mbps "$tg")"
printf 'parallel speed-up (-j 1 / -j %s)        %s\n' "$cpus" "$(ratio "$t1" "$tn")"
printf 'prefilter saving (no-prefilter / default) %s\n' "$(ratio "$tall" "$tn")"
printf 'callers across files (scan / --no-tree) %s\n' "$(ratio "$tn" "$tnt")"
[ -n "$tb" ] && printf 'this version over BASE (scan / BASE scan) %s (median of the %s interleaved pairs: %s)\n' \
	"$(ratio "$tn" "$tb")" "$runs" "$rb"
printf 'cost over grep (scan -j %s / grep)       %s\n' "$cpus" "$(ratio "$tn" "$tg")"
printf 'warm cache over grep (warm scan / grep)  %s\n' "$(ratio "$tw" "$tg")"
[ -n "${TOUCH:-}" ] && printf 'one file changed over warm (scan)        %s\n' "$(ratio "$tt" "$tw")"

if [ -n "${DIFF:-}" ]; then
	command -v spatch >/dev/null || { echo "bench: DIFF=1 needs spatch (apt-get install coccinelle)" >&2; exit 2; }
	read -r td md < <(measure "$bin" diff --no-cache -j "$cpus" "$tree")
	tdn=skipped mdn=-
	[ -n "${QUICK:-}" ] || read -r tdn mdn < <(measure "$bin" diff --no-cache -j "$cpus" --no-batch --no-slice "$tree")
	read -r tp mp < <(measure bench/plain/run.sh "$tree" "$cpus")
	"$bin" diff -j "$cpus" "$tree" >/dev/null 2>&1 || true # fills the cache
	read -r tdw mdw < <(measure "$bin" diff -j "$cpus" "$tree")
	if [ -n "${TOUCH:-}" ]; then
		"$bin" diff -j "$cpus" "$copy" >/dev/null 2>&1 || true
		read -r tdt mdt < <(measure_touched "$copy" "$victim" "$bin" diff -j "$cpus" "$copy")
	fi
	# diff exits 1 when it has changes: under pipefail that would end the script
	procs=$({ "$bin" diff --no-cache -v -j "$cpus" "$tree" 2>&1 >/dev/null || true; } | sed -nE 's/^preemptify: ([0-9]+) spatch process.*\(([0-9]+) file runs.*/\1 processes, \2 file runs in shared ones/p')
	procs1=skipped
	[ -n "${QUICK:-}" ] || procs1=$({ "$bin" diff --no-cache -v -j "$cpus" --no-batch --no-slice "$tree" 2>&1 >/dev/null || true; } | sed -nE 's/^preemptify: ([0-9]+) spatch process.*/\1 processes/p')
	printf '\n%-36s %8s %12s\n' "rewrite" "seconds" "peak RSS KiB"
	printf '%-36s %8s %12s\n' "diff -j $cpus" "$td" "$md"
	printf '%-36s %8s %12s\n' "diff -j $cpus --no-batch --no-slice" "$tdn" "$mdn"
	printf '%-36s %8s %12s\n' "diff -j $cpus, warm cache" "$tdw" "$mdw"
	[ -n "${TOUCH:-}" ] && printf '%-36s %8s %12s\n' "diff -j $cpus, 1 file changed" "$tdt" "$mdt"
	printf '%-36s %8s %12s\n' "plain spatch, 4 patches, -j $cpus" "$tp" "$mp"
	printf 'spatch processes: %s (--no-batch --no-slice: %s)\n' "$procs" "$procs1"
	printf 'diff speed-up over plain Coccinelle (plain / diff) %s\n' "$(ratio "$tp" "$td")"
	[ -n "${QUICK:-}" ] || printf 'batching and slicing (--no-batch --no-slice / diff) %s\n' "$(ratio "$tdn" "$td")"
	printf 'warm diff over plain Coccinelle (plain / warm diff) %s\n' "$(ratio "$tp" "$tdw")"
	[ -n "${TOUCH:-}" ] && printf 'one file changed over warm (diff)  %s\n' "$(ratio "$tdt" "$tdw")"
fi
