#!/bin/sh
# standalone.sh SPATCH COCCI INPUT EXPECTED: run a semantic patch without a
# sidecar (standalone mode) on INPUT and compare the result with EXPECTED,
# twice, as the README documents it: from the directory that holds cocci/
# (spatch 1.1.1 resolves #include "cocci/sidecar.cocci" against its current
# directory), and from another directory with a relative input path.
set -e
spatch=$1 cocci=$2 input=$3 expected=$4
root=$(cd "$(dirname "$cocci")/.." && pwd)
rel=cocci/$(basename "$cocci")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$input" "$tmp/in.c"
run() { # run OUT ARGS...: spatch ARGS, its log shown on failure
	out=$1
	shift
	"$spatch" --sp-file "$rel" --very-quiet --no-show-diff --no-includes -o "$out" "$@" \
		>"$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
}
# 1. From the repository root.
(cd "$root" && run "$tmp/out-root.c" "$tmp/in.c")
diff -u "$expected" "$tmp/out-root.c"
# 2. From elsewhere: cd to the root in a subshell, input named from $OLDPWD.
(cd "$tmp" && (cd "$root" && run "$OLDPWD/out-elsewhere.c" "$OLDPWD/in.c"))
diff -u "$expected" "$tmp/out-elsewhere.c"
