#!/bin/bash
# Runs gpusort's test suites on a throwaway cluster, on a machine with or
# without a GPU:
#   1. builds and installs gpusort into the PostgreSQL that PG_CONFIG names
#      (default: pg_config on PATH; PostgreSQL 15 is installed if missing);
#   2. starts a cluster with shared_preload_libraries = gpusort and runs the
#      regression suites, the differential test among them (make installcheck);
#   3. starts a cluster without it and runs the suite that loads gpusort with
#      LOAD and session_preload_libraries;
#   4. builds the CUDA kernel tests when nvcc is there: a build only, reported
#      as not run (they run on a GPU host, through test/gpu-tests.sh), that
#      counts as failed when it fails and never as passed.
# Extra arguments go to make (e.g. COPT=-Werror).  Says what it installs and
# builds, and where its clusters run (CLUSTER_PORT: the first port tried).
# Ends with a line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
export PG_CONFIG=${PG_CONFIG:-pg_config}
source test/deps.sh
source test/cluster.sh
gpusort_install_deps || exit 1

cuda=$(make -s print-cuda PG_CONFIG="$PG_CONFIG" "$@" 2>/dev/null)
if [ "$cuda" = yes ]; then
	echo "== building gpusort against $("$PG_CONFIG" --version) (nvcc: a few minutes the first time)"
else
	echo "== building gpusort against $("$PG_CONFIG" --version), CPU-only (no nvcc, or GPUSORT_CUDA=no)"
fi
# Objects built for another PostgreSQL must not be linked into this one; the
# CUDA objects include no PostgreSQL header and are kept.
# The C objects differ with and without CUDA too.
stamp=.build-pg_config
if [ "$(cat "$stamp" 2>/dev/null)" != "$(command -v "$PG_CONFIG") cuda=$cuda" ]; then
	rm -f src/*.o src/*/*.o gpusort.so
	echo "$(command -v "$PG_CONFIG") cuda=$cuda" >"$stamp"
fi
start=$(date +%s)
make -s "$@" PG_CONFIG="$PG_CONFIG" || exit 1
echo "   built in $(($(date +%s) - start)) s"
gpusort_make_install PG_CONFIG="$PG_CONFIG" || exit 1

passed=0
failed=0
# Runs one installcheck and adds its results to the counts.
run_suites() {
	local log=test/regress.log
	make -s installcheck PG_CONFIG="$PG_CONFIG" "$@" 2>&1 | tee "$log"
	passed=$((passed + $(grep -c -E '(\.\.\. ok|^ok [0-9]+ )' "$log")))
	failed=$((failed + $(grep -c -E '(\.\.\. FAILED|^not ok [0-9]+ )' "$log")))
	if grep -q -E '(\.\.\. FAILED|^not ok )' "$log" && [ -f regression.diffs ]; then
		cat regression.diffs
	fi
	rm -f "$log"
}

# The suites run on the engine GPUSORT_DEVICE names (cpu, or gpu on a GPU host).
export GPUSORT_TEST_DEVICE=${GPUSORT_DEVICE:-cpu}

trap cluster_stop EXIT
echo "== regression suites (shared_preload_libraries = gpusort)"
cluster_start -c shared_preload_libraries=gpusort -c max_worker_processes=8 || exit 1
run_suites
cluster_stop

echo "== loading suite (no preloading)"
PGOPTIONS= cluster_start || exit 1
PGOPTIONS= run_suites REGRESS=loading
cluster_stop

if [ "$cuda" = yes ] && [ -f test/kernels/Makefile ]; then
	echo "== building the CUDA kernel tests into .kbuild (nvcc: a few minutes the first time)"
	if make -s -C test/kernels; then
		if nvidia-smi -L >/dev/null 2>&1; then
			echo "CUDA kernel tests: built, not run here (test/gpu-kernels.sh runs them on this GPU)"
		else
			echo "CUDA kernel tests: built, not run (no GPU; test/gpu-kernels.sh runs them on a GPU host)"
		fi
	else
		echo "CUDA kernel tests: build FAILED"
		failed=$((failed + 1))
	fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
