#!/bin/bash
# A locked branch ref (refs/heads/main.lock left by a crashed git): the run
# fails before any file is written, names the lock and its reason, records
# no run, and leaves the user's lock in place.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/r"
cd "$TMP/r"
spec_for drivers/net/foo.c >"$TMP/spec"
state . >"$TMP/before"
branch=$(git symbolic-ref HEAD)
: >".git/$branch.lock"
expect_fail "$TMP/err" "$TEST_REPO" commit "$TMP/spec"
grep_q "$branch.lock" "$TMP/err"
grep_q "the lock file exists" "$TMP/err"
[ -e ".git/$branch.lock" ] || fail "the user's lock was removed"
rm ".git/$branch.lock"
state . >"$TMP/after"
test_cmp "$TMP/before" "$TMP/after"
git rev-parse -q --verify refs/preemptify/tip >/dev/null && fail "run recorded despite the error"
git rev-parse -q --verify refs/preemptify/base >/dev/null && fail "base recorded despite the error"
echo ok
