#!/bin/bash
# bench-gpus.sh: one sort over the budget held by one GPU process against the
# same sort held in parts by every GPU process of the service, native
# PostgreSQL beside them, taking turns (medians of RUNS), against a running
# server that preloads gpusort with the service on (PGHOST, PGPORT, PGUSER:
# a superuser), as the multi-GPU issue measures: ROWS rows of about 70
# bytes, one int8 key, uniform or with 90% of its rows one value,
# PostgreSQL's defaults (work_mem 4MB, parallel query as the server has it).
# one_gpu: gpusort.held_gpus = 1, the rows held by one GPU process (or, where
# it has no room for them, sorted in runs); all_gpus: gpusort.held_gpus =
# ALL_GPUS (default 0: as many GPU processes as have room for the rows; the
# number of them to hold parts whatever the size).  Set
# gpusort.service_memory below the rows' size (ALTER SYSTEM and a restart,
# before) to measure an input that one GPU cannot hold: a GPU process holds
# a part where it has room for twice the part's expected bytes
# (PART_DEVICE_FACTOR, src/service/stager.c), and EXPLAIN of the serial plan
# (max_parallel_workers_per_gather = 0) gives the input's expected bytes N
# ("Expected to Exceed Memory Budget: yes (about N kB ..."), so a
# service_memory between N and 2N per GPU process has one process unable to
# hold the rows and two able to (1 GB at 10M rows was below N: neither held
# them).  Prints a table (ms;
# native over each, and one GPU over all) and what EXPLAIN ANALYZE said of
# each order; writes it to RESULTS_DIR.
#
#   test/bench/bench-gpus.sh [RESULTS_DIR]     (ROWS 20000000, RUNS 3, ALL_GPUS 0)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RESULTS=${1:-$ROOT/test/results}
ROWS=${ROWS:-20000000}
RUNS=${RUNS:-3}
PSQL=(psql -X -q -At)
SET="SET client_min_messages = warning;"
source "$ROOT/test/lib/stats.sh"
mkdir -p "$RESULTS"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '_')
ngpus=$("${PSQL[@]}" -c "CREATE EXTENSION IF NOT EXISTS gpusort" -c "SELECT count(*) FROM gpusort_service WHERE state = 'ready'")
memory=$("${PSQL[@]}" -c 'SHOW gpusort.service_memory' | tr -d ' ')
source "$ROOT/test/lib/results-name.sh"
OUT=$RESULTS/$(results_name bench-gpus-$ROWS-memory$memory).txt

"${PSQL[@]}" -c "DROP TABLE IF EXISTS bg_t" -c "CREATE UNLOGGED TABLE bg_t AS
	SELECT g AS id, hashint8(g)::int8 * 1000003 AS k,
	       CASE WHEN g % 10 = 0 THEN g ELSE 7 END::int8 AS k90,
	       md5(g::text) AS pad
	FROM generate_series(1, $ROWS) g" -c "VACUUM ANALYZE bg_t" || exit 1

# ms SETTINGS ORDER: one run's milliseconds
ms() {
	"${PSQL[@]}" <<SQL | tail -1
$SET $1
SELECT clock_timestamp() AS t0 \gset
SELECT * FROM bg_t ORDER BY $2 OFFSET $ROWS;
SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000);
SQL
}
NATIVE="SET gpusort.enabled = off;"
ONE="SET gpusort.held_gpus = 1;"
ALL="SET gpusort.held_gpus = ${ALL_GPUS:-0};"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b }'; }

{
	echo "# bench-gpus: $ROWS rows of about 70 bytes, work_mem $("${PSQL[@]}" -c 'SHOW work_mem'), max_parallel_workers_per_gather $("${PSQL[@]}" -c 'SHOW max_parallel_workers_per_gather'), $ngpus GPU processes, gpusort.service_memory $memory, $(nproc) cores, ${gpu:-no GPU}, medians of $RUNS, $(date -u +%Y-%m-%d)"
	echo "# one_gpu: gpusort.held_gpus = 1; all_gpus: gpusort.held_gpus = ${ALL_GPUS:-0} (0: as many GPU processes as have room for the rows)"
	printf '%-6s %10s %10s %10s %10s %10s %12s\n' order native one_gpu all_gpus x_one x_all all_vs_one
} | tee "$OUT"
for order in k k90; do
	native=() one=() all=()
	for r in $(seq "$RUNS"); do
		native+=("$(ms "$NATIVE" "$order")")
		one+=("$(ms "$ONE" "$order")")
		all+=("$(ms "$ALL" "$order")")
	done
	echo "# $order raw: native ${native[*]}; one_gpu ${one[*]}; all_gpus ${all[*]}" >>"$OUT"
	n=$(echo "${native[*]}" | median)
	o=$(echo "${one[*]}" | median)
	a=$(echo "${all[*]}" | median)
	printf '%-6s %10s %10s %10s %10s %10s %12s\n' "$order" "$n" "$o" "$a" \
		"$(ratio "$n" "$o")" "$(ratio "$n" "$a")" "$(ratio "$o" "$a")" | tee -a "$OUT"
done
for order in k k90; do
	for s in "$ONE" "$ALL"; do
		echo "== ORDER BY $order, $s"
		"${PSQL[@]}" -c "$SET $s" -c "EXPLAIN (ANALYZE, COSTS OFF) SELECT * FROM bg_t ORDER BY $order OFFSET $ROWS" |
			grep -E "Engine|Fallback|GPU Service|Method|Time|Batches|Held|Runs|Worker" | sed 's/^/   /'
	done
done | tee -a "$OUT"
"${PSQL[@]}" -c "DROP TABLE bg_t"
