#!/bin/bash
# results-name.sh: sourced by the scripts that write results files, for the
# one naming scheme of test/results/ and test/gpu/kernels/results/ (see
# docs/performance.md, "Results files"):
#
#   <what>-<host>-<cores>-<date>-<commit>.<ext>
#
# results_name WHAT [ENGINE] prints the name without its extension:
#   host    the GPU's model in lower case (h200, h100), with the count in
#           front where the host has more than one (2xh200); cpu where it has
#           none
#   cores   $(nproc) and "core" (16core, 2core)
#   date    today, YYYY-MM-DD
#   commit  the checkout's short commit (GPUSORT_COMMIT overrides it;
#           0000000 outside a git checkout)
# ENGINE cpu on a host with a GPU adds "-cpu-engine" to WHAT, so that a run
# of the CPU engine there is not taken for one of the GPU's.
results_name() {
	local what=$1 engine=${2:-} gpus host commit
	gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || true)
	if [ -n "$gpus" ]; then
		host=$(head -1 <<<"$gpus" | sed 's/^NVIDIA //' | awk '{ print tolower($1) }' | tr -cd 'a-z0-9')
		[ "$(wc -l <<<"$gpus")" -gt 1 ] && host=$(wc -l <<<"$gpus")x$host
		[ "$engine" = cpu ] && what=$what-cpu-engine
	else
		host=cpu
	fi
	commit=${GPUSORT_COMMIT:-$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --short=7 HEAD 2>/dev/null || echo 0000000)}
	echo "$what-$host-$(nproc)core-$(date +%F)-$commit"
}
