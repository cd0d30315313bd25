#!/usr/bin/env bash
# --fix-sleep on the fixtures that have a reviewed output for it
# (fixtures/expected-fix-sleep): allocations with GFP_KERNEL where P006
# proves the context atomic, their result tested for NULL by the next
# statement, become GFP_ATOMIC. Byte-exact result, compiles against the 2.6
# shim, a second run changes nothing, the default run leaves them be (the
# finding's note says --fix-sleep would), and the commit message says the
# allocation may now fail.
# usage: rewrite_fix_sleep.sh PREEMPTIFY SOURCE_DIR
. "$(dirname "$0")/golden_lib.sh"

golden_copy expected-fix-sleep tree
cd tree
# the default: no gfp-atomic hunk, and the note names the option
"$bin" diff --no-cache . > ../diff0.out 2>&1
grep -q 'GFP_ATOMIC' ../diff0.out && bad "diff without --fix-sleep writes GFP_ATOMIC" || ok
"$bin" scan --no-cache --format json . 2>/dev/null | grep -q '"fix_note": "--fix-sleep would use GFP_ATOMIC here"' &&
	ok || bad "scan without --fix-sleep: no note that --fix-sleep would fix it"
"$bin" scan --no-cache --fix-sleep --format json . 2>/dev/null |
	grep -q '"fix_note": "not made GFP_ATOMIC: the result is not checked for NULL before its first use; fix it by hand"' &&
	ok || bad "scan --fix-sleep: no refusal note for the unchecked result"
"$bin" apply --no-cache --fix-sleep . > ../apply.out 2> ../apply.err
rc=$?
[ "$rc" -eq 0 ] && ok || bad "apply --fix-sleep exit $rc (want 0): $(tail -3 ../apply.err)"
for f in $files; do
	cmp -s "$f" "$src/fixtures/expected-fix-sleep/$f" && ok ||
		{ bad "$f differs from fixtures/expected-fix-sleep"; diff -u "$src/fixtures/expected-fix-sleep/$f" "$f" | head -20; }
	want="$src/fixtures/expected/$f"
	[ -f "$want" ] || want="$src/fixtures/drivers/$f"
	cmp -s "$want" "$src/fixtures/expected-fix-sleep/$f" &&
		bad "$f: --fix-sleep changes nothing the default does not" || ok
done
out=$(bash "$src/scripts/check-fixtures-compile.sh" . "$src/fixtures/include-2.6" "$src/fixtures/include-2.4" 2>&1) \
	&& ok || bad "2.6 shim: $out"
"$bin" diff --no-cache --fix-sleep . > ../diff2.out 2>&1
rc=$?
[ "$rc" -eq 0 ] && [ -z "$(grep '^diff --git' ../diff2.out)" ] && ok || bad "diff --fix-sleep after apply not empty (exit $rc)"
# commit: the message says what GFP_ATOMIC changes
cd "$work"
for f in $files; do
	mkdir -p "repo/$(dirname "$f")"
	cp "$src/fixtures/drivers/$f" "repo/$f"
done
cd repo
git init -q . && git -c user.name=T -c user.email=t@example.org add -A &&
	git -c user.name=T -c user.email=t@example.org commit -qm base || { bad "git init"; echo "$pass passed, $fail failed"; exit 1; }
GIT_AUTHOR_NAME=T GIT_AUTHOR_EMAIL=t@example.org GIT_COMMITTER_NAME=T GIT_COMMITTER_EMAIL=t@example.org \
	"$bin" commit --no-cache --fix-sleep --group file . > ../commit.out 2>&1
git log --format=%B | tr '\n' ' ' > ../log.txt
grep -q 'GFP_ATOMIC: the allocations may now fail under memory pressure; the NULL checks at lines 49, 55, 74, 79, 97 and 109 handle it\.' ../log.txt &&
	ok || { bad "commit message: no word that the allocations may now fail"; cat ../commit.out; cat ../log.txt; }
grep -q 'GFP_ATOMIC: the allocation may now fail under memory pressure; the NULL check at line 43 handles it\.' ../log.txt &&
	ok || { bad "commit message: no word that the allocation may now fail"; cat ../commit.out; head -30 ../log.txt; }
grep -q 'gfp-atomic' ../log.txt && ok || bad "commit message: Generated-by does not name gfp-atomic"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
