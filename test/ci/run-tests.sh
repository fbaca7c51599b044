#!/bin/bash
# Runs gpusort's test suites on a throwaway cluster, on a machine with or
# without a GPU:
#   1. builds and installs gpusort into the PostgreSQL that PG_CONFIG names
#      (default: pg_config on PATH; PostgreSQL 15 is installed if missing);
#   2. starts a cluster with shared_preload_libraries = gpusort and runs the
#      regression suites, the differential test among them (make installcheck),
#      then the differential suites again with gpusort.work_mem = 64 (kB), so
#      that every sort above a few hundred rows spills, and the differential
#      and composite suites at 64 kB with every input held by the CPU engine
#      as the GPU engine holds it (gpusort.debug_hold_rows) (SPILL_RERUN=0:
#      neither),
#      and the composite suite with parallel plans wherever the planner can
#      make them, as it is and at 64 kB with every input held (the
#      participants sharing one input); then test/ci/random-orders.py,
#      GpuSort against Sort on random tables and orders (RANDOM_SEED,
#      default 1; RANDOM_QUERIES, default 150), and again with every input
#      held (seed RANDOM_SEED + 1); both skipped, and said so, without
#      python3;
#   3. runs the TAP tests (test/t/*.pl, make prove_installcheck: prove, with
#      clusters of their own from PostgreSQL::Test::Cluster; as root, as the
#      user gpusort, since initdb refuses root):
#        001_service_crash  kill -9 of the GPU service's processes while
#                           sessions sort: the rows, no crash restart, the
#                           service back within 10 s (skipped by a library
#                           built without CUDA, which has no service);
#        002_service_shm    the service's buffer in /dev/shm only where a GPU
#                           is ready; nothing of the server's objects after
#                           a crash restart and pg_ctl stop -m immediate; a
#                           start removes a dead postmaster's objects, not a
#                           live process's;
#        003_worker_stats   parallel EXPLAIN ANALYZE from many sessions at
#                           once: each worker's GpuSort once, the rows add
#                           up (a rescanned Gather too);
#      skipped, and said so, where this PostgreSQL's PGXS was built without
#      --enable-tap-tests (the pgserver wheel's PostgreSQL 16); each test file
#      counts once, passed or failed, and prove's summary is in the log;
#   4. starts a cluster without it and runs the suite that loads gpusort with
#      LOAD and session_preload_libraries (test/ci/sql/loading.sql);
#   5. runs test/ci/scale-out.sh: a coordinator and two shards, a table sharded
#      through postgres_fdw, ORDER BY pushed to the shards' GpuSort (skipped,
#      and said so, when postgres_fdw is not installed with that PostgreSQL;
#      SCALE_OUT=1 makes that a failure, SCALE_OUT=0 skips it);
#   6. builds the CUDA kernel tests when nvcc is there, for the oldest and
#      the newest architecture only (test/gpu/kernels/Makefile's CUDA_ARCH=ends;
#      KERNEL_CUDA_ARCH overrides), as a check that they compile (the library
#      itself is built for every one), and runs those of them that need no
#      GPU (kernel_test --support-only: which GPUs and drivers the library
#      takes); the others are reported as not run (they run on a GPU host,
#      through test/gpu/gpu-tests.sh).
# Extra arguments go to make (e.g. COPT=-Werror).  Says what it installs and
# builds, and where its clusters run (CLUSTER_PORT: the first port tried).
# Ends with a line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
export PG_CONFIG=${PG_CONFIG:-pg_config}
source test/lib/deps.sh
source test/lib/cluster.sh
gpusort_install_deps || exit 1

cuda=$(make -s print-cuda PG_CONFIG="$PG_CONFIG" "$@" 2>/dev/null)
if [ "$cuda" = yes ]; then
	echo "== building gpusort against $("$PG_CONFIG" --version) (nvcc, for every GPU architecture: several minutes the first time)"
else
	echo "== building gpusort against $("$PG_CONFIG" --version), CPU-only (no nvcc, or GPUSORT_CUDA=no)"
