#!/usr/bin/env bash
# -q/--quiet, for every command: nothing on stderr but errors (no summary,
# notes or progress), except the one-line account of diff, apply and
# commit (its counts); stdout, the requested output, is unchanged.
. "$(dirname "$0")/lib.sh"

cp "$SRC/fixtures/drivers/char/lp_poll.c" a.c
run scan a.c; expect_rc 1 "scan"; expect_err '^preemptify: [0-9]+ findings' "scan: a summary without -q"
loud=$out
run scan -q a.c; expect_rc 1 "scan -q: same status"
[ -z "$err" ] && ok || bad "scan -q: stderr is empty"
[ "$out" = "$loud" ] && ok || bad "scan -q: the same findings on stdout"
run scan --quiet -q a.c missing.c; expect_rc 3 "scan -q with a missing file"
expect_out '^missing\.c: error: ' "scan -q: the error is still reported"
run explain -q a.c; expect_rc 0 "explain -q"; expect_out ": flagged \(" "explain -q (flagged)"; [ -z "$err" ] && ok || bad "explain -q: stderr is empty"
run rules -q P004; expect_rc 0 "rules -q"; expect_out '^P004 ' "rules -q prints the rule"
git init -q norun && git -C norun -c user.name=T -c user.email=t@example.com commit -q --allow-empty -m init
run series -q -C norun; expect_rc 2 "series -q without a run"; expect_err 'no commit run recorded' "series -q: the error is kept"

have spatch "rewrite part" || { finish; exit $?; }
run diff a.c; expect_rc 1 "diff"; expect_err '^preemptify: [0-9]+ sites? to fix in 1 file' "diff: a summary without -q"
loud=$out
run diff -q a.c; expect_rc 1 "diff -q"
expect_err_lines 1 "diff -q: one line on stderr"; expect_err '^preemptify: [0-9]+ sites? to fix in 1 file' "diff -q: the account's counts"
[ "$out" = "$loud" ] && ok || bad "diff -q: the same diff on stdout"
run diff -q a.c missing.c; expect_rc 3 "diff -q with a missing file"
expect_err '^missing\.c: error: ' "diff -q: the error is still on stderr"
cp a.c b.c
run apply -q a.c; expect_rc 0 "apply -q"
expect_err_lines 1 "apply -q: one line on stderr"; expect_err '^preemptify: [0-9]+ sites? fixed in 1 file' "apply -q: the account's counts"
expect_out '^fixed a\.c' "apply -q: the fixed line is output"
mkdir repo && mv b.c repo/
export GIT_AUTHOR_NAME=T GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=T GIT_COMMITTER_EMAIL=t@example.com
(cd repo && git init -q . && git add b.c && git commit -qm import)
run commit -q repo/b.c; expect_rc 0 "commit -q"
expect_err_lines 1 "commit -q: one line on stderr"; expect_err '^preemptify: [0-9]+ sites? committed in 1 file' "commit -q: the account's counts"
expect_out '^\[master [0-9a-f]{7}\]|^\[main [0-9a-f]{7}\]' "commit -q: the commit line is output"
finish
