#!/usr/bin/env bash
# --modernize on the fixtures that have a reviewed output for it
# (fixtures/expected-modernize): NR_CPUS arrays every use of which by the
# running CPU already has preemption off, which the default leaves alone,
# become DEFINE_PER_CPU. Byte-exact result, compiles against the 2.6 shim,
# a second run changes nothing, and the default run leaves those arrays be.
# usage: rewrite_modernize.sh PREEMPTIFY SOURCE_DIR
. "$(dirname "$0")/golden_lib.sh"

golden_copy expected-modernize .
"$bin" apply --modernize . > apply.out 2> apply.err
rc=$?
[ "$rc" -eq 0 ] && ok || bad "apply --modernize exit $rc (want 0): $(tail -3 apply.err)"
grep -q '; not fixed: ' apply.err && bad "sites not fixed: $(grep '; not fixed: ' apply.err)" || ok
for f in $files; do
	cmp -s "$f" "$src/fixtures/expected-modernize/$f" && ok ||
		{ bad "$f differs from fixtures/expected-modernize"; diff -u "$src/fixtures/expected-modernize/$f" "$f" | head -20; }
	# the default keeps what --modernize converted: its output is fixtures/expected/ (or the fixture)
	want="$src/fixtures/expected/$f"
	[ -f "$want" ] || want="$src/fixtures/drivers/$f"
	cmp -s "$want" "$src/fixtures/expected-modernize/$f" &&
		bad "$f: --modernize changes nothing the default does not" || ok
done
rm -f apply.out apply.err
out=$(bash "$src/scripts/check-fixtures-compile.sh" . "$src/fixtures/include-2.6" "$src/fixtures/include-2.4" 2>&1) \
	&& ok || bad "2.6 shim: $out"
"$bin" diff --modernize . > diff2.out 2>&1
rc=$?
[ "$rc" -eq 0 ] && [ -z "$(grep '^diff --git' diff2.out)" ] && ok || bad "diff --modernize after apply not empty (exit $rc)"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
