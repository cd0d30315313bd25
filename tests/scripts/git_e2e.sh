#!/usr/bin/env bash
# End to end with the real binary, spatch and git as the judge: the fixture
# tree in a throwaway repository -> preemptify commit -> preemptify series ->
# git am on a clone at the base reproduces the committed tree.
# usage: git_e2e.sh PREEMPTIFY SOURCE_DIR
set -u
bin=$1 src=$2
command -v spatch >/dev/null || { echo "SKIP: spatch is not installed"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME=$work GIT_CONFIG_NOSYSTEM=1
git config --global user.name "Test Porter"
git config --global user.email porter@example.com
git config --global init.defaultBranch main
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

mkdir "$work/repo" && cd "$work/repo" && git init -q .
cp -r "$src/fixtures/drivers" drivers
printf 'notes\n' > NOTES
git add drivers && git commit -qm "import 2.4 drivers"
git add NOTES   # the user's staged work must stay staged and stay out of our commits
base=$(git rev-parse HEAD)
status_before=$(git status --porcelain)

"$bin" commit --signoff drivers > "$work/commit.out" 2> "$work/commit.err"
rc=$?
[ "$rc" -eq 0 ] && ok || bad "commit exit $rc (want 0: it succeeded): $(cat "$work/commit.err")"
n=$(git rev-list --count "$base"..HEAD)
expected=$(find "$src/fixtures/expected" -name '*.c' | wc -l)
[ "$n" -eq "$expected" ] && ok || bad "$n commits, expected one per changed fixture ($expected)"
for c in $(git rev-list "$base"..HEAD); do
	files=$(git show --name-only --format= "$c" | grep -c .)
	[ "$files" -eq 1 ] && ok || bad "commit $c touches $files files"
	git log -1 --format=%B "$c" | grep -q '^Signed-off-by: Test Porter <porter@example.com>$' && ok ||
		bad "commit $c has no Signed-off-by"
	subj=$(git log -1 --format=%s "$c")
	[ ${#subj} -le 75 ] && ok || bad "subject too long: $subj"
	git log -1 --format=%B "$c" | awk 'length > 72 && !/^Signed-off-by/ { exit 1 }' && ok ||
		bad "commit $c body not wrapped at 72"
done
git log --format=%s "$base"..HEAD | grep -q '^net: pcnet_stats: ' && ok || bad "no 'net: pcnet_stats:' subject"
# every committed file is the reviewed expected output
for f in $(find "$src/fixtures/expected" -name '*.c'); do
	rel=${f#"$src"/fixtures/expected/}
	cmp -s "drivers/$rel" "$f" && ok || bad "drivers/$rel differs from fixtures/expected"
done
[ "$(git status --porcelain)" = "$status_before" ] && ok || bad "git status changed: $(git status --porcelain)"
git diff --cached --name-only | grep -qx NOTES && ok || bad "NOTES no longer staged"

"$bin" series -o "$work/out" > "$work/series.out" 2> "$work/series.err" && ok || bad "series: $(cat "$work/series.err")"
npatch=$(ls "$work/out"/*.patch 2>/dev/null | grep -vc 0000-cover-letter)
[ "$npatch" -eq "$n" ] && ok || bad "$npatch patches for $n commits"
[ -f "$work/out/0000-cover-letter.patch" ] && ok || bad "no cover letter"

git clone -q "$work/repo" "$work/clone" && cd "$work/clone" && git checkout -q "$base"
patches=$(ls "$work"/out/*.patch | grep -v '/0000-cover-letter.patch$')
# shellcheck disable=SC2086
git am -q $patches 2> "$work/am.err" && ok || bad "git am: $(cat "$work/am.err")"
git diff --quiet HEAD "$(git -C "$work/repo" rev-parse HEAD)" -- drivers && ok || bad "git am result differs from the committed tip"

# nothing left to do: a second run makes no commit
cd "$work/repo"
"$bin" commit drivers > "$work/commit2.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] && [ "$(git rev-list --count "$base"..HEAD)" -eq "$n" ] && ok || bad "second commit run: exit $rc"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
