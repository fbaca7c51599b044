#!/bin/bash
# gpusort in one command: builds and installs it (and PostgreSQL 15 if
# missing), starts a throwaway cluster in a temporary directory with gpusort
# preloaded, loads a few million rows, and runs the same ORDER BY with
# gpusort off and on.  Uses the GPU when there is one, else the CPU engine,
# and says which ran, why, and where the time went (EXPLAIN ANALYZE's Collect,
# Sort and Emit Time).  ROWS sets the table size (default 5000000).  Says what
# it installs into the system and where its cluster runs (CLUSTER_PORT: the
# first port tried), and removes the cluster when it ends.
set -euo pipefail
cd "$(dirname "$0")/.."
export PG_CONFIG=${PG_CONFIG:-pg_config}
ROWS=${ROWS:-5000000}
source test/lib/deps.sh
source test/lib/cluster.sh
gpusort_install_deps

if [ "$(make -s print-cuda PG_CONFIG="$PG_CONFIG" 2>/dev/null)" = yes ]; then
	echo "== building gpusort against $("$PG_CONFIG" --version) (nvcc: a few minutes the first time)"
else
	echo "== building gpusort against $("$PG_CONFIG" --version), CPU-only (no nvcc)"
fi
make -s PG_CONFIG="$PG_CONFIG"
gpusort_make_install PG_CONFIG="$PG_CONFIG"

trap cluster_stop EXIT
cluster_start -c shared_preload_libraries=gpusort -c work_mem=4GB -c jit=off
psql -X -q -c "CREATE EXTENSION gpusort"

echo "== loading $ROWS rows: orders(id, customer, amount, note)"
psql -X -q <<SQL
CREATE TABLE orders AS
  SELECT g AS id,
         (random() * 1e6)::int4 AS customer,
         (random() * 1e12)::int8 AS amount,
         md5(g::text) AS note
  FROM generate_series(1, $ROWS) g;
VACUUM ANALYZE orders;
SQL

query="SELECT * FROM orders ORDER BY amount DESC, customer OFFSET $ROWS"
echo "== $query"
# One session each.  For the comparison: a warm-up run, then EXPLAIN ANALYZE
# with TIMING OFF (timing every row would slow both sides).  With gpusort on,
# a third run, EXPLAIN ANALYZE as a user would type it, shows the GpuSort
# node: the engine, why, and the time of each phase.  A NOTICE such
# as "no GPU" is said once per session.
run() {
	psql -X -q -A -t -c "SET gpusort.enabled = $1" -c "SELECT 1 FROM ($query) s" \
		-c "EXPLAIN (ANALYZE, TIMING OFF, BUFFERS OFF) $query" \
		${2:+-c "EXPLAIN (ANALYZE, BUFFERS OFF) $query"}
}
field() {	# the first value of an EXPLAIN line, from the text in $1
	echo "$1" | sed -n "/^ *$2: /{s/^ *$2: //;p;q;}"
}
echo "-- gpusort off: PostgreSQL's Sort"
off=$(run off)
echo "$off" | grep -E '^ *(->  )?(Sort|Limit)|Sort Method|Execution Time'
echo "-- gpusort on: the GpuSort node of EXPLAIN ANALYZE (with TIMING), then the time with TIMING OFF"
on=$(run on phases)
timed=$(echo "$on" | sed -n '1,/Execution Time/p')
phases=$(echo "$on" | sed '1,/Execution Time/d')
echo "$phases" | sed -n '/GpuSort/,/->  /p' | sed '$d'
echo "$timed" | grep 'Execution Time'

t_off=$(field "$off" 'Execution Time' | cut -d' ' -f1)
t_on=$(field "$timed" 'Execution Time' | cut -d' ' -f1)
engine=$(field "$timed" 'Sort Engine')
choice=$(field "$timed" 'Engine Choice')
fallback=$(field "$timed" 'Fallback Reason')
echo
echo "== what happened"
case "$engine" in
gpu) echo "The GPU sorted the keys (Sort Engine: gpu)." ;;
cpu) echo "gpusort's CPU engine, a radix sort, sorted the keys (Sort Engine: cpu)." ;;
*) echo "PostgreSQL's tuplesort sorted the rows (Sort Engine: $engine)." ;;
esac
case "$choice" in
*"no GPU"*) echo "Why: there is no usable GPU here (${choice#auto: no GPU: }), so gpusort sorts on the CPU." ;;
*"GPU estimated faster"*) echo "Why: gpusort.device = auto, and the cost model expected the GPU to be faster for this many rows." ;;
*"CPU engine estimated faster"*) echo "Why: gpusort.device = auto, and the cost model expected the CPU engine to be faster for this many rows." ;;
"") ;;
*) echo "Why: $choice" ;;
esac
[ -n "$fallback" ] && echo "Fallback: $fallback"
echo "Where the time went (from EXPLAIN ANALYZE with TIMING, which times every row too):"
for phase in Collect Sort Emit; do
	printf '  %-8s %12s   %s\n' "$phase" "$(field "$phases" "$phase Time")" "$(case $phase in
		Collect) echo 'reading the rows into the row store (the scan included)' ;;
		Sort) echo 'the engine sorting the keys, and the comparators settling ties' ;;
		Emit) echo 'returning the rows in order' ;;
	esac)"
done
awk -v rows="$ROWS" -v e="$engine" -v on="$t_on" -v off="$t_off" 'BEGIN {
	printf "sorted %s rows on the %s engine: %.0f ms with gpusort, %.0f ms without: %.2fx faster\n",
		rows, e, on, off, off / on }'
