#!/bin/bash
# gpu-tests.sh: gpusort's checks on a GPU host, against a running server that
# preloads gpusort (shared_preload_libraries) and that PGHOST, PGPORT and
# PGUSER name, as a superuser.  Needs psql, pg_regress and pg_ctl, not PGXS
# or PostgreSQL's sources; make and nvcc only to build the kernel tests, which
# may come prebuilt in .kbuild (make -C test/gpu/kernels BUILD=$PWD/.kbuild).
#
#   test/gpu/gpu-tests.sh [RESULTS_DIR]
#   PTX=1 test/gpu/gpu-tests.sh [RESULTS_DIR]
#
# PTX=1: the checks below (without the benchmark) on a library and kernel
# tests built with compute_80 PTX alone and run with CUDA_FORCE_PTX_JIT=1,
# the code that GPUs older than the host's run (test/gpu/gpu-ptx.sh says how).
#
#   1. the regression suites of test/sql (the Makefile's REGRESS, but
#      service and no_gpu) with gpusort.device = gpu, then in their database
#      the suite gpu_engine (test/gpu/sql/gpu_engine.sql): on 1M rows EXPLAIN
#      ANALYZE says "Sort Engine: gpu", the rows of several orderings, and of
#      an array, are PostgreSQL's, also when the input is far larger than
#      planned, when another sort takes the upload's buffers, after a cancel
#      during the upload, and with a gpusort.gpu_memory too small;
#   2. what a suite cannot check: interrupts that are no cancel
#      (memory-context log requests from another session) leave the sorts on
#      the GPU; rows are uploaded while they are collected (DEBUG1);
#   3. the device hidden from the server (restarted with
#      CUDA_VISIBLE_DEVICES empty, then as it was; needs PGDATA and pg_ctl,
#      run as the data directory's owner or root): the right rows;
#      steps 1-3 run with gpusort.service = off (each backend's own engine;
#      set with ALTER SYSTEM and a restart, where PGDATA allows);
#   4. the GPU service (gpusort.service on): the suites that set no
#      backend's GPU, and the suite service, with gpusort.device = gpu, and
#      test/ci/random-orders.py (RANDOM_SEED, default 11; RANDOM_QUERIES,
#      default 150) with every sort on the GPU; kill
#      -9 of its processes while 16 sessions sort (test/gpu/service-crash.sh);
#      a parallel query's participants sharing one input (right rows, and
#      none held after cancels and errors: test/gpu/service-shared.sh);
#      8 sorts at once that together outgrow gpusort.service_memory
#      (LOAD_MEMORY MB, default 1024), each held in its turn, every row
#      right, none in sorted runs (test/gpu/service-load.sh);
#      statement_timeout at many moments of held, shared, parallel-window
#      and SCROLL sorts, each answered within 300 ms
#      (test/gpu/service-cancels.sh; SKIP_CANCELS skips it);
#      dynamic_shared_memory_type posix, mmap and sysv each (a restart):
#      a sort on the GPU, no PostgreSQL shared memory in the maps of the GPU
#      processes, kill -9 of them while 16 sessions sort, no object of a
#      job left in /dev/shm, and nothing after pg_ctl stop -m immediate
#      (test/gpu/service-shm.sh);
#      a sort larger than one GPU's share of gpusort.service_memory, in
#      buckets on two GPU processes (two GPUs, or GPU 0 twice), and inputs
#      over the budget held in parts on both (test/gpu/service-buckets.sh); the
#      differential suites (SPLIT_SUITES) on those two processes with
#      SPLIT_MEMORY MB (default 40: a job's 32 MB of scratch slack and
#      about 100K rows of one key) each, so that every sort of theirs over
#      that is split; the device hidden from it;
#   5. the CUDA kernel tests (test/gpu/gpu-kernels.sh, tests phase);
#   6. the SQL benchmark (test/bench/bench-sql.sh) and its acceptance targets.
# Ends with a summary table; RESULTS_DIR (default /tmp/gpusort-gpu-tests)
# gets the logs, the regression output, the summary
# (gpu-tests-<host>-<cores>-<date>-<commit>.txt, test/lib/results-name.sh) and
# the benchmark's CSV and table (sql-bench-<...>.csv and .txt); these belong
# in test/results/.
#
# Environment:
#   PG_REGRESS     pg_regress (default: in the PGXS beside psql's bin
#                  directory, or in the one that pg_config names)
#   TOTAL_BUDGET   seconds for everything (default 540): the benchmark gets
#                  what the checks leave, less MARGIN (default 25)
#   SKIP_TESTS     1: steps 1-5 left out (benchmark only)
#   SKIP_BENCH     1: step 6 left out
#   SKIP_BACKEND, SKIP_SERVICE, SKIP_KERNELS   1: steps 1-3, step 4, step 5
#                  left out (to split the checks over several runs)
#   SKIP_SERVICE_SUITES, SKIP_SERVICE_CHECKS   1: step 4's regression suites,
#                  or its other checks, left out (each takes about 5 minutes
#                  on an H100 host)
#   SKIP_CRASH_SHARED  1: step 4's kill -9, shared-input and shared memory
#                  (service-shm.sh) checks left out
#   SUITES         the suites of test/sql that steps 1 and 4 run (default:
#                  those said above, in the Makefile's order: node_plan first)
#   REGRESS_TIMEOUT  seconds for each run of pg_regress (default 420)
#   KERNEL_TEST_ARGS  arguments of kernel_test (default "--max-n 4000000")
#   GPUSORT_KBUILD    a folder with a prebuilt kernel_test to run instead of
#                  building one
#   Those of bench-sql.sh (SIZES, RUNS, SKIP_100M, ...) pass through.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
[ "${PTX:-}" = 1 ] && exec test/gpu/gpu-ptx.sh "$@"
source test/lib/results-name.sh
RESULTS=${1:-${TMPDIR:-/tmp}/gpusort-gpu-tests}
mkdir -p "$RESULTS"
RESULTS=$(cd "$RESULTS" && pwd)
TOTAL_BUDGET=${TOTAL_BUDGET:-540}
MARGIN=${MARGIN:-25}
START=$(date +%s)
exec > >(tee "$RESULTS/gpu-tests.log") 2>&1

