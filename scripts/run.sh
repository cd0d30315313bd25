#!/usr/bin/env bash
# preemptify quick start on a fresh Debian machine.
#   scripts/run.sh demo   install what is missing, build, scan the bundled fixtures
#   scripts/run.sh test   install what is missing, build, run the whole test suite
#   scripts/run.sh fuzz   also clang: run the libFuzzer target FUZZ_SECONDS (60) seconds
# BUILD_DIR and CMAKE_ARGS may be set in the environment.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-demo}
build=${BUILD_DIR:-build}

need=()
for tool in cmake gcc make pkg-config npm python3 groff; do
	command -v "$tool" >/dev/null 2>&1 || need+=("$tool")
done
[ "$mode" != fuzz ] || command -v clang >/dev/null 2>&1 || need+=(clang)
for pkg in libtree-sitter-dev libgit2-dev coccinelle; do
	dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "installing: ${need[*]}"
	sudo_=""; [ "$(id -u)" -eq 0 ] || sudo_=sudo
	$sudo_ apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq "${need[@]}"
fi

# shellcheck disable=SC2086
cmake -S . -B "$build" ${CMAKE_ARGS:-}
cmake --build "$build" -j"$(nproc)"

case "$mode" in
demo)
	set +e
	"$build/preemptify" scan fixtures/drivers
	rc=$?
	[ "$rc" -le 1 ] || exit "$rc"   # 1 = findings, which is the point of the demo
	printf '\nNext, try:\n'
	printf '  %s\n' "$build/preemptify explain fixtures/drivers/char/lp_poll.c   # why each site, and its fix" \
		"$build/preemptify diff fixtures/drivers/char/lp_poll.c      # the fixes, and what is left for you" \
		"man docs/preemptify.1                                        # every command; README: port one driver"
	;;
test)
	ctest --test-dir "$build" --output-on-failure
	;;
fuzz)
	tests/fuzz/run.sh "${FUZZ_SECONDS:-60}" "$build-fuzz"
	;;
*)
	echo "usage: scripts/run.sh demo|test|fuzz" >&2
	exit 2
	;;
esac
