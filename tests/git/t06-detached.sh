#!/bin/bash
# Detached HEAD: refused without a branch, works with one; --branch from a
# branch switches HEAD to the new one; an existing branch is refused unless
# forced (then reset to HEAD and used).
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/r"
cd "$TMP/r"
base=$(git rev-parse HEAD)
git checkout -q --detach
spec_for drivers/net/foo.c >"$TMP/spec"
state . >"$TMP/before"
expect_fail "$TMP/err" "$TEST_REPO" commit "$TMP/spec"
grep_q "HEAD is detached; give a branch name (--branch NAME)" "$TMP/err"
state . >"$TMP/after"
test_cmp "$TMP/before" "$TMP/after"

"$TEST_REPO" commit --branch preempt "$TMP/spec" >/dev/null || fail "commit with --branch failed"
[ "$(git symbolic-ref HEAD)" = refs/heads/preempt ] || fail "HEAD not on the new branch"
[ "$(git rev-parse preempt~1)" = "$base" ] || fail "branch not created from HEAD"
[ "$(git rev-parse main)" = "$base" ] || fail "main moved"
[ -z "$(git status --porcelain)" ] || fail "status not clean"

# from a branch: --branch switches HEAD to the new one, as git switch -c does;
# the branch left keeps the originals, and switching back gives them back
git checkout -q main
spec_for drivers/char/lp.c >"$TMP/spec"
"$TEST_REPO" commit --branch port "$TMP/spec" >/dev/null || fail "commit --branch from main failed"
[ "$(git symbolic-ref HEAD)" = refs/heads/port ] || fail "HEAD did not switch to port"
[ "$(git rev-parse port~1)" = "$base" ] && [ "$(git rev-parse main)" = "$base" ] || fail "port not on main"
[ -z "$(git status --porcelain)" ] || fail "status not clean on port"
git checkout -q main
git diff --quiet "$base" -- drivers/char/lp.c && [ -z "$(git status --porcelain)" ] || fail "main's files not back"

# an existing other branch: refused, then forced
git branch other "$base"
git checkout -q main
spec_for drivers/char/lp.c >"$TMP/spec"
state . >"$TMP/before"
expect_fail "$TMP/err" "$TEST_REPO" commit --branch other "$TMP/spec"
grep_q "branch 'other' already exists; use --force" "$TMP/err"
state . >"$TMP/after"
test_cmp "$TMP/before" "$TMP/after"
git commit -q --allow-empty -m "main moves on"
main=$(git rev-parse HEAD)
"$TEST_REPO" commit --branch other --force "$TMP/spec" >/dev/null || fail "forced branch failed"
[ "$(git symbolic-ref HEAD)" = refs/heads/other ] || fail "HEAD not on other"
[ "$(git rev-parse other~1)" = "$main" ] || fail "other not reset to HEAD"

# the current branch named explicitly just commits there
spec_for fs/jbd/commit.c >"$TMP/spec"
"$TEST_REPO" commit --branch other "$TMP/spec" >/dev/null || fail "commit on the current branch failed"
[ "$(git log -1 --format=%s other)" = "jbd: commit: use cond_resched()" ] || fail "not committed on other"

expect_fail "$TMP/err" "$TEST_REPO" commit --branch "bad..name" "$TMP/spec"
grep_q "not a valid branch name" "$TMP/err"
echo ok
