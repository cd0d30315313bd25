#!/usr/bin/env bash
# Both streams into one file: the summary comes after the findings (stdout
# is flushed before stderr is written). Every -v line is a quickfix entry,
# file:line:col: severity: text.
. "$(dirname "$0")/lib.sh"

cp "$SRC/fixtures/drivers/char/lp_poll.c" a.c
"$BIN" scan a.c >both.txt 2>&1
# the summary (its first line counts the findings) comes after every finding
sed -n '/^preemptify: /,$p' both.txt | head -n 1 | grep -Eq '^preemptify: [0-9]+ findings' &&
	! sed -n '/^preemptify: /,$p' both.txt | grep -qv '^preemptify: ' && ok ||
	{ rc=; out=$(cat both.txt); err=; bad "scan: the summary is the last lines"; }
head -n 1 both.txt | grep -Eq '^a\.c:[0-9]+:[0-9]+: warning: ' && ok || { rc=; out=$(cat both.txt); err=; bad "scan: a finding is the first line"; }

run scan -v "$SRC/fixtures/drivers"; expect_rc 1 "scan -v of the fixtures"
expect_out ': note: why: ' "scan -v gives the reasoning"
expect_out ': note: fix: ' "scan -v gives the fix"
bad_lines=$(printf '%s\n' "$out" | grep -Evc '^[^:]+(:[0-9]+:[0-9]+)?: (warning|error|note): ')
[ "$bad_lines" -eq 0 ] && ok || bad "scan -v: $bad_lines lines not in file:line:col: severity: form: $(printf '%s\n' "$out" | grep -Ev '^[^:]+(:[0-9]+:[0-9]+)?: (warning|error|note): ' | head -3)"

have spatch "rewrite part" || { finish; exit $?; }
"$BIN" diff a.c >both.txt 2>&1
tail -n 1 both.txt | grep -Eq '^preemptify: [0-9]+ sites? to fix in 1 file' && ok || { rc=; out=$(cat both.txt); err=; bad "diff: the summary is the last line"; }
head -n 1 both.txt | grep -q '^diff --git' && ok || { rc=; out=$(cat both.txt); err=; bad "diff: the diff comes first"; }
finish
