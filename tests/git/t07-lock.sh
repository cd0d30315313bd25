#!/bin/bash
# A locked index is a clear error, and nothing changes.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/r"
cd "$TMP/r"
spec_for drivers/net/foo.c >"$TMP/spec"
state . >"$TMP/before"
: >.git/index.lock
expect_fail "$TMP/err" "$TEST_REPO" commit "$TMP/spec"
grep_q ".git/index.lock exists: another git process is running" "$TMP/err"
[ -e .git/index.lock ] || fail "our lock check removed the user's lock"
rm .git/index.lock
state . >"$TMP/after"
test_cmp "$TMP/before" "$TMP/after"
git rev-parse -q --verify refs/preemptify/tip >/dev/null && fail "run recorded despite the error"
echo ok
