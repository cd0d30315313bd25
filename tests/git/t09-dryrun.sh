#!/bin/bash
# --dry-run reports the commits it would make and writes nothing.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/r"
cd "$TMP/r"
{
	spec_for drivers/net/foo.c
	spec_for drivers/net/bar.c
	spec_for drivers/char/lp.c
} >"$TMP/spec"
state . >"$TMP/before"
"$TEST_REPO" commit --dry-run --group dir --branch dry "$TMP/spec" >"$TMP/out" || fail "dry run failed"
cat >"$TMP/expect" <<'O'
commit - net: use cond_resched()
  drivers/net/foo.c
  drivers/net/bar.c
commit - char: lp: use cond_resched()
  drivers/char/lp.c
O
test_cmp "$TMP/expect" "$TMP/out"
state . >"$TMP/after"
test_cmp "$TMP/before" "$TMP/after"
# a dry run still checks: a dirty file is reported
echo "/* edit */" >>drivers/net/bar.c
expect_fail "$TMP/err" "$TEST_REPO" commit --dry-run "$TMP/spec"
grep_q "drivers/net/bar.c: has uncommitted changes" "$TMP/err"
echo ok
