#!/bin/bash
# --skip-dirty: a file with uncommitted changes (worktree or staged) is
# left out and listed, the other files are committed, and the dirty files
# keep exactly the user's edits. Other refusals still stop the whole run.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/r"
cd "$TMP/r"
echo "/* local edit */" >>drivers/char/lp.c
echo "/* staged edit */" >>fs/jbd/commit.c
git add fs/jbd/commit.c
cp drivers/char/lp.c "$TMP/lp.mine"
cp fs/jbd/commit.c "$TMP/jbd.mine"
{
	spec_for drivers/net/foo.c
	spec_for drivers/char/lp.c
	spec_for fs/jbd/commit.c
	spec_for drivers/net/bar.c
} >"$TMP/spec"

# without the option: the whole run stops, as before
expect_fail "$TMP/err" "$TEST_REPO" commit "$TMP/spec"
grep_q "drivers/char/lp.c: has uncommitted changes" "$TMP/err"

"$TEST_REPO" commit --skip-dirty "$TMP/spec" >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err"; fail "commit --skip-dirty failed"; }
cat >"$TMP/expect" <<'X'
  drivers/net/foo.c
  drivers/net/bar.c
skipped drivers/char/lp.c
skipped fs/jbd/commit.c
X
grep -v '^commit ' "$TMP/out" >"$TMP/got"
test_cmp "$TMP/expect" "$TMP/got"
[ "$(git rev-list --count HEAD)" -eq 3 ] || fail "expected 2 new commits"
git show --stat --format= HEAD~1 HEAD | grep -c '|' | grep -qx 2 || fail "commits touch more than foo.c and bar.c"
cmp -s drivers/char/lp.c "$TMP/lp.mine" || fail "lp.c lost the user's edit"
cmp -s fs/jbd/commit.c "$TMP/jbd.mine" || fail "commit.c lost the user's edit"
git status --porcelain >"$TMP/status"
printf ' M drivers/char/lp.c\nM  fs/jbd/commit.c\n' >"$TMP/expect"
test_cmp "$TMP/expect" "$TMP/status"

# only dirty files: success with no commit
spec_for drivers/char/lp.c >"$TMP/spec2"
"$TEST_REPO" commit --skip-dirty "$TMP/spec2" >"$TMP/out" || fail "all skipped should still succeed"
printf 'skipped drivers/char/lp.c\n' >"$TMP/expect"
test_cmp "$TMP/expect" "$TMP/out"

# an untracked file is not "dirty": still refused, nothing written
write_driver drivers/net/new.c
{
	spec_for drivers/char/lp.c
	spec_for drivers/net/new.c
} >"$TMP/spec3"
state . >"$TMP/before"
expect_fail "$TMP/err" "$TEST_REPO" commit --skip-dirty "$TMP/spec3"
grep_q "drivers/net/new.c: not tracked by git" "$TMP/err"
state . >"$TMP/after"
test_cmp "$TMP/before" "$TMP/after"
echo ok
