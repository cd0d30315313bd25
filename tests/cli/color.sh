#!/usr/bin/env bash
# scan's text report in colour, as diff's: --color auto (the default) paints
# it only on a terminal (a pseudo-terminal from util-linux script(1)) and
# NO_COLOR unset; always and never as they say; never into -o FILE, JSON or
# SARIF. The paint is gcc's: the location bold, the level and the [rule] tag
# red (error), magenta (warning), cyan (note), each closed by a reset.
. "$(dirname "$0")/lib.sh"
ESC=$(printf '\033')
B="${ESC}\[01m" R="${ESC}\[m" MAG="${ESC}\[01;35m" CYAN="${ESC}\[01;36m" RED="${ESC}\[01;31m"
cat >p.c <<'EOC'
static int hits[NR_CPUS];
void bump(void)
{
	int cpu = smp_processor_id();
	hits[cpu]++;
	notify(cpu);
}
void wait_locked(spinlock_t *l)
{
	spin_lock(l);
	kmalloc(64, GFP_KERNEL);
	spin_unlock(l);
}
EOC

run scan --color=always p.c; expect_rc 1 "findings"
expect_out "^${B}p\.c:4:12:${R} ${MAG}warning:${R} .* \[${MAG}P003, fixable${R}\]$" "a warning: bold location, magenta level and tag"
expect_out "^${B}p\.c:1:12:${R} ${CYAN}note:${R} .* \[${CYAN}P008, fixable${R}\]$" "a note: cyan"
expect_out "^${B}p\.c:11:2:${R} ${RED}error:${R} .* \[${RED}P006${R}\]$" "an error: red"
expect_no_err "$ESC" "the summary on stderr (not a terminal) stays plain"
run scan --color always -v p.c
if printf '%s\n' "$out" | grep -v "^${B}p\.c:[0-9]*:[0-9]*:${R} ${ESC}" | grep -q .; then
	bad "-v: every line painted"; else ok; fi
expect_out "^${B}p\.c:4:12:${R} ${CYAN}note:${R} why: " "-v: the reasoning as cyan notes"

plain='^p\.c:4:12: warning: .* \[P003, fixable\]$'
run scan --color=never p.c; expect_rc 1 "never"; expect_no_out "$ESC" "never: no escape"; expect_out "$plain" "never: plain"
run scan p.c; expect_no_out "$ESC" "auto into a pipe: no escape"; expect_out "$plain" "auto into a pipe: plain"
run scan --color=always -f json p.c; expect_no_out "$ESC" "JSON is never painted"
run scan --color=always -f sarif p.c; expect_no_out "$ESC" "SARIF is never painted"
run scan --color=blue p.c; expect_rc 2 "a bad --color"
expect_err "^preemptify scan: option '--color' must be auto, always or never" "named"

# on a terminal
if command -v script >/dev/null; then
	export TERM=xterm
	tty_run() {
		out=$(script -q -e -c "$(printf '%q ' "$@")" /dev/null </dev/null)
		rc=$?
	}
	tty_run "$BIN" scan p.c; expect_rc 1 "scan on a terminal"
	expect_out "${MAG}warning:${R}" "auto on a terminal: painted"
	tty_run env NO_COLOR=1 "$BIN" scan p.c; expect_no_out "${MAG}" "NO_COLOR: plain"
	tty_run "$BIN" scan --color never p.c; expect_no_out "${MAG}" "never on a terminal: plain"
	tty_run "$BIN" scan -o report.txt p.c; expect_rc 1 "-o FILE from a terminal"
	grep -q "$ESC" report.txt && bad "auto into -o FILE: no escape" || ok
else
	skip_part "auto on a terminal" "script (util-linux) is not installed"
fi
finish
