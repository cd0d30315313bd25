#!/usr/bin/env bash
# --target modern on the fixtures that have a reviewed modern output
# (fixtures/expected-modern): byte-exact result, compiles against the modern
# shim (no __get_cpu_var, no preempt_enable_no_resched/preempt_check_resched
# for modules), and a second run changes nothing.
# usage: rewrite_modern.sh PREEMPTIFY SOURCE_DIR
. "$(dirname "$0")/golden_lib.sh"

golden_copy expected-modern .
"$bin" apply --target modern . > apply.out 2> apply.err
rc=$?
[ "$rc" -eq 0 ] && ok || bad "apply --target modern exit $rc (want 0): $(tail -3 apply.err)"
grep -q '; not fixed: ' apply.err && bad "sites not fixed: $(grep '; not fixed: ' apply.err)" || ok
for f in $files; do
	cmp -s "$f" "$src/fixtures/expected-modern/$f" && ok ||
		{ bad "$f differs from fixtures/expected-modern"; diff -u "$src/fixtures/expected-modern/$f" "$f" | head -20; }
done
rm -f apply.out apply.err
out=$(bash "$src/scripts/check-fixtures-compile.sh" . "$src/fixtures/include-modern" \
	"$src/fixtures/include-2.6" "$src/fixtures/include-2.4" 2>&1) && ok || bad "modern shim: $out"
"$bin" apply --target modern . > apply2.out 2>&1
rc=$?
[ "$rc" -eq 0 ] && ok || bad "second apply --target modern exit $rc: $(cat apply2.out)"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
