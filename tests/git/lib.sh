# Shared setup for the git stage's end-to-end tests (sourced, not run).
# Each test gets a throwaway HOME and repository; the real git CLI judges
# what test_repo (repo_commit_changes / repo_series) did.
set -eu
: "${TEST_REPO:?TEST_REPO must name the test_repo binary}"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export HOME="$TMP/home"
export GIT_CONFIG_NOSYSTEM=1
export XDG_CONFIG_HOME="$HOME/.config"
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL \
	GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL 2>/dev/null || true
mkdir -p "$HOME"

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# skip WHY: this test cannot run here; ctest shows it Skipped (SKIP_RETURN_CODE 77).
skip() {
	echo "SKIP: $*"
	exit 77
}

# test_cmp EXPECTED ACTUAL
test_cmp() {
	diff -u "$1" "$2" >&2 || fail "$2 differs from $1"
}

# expect_fail OUTFILE CMD...: CMD must exit non-zero; its stderr goes to OUTFILE.
expect_fail() {
	local out=$1
	shift
	if "$@" >"$out.stdout" 2>"$out"; then
		fail "expected failure: $*"
	fi
}

# grep_q PATTERN FILE: fixed-string match or fail showing the file.
grep_q() {
	grep -qF -- "$1" "$2" || { cat "$2" >&2; fail "'$1' not in $2"; }
}

# A 2.4-style driver with a manual reschedule check.
write_driver() {
	mkdir -p "$(dirname "$1")"
	cat >"$1" <<'C'
#include <linux/sched.h>

static void poll_loop(void)
{
	for (;;) {
		do_work();
		if (current->need_resched)
			schedule();
	}
}
C
}

# What the rewrite would make of write_driver's file.
rewritten() {
	sed 's/if (current->need_resched)/cond_resched();/; /^\t\t\tschedule();$/d' "$1"
}

# make_repo DIR: a repository with an identity, four drivers and a README,
# all committed on branch main.
make_repo() {
	git init -q -b main "$1"
	git -C "$1" config user.name "A U Thor"
	git -C "$1" config user.email "author@example.com"
	for f in drivers/net/foo.c drivers/net/bar.c drivers/char/lp.c fs/jbd/commit.c; do
		write_driver "$1/$f"
	done
	echo "readme" >"$1/README"
	git -C "$1" add -A
	git -C "$1" commit -q -m "initial"
}

# new_text REPO FILE: writes the rewritten text of REPO/FILE to $TMP/new/FILE, prints its path.
new_text() {
	mkdir -p "$(dirname "$TMP/new/$2")"
	rewritten "$1/$2" >"$TMP/new/$2"
	echo "$TMP/new/$2"
}

# spec_line FILE: a spec stanza for REPO-relative FILE (run from the repo).
spec_for() {
	echo "file $1 $(new_text . "$1")"
	echo "fixed P004 cond-resched 7 manual reschedule check polls current->need_resched | 2.6 removed the need_resched field. Extra sentence."
}

# state REPO: a snapshot of HEAD, refs, index, status and file contents.
state() {
	{
		git -C "$1" rev-parse HEAD 2>/dev/null || echo unborn
		git -C "$1" symbolic-ref -q HEAD || echo detached
		git -C "$1" for-each-ref --format='%(refname) %(objectname)'
		git -C "$1" ls-files -s
		git -C "$1" status --porcelain
		(cd "$1" && find . -path ./.git -prune -o -type f -print | sort | xargs md5sum)
	}
}