elapsed() { echo $(($(date +%s) - START)); }
left() { echo $((TOTAL_BUDGET - $(elapsed))); }
SUMMARY=()
record() {
	SUMMARY+=("$1|$2|$3")
	echo "== [$(elapsed)s] $1: $2${3:+ ($3)}"
}
PSQL=(psql -X -q -v ON_ERROR_STOP=1)
DB=gpusort_gputest

BINDIR=$(dirname "$(command -v psql)")
if [ -z "${PG_REGRESS:-}" ]; then
	for c in "$BINDIR/../lib/pgxs/src/test/regress/pg_regress" \
		"$(dirname "$(pg_config --pgxs 2>/dev/null || echo /nonexistent/x)")/../test/regress/pg_regress"; do
		[ -x "$c" ] && { PG_REGRESS=$c; break; }
	done
fi

echo "== gpu-tests on $(hostname), $(nproc) cores"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo "nvidia-smi: no GPU"
psql -X -At -c "SELECT version()" || { echo "no server (PGHOST, PGPORT, PGUSER)"; exit 1; }
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" || exit 1
export PGDATABASE=$DB
"${PSQL[@]}" -c "CREATE EXTENSION gpusort" || exit 1
# a GPU service that is starting lists its GPUs in a moment
wait_service() {
	for _ in $(seq 1 50); do
		[ "$(psql -X -At -c "SELECT count(*) FROM gpusort_service WHERE state IN ('starting', 'down')")" = 0 ] && break
		sleep 0.2
	done
}
wait_service
DEVICES=$(psql -X -At -F ' ' -c "SELECT id, name, total_memory_mb || ' MB', compute_capability FROM gpusort_devices()")
echo "gpusort_devices(): ${DEVICES:-none}"

