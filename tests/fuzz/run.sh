#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan, UBSan) in BUILD_DIR and runs
# each for SECONDS on a corpus seeded from the fixtures: fuzz_scan (the
# scan and its emitters) and fuzz_validate (the translation validation must
# refuse every directive join, continuation, split and word swap). Exits
# non-zero on a crash, a sanitizer report, a timeout, an invalid JSON/SARIF
# output or a semantic change the validator accepted.
#   tests/fuzz/run.sh [SECONDS] [BUILD_DIR] [JOBS]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
build=$(realpath -m "${2:-$here/build-fuzz}")
jobs=${3:-1}
command -v clang >/dev/null || { echo "fuzz: clang is needed (apt install clang)" >&2; exit 2; }
# the grammar tarball another build already fetched and verified, if any
extra=()
for tarball in "$here"/build*/grammar/tree-sitter-c-*.tgz; do
	[ -f "$tarball" ] && [ "$tarball" != "$build/grammar/${tarball##*/}" ] &&
		extra=("-DPREEMPTIFY_GRAMMAR_TARBALL=$tarball") && break
done
CC=clang cmake -S "$here" -B "$build" -DPREEMPTIFY_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	"${extra[@]}" >/dev/null
cmake --build "$build" --target fuzz_scan fuzz_validate -j "$(nproc)" >/dev/null

corpus=$build/fuzz-corpus
mkdir -p "$corpus"
# seeds: every fixture, rewrite test input and input the fuzzer once crashed on (copied, never modified in place)
find "$here/fixtures" "$here/tests/rewrite" "$here/tests/fuzz/regressions" -name '*.c' -print0 |
	while IFS= read -r -d '' f; do
		cp "$f" "$corpus/seed-$(printf '%s' "${f#"$here"/}" | tr '/' '_')"
	done
artifacts=$build/fuzz-artifacts/
mkdir -p "$artifacts"
par=()
# several jobs: libFuzzer's fork mode, which logs to fuzz-N.log in the current directory
[ "$jobs" -gt 1 ] && par=(-jobs="$jobs" -workers="$jobs")
cd "$build"
failed=0
for target in fuzz_scan fuzz_validate; do
	echo "fuzz: running $target for ${secs}s ($jobs job(s)), corpus $corpus"
	"$build/$target" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -max_len=65536 \
		-print_final_stats=1 -artifact_prefix="$artifacts$target-" "${par[@]}" "$corpus" > "$target.log" 2>&1 &&
		status=0 || status=$?
	tail -12 "$target.log"
	if [ "$status" -ne 0 ]; then
		echo "fuzz: $target FAILED (status $status)" >&2
		failed=1
	fi
done
if [ "$failed" -ne 0 ] || ls "$artifacts" | grep -q .; then
	echo "fuzz: FAILED; reproducers in $artifacts" >&2
	exit 1
fi
echo "fuzz: no crash, hang, invalid output or accepted semantic change in ${secs}s per target"
