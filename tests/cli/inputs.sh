#!/usr/bin/env bash
# Inputs are regular files, read with a bound (reliability D10, D11): a FIFO
# or a device as a PATH, --config or --baseline is refused at once, with the
# file named, instead of hanging or reading without end.
. "$(dirname "$0")/lib.sh"

cp "$SRC/fixtures/drivers/block/nbd_interproc.c" f.c
mkfifo p.c
# timeout: a hang is a failure (exit 124), not a stuck test
trun() { timeout 20 "$BIN" "$@" >"$WORK/.out" 2>"$WORK/.err"; rc=$?; out=$(cat "$WORK/.out"); err=$(cat "$WORK/.err"); }

trun scan p.c; expect_rc 3 "a FIFO as a PATH: a failed file, no hang"
expect_out "p.c: error: a FIFO, not a regular file; not read" "a FIFO as a PATH: named"
trun scan --config p.c f.c; expect_rc 2 "a FIFO as --config: refused, no hang"
expect_err "p.c: a FIFO, not a regular file" "a FIFO as --config: named"
trun scan --baseline p.c f.c; expect_rc 2 "a FIFO as --baseline: refused, no hang"
trun scan --config /dev/zero f.c; expect_rc 2 "/dev/zero as --config: refused"
expect_err "/dev/zero: a character device, not a regular file" "/dev/zero as --config: named"
trun scan --baseline /dev/zero f.c; expect_rc 2 "/dev/zero as --baseline: refused"
mkdir repo && cp f.c repo/ && printf 'baseline = "/dev/zero"\n' >repo/.preemptify.toml
trun scan repo/f.c; expect_rc 2 "a config naming /dev/zero as its baseline: refused"
expect_err "/dev/zero: a character device" "a config's /dev/zero baseline: named"
head -c 1100000 /dev/zero | tr '\0' '#' >big.toml
trun scan --config big.toml f.c; expect_rc 2 "a config over 1 MiB: refused"
expect_err "big.toml: 1100000 bytes, more than the 1048576" "a config over 1 MiB: says the bound"
trun scan f.c; expect_rc 1 "the regular file still scans"
# D24: a path near PATH_MAX: the message keeps its reason (it was cut at 1 KiB)
long=.
for i in $(seq 1 30); do long=$long/$(printf 'd%.0s' $(seq 1 120)); done
mkdir -p "$long" && mkfifo "$long/p.c"
trun scan "$long/p.c"; expect_rc 3 "a FIFO at a 3.6 KB path: a failed file"
expect_out "p.c: error: a FIFO, not a regular file; not read" "a 3.6 KB path: the reason is not cut off"
# D27: a file whose lines end in a bare CR is refused with a sentence, not "0 findings"
tr '\n' '\r' <f.c >cr.c
trun scan cr.c; expect_rc 3 "CR line endings: a failed file"
expect_out "cr.c: error: its lines end in a bare CR" "CR line endings: said"
# D29: a pipe (diff <(cat f)) is named as such, not "changed since it was scanned"
trun diff <(cat f.c); expect_rc 3 "a pipe as a PATH: a failed file"
expect_err "/dev/fd/[0-9]+: error: a FIFO, not a regular file; not read" "a pipe as a PATH: said"
# explain of a line past the end of the file: said at once, naming the file and its length
n=$(wc -l < f.c)
run explain --no-cache "f.c:$((n + 100))"; expect_rc 2 "explain past the end of the file: a usage error"
expect_err "f.c:$((n + 100)): the file has $n lines" "explain past the end of the file: its length said"
run explain --no-cache "f.c:$n"; expect_rc 0 "explain of the file's last line"
finish
