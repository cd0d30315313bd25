#!/usr/bin/env bash
# Compile every .c fixture under DIR against the shim headers in the
# INCLUDE_DIRs, searched in order (the 2.6 shim holds only the headers that
# differ from 2.4: pass include-2.6 then include-2.4).
# usage: check-fixtures-compile.sh DIR INCLUDE_DIR [INCLUDE_DIR...]
# Prints each failing file with the compiler's output; exits 1 if any failed.
set -u
if [ $# -lt 2 ]; then
	echo "usage: $0 DIR INCLUDE_DIR [INCLUDE_DIR...]" >&2
	exit 2
fi
dir=$1
shift
incs=()
for inc in "$@"; do
	if [ ! -d "$inc" ]; then
		echo "$0: no such directory: $inc" >&2
		exit 2
	fi
	incs+=(-I "$inc")
done
inc="$*"
cc=${CC:-gcc}
if [ ! -d "$dir" ]; then
	echo "$0: no such directory: $dir" >&2
	exit 2
fi
total=0
failed=0
while IFS= read -r -d '' f; do
	total=$((total + 1))
	if ! out=$("$cc" -std=gnu89 -fsyntax-only -Wall -Werror -Wno-unused-function \
		-nostdinc "${incs[@]}" -iquote "$(dirname "$f")" "$f" 2>&1); then
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
