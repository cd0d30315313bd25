#!/bin/bash
# series -o into a directory that already holds files: an existing patch is
# not overwritten without --force, a symbolic link is never written
# through (not even with --force), and --force replaces regular files.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/r"
cd "$TMP/r"
spec_for drivers/net/foo.c >"$TMP/spec"
"$TEST_REPO" commit "$TMP/spec" >/dev/null || fail "commit failed"
"$TEST_REPO" series "$TMP/out" >"$TMP/files" || fail "first series failed"
patch=$(sed -n 2p "$TMP/files")

expect_fail "$TMP/err" "$TEST_REPO" series "$TMP/out"
grep_q "exists; not overwritten (--force replaces it)" "$TMP/err"

"$TEST_REPO" series --force "$TMP/out" >/dev/null || fail "series --force failed"

echo secret >"$TMP/victim"
rm "$patch"
ln -s "$TMP/victim" "$patch"
expect_fail "$TMP/err" "$TEST_REPO" series --force "$TMP/out"
grep_q "is a symbolic link; not written through" "$TMP/err"
[ "$(cat "$TMP/victim")" = secret ] || fail "written through the link"
echo ok
