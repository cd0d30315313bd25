#!/usr/bin/env bash
# Fetch the kernel's scripts/checkpatch.pl (with its spelling.txt and
# const_structs.checkpatch) for tests/cli/checkpatch.sh. It travels in
# Debian's linux-source-6.1 package (its one .tar.xz, ~140 MB, fetched with
# `apt-get download`, no root needed); only those three files are taken out,
# into the cache directory. Nothing is committed.
#
#   scripts/fetch-checkpatch.sh [DEST_DIR]  -> DEST_DIR/checkpatch.pl
#                                           (default ~/.cache/preemptify)
#
# Exit 0 with the file in place (already there: nothing fetched); 77 when it
# cannot be had here (no apt-get, the package not in the apt lists, no
# network), with the reason on stderr.
set -uo pipefail
dest=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/preemptify}
pkg=linux-source-6.1
top=linux-source-6.1
out=$dest/checkpatch.pl

[ -s "$out" ] && exit 0
cannot() { echo "fetch-checkpatch: $*" >&2; exit 77; }
command -v apt-get >/dev/null || cannot "no apt-get: put a kernel's scripts/checkpatch.pl at $out"
command -v xz >/dev/null || cannot "no xz to unpack $pkg"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download "$pkg" >"$tmp/apt.log" 2>&1) ||
	cannot "apt-get download $pkg failed (run apt-get update?): $(tail -1 "$tmp/apt.log")"
deb=$(ls "$tmp"/"$pkg"_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || cannot "apt-get download $pkg gave no .deb"
dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$top.tar.xz" | xz -dc |
	tar -x -C "$tmp" "$top/scripts/checkpatch.pl" "$top/scripts/spelling.txt" \
		"$top/scripts/const_structs.checkpatch" ||
	cannot "scripts/checkpatch.pl not found in $deb"
mkdir -p "$dest" || cannot "cannot create $dest"
for f in spelling.txt const_structs.checkpatch checkpatch.pl; do # checkpatch.pl last: it marks the set complete
	cp "$tmp/$top/scripts/$f" "$dest/$f.part" && mv "$dest/$f.part" "$dest/$f" || cannot "cannot write $dest/$f"
done
echo "fetch-checkpatch: $out from $(basename "$deb")" >&2
