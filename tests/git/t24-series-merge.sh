#!/bin/bash
# A range holding a merge commit is refused before any patch is written.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/r"
cd "$TMP/r"
base=$(git rev-parse HEAD)
echo a >>drivers/net/foo.c
git commit -q -am "foo: a"
echo b >>drivers/net/foo.c
git commit -q -am "foo: b"
git checkout -q -b side HEAD~2
echo c >>drivers/char/lp.c
git commit -q -am "lp: c"
git checkout -q main
git merge -q --no-edit side
echo d >>fs/jbd/commit.c
git commit -q -am "jbd: d"
expect_fail "$TMP/err" "$TEST_REPO" series --range "$base..HEAD" "$TMP/out"
[ ! -e "$TMP/out" ] || [ -z "$(ls -A "$TMP/out")" ] || fail "patches written: $(ls "$TMP/out" | tr '\n' ' ')"
grep_q "$(git rev-parse HEAD~1) is a merge commit; a patch series cannot contain merges, so nothing was written" "$TMP/err"
# with --no-cover too, and an existing output directory stays empty
mkdir "$TMP/out2"
expect_fail "$TMP/err" "$TEST_REPO" series --range "$base..HEAD" --no-cover "$TMP/out2"
[ -z "$(ls -A "$TMP/out2")" ] || fail "patches written: $(ls "$TMP/out2")"
# the part after the merge still works
"$TEST_REPO" series --range HEAD~1..HEAD "$TMP/out3" >/dev/null || fail "series after the merge failed"
echo ok
