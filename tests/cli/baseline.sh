#!/usr/bin/env bash
# scan --write-baseline / --baseline: recorded findings stay quiet when
# lines move; only new ones are reported; a bad baseline is a usage error.
. "$(dirname "$0")/lib.sh"

cp -r "$SRC/fixtures/drivers" tree
run scan -q tree; expect_rc 1 "the fixture tree has findings"
total=$(printf '%s\n' "$out" | grep -Ec '\[P00[0-9](, fixable)?\]$')

run scan --write-baseline tree/base.txt tree; expect_rc 0 "--write-baseline exits 0"
if [ -z "$out" ]; then ok; else bad "--write-baseline reports nothing on stdout"; fi
expect_err "^preemptify: $total findings recorded in tree/base\.txt$" "--write-baseline counts what it recorded"
if head -1 tree/base.txt | grep -Eq '^# preemptify baseline 1 \(preemptify [0-9.]+\)$'; then ok; else bad "header line names the tool version"; fi
n=$(grep -vc '^#' tree/base.txt)
if [ "$n" -eq "$total" ]; then ok; else bad "one line per finding ($n lines, $total findings)"; fi
if grep -v '^#' tree/base.txt | LC_ALL=C sort -c; then ok; else bad "baseline lines are sorted"; fi
if grep -q "^char/lp_poll.c	lp_write	P004	" tree/base.txt; then ok; else bad "file relative to the baseline, function, rule"; fi
if grep -q '	if (current->need_resched)$' tree/base.txt; then ok; else bad "line text with whitespace collapsed"; fi

run scan --baseline tree/base.txt tree; expect_rc 0 "rescan against the baseline: no findings"
expect_err '^preemptify: 0 findings in ' "summary counts none"
(cd tree && "$BIN" scan -q --baseline base.txt . >/dev/null); rc=$?; expect_rc 0 "the same baseline from another directory"

# line moves: blank lines on top, and a line re-indented
sed -i '1i \\n\n\n' tree/char/lp_poll.c
sed -i 's/^\tif (current->need_resched)$/\t  if  (current->need_resched)/' tree/char/lp_poll.c
run scan --baseline tree/base.txt tree; expect_rc 0 "lines moved and re-indented: still none"

# a new site is the only one reported
cat >>tree/char/lp_poll.c <<'EOC'
void lp_new_wait(void)
{
	if (current->need_resched)
		schedule();
}
EOC
run scan -q --baseline tree/base.txt tree; expect_rc 1 "a new site is reported"
n=$(printf '%s\n' "$out" | grep -Ec '\[P00[0-9](, fixable)?\]$')
if [ "$n" -eq 1 ]; then ok; else bad "only the new site is reported ($n)"; fi
expect_out '^tree/char/lp_poll\.c:[0-9]+:[0-9]+: .*\[P004(, fixable)?\]$' "the new site, with its moved line"
# the same line text in another function is a new finding
run scan -q --baseline tree/base.txt --format json tree; expect_out '"function": "lp_new_wait"' "JSON too"

# diff takes --baseline as well (no spatch needed to see the option parsed)
run diff --baseline missing.txt tree; expect_rc 2 "diff: a missing baseline is a usage error"
expect_err "option '--baseline': missing\.txt" "named"

# malformed baselines: usage errors naming file and line
printf '# preemptify baseline 1\nfoo.c\tf\tP003\n' >bad1.txt
run scan --baseline bad1.txt tree; expect_rc 2 "too few fields"
expect_err "^preemptify scan: option '--baseline': bad1\.txt:2: expected 4 tab-separated fields" "file:line"
printf '# preemptify baseline 1\n# comment\n\nfoo.c\tf\tP999\tx\n' >bad2.txt
run scan --baseline bad2.txt tree; expect_rc 2 "unknown rule"; expect_err "bad2\.txt:4: unknown rule 'P999'" "file:line"
printf 'foo.c\tf\tP003\tx\n' >bad3.txt
run scan --baseline bad3.txt tree; expect_rc 2 "no header"; expect_err "bad3\.txt:1: not a baseline file" "header required"
run scan --write-baseline nodir/b.txt tree; expect_rc 3 "--write-baseline into a missing directory"

# diff and apply fix only what the baseline does not hold
have spatch "rewrite part" || { finish; exit $?; }
mkdir d && cp "$SRC/fixtures/drivers/char/lp_poll.c" d/lp.c
run scan -q --write-baseline d/base.txt d/lp.c; expect_rc 0 "a baseline of one file"
run diff --baseline d/base.txt d/lp.c; expect_rc 0 "diff: nothing new, nothing to change"
printf '\nvoid lp_new_wait(void)\n{\n\tif (current->need_resched)\n\t\tschedule();\n}\n' >>d/lp.c
run diff --baseline d/base.txt d/lp.c; expect_rc 1 "diff: the new site is fixed"
n=$(printf '%s\n' "$out" | grep -c '^+.*cond_resched()')
if [ "$n" -eq 1 ]; then ok; else bad "diff changes only the new site ($n cond_resched lines)"; fi
run apply -q --baseline d/base.txt d/lp.c; expect_rc 0 "apply with a baseline"
n=$(grep -c 'cond_resched()' d/lp.c)
if [ "$n" -eq 1 ]; then ok; else bad "apply wrote only the new fix ($n)"; fi
finish
