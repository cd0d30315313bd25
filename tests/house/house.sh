#!/usr/bin/env bash
# The house rules, checked: no src/**/*.c over 800 lines, no function over 80,
# folders included only from the same floor or above (util < parse < analysis
# < rules < pipeline < fix < git < cli), and every src/**/*.c named in
# docs/ARCHITECTURE.md. Usage: house.sh SRC_DIR
set -u
cd "$1" || exit 2
fail=0 pass=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

floor() {
	case $1 in
	util) echo 0 ;; parse) echo 1 ;; analysis) echo 2 ;; rules) echo 3 ;;
	pipeline) echo 4 ;; fix) echo 5 ;; git) echo 6 ;; cli) echo 7 ;; *) echo 99 ;;
	esac
}

for f in $(find src -name '*.c' | sort); do
	n=$(wc -l <"$f")
	[ "$n" -le 800 ] || bad "$f has $n lines (at most 800)"
done
[ "$fail" -eq 0 ] && pass=$((pass + 1))

# a function: its signature's last line at column 0, `{` at column 0, `}` at column 0
long=$(find src -name '*.c' | sort | xargs awk '
	/^[A-Za-z_].*\(/ { sig = $0; sigline = FNR }
	/^\{/ { start = FNR; name = sig; sub(/\(.*/, "", name); n = split(name, a, /[ *]+/); name = a[n] }
	/^\}/ { if (start) { len = FNR - sigline + 1; if (len > 80) printf "%s:%d %s() has %d lines (at most 80)\n", FILENAME, sigline, name, len; start = 0 } }')
if [ -n "$long" ]; then while IFS= read -r l; do bad "$l"; done <<<"$long"; else pass=$((pass + 1)); fi

up=0
for f in $(find src -name '*.[ch]' | sort); do
	from=$(echo "$f" | cut -d/ -f2)
	while IFS= read -r inc; do
		to=${inc%%/*}
		if [ "$(floor "$to")" -gt "$(floor "$from")" ]; then
			bad "$f includes $inc: $from/ must not look up to $to/"
			up=1
		fi
	done < <(sed -n 's/^#include "\([a-z_]*\/[^"]*\)".*/\1/p' "$f")
done
[ "$up" -eq 0 ] && pass=$((pass + 1))

unnamed=0
for f in $(find src -name '*.c' | sort); do
	b=$(basename "$f")
	grep -q "\`$b\`" docs/ARCHITECTURE.md || { bad "$f is not named in docs/ARCHITECTURE.md"; unnamed=1; }
done
[ "$unnamed" -eq 0 ] && pass=$((pass + 1))

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
