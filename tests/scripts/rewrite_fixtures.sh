#!/usr/bin/env bash
# End-to-end rewrite of the fixture tree with the real binary and spatch:
#   - `diff` output applies with `git apply --check` on a pristine copy;
#   - `apply` gives exactly fixtures/expected/<path> (files without one stay unchanged);
#   - every rewritten fixture compiles against the 2.6 shim headers;
#   - idempotency: a second apply changes nothing, diff is empty, scan finds nothing fixable;
#   - no new P007 (unbalanced) finding appears.
# usage: rewrite_fixtures.sh PREEMPTIFY SOURCE_DIR
set -u
bin=$1 src=$2
command -v spatch >/dev/null || { echo "SKIP: spatch is not installed"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

cp -r "$src/fixtures/drivers" "$work/drivers"
cp -r "$src/fixtures/drivers" "$work/pristine"
cd "$work"

"$bin" diff --color=never drivers > fix.diff 2> diff.err
rc=$?
[ "$rc" -eq 1 ] && ok || bad "diff exit $rc (want 1: changes): $(tail -3 diff.err)"
grep -q '; not fixed: ' diff.err && bad "diff reported sites not fixed: $(grep '; not fixed: ' diff.err)" || ok
# paths are a/drivers/...: -p2 applies them inside the pristine copy
(cd pristine && git apply --check -p2 ../fix.diff 2>../apply-check.err) \
	&& ok || bad "git apply --check: $(cat apply-check.err)"

"$bin" scan -f json drivers 2>/dev/null > before.json
"$bin" apply drivers > apply.out 2> apply.err
rc=$?
[ "$rc" -eq 0 ] && ok || bad "apply exit $rc (want 0: it succeeded): $(tail -3 apply.err)"

while IFS= read -r f; do
	rel=${f#drivers/}
	if [ -f "$src/fixtures/expected/$rel" ]; then
		cmp -s "$f" "$src/fixtures/expected/$rel" && ok || { bad "$rel differs from fixtures/expected"; diff -u "$src/fixtures/expected/$rel" "$f" | head -20; }
	else
		cmp -s "$f" "pristine/$rel" && ok || bad "$rel changed but has no fixtures/expected/$rel"
	fi
done < <(find drivers -name '*.c' | sort)

# fixtures marked "2.6-build: refused" keep 2.4 code that only a human can port
mkdir built26
(cd drivers && find . -name '*.c' -print0 | xargs -0 grep -L '2.6-build: refused' |
	while IFS= read -r f; do mkdir -p "../built26/$(dirname "$f")"; cp "$f" "../built26/$f"; done)
out=$(bash "$src/scripts/check-fixtures-compile.sh" built26 "$src/fixtures/include-2.6" "$src/fixtures/include-2.4" 2>&1) \
	&& ok || bad "rewritten fixtures do not compile against the 2.6 shim: $out"

"$bin" apply drivers > apply2.out 2>&1
rc=$?
[ "$rc" -eq 0 ] && ok || bad "second apply exit $rc (want 0): $(cat apply2.out)"
"$bin" diff drivers > diff2.out 2>&1
rc=$?
[ "$rc" -eq 0 ] && [ -z "$(grep '^diff --git' diff2.out)" ] && ok || bad "diff after apply not empty (exit $rc)"
"$bin" scan -f json drivers 2>/dev/null > after.json
python3 - before.json after.json <<'PY' && ok || bad "scan after apply"
import json, sys
before = json.load(open(sys.argv[1]))["findings"]
after = json.load(open(sys.argv[2]))["findings"]
fixable = [f for f in after if f["fixable"]]
for f in fixable:
    print("still fixable:", f["file"], f["line"], f["rule"], f["message"])
p7 = lambda fs: sorted((f["file"], f["function"]) for f in fs if f["rule"] == "P007")
new = set(p7(after)) - set(p7(before))
for n in new:
    print("new P007 in", n)
sys.exit(1 if fixable or new else 0)
PY
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
