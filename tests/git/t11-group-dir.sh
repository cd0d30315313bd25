#!/bin/bash
# --group dir: one commit per directory, named by the common prefix;
# --prefix overrides the path-derived prefix.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/r"
cd "$TMP/r"
base=$(git rev-parse HEAD)
{
	spec_for drivers/net/foo.c
	spec_for drivers/char/lp.c
	spec_for drivers/net/bar.c
} >"$TMP/spec"
"$TEST_REPO" commit --group dir "$TMP/spec" >/dev/null || fail "commit --group dir failed"
git log --format=%s "$base"..HEAD >"$TMP/subjects"
printf '%s\n' "char: lp: use cond_resched()" "net: use cond_resched()" >"$TMP/expect"
test_cmp "$TMP/expect" "$TMP/subjects"
git show --name-only --format= HEAD~1 >"$TMP/names"
printf '%s\n' drivers/net/bar.c drivers/net/foo.c >"$TMP/expect"
test_cmp "$TMP/expect" "$TMP/names"
git log -1 --format=%B HEAD~1 >"$TMP/msg"
grep_q "drivers/net/foo.c:" "$TMP/msg"
grep_q "drivers/net/bar.c:" "$TMP/msg"

spec_for fs/jbd/commit.c >"$TMP/spec"
"$TEST_REPO" commit --prefix "ext3: jbd:" "$TMP/spec" >/dev/null || fail "commit --prefix failed"
[ "$(git log -1 --format=%s)" = "ext3: jbd: use cond_resched()" ] || fail "prefix override: $(git log -1 --format=%s)"
echo ok
