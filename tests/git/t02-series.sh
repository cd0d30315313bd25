#!/bin/bash
# series: numbered mbox patches plus a cover letter; git am on a fresh
# clone at the base reproduces the committed tip exactly.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/r"
cd "$TMP/r"
base=$(git rev-parse HEAD)
{
	spec_for drivers/net/foo.c
	echo "refused P003 get-cpu 12 CPU number used in preemptible code | would sleep"
	spec_for drivers/char/lp.c
	echo "fixed P005 check-resched 9 preempt_enable_no_resched() without a check"
	spec_for fs/jbd/commit.c
} >"$TMP/spec"
"$TEST_REPO" commit "$TMP/spec" >/dev/null || fail "commit failed"
tip=$(git rev-parse HEAD)
# the account commit notes on its last commit (the CLI writes it; the test tool does not)
git notes add -m "preemptify 0.1.0: 4 sites committed in 3 files; 1 finding needs you: 1 fixable site that could not be fixed." \
	-m "drivers/net/foo.c:12:1: note: left for you: CPU number used in preemptible code; not fixed: would sleep [P003]" HEAD

# default range: the last commit run
"$TEST_REPO" series "$TMP/out" >"$TMP/files" || fail "series failed"
printf '%s\n' "$TMP/out/0000-cover-letter.patch" \
	"$TMP/out/0001-net-foo-use-cond_resched.patch" \
	"$TMP/out/0002-char-lp-use-cond_resched-and-preempt_check_resched.patch" \
	"$TMP/out/0003-jbd-commit-use-cond_resched.patch" >"$TMP/expect"
test_cmp "$TMP/expect" "$TMP/files"
grep_q "Subject: [PATCH 1/3] net: foo: use cond_resched()" "$TMP/out/0001-net-foo-use-cond_resched.patch"
grep_q "Subject: [PATCH 0/3] make 3 files preempt-safe for 2.6" "$TMP/out/0000-cover-letter.patch"
grep_q " 3 files changed, 3 insertions(+), 6 deletions(-)" "$TMP/out/0000-cover-letter.patch"
grep_q "  drivers/char/lp.c" "$TMP/out/0000-cover-letter.patch"
grep_q "preemptify 0.1.0: 4 sites committed in 3 files; 1 finding needs you:" "$TMP/out/0000-cover-letter.patch"
grep_q "Left for hand work:" "$TMP/out/0000-cover-letter.patch"
grep -qE "^  drivers/net/foo.c:12:1: note: left for you: CPU number used in preemptible code; not fixed: would sleep \[P003\]$" \
	"$TMP/out/0000-cover-letter.patch" || fail "the left-over list in the cover letter"
grep_q "A U Thor (3):" "$TMP/out/0000-cover-letter.patch"
# the mail signature git writes: "-- " (with the space) and the tool's version
for p in "$TMP"/out/000[123]-*.patch; do
	tail -4 "$p" | grep -qxF -- "-- " || fail "$p: no '-- ' signature line"
	tail -4 "$p" | grep -qE '^preemptify [0-9]' || fail "$p: the signature names preemptify"
	if grep -q "libgit2" "$p"; then fail "$p: libgit2's signature left"; fi
done

# git am on a clone at the base gives the same tree, messages and authors
git clone -q "$TMP/r" "$TMP/c"
cd "$TMP/c"
git config user.name "Maintainer"
git config user.email "m@example.com"
git checkout -q -b apply "$base"
git am -q "$TMP"/out/000[1-9]-*.patch || fail "git am failed"
git fetch -q "$TMP/r" main
git diff --exit-code "$tip" HEAD >/dev/null || fail "applied series differs from the committed tip"
git log --format='%an|%B' "$base"..HEAD >"$TMP/applied"
git -C "$TMP/r" log --format='%an|%B' "$base".."$tip" >"$TMP/orig"
test_cmp "$TMP/orig" "$TMP/applied"
cd "$TMP/r"

# explicit range, subject prefix, signoff added where missing, no cover letter
"$TEST_REPO" series --range "$base..HEAD~1" --subject-prefix "PATCH v2" --signoff --no-cover \
	"$TMP/out2" >"$TMP/files2" || fail "series with range failed"
[ "$(wc -l <"$TMP/files2")" -eq 2 ] || fail "range A..HEAD~1 should give 2 patches: $(cat "$TMP/files2")"
grep_q "Subject: [PATCH v2 2/2] char: lp:" "$TMP/out2/0002-char-lp-use-cond_resched-and-preempt_check_resched.patch"
grep_q "Signed-off-by: A U Thor <author@example.com>" "$TMP/out2/0001-net-foo-use-cond_resched.patch"
[ ! -e "$TMP/out2/0000-cover-letter.patch" ] || fail "cover letter written with --no-cover"

# a single revision means REV..HEAD
"$TEST_REPO" series --range HEAD~1 "$TMP/out3" >"$TMP/files3" || fail "series REV failed"
grep_q "0001-jbd-commit-use-cond_resched.patch" "$TMP/files3"
grep_q "Subject: [PATCH 1/1] jbd: commit:" "$TMP/out3/0001-jbd-commit-use-cond_resched.patch"

# the cover letter's shortlog wraps long summaries as git format-patch does
echo "long" >>drivers/char/lp.c
git commit -qam "char: lp: a summary long enough that the cover letter must wrap it onto a second line somewhere"
"$TEST_REPO" series --range HEAD~1 "$TMP/out6" >/dev/null || fail "series of a long summary failed"
git format-patch -q --cover-letter -o "$TMP/git6" HEAD~1
sed -n '/^A U Thor (1):/,/^$/p' "$TMP/out6/0000-cover-letter.patch" >"$TMP/ours"
sed -n '/^A U Thor (1):/,/^$/p' "$TMP/git6/0000-cover-letter.patch" >"$TMP/theirs"
[ "$(wc -l <"$TMP/theirs")" -ge 3 ] || fail "git's shortlog did not wrap: $(cat "$TMP/theirs")"
test_cmp "$TMP/theirs" "$TMP/ours"
git reset -q --hard HEAD~1

# an empty range and a repository without a run are errors
expect_fail "$TMP/err" "$TEST_REPO" series --range HEAD..HEAD "$TMP/out4"
grep_q "no commits in the range" "$TMP/err"
make_repo "$TMP/fresh"
expect_fail "$TMP/err" "$TEST_REPO" series --repo "$TMP/fresh" "$TMP/out5"
grep_q "no commit run recorded" "$TMP/err"
echo ok
