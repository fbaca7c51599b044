#!/bin/bash
# service-cancels.sh: how late a statement_timeout stops a sort, at many
# moments of its life, against a running server that preloads gpusort
# (PGHOST, PGPORT, PGUSER), on a GPU host (the GPU service) or here (the
# CPU engine).  For each query below and each timeout from 100 ms to a
# little under the query's own time, the error must come within LATE_MS
# (default 300) of the timeout; prints each query's latest and "PASS" or
# "FAIL" last.
#
#   ORDER BY held      whole rows over the budget, held by the engine
#   ORDER BY shared    the same with parallel workers sharing one input
#   parallel window    rank() summed over slices of one shared input
#   SCROLL             MOVE LAST through a cursor over the budget
#
# Environment: ROWS (default 5000000), LATE_MS (default 300), STEPS
# (timeouts per query, default 8), DB (default gpusort_cancels, created and
# dropped).  Needs a table's worth of time: each query runs once whole, then
# once per timeout.
set -uo pipefail
ROWS=${ROWS:-5000000}
LATE_MS=${LATE_MS:-300}
STEPS=${STEPS:-8}
DB=${DB:-gpusort_cancels}
P=(psql -X -q -At -v ON_ERROR_STOP=1)
PAR="SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;"

"${P[@]}" -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" \
	-c "CREATE DATABASE $DB" || { echo "service cancels: FAIL: no server"; exit 1; }
export PGDATABASE=$DB
"${P[@]}" -c "CREATE EXTENSION gpusort" \
	-c "CREATE UNLOGGED TABLE sx_t (id int8 NOT NULL, g int4 NOT NULL, k int8, pad text)" \
	-c "INSERT INTO sx_t SELECT i, i % 1000, hashint8(i), md5(i::text) FROM generate_series(1, $ROWS) i" \
	-c "VACUUM ANALYZE sx_t" || { echo "service cancels: FAIL: could not make the table"; exit 1; }

ms_now() { echo $(($(date +%s%N) / 1000000)); }

# run SETTINGS SQL [TIMEOUT_MS]: prints the milliseconds it took, and
# "cancelled" where the timeout stopped it
run() {
	local start out
	start=$(ms_now)
	out=$("${P[@]}" -c "$1" ${3:+-c "SET statement_timeout = $3"} -c "$2" 2>&1)
	echo "$(($(ms_now) - start)) $(grep -q 'statement timeout' <<<"$out" && echo cancelled)"
}

fails=0
# sweep NAME SETTINGS SQL: the query whole, then stopped at STEPS moments
sweep() {
	local name=$1 settings=$2 sql=$3 whole latest=0 t took
	whole=$(run "$settings" "$sql" | cut -d' ' -f1)
	for i in $(seq 1 "$STEPS"); do
		t=$((100 + (whole * 9 / 10 - 100) * (i - 1) / (STEPS > 1 ? STEPS - 1 : 1)))
		read -r took state < <(run "$settings" "$sql" "$t")
		[ "$state" = cancelled ] || continue
		[ $((took - t)) -gt "$latest" ] && latest=$((took - t))
	done
	printf '%-16s whole %6d ms; latest cancel %4d ms after its timeout\n' "$name" "$whole" "$latest"
	[ "$latest" -le "$LATE_MS" ] || fails=$((fails + 1))
}

HELD="SET gpusort.device = gpu; SET max_parallel_workers_per_gather = 0;"
sweep "ORDER BY held" "$HELD" "SELECT * FROM sx_t ORDER BY k, id OFFSET $ROWS"
sweep "ORDER BY shared" "SET gpusort.device = gpu; $PAR SET max_parallel_workers_per_gather = 4;" \
	"SELECT * FROM sx_t ORDER BY k, id OFFSET $ROWS"
sweep "parallel window" "SET gpusort.device = gpu; $PAR SET max_parallel_workers_per_gather = 4;" \
	"SELECT sum(r) FROM (SELECT rank() OVER (PARTITION BY g ORDER BY k) r FROM sx_t) s"
sweep "SCROLL" "$HELD SET work_mem = '32MB';" \
	"BEGIN; DECLARE c SCROLL CURSOR FOR SELECT * FROM sx_t ORDER BY k, id; MOVE LAST IN c; MOVE BACKWARD ALL IN c; COMMIT"

"${P[@]}" -d postgres -c "DROP DATABASE $DB" >/dev/null
if [ "$fails" -eq 0 ]; then
	echo "service cancels: PASS (every cancel within $LATE_MS ms)"
else
	echo "service cancels: FAIL ($fails queries answered a cancel later than $LATE_MS ms)"
	exit 1
fi
