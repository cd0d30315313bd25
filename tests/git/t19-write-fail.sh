#!/bin/bash
# All or nothing across files: when the Nth file's write fails part-way
# through a commit run (PREEMPTIFY_TEST_FAULT=write-fail=N, the Nth write
# fails with ENOSPC), the files already written are put back, nothing is
# committed, no ref, index entry or file moves, and the message says so.
# Three files, every position of the failure: first, second, last.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/r"
cd "$TMP/r"
{
	spec_for drivers/char/lp.c
	spec_for drivers/net/bar.c
	spec_for drivers/net/foo.c
} >"$TMP/spec"
state . >"$TMP/before"
for n in 1 2 3; do
	PREEMPTIFY_TEST_FAULT=write-fail=$n expect_fail "$TMP/err" "$TEST_REPO" commit "$TMP/spec"
	grep_q "No space left on device; not written; nothing was committed and no file was changed" "$TMP/err"
	state . >"$TMP/after"
	test_cmp "$TMP/before" "$TMP/after"
	[ -z "$(find . -name '*.preemptify-*' -not -path './.git/*')" ] || fail "write-fail=$n: a temporary file is left"
	[ -z "$(grep -v 'No space left on device' "$TMP/err")" ] || fail "write-fail=$n: more said than the failure: $(cat "$TMP/err")"
done

# the same run without the fault: the three files are committed (the spec is good)
"$TEST_REPO" commit "$TMP/spec" >"$TMP/out" || fail "commit without the fault failed"
[ "$(git rev-list --count HEAD)" -eq 4 ] || fail "three commits expected on top of the initial one"
echo "t19: ok"
