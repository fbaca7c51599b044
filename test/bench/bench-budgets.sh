#!/bin/bash
# bench-budgets.sh: GpuSort against PostgreSQL's Sort at small memory
# budgets, where both sort out of core: for each budget and order, the time
# (median of RUNS), the temporary bytes written (pg_stat_database) and the
# backend's peak resident memory (VmHWM, a new session per run), side by
# side, with the ratios.  Parallel query stays on, at its defaults.
#
#   test/bench/bench-budgets.sh [RESULTS_DIR]
#
# Runs on the server that PGHOST/PGPORT name when PGHOST is set (gpusort
# loaded there, the server on this machine: VmHWM is read from /proc), else
# on a throwaway cluster (test/lib/cluster.sh) after `make install`.
# Environment: ROWS (default 1000000), RUNS (3), BUDGETS (default "1MB 4MB
# 16MB 64MB": work_mem and gpusort.work_mem alike), DEVICE (cpu), TAG.
# Writes RESULTS_DIR/bench-budgets[-TAG]-<host>-<cores>-<date>-<commit>.txt
# (test/lib/results-name.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
RESULTS=${1:-test/results}
ROWS=${ROWS:-1000000}
RUNS=${RUNS:-3}
BUDGETS=${BUDGETS:-1MB 4MB 16MB 64MB}
DEVICE=${DEVICE:-cpu}
source test/lib/results-name.sh
OUTFILE=$RESULTS/$(results_name bench-budgets${TAG:+-$TAG} "$DEVICE").txt
mkdir -p "$RESULTS"

source test/lib/cluster.sh
cluster_use -c shared_preload_libraries=gpusort || exit 1
export PGDATABASE=${PGDATABASE:-postgres}

# The orders: a name, and the query (FETCH ALL of a SCROLL cursor, then
# back to the start, for the plan that reads backward).
ORDERS=(
	"int8|SELECT * FROM bb ORDER BY k OFFSET $ROWS"
	"text C|SELECT * FROM bb ORDER BY s COLLATE \"C\" OFFSET $ROWS"
	"text|SELECT * FROM bb ORDER BY s OFFSET $ROWS"
	"int4, int8|SELECT * FROM bb ORDER BY g, k OFFSET $ROWS"
	"scroll int8|BEGIN; DECLARE c SCROLL CURSOR FOR SELECT * FROM bb ORDER BY k; MOVE FORWARD ALL IN c; MOVE BACKWARD ALL IN c; COMMIT"
)

psql -X -q -v ON_ERROR_STOP=1 <<EOF || exit 1
DROP TABLE IF EXISTS bb;
CREATE TABLE bb AS
	SELECT (random() * 1e15)::int8 AS k, (random() * 100)::int4 AS g,
		   md5(i::text) || md5((i * 7)::text) AS s, repeat('x', 20) AS pad
	FROM generate_series(1, $ROWS) i;
VACUUM ANALYZE bb;
EOF

# run MODE BUDGET QUERY: prints "ms temp_bytes hwm_kb" of one run in a new
# session (VmHWM: the backend's peak resident memory, read before it ends).
run() {
	local mode=$1 budget=$2 query=$3 enabled=on out
	[ "$mode" = sort ] && enabled=off
	out=$(psql -X -q -At -v ON_ERROR_STOP=1 2>&1 <<EOF
SET work_mem = '$budget';
SET gpusort.work_mem = '$budget';
SET gpusort.enabled = $enabled;
SET gpusort.device = $DEVICE;
SELECT pg_backend_pid() AS pid, pg_stat_force_next_flush() AS f \gset
SELECT temp_bytes AS t0 FROM pg_stat_database WHERE datname = current_database() \gset
SELECT extract(epoch FROM clock_timestamp()) AS c0 \gset
$query;
SELECT extract(epoch FROM clock_timestamp()) AS c1, pg_stat_force_next_flush() AS f \gset
SELECT pg_stat_clear_snapshot() AS f \gset
SELECT temp_bytes AS t1 FROM pg_stat_database WHERE datname = current_database() \gset
SELECT 'RESULT ' || round((:c1 - :c0) * 1000) || ' ' || (:t1 - :t0);
\setenv BENCH_PID :pid
\! awk '/^VmHWM/ {print "HWM", \$2}' /proc/\$BENCH_PID/status
EOF
)
	echo "$(echo "$out" | awk '/^RESULT/ {print $2, $3}') $(echo "$out" | awk '/^HWM/ {print $2}')"
}

source test/lib/stats.sh

{
	echo "# bench-budgets: $ROWS rows of about 100 bytes, medians of $RUNS runs taking turns, $(nproc) cores, device $DEVICE"
	echo "# $(psql -X -At -c 'SELECT version()')"
	echo "# max_parallel_workers_per_gather = $(psql -X -At -c 'SHOW max_parallel_workers_per_gather')"
	printf '%-6s %-12s %9s %9s %6s %12s %12s %6s %9s %9s\n' budget order sort_ms gpusort_ms ratio \
		sort_temp gpusort_temp temp× sort_hwm gpusort_hwm
} | tee "$OUTFILE"
for budget in $BUDGETS; do
	for entry in "${ORDERS[@]}"; do
		name=${entry%%|*}
		query=${entry#*|}
		: >/tmp/bench-budgets.sort
		: >/tmp/bench-budgets.gpusort
		for ((r = 0; r < RUNS; r++)); do
			run sort "$budget" "$query" >>/tmp/bench-budgets.sort
			run gpusort "$budget" "$query" >>/tmp/bench-budgets.gpusort
		done
		s_ms=$(awk '{print $1}' /tmp/bench-budgets.sort | median)
		g_ms=$(awk '{print $1}' /tmp/bench-budgets.gpusort | median)
		s_t=$(awk '{print $2}' /tmp/bench-budgets.sort | median)
		g_t=$(awk '{print $2}' /tmp/bench-budgets.gpusort | median)
		s_h=$(awk '{print $3}' /tmp/bench-budgets.sort | median)
		g_h=$(awk '{print $3}' /tmp/bench-budgets.gpusort | median)
		printf '%-6s %-12s %9s %9s %6s %12s %12s %6s %9s %9s\n' "$budget" "$name" "$s_ms" "$g_ms" \
			"$(awk -v a="$s_ms" -v b="$g_ms" 'BEGIN {printf "%.2fx", (b > 0 ? a / b : 0)}')" \
			"$s_t" "$g_t" \
			"$(awk -v a="$s_t" -v b="$g_t" 'BEGIN {printf "%.2f", (a > 0 ? b / a : 0)}')" \
			"$s_h" "$g_h" | tee -a "$OUTFILE"
	done
done
rm -f /tmp/bench-budgets.sort /tmp/bench-budgets.gpusort
echo "== results in $OUTFILE"
