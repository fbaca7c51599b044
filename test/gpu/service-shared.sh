#!/bin/bash
# service-shared.sh: the input that the participants of a parallel query
# share on the GPU service (src/node/paths/runs/shared_stage.c), on a GPU host, against
# a running server that preloads gpusort with the service on (PGHOST,
# PGPORT, PGUSER: a superuser).  Checks that the rows are Sort's with 0, 2
# and 4 workers, for one key and for composite orders, with NULLs and with
# an order whose holding ends; that cancels at varied moments and an error
# in a worker leave no rows held by the service (its memory back where it
# was) and no temporary files; and that a sort afterwards is right.  Then
# the parallel window (src/node/plan/window_path.c), whose participants each
# read slices of the one input the service holds: every row's values are
# those of PostgreSQL's WindowAgg, with 0, 2 and 4 workers, and the plan is
# the parallel one.  Prints PASS or FAIL last.
#
#   test/gpu/service-shared.sh [ROWS]      (default 3000000)
set -uo pipefail
ROWS=${1:-3000000}
P=(psql -X -q -At)
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
PAR="SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;"
fails=0

"${P[@]}" -c "CREATE EXTENSION IF NOT EXISTS gpusort" -c "DROP TABLE IF EXISTS shared_t" -c "CREATE UNLOGGED TABLE shared_t AS
	SELECT g AS id, (hashint8(g) % 100000)::int8 AS k, (g % 97)::int4 AS a,
	       CASE WHEN g % 1000 = 7 THEN NULL ELSE (g % 5003)::int4 END AS n, md5(g::text) AS pad
	FROM generate_series(1, $ROWS) g" -c "VACUUM ANALYZE shared_t" || exit 1

memory() { "${P[@]}" -c "SELECT coalesce(sum(memory_used_mb), 0) FROM gpusort_service"; }
temp_files() { "${P[@]}" -c "SELECT count(*) FROM pg_ls_tmpdir()"; }

