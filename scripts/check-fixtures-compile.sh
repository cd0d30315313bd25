#!/usr/bin/env bash
# Compile every .c fixture under DIR against the shim headers in INCLUDE_DIR.
# usage: check-fixtures-compile.sh DIR INCLUDE_DIR
# Prints each failing file with the compiler's output; exits 1 if any failed.
set -u
if [ $# -ne 2 ]; then
	echo "usage: $0 DIR INCLUDE_DIR" >&2
	exit 2
fi
dir=$1
inc=$2
cc=${CC:-gcc}
if [ ! -d "$dir" ] || [ ! -d "$inc" ]; then
	echo "$0: no such directory: $dir or $inc" >&2
	exit 2
fi
total=0
failed=0
while IFS= read -r -d '' f; do
	total=$((total + 1))
	if ! out=$("$cc" -std=gnu89 -fsyntax-only -Wall -Werror -Wno-unused-function \
		-nostdinc -I "$inc" -iquote "$(dirname "$f")" "$f" 2>&1); then
		failed=$((failed + 1))
		echo "FAIL: $f"
		printf '%s\n' "$out"
	fi
done < <(find "$dir" -name '*.c' -type f -print0 | sort -z)
if [ "$total" -eq 0 ]; then
	echo "$0: no .c files under $dir" >&2
	exit 1
fi
echo "$((total - failed))/$total fixtures compiled against $inc"
[ "$failed" -eq 0 ]
