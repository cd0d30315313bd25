#!/usr/bin/env bash
# Fetch the official SARIF 2.1.0 JSON schema (OASIS sarif-2.1.0-rtm.5) for
# validating `preemptify scan --format sarif`. It travels in the npm package
# @microsoft/jest-sarif; we take only the schema file from the tarball,
# checked against a pinned SHA-256. Nothing is committed.
#
#   scripts/fetch-sarif-schema.sh DEST_DIR   -> DEST_DIR/sarif-schema-2.1.0.json
#
# Offline: PREEMPTIFY_SARIF_SCHEMA=/path/to/sarif-schema-2.1.0.json is copied
# instead (and checked the same way).
set -euo pipefail
dest=${1:?usage: fetch-sarif-schema.sh DEST_DIR}
pkg=@microsoft/jest-sarif@1.0.0-beta.0
member=package/lib/schemas/sarif-2.1.0-rtm.5.json
sha256=2d99159ae54a3eea97f81781cff48780548657c35949f4b7f25e99a2ba4de4f8
out=$dest/sarif-schema-2.1.0.json

check() { echo "$sha256  $1" | sha256sum -c --status; }

mkdir -p "$dest"
if [ -f "$out" ] && check "$out"; then
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "${PREEMPTIFY_SARIF_SCHEMA:-}" ]; then
	cp "$PREEMPTIFY_SARIF_SCHEMA" "$tmp/schema.json"
else
	(cd "$tmp" && npm pack --silent "$pkg" >/dev/null)
	tar -xzf "$tmp"/*.tgz -C "$tmp" "$member"
	mv "$tmp/$member" "$tmp/schema.json"
fi
if ! check "$tmp/schema.json"; then
	echo "fetch-sarif-schema: checksum mismatch for the SARIF schema from $pkg" >&2
	exit 1
fi
mv "$tmp/schema.json" "$out"
