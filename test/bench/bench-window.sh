#!/bin/bash
# bench-window.sh: ranking window functions, PostgreSQL's Sort and WindowAgg
# against GpuSort, taking turns, medians of RUNS: the shape of issue 34's
# TPC-H query (rank() of a supplier's lines by price, descending), the same
# with row_number(), ntile(4), which reads each partition ahead, and the
# top 3 lines per supplier (row_number() <= 3, a run condition).  Three
# plans: native (gpusort.enabled off), WindowAgg over GpuSort
# (gpusort.window_functions off), and GpuSort computing the functions.
# Every row is computed and none is sent (OFFSET).  Parallel query and the
# memory settings stay as the server has them, unless WORK_MEM sets
# work_mem and gpusort.work_mem.
#
#   test/bench/bench-window.sh [RESULTS_DIR]
#
# Runs on the server that PGHOST/PGPORT name when PGHOST is set (gpusort
# loaded there), else on a throwaway cluster (test/lib/cluster.sh) after `make
# install`.  Environment: ROWS (default 2000000), SUPPLIERS (ROWS / 600, as
# in TPC-H), RUNS (3), WORK_MEM, DEVICE (cpu), TAG, PARALLEL (1: parallel
# plans wherever the planner can make them, as at a larger scale: setup and
# tuple costs 0, any table size, two workers).
# Writes RESULTS_DIR/bench-window[-TAG]-<cores>core-<device>.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
RESULTS=${1:-test/results}
ROWS=${ROWS:-2000000}
SUPPLIERS=${SUPPLIERS:-$((ROWS / 600 + 1))}
RUNS=${RUNS:-3}
WORK_MEM=${WORK_MEM:-}
DEVICE=${DEVICE:-cpu}
source test/lib/results-name.sh
OUTFILE=$RESULTS/$(results_name bench-window${TAG:+-$TAG} "$DEVICE").txt
mkdir -p "$RESULTS"

source test/lib/cluster.sh
cluster_use -c shared_preload_libraries=gpusort || exit 1
export PGDATABASE=${PGDATABASE:-postgres}
source test/lib/stats.sh

QUERIES=(
	"rank|SELECT orderkey, linenumber, rank() OVER (PARTITION BY suppkey ORDER BY price DESC) FROM bw OFFSET $ROWS"
	"row_number|SELECT orderkey, linenumber, row_number() OVER (PARTITION BY suppkey ORDER BY price DESC) FROM bw OFFSET $ROWS"
	"ntile(4)|SELECT orderkey, linenumber, ntile(4) OVER (PARTITION BY suppkey ORDER BY price DESC) FROM bw OFFSET $ROWS"
	"top3|SELECT * FROM (SELECT orderkey, linenumber, row_number() OVER (PARTITION BY suppkey ORDER BY price DESC) rn FROM bw) s WHERE rn <= 3 OFFSET $ROWS"
)

# lineitem's columns of the query: prices as numeric(15,2), with ties
psql -X -q -v ON_ERROR_STOP=1 <<EOF || exit 1
DROP TABLE IF EXISTS bw;
CREATE TABLE bw AS
	SELECT (i / 4)::int8 AS orderkey, (i % 4 + 1)::int4 AS linenumber,
		   (random() * $SUPPLIERS)::int4 AS suppkey,
		   round((900 + random() * 100000)::numeric, 2)::numeric(15, 2) AS price
	FROM generate_series(1, $ROWS) i;
VACUUM ANALYZE bw;
EOF

# settings MODE: the SET commands of a plan (native, windowagg, gpusort)
settings() {
	echo "SET gpusort.device = $DEVICE;"
	case $1 in
		native) echo "SET gpusort.enabled = off;" ;;
		windowagg) echo "SET gpusort.window_functions = off;" ;;
	esac
	[ -n "$WORK_MEM" ] && echo "SET work_mem = '$WORK_MEM'; SET gpusort.work_mem = '$WORK_MEM';"
	[ "${PARALLEL:-0}" = 1 ] && echo "SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;"
}

# run MODE QUERY: the milliseconds of one run, in a new session
run() {
	psql -X -q -At -v ON_ERROR_STOP=1 <<EOF | awk '/^RESULT/ {print $2}'
$(settings "$1")
SELECT extract(epoch FROM clock_timestamp()) AS c0 \gset
$2;
SELECT 'RESULT ' || round((extract(epoch FROM clock_timestamp()) - :c0) * 1000);
EOF
}

{
	echo "# bench-window: $ROWS rows, $SUPPLIERS partitions (suppliers), medians of $RUNS runs taking turns, $(nproc) cores, device $DEVICE"
	echo "# $(psql -X -At -c 'SELECT version()')"
	echo "# work_mem = ${WORK_MEM:-$(psql -X -At -c 'SHOW work_mem')}, max_parallel_workers_per_gather = $(psql -X -At -c 'SHOW max_parallel_workers_per_gather')${PARALLEL:+, PARALLEL=$PARALLEL (parallel plans forced where possible)}"
	echo "# native: Sort and WindowAgg; windowagg: WindowAgg over GpuSort; gpusort: GpuSort computes the function"
	printf '%-12s %10s %12s %10s %8s %12s\n' query native_ms windowagg_ms gpusort_ms native× windowagg×
} | tee "$OUTFILE"
for entry in "${QUERIES[@]}"; do
	name=${entry%%|*}
	query=${entry#*|}
	for mode in native windowagg gpusort; do
		: >"/tmp/bench-window.$mode"
	done
	for ((r = 0; r < RUNS; r++)); do
		for mode in native windowagg gpusort; do
			run $mode "$query" >>"/tmp/bench-window.$mode"
		done
	done
	n=$(median </tmp/bench-window.native)
	w=$(median </tmp/bench-window.windowagg)
	g=$(median </tmp/bench-window.gpusort)
	printf '%-12s %10s %12s %10s %8s %12s\n' "$name" "$n" "$w" "$g" \
		"$(awk -v a="$n" -v b="$g" 'BEGIN {printf "%.2fx", (b > 0 ? a / b : 0)}')" \
		"$(awk -v a="$w" -v b="$g" 'BEGIN {printf "%.2fx", (b > 0 ? a / b : 0)}')" | tee -a "$OUTFILE"
done
{
	echo "# plans:"
	for mode in native windowagg gpusort; do
		echo "# $mode:"
		psql -X -q -At <<EOF | sed 's/^/#   /'
$(settings $mode)
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${QUERIES[0]#*|};
EOF
	done
} | tee -a "$OUTFILE"
rm -f /tmp/bench-window.native /tmp/bench-window.windowagg /tmp/bench-window.gpusort
echo "== results in $OUTFILE"
