#!/bin/bash
# One commit per file: subjects, bodies, one path per commit, status
# unchanged, file modes kept, run recorded for series.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"

make_repo "$TMP/r"
cd "$TMP/r"
chmod +x drivers/net/bar.c
git add drivers/net/bar.c
git commit -q -m "bar is executable"
base=$(git rev-parse HEAD)
git status --porcelain >"$TMP/status.before"
{
	spec_for drivers/net/foo.c
	echo "refused P003 get-cpu 12 CPU number cpu used in preemptible code | the region would sleep in kmalloc(GFP_KERNEL)"
	spec_for drivers/net/bar.c
	spec_for drivers/char/lp.c
	echo "file fs/jbd/commit.c -"
} >"$TMP/spec"

"$TEST_REPO" commit --signoff "$TMP/spec" >"$TMP/out" || fail "commit failed"
grep_q "unchanged fs/jbd/commit.c" "$TMP/out"

# three commits, newest first, with the path-derived prefixes
git log --format=%s "$base"..HEAD >"$TMP/subjects"
printf '%s\n' "char: lp: use cond_resched()" "net: bar: use cond_resched()" \
	"net: foo: use cond_resched()" >"$TMP/expect"
test_cmp "$TMP/expect" "$TMP/subjects"

# each commit touches exactly its one file
for i in 0 1 2; do
	git show --name-only --format= "HEAD~$i" >"$TMP/names"
	[ "$(wc -l <"$TMP/names")" -eq 1 ] || fail "HEAD~$i touches $(cat "$TMP/names")"
done
[ "$(git show --name-only --format= HEAD~2)" = drivers/net/foo.c ] || fail "first commit is not foo.c"

# the worktree holds the new text, committed
for f in drivers/net/foo.c drivers/net/bar.c drivers/char/lp.c; do
	cmp -s "$f" "$TMP/new/$f" || fail "$f does not hold the new text"
	git diff --quiet HEAD -- "$f" || fail "$f differs from HEAD"
done
git diff --quiet "$base" HEAD -- fs/jbd/commit.c || fail "unchanged file was committed"

# git status is exactly what it was
git status --porcelain >"$TMP/status.after"
test_cmp "$TMP/status.before" "$TMP/status.after"

# modes kept in git and on disk; no temporary files left
[ "$(git ls-files -s drivers/net/bar.c | cut -c1-6)" = 100755 ] || fail "bar.c lost its mode in git"
[ -x drivers/net/bar.c ] || fail "bar.c lost its exec bit"
[ "$(git ls-files -s drivers/net/foo.c | cut -c1-6)" = 100644 ] || fail "foo.c mode changed"
[ -z "$(find . -name '*.preemptify-*')" ] || fail "temporary files left"

# the whole message of the first commit
git log -1 --format=%B HEAD~2 >"$TMP/msg"
cat >"$TMP/expect" <<'M'
net: foo: use cond_resched()

Make this code safe under the 2.6 preemptible kernel.

Sites changed:

- P004 resched, line 7: manual reschedule check polls
  current->need_resched. 2.6 removed the need_resched field.

Sites left unchanged for manual review:

- P003 cpu-id, line 12: CPU number cpu used in preemptible code. Not
  changed: the region would sleep in kmalloc(GFP_KERNEL).

Signed-off-by: A U Thor <author@example.com>

M
test_cmp "$TMP/expect" "$TMP/msg"

# author and committer come from git config
[ "$(git log -1 --format='%an <%ae>|%cn <%ce>')" = "A U Thor <author@example.com>|A U Thor <author@example.com>" ] ||
	fail "wrong identity: $(git log -1 --format='%an <%ae>|%cn <%ce>')"

# the run is recorded for series; still on main; repository sound
[ "$(git rev-parse refs/preemptify/base)" = "$base" ] || fail "base not recorded"
[ "$(git rev-parse refs/preemptify/tip)" = "$(git rev-parse HEAD)" ] || fail "tip not recorded"
[ "$(git symbolic-ref HEAD)" = refs/heads/main ] || fail "HEAD moved off main"
git fsck --no-progress 2>&1 | grep -v '^dangling' >"$TMP/fsck" || true
[ ! -s "$TMP/fsck" ] || { cat "$TMP/fsck"; fail "fsck complaints"; }
# reported ids are the commits
grep '^commit ' "$TMP/out" | cut -d' ' -f2 >"$TMP/ids"
git rev-list --reverse "$base"..HEAD >"$TMP/expect"
test_cmp "$TMP/expect" "$TMP/ids"
echo "ok"
