#!/bin/bash
# A shallow clone: its boundary commit is the end of the history, for the
# subject prefix learned from it and for the series.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/up"
git config --global user.name "A U Thor"
git config --global user.email "author@example.com"
cd "$TMP/up"
echo "/* x */" >>drivers/net/foo.c
git commit -q -am "foo: tidy"
for i in 1 2 3; do
	echo "$i" >>README
	git commit -q -am "readme $i"
done
for depth in 1 2 4; do
	git clone -q --depth "$depth" "file://$TMP/up" "$TMP/s$depth"
	cd "$TMP/s$depth"
	[ "$(git rev-parse --is-shallow-repository)" = true ] || fail "setup: not shallow"
	spec_for drivers/net/foo.c >"$TMP/spec"
	"$TEST_REPO" commit "$TMP/spec" >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err"; fail "depth $depth: commit failed"; }
	# the boundary holds the whole tree: it counts as the commit adding foo.c, as git log shows it
	want="net: foo: use cond_resched()"
	[ "$depth" -eq 4 ] && want="foo: use cond_resched()"
	[ "$(git log -1 --format=%s)" = "$want" ] || fail "depth $depth: subject $(git log -1 --format=%s), want $want"
	"$TEST_REPO" series "$TMP/p$depth" >"$TMP/files" 2>"$TMP/err" || { cat "$TMP/err"; fail "depth $depth: series failed"; }
	[ "$(wc -l <"$TMP/files")" -eq 2 ] || fail "depth $depth: expected cover + 1 patch"
	git -C "$TMP/up" apply --check "$TMP/p$depth"/0001-*.patch || fail "depth $depth: the patch does not apply"
	"$TEST_REPO" series --range HEAD~1..HEAD --force "$TMP/p$depth" >/dev/null || fail "depth $depth: explicit range"
done
echo ok
