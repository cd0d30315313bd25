#!/usr/bin/env bash
# cmake --install puts every document the man page and the README name
# (docs/*.md) under the documentation directory, with the names they use.
. "$(dirname "$0")/lib.sh"
build=$(dirname "$BIN")
cmake --install "$build" --prefix "$WORK/root" >/dev/null 2>&1 || { bad "cmake --install"; finish; exit 1; }
doc=$(find "$WORK/root" -type d -path '*/doc/preemptify' | head -1)
[ -n "$doc" ] && ok || bad "a doc/preemptify directory is installed"
named=$( (grep -o 'docs/[A-Za-z_.\\-]*\.md' "$SRC/docs/preemptify.1" | sed 's/\\//g'; grep -o 'docs/[A-Za-z_-]*\.md' "$SRC/README.md") | sort -u)
[ -n "$named" ] && ok || bad "the man page names documents"
for d in $named; do
	[ -f "$doc/$d" ] && ok || bad "$d is installed (named by the man page or README)"
done
[ -f "$doc/README.md" ] && ok || bad "README.md is installed"
find "$WORK/root" -name preemptify.1 | grep -q . && ok || bad "the man page is installed"
finish
