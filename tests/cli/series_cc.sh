#!/usr/bin/env bash
# series for several maintainers: --cc-from-maintainers reads the tree's
# MAINTAINERS (M: and L: of the entries whose F: patterns cover a patch's
# files), --cc-cmd and --to-cmd run a command on each patch file; each
# patch gets its own addresses, the cover letter all of them.
. "$(dirname "$0")/lib.sh"
command -v spatch >/dev/null || skip_all "spatch is not installed; this test runs the rewrite"
export GIT_AUTHOR_NAME=T GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=T GIT_COMMITTER_EMAIL=t@example.com
mkdir -p repo/drivers/char repo/drivers/net && cd repo || exit 1
cp "$SRC/fixtures/drivers/char/lp_poll.c" drivers/char/
cp "$SRC/fixtures/drivers/net/plip_resched.c" drivers/net/
printf 'CHAR\nM:\tChar Keeper <char@example.org>\nL:\tchar-list@example.org\nF:\tdrivers/char/\n\nNET\nM:\tnet@example.org\nF:\tdrivers/net/*.c\n' >MAINTAINERS
printf '#!/bin/sh\ncase "$1" in *plip*) echo "Plip Person <plip@example.org>";; esac\necho "not an address"\n' >../cc.sh
printf '#!/bin/sh\necho "to@example.org"\n' >../to.sh
chmod +x ../cc.sh ../to.sh
git init -q && git add -A && git commit -qm base || bad "test repository"
run commit --no-tree drivers; expect_rc 0 "commit"
run series -o ../out --cc-from-maintainers --cc-cmd "$WORK/cc.sh" --to-cmd "$WORK/to.sh"; expect_rc 0 "series"
lp=$(ls ../out/*lp_poll*.patch) plip=$(ls ../out/*plip*.patch)
grep -q '^Cc: Char Keeper <char@example.org>,$' "$lp" && grep -q '^    char-list@example.org$' "$lp" && ok || bad "lp: its maintainer and list"
grep -q 'net@example.org\|plip@example.org' "$lp" && bad "lp: another subsystem's address" || ok
grep -q 'net@example.org' "$plip" && grep -q 'Plip Person <plip@example.org>' "$plip" && ok || bad "plip: its maintainer and the command's address"
grep -q 'char@example.org' "$plip" && bad "plip: another subsystem's address" || ok
grep -q '^To: to@example.org$' "$plip" && ok || bad "--to-cmd: To:"
grep -q 'not an address' "$plip" && bad "a line without an address is dropped" || ok
grep -q 'char@example.org' ../out/0000-cover-letter.patch && grep -q 'net@example.org' ../out/0000-cover-letter.patch && ok || bad "the cover letter goes to all of them"
rm MAINTAINERS
run series -f -o ../out --cc-from-maintainers; expect_rc 2 "no MAINTAINERS: a usage error"
expect_err 'no MAINTAINERS' "says why"
run series -f -o ../out --cc-cmd false; expect_rc 3 "a failing --cc-cmd fails the series"
finish
