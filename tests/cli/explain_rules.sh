#!/usr/bin/env bash
# explain FILE:LINE, explain FILE and rules.
. "$(dirname "$0")/lib.sh"

run rules; expect_rc 0 "rules"
for n in 1 2 3 4 5 6 7; do expect_out "^P00$n [a-z-]+$" "rules lists P00$n"; done
expect_out '^    fixes: define-per-cpu, get-cpu$' "P001 fix kinds"
expect_out '^    fixes: cond-resched, need-resched-call, yield, resched-flag$' "P004 fix kinds"
expect_out '^    fixes: none \(report only\)$' "report-only rules say so"
run rules cpu-id P005; expect_rc 0 "rules by name and code"
expect_out '^P003 cpu-id$' "rules P003 by name"; expect_out '^P005 noresched$' "rules P005 by code"
expect_no_out '^P001 ' "only the rules asked for"

clean_c ok.c
run explain ok.c:2; expect_rc 0 "explain of a line without sites"
expect_out '^ok\.c:2: no candidate site on this line$' "explain says there is nothing"
run explain ok.c:2:1:; expect_rc 0 "explain accepts FILE:LINE:COL: as printed by scan"
# a CPU slot held across a lock/unlock pair: refused with the partner named
run explain "$SRC/fixtures/drivers/port/slot_pair.c:25"; expect_rc 0 "explain a flagged slot-pair site"; expect_out ": flagged \(" "explain a flagged slot-pair site (flagged)"
expect_out 'fix: none' "a slot pair is not fixed"
expect_out 'stat_leave\(\) \(line 34\)' "the refusal names the other function and its line"
# FILE alone: every site of the file, flagged and protected
run explain "$SRC/fixtures/drivers/char/nvram_compat.c"; expect_rc 0 "explain FILE with a flagged site"; expect_out ": flagged \(" "explain FILE with a flagged site (flagged)"
if [ "$(printf '%s\n' "$out" | grep -c 'nvram_compat\.c:[0-9]*:[0-9]*: P004 resched: ')" -eq 3 ]; then ok
else bad "explain FILE shows the file's three P004 sites"; fi
expect_out 'nvram_compat\.c:117:7: P004 resched: flagged' "the flagged one among them"
# a flagged site explained is done (exit 0, above), and --help says so
run --help; expect_out "^  explain, apply, commit, series, rules: 0 done" "--help: explain exits 0 once explained"
expect_no_out "explain: 0 no findings" "--help: no findings status for explain"
run explain ok.c; expect_rc 0 "explain FILE without sites"
expect_out '^ok\.c: no candidate site in this file$' "explain FILE says there is nothing"
run explain missing.c:3; expect_rc 3 "explain of a missing file"; expect_err 'missing\.c' "explain names it"
finish
