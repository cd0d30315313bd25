#!/bin/bash
# Nothing to change: no commit, success; files whose rewrite failed are
# skipped as unchanged; no branch is created and no run recorded.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/r"
cd "$TMP/r"
{
	echo "file drivers/net/foo.c -"
	echo "file drivers/char/lp.c $(new_text . drivers/char/lp.c)"
	echo "error spatch timed out"
} >"$TMP/spec"
state . >"$TMP/before"
"$TEST_REPO" commit --branch never "$TMP/spec" >"$TMP/out" || fail "no-op commit failed"
printf '%s\n' "unchanged drivers/net/foo.c" "unchanged drivers/char/lp.c" >"$TMP/expect"
test_cmp "$TMP/expect" "$TMP/out"
state . >"$TMP/after"
test_cmp "$TMP/before" "$TMP/after"
git rev-parse -q --verify refs/heads/never >/dev/null && fail "branch created for nothing"
echo ok
