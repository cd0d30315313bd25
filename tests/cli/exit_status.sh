#!/usr/bin/env bash
# One rule for every command: the status answers the question the command
# asks. scan "any findings?", diff "any changes?" (as diff(1)); apply and
# commit "did it work?" (0 also with nothing to do, so `apply && make`
# works); 2 usage error (also a request that cannot be answered), 3 failure.
. "$(dirname "$0")/lib.sh"

run rules P999; expect_rc 2 "rules with an unknown rule"; expect_err "unknown rule 'P999' \(P001-P008 or a rule name\)" "rules names it and the range"

# series without a recorded commit run and without a RANGE: a usage error
git init -q norun && git -C norun -c user.name=T -c user.email=t@example.com commit -q --allow-empty -m init
run series -C norun -o norun-out; expect_rc 2 "series without a recorded run"
expect_err "no commit run recorded" "series says why"
run series -C norun 'HEAD...HEAD' -o norun-out; expect_rc 2 "series with a symmetric range"

have spatch "rewrite part" || { finish; exit $?; }

cp "$SRC/fixtures/drivers/char/lp_poll.c" a.c
run scan a.c; expect_rc 1 "scan with findings"
run diff a.c; expect_rc 1 "diff with changes"
run apply a.c; expect_rc 0 "apply that changed a file succeeded"; expect_out '^fixed a\.c' "apply wrote a.c"
run apply a.c; expect_rc 0 "apply with nothing to do"
run diff a.c; expect_rc 0 "diff without changes"

# commit: 0 with commits made, 0 with nothing to do
mkdir repo && cp "$SRC/fixtures/drivers/char/lp_poll.c" repo/b.c
export GIT_AUTHOR_NAME=T GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=T GIT_COMMITTER_EMAIL=t@example.com
(cd repo && git init -q . && git add b.c && git commit -qm import)
run commit repo/b.c; expect_rc 0 "commit that made a commit succeeded"
run commit repo/b.c; expect_rc 0 "commit with nothing to do"; expect_err "nothing to change" "commit says so"
# only hand work (an out-of-tree module with manual findings): nothing to commit, and not "done"
cp "$SRC/fixtures/drivers/block/loop_sleep_lock.c" repo/h.c && (cd repo && git add h.c && git commit -qm hand)
run commit repo/h.c; expect_rc 0 "commit with only hand work"
expect_err '^preemptify commit: nothing to commit; the 4 findings left need hand work$' "commit says what is left"
expect_no_err 'nothing to change|nothing left' "not as if it were done"
finish
