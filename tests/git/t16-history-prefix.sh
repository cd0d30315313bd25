#!/bin/bash
# The subject prefix is learned from the file's own history: the most
# common "prefix: " of the last commits touching it, over the path-derived
# one; a file with no such history keeps the path's; --prefix still wins.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/r"
cd "$TMP/r"
hist() { # FILE SUBJECT: a commit touching FILE
	echo "/* $2 */" >>"$1"
	git commit -q -am "$2"
}
hist drivers/char/lp.c "lp: fix the strobe timing"
hist drivers/char/lp.c "char: lp: use the new parport API"
hist drivers/char/lp.c "lp: drop a stale comment"
# other files' prefixes do not count: more of them than lp.c's own
hist drivers/net/bar.c "nic: bar: a"
hist drivers/net/bar.c "nic: bar: b"
hist drivers/net/bar.c "nic: bar: c"
hist drivers/net/bar.c "nic: bar: d"
# a merge-like or prefixless subject does not count either
hist fs/jbd/commit.c "Fix a typo"
{
	spec_for drivers/char/lp.c
	spec_for drivers/net/foo.c
	spec_for fs/jbd/commit.c
} >"$TMP/spec"

"$TEST_REPO" commit --dry-run "$TMP/spec" >"$TMP/out" || fail "dry run failed"
cat >"$TMP/expect" <<'X'
commit - lp: use cond_resched()
  drivers/char/lp.c
commit - net: foo: use cond_resched()
  drivers/net/foo.c
commit - jbd: commit: use cond_resched()
  fs/jbd/commit.c
X
test_cmp "$TMP/expect" "$TMP/out"

# --prefix wins over the history
"$TEST_REPO" commit --dry-run --prefix "char: lp" "$TMP/spec" >"$TMP/out" || fail "dry run --prefix failed"
grep_q "commit - char: lp: use cond_resched()" "$TMP/out"

# one commit per directory: the history of the group's files
hist drivers/net/foo.c "nic: foo: x"
hist drivers/net/bar.c "e100: y"
{
	spec_for drivers/net/foo.c
	spec_for drivers/net/bar.c
} >"$TMP/spec2"
"$TEST_REPO" commit --dry-run --group dir "$TMP/spec2" >"$TMP/out" || fail "dry run --group dir failed"
grep_q "commit - nic: use cond_resched()" "$TMP/out"
# nothing shared between the files' prefixes: the paths' common prefix
hist drivers/net/foo.c "e1000: x"
hist drivers/net/foo.c "e1000: y"
"$TEST_REPO" commit --dry-run --group dir "$TMP/spec2" >"$TMP/out" || fail "dry run --group dir failed"
grep_q "commit - net: use cond_resched()" "$TMP/out"

# the real run uses it too; a tie (2 "lp", 2 "char: lp") goes to the most recent
hist drivers/char/lp.c "char: lp: newest"
spec_for drivers/char/lp.c >"$TMP/spec3"
"$TEST_REPO" commit "$TMP/spec3" >/dev/null || fail "commit failed"
[ "$(git log -1 --format=%s)" = "char: lp: use cond_resched()" ] || fail "subject: $(git log -1 --format=%s)"
echo ok
