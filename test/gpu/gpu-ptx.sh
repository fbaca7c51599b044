#!/bin/bash
# gpu-ptx.sh: on a GPU host, runs the code that GPUs older than the host's
# get: the library and the kernel tests built with compute_80 PTX alone
# (CUDA_ARCH="-gencode arch=compute_80,code=compute_80", no SASS), which
# the driver compiles for the GPU at load, with CUDA_FORCE_PTX_JIT=1 (the
# driver then compiles PTX even where SASS would do), so that an sm_90
# host runs what an A100, an L4 or a T4 would (the same source, compiled
# for compute_80).  test/gpu/gpu-tests.sh runs it with PTX=1.
#
#   test/gpu/gpu-ptx.sh [RESULTS_DIR]      (default /tmp/gpusort-gpu-ptx)
#
#   1. builds, in a copy of this tree (its own objects stay as they are),
#      the library for PG_CONFIG's PostgreSQL (default: pg_config) and the
#      kernel tests with PTX_ARCH (default the CUDA_ARCH above), and checks
#      with cuobjdump that the library holds that PTX and no SASS
#      (test/ci/check-arch.sh), and runs the kernel tests that need no GPU
#      (kernel_test --support-only); BUILD_ONLY=1 stops there, and with
#      PTX_KEEP=DIR leaves the library and kernel_test in DIR; on a host
#      with no PostgreSQL headers, PTX_BUILT=DIR takes them from there
#      (built elsewhere so) in place of this step;
#   2. installs that library in place of the installed one (set aside, and
#      put back at the end, as the server is restarted without the
#      variable), restarts the running server that PGDATA names with
#      CUDA_FORCE_PTX_JIT=1 in its environment (SERVER_ENV of
#      test/gpu/server-ctl.sh: every restart of the checks keeps it), and runs
#      test/gpu/gpu-tests.sh with CUDA_FORCE_PTX_JIT=1 exported: the regression
#      suites with gpusort.device = gpu on each backend's engine and on the
#      GPU service, random orders, and the kernel tests (the copy's, with
#      KERNEL_TEST_ARGS), not the benchmark nor the crash, shared-memory and
#      bucket checks (SKIP_BENCH=1 SKIP_SERVICE_CHECKS=1; set them empty to
#      run those too).  Its other variables pass through;
#   3. runs the kernel tests again as on a GPU with the shared memory per
#      block of a Turing (64 KB) and of an Ada (99 KB), whose smaller tiles
#      a Hopper's 227 KB never takes otherwise (kernel_test --smem-limit).
# It fails where any of them does.
#
# Needs what test/gpu/gpu-tests.sh needs (a server that preloads gpusort, as a
# superuser through PGHOST, PGPORT, PGUSER; PGDATA and pg_ctl to restart
# it), and make, nvcc and PGXS to build; root or sudo to install.  The
# driver's JIT cache (~/.nv/ComputeCache of the server's user) keeps what
# it compiled: the first sort of each architecture's code takes seconds.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
export PG_CONFIG=${PG_CONFIG:-pg_config}
source test/lib/deps.sh
source test/gpu/server-ctl.sh
ARCH=${PTX_ARCH:-"-gencode arch=compute_80,code=compute_80"}
ptx=$(echo "$ARCH" | sed -n 's/.*code=compute_\([0-9]*\).*/\1/p')
RESULTS=${1:-${TMPDIR:-/tmp}/gpusort-gpu-ptx}
mkdir -p "$RESULTS"
RESULTS=$(cd "$RESULTS" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/gpusort-ptx.XXXXXX")
src=$work/src
lib=$("$PG_CONFIG" --pkglibdir)/gpusort.so
installed=no

# Runs the command as root: itself where it is root, else through sudo.
as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# Puts library $1 in place of the installed one by a rename, never by
# writing over it: the running server has the installed file mapped, and a
# library overwritten in place under it crashes it.
install_lib() {
	as_root cp -p "$1" "$lib.new" && as_root mv "$lib.new" "$lib"
}

cleanup() {
	if [ $installed = yes ]; then
		echo "== putting the library set aside back into $lib, restarting the server without CUDA_FORCE_PTX_JIT"
		install_lib "$work/gpusort.so.saved"
		SERVER_ENV= restart_server || echo "could not restart the server"
	fi
	rm -rf "$work"
}
trap cleanup EXIT

if [ -n "${PTX_BUILT:-}" ]; then
	echo "== the library and the kernel tests built with CUDA_ARCH=\"$ARCH\" alone, from $PTX_BUILT"
	mkdir -p "$work/kbuild"
	cp -p "$PTX_BUILT/kernel_test" "$work/kbuild/" || exit 1
	built_lib=$PTX_BUILT/gpusort.so
else
	echo "== building the library and the kernel tests with CUDA_ARCH=\"$ARCH\" alone, in $src"
	mkdir -p "$src"
	git ls-files -z --cached --others --exclude-standard | xargs -0 cp -p --parents -t "$src"
	start=$(date +%s)
	if ! make -s -C "$src" -j"$(nproc)" CUDA_ARCH="$ARCH" PG_CONFIG="$PG_CONFIG" >"$RESULTS/build.log" 2>&1 ||
		! make -s -C "$src/test/gpu/kernels" -j"$(nproc)" BUILD="$work/kbuild" CUDA_ARCH="$ARCH" \
			"$work/kbuild/kernel_test" >>"$RESULTS/build.log" 2>&1; then
		tail -n 30 "$RESULTS/build.log"
		echo "build failed"
		exit 1
	fi
	echo "   built in $(($(date +%s) - start)) s"
	built_lib=$src/gpusort.so
fi
CHECK_SMS=none CHECK_PTX=$ptx test/ci/check-arch.sh "$built_lib" || exit 1
"$work/kbuild/kernel_test" --support-only || exit 1
if [ "${BUILD_ONLY:-}" = 1 ]; then
	if [ -n "${PTX_KEEP:-}" ]; then
		mkdir -p "$PTX_KEEP" && cp -p "$built_lib" "$work/kbuild/kernel_test" "$PTX_KEEP/" || exit 1
		echo "the library and kernel_test kept in $PTX_KEEP"
	fi
	echo "BUILD_ONLY=1: not installed, not run"
	exit 0
fi

if [ -z "${PGDATA:-}" ] || [ ! -d "$PGDATA" ] || ! command -v pg_ctl >/dev/null; then
	echo "needs PGDATA and pg_ctl, to restart the server with CUDA_FORCE_PTX_JIT=1"
	exit 1
fi
cp -p "$lib" "$work/gpusort.so.saved" || exit 1
installed=yes
install_lib "$built_lib" || exit 1
export SERVER_ENV="CUDA_FORCE_PTX_JIT=1"
restart_server || { echo "could not restart the server"; exit 1; }
export CUDA_FORCE_PTX_JIT=1
PTX= SKIP_BENCH=${SKIP_BENCH-1} SKIP_SERVICE_CHECKS=${SKIP_SERVICE_CHECKS-1} \
	GPUSORT_KBUILD="$work/kbuild" test/gpu/gpu-tests.sh "$RESULTS"
status=$?
for limit in 65536 101376; do
	echo "== the kernel tests as on a GPU with $((limit / 1024)) KB of shared memory per block (kernel_test --smem-limit $limit)"
	timeout "${KERNEL_TIMEOUT:-300}" "$work/kbuild/kernel_test" ${KERNEL_TEST_ARGS:---max-n 4000000} \
		--smem-limit $limit >"$RESULTS/kernels-smem-$limit.log" 2>&1 || status=1
	grep -E "^FAIL" "$RESULTS/kernels-smem-$limit.log" | head -20
	tail -n 1 "$RESULTS/kernels-smem-$limit.log"
done
exit $status
