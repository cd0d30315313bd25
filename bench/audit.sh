#!/usr/bin/env bash
# Audit what preemptify writes on a real tree, as a maintainer would check it:
#   1. copy TREE, run `diff` (pass 1) and `apply` it;
#   2. run `diff` again on the patched copy: it must be empty (idempotent);
#   3. re-scan the patched files: no P007 (unbalanced) or P006 (may sleep
#      with preemption off) that the original did not have;
#   4. parse every patched file: no new ERROR/MISSING node;
#   5. no uncompilable need_resched rewrite (&need_resched(), need_resched() = ...);
#   6. every comment line of the original is still in the file, unchanged;
#   7. a file gaining get_cpu() gains at least as many put_cpu() (a textual cross-check of 3);
# then prints sites fixed per fix kind and refusals per reason.
#
#   bench/audit.sh TREE [JOBS]
#   PREEMPTIFY=path/to/preemptify PARSE_ERRORS=path/to/parse_errors bench/audit.sh TREE
# Exit status: 0 when every check holds, 1 when one fails, 2 on usage errors.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
tree=${1:?usage: bench/audit.sh TREE [JOBS]}
jobs=${2:-$(nproc)}
bin=$(realpath "${PREEMPTIFY:-$here/build/preemptify}")
perr=$(realpath "${PARSE_ERRORS:-$here/build/tests/parse_errors}")
[ -x "$bin" ] || { echo "audit: $bin not built" >&2; exit 2; }
[ -x "$perr" ] || { echo "audit: $perr not built (cmake --build build --target parse_errors)" >&2; exit 2; }
[ -d "$tree" ] || { echo "audit: $tree: not a directory" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/preemptify-audit.XXXXXX")
trap 'rm -rf "$work"' EXIT
# every pass analyses the tree, never replays the result cache (nor touches the user's)
export XDG_CACHE_HOME=$work/cache
mkdir "$work/orig" "$work/new"
# one binary for every pass, whatever happens to the build meanwhile
cp "$bin" "$work/preemptify" && bin=$work/preemptify
tar -C "$tree" --exclude=.git -cf - . | tar -C "$work/orig" -xf -
tar -C "$work/orig" -cf - . | tar -C "$work/new" -xf -
cd "$work/new"

t0=$(date +%s.%N)
rc=0; "$bin" diff -j "$jobs" . > "$work/pass1.diff" 2> "$work/pass1.err" || rc=$?
t1=$(date +%s.%N)
[ "$rc" -le 1 ] || { echo "audit: diff failed (exit $rc)"; tail -5 "$work/pass1.err"; exit 1; }
rc=0; "$bin" apply -j "$jobs" . > "$work/apply.out" 2> "$work/apply.err" || rc=$?
[ "$rc" -le 1 ] || { echo "audit: apply failed (exit $rc)"; tail -5 "$work/apply.err"; exit 1; }
rc=0; "$bin" diff -j "$jobs" . > "$work/pass2.diff" 2> "$work/pass2.err" || rc=$?

grep '^+++ b/' "$work/pass1.diff" | sed 's|^+++ b/||; s|^\./||' | sort -u > "$work/files"
nfiles=$(wc -l < "$work/files")
hunks=$(grep -c '^@@' "$work/pass1.diff" || true)
hunks2=$(grep -c '^@@' "$work/pass2.diff" || true)

# 3. re-analysis of the patched files against the originals
problems() { # DIR: "file<TAB>rule<TAB>message" for P006/P007 in the patched files
	(cd "$1" && xargs -a "$work/files" -r "$bin" scan -f json --no-prefilter 2>/dev/null || true) |
		python3 -c '
import json, re, sys
for f in json.load(sys.stdin)["findings"]:
    if f["rule"] in ("P006", "P007"):
        print("%s\t%s\t%s" % (f["file"], f["rule"], re.sub(r"[0-9]+", "N", f["message"])))' | sort
}
problems "$work/orig" > "$work/problems.orig"
problems "$work/new" > "$work/problems.new"
comm -13 "$work/problems.orig" "$work/problems.new" > "$work/problems.added"
p007=$(grep -c $'\tP007\t' "$work/problems.added" || true)
p006=$(grep -c $'\tP006\t' "$work/problems.added" || true)

# 4. parse errors
(cd "$work/orig" && xargs -a "$work/files" -r "$perr") > "$work/perr.orig"
(cd "$work/new" && xargs -a "$work/files" -r "$perr") > "$work/perr.new"
newerr=$(paste -d' ' "$work/perr.orig" "$work/perr.new" | awk '$3 > $1 { n++; print $2 > "/dev/stderr" } END { print n + 0 }' 2> "$work/perr.files")

# 5. need_resched used as an lvalue or its address taken after the rewrite
badnr=$(grep -cE '^\+.*(([^&]|^)&[[:space:]]*\(?[[:space:]]*need_resched\(\)|need_resched\(\)[[:space:]]*(=[^=]|\+\+|--|[-+|&]=))' "$work/pass1.diff" || true)

# 6. comment lines kept, 7. textual cross-check: every file that gains a get_cpu() gains a put_cpu()
read -r moved unbalanced < <(cd "$work" && python3 - "$work/files" <<'EOF'
import re, sys
moved = unbalanced = 0
comment = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)
inserted = re.compile(r'^(put_cpu|put_cpu_var|put_cpu_no_resched|get_cpu|get_cpu_var|preempt_enable|preempt_disable|preempt_check_resched)\b')
def comments(text):
    out = []
    for m in comment.finditer(text):
        line_start = text.rfind('\n', 0, m.start()) + 1
        out.append((m.group(0), text[line_start:m.start()].strip()))
    return out
for path in open(sys.argv[1]).read().split('\n'):
    if not path:
        continue
    try:
        old = open('orig/' + path, errors='replace').read()
        new = open('new/' + path, errors='replace').read()
    except OSError:
        continue
    co, cn = comments(old), comments(new)
    if [c for c, _ in co] != [c for c, _ in cn]:
        moved += 1
        print('comments lost or reordered: %s' % path, file=sys.stderr)
    else:
        for (c, po), (_, pn) in zip(co, cn):
            if po != pn and (not po or not pn or (inserted.match(pn) and not inserted.match(po))):
                moved += 1
                print('comment moved: %s: %r now after %r (was after %r)' % (path, c[:40], pn, po), file=sys.stderr)
    for get, put in (('get_cpu()', 'put_cpu()'), ('preempt_disable()', 'preempt_enable()')):
        dg = new.count(get) - old.count(get)
        dp = new.count(put) - old.count(put)
        # several exits need several puts; the paths are checked by the re-analysis (P007)
        if (dg > 0) != (dp > 0) or dp < dg:
            unbalanced += 1
            print('added %s %d times, %s %d times: %s' % (get, dg, put, dp, path), file=sys.stderr)
print(moved, unbalanced)
EOF
)

