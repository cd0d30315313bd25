#!/usr/bin/env bash
# Mutation run: do the tests catch a regression in critical code?
#
#   scripts/mutate.sh [--fast] [--only REGEX] [--timeout S] [--list] [MUTANTS_FILE]
#
# Each mutant in MUTANTS_FILE (default scripts/mutants.txt) is one small
# change, found by its exact original text anywhere under src/ (not by file
# or line: code moves between files). One at a time, in a scratch copy of
# the working tree (the tree itself is never touched), the mutant is
# applied, the copy rebuilt and ctest run; a failing test "kills" it.
#
#   killed     a test failed (the first failing tests are named)
#   survived   every test passed: a gap, or an equivalent mutant (say which
#              in the mutants file)
#   stale      the original text is not found exactly once under src/ (the
#              code changed: update the mutant); not counted in the score
#   no-build   the mutant does not compile; not counted
#
# Tests run cheap ones first and stop at the first failure: phase 1 is the
# unit and golden tests and the short CLI tests, phase 2 the rest (both
# with ctest -j2 and a per-test timeout). Tests that cannot see a change in
# src/ (the standalone .cocci runs, the fixture compiles) are never run.
# --fast runs phase 1 only (a quick estimate; survivors may be killed by
# phase 2). --only REGEX keeps the mutants whose id matches. Not part of CI:
# a full run takes about an hour on two cores.
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
mutants=$here/scripts/mutants.txt
fast=0 only= timeout=300 list=0
while [ $# -gt 0 ]; do
	case $1 in
	--fast) fast=1 ;;
	--only) only=$2; shift ;;
	--timeout) timeout=$2; shift ;;
	--list) list=1 ;;
	-h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "mutate.sh: unknown option $1" >&2; exit 2 ;;
	*) mutants=$1 ;;
	esac
	shift
done

# Tests that read nothing built from src/, and the slow tests for phase 2.
never='^(cocci_|fixtures_|cli_sarif_schema_fetch|cli_man_page|cli_rules_doc|cli_checkpatch)'
slow='^(cli_tree|cli_soa|cli_interrupt|cli_formats|rewrite_fake-hang|rewrite_fixture_tree|rewrite_slice|git_e2e_fixture_tree|cli_quiet|git_t18-since|cli_outputs|rewrite_fixtures|rewrite_fake-|rewrite_modern|rewrite_array-together|cli_progress|cli_rounds|cli_identity|cli_exit_status|cli_bringup|cli_files|cli_config)'

# parse MUTANTS_FILE -> records "id<TAB>hint<TAB>from<TAB>to" (tabs in text as \t)
parse() {
	python3 - "$1" <<'PY'
import sys
recs, cur = [], None
for n, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    line = line.rstrip("\n")
    if line.startswith("@ "):
        if cur: recs.append(cur)
        parts = line[2:].split()
        cur = {"id": parts[0], "hint": parts[1] if len(parts) > 1 else "", "from": None, "to": None, "line": n}
    elif line.startswith("- ") and cur is not None:
        cur["from"] = line[2:]
    elif line.startswith("+ ") and cur is not None:
        cur["to"] = line[2:]
    elif line == "+" and cur is not None:
        cur["to"] = ""
if cur: recs.append(cur)
for r in recs:
    if r["from"] is None or r["to"] is None:
        sys.exit(f"{sys.argv[1]}:{r['line']}: mutant {r['id']} needs a '- ' and a '+ ' line")
    esc = lambda s: s.replace("\t", "\\t")  # the file's escapes are decoded when applied
    print("\t".join([r["id"], r["hint"], esc(r["from"]), esc(r["to"])]))
PY
}

# apply ROOT FROM TO: replaces the one occurrence of FROM under ROOT/src; prints the file;
# exit 3 when FROM is not found exactly once
apply_mutant() {
	python3 - "$1" "$2" "$3" <<'PY'
import os, sys
root, frm, to = sys.argv[1], sys.argv[2], sys.argv[3]
unesc = lambda s: s.encode().decode("unicode_escape") if "\\" in s else s
frm, to = unesc(frm), unesc(to)
hits = []
for d, _, fs in os.walk(os.path.join(root, "src")):
    for f in fs:
        if f.endswith((".c", ".h", ".def")):
            p = os.path.join(d, f)
            t = open(p, encoding="utf-8", errors="surrogateescape").read()
            k = t.count(frm)
            if k:
                hits.append((p, t, k))
if len(hits) != 1 or hits[0][2] != 1:
    print(", ".join(f"{os.path.relpath(p, root)} x{k}" for p, _, k in hits) or "not found")
    sys.exit(3)
p, t, _ = hits[0]
open(p, "w", encoding="utf-8", errors="surrogateescape").write(t.replace(frm, to))
print(os.path.relpath(p, root))
PY
}

