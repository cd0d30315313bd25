#!/bin/bash
# A file marked assume-unchanged or skip-worktree: git stops looking at it,
# so its status says clean whatever the user changed. Refused like a file
# with uncommitted changes (the user may have edits there), nothing written;
# --skip-dirty leaves it out and commits the others.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/r"
cd "$TMP/r"
for mark in assume-unchanged skip-worktree; do
	git update-index "--$mark" drivers/char/lp.c
	echo "/* my local setting */" >>drivers/char/lp.c
	[ -z "$(git status --porcelain)" ] || fail "setup: $mark should hide the edit"
	{
		spec_for drivers/net/foo.c
		spec_for drivers/char/lp.c
	} >"$TMP/spec"
	state . >"$TMP/before"
	expect_fail "$TMP/err" "$TEST_REPO" commit "$TMP/spec"
	grep_q "drivers/char/lp.c: marked $mark in the index, so git does not look at it and you may have edits here" "$TMP/err"
	grep_q "git update-index --no-$mark drivers/char/lp.c" "$TMP/err"
	state . >"$TMP/after"
	test_cmp "$TMP/before" "$TMP/after"
	git log -p | grep -q "my local setting" && fail "$mark: the user's edit was committed"

	"$TEST_REPO" commit --skip-dirty "$TMP/spec" >"$TMP/out" || fail "$mark: --skip-dirty failed"
	grep_q "skipped drivers/char/lp.c" "$TMP/out"
	[ "$(git show --name-only --format= HEAD)" = drivers/net/foo.c ] || fail "$mark: wrong file committed"
	git log -p | grep -q "my local setting" && fail "$mark: the user's edit was committed"
	grep -q "my local setting" drivers/char/lp.c || fail "$mark: the user's edit is gone"
	git update-index "--no-$mark" drivers/char/lp.c
	git checkout -q -- drivers/char/lp.c
	git reset -q --hard HEAD~1
done
echo ok
