#!/bin/bash
# The pre-commit and commit-msg hooks run as git commit runs them, from the
# top of the work tree, with GIT_INDEX_FILE holding the commit's content;
# a failing hook stops the run with nothing written; --no-verify skips them.
# commit.gpgsign is refused (preemptify cannot sign) unless --no-gpg-sign.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"
: "${PREEMPTIFY:?PREEMPTIFY must name the preemptify binary}"
command -v spatch >/dev/null || { echo "skip: no spatch"; exit 0; }
P=$PREEMPTIFY

make_repo "$TMP/r"
cd "$TMP/r"
hooks=$TMP/r/.git/hooks
mkdir -p "$hooks"

# a pre-commit hook that refuses: nothing is written, its words are shown
cat >"$hooks/pre-commit" <<'H'
#!/bin/sh
echo "checkpatch: trailing whitespace" >&2
exit 1
H
chmod +x "$hooks/pre-commit"
state . >"$TMP/before"
expect_fail "$TMP/err" "$P" commit drivers/net/foo.c
grep_q "the pre-commit hook $hooks/pre-commit refused the commit (exit 1), so nothing was committed" "$TMP/err"
grep_q "checkpatch: trailing whitespace" "$TMP/err"
grep_q "(--no-verify skips the hooks)" "$TMP/err"
state . >"$TMP/after"
test_cmp "$TMP/before" "$TMP/after"

# --no-verify: the hooks do not run
"$P" commit -q --no-verify drivers/net/foo.c >/dev/null || fail "--no-verify did not commit"
git reset -q --hard HEAD~1

# a pre-commit hook sees the commit's content in its index, from the top of the work tree
# (HEAD moves after the last commit: the run's earlier commits show as staged)
cat >"$hooks/pre-commit" <<H
#!/bin/sh
{
	pwd
	git diff --cached --name-only
	git show :drivers/char/lp.c | grep -c cond_resched
	git show :drivers/net/foo.c | grep -c cond_resched
} >>"$TMP/seen"
echo "pre-commit: looked"
H
# commit-msg edits the message, as gerrit's Change-Id hook does
cat >"$hooks/commit-msg" <<'H'
#!/bin/sh
printf '\nChange-Id: I0123456789abcdef\n' >>"$1"
H
chmod +x "$hooks/commit-msg"
"$P" commit drivers/net/foo.c drivers/char/lp.c >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err"; fail "commit with hooks failed"; }
printf '%s\n' "$TMP/r" drivers/char/lp.c 1 0 "$TMP/r" drivers/char/lp.c drivers/net/foo.c 1 1 >"$TMP/expect"
test_cmp "$TMP/expect" "$TMP/seen"
grep_q "pre-commit: looked" "$TMP/err"
[ "$(git log -2 --format=%b | grep -c '^Change-Id: I0123456789abcdef$')" -eq 2 ] || fail "commit-msg edit lost"
[ -z "$(git status --porcelain)" ] || fail "status not clean: $(git status --porcelain)"
git reset -q --hard HEAD~2
rm -f "$TMP/seen"

# a hook that is not executable is ignored, as git ignores it; core.hooksPath is honoured
chmod -x "$hooks/pre-commit" "$hooks/commit-msg"
mkdir -p my-hooks
printf '#!/bin/sh\necho "from hooksPath" >&2\nexit 3\n' >my-hooks/pre-commit
chmod +x my-hooks/pre-commit
git config core.hooksPath my-hooks
expect_fail "$TMP/err" "$P" commit drivers/net/foo.c
grep_q "the pre-commit hook $TMP/r/my-hooks/pre-commit refused the commit (exit 3)" "$TMP/err"
git config --unset core.hooksPath
"$P" commit -q drivers/net/foo.c >/dev/null || fail "a non-executable hook should be ignored"
[ ! -e "$TMP/seen" ] || fail "a non-executable hook ran"
git reset -q --hard HEAD~1

# commit.gpgsign: refused with the reason, unless --no-gpg-sign
git config commit.gpgsign true
state . >"$TMP/before"
expect_fail "$TMP/err" "$P" commit drivers/net/foo.c
grep_q "commit.gpgsign is set, and preemptify cannot sign commits" "$TMP/err"
grep_q "--no-gpg-sign" "$TMP/err"
state . >"$TMP/after"
test_cmp "$TMP/before" "$TMP/after"
"$P" commit -q --no-gpg-sign drivers/net/foo.c >/dev/null || fail "--no-gpg-sign did not commit"
[ "$(git show --name-only --format= HEAD)" = drivers/net/foo.c ] || fail "wrong commit"
echo ok
