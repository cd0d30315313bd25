#!/bin/bash
# Unborn HEAD (no commit yet): a commit would add the user's whole file,
# already fixed, their original never in history. Every file is refused,
# untracked or staged, with the reason, and nothing is written; nothing to
# change is still success. A series of root commits (made by git) still
# works: the default range is the whole history when no base is recorded.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

git init -q -b main "$TMP/r"
cd "$TMP/r"
git config user.name "A U Thor"
git config user.email "author@example.com"
write_driver drivers/net/foo.c
write_driver drivers/char/lp.c
git add drivers/char/lp.c
for f in drivers/net/foo.c drivers/char/lp.c; do
	spec_for $f >"$TMP/spec"
	state . >"$TMP/before"
	expect_fail "$TMP/err" "$TEST_REPO" commit "$TMP/spec"
	grep_q "$f: the branch has no commit yet, so committing it would add your whole file" "$TMP/err"
	grep_q "commit the original first (git add, git commit)" "$TMP/err"
	state . >"$TMP/after"
	test_cmp "$TMP/before" "$TMP/after"
	git rev-parse -q --verify HEAD >/dev/null && fail "a commit was made on the unborn branch"
	git rev-parse -q --verify refs/preemptify/tip >/dev/null && fail "a run was recorded"
done
# --branch does not change that
spec_for drivers/net/foo.c >"$TMP/spec"
expect_fail "$TMP/err" "$TEST_REPO" commit --branch port "$TMP/spec"
grep_q "the branch has no commit yet" "$TMP/err"
git rev-parse -q --verify refs/heads/port >/dev/null && fail "port was created"
# nothing to change: success, no commit
echo "file drivers/net/foo.c -" >"$TMP/spec"
"$TEST_REPO" commit "$TMP/spec" >/dev/null || fail "nothing to change on an unborn HEAD should succeed"

# once the originals are committed, preemptify commits only its change
git add -A
git commit -q -m "drivers: import"
spec_for drivers/net/foo.c >"$TMP/spec"
"$TEST_REPO" commit "$TMP/spec" >/dev/null || fail "commit after the import failed"
[ "$(git rev-list --count HEAD)" -eq 2 ] || fail "expected 2 commits"
[ "$(git diff --numstat HEAD~1 HEAD | cut -f1-2)" = "$(printf '1\t2')" ] || fail "not only the fix committed"

# the root commit in a series: no base recorded, the whole history
git update-ref -d refs/preemptify/base
"$TEST_REPO" series "$TMP/out" >"$TMP/files" || fail "series of a root history failed"
[ "$(wc -l <"$TMP/files")" -eq 3 ] || fail "expected cover + 2 patches"
git init -q "$TMP/c"
cd "$TMP/c"
git config user.name M
git config user.email m@example.com
git am -q "$TMP"/out/000[1-9]-*.patch || fail "git am of a root series failed"
git fetch -q "$TMP/r" main
git diff --exit-code FETCH_HEAD HEAD >/dev/null || fail "applied root series differs"
echo ok
