#!/bin/bash
# series --split-by subsystem: one series per subsystem (drivers/char,
# drivers/net, fs/jbd), each in its own directory, numbered on its own, with
# its own cover letter (its share of the hand work, the files a patch changes
# elsewhere) and its own addresses; every commit in exactly one series; each
# series applies with git am onto the base alone. A series that changes a
# file another series changed first says it applies after that one.
. "${GIT_TEST_LIB:-$(dirname "$0")/lib.sh}"
: "${PREEMPTIFY:?PREEMPTIFY must name the preemptify binary}"
command -v spatch >/dev/null || skip "spatch is not installed"
P=$PREEMPTIFY
SRC=$(cd "$(dirname "$0")/../.." && pwd)

# the tree: a per-CPU struct shared by drivers/char, include and kernel (one
# commit), two more drivers in drivers/char, two in drivers/net, one in
# fs/jbd, and hand work only in drivers/block (and five more) and in a
# third drivers/net file
cp -r "$SRC/fixtures/trees/cpustat" "$TMP/r"
make_repo "$TMP/r"
cd "$TMP/r"
cp "$SRC/fixtures/drivers/char/lp_poll.c" drivers/char/
# (six subsystems with hand work and no commit: more groups than fit the first allocation)
for d in block isdn mtd sbus scsi video; do
	mkdir -p drivers/$d
	cp "$SRC/fixtures/drivers/block/loop_sleep_lock.c" drivers/$d/
done
cp "$SRC/fixtures/drivers/misc/drop_through_helper.c" drivers/net/
printf 'NET\nM:\tnet@example.org\nF:\tdrivers/net/\n\nJBD\nM:\tjbd@example.org\nF:\tfs/jbd/\n' >MAINTAINERS
git add -A && git commit -q -m "the tree"
git tag base
"$P" commit -q . >/dev/null 2>"$TMP/err" || { cat "$TMP/err"; fail "commit failed"; }
[ "$(git rev-list --count base..HEAD)" -eq 6 ] || fail "want 6 commits"

"$P" series --split-by subsystem --cc-from-maintainers -o "$TMP/out" >"$TMP/lines" 2>"$TMP/err" ||
	fail "series --split-by failed"
# committed without -s: series says so (checkpatch's MISSING_SIGN_OFF), and -s adds the sign-off
grep_q "preemptify series: 6 of 6 patches carry no Signed-off-by: line (-s adds yours)" "$TMP/err"
"$P" series -s --split-by subsystem -o "$TMP/signed" >/dev/null 2>"$TMP/err" || fail "series -s failed"
[ ! -s "$TMP/err" ] || { cat "$TMP/err" >&2; fail "series -s: a word on stderr"; }
grep -q '^Signed-off-by: A U Thor <author@example.com>$' "$TMP"/signed/fs-jbd/0001-*.patch || fail "series -s: the sign-off"
cat >"$TMP/want" <<EOF
drivers/block: no patch, 4 findings left for hand work
$TMP/out/drivers-char/: drivers/char, 3 patches
drivers/isdn: no patch, 4 findings left for hand work
drivers/mtd: no patch, 4 findings left for hand work
$TMP/out/drivers-net/: drivers/net, 2 patches, 1 finding left for hand work
drivers/sbus: no patch, 4 findings left for hand work
drivers/scsi: no patch, 4 findings left for hand work
drivers/video: no patch, 4 findings left for hand work
$TMP/out/fs-jbd/: fs/jbd, 1 patch
EOF
test_cmp "$TMP/want" "$TMP/lines"
[ "$(ls "$TMP/out")" = "$(printf 'drivers-char\ndrivers-net\nfs-jbd')" ] || fail "one directory per series"

# numbered on their own, cover letter 0/N naming the subsystem
grep_q "Subject: [PATCH 0/2] drivers/net: make 2 files preempt-safe for 2.6" "$TMP/out/drivers-net/0000-cover-letter.patch"
for n in 1 2; do
	grep -q "^Subject: \[PATCH $n/2\] net: " "$TMP"/out/drivers-net/000$n-*.patch || fail "drivers-net patch $n/2"
done
grep -q '^Subject: \[PATCH 1/1\] jbd: commit: ' "$TMP"/out/fs-jbd/0001-*.patch || fail "fs-jbd patch 1/1"
grep -q '^Subject: \[PATCH 1/3\] cstat: ' "$TMP"/out/drivers-char/0001-*.patch || fail "the shared commit: first file's subsystem"

