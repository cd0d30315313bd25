#!/usr/bin/env bash
# Odd input a hostile or unlucky user gives: K&R definitions, control
# characters in file names, a file named twice, no spatch.
. "$(dirname "$0")/lib.sh"

# K&R definitions without a return type: reported as unparsed, and the
# array they use is not converted (half a conversion would not compile)
cat > kr.c <<'C'
#include <linux/smp.h>
static int nr[NR_CPUS];

kr_count(x)
int x;
{
	nr[smp_processor_id()] += x;
	return x;
}

kr_bump(y)
{
	nr[smp_processor_id()]++;
}

void modern(void)
{
	nr[smp_processor_id()]++;
}
C
run scan -v kr.c; expect_rc 1 "K&R: the modern site is flagged"
expect_out 'kr\.c:7:[0-9]+: note: unparsed: .*not read as a function \(a K&R definition' "K&R: the first definition is reported unparsed"
expect_out 'kr\.c:13:[0-9]+: note: unparsed: .*not read as a function \(a K&R definition' "K&R: the second definition is reported unparsed"
expect_out 'nr is used at line 7 outside any function' "K&R: the array stays an array, with the reason"
if command -v spatch >/dev/null; then
	run diff kr.c
	expect_no_out 'DEFINE_PER_CPU' "K&R: no half conversion"
fi

# control characters in a file name: refused, shown escaped
esc=$(printf 'e\033[31mred.c')
cp kr.c "$esc"
run scan "$esc" kr.c; expect_rc 3 "control characters: exit 3"
expect_out 'e\\x1b\[31mred\.c: error: the file name contains control characters' "control characters: escaped name"
if printf '%s%s' "$out" "$err" | grep -q "$(printf '\033')"; then bad "control characters: ESC printed raw"; else ok; fi
rm -f "$esc"

# a file named twice is scanned once
run scan kr.c ./kr.c .; expect_err 'in 1 file, ' "a file named three ways is scanned once"

# no spatch: says nothing was rewritten, not "0 not fixed"
run diff --spatch "$WORK/no-such-spatch" kr.c; expect_rc 3 "no spatch: exit 3"
expect_err 'nothing rewritten; 1 fixable site left as it is' "no spatch: the fixable sites are counted"
expect_no_out '^(diff|---|\+\+\+)' "no spatch: no diff"
if printf '%s\n' "$err" | grep -q '0 not fixed'; then bad "no spatch: a misleading total"; else ok; fi
finish
