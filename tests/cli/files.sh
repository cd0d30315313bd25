#!/usr/bin/env bash
# apply and the user's files: a failed write is reported and not counted as
# fixed; a file whose owner cannot be kept is refused, never given away;
# the summary counts only what was written.
. "$(dirname "$0")/lib.sh"
command -v spatch >/dev/null || skip_all "spatch is not installed"

src_fixture=$SRC/fixtures/drivers/char
cp "$src_fixture/lp_poll.c" a.c
cp a.c a.orig
run diff a.c
[ "$rc" -eq 1 ] && ok || { bad "the fixture has nothing to fix"; finish; }

# a write that fails (the test hook stands in for a full disk)
PREEMPTIFY_TEST_FAULT=write-fail=1 run apply a.c
expect_rc 3 "failed write: exit 3 (a file failed)"
expect_err 'a\.c: error: .*No space left' "failed write: the reason is given"
expect_err '^preemptify: 0 sites fixed; [0-9]+ findings? needs? you: [0-9]+ fixable sites? that could not be fixed' "failed write: nothing counted as fixed, the site left"
expect_no_out '^fixed a\.c' "failed write: no 'fixed' line"
cmp -s a.c a.orig && ok || bad "failed write: the file was changed"
[ -z "$(ls -A | grep preemptify-)" ] && ok || bad "failed write: temporary file left"

# another user's file in a directory we may write: the owner cannot be kept
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	mkdir shared && chmod 1777 shared && cp a.orig shared/a.c && chmod 0644 shared/a.c
	chmod 755 "$WORK"
	setpriv --reuid=nobody --regid=nogroup --clear-groups env TMPDIR=/tmp "$BIN" apply shared/a.c \
		>"$WORK/.out" 2>"$WORK/.err"
	rc=$?; out=$(cat "$WORK/.out"); err=$(cat "$WORK/.err")
	expect_rc 3 "other owner: exit 3 (a file failed)"
	expect_err 'owned by uid 0 .*not written' "other owner: refused with the reason"
	[ "$(stat -c %u shared/a.c)" -eq 0 ] && ok || bad "other owner: the owner changed"
	cmp -s shared/a.c a.orig && ok || bad "other owner: the file was changed"
	[ -z "$(ls -A shared | grep preemptify-)" ] && ok || bad "other owner: temporary file left"
	# a repository owned by another user: git's own refusal, said as such
	if command -v git >/dev/null; then
		git init -q repo && cp a.orig repo/a.c && chmod -R a+rwX repo
		setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME=/nonexistent "$BIN" commit repo/a.c \
			>"$WORK/.out" 2>"$WORK/.err"
		rc=$?; out=$(cat "$WORK/.out"); err=$(cat "$WORK/.err")
		expect_rc 3 "repository of another user: exit 3"
		expect_err 'owned by another user' "repository of another user: says so, not 'not a repository'"
	fi
else
	skip_part "owner check" "needs root, setpriv and a nobody user"
fi
finish