printf 'tree                    %s\n' "$tree"
printf 'diff (pass 1)           %s s, %s hunks in %s files\n' "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')" "$hunks" "$nfiles"
printf '%s\n' "$(tail -1 "$work/pass1.err")"
echo
printf '%-44s %s\n' "check" "count (must be 0)"
printf '%-44s %s\n' "second diff: hunks" "$hunks2"
printf '%-44s %s\n' "new P007 (unbalanced) after the rewrite" "$p007"
printf '%-44s %s\n' "new P006 (may sleep, preemption off)" "$p006"
printf '%-44s %s\n' "files with new parse errors" "$newerr"
printf '%-44s %s\n' "uncompilable need_resched rewrites" "$badnr"
printf '%-44s %s\n' "comment lines changed or moved" "$moved"
printf '%-44s %s\n' "files gaining gets without as many puts" "$unbalanced"
echo
echo "refusals per reason (numbers and names folded):"
grep ': not fixed (' "$work/pass1.err" | sed -E 's/^[^ ]*: not fixed \((P[0-9]+)\): /\1 /; s/`[^`]*`/`X`/g; s/[A-Za-z_][A-Za-z_0-9]*\(\)/F()/g; s/[0-9]+/N/g' |
	sort | uniq -c | sort -rn | head -40 || true
if grep -q ': not fixed (' "$work/pass1.err"; then
	echo; echo "refused at rewrite time (planned as fixable, refused by the rewrite's checks):"
	grep ': not fixed (' "$work/pass1.err" | grep -v 'not rewritten: .*\(holds\|is a K&R\)' | head -30 || true
fi
if [ -n "${AUDIT_KEEP:-}" ]; then
	cp "$work/pass1.diff" "$work/pass1.err" "$work/pass2.diff" "$work/problems.added" "$AUDIT_KEEP"/ 2>/dev/null || true
fi
fail=0
for n in "$hunks2" "$p007" "$p006" "$newerr" "$badnr" "$moved" "$unbalanced"; do
	[ "$n" -eq 0 ] || fail=1
done
if [ "$fail" -ne 0 ]; then
	echo; echo "audit: FAILED"
	[ -s "$work/problems.added" ] && { echo "new problems:"; head -20 "$work/problems.added"; }
	[ "$hunks2" -eq 0 ] || { echo "second diff:"; grep '^+++ ' "$work/pass2.diff" | head -20; }
	exit 1
fi
echo; echo "audit: all checks hold"