# Restarts the server with extra environment (VAR=value ...), as its owner.
source "$ROOT/test/gpu/server-ctl.sh"

# SQL that compares orderings on the GPU engine with PostgreSQL's Sort.
SAME_AS_NATIVE="
CREATE OR REPLACE FUNCTION gt_digest(query text) RETURNS text LANGUAGE plpgsql AS \$\$
DECLARE d text;
BEGIN
  EXECUTE 'SELECT md5(string_agg(id::text, '','')) FROM (' || query || ' OFFSET 0) s' INTO d;
  RETURN d;
END \$\$;
CREATE OR REPLACE FUNCTION gt_same(query text) RETURNS boolean LANGUAGE plpgsql AS \$\$
DECLARE got text; want text; enabled text := current_setting('gpusort.enabled');
BEGIN
  got := gt_digest(query);
  PERFORM set_config('gpusort.enabled', 'off', true);
  want := gt_digest(query);
  PERFORM set_config('gpusort.enabled', enabled, true);
  RETURN got = want;
END \$\$;
"
ORDERINGS="
SELECT gt_same('SELECT id FROM g1m ORDER BY k8') AS k8,
       gt_same('SELECT id FROM g1m ORDER BY a, id') AS a_id,
       gt_same('SELECT id FROM g1m ORDER BY a DESC, k4, id') AS a_desc_k4_id,
       gt_same('SELECT id FROM g1m ORDER BY kn DESC NULLS FIRST, id') AS kn_desc_nf,
       gt_same('SELECT id FROM g1m ORDER BY k4 NULLS FIRST, id DESC') AS k4_id_desc,
       (SELECT gpusort(array_agg(k8)) = array_agg(k8 ORDER BY k8) FROM g1m) AS array_k8;
"
# The line of ORDERINGS' results in psql -A -t output, and is it all true?
orderings_line() { echo "$1" | grep -E '^[tf](\|[tf]){5}$' | head -1; }
all_true() { [ "$1" = "t|t|t|t|t|t" ]; }
SETTINGS="SET work_mem = '2GB'; SET gpusort.work_mem = '2GB'; SET max_parallel_workers_per_gather = 0;"

# gpusort.service on or off (ALTER SYSTEM), then a restart: steps 1-3 check
# each backend's own engine, step 4 the GPU service.
can_restart() { [ -n "${PGDATA:-}" ] && [ -d "$PGDATA" ] && command -v pg_ctl >/dev/null; }
service_mode() {
	if [ "$1" = off ]; then
		psql -X -q -c "ALTER SYSTEM SET gpusort.service = off" || return 1
	else
		psql -X -q -c "ALTER SYSTEM RESET gpusort.service" || return 1
	fi
	restart_server && sleep 2
}

# What makes the planner choose parallel plans wherever it can.
PARALLEL_FORCED="-c parallel_setup_cost=0 -c parallel_tuple_cost=0 -c min_parallel_table_scan_size=0 -c max_parallel_workers_per_gather=2"

# run_check NAME LOG PASS_RE FAIL_RE COMMAND...: COMMAND, its output in
# $RESULTS/LOG.log, recorded with the lines of it that PASS_RE or FAIL_RE
# pick, and shown
run_check() {
	local name=$1 log=$RESULTS/$2.log pass=$3 fail=$4
	shift 4
	if "$@" >"$log" 2>&1; then
		record "$name" PASS "$(grep -E "$pass" "$log" | tr -s ' ' | tr '\n' ';')"
	else
		record "$name" FAIL "$(grep -E "$fail" "$log" | head -3 | tr -s ' ' | tr '\n' ';')"
	fi
	cat "$log"
}

# The suites of test/sql in the order of the Makefile's REGRESS (node_plan,
# which makes the extension and the helpers that the others call, first;
# then by name), less those named.
main_suites() {
	local s list=node_plan
	for s in $(cd "$ROOT/test/sql" && printf '%s\n' *.sql | LC_ALL=C sort); do
		s=${s%.sql}
		case " node_plan $* " in *" $s "*) ;; *) list="$list $s" ;; esac
	done
	echo "$list"
}

