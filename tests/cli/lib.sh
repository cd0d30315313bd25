# Helpers for the end-to-end CLI tests: each test script sources this file,
# runs the real binary in a throwaway directory and checks exit codes and
# output. Usage: script.sh BIN SRC_DIR [SARIF_SCHEMA]
set -u
BIN=$1
SRC=$2
SCHEMA=${3:-}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/preemptify-cli-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# where third-party tools fetched once live (checkpatch.pl): the user's cache directory
TOOLS_CACHE_HOME=${PREEMPTIFY_TOOLS_CACHE_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}}
# never the user's result cache, when run by hand
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$WORK/.cache}
cd "$WORK" || exit 1
n_pass=0
n_fail=0
n_skip=0

# run ARGS...: runs the binary; sets $rc, $out (stdout), $err (stderr)
run() {
	"$BIN" "$@" >"$WORK/.out" 2>"$WORK/.err"
	rc=$?
	out=$(cat "$WORK/.out")
	err=$(cat "$WORK/.err")
}

ok() { n_pass=$((n_pass + 1)); }
bad() {
	n_fail=$((n_fail + 1))
	printf 'FAIL: %s\n  rc=%s\n  stdout: %s\n  stderr: %s\n' "$1" "$rc" "$out" "$err"
}

# expect_rc N DESCRIPTION
expect_rc() { if [ "$rc" -eq "$1" ]; then ok; else bad "$2 (expected exit $1)"; fi; }
# expect_out REGEX DESCRIPTION / expect_err REGEX DESCRIPTION (grep -E on the whole stream)
expect_out() { if printf '%s\n' "$out" | grep -Eq -- "$1"; then ok; else bad "$2 (stdout !~ $1)"; fi; }
expect_err() { if printf '%s\n' "$err" | grep -Eq -- "$1"; then ok; else bad "$2 (stderr !~ $1)"; fi; }
expect_no_out() { if printf '%s\n' "$out" | grep -Eq -- "$1"; then bad "$2 (stdout =~ $1)"; else ok; fi; }
expect_no_err() { if printf '%s\n' "$err" | grep -Eq -- "$1"; then bad "$2 (stderr =~ $1)"; else ok; fi; }
# expect_lines N STREAM DESCRIPTION
expect_err_lines() {
	local n
	n=$(printf '%s' "$err" | grep -c '')
	if [ "$n" -eq "$1" ]; then ok; else bad "$2 (stderr has $n lines, expected $1)"; fi
}

# have TOOL PART: true when TOOL is installed; otherwise says PART is not run
# and why, and the test ends Skipped (exit 77, ctest's SKIP_RETURN_CODE) unless
# a check failed. A check that cannot run is never reported as passed.
have() {
	command -v "$1" >/dev/null 2>&1 && return 0
	n_skip=$((n_skip + 1))
	echo "SKIP ($2): $1 is not installed"
	return 1
}

# skip_part PART WHY: PART is not run, for a reason other than a missing tool.
skip_part() {
	n_skip=$((n_skip + 1))
	echo "SKIP ($1): $2"
}

# skip_all WHY: nothing of this test can run here.
skip_all() {
	echo "SKIP: $1"
	exit 77
}

finish() {
	echo "$n_pass passed, $n_fail failed"
	[ "$n_fail" -eq 0 ] || return 1
	if [ "$n_skip" -gt 0 ]; then
		echo "SKIP: $n_skip part(s) not run (see SKIP lines above); the $n_pass checks that ran passed"
		return 77
	fi
	return 0
}

# A file with no trigger token at all: never a finding, whatever the rules do.
clean_c() {
	printf 'int add(int a, int b)\n{\n\treturn a + b;\n}\n' >"$1"
}
