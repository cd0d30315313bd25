#!/usr/bin/env bash
# The baseline preemptify's diff is measured against: the four semantic
# patches a porter would write by hand (this directory), each run with
# plain spatch over the whole TREE, no analysis at all. They are crude on
# purpose (every smp_processor_id() assignment gets a get_cpu(), every
# NR_CPUS array becomes DEFINE_PER_CPU, locks or not): only their time
# matters. Output is discarded.
#   bench/plain/run.sh TREE [JOBS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tree=$1
jobs=${2:-$(nproc)}
for p in get-cpu percpu-array cond-resched noresched; do
	spatch --sp-file "$here/$p.cocci" --dir "$tree" -j "$jobs" --no-includes --very-quiet >/dev/null 2>&1 || true
done
