#!/bin/bash
# bench-spill-memory.sh: one large ORDER BY int8 over a memory budget, native
# Sort against GpuSort, with the time and the backend's peak resident memory
# (VmHWM, from /proc: the server must run on this host, and the role must be
# a superuser) of each, each run in a fresh connection.
#
#   test/bench/bench-spill-memory.sh [RESULTS_DIR]
#
# Environment: ROWS (default 100000000), WORK_MEM (default 1GB, also
# gpusort.work_mem), RUNS (default 1), DEVICE (gpusort.device, default gpu).
# Rows of about 100 bytes: id, a random int8 key, a 32-character text.
# Writes RESULTS_DIR/bench-spill-memory-<rows>-<cores>core-<device>.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
RESULTS=${1:-test/results}
ROWS=${ROWS:-100000000}
WORK_MEM=${WORK_MEM:-1GB}
RUNS=${RUNS:-1}
DEVICE=${DEVICE:-gpu}
PSQL=(psql -X -q -v ON_ERROR_STOP=1)
TABLE=spill_mem_$ROWS
source test/lib/results-name.sh
OUTFILE=$RESULTS/$(results_name bench-spill-memory-$ROWS "$DEVICE").txt
mkdir -p "$RESULTS"

"${PSQL[@]}" -c "CREATE EXTENSION IF NOT EXISTS gpusort"
if [ "$("${PSQL[@]}" -At -c "SELECT count(*) FROM pg_class WHERE relname = '$TABLE'")" != 1 ]; then
	echo "== creating $TABLE ($ROWS rows)"
	"${PSQL[@]}" -c "CREATE UNLOGGED TABLE $TABLE AS
		SELECT g AS id, hashint8(g) AS k8, md5(g::text) AS pad FROM generate_series(1, $ROWS) g" \
		-c "VACUUM ANALYZE $TABLE"
fi

# One run: milliseconds and the backend's VmHWM and VmRSS before, in kB.
run() {
	"${PSQL[@]}" -At <<SQL
SET work_mem = '$WORK_MEM';
SET max_parallel_workers_per_gather = 0;
SET gpusort.device = $DEVICE;
SET gpusort.enabled = $1;
$([ "$1" = on ] && [ "$DEVICE" != cpu ] && echo "SELECT gpusort_gpu_start() IS NOT NULL;")
SELECT substring(pg_read_file('/proc/self/status') FROM 'VmRSS:\s+(\d+)') AS rss \gset
SELECT clock_timestamp() AS t0 \gset
SELECT * FROM $TABLE ORDER BY k8 OFFSET $ROWS;
SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000) || ' ' ||
       substring(pg_read_file('/proc/self/status') FROM 'VmHWM:\s+(\d+)') || ' ' || :rss;
SQL
}

{
	echo "# bench-spill-memory: $ROWS rows of about 100 bytes, ORDER BY int8 (whole rows, OFFSET), work_mem $WORK_MEM, gpusort.device = $DEVICE"
	echo "# $(psql -X -At -c 'SHOW server_version'), $(nproc) cores, $(date -u +%Y-%m-%d)"
	printf '%-10s %4s %12s %14s %14s\n' "sort" "run" "ms" "VmHWM kB" "VmRSS0 kB"
	for enabled in off on; do
		for r in $(seq "$RUNS"); do
			read -r ms hwm rss < <(run $enabled | tail -n 1)
			printf '%-10s %4s %12s %14s %14s\n' "$([ $enabled = on ] && echo gpusort || echo native)" "$r" "$ms" "$hwm" "$rss"
		done
	done
	echo "# EXPLAIN ANALYZE with gpusort:"
	"${PSQL[@]}" <<SQL
SET work_mem = '$WORK_MEM';
SET max_parallel_workers_per_gather = 0;
SET gpusort.device = $DEVICE;
EXPLAIN (ANALYZE, COSTS OFF) SELECT * FROM $TABLE ORDER BY k8 OFFSET $ROWS;
SQL
} | tee "$OUTFILE"
