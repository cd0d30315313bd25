#!/usr/bin/env bash
# Ctrl-C, SIGTERM and SIGHUP during apply: every file is the old or the new
# one, nothing is left in TMPDIR or the tree, no spatch survives, the files
# written are the ones reported "fixed", and the exit status is 128+signal.
. "$(dirname "$0")/lib.sh"
command -v spatch >/dev/null || skip_all "spatch is not installed"

export TMPDIR=$WORK/tmp
mkdir -p "$TMPDIR"
cp -r "$SRC/fixtures/drivers/char" orig
cp -r orig ref
"$BIN" apply -j 2 ref >/dev/null 2>&1
n_changed=$(diff -rq orig ref | grep -c differ)
[ "$n_changed" -ge 3 ] && ok || bad "the reference apply changed $n_changed files"

# check_after SIGNAL RC: the state after an interrupted run in ./t
check_after() {
	local sig=$1 want=$2 f rel written=0
	expect_rc "$want" "$sig: exit status"
	expect_err "interrupted by signal" "$sig: says it was interrupted"
	for f in orig/*.c; do
		rel=${f#orig/}
		if cmp -s "t/$rel" "orig/$rel"; then
			if printf '%s\n' "$out" | grep -q "^fixed t/$rel "; then bad "$sig: $rel reported fixed but not written"; fi
		elif cmp -s "t/$rel" "ref/$rel"; then
			written=$((written + 1))
			printf '%s\n' "$out" | grep -q "^fixed t/$rel " || bad "$sig: $rel written but not reported"
		else
			bad "$sig: $rel is neither the old nor the new file"
		fi
	done
	[ -z "$(find t -name '*.preemptify-*')" ] && ok || bad "$sig: temporary files left in the tree"
	[ -z "$(ls -A "$TMPDIR")" ] && ok || bad "$sig: left in TMPDIR: $(ls -A "$TMPDIR")"
	spatch_gone && ok || bad "$sig: spatch still running"
	written_count=$written
}

# spatch_gone: no spatch of this run is left (a loaded machine may take a
# moment to reap the killed process group: up to 5 s)
spatch_gone() {
	local i
	for i in $(seq 1 100); do
		pgrep -f "spatch.*$TMPDIR" >/dev/null || return 0
		sleep 0.05
	done
	return 1
}

# run_interrupted SIGNAL WAIT-FOR: starts apply on a fresh copy, sends SIGNAL
# once WAIT-FOR says so ("plan": after 1 s; "write": after the first fixed line)
run_interrupted() {
	local sig=$1 when=$2 pid i
	rm -rf t && cp -r orig t
	"$BIN" apply --no-cache -j 2 t >"$WORK/.out" 2>"$WORK/.err" &  # spatch must run: nothing from the cache
	pid=$!
	if [ "$when" = plan ]; then
		sleep 1
	else
		for i in $(seq 1 600); do grep -q '^fixed ' "$WORK/.out" && break; sleep 0.05; done
	fi
	kill -s "$sig" "$pid"
	wait "$pid"
	rc=$?
	out=$(cat "$WORK/.out")
	err=$(cat "$WORK/.err")
}

run_interrupted INT plan; check_after SIGINT 130
[ "$written_count" -eq 0 ] && ok || bad "an interrupted plan wrote $written_count files"
run_interrupted TERM plan; check_after SIGTERM 143
run_interrupted HUP plan; check_after SIGHUP 129

# a second signal stops the run at once, and still removes the temporary files
# (spatch's own included: they used to land in /tmp whatever TMPDIR said)
printf '#!/bin/sh\necho "$@" >>"%s/spatch-args"\nexec spatch "$@"\n' "$WORK" >"$WORK/logged-spatch"
chmod +x "$WORK/logged-spatch"
rm -rf t && cp -r orig t
"$BIN" apply -j 2 --spatch "$WORK/logged-spatch" t >"$WORK/.out" 2>"$WORK/.err" &
pid=$!
# once a spatch runs (a loaded machine may take longer than a second to get there)
for i in $(seq 1 600); do [ -s "$WORK/spatch-args" ] && break; sleep 0.05; done
kill -s INT "$pid"
sleep 0.05
kill -s INT "$pid" 2>/dev/null || true
wait "$pid"
rc=$?
out=$(cat "$WORK/.out")
err=$(cat "$WORK/.err")
expect_rc 130 "second SIGINT: exit status"
# (the clean stop may be over before the second signal comes: then it says that)
expect_err "interrupted again: stopped at once; temporary files removed|interrupted by signal 2" "second SIGINT: says what it did"
[ -z "$(ls -A "$TMPDIR")" ] && ok || bad "second SIGINT: left in TMPDIR: $(find "$TMPDIR" | head)"
spatch_gone && ok || bad "second SIGINT: spatch still running"
for f in orig/*.c; do
	rel=${f#orig/}
	cmp -s "t/$rel" "orig/$rel" || cmp -s "t/$rel" "ref/$rel" || bad "second SIGINT: $rel half-written"
done
# spatch's cocci_small_output-* files go where --temp-files says, else to /tmp
n_runs=$(grep -c -- '--sp-file' "$WORK/spatch-args" || true)
n_ours=$(grep -c -- "--temp-files $TMPDIR/preemptify-" "$WORK/spatch-args" || true)
[ "$n_runs" -ge 1 ] && [ "$n_runs" -eq "$n_ours" ] && ok || bad "spatch runs told to keep temp files in our directory: $n_ours of $n_runs"

# in the write phase: hold each replacement 300 ms with its temporary file complete
export PREEMPTIFY_TEST_FAULT=write-delay-ms=300
run_interrupted INT write; check_after SIGINT 130
[ "$written_count" -ge 1 ] && [ "$written_count" -lt "$n_changed" ] && ok ||
	bad "interrupted in the write phase: $written_count of $n_changed files written"
expect_err 'not written \(interrupted\)' "the files not written are listed"
finish