# regress NAME OUT SUITES...: the suites of REGRESS_DIR (default test) with
# gpusort.device = gpu, recorded
regress() {
	local name=$1 out=$RESULTS/regress-$2
	shift 2
	if [ -z "${PG_REGRESS:-}" ]; then
		record "$name" FAIL "pg_regress not found"
		return
	fi
	# pg_regress makes the database as "make installcheck" does
	# every suite must say ok: one cut short by the timeout says nothing
	PGOPTIONS="${PGOPTIONS:-} -c gpusort.device=gpu" timeout "${REGRESS_TIMEOUT:-420}" "$PG_REGRESS" ${REGRESS_OPTS:-} \
		--inputdir="${REGRESS_DIR:-$ROOT/test}" --outputdir="$out" --bindir="$BINDIR" \
		--dbname=gpusort_regress "$@" 2>&1 | tee "$out.log"
	ok=$(grep -c -E '(\.\.\. ok|^ok [0-9]+ )' "$out.log")
	bad=$(grep -c -E '(\.\.\. FAILED|^not ok [0-9]+ )' "$out.log")
	[ -f "$out/regression.diffs" ] && head -100 "$out/regression.diffs"
	if [ "$ok" -ge $# ] && [ "$bad" -eq 0 ]; then
		record "$name" PASS "$ok suites: $*"
	else
		record "$name" FAIL "$ok of $# suites passed, $bad failed, $(($# - ok - bad)) not finished"
	fi
}

if [ -z "${SKIP_TESTS:-}" ]; then
	if [ -z "${SKIP_BACKEND:-}" ]; then
		if can_restart; then
			service_mode off || record "gpusort.service = off" FAIL "could not restart the server"
		fi
		echo "gpusort.service: $(psql -X -At -c "SHOW gpusort.service")"

		# ---- 1. regression suites on the GPU engine ----
		regress "regression suites (device = gpu)" backend ${SUITES:-$(main_suites service no_gpu)}
		REGRESS_DIR=$ROOT/test/gpu REGRESS_OPTS=--use-existing \
			regress "suite gpu_engine (device = gpu)" backend-gpu-engine gpu_engine
	fi

	# ---- 2. checks on a 1M-row table that a suite cannot make ----
	"${PSQL[@]}" <<SQL
CREATE UNLOGGED TABLE g1m AS
  SELECT g AS id, hashint8extended(g, 1) AS k8, hashint8(g) AS k4,
         ((hashint8extended(g, 2) & 1023) % 1000)::int4 AS a,
         CASE WHEN (hashint8extended(g, 3) & 1023) < 102 THEN NULL ELSE g * 7 END AS kn,
         'row ' || g AS txt
  FROM generate_series(1, 1000000) g;
VACUUM ANALYZE g1m;
$SAME_AS_NATIVE
SQL
	if [ -z "${SKIP_BACKEND:-}" ]; then
		# ---- 2b. interrupts that are no cancel: the GPU sort goes on ----
		# A second session keeps asking the sorting one to log its memory
		# contexts (an interrupt that is processed and raises nothing) while it
		# sorts g1m on the GPU 20 times: every sort must stay on the GPU.
		PGAPPNAME=gpusort_intr "${PSQL[@]}" -A -t >"$RESULTS/interrupts.out" 2>&1 <<SQL &
$SETTINGS SET gpusort.device = gpu; SELECT gpusort_stats_reset();
SELECT pg_sleep(0.5);
DO \$\$BEGIN FOR i IN 1..20 LOOP PERFORM count(*) FROM (SELECT * FROM g1m ORDER BY k8 OFFSET 0) s; END LOOP; END\$\$;
SELECT engine, sorts, fallbacks FROM gpusort_stats() ORDER BY engine;
SQL
		sorter=$!
		sent=$("${PSQL[@]}" -A -t 2>&1 <<'SQL'
DO $$
DECLARE
  p int;
  sent int := 0;
BEGIN
  FOR i IN 1..30000 LOOP
    PERFORM pg_stat_clear_snapshot();
    SELECT pid INTO p FROM pg_stat_activity
    WHERE application_name = 'gpusort_intr' AND query LIKE 'DO%' AND state = 'active';
    IF p IS NOT NULL THEN
      PERFORM pg_log_backend_memory_contexts(p);
      sent := sent + 1;
    ELSIF sent > 0 THEN
      EXIT;
    END IF;
    PERFORM pg_sleep(0.002);
  END LOOP;
  RAISE NOTICE 'signals: %', sent;
END
$$;
SQL
	)
		wait "$sorter"
		cat "$RESULTS/interrupts.out"
		sent=$(echo "$sent" | sed -n 's/.*signals: \([0-9]*\).*/\1/p')
		if grep -q '^gpu|20|0$' "$RESULTS/interrupts.out" && [ "${sent:-0}" -gt 0 ]; then
			record "interrupts that are no cancel: sorts stay on the GPU" PASS "20 sorts on the GPU, no fallback, $sent memory-context log requests"
		else
			record "interrupts that are no cancel: sorts stay on the GPU" FAIL "$(tr '\n|' ' /' <"$RESULTS/interrupts.out") (${sent:-no} requests)"
		fi

		# ---- 2c. uploads during collection ----
		# A 1M-row sort finds most rows on the device (the suite gpu_engine
		# checks the rows of growing inputs, taken buffers and a cancel).
		out=$({ echo "$SETTINGS SET gpusort.device = gpu; SET client_min_messages = debug1;"
			echo "SELECT count(*) FROM (SELECT * FROM g1m ORDER BY k8 OFFSET 0) s;"; } |
			psql -X -q -A -t 2>&1)
		early=$(echo "$out" | sed -n 's/.*GPU sort of 1000000 rows.*(\([0-9]*\) rows uploaded before.*/\1/p' | head -1)
		if [ "${early:-0}" -gt 0 ]; then
			record "uploads during collection" PASS "$early of 1M rows uploaded before the sort"
		else
			record "uploads during collection" FAIL "uploaded before: ${early:-none}; $(echo "$out" | grep -v '^DEBUG' | tr '\n' ' ' | cut -c1-300)"
		fi

		# ---- 3. induced failures ----
		if [ -n "${PGDATA:-}" ] && [ -d "$PGDATA" ] && command -v pg_ctl >/dev/null; then
			if restart_server CUDA_VISIBLE_DEVICES=; then
				out=$({ echo "$SETTINGS SET gpusort.device = gpu;"
					echo "SELECT count(*) AS devices FROM gpusort_devices();"
					echo "$ORDERINGS"
					echo "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT * FROM g1m ORDER BY k8 OFFSET 1000000;"
					echo "SET gpusort.device = auto;"
					echo "SELECT gt_same('SELECT id FROM g1m ORDER BY a, id');"; } |
					"${PSQL[@]}" -A -t 2>&1)
				echo "$out"
				if [ "$(echo "$out" | grep -v -E '^(WARNING|DETAIL)' | head -1)" = 0 ] &&
					all_true "$(orderings_line "$out")" &&
					grep -q "Fallback Reason: no GPU" <<<"$out"; then
					record "device hidden (CUDA_VISIBLE_DEVICES=): CPU fallback" PASS "right rows; $(echo "$out" | grep -c '^WARNING') WARNINGs for 7 sorts (gpu), $(echo "$out" | grep -c '^NOTICE') NOTICEs (auto)"
				else
					record "device hidden (CUDA_VISIBLE_DEVICES=): CPU fallback" FAIL "$(echo "$out" | grep -E 'ERROR|Fallback' | tr '\n' ' ')"
				fi
			else
				record "device hidden (CUDA_VISIBLE_DEVICES=): CPU fallback" FAIL "restart failed"
			fi
			restart_server || { record "server restart" FAIL "could not restart the server"; }
			n=$(psql -X -At -c "SELECT count(*) FROM gpusort_devices()")
			echo "after restart: $n GPU(s)"
		else
			record "device hidden (CUDA_VISIBLE_DEVICES=): CPU fallback" SKIP "needs PGDATA and pg_ctl"
		fi
	fi

	# ---- 4. the GPU service ----
	# The suites that do not set the backend's own GPU (gpu_info and
	# gpu_engine do) and the service's own, then kill -9 of its processes
	# while 16 sessions sort, then the device hidden from it.
	if [ -n "${SKIP_SERVICE:-}" ]; then
		record "GPU service" SKIP "SKIP_SERVICE"
	elif can_restart && service_mode on; then
		echo "gpusort.service: $(psql -X -At -c "SHOW gpusort.service")"
		psql -X -c "SELECT gpu, device, name, state, pid, memory_limit_mb FROM gpusort_service"
		suites=${SUITES:-$(main_suites gpu_info no_gpu)}
		if [ -n "${SKIP_SERVICE_SUITES:-}" ]; then
			record "GPU service: regression suites" SKIP "SKIP_SERVICE_SUITES"
		else
			regress "GPU service: regression suites (device = gpu)" service $suites
			# parallel plans wherever the planner can make them: the
			# participants of every large composite sort share one input
			# (node_plan, whose plans differ there, makes the helpers first)
			regress "GPU service: node_plan before the forced run" service-parallel-setup node_plan
			PGOPTIONS="$PARALLEL_FORCED" REGRESS_OPTS=--use-existing \
				regress "GPU service: composite, parallel plans forced" service-parallel composite
			# random tables and orders against Sort, every sort on the GPU
			if PGOPTIONS="-c gpusort.device=gpu" python3 test/ci/random-orders.py \
				--seed "${RANDOM_SEED:-11}" --queries "${RANDOM_QUERIES:-150}" >"$RESULTS/random-orders.log" 2>&1; then
				record "GPU service: random orders against Sort" PASS "$(tail -1 "$RESULTS/random-orders.log")"
			else
				record "GPU service: random orders against Sort" FAIL "$(tail -1 "$RESULTS/random-orders.log")"
			fi
		fi
		if [ -n "${SKIP_SERVICE_CHECKS:-}" ]; then
			record "GPU service: crash, shared input, buckets, no device" SKIP "SKIP_SERVICE_CHECKS"
		else
			if [ -n "${SKIP_CRASH_SHARED:-}" ]; then
				record "GPU service: kill -9, shared input, shared memory" SKIP "SKIP_CRASH_SHARED"
			else
				run_check "GPU service: kill -9 of its process while 16 sessions sort" service-crash \
					'back after|checkpointer|all right' 'FAILED|all right|back after' \
					env SESSIONS="${CRASH_SESSIONS:-16}" ROWS=1000000 test/gpu/service-crash.sh
				run_check "GPU service: one input shared by a parallel query" service-shared \
					'service memory' 'DIFFERENT|FAIL' test/gpu/service-shared.sh
				# every dynamic_shared_memory_type, and no PostgreSQL shared
				# memory in the processes that run CUDA (restarts the server)
				run_check "GPU service: posix, mmap, sysv; no PostgreSQL memory in its processes" service-shm \
					'^ +ok +[a-z]+: (EXPLAIN|no PostgreSQL)' '^ +FAILED' test/gpu/service-shm.sh
			fi
			# sorts that together outgrow the service's memory (1 GB) wait
			# their turn rather than go to sorted runs on disk
			psql -X -q -c "ALTER SYSTEM SET gpusort.service_memory = ${LOAD_MEMORY:-1024}" &&
				restart_server && sleep 1 && wait_service
			run_check "GPU service: 8 sorts at once that together outgrow its memory" service-load \
				'sessions at once|fallbacks' 'WRONG|FAIL|went|written|slower' test/gpu/service-load.sh
			# a statement_timeout at many moments of held, shared, window
			# and SCROLL sorts: each stops within 300 ms
			[ -n "${SKIP_CANCELS:-}" ] ||
				run_check "GPU service: cancels within 300 ms at every moment" service-cancels \
					'latest cancel' 'latest cancel|FAIL' test/gpu/service-cancels.sh
			# two GPU processes (GPU 0 twice where there is one), 192 MB
			# each (gpusort.service_memory is a GPU's, shared by its
			# processes)
			gpus=$([ "$(psql -X -At -c "SELECT count(*) FROM gpusort_devices()")" -ge 2 ] || echo 0,0)
			per_gpu=$([ "$gpus" = 0,0 ] && echo 2 || echo 1)
			psql -X -q -c "ALTER SYSTEM SET gpusort.service_gpus = '$gpus'" \
				-c "ALTER SYSTEM SET gpusort.service_memory = $((192 * per_gpu))" &&
				restart_server && sleep 1 && wait_service
			run_check "GPU service: a sort too large for one GPU, in buckets on two" service-buckets \
				'orders wrong|fallbacks:' 'FAILED' test/gpu/service-buckets.sh
			# the differential suites with so little device memory that
			# every sort of theirs is split over the GPU processes
			split_mb=${SPLIT_MEMORY:-40}
			psql -X -q -c "ALTER SYSTEM SET gpusort.service_memory = $((split_mb * per_gpu))" &&
				restart_server && sleep 1 && wait_service
			# (node_plan makes the helpers the suites use)
			regress "GPU service: node_plan before the split run" service-split-setup node_plan
			split_counts() {
				psql -X -At -c "SELECT string_agg(jobs::text, ',' ORDER BY gpu) FROM gpusort_service" \
					-c "SELECT sorts FROM gpusort_service_fallbacks() WHERE reason = 'too large'" | tr '\n' ' '
			}
			before=$(split_counts)
			REGRESS_OPTS=--use-existing \
				regress "GPU service: differential suites, every sort split over two GPU processes ($split_mb MB each)" \
				service-split ${SPLIT_SUITES:-differential composite node_types key_types}
			# every GPU process ran jobs, and none was sent to the CPU as too large
			after=$(split_counts)
			echo "service jobs per GPU process, 'too large' fallbacks: before $before, after $after"
			if awk -v b="$before" -v a="$after" 'BEGIN { split(b, bb, " "); split(a, aa, " ");
					n = split(bb[1], jb, ","); split(aa[1], ja, ",");
					for (i = 1; i <= n; i++) if (ja[i] <= jb[i]) exit 1;
					exit (aa[2] != bb[2]) }'; then
				record "GPU service: the split suites ran on every GPU process, none too large" PASS "$before -> $after"
			else
				record "GPU service: the split suites ran on every GPU process, none too large" FAIL "$before -> $after"
			fi
			psql -X -q -c "ALTER SYSTEM RESET gpusort.service_gpus" -c "ALTER SYSTEM RESET gpusort.service_memory"
			if restart_server CUDA_VISIBLE_DEVICES=; then
				sleep 2
				out=$({ echo "$SETTINGS SET gpusort.device = gpu;"
					echo "SELECT state || ': ' || coalesce(reason, '') FROM gpusort_service;"
					echo "$ORDERINGS"; } | "${PSQL[@]}" -A -t 2>&1)
				echo "$out"
				if grep -q '^no device: ' <<<"$out" && all_true "$(orderings_line "$out")"; then
					record "GPU service, device hidden: no device, CPU fallback" PASS "right rows; $(grep '^no device' <<<"$out")"
				else
					record "GPU service, device hidden: no device, CPU fallback" FAIL "$(echo "$out" | grep -E 'ERROR|device' | tr '\n' ' ')"
				fi
			else
				record "GPU service, device hidden: no device, CPU fallback" FAIL "restart failed"
			fi
		fi
		restart_server || record "server restart" FAIL "could not restart the server"
	else
		record "GPU service" SKIP "needs PGDATA and pg_ctl to restart the server with it"
	fi

	if [ -z "${SKIP_KERNELS:-}" ]; then
		# ---- 5. kernel tests (built here by gpu-kernels.sh, or prebuilt in
		# GPUSORT_KBUILD, or in .kbuild when this host has no make) ----
		kargs=${KERNEL_TEST_ARGS:---max-n 4000000}
		mkdir -p "$RESULTS/kernels"
		if [ -n "${GPUSORT_KBUILD:-}" ] && [ -x "$GPUSORT_KBUILD/kernel_test" ] || ! command -v make >/dev/null; then
			# prebuilt binaries, carried from a machine with nvcc
			if [ -x "${GPUSORT_KBUILD:-$ROOT/.kbuild}/kernel_test" ]; then
				timeout "${KERNEL_TIMEOUT:-150}" "${GPUSORT_KBUILD:-$ROOT/.kbuild}/kernel_test" $kargs \
					>"$RESULTS/kernels/tests.log" 2>&1
				rc=$?
				grep -E "^FAIL" "$RESULTS/kernels/tests.log" | head -20
			else
				rc=127
				echo "no make and no kernel_test binary" >"$RESULTS/kernels/tests.log"
			fi
		else
			GPUSORT_PHASES=tests GPUSORT_TEST_ARGS="$kargs" GPUSORT_TIMEOUT=${KERNEL_TIMEOUT:-150} \
				test/gpu/gpu-kernels.sh "$RESULTS/kernels"
			rc=$?
		fi
		line=$(tail -1 "$RESULTS/kernels/tests.log" 2>/dev/null)
		if [ $rc -eq 0 ]; then
			record "CUDA kernel tests" PASS "$line"
		else
			record "CUDA kernel tests" FAIL "rc $rc: $line"
		fi
	fi
