#!/usr/bin/env bash
# The man page renders without a single groff warning (-ww: all of them).
set -u
page=$1
if ! command -v groff >/dev/null; then
	echo "SKIP: groff is not installed; the man page cannot be rendered"
	exit 77
fi
warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
if [ -n "$warnings" ]; then
	printf '%s\n' "$warnings"
	echo "0 passed, 1 failed"
	exit 1
fi
text=$(groff -man -Tutf8 "$page" 2>/dev/null | sed "s/.\x08//g")
missing=0
for section in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS RULES "EXIT STATUS" EXAMPLES FILES; do
	printf '%s\n' "$text" | grep -q "^$section" || { echo "missing section $section"; missing=1; }
done
[ $missing -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $missing
