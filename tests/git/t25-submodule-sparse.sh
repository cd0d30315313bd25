#!/bin/bash
# A file inside a submodule (or another repository nested in the work
# tree) is named as belonging to it, with where to commit instead; a
# sparse index, which libgit2 cannot read, is named with how to turn it off.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"
git config --global user.name "A U Thor"
git config --global user.email "author@example.com"
git config --global protocol.file.allow always

make_repo "$TMP/sub"
make_repo "$TMP/r"
cd "$TMP/r"
git submodule -q add "file://$TMP/sub" ext/sub 2>/dev/null
git commit -q -m "add ext/sub"
{
	spec_for drivers/net/foo.c
	spec_for ext/sub/drivers/net/foo.c
} >"$TMP/spec"
state . >"$TMP/before"
expect_fail "$TMP/err" "$TEST_REPO" commit "$TMP/spec"
grep_q "ext/sub/drivers/net/foo.c: belongs to the submodule 'ext/sub', a repository of its own: run preemptify commit there (cd $TMP/r/ext/sub)" "$TMP/err"
state . >"$TMP/after"
test_cmp "$TMP/before" "$TMP/after"
# there it works
cd ext/sub
spec_for drivers/net/foo.c >"$TMP/spec"
"$TEST_REPO" commit "$TMP/spec" >/dev/null || fail "commit inside the submodule failed"
cd "$TMP/r"

# a repository nested without being a submodule
make_repo "$TMP/r/vendor"
spec_for vendor/drivers/char/lp.c >"$TMP/spec"
expect_fail "$TMP/err" "$TEST_REPO" commit "$TMP/spec"
grep_q "vendor/drivers/char/lp.c: belongs to the git repository nested at 'vendor'" "$TMP/err"

# a sparse index
git clone -q "file://$TMP/r" "$TMP/sp"
cd "$TMP/sp"
git sparse-checkout set --sparse-index drivers/net
spec_for drivers/net/foo.c >"$TMP/spec"
expect_fail "$TMP/err" "$TEST_REPO" commit "$TMP/spec"
grep_q "drivers/net/foo.c: the index is a sparse index (git sparse-checkout --sparse-index), which libgit2 cannot read: make it a full index with git sparse-checkout set --no-sparse-index" "$TMP/err"
grep -q "extension" "$TMP/err" && fail "libgit2's words leaked: $(cat "$TMP/err")"
# the advice works: a full index, still sparse, commits
git sparse-checkout set --no-sparse-index drivers/net
"$TEST_REPO" commit "$TMP/spec" >/dev/null || fail "commit after --no-sparse-index failed"
[ "$(git show --name-only --format= HEAD)" = drivers/net/foo.c ] || fail "wrong commit"
echo ok
