#!/bin/bash
# bench-ties.sh: tie-heavy ORDER BYs (a leading integer key of few values,
# then text, numeric or float keys that PostgreSQL's comparators order),
# PostgreSQL's Sort against GpuSort, side by side in one run, against the
# server that PGHOST/PGPORT/PGUSER name (it must load gpusort).
#
#   test/bench-ties.sh [RESULTS_DIR]
#
# Reports the median of RUNS executions of "SELECT count(*) FROM (SELECT *
# ... ORDER BY ... OFFSET 0)" (every row sorted, none sent) and the ratio
# native / gpusort (above 1: gpusort is faster).  Writes
# RESULTS_DIR/bench-ties-<cores>core-<device>.txt.
#
# Environment: ROWS (default 1000000), RUNS (default 3), DEVICE (gpusort's
# engine, default cpu), WORK_MEM (default 2GB).
set -uo pipefail
RESULTS=${1:-test/results}
ROWS=${ROWS:-1000000}
RUNS=${RUNS:-3}
DEVICE=${DEVICE:-cpu}
WORK_MEM=${WORK_MEM:-2GB}
PSQL=(psql -X -q -v ON_ERROR_STOP=1)
mkdir -p "$RESULTS"
OUTFILE=$RESULTS/bench-ties-$(nproc)core-$DEVICE.txt

"${PSQL[@]}" -c "CREATE EXTENSION IF NOT EXISTS gpusort" || exit 1
if [ "$("${PSQL[@]}" -At -c "SELECT count(*) FROM pg_class WHERE relname = 'ties_$ROWS'")" != 1 ]; then
	"${PSQL[@]}" <<SQL || exit 1
CREATE UNLOGGED TABLE ties_$ROWS AS
  SELECT g AS id, (hashint4(g) % 30000)::int2 AS r2, md5(g::text) AS t,
         (hashint4(g + 1) % 100000)::numeric / 7 AS n, (hashint4(g + 2) % 100000)::float8 / 7 AS f
  FROM generate_series(1, $ROWS) g;
VACUUM ANALYZE ties_$ROWS;
SQL
fi

# Median milliseconds of RUNS runs of the query with gpusort on or off.
median_ms() {
	local enabled=$1 query=$2
	for _ in $(seq "$RUNS"); do
		"${PSQL[@]}" <<SQL | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'
SET work_mem = '$WORK_MEM';
SET max_parallel_workers_per_gather = 0;
SET gpusort.device = $DEVICE;
SET gpusort.enabled = $enabled;
\\timing on
SELECT count(*) FROM ($query OFFSET 0) s;
SQL
	done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

{
	echo "# bench-ties: $ROWS rows, median of $RUNS, work_mem $WORK_MEM, gpusort.device = $DEVICE"
	echo "# $(psql -X -At -c 'SHOW server_version'), $(nproc) cores, $(date -u +%Y-%m-%d)"
	printf '%-58s %10s %10s %7s\n' "ORDER BY" "native ms" "gpusort ms" "ratio"
	while IFS= read -r order; do
		[ -n "$order" ] || continue
		q="SELECT * FROM ties_$ROWS ORDER BY $order"
		native=$(median_ms off "$q")
		ours=$(median_ms on "$q")
		awk -v o="$order" -v n="$native" -v g="$ours" \
			'BEGIN { printf "%-58s %10.1f %10.1f %6.2fx\n", o, n, g, n / g }'
	done <<'ORDERS'
(r2 % 2)::int, t COLLATE "C"
(r2 % 2)::int, t COLLATE "en-x-icu"
(r2 % 2)::int, t
(r2 * 0)::int, t COLLATE "C"
(r2 % 100)::int, n
(r2 % 100)::int, f
r2::int, t COLLATE "C"
(CASE WHEN id % 2 = 0 THEN r2 END)::int, t COLLATE "C"
ORDERS
} | tee "$OUTFILE"