fi
# Objects built for another PostgreSQL must not be linked into this one; the
# CUDA objects include no PostgreSQL header and are kept.
# The C objects differ with and without CUDA too.
stamp=.build-pg_config
if [ "$(cat "$stamp" 2>/dev/null)" != "$(command -v "$PG_CONFIG") cuda=$cuda" ]; then
	find src -name "*.o" -delete
	rm -f gpusort.so
	echo "$(command -v "$PG_CONFIG") cuda=$cuda" >"$stamp"
fi
start=$(date +%s)
make -s "$@" PG_CONFIG="$PG_CONFIG" || exit 1
echo "   built in $(($(date +%s) - start)) s"
gpusort_make_install "$@" PG_CONFIG="$PG_CONFIG" || exit 1

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

# Drops what the differential suites leave, to run them again in the same
# database, whose helper functions (node_plan) they use.
drop_differential() {
	psql -X -q -d contrib_regression -c "DROP TABLE IF EXISTS diff_data, diff_orders,
		diff_results, diff_large, diff_layout, diff_added, diff_walk, diff_types, diff_type_orders,
		diff_type_results, diff_disk_results, ctx_a, ctx_b, ctx_big;
		DROP FUNCTION IF EXISTS diff_fill, diff_check, diff_read, diff_disk_kb, diff_disk; DROP COLLATION IF EXISTS diff_icu"
}

# The suites run on the engine GPUSORT_DEVICE names (cpu, or gpu on a GPU host).
export GPUSORT_TEST_DEVICE=${GPUSORT_DEVICE:-cpu}

trap cluster_stop EXIT
echo "== regression suites (shared_preload_libraries = gpusort)"
cluster_start -c shared_preload_libraries=gpusort -c max_worker_processes=8 || exit 1
run_suites
if [ "${SPILL_RERUN:-1}" != 0 ]; then
	echo "== differential suites again with a 64 kB budget: every sort spills"
	drop_differential
	PGOPTIONS="${PGOPTIONS:-} -c gpusort.work_mem=64 -c gpusort.min_run_rows=0" run_suites \
		REGRESS="differential node_contexts" GPUSORT_REGRESS_OPTS=--use-existing
	echo "== the differential and composite suites again at 64 kB, every input held by the CPU engine as the GPU engine holds it (gpusort.debug_hold_rows)"
	drop_differential
	PGOPTIONS="${PGOPTIONS:-} -c gpusort.work_mem=64 -c gpusort.min_run_rows=0 -c gpusort.debug_hold_rows=on" \
		run_suites REGRESS="differential composite" GPUSORT_REGRESS_OPTS=--use-existing
fi
echo "== the composite suite again with parallel plans wherever the planner can make them"
parallel="-c parallel_setup_cost=0 -c parallel_tuple_cost=0 -c min_parallel_table_scan_size=0 -c max_parallel_workers_per_gather=2"
PGOPTIONS="${PGOPTIONS:-} $parallel" \
	run_suites REGRESS=composite GPUSORT_REGRESS_OPTS=--use-existing
echo "== and at 64 kB, every input held by the CPU engine: a parallel plan's participants share one input, as they share one that the GPU service holds"
PGOPTIONS="${PGOPTIONS:-} $parallel -c gpusort.work_mem=64 -c gpusort.min_run_rows=0 -c gpusort.debug_hold_rows=on" \
	run_suites REGRESS=composite GPUSORT_REGRESS_OPTS=--use-existing
# GpuSort against Sort on random tables and orders: as configured, then
# with every input over the budget held (gpusort.debug_hold_rows).
random_orders() {
	if ! command -v python3 >/dev/null; then
		echo "skipped: no python3"
	elif PATH="$("$PG_CONFIG" --bindir):$PATH" python3 test/ci/random-orders.py "$@"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
}
echo "== random orders: GpuSort against Sort on random tables and orders (test/ci/random-orders.py)"
random_orders --seed "${RANDOM_SEED:-1}" --queries "${RANDOM_QUERIES:-150}"
echo "== random orders again, every input over the budget held by the CPU engine (gpusort.debug_hold_rows)"
PGOPTIONS="${PGOPTIONS:-} -c gpusort.debug_hold_rows=on" \
	random_orders --seed "$((${RANDOM_SEED:-1} + 1))" --queries "${RANDOM_QUERIES:-150}"
