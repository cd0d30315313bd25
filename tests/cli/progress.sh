#!/usr/bin/env bash
# The progress line: drawn on stderr when it is a terminal (here a pseudo-
# terminal from util-linux script(1)), "\r" + text + clear-to-end-of-line,
# and erased before the summary; never in a file, with -q or TERM=dumb.
. "$(dirname "$0")/lib.sh"
command -v script >/dev/null || skip_all "script (util-linux) is not installed; the progress line needs a terminal"
export TERM=xterm
ESC=$(printf '\033')
CR=$(printf '\r')

# tty_run ARGS...: runs the binary with ARGS under a pseudo-terminal; what
# reached the terminal (both streams) in $out. With STDERR_TO=FILE the
# binary's stderr goes to FILE instead.
tty_run() {
	local cmd
	cmd=$(printf '%q ' "$BIN" "$@")
	[ -n "${STDERR_TO:-}" ] && cmd="$cmd 2>$(printf '%q' "$STDERR_TO")"
	out=$(script -q -e -c "$cmd" /dev/null </dev/null)
	rc=$?
	err=
}

cp -r "$SRC/fixtures/drivers" d
nfiles=$(find d -name '*.[ch]' | wc -l)
tty_run scan -j 2 d; expect_rc 1 "scan on a terminal"
expect_out "${CR}scanning: [0-9]+/$nfiles files, [0-9]+ sites?, 0:[0-9][0-9]" "scan draws the line: files done of total, sites, elapsed"
expect_out "${ESC}\[K" "the line is redrawn with clear-to-end-of-line"
expect_out "${ESC}\[K${CR}${ESC}\[K" "the line is erased"
expect_out "^(${CR}${ESC}\[K)?preemptify: [0-9]+ findings" "the summary is a line of its own"

STDERR_TO=stderr.txt tty_run scan -j 2 d
expect_no_out "scanning:" "stderr into a file: no line on the terminal"
grep -q "scanning:" stderr.txt && bad "stderr into a file: no line in the file" || ok
grep -q "$ESC" stderr.txt && bad "stderr into a file: no escape sequence in it" || ok
grep -q '^preemptify: [0-9]* findings' stderr.txt && ok || bad "stderr into a file: the summary is there"

tty_run scan -q --color never -j 2 d; expect_rc 1 "scan -q on a terminal"
expect_no_out "scanning:" "-q: no progress line"
expect_no_out "$ESC" "-q: no escape sequence"

TERM=dumb tty_run scan -j 2 d
expect_no_out "scanning:" "TERM=dumb: no progress line"

have spatch "rewrite part" || { finish; exit $?; }
tty_run diff -j 2 d/char/lp_poll.c d/net/pcnet_stats.c; expect_rc 1 "diff on a terminal"
expect_out "${CR}scanning: [0-9]+/2 files" "diff: the scan's line"
expect_out "${CR}rewriting: [0-9]+/2 files, [0-9]+ sites?, [0-9]+ fixed, 0:[0-9][0-9]" "diff: the rewrite's line, with the sites fixed"
expect_out "^(${CR}${ESC}\[K)?preemptify: " "diff: erased before the summary"
STDERR_TO=stderr.txt tty_run apply -j 2 d/char/lp_poll.c; expect_rc 0 "apply, stderr into a file"
expect_no_out "rewriting:" "apply, stderr into a file: no line"
grep -q "$ESC" stderr.txt && bad "apply, stderr into a file: no escape sequence" || ok
finish
