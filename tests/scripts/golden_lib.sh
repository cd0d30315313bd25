# Shared by the option goldens (rewrite_modern.sh, rewrite_modernize.sh,
# rewrite_fix_sleep.sh): sourced with PREEMPTIFY SOURCE_DIR as "$@". Sets
# bin, src, work (removed on exit), the pass/fail counters with ok/bad, and
# skips (77) without spatch.
set -u
bin=$1 src=$2
command -v spatch >/dev/null || { echo "SKIP: spatch is not installed"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# golden_copy EXPECTED DEST: the fixtures that fixtures/EXPECTED holds a
# reviewed output for, copied from fixtures/drivers into DEST (under $work);
# sets files to their paths, relative to both.
golden_copy() {
	cd "$src/fixtures/$1" || exit 1
	files=$(find . -name '*.c' | sed 's#^\./##' | sort)
	cd "$work" || exit 1
	for f in $files; do
		mkdir -p "$2/$(dirname "$f")"
		cp "$src/fixtures/drivers/$f" "$2/$f"
	done
}
