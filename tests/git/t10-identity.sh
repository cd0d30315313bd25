#!/bin/bash
# No identity configured: an error saying how to set one; nothing changes.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/r"
cd "$TMP/r"
git config --unset user.name
git config --unset user.email
spec_for drivers/net/foo.c >"$TMP/spec"
state . >"$TMP/before"
expect_fail "$TMP/err" "$TEST_REPO" commit "$TMP/spec"
grep_q 'git config user.name "Your Name"' "$TMP/err"
grep_q "git config user.email" "$TMP/err"
state . >"$TMP/after"
test_cmp "$TMP/before" "$TMP/after"
# an identity in the (throwaway) global config is used
git config --global user.name "Global Person"
git config --global user.email "global@example.com"
"$TEST_REPO" commit "$TMP/spec" >/dev/null || fail "commit with global identity failed"
[ "$(git log -1 --format='%an <%ae>')" = "Global Person <global@example.com>" ] || fail "global identity not used"
echo ok
