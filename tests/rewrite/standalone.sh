#!/bin/sh
# standalone.sh SPATCH COCCI INPUT EXPECTED: run a semantic patch without a
# sidecar (standalone mode) on INPUT and compare the result with EXPECTED.
set -e
spatch=$1 cocci=$2 input=$3 expected=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$input" "$tmp/in.c"
"$spatch" --sp-file "$cocci" --very-quiet --no-show-diff --no-includes -o "$tmp/out.c" "$tmp/in.c" >"$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
diff -u "$expected" "$tmp/out.c"