records=$(parse "$mutants") || exit 2
[ -n "$only" ] && records=$(printf '%s\n' "$records" | awk -F'\t' -v re="$only" '$1 ~ re')
if [ "$list" -eq 1 ]; then
	printf '%s\n' "$records" | cut -f1,2
	exit 0
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/preemptify-mutate-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
chmod 755 "$scratch" # tests/cli/files.sh runs the binary as nobody
echo "mutate: copying the tree to $scratch and building it once" >&2
(cd "$here" && git ls-files -co --exclude-standard -z | grep -zv '^build/' |
	xargs -0 cp --parents -t "$scratch") || exit 2
# no -Werror: a mutant that leaves a parameter unused is still a behaviour to test
cmake -S "$scratch" -B "$scratch/build" -DPREEMPTIFY_WERROR=OFF \
	${PREEMPTIFY_GRAMMAR_TARBALL:+-DPREEMPTIFY_GRAMMAR_TARBALL=$PREEMPTIFY_GRAMMAR_TARBALL} >/dev/null || exit 2
cmake --build "$scratch/build" -j2 >"$scratch/build.log" 2>&1 || { tail -20 "$scratch/build.log"; exit 2; }
tests_all=$(ctest --test-dir "$scratch/build" -N | sed -n 's/^ *Test *#[0-9]*: //p' | grep -Ev "$never")
phase1=$(printf '%s\n' "$tests_all" | grep -Ev "$slow" | paste -sd'|')
phase2=$(printf '%s\n' "$tests_all" | grep -E "$slow" | paste -sd'|')

# run_phase REGEX: 0 when every test passed; the failing tests in $scratch/failed
run_phase() {
	[ -n "$1" ] || return 0
	ctest --test-dir "$scratch/build" -j2 --timeout "$timeout" --stop-on-failure -R "^($1)\$" \
		>"$scratch/ctest.log" 2>&1
	local rc=$?
	sed -n 's/^[[:space:]]*[0-9]* - \([^ ]*\) (\(Failed\|Timeout\|Not Run\|SEGFAULT\|Subprocess aborted\|Exception\)).*/\1/p' \
		"$scratch/ctest.log" | paste -sd' ' >"$scratch/failed"
	return $rc
}

# the unmutated tree must pass, or every mutant would look killed
if [ "${MUTATE_SKIP_BASELINE:-0}" != 1 ]; then
	echo "mutate: the unmutated tree first" >&2
	run_phase "$phase1" && { [ "$fast" -eq 1 ] || run_phase "$phase2"; } ||
		{ echo "mutate: the unmutated tree fails: $(cat "$scratch/failed")" >&2; tail -25 "$scratch/ctest.log" >&2; exit 2; }
fi

killed=0 survived=0 stale=0 nobuild=0 n=0
results=$scratch/results
: >"$results"
while IFS=$'\t' read -r id hint from to; do
	[ -n "$id" ] || continue
	n=$((n + 1))
	start=$(date +%s)
	file=$(apply_mutant "$scratch" "$from" "$to")
	if [ $? -ne 0 ]; then
		stale=$((stale + 1))
		printf '%-28s %-9s %s\n' "$id" stale "original text: $file (hint: $hint)" | tee -a "$results"
		continue
	fi
	verdict= detail=
	if ! cmake --build "$scratch/build" -j2 >"$scratch/build.log" 2>&1; then
		nobuild=$((nobuild + 1)) verdict=no-build detail=$(grep -m1 'error' "$scratch/build.log")
	elif ! run_phase "$phase1"; then
		killed=$((killed + 1)) verdict=killed detail="by $(cat "$scratch/failed")"
	elif [ "$fast" -eq 1 ]; then
		survived=$((survived + 1)) verdict=survived detail="(phase 1 only)"
	elif ! run_phase "$phase2"; then
		killed=$((killed + 1)) verdict=killed detail="by $(cat "$scratch/failed") (phase 2)"
	else
		survived=$((survived + 1)) verdict=survived
	fi
	printf '%-28s %-9s %s [%s, %ss]\n' "$id" "$verdict" "$detail" "$file" $(($(date +%s) - start)) | tee -a "$results"
	# undo: the pristine file back from the working tree
	cp "$here/$file" "$scratch/$file"
done <<<"$records"

counted=$((killed + survived))
echo
echo "mutants: $n; killed $killed, survived $survived, stale $stale, no-build $nobuild"
if [ "$counted" -gt 0 ]; then
	echo "mutation score: $killed/$counted = $((100 * killed / counted))%"
fi
grep -E '^[^ ]+ +survived' "$results" | sed 's/^/survivor: /'
[ "$stale" -eq 0 ]
