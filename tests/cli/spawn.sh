#!/usr/bin/env bash
# Running spatch (reliability D6, D19, D20, D32): nothing is run from the
# current directory through PATH, a relative TMPDIR and a relative --spatch
# work, and a child's endless output is kept within a bound.
. "$(dirname "$0")/lib.sh"
command -v spatch >/dev/null || { echo "SKIP: spatch not installed"; exit 77; }

cp "$SRC/fixtures/drivers/block/nbd_interproc.c" f.c

# D6: a python3 (or spatch) planted in the current directory is never run
for prog in python3 spatch; do
	printf '#!/bin/sh\ntouch "%s/ran-%s"\nexit 1\n' "$WORK" "$prog" >"$prog"
	chmod +x "$prog"
done
PATH=".:$PATH" "$BIN" diff f.c >"$WORK/.out" 2>"$WORK/.err"; rc=$?; out=$(cat "$WORK/.out"); err=$(cat "$WORK/.err")
expect_rc 1 "PATH=.:...: the diff is made"
[ ! -e ran-python3 ] && ok || bad "a python3 in the current directory was run"
[ ! -e ran-spatch ] && ok || bad "a spatch in the current directory was run"
PATH=":$PATH" "$BIN" diff f.c >/dev/null 2>&1
[ ! -e ran-python3 ] && [ ! -e ran-spatch ] && ok || bad "an empty PATH entry ran a program from the current directory"
rm -f python3 spatch

# D19: a relative TMPDIR
mkdir tmp
TMPDIR=tmp "$BIN" diff f.c >"$WORK/.out" 2>"$WORK/.err"; rc=$?; out=$(cat "$WORK/.out"); err=$(cat "$WORK/.err")
expect_rc 1 "TMPDIR=tmp: the diff is made"
expect_out 'put_cpu_var' "TMPDIR=tmp: the fix is there"
[ -z "$(ls -A tmp)" ] && ok || bad "TMPDIR=tmp: left $(ls -A tmp)"

# D20: --spatch ./wrapper.sh, relative to where the user stands
printf '#!/bin/sh\nexec spatch "$@"\n' >wrapper.sh
chmod +x wrapper.sh
run diff --spatch ./wrapper.sh f.c; expect_rc 1 "--spatch ./wrapper.sh: the diff is made"
expect_out 'put_cpu_var' "--spatch ./wrapper.sh: the fix is there"

# D32: a spatch that prints without end is stopped by its timeout, and its output kept bounded
printf '#!/bin/sh\nyes preemptify-spam\n' >spam.sh
chmod +x spam.sh
if [ -x /usr/bin/time ]; then
	/usr/bin/time -f '%M' -o rss "$BIN" diff --timeout 4 --spatch ./spam.sh f.c >/dev/null 2>"$WORK/.err"; rc=$?
	err=$(cat "$WORK/.err"); out=
	expect_rc 3 "an endless spatch: a failure"
	expect_err 'timed out' "an endless spatch: timed out"
	kb=$(tail -1 rss)
	[ "$kb" -lt 150000 ] && ok || bad "an endless spatch: ${kb} KiB resident (its output not bounded)"
else
	echo "note: /usr/bin/time missing; the output bound is not measured"
fi
# D23: a Latin-1 comment the fix would carry: that site refused with a sentence, the
# file's other sites still fixed (it was "Python failure" for the whole file)
printf '#include <linux/sched.h>\nvoid f(int n)\n{\n\twhile (n--) {\n\t\tif (current->need_resched) /* caf\351 */\n\t\t\tschedule();\n\t}\n}\nvoid g(int n)\n{\n\twhile (n--) {\n\t\tif (current->need_resched)\n\t\t\tschedule();\n\t}\n}\n' >latin1.c
run diff latin1.c; expect_rc 1 "a Latin-1 comment: the other site is fixed"
expect_out '^\+[[:space:]]+cond_resched\(\);' "a Latin-1 comment: cond_resched() written for g()"
if printf '%s\n' "$err" | grep -q 'Python failure'; then bad "a Latin-1 comment: Python failure"; else ok; fi
run scan -v latin1.c
expect_out "latin1.c:5:7: note: fix: none - not rewritten: the text it would write at line 5 keeps a comment with bytes that are not UTF-8" "a Latin-1 comment: the site says why, in scan too"
finish
