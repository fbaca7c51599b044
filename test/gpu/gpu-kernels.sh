#!/usr/bin/env bash
# gpu-kernels.sh: builds and runs gpusort's CUDA kernel checks on a GPU host:
# the kernel tests, compute-sanitizer memcheck and racecheck on small sizes,
# then the benchmark against CUB (its table is printed last).
#
#   test/gpu/gpu-kernels.sh [RESULTS_DIR]
#
# RESULTS_DIR (or $GPUSORT_BENCH_DIR; default test/gpu/kernels/results) gets
# the benchmark CSV, named after the device, and the logs.  Environment:
#   GPUSORT_KBUILD      build folder (default .kbuild in the repository root)
#   KERNEL_CUDA_ARCH    test/gpu/kernels/Makefile's CUDA_ARCH (default: native,
#                       the GPUs of this host; ends where there is none)
#   GPUSORT_PHASES      phases to run (default "tests memcheck racecheck bench")
#   GPUSORT_TEST_ARGS   extra arguments for kernel_test
#   GPUSORT_BENCH_ARGS  extra arguments for kernel_bench
#   GPUSORT_TIMEOUT     seconds each phase may run (default 1800)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/test/lib/results-name.sh"
BUILD=${GPUSORT_KBUILD:-$ROOT/.kbuild}
RESULTS=${1:-${GPUSORT_BENCH_DIR:-$ROOT/test/gpu/kernels/results}}
PHASES=${GPUSORT_PHASES:-tests memcheck racecheck bench}
mkdir -p "$RESULTS"
T="timeout ${GPUSORT_TIMEOUT:-1800}"

gpu=yes
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 || gpu=no
make -C "$ROOT/test/gpu/kernels" BUILD="$BUILD" -j"$(nproc)" \
	CUDA_ARCH="${KERNEL_CUDA_ARCH:-$([ $gpu = yes ] && echo native || echo ends)}" \
	>"$RESULTS/build.log" 2>&1 ||
	{ tail -30 "$RESULTS/build.log"; echo "build failed"; exit 1; }

if [ $gpu = no ]; then
	echo "gpu-kernels: no NVIDIA GPU here; nothing to run (binaries built in $BUILD)"
	exit 0
fi
echo "device: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)"

status=0
summary=()
has() { case " $PHASES " in *" $1 "*) return 0;; esac; return 1; }

if has tests; then
	$T "$BUILD/kernel_test" ${GPUSORT_TEST_ARGS:-} >"$RESULTS/tests.log" 2>&1
	rc=$?
	grep -E "^FAIL|^device|^limit" "$RESULTS/tests.log" | head -40
	summary+=("kernel tests: $(tail -1 "$RESULTS/tests.log") (rc $rc)")
	[ $rc -eq 0 ] || status=1
fi
SAN=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
if has memcheck; then
	$T "$SAN" --tool memcheck --error-exitcode 99 --print-limit 20 "$BUILD/kernel_test" \
		--no-api --max-n 65537 --dists uniform,tiny >"$RESULTS/memcheck.log" 2>&1
	rc=$?
	grep -E "^FAIL|ERROR SUMMARY|Invalid|========= [A-Z]" "$RESULTS/memcheck.log" | head -20
	summary+=("memcheck: $(grep -h 'ERROR SUMMARY' "$RESULTS/memcheck.log" | tail -1), tests $(grep -E 'passed, ' "$RESULTS/memcheck.log" | tail -1) (rc $rc)")
	[ $rc -eq 0 ] || status=1
fi
if has racecheck; then
	$T "$SAN" --tool racecheck --error-exitcode 99 --print-limit 20 "$BUILD/kernel_test" \
		--no-api --max-n 4097 --dists tiny >"$RESULTS/racecheck.log" 2>&1
	rc=$?
	grep -E "^FAIL|RACECHECK SUMMARY|ERROR SUMMARY|hazard" "$RESULTS/racecheck.log" | head -20
	summary+=("racecheck: $(grep -hE 'RACECHECK SUMMARY|ERROR SUMMARY' "$RESULTS/racecheck.log" | tail -1), tests $(grep -E 'passed, ' "$RESULTS/racecheck.log" | tail -1) (rc $rc)")
	[ $rc -eq 0 ] || status=1
fi
for s in "${summary[@]}"; do echo "$s"; done
if has bench; then
	$T "$BUILD/kernel_bench" --csv "$RESULTS/$(results_name kernels-bench).csv" ${GPUSORT_BENCH_ARGS:-} \
		>"$RESULTS/bench.log" 2>&1
	rc=$?
	[ $rc -eq 0 ] || status=1
	grep -vE "^  " "$RESULTS/bench.log" | tail -40
fi
exit $status
