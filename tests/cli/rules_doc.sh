#!/usr/bin/env bash
# docs/rules.md (SARIF helpUri points at its #P001 ... anchors) is exactly
# what scripts/gen-rules-md.sh makes of `preemptify rules`: the two cannot
# drift. After changing a rule: scripts/gen-rules-md.sh build/preemptify > docs/rules.md
. "$(dirname "$0")/lib.sh"
bash "$SRC/scripts/gen-rules-md.sh" "$BIN" >rules.md
rc=$?; out=; err=
expect_rc 0 "gen-rules-md.sh runs"
if diff -u "$SRC/docs/rules.md" rules.md >rules.diff; then ok; else
	out=$(cat rules.diff); bad "docs/rules.md agrees with 'preemptify rules' (regenerate it)"; fi
# every rule of the table has its anchor, in order
codes=$("$BIN" rules | grep -oE '^P[0-9]{3}' | tr '\n' ' ')
anchors=$(grep -oE '^<a id="P[0-9]{3}"></a>$' "$SRC/docs/rules.md" | grep -oE 'P[0-9]{3}' | tr '\n' ' ')
if [ -n "$codes" ] && [ "$codes" = "$anchors" ]; then ok; else bad "anchors '$anchors' for rules '$codes'"; fi
finish
