#!/bin/bash
# The user's other work is left alone: a staged path stays staged and out
# of our commits; unstaged edits and untracked files stay as they were.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/r"
cd "$TMP/r"
base=$(git rev-parse HEAD)
echo "staged change" >>README
git add README
echo "/* unstaged */" >>fs/jbd/commit.c
echo "new" >notes.txt
git status --porcelain >"$TMP/status.before"
git diff --cached >"$TMP/cached.before"
git diff >"$TMP/unstaged.before"
{
	spec_for drivers/net/foo.c
	spec_for drivers/char/lp.c
} >"$TMP/spec"
"$TEST_REPO" commit "$TMP/spec" >/dev/null || fail "commit failed"

git diff --name-only "$base" HEAD >"$TMP/committed"
printf '%s\n' drivers/char/lp.c drivers/net/foo.c >"$TMP/expect"
test_cmp "$TMP/expect" "$TMP/committed"
git status --porcelain >"$TMP/status.after"
test_cmp "$TMP/status.before" "$TMP/status.after"
git diff --cached >"$TMP/cached.after"
test_cmp "$TMP/cached.before" "$TMP/cached.after"
git diff >"$TMP/unstaged.after"
test_cmp "$TMP/unstaged.before" "$TMP/unstaged.after"
[ "$(git show HEAD:README)" = readme ] || fail "the staged README went into a commit"
echo ok
