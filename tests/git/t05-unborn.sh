#!/bin/bash
# Unborn HEAD: the first commit has no parent; untracked and staged-new
# files both work; the run records no base (series then takes the history).
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

git init -q -b main "$TMP/r"
cd "$TMP/r"
git config user.name "A U Thor"
git config user.email "author@example.com"
write_driver drivers/net/foo.c
write_driver drivers/char/lp.c
git add drivers/char/lp.c
{
	spec_for drivers/net/foo.c
	spec_for drivers/char/lp.c
} >"$TMP/spec"
"$TEST_REPO" commit "$TMP/spec" >"$TMP/commit.out" || fail "commit on unborn HEAD failed"
[ "$(git rev-list --count HEAD)" -eq 2 ] || fail "expected 2 commits"
[ "$(git rev-list --max-parents=0 HEAD)" = "$(git rev-parse HEAD~1)" ] || fail "first commit has a parent"
[ "$(git show --name-only --format= HEAD~1)" = drivers/net/foo.c ] || fail "root commit content"
[ "$(git show --name-only --format= HEAD)" = drivers/char/lp.c ] || fail "second commit content"
[ -z "$(git status --porcelain)" ] || fail "status not clean: $(git status --porcelain)"
cmp -s drivers/net/foo.c "$TMP/new/drivers/net/foo.c" || fail "foo.c not rewritten"
git rev-parse -q --verify refs/preemptify/base >/dev/null && fail "base recorded for an unborn HEAD"
"$TEST_REPO" series "$TMP/out" >"$TMP/files" || fail "series after an unborn run failed"
[ "$(wc -l <"$TMP/files")" -eq 3 ] || fail "expected cover + 2 patches"
# the root patch applies to an empty repository
git init -q "$TMP/c"
cd "$TMP/c"
git config user.name M
git config user.email m@example.com
git am -q "$TMP"/out/000[1-9]-*.patch || fail "git am of a root series failed"
git fetch -q "$TMP/r" main
git diff --exit-code FETCH_HEAD HEAD >/dev/null || fail "applied root series differs"

# unborn HEAD with --branch: the first commit starts that branch
git init -q -b main "$TMP/u2"
cd "$TMP/u2"
git config user.name "A U Thor"
git config user.email "author@example.com"
write_driver drivers/net/foo.c
spec_for drivers/net/foo.c >"$TMP/spec2"
"$TEST_REPO" commit --branch port "$TMP/spec2" >/dev/null || fail "unborn commit with --branch failed"
[ "$(git symbolic-ref HEAD)" = refs/heads/port ] || fail "HEAD not on port"
[ "$(git rev-list --count port)" -eq 1 ] || fail "port should hold one root commit"
git rev-parse -q --verify refs/heads/main >/dev/null && fail "main was created"
echo ok
