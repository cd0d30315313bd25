#!/bin/bash
# --since REV (scan, diff, apply, commit): only the files changed between
# REV and the work tree (committed, staged or untracked), intersected with
# the PATHs; a per-CPU array shared with a changed file is still converted
# in all its files; a bad REV is a usage error naming it.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"
: "${PREEMPTIFY:?PREEMPTIFY must name the preemptify binary}"
command -v spatch >/dev/null || skip "spatch is not installed"
P=$PREEMPTIFY

make_repo "$TMP/r"
cd "$TMP/r"
base=$(git rev-parse HEAD)
echo "/* edit */" >>drivers/net/foo.c
git commit -q -am "foo: an edit"
echo "/* staged */" >>drivers/net/bar.c
git add drivers/net/bar.c
write_driver drivers/net/new.c

# scan: foo.c (committed), bar.c (staged), new.c (untracked); not lp.c, commit.c
set +e
"$P" scan -q --since "$base" . >"$TMP/out"; rc=$?
set -e
[ "$rc" -eq 1 ] || fail "scan --since: exit $rc, want 1 (findings)"
cut -d: -f1 "$TMP/out" >"$TMP/got"
printf '%s\n' drivers/net/bar.c drivers/net/foo.c drivers/net/new.c >"$TMP/expect"
test_cmp "$TMP/expect" "$TMP/got"
# intersected with the PATHs given
set +e
"$P" scan -q --since "$base" drivers/net/foo.c drivers/char >"$TMP/out"; rc=$?
set -e
[ "$rc" -eq 1 ] || fail "scan --since PATHS: exit $rc"
cut -d: -f1 "$TMP/out" >"$TMP/got"
echo drivers/net/foo.c >"$TMP/expect"
test_cmp "$TMP/expect" "$TMP/got"
"$P" scan -q --since HEAD drivers/char >"$TMP/out" || fail "scan of unchanged files: want exit 0"
[ ! -s "$TMP/out" ] || fail "findings in unchanged files: $(cat "$TMP/out")"

# a bad REV, or no repository: usage errors (exit 2) naming what is wrong
set +e
"$P" scan --since nosuchrev . 2>"$TMP/err"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "bad REV: exit $rc, want 2"
grep_q "'nosuchrev'" "$TMP/err"
mkdir "$TMP/nogit"
write_driver "$TMP/nogit/x.c"
set +e
"$P" diff --since HEAD "$TMP/nogit" 2>"$TMP/err" >/dev/null; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "no repository: exit $rc, want 2"
grep_q "not inside a git repository" "$TMP/err"

# diff shows the changed files only
set +e
"$P" diff -q --since "$base" . >"$TMP/out"; rc=$?
set -e
[ "$rc" -eq 1 ] || fail "diff --since: exit $rc, want 1"
grep '^+++ ' "$TMP/out" >"$TMP/got"
printf '+++ b/drivers/net/%s\n' bar.c foo.c new.c >"$TMP/expect"
test_cmp "$TMP/expect" "$TMP/got"

# apply writes nothing outside them
cp drivers/char/lp.c "$TMP/lp.before"
"$P" apply -q --since "$base" drivers/char drivers/net/new.c >"$TMP/out" || fail "apply --since failed"
cmp -s drivers/char/lp.c "$TMP/lp.before" || fail "apply --since changed lp.c"
grep_q "fixed drivers/net/new.c" "$TMP/out"
rm drivers/net/new.c

# commit: foo.c committed, bar.c (staged) skipped, lp.c and commit.c not touched
"$P" commit -q --since "$base" --skip-dirty . >"$TMP/out" || { cat "$TMP/out"; fail "commit --since failed"; }
git show --name-only --format= HEAD >"$TMP/got"
echo drivers/net/foo.c >"$TMP/expect"
test_cmp "$TMP/expect" "$TMP/got"
grep_q "drivers/net/bar.c: uncommitted changes" "$TMP/out"
[ "$(git rev-list --count "$base"..HEAD)" -eq 2 ] || fail "one commit expected"

# whole-tree context: a driver's edit pulls in the other files of its shared per-CPU array
cp -r "$(dirname "$GIT_TEST_LIB")/../../fixtures/trees/fastnet" "$TMP/fn"
cd "$TMP/fn"
git init -q && git add -A && git -c user.name=A -c user.email=a@b commit -qm init
echo "/* edit */" >>drivers/net/fastnet_stat.c
set +e
"$P" diff -q --since HEAD . >"$TMP/out"; rc=$?
set -e
[ "$rc" -eq 1 ] || fail "diff --since on the tree: exit $rc"
grep '^+++ ' "$TMP/out" >"$TMP/got"
printf '+++ b/%s\n' drivers/net/fastnet_stat.c include/linux/fastdev_stat.h net/core/fastdev_stat.c >"$TMP/expect"
test_cmp "$TMP/expect" "$TMP/got"
grep_q "+DEFINE_PER_CPU(struct fastdev_stat, fastdev_stats);" "$TMP/out"
echo ok
