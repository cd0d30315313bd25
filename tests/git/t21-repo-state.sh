#!/bin/bash
# A merge, cherry-pick, revert, rebase or bisect left unfinished: refused
# with the git command that ends it, before anything is written.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/r"
cd "$TMP/r"
git checkout -q -b side
echo side >README
git commit -q -am "readme: side"
git checkout -q main
echo main >README
git commit -q -am "readme: main"
spec_for drivers/net/foo.c >"$TMP/spec"

# refused ITEM TEXT: the run fails naming what is in progress and how to end it; nothing changes
refused() {
	state . >"$TMP/before"
	expect_fail "$TMP/err" "$TEST_REPO" commit "$TMP/spec"
	grep_q "$1 is in progress in this repository; preemptify will not commit in the middle of it: $2" "$TMP/err"
	state . >"$TMP/after"
	test_cmp "$TMP/before" "$TMP/after"
}

git merge -q side >/dev/null 2>&1 && fail "setup: the merge should conflict"
refused "a merge" "finish it with git commit, or abort it with git merge --abort"
git merge --abort

git cherry-pick side >/dev/null 2>&1 && fail "setup: the cherry-pick should conflict"
refused "a cherry-pick" "git cherry-pick --continue, or git cherry-pick --abort"
git cherry-pick --abort

echo revert-me >drivers/char/lp.c
git commit -q -am "lp: to revert"
echo conflicting >drivers/char/lp.c
git commit -q -am "lp: on top"
git revert --no-edit HEAD~1 >/dev/null 2>&1 && fail "setup: the revert should conflict"
refused "a revert" "git revert --continue, or git revert --abort"
git revert --abort

git checkout -q side
git rebase main >/dev/null 2>&1 && fail "setup: the rebase should conflict"
refused "a rebase" "git rebase --continue, or git rebase --abort"
git rebase --abort
git checkout -q main

git bisect start HEAD HEAD~3 >/dev/null
refused "a bisect" "end it with git bisect reset"
git bisect reset >/dev/null 2>&1

"$TEST_REPO" commit "$TMP/spec" >/dev/null || fail "commit after the operations ended failed"
echo ok
