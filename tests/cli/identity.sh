#!/usr/bin/env bash
# commit and series take the identity as git does: GIT_AUTHOR_* and
# GIT_COMMITTER_* from the environment first, then user.name/user.email,
# then $EMAIL for the address; the sign-off and the cover letter's From are
# the committer's.
. "$(dirname "$0")/lib.sh"
command -v spatch >/dev/null || { echo "SKIP: spatch not installed"; exit 77; }
command -v git >/dev/null || { echo "SKIP: git not installed"; exit 77; }

export HOME=$WORK GIT_CONFIG_NOSYSTEM=1
unset GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL EMAIL
git config --global user.name "Config Name"
git config --global user.email config@example.org
mkdir repo && cp "$SRC/fixtures/drivers/char/lp_poll.c" repo/lp.c && cd repo || exit 1
git init -q && git add -A && git commit -qm base || bad "test repository"

# the config alone: author and committer from user.name/user.email
run commit -s lp.c; expect_rc 0 "commit with the config's identity"
[ "$(git log -1 --format='%an <%ae>|%cn <%ce>')" = "Config Name <config@example.org>|Config Name <config@example.org>" ] &&
	ok || bad "author and committer from the config: $(git log -1 --format='%an <%ae>|%cn <%ce>')"
git reset -q --hard HEAD~1

# the environment wins, each role its own; the sign-off is the committer's
GIT_AUTHOR_NAME="Ann Author" GIT_AUTHOR_EMAIL=ann@example.org GIT_COMMITTER_NAME="Cid Committer" \
	run commit -s lp.c
expect_rc 0 "commit with GIT_AUTHOR_* and GIT_COMMITTER_NAME"
[ "$(git log -1 --format='%an <%ae>')" = "Ann Author <ann@example.org>" ] && ok ||
	bad "author from GIT_AUTHOR_*: $(git log -1 --format='%an <%ae>')"
[ "$(git log -1 --format='%cn <%ce>')" = "Cid Committer <config@example.org>" ] && ok ||
	bad "committer name from GIT_COMMITTER_NAME, address from the config: $(git log -1 --format='%cn <%ce>')"
git log -1 --format=%B | grep -qx 'Signed-off-by: Cid Committer <config@example.org>' && ok ||
	bad "the sign-off is the committer's: $(git log -1 --format=%B | grep Signed-off-by)"
GIT_COMMITTER_NAME="Cid Committer" GIT_COMMITTER_EMAIL=cid@example.org run series -o ../out HEAD~1..HEAD
expect_rc 0 "series"
grep -qx 'From: Cid Committer <cid@example.org>' ../out/0000-cover-letter.patch && ok ||
	bad "the cover letter is from the committer: $(grep '^From:' ../out/0000-cover-letter.patch)"
grep -q '^From: Ann Author <ann@example.org>$' ../out/0001-*.patch && ok || bad "a patch keeps its author"
git reset -q --hard HEAD~1

# no address configured: $EMAIL, as git; none at all: a clear error
git config --global --unset user.email
EMAIL=env@example.org run commit lp.c; expect_rc 0 "commit with \$EMAIL"
[ "$(git log -1 --format='%ae')" = "env@example.org" ] && ok || bad "address from \$EMAIL: $(git log -1 --format=%ae)"
git reset -q --hard HEAD~1
run commit lp.c; expect_rc 3 "no identity"
expect_err 'no identity to commit with: set one with git config user.name' "says how to set one"
[ "$(git rev-list --count HEAD)" = 1 ] && ok || bad "nothing committed without an identity"
finish