# same WORKERS QUERY: GpuSort's ids in the order of Sort's (serial)?
same() {
	local got want
	got=$("${P[@]}" -c "$PAR SET max_parallel_workers_per_gather = $1;
		SELECT md5(string_agg(id::text, ',')) FROM ($2 OFFSET 0) s" 2>&1)
	want=$("${P[@]}" -c "SET gpusort.enabled = off; SET max_parallel_workers_per_gather = 0;
		SELECT md5(string_agg(id::text, ',')) FROM ($2 OFFSET 0) s" 2>&1)
	if [ "$got" = "$want" ]; then
		echo "same       workers $1: $2"
	else
		echo "DIFFERENT  workers $1: $2 ($got / $want)"
		fails=$((fails + 1))
	fi
}

same 2 "SELECT id FROM shared_t ORDER BY k, id"    # (warms the service up)
base=$(memory)
base_files=$(temp_files)
for w in 0 2 4; do
	same $w "SELECT id FROM shared_t ORDER BY k, id"
	same $w "SELECT id FROM shared_t ORDER BY a DESC, k, id"
	same $w "SELECT id FROM shared_t ORDER BY n NULLS FIRST, id"
	same $w "SELECT id FROM shared_t ORDER BY n, id"   # rows led by a NULL: runs
done
echo "== EXPLAIN ANALYZE, 4 workers, ORDER BY k, id:"
"${P[@]}" -c "$PAR SET max_parallel_workers_per_gather = 4;
	EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT * FROM shared_t ORDER BY k, id" |
	grep -E "Gather|GpuSort|Sort Method|Batches|Worker [0-9]|Sorted Rows" | head -12

# the parallel window: its columns NOT NULL, as it needs
"${P[@]}" -c "ALTER TABLE shared_t ALTER k SET NOT NULL, ALTER a SET NOT NULL" -c "ANALYZE shared_t"
# win_same WORKERS QUERY: each row's values PostgreSQL's (serial WindowAgg)?
# (a sum of a hash of each row: an aggregate in parts, as the parallel
# window needs above it)
win_same() {
	local got want
	got=$("${P[@]}" -c "$PAR SET max_parallel_workers_per_gather = $1;
		SELECT count(*), sum(hashtext(s::text)::numeric) FROM ($2) s" 2>&1)
	want=$("${P[@]}" -c "SET gpusort.enabled = off; SET max_parallel_workers_per_gather = 0;
		SELECT count(*), sum(hashtext(s::text)::numeric) FROM ($2) s" 2>&1)
	if [ "$got" = "$want" ]; then
		echo "same       workers $1: $2"
	else
		echo "DIFFERENT  workers $1: $2 ($got / $want)"
		fails=$((fails + 1))
	fi
}
for w in 0 2 4; do
	win_same $w "SELECT id, rank() OVER w, dense_rank() OVER w FROM shared_t WINDOW w AS (PARTITION BY a ORDER BY k)"
	win_same $w "SELECT id, row_number() OVER (PARTITION BY k ORDER BY id) FROM shared_t"
	win_same $w "SELECT id, percent_rank() OVER w, cume_dist() OVER w FROM shared_t
		WINDOW w AS (PARTITION BY a ORDER BY k DESC)"
	win_same $w "SELECT id, count(*) OVER (PARTITION BY a) FROM shared_t"
	win_same $w "SELECT sum(r), count(*) FROM (SELECT rank() OVER (PARTITION BY a ORDER BY k DESC) r FROM shared_t) s"
done
echo "== EXPLAIN ANALYZE, 4 workers, a sum over rank() by a, k:"
plan=$("${P[@]}" -c "$PAR SET max_parallel_workers_per_gather = 4;
	EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT sum(r) FROM (SELECT rank() OVER (PARTITION BY a ORDER BY k) r FROM shared_t) s")
echo "$plan" | grep -E "Aggregate|Gather|GpuSort|Window Functions|Sort Method|Worker [0-9]" | head -14
if ! echo "$plan" | grep -q "read back in slices"; then
	echo "FAIL: the parallel window did not read the service's input in slices"
	fails=$((fails + 1))
fi
for t in 100 400 900; do
	"${P[@]}" -c "$PAR SET max_parallel_workers_per_gather = 4; SET statement_timeout = $t;
		SELECT sum(r) FROM (SELECT rank() OVER (PARTITION BY a ORDER BY k) r FROM shared_t) s" 2>&1 | tail -1
done

echo "== cancels (statement_timeout) and an error in a worker"
for t in 50 150 300 500 800 1200; do
	"${P[@]}" -c "$PAR SET max_parallel_workers_per_gather = 4; SET statement_timeout = $t;
		SELECT count(*) FROM (SELECT * FROM shared_t ORDER BY k, id OFFSET 0) s" 2>&1 | tail -1
done
"${P[@]}" -c "$PAR SET max_parallel_workers_per_gather = 4;
	SELECT count(*) FROM (SELECT * FROM shared_t ORDER BY k, 1 / (id - $((ROWS * 5 / 6))) OFFSET 0) s" 2>&1 | tail -1
sleep 2
after=$(memory)
after_files=$(temp_files)
echo "service memory: $base MB before, $after MB after; temporary files: $base_files before, $after_files after"
if [ "$after" -gt "$base" ]; then
	echo "FAIL: the service holds more memory than before"
	fails=$((fails + 1))
fi
if [ "$after_files" -gt "$base_files" ]; then
	echo "FAIL: temporary files left behind"
	fails=$((fails + 1))
fi
same 4 "SELECT id FROM shared_t ORDER BY k, id"
"${P[@]}" -c "DROP TABLE shared_t"
[ "$fails" = 0 ] && echo "service shared test: PASS" || echo "service shared test: FAIL ($fails)"
[ "$fails" = 0 ]
