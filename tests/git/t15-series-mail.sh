#!/bin/bash
# series as git format-patch writes mail: --to/--cc headers in every mail,
# -v N (subject and file names), --base (base-commit and prerequisite
# patch ids at the end of the first mail), and the "-- " signature.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/r"
cd "$TMP/r"
echo "unrelated" >>README
git commit -q -am "README: an unrelated commit between base and series"
{
	spec_for drivers/net/foo.c
	spec_for drivers/char/lp.c
} >"$TMP/spec"
"$TEST_REPO" commit "$TMP/spec" >/dev/null || fail "commit failed"

# headers and reroll count, with a cover letter
"$TEST_REPO" series --to "A Maint <maint@example.com>" --to list@example.com --cc "R Ev <rev@example.com>" \
	--reroll-count 3 "$TMP/out" >"$TMP/files" || fail "series failed"
printf '%s\n' "$TMP/out/v3-0000-cover-letter.patch" "$TMP/out/v3-0001-net-foo-use-cond_resched.patch" \
	"$TMP/out/v3-0002-char-lp-use-cond_resched.patch" >"$TMP/expect"
test_cmp "$TMP/expect" "$TMP/files"
cat >"$TMP/hdr" <<'H'
To: A Maint <maint@example.com>,
    list@example.com
Cc: R Ev <rev@example.com>

H
for p in $(cat "$TMP/files"); do
	# the address headers follow the Subject line and end the header block
	sed -n '/^Subject: /,/^$/p' "$p" | tail -n +2 >"$TMP/got"
	test_cmp "$TMP/hdr" "$TMP/got"
	# the signature, exactly as git writes it: "-- " SPACE, the version, a blank line
	tail -3 "$p" >"$TMP/sig"
	printf -- '-- \npreemptify %s\n\n' "$(sed -n 2p "$TMP/sig" | cut -d' ' -f2)" >"$TMP/sigx"
	test_cmp "$TMP/sigx" "$TMP/sig"
	grep -q '^preemptify [0-9]' "$TMP/sig" || fail "$p: signature version"
done
grep_q "Subject: [PATCH v3 0/2] make 2 files preempt-safe" "$TMP/out/v3-0000-cover-letter.patch"
grep_q "Subject: [PATCH v3 1/2] net: foo: use cond_resched()" "$TMP/out/v3-0001-net-foo-use-cond_resched.patch"
# git am accepts the mails with their headers
git clone -q "$TMP/r" "$TMP/c"
git -C "$TMP/c" config user.name M && git -C "$TMP/c" config user.email m@example.com
git -C "$TMP/c" checkout -q -b apply refs/preemptify/base 2>/dev/null || git -C "$TMP/c" checkout -q -b apply "$(git rev-parse refs/preemptify/base)"
git -C "$TMP/c" am -q "$TMP"/out/v3-000[12]-*.patch || fail "git am failed"

# --base: the same trailer git format-patch --base writes, in the cover letter ...
base=$(git rev-parse HEAD~3)
git format-patch -q --base="$base" --cover-letter -o "$TMP/git" HEAD~2 >/dev/null
sed -n '/^base-commit: /,/^-- $/p' "$TMP/git/0000-cover-letter.patch" >"$TMP/want"
grep -q '^prerequisite-patch-id: ' "$TMP/want" || fail "git wrote no prerequisite (test setup)"
"$TEST_REPO" series --base "$base" "$TMP/b1" >/dev/null || fail "series --base failed"
sed -n '/^base-commit: /,/^-- $/p' "$TMP/b1/0000-cover-letter.patch" >"$TMP/got"
test_cmp "$TMP/want" "$TMP/got"
# preceded by a blank line, after the diffstat, as git writes it
grep -B2 '^base-commit: ' "$TMP/b1/0000-cover-letter.patch" | head -1 | grep -q '^$' || fail "no blank lines before base-commit"
if grep -q '^base-commit' "$TMP"/b1/0001-*.patch; then fail "base-commit in a patch as well as the cover letter"; fi

# ... or at the end of the first patch without one; git am still applies it
"$TEST_REPO" series --base "$base" --no-cover "$TMP/b2" >/dev/null || fail "series --base --no-cover failed"
p1=$(ls "$TMP"/b2/0001-*.patch)
sed -n '/^base-commit: /,/^-- $/p' "$p1" >"$TMP/got"
test_cmp "$TMP/want" "$TMP/got"
if grep -q '^base-commit' "$TMP"/b2/0002-*.patch; then fail "base-commit in the second patch"; fi
# the base right under the series: no prerequisite
"$TEST_REPO" series --base HEAD~2 --no-cover "$TMP/b3" >/dev/null || fail "series --base HEAD~2 failed"
printf 'base-commit: %s\n-- \n' "$(git rev-parse HEAD~2)" >"$TMP/want"
sed -n '/^base-commit: /,/^-- $/p' "$TMP"/b3/0001-*.patch >"$TMP/got"
test_cmp "$TMP/want" "$TMP/got"

# a bad or unrelated base is a usage error (exit 2) naming it
set +e
"$TEST_REPO" series --base nosuchrev "$TMP/b4" 2>"$TMP/err"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "bad --base: exit $rc, want 2"
grep_q "nosuchrev" "$TMP/err"
set +e
"$TEST_REPO" series --base HEAD "$TMP/b5" 2>"$TMP/err"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "--base after the series: exit $rc, want 2"
grep_q "not an ancestor" "$TMP/err"
echo ok