fi

# ---- 6. SQL benchmark ----
if [ -z "${SKIP_BENCH:-}" ]; then
	budget=$(($(left) - MARGIN))
	echo "== [$(elapsed)s] SQL benchmark, ${budget}s budget"
	BUDGET=$budget test/bench/bench-sql.sh "$RESULTS"
	csv=$(ls -t "$RESULTS"/sql-bench-*.csv 2>/dev/null | head -1)
	# acceptance: name|size|case|minimum ratio native/gpu (or maximum slowdown)
	check() {
		local label=$1 size=$2 name=$3 min=$4
		awk -F, -v s="$size" -v c="$name" -v min="$min" -v label="$label" '
			(s == "*" || $3 == s) && $4 == c && $5 == "gpu" { found = 1; r = $11; eng = $12; ms = $8 }
			END {
				if (!found || ms == "") { print label "|NOT RUN|"; exit }
				verdict = (r != "" && r + 0 >= min && eng != "cpu" && eng != "tuplesort") ? "PASS" : "FAIL"
				if (c ~ /min_rows/) verdict = (r != "" && r + 0 >= min) ? "PASS" : "FAIL"
				printf "%s|%s|%s ms, %sx native (need %sx), engine %s\n", label, verdict, ms, r, min, eng
			}' "$csv"
	}
	if [ -n "$csv" ]; then
		while IFS='|' read -r a b c; do record "$a" "$b" "$c"; done < <(
			check "10M rows ORDER BY int8, GPU >= 4x native" 10000000 "int8 random (full row)" 4
			check "10M rows ORDER BY two int keys, GPU >= 6x native" 10000000 "two int keys (full row)" 6
			check "100M rows ORDER BY int8 on the GPU, >= 4x native" 100000000 "int8 random (full row)" 4
			check "below min_rows (planned Sort), <= 5% slower" "*" "below min_rows (planned Sort)" 0.952
			check "below min_rows (at run time), <= 5% slower" "*" "below min_rows (at run time)" 0.952
		)
	else
		record "SQL benchmark" FAIL "no CSV"
	fi
fi

echo
echo "== gpu-tests summary ($(elapsed)s; GPU: ${DEVICES:-none})"
printf '%s\n' "${SUMMARY[@]}" | awk -F'|' '{ printf "%-55s %-8s %s\n", $1, $2, $3 }' | tee "$RESULTS/$(results_name gpu-tests).txt"
! grep -q '|FAIL|' <<<"$(printf '%s\n' "${SUMMARY[@]}")"
