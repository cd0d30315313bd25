#!/bin/bash
# commit after apply: the files whose working tree is exactly the change
# planned from HEAD are recognised and committed, as the same commits (tree
# and message) a commit from the unapplied state makes; a mix of applied
# and unapplied files commits both; --dry-run names the recognised files;
# a file edited by hand after apply is refused, naming the commands that
# resolve it, with nothing written.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"
: "${PREEMPTIFY:?PREEMPTIFY must name the preemptify binary}"
command -v spatch >/dev/null || skip "spatch is not installed"
P=$PREEMPTIFY

# commits REPO: the commits made since tag base, tree and message of each, oldest first
commits() {
	git -C "$1" log --reverse --format='%T%n%B--' base..HEAD
}

# make_crlf_repo DIR: make_repo, with drivers/char/ checked out CRLF (eol=crlf)
make_crlf_repo() {
	make_repo "$1"
	echo "drivers/char/*.c text eol=crlf" >"$1/.gitattributes"
	git -C "$1" add .gitattributes && git -C "$1" commit -q -m attributes
	rm "$1/drivers/char/lp.c" && git -C "$1" checkout -- drivers/char/lp.c
	grep -q $'\r$' "$1/drivers/char/lp.c" || fail "lp.c not checked out CRLF"
	git -C "$1" tag base
}

# the direct answer: commit from the unapplied state
make_crlf_repo "$TMP/direct"
(cd "$TMP/direct" && "$P" commit -q .) >/dev/null || fail "direct commit failed"
commits "$TMP/direct" >"$TMP/expect"
[ "$(git -C "$TMP/direct" rev-list --count base..HEAD)" -eq 4 ] || fail "direct: want 4 commits"

# apply, then commit: the same commits, the work tree and index clean after
make_crlf_repo "$TMP/applied"
cd "$TMP/applied"
"$P" apply -q . >/dev/null || fail "apply failed"
[ "$(git status --porcelain | wc -l)" -eq 4 ] || fail "apply changed not 4 files"
"$P" commit . >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err"; fail "commit after apply failed"; }
commits . >"$TMP/got"
test_cmp "$TMP/expect" "$TMP/got"
[ -z "$(git status --porcelain)" ] || fail "not clean after commit: $(git status --porcelain)"
for f in drivers/char/lp.c drivers/net/bar.c drivers/net/foo.c fs/jbd/commit.c; do
	grep_q "applied $f: already in the working tree" "$TMP/out"
done
grep_q "4 files already applied in the working tree were recognised and committed" "$TMP/err"

# a mix: net applied, the others not; --dry-run says which, writes nothing
make_crlf_repo "$TMP/mix"
cd "$TMP/mix"
"$P" apply -q drivers/net >/dev/null || fail "apply drivers/net failed"
state . >"$TMP/before"
"$P" commit --dry-run . >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err"; fail "dry run failed"; }
grep '^applied ' "$TMP/out" | cut -d: -f1 >"$TMP/got"
printf 'applied %s\n' drivers/net/bar.c drivers/net/foo.c >"$TMP/want"
test_cmp "$TMP/want" "$TMP/got"
[ "$(grep -c '^\[dry-run' "$TMP/out")" -eq 4 ] || fail "dry run: want 4 commits planned"
grep_q "2 files already applied in the working tree were recognised and would be committed" "$TMP/err"
state . >"$TMP/after"
test_cmp "$TMP/before" "$TMP/after"
"$P" commit -q . >/dev/null || fail "commit of the mix failed"
commits . >"$TMP/got"
test_cmp "$TMP/expect" "$TMP/got"
[ -z "$(git status --porcelain)" ] || fail "mix not clean after commit"

# edited by hand after apply: refused by name with the resolving commands, nothing written
make_crlf_repo "$TMP/edited"
cd "$TMP/edited"
"$P" apply -q . >/dev/null || fail "apply failed"
echo "/* my edit */" >>drivers/net/foo.c
state . >"$TMP/before"
expect_fail "$TMP/err" "$P" commit .
grep_q "drivers/net/foo.c: has uncommitted changes (in the working tree) that are not the change preemptify plans" "$TMP/err"
grep_q "git diff -- drivers/net/foo.c" "$TMP/err"
grep_q "git checkout -- drivers/net/foo.c" "$TMP/err"
state . >"$TMP/after"
test_cmp "$TMP/before" "$TMP/after"
# --skip-dirty leaves it, commits the applied others
"$P" commit -q --skip-dirty . >"$TMP/out" || fail "commit --skip-dirty failed"
grep_q "skipped drivers/net/foo.c: uncommitted changes" "$TMP/out"
[ "$(git rev-list --count base..HEAD)" -eq 3 ] || fail "--skip-dirty: want 3 commits"
# the resolving command, then commit: the last commit as the direct run made it
git checkout -- drivers/net/foo.c
"$P" commit -q . >/dev/null || fail "commit after checkout failed"
[ "$(git log -1 --format=%T)" = "$(git -C "$TMP/direct" log -1 --format=%T)" ] || fail "final tree differs from the direct run's"

# applied, then made executable: a change of the user's beside the text, refused
make_repo "$TMP/mode"
cd "$TMP/mode"
"$P" apply -q drivers/net/foo.c >/dev/null || fail "apply foo.c failed"
chmod +x drivers/net/foo.c
state . >"$TMP/before"
expect_fail "$TMP/err" "$P" commit drivers/net/foo.c
grep_q "drivers/net/foo.c: has uncommitted changes (in the working tree)" "$TMP/err"
state . >"$TMP/after"
test_cmp "$TMP/before" "$TMP/after"

# a tree with a per-CPU array shared by three files (one commit, callers across files)
for d in fn-direct fn-applied; do
	cp -r "$(dirname "$GIT_TEST_LIB")/../../fixtures/trees/fastnet" "$TMP/$d"
	git -C "$TMP/$d" init -q -b main
	git -C "$TMP/$d" add -A
	git -C "$TMP/$d" -c user.name=A -c user.email=a@b commit -qm init
	git -C "$TMP/$d" tag base
	git -C "$TMP/$d" config user.name "A U Thor"
	git -C "$TMP/$d" config user.email "author@example.com"
done
(cd "$TMP/fn-direct" && "$P" commit -q .) >/dev/null || fail "fastnet direct commit failed"
(cd "$TMP/fn-applied" && "$P" apply -q . >/dev/null && "$P" commit -q .) >/dev/null || fail "fastnet apply+commit failed"
commits "$TMP/fn-direct" >"$TMP/expect"
commits "$TMP/fn-applied" >"$TMP/got"
[ -s "$TMP/expect" ] || fail "fastnet: no commit made"
test_cmp "$TMP/expect" "$TMP/got"
[ -z "$(git -C "$TMP/fn-applied" status --porcelain)" ] || fail "fastnet not clean after commit"
echo ok
