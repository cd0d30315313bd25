#!/usr/bin/env bash
# The fixture tree's patch series through the kernel's scripts/checkpatch.pl
# --no-tree: no error, and no warning on the lines preemptify wrote except
# the two kinds kept on purpose (see docs/git.md): YIELD (checkpatch warns
# on any yield(); 2.6 replaced SCHED_YIELD with it) and
# SINGLE_STATEMENT_DO_WHILE_MACRO (a RESCHED macro keeps the do-while shape
# 2.6.9 kept). checkpatch.pl is third-party and never committed: it is taken
# from $PREEMPTIFY_CHECKPATCH when set, else fetched once into
# ~/.cache/preemptify/ by scripts/fetch-checkpatch.sh (from Debian's
# linux-source package). Only when neither works is the test skipped (77).
. "$(dirname "$0")/lib.sh"

command -v perl >/dev/null || skip_all "perl is not installed; checkpatch.pl needs it"
command -v spatch >/dev/null || skip_all "spatch is not installed; the series needs the rewrite"
if [ -n "${PREEMPTIFY_CHECKPATCH:-}" ]; then
	cp=$PREEMPTIFY_CHECKPATCH
	[ -f "$cp" ] || skip_all "PREEMPTIFY_CHECKPATCH=$cp does not exist"
else
	cache=${XDG_CACHE_HOME:-$HOME/.cache}/preemptify
	bash "$SRC/scripts/fetch-checkpatch.sh" "$cache" 2>fetch.err ||
		skip_all "no checkpatch.pl: $(cat fetch.err) (or set PREEMPTIFY_CHECKPATCH to a kernel's scripts/checkpatch.pl)"
	cp=$cache/checkpatch.pl
fi
export GIT_AUTHOR_NAME="Tess Porter" GIT_AUTHOR_EMAIL=tess@example.org
export GIT_COMMITTER_NAME="Tess Porter" GIT_COMMITTER_EMAIL=tess@example.org
mkdir repo && cp -r "$SRC/fixtures/drivers" repo/ && cd repo || exit 1
git init -q && git add -A && git commit -qm base || bad "test repository"
run commit -s drivers; expect_rc 0 "commit of the fixture tree"
run series -o ../series; expect_rc 0 "series"
cd .. || exit 1
n=0 complaints=0 old_style=0
for p in series/0*.patch; do
	n=$((n + 1))
	perl "$cp" --no-tree --terse --show-types "$p" >cp.out 2>/dev/null
	while IFS= read -r line; do
		case "$line" in
		total:*) ;;
		*WARNING:YIELD:* | *WARNING:SINGLE_STATEMENT_DO_WHILE_MACRO:*) ;;
		# the driver's own style on a line preemptify changed elsewhere (its printk(KERN_DEBUG ...)
		# keeps its printk when smp_processor_id() becomes get_cpu()): counted apart
		*WARNING:PREFER_PR_LEVEL:* | *WARNING:PRINTK_WITHOUT_KERN_LEVEL:*) old_style=$((old_style + 1)) ;;
		*) complaints=$((complaints + 1)); echo "checkpatch: $line" ;;
		esac
	done <cp.out
done
[ "$n" -gt 30 ] && ok || bad "the series has the fixture tree's patches ($n)"
[ "$complaints" -eq 0 ] && ok || bad "checkpatch complaints on lines preemptify wrote: $complaints"
echo "note: $old_style warning(s) on the drivers' own style, re-printed on lines preemptify changed"
finish
