#!/bin/bash
# bench-spill-disk.sh: ORDER BYs over the memory budget, native Sort against
# GpuSort's sorted runs, with the time and the bytes of temporary files of
# each (pg_stat_database.temp_bytes, the largest size each file reached),
# whole rows of about 110 bytes, by an int8, by a text under C, and by three
# columns as TPC-H's lineitem by (l_shipdate, l_orderkey, l_linenumber).
#
#   test/bench/bench-spill-disk.sh [RESULTS_DIR]
#
# Environment: ROWS (default 2000000), WORK_MEMS (default "1MB 64MB", each
# work_mem and gpusort.work_mem), RUNS (default 3), DEVICE (gpusort.device,
# default cpu), TAG (added to the file's name, e.g. the build measured),
# WORKERS (max_parallel_workers_per_gather; default: the server's, parallel
# query on as users run it), ORDERS (the ORDER BY lists, separated by "|";
# default 'k8|t COLLATE "C"|d, ok, ln').
# Writes RESULTS_DIR/bench-spill-disk-<rows>[-<tag>]-<cores>core-<device>.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
RESULTS=${1:-test/results}
ROWS=${ROWS:-2000000}
WORK_MEMS=${WORK_MEMS:-1MB 64MB}
RUNS=${RUNS:-3}
DEVICE=${DEVICE:-cpu}
PSQL=(psql -X -q -v ON_ERROR_STOP=1)
ORDERS=${ORDERS:-'k8|t COLLATE "C"|d, ok, ln'}
TABLE=spill_disk3_$ROWS
source test/lib/results-name.sh
OUTFILE=$RESULTS/$(results_name bench-spill-disk-$ROWS${TAG:+-$TAG} "$DEVICE").txt
mkdir -p "$RESULTS"

"${PSQL[@]}" -c "CREATE EXTENSION IF NOT EXISTS gpusort"
if [ "$("${PSQL[@]}" -At -c "SELECT count(*) FROM pg_class WHERE relname = '$TABLE'")" != 1 ]; then
	echo "== creating $TABLE ($ROWS rows)"
	"${PSQL[@]}" -c "CREATE UNLOGGED TABLE $TABLE AS
		SELECT g AS id, hashint8(g) AS k8, md5(g::text) AS t, repeat('p', 20) AS pad,
		       date '1992-01-02' + (hashint4(g) & 2047) AS d, g / 4 AS ok, (g % 4 + 1)::int4 AS ln
		FROM generate_series(1, $ROWS) g" \
		-c "VACUUM ANALYZE $TABLE"
fi

# One run: milliseconds and bytes of temporary files.
run() {
	"${PSQL[@]}" -At <<SQL
SET work_mem = '$2';
SET gpusort.work_mem = '$2';
${WORKERS:+SET max_parallel_workers_per_gather = $WORKERS;}
SET gpusort.device = $DEVICE;
SET gpusort.enabled = $1;
SELECT pg_stat_force_next_flush() \gset
SELECT temp_bytes AS b0 FROM pg_stat_database WHERE datname = current_database() \gset
SELECT clock_timestamp() AS t0 \gset
SELECT * FROM $TABLE ORDER BY $3 OFFSET $ROWS;
SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000) AS ms,
       pg_stat_force_next_flush() \gset
SELECT :ms || ' ' || temp_bytes - :b0 FROM pg_stat_database WHERE datname = current_database();
SQL
}

{
	echo "# bench-spill-disk: $ROWS rows of about 110 bytes (whole rows, OFFSET), gpusort.device = $DEVICE"
	echo "# $(psql -X -At -c 'SHOW server_version'), $(nproc) cores, $(date -u +%Y-%m-%d)," \
		"max_parallel_workers_per_gather ${WORKERS:-$(psql -X -At -c 'SHOW max_parallel_workers_per_gather')}"
	printf '%-8s %-14s %-8s %4s %10s %14s\n' "budget" "order" "sort" "run" "ms" "temp bytes"
	for wm in $WORK_MEMS; do
		IFS='|' read -r -a orders <<<"$ORDERS"
		for order in "${orders[@]}"; do
			for enabled in off on; do
				for r in $(seq "$RUNS"); do
					read -r ms bytes < <(run $enabled "$wm" "$order" | tail -n 1)
					printf '%-8s %-14s %-8s %4s %10s %14s\n' "$wm" "$order" \
						"$([ $enabled = on ] && echo gpusort || echo native)" "$r" "$ms" "$bytes"
				done
			done
		done
	done
} | tee "$OUTFILE"
echo "== results in $OUTFILE"
