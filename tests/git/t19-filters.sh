#!/bin/bash
# .gitattributes: a filter driver libgit2 cannot run (filter.NAME.clean or
# .process, an external program) or a working-tree-encoding refuses the
# file, naming it, and nothing is written: the raw work-tree text (a secret
# a redacting filter would remove) never reaches history or a series. The
# eol/text conversions libgit2 does make: a CRLF work tree commits LF blobs.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/r"
cd "$TMP/r"
# a redacting clean filter: the history holds XXXXXX where the work tree says SECRET
sed -i '1a /* key: SECRET */' drivers/net/foo.c
echo '*.c filter=redact' >.gitattributes
git config filter.redact.clean 'sed s/SECRET/XXXXXX/'
git config filter.redact.smudge cat
git add -A
git commit -q -m "redact"
git show HEAD:drivers/net/foo.c | grep -q XXXXXX || fail "setup: the filter did not run"
spec_for drivers/net/foo.c >"$TMP/spec"
state . >"$TMP/before"
expect_fail "$TMP/err" "$TEST_REPO" commit "$TMP/spec"
grep_q "drivers/net/foo.c: .gitattributes passes it through the filter 'redact' (filter.redact.clean = sed s/SECRET/XXXXXX/)" "$TMP/err"
grep_q "commit it with git itself" "$TMP/err"
state . >"$TMP/after"
test_cmp "$TMP/before" "$TMP/after"
git log -p --all | grep -q SECRET && fail "the secret reached the history"

# a long-running filter process (git-lfs style), and required without a command
git config --unset filter.redact.clean
git config filter.redact.process 'redact-daemon'
expect_fail "$TMP/err" "$TEST_REPO" commit "$TMP/spec"
grep_q "(filter.redact.process = redact-daemon)" "$TMP/err"
git config --unset filter.redact.process
git config filter.redact.required true
expect_fail "$TMP/err" "$TEST_REPO" commit "$TMP/spec"
grep_q "(filter.redact.required = true)" "$TMP/err"

# a filter attribute naming no configured driver: git stores the text as is, so do we
git config --unset filter.redact.required
git config --unset filter.redact.smudge
"$TEST_REPO" commit "$TMP/spec" >/dev/null || fail "a filter without a driver should commit"
[ -z "$(git status --porcelain)" ] || fail "status not clean: $(git status --porcelain)"

# working-tree-encoding: a conversion libgit2 does not make
echo '*.c working-tree-encoding=UTF-16' >.gitattributes # in the work tree: its attributes count
spec_for drivers/char/lp.c >"$TMP/spec"
expect_fail "$TMP/err" "$TEST_REPO" commit "$TMP/spec"
grep_q "drivers/char/lp.c: .gitattributes gives it working-tree-encoding=UTF-16" "$TMP/err"

# eol: a CRLF work tree under "text eol=crlf" and under core.autocrlf commits LF blobs
# crlf_case NAME [ATTRIBUTES]
crlf_case() {
	git init -q -b main "$TMP/$1"
	cd "$TMP/$1"
	git config user.name "A U Thor"
	git config user.email "author@example.com"
	[ -z "${2:-}" ] || echo "$2" >.gitattributes
	write_driver drivers/net/foo.c
	sed -i 's/$/\r/' drivers/net/foo.c
	git add -A
	git commit -q -m initial
	sed 's/if (current->need_resched)/cond_resched();/; /^\t\t\tschedule();\r$/d' drivers/net/foo.c >"$TMP/$1.new"
	grep -q $'cond_resched();\r$' "$TMP/$1.new" || fail "setup: CRLF rewrite"
	echo "file drivers/net/foo.c $TMP/$1.new" >"$TMP/spec"
	"$TEST_REPO" commit "$TMP/spec" >/dev/null || fail "$1: commit failed"
	git show HEAD:drivers/net/foo.c | grep -q $'\r' && fail "$1: CRLF committed"
	git show HEAD:drivers/net/foo.c | grep -q 'cond_resched();$' || fail "$1: change not committed"
	cmp -s drivers/net/foo.c "$TMP/$1.new" || fail "$1: work tree not the CRLF text"
	[ -z "$(git status --porcelain)" ] || fail "$1: status not clean: $(git status --porcelain)"
}
crlf_case eol '*.c text eol=crlf'
crlf_case auto '* text=auto'
git config --global core.autocrlf true
crlf_case autocrlf
echo ok
