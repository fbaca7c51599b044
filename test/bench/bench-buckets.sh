#!/bin/bash
# bench-buckets.sh: sorts larger than one GPU's share of the service's
# device memory, split into buckets, with uniform and skewed keys, native
# and GpuSort taking turns (medians of RUNS), against a running server that
# preloads gpusort with the service on and a gpusort.service_memory that
# the rows exceed (e.g. 512 MB: ALTER SYSTEM and a restart, before), as the
# splitters issue measures: ROWS whole rows of about 70 bytes (every
# column read by a Limit past the last row, none sent), work_mem 8GB,
# parallel query as the server has it.  Orders: a uniform int8 key; a key
# with 90% of its rows one value; a Zipf-like key; the 90% key then id.
# Prints a table (ms, and each GpuSort time over the uniform order's) and
# what EXPLAIN ANALYZE said of each order; writes it to RESULTS_DIR.
#
#   test/bench/bench-buckets.sh [RESULTS_DIR]     (ROWS 20000000, RUNS 3)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RESULTS=${1:-$ROOT/test/results}
ROWS=${ROWS:-20000000}
RUNS=${RUNS:-3}
PSQL=(psql -X -q -At)
SET="SET client_min_messages = warning; SET work_mem = '8GB'; SET gpusort.work_mem = '8GB';"
source "$ROOT/test/lib/stats.sh"
mkdir -p "$RESULTS"
source "$ROOT/test/lib/results-name.sh"
OUT=$RESULTS/$(results_name bench-buckets).txt

"${PSQL[@]}" -c "DROP TABLE IF EXISTS bb_t" -c "CREATE UNLOGGED TABLE bb_t AS
	SELECT g AS id, hashint8(g)::int8 * 1000003 AS k,
	       CASE WHEN g % 10 = 0 THEN g ELSE 7 END::int8 AS k90,
	       (1000000 / (1 + (hashint8(g) & 1048575)))::int8 AS kz,
	       md5(g::text) AS pad
	FROM generate_series(1, $ROWS) g" -c "VACUUM ANALYZE bb_t" || exit 1

# ms ENABLED ORDER: one run's milliseconds
ms() {
	"${PSQL[@]}" <<SQL | tail -1
$SET SET gpusort.enabled = $1;
SELECT clock_timestamp() AS t0 \gset
SELECT * FROM bb_t ORDER BY $2 OFFSET 1000000000000;
SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000);
SQL
}

{
	echo "# bench-buckets: $ROWS whole rows of about 70 bytes, work_mem 8GB, gpusort.service_memory $("${PSQL[@]}" -c 'SHOW gpusort.service_memory'), $(nproc) cores, ${gpu:-no GPU}, medians of $RUNS, $(date -u +%Y-%m-%d)"
	printf '%-10s %10s %10s %8s %14s\n' order native gpusort ratio vs_uniform
} | tee "$OUT"
uniform=
for order in k k90 kz "k90, id"; do
	native=() ours=()
	for r in $(seq "$RUNS"); do
		native+=("$(ms off "$order")")
		ours+=("$(ms on "$order")")
	done
	n=$(echo "${native[*]}" | median)
	g=$(echo "${ours[*]}" | median)
	[ -z "$uniform" ] && uniform=$g
	printf '%-10s %10s %10s %8s %14s\n' "$order" "$n" "$g" \
		"$(awk -v n="$n" -v g="$g" 'BEGIN { if (g > 0) printf "%.2fx", n / g }')" \
		"$(awk -v u="$uniform" -v g="$g" 'BEGIN { if (u > 0) printf "%.2f", g / u }')" | tee -a "$OUT"
done
for order in k k90 kz "k90, id"; do
	echo "== ORDER BY $order"
	"${PSQL[@]}" -c "$SET" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT * FROM bb_t ORDER BY $order" |
		grep -E "Engine|Fallback|GPU Service|Method" | sed 's/^/   /'
done | tee -a "$OUT"
"${PSQL[@]}" -c "DROP TABLE bb_t"
