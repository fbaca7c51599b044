#!/bin/bash
# gpusort in one command: builds and installs it (and PostgreSQL 15 if
# missing), starts a throwaway cluster in a temporary directory with gpusort
# preloaded, loads a few million rows, and runs the same ORDER BY with
# gpusort off and on.  Uses the GPU when there is one, else the CPU engine,
# and says which ran.  ROWS sets the table size (default 5000000).  Says what
# it installs into the system and where its cluster runs (CLUSTER_PORT: the
# first port tried), and removes the cluster when it ends.
set -euo pipefail
cd "$(dirname "$0")/.."
export PG_CONFIG=${PG_CONFIG:-pg_config}
ROWS=${ROWS:-5000000}
source test/deps.sh
source test/cluster.sh
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
# One session each: the warm-up run, then EXPLAIN ANALYZE (a NOTICE such as
# "no GPU" is said once per session).
run() {
	psql -X -q -A -t -c "SET gpusort.enabled = $1" -c "SELECT 1 FROM ($query) s" \
		-c "EXPLAIN (ANALYZE, TIMING OFF, BUFFERS OFF) $query"
}
echo "-- gpusort off: PostgreSQL's Sort"
off=$(run off)
echo "$off" | grep -E '^ *(->  )?(Sort|Limit)|Sort Method|Execution Time'
echo "-- gpusort on"
on=$(run on)
echo "$on" | grep -E 'GpuSort|Sort Key|Sort Engine|Engine Choice|Fallback|Collect|Sort Time|Emit|Memory Used|Execution Time'

t_off=$(echo "$off" | sed -n 's/Execution Time: \([0-9.]*\).*/\1/p')
t_on=$(echo "$on" | sed -n 's/Execution Time: \([0-9.]*\).*/\1/p')
engine=$(echo "$on" | sed -n 's/.*Sort Engine: \(.*\)/\1/p')
echo
printf 'sorted %s rows on the %s engine: %.0f ms with gpusort, %.0f ms without: %.2fx faster\n' \
	"$ROWS" "$engine" "$t_on" "$t_off" "$(echo "$t_off / $t_on" | bc -l)"
