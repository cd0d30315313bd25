#!/bin/bash
# HEAD naming a branch that does not exist in a repository with history:
# refused (no orphan history of the rewritten files alone), nothing changed.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/r"
cd "$TMP/r"
spec_for drivers/net/foo.c >"$TMP/spec"
git symbolic-ref HEAD refs/heads/nosuch
state . >"$TMP/before"
expect_fail "$TMP/err" "$TEST_REPO" commit "$TMP/spec"
grep_q "HEAD points to refs/heads/nosuch, which does not exist" "$TMP/err"
state . >"$TMP/after"
test_cmp "$TMP/before" "$TMP/after"
git rev-parse -q --verify refs/heads/nosuch >/dev/null && fail "an orphan branch was created"
echo ok
