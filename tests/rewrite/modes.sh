#!/bin/sh
# modes.sh SPATCH COCCI INPUT EXPECTED MODES: run a semantic patch in the
# four coccicheck modes the way the kernel's scripts/coccicheck runs it
# (spatch -D MODE --very-quiet [--no-show-diff] --cocci-file COCCI OPT
# --dir DIR, from the directory that holds cocci/, OPT being what follows
# the colon on its "Option" lines) on a tree holding INPUT, and check:
#   patch    the file becomes EXPECTED;
#   report   one line per site, FILE:LINE:COL-COL: P00N: message;
#   org      one "* TODO [[view:FILE::...::linb=LINE::..." line per site;
#   context  a diff whose - lines are the marked lines, no + line;
# with the lines MODES lists ("sites L..." and "context L...", lines of
# INPUT), exit status 0 and nothing on stderr in every mode.
set -e
spatch=$1 cocci=$2 input=$3 expected=$4 modes=$5
root=$(cd "$(dirname "$cocci")/.." && pwd)
rel=cocci/$(basename "$cocci")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/tree"
cp "$input" "$tmp/tree/in.c"
file=$tmp/tree/in.c
opt=$(grep "Option" "$cocci" | cut -d':' -f2)
fail() {
	echo "FAIL: $(basename "$cocci") $*"
	exit 1
}
want() { # want KEY: the line numbers MODES lists after KEY, one a line
	sed -n "s/^$1 //p" "$modes" | tr ' ' '\n' | sed '/^$/d'
}
run() { # run MODE [FLAGS...]: spatch as coccicheck runs it; out in $tmp/MODE.out
	mode=$1
	shift
	rc=0
	# shellcheck disable=SC2086 # $opt is a list of flags, as in coccicheck
	(cd "$root" && "$spatch" -D "$mode" --very-quiet "$@" --cocci-file "$rel" $opt \
		--dir "$tmp/tree") >"$tmp/$mode.out" 2>"$tmp/$mode.err" || rc=$?
	[ $rc -eq 0 ] || { cat "$tmp/$mode.out" "$tmp/$mode.err"; fail "-D $mode: exit status $rc"; }
	[ ! -s "$tmp/$mode.err" ] || { cat "$tmp/$mode.err"; fail "-D $mode: stderr"; }
}
same() { # same WHAT GOT: GOT (a file of line numbers) is the wanted list
	want "$2" >"$tmp/want"
	diff -u "$tmp/want" "$3" >"$tmp/diff" || { cat "$tmp/diff"; fail "$1: lines differ"; }
}
[ -n "$(want sites)" ] || fail "$modes: no sites"

# patch: the diff it prints, applied, gives EXPECTED.
run patch
cp "$input" "$tmp/patched.c"
patch --quiet "$tmp/patched.c" <"$tmp/patch.out" || fail "-D patch: the diff does not apply"
diff -u "$expected" "$tmp/patched.c" || fail "-D patch: output differs"

# report: FILE:LINE:COL-COL: P00N: message, one line per site.
run report --no-show-diff
grep -v "^$file:[0-9]*:[0-9]*-[0-9]*: P00[0-9]: ." "$tmp/report.out" &&
	fail "-D report: a line not FILE:LINE:COL-COL: P00N: message"
cut -d: -f2 "$tmp/report.out" | sort -n >"$tmp/got"
same "-D report" sites "$tmp/got"

# org: an Org TODO per site, linking FILE and LINE.
run org --no-show-diff
grep -v "^\* TODO \[\[view:$file::face=ovl-face1::linb=[0-9]*::colb=[0-9]*::cole=[0-9]*\]\[P00[0-9]: .*\]\]$" \
	"$tmp/org.out" && fail "-D org: a line not an Org TODO for FILE"
sed 's/.*::linb=\([0-9]*\)::.*/\1/' "$tmp/org.out" | sort -n >"$tmp/got"
same "-D org" sites "$tmp/got"

# context: the marked lines, as - lines of a diff of FILE; no + line.
run context
grep -q "^--- $file\$" "$tmp/context.out" || fail "-D context: no diff of FILE"
awk '/^@@/ { split($2, a, ","); n = -a[1]; next }
     /^(---|\+\+\+) / { next }
     /^\+/ { print "added: " $0; next }
     /^-/ { print n++; next }
     /^ / { n++ }' "$tmp/context.out" >"$tmp/got"
same "-D context" context "$tmp/got"