cluster_stop

echo "== TAP tests (test/t/*.pl through prove): the GPU service's crash, its shared memory objects, parallel workers' EXPLAIN statistics"
tap_global=$("$PG_CONFIG" --pgxs) && tap_global=${tap_global%/makefiles/pgxs.mk}/Makefile.global
if ! grep -qs -E '^enable_tap_tests[[:space:]]*=[[:space:]]*yes' "$tap_global" ||
	[ ! -f "${tap_global%/Makefile.global}/test/perl/PostgreSQL/Test/Cluster.pm" ]; then
	echo "skipped: the PGXS of this PostgreSQL was built without --enable-tap-tests ($tap_global)"
else
	# They run from a copy of the Makefile and test/t owned by the user they
	# run as, where PGXS puts their tmp_check (clusters, logs) and which
	# that user can read whatever the permissions of this tree.
	tapdir=$(mktemp -d /tmp/gpusort-tap.XXXXXX)
	mkdir "$tapdir/test"
	cp Makefile "$tapdir/" && cp -r test/t "$tapdir/test/"
	runas=()
	if [ "$(id -u)" = 0 ]; then
		chown -R gpusort "$tapdir"
		runas=(runuser -u gpusort --)
	fi
	echo "   (in $tapdir)"
	"${runas[@]}" make -s -C "$tapdir" prove_installcheck PG_CONFIG="$PG_CONFIG" 2>&1 |
		tee "$tapdir/prove.log"
	for t in test/t/*.pl; do
		name=$(basename "$t" .pl)
		if grep -q -E "^$t \.+ ok" "$tapdir/prove.log"; then
			passed=$((passed + 1))
		elif ! grep -q -E "^$t \.+ skipped" "$tapdir/prove.log"; then
			failed=$((failed + 1))
			if [ -f "$tapdir/tmp_check/log/regress_log_$name" ]; then
				echo "-- the last lines of $name's log:"
				tail -n 40 "$tapdir/tmp_check/log/regress_log_$name"
			fi
		fi
	done
	rm -rf "$tapdir"
fi

echo "== loading suite (no preloading)"
PGOPTIONS= cluster_start || exit 1
PGOPTIONS= run_suites REGRESS=loading GPUSORT_REGRESS_DIR=test/ci
cluster_stop

SCALE_OUT=${SCALE_OUT:-auto}
if [ "$SCALE_OUT" != 0 ]; then
	echo "== scale-out: a table sharded over postgres_fdw (test/ci/scale-out.sh)"
	if [ -f "$("$PG_CONFIG" --sharedir)/extension/postgres_fdw.control" ]; then
		if BUILD=0 test/ci/scale-out.sh; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
		fi
	elif [ "$SCALE_OUT" = 1 ]; then
		echo "FAILED: postgres_fdw is not installed with this PostgreSQL (SCALE_OUT=1)"
		failed=$((failed + 1))
	else
		echo "skipped: postgres_fdw is not installed with this PostgreSQL"
	fi
fi

if [ "$cuda" = yes ] && [ -f test/gpu/kernels/Makefile ]; then
	echo "== building the CUDA kernel tests into .kbuild, for the oldest and the newest architecture (nvcc: a minute or two the first time)"
	if make -s -C test/gpu/kernels CUDA_ARCH="${KERNEL_CUDA_ARCH:-ends}"; then
		echo "== the kernel tests that need no GPU (kernel_test --support-only)"
		if .kbuild/kernel_test --support-only | tee test/regress.log; then
			passed=$((passed + $(sed -n 's/^\([0-9]*\) passed, .*/\1/p' test/regress.log)))
		else
			failed=$((failed + 1))
		fi
		rm -f test/regress.log
		if nvidia-smi -L >/dev/null 2>&1; then
			echo "CUDA kernel tests on the GPU: built, not run here (test/gpu/gpu-kernels.sh runs them on this GPU)"
		else
			echo "CUDA kernel tests on the GPU: built, not run (no GPU; test/gpu/gpu-kernels.sh runs them on a GPU host)"
		fi
	else
		echo "CUDA kernel tests: build FAILED"
		failed=$((failed + 1))
	fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
