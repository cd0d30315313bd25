#!/bin/bash
# A file with uncommitted changes (worktree or index) is refused by name,
# and the whole run stops before anything is written; so is an untracked
# file and a file changed since it was read.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/r"
cd "$TMP/r"

# worktree change in lp.c; foo.c is clean but listed first
echo "/* local edit */" >>drivers/char/lp.c
{
	spec_for drivers/net/foo.c
	spec_for drivers/char/lp.c
} >"$TMP/spec"
state . >"$TMP/before"
expect_fail "$TMP/err" "$TEST_REPO" commit "$TMP/spec"
grep_q "drivers/char/lp.c: has uncommitted changes (in the working tree)" "$TMP/err"
state . >"$TMP/after"
test_cmp "$TMP/before" "$TMP/after"

# staged change
git checkout -q -- drivers/char/lp.c
echo "/* staged edit */" >>drivers/char/lp.c
git add drivers/char/lp.c
{
	spec_for drivers/char/lp.c
} >"$TMP/spec"
state . >"$TMP/before"
expect_fail "$TMP/err" "$TEST_REPO" commit "$TMP/spec"
grep_q "drivers/char/lp.c: has uncommitted changes (staged)" "$TMP/err"
state . >"$TMP/after"
test_cmp "$TMP/before" "$TMP/after"
git reset -q --hard

# untracked file
write_driver drivers/net/new.c
spec_for drivers/net/new.c >"$TMP/spec"
state . >"$TMP/before"
expect_fail "$TMP/err" "$TEST_REPO" commit "$TMP/spec"
grep_q "drivers/net/new.c: not tracked by git" "$TMP/err"
state . >"$TMP/after"
test_cmp "$TMP/before" "$TMP/after"
rm drivers/net/new.c

# changed on disk (and committed) after the rewrite read it
cp drivers/net/foo.c "$TMP/foo.read"
echo "file drivers/net/foo.c $(new_text . drivers/net/foo.c) $TMP/foo.read" >"$TMP/spec"
echo "/* raced */" >>drivers/net/foo.c
git add drivers/net/foo.c && git commit -q -m "raced edit"
state . >"$TMP/before"
expect_fail "$TMP/err" "$TEST_REPO" commit "$TMP/spec"
grep_q "drivers/net/foo.c: changed since it was read" "$TMP/err"
state . >"$TMP/after"
test_cmp "$TMP/before" "$TMP/after"
echo ok