# every commit in exactly one series
for p in "$TMP"/out/*/000[1-9]-*.patch; do head -1 "$p" | cut -d' ' -f2; done | sort >"$TMP/in-series"
git rev-list base..HEAD | sort >"$TMP/commits"
test_cmp "$TMP/commits" "$TMP/in-series"

# each series applies alone onto the base, in order
for d in drivers-char drivers-net fs-jbd; do
	git worktree add -q --detach "$TMP/am-$d" base
	git -C "$TMP/am-$d" am -q "$TMP"/out/$d/000[1-9]-*.patch || fail "$d: git am onto the base failed"
done
[ "$(git -C "$TMP/am-drivers-net" rev-list --count base..HEAD)" -eq 2 ] || fail "drivers-net: 2 commits applied"

# the cover letters: the other series, the shared commit's other files, the hand work of its own files
c=$TMP/out/drivers-char/0000-cover-letter.patch
grep_q "This series ports 5 files for drivers/char to the 2.6 preemptible" "$c"
tr '\n' ' ' <"$c" >"$TMP/flat"
grep_q "one of 3 series made from one preemptify run, one per subsystem: drivers/char, drivers/net, fs/jbd. It applies on its own" "$TMP/flat"
grep_q "Patch 1/3 (cstat: make per-CPU statistics preempt-safe) also changes files of other subsystems: include/linux/cpustat.h, kernel/cpustat.c." "$TMP/flat"
grep_q "None of the findings left is in drivers/char." "$TMP/flat"
n=$TMP/out/drivers-net/0000-cover-letter.patch
tr '\n' ' ' <"$n" >"$TMP/flat"
grep_q "25 findings need you" "$TMP/flat"
grep_q "Of the 25 findings left, 1 is in drivers/net, listed below; the other 24 are in other subsystems' files." "$TMP/flat"
grep_q "  drivers/net/drop_through_helper.c:" "$n"
if grep -q "loop_sleep_lock" "$n" "$c"; then fail "another subsystem's hand work in a cover letter"; fi
# its own addresses
grep -q '^Cc: net@example.org$' "$n" || fail "drivers-net: its maintainer"
grep -q 'jbd@example.org' "$n" && fail "drivers-net: another subsystem's maintainer"
grep -q '^Cc: jbd@example.org$' "$TMP/out/fs-jbd/0000-cover-letter.patch" || fail "fs-jbd: its maintainer"

# later commits: on a file the drivers/char series changes (its series
# applies after that one), and on drivers/net after fs/jbd's commit (the
# diffstat of drivers/net's series, no longer consecutive, shows its files only)
sed -i 's/^};/};\n/' include/linux/cpustat.h
git commit -q -am "include: cpustat: a blank line"
echo "/* end */" >>drivers/net/foo.c
git commit -q -am "net: foo: a comment"
"$P" series --split-by subsystem base.. -o "$TMP/out2" >"$TMP/lines" || fail "second series failed"
grep_q "$TMP/out2/drivers-net/: drivers/net, 3 patches" "$TMP/lines"
sed -n '/^ .* | /p' "$TMP/out2/drivers-net/0000-cover-letter.patch" | awk '{print $1}' >"$TMP/stat"
printf 'drivers/net/bar.c\ndrivers/net/foo.c\n' >"$TMP/want"
test_cmp "$TMP/want" "$TMP/stat"
grep_q "$TMP/out2/include/: include, 1 patch, applies after 1 other series" "$TMP/lines"
tr '\n' ' ' <"$TMP/out2/include/0000-cover-letter.patch" >"$TMP/flat"
grep_q "It applies after the drivers/char series (include/linux/cpustat.h): those patches change a file this series changes too." "$TMP/flat"
git worktree add -q --detach "$TMP/am-dep" base
git -C "$TMP/am-dep" am -q "$TMP"/out2/drivers-char/000[1-9]-*.patch "$TMP"/out2/include/0001-*.patch ||
	fail "the dependent series after the one it names"

# the value is checked
set +e
"$P" series --split-by maintainer -o "$TMP/out3" 2>"$TMP/err"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "--split-by maintainer: exit $rc, want 2"
grep_q "expects 'subsystem' or 'none'" "$TMP/err"
[ ! -e "$TMP/out3" ] || fail "nothing written on a usage error"
echo ok
