#!/bin/bash
# service-load.sh: sorts that together outgrow the GPU service's memory take
# it in turn (src/service/stager.c, make_part), on a GPU host,
# against a running server that preloads gpusort with the service on
# (PGHOST, PGPORT, PGUSER: a superuser) and a gpusort.service_memory that
# holds one of the sorts below but not all of them at once (1024 MB for the
# defaults; test/gpu/gpu-tests.sh sets it).  SESSIONS sessions each sort a
# table of ROWS rows whose input is held by the service, with serial plans,
# then with parallel ones (the participants of each add to one input: a
# worker must not wait for the room that its own input took); checks that
#   - every sort returned Sort's order;
#   - no sort went to sorted runs for want of room and no job failed
#     (gpusort_service_fallbacks(): 'no room' and 'job failed' unchanged),
#     and no temporary file was written (pg_stat_database);
#   - the sessions together took at most 1.2 times SESSIONS times one sort
#     alone (said, and failed past it);
# and prints PASS or FAIL last.
#
# Environment: SESSIONS (default 8), ROWS (default 2000000), DB (default
# gpusort_load, created and dropped).
set -uo pipefail
SESSIONS=${SESSIONS:-8}
ROWS=${ROWS:-2000000}
DB=${DB:-gpusort_load}
P=(psql -X -q -At -v ON_ERROR_STOP=1)
TMP=$(mktemp -d /tmp/gpusort-load.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "service load test: FAIL: $*"; exit 1; }

"${P[@]}" -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" \
	-c "CREATE DATABASE $DB" || fail "no server"
export PGDATABASE=$DB
"${P[@]}" -c "CREATE EXTENSION gpusort" \
	-c "CREATE UNLOGGED TABLE sl_t AS SELECT g AS id, (hashint8(g) % 1000000)::int8 AS k,
	    md5(g::text) || md5((g + 1)::text) AS pad FROM generate_series(1, $ROWS) g" \
	-c "VACUUM ANALYZE sl_t" || fail "could not make the table"

QUERY="SELECT md5(string_agg(id::text, ',')) FROM (SELECT * FROM sl_t ORDER BY k, id OFFSET 0) s"
SERIAL="SET max_parallel_workers_per_gather = 0;"
# the participants of each query add to one input held by the service
PARALLEL="SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
          SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;"
fallbacks() {
	"${P[@]}" -c "SELECT coalesce(sum(sorts), 0) FROM gpusort_service_fallbacks()
	              WHERE reason IN ('no room', 'job failed')"
}
temp_files() {
	"${P[@]}" -c "SELECT pg_stat_clear_snapshot()" \
		-c "SELECT temp_files FROM pg_stat_database WHERE datname = current_database()" | tail -n 1
}
ms_now() { echo $(($(date +%s%N) / 1000000)); }

want=$("${P[@]}" -c "SET gpusort.enabled = off" -c "$QUERY") || fail "Sort's order"

fails=0
# load NAME PLAN_SETTINGS: one sort alone, then SESSIONS at once
load() {
	local name=$1 settings="SET gpusort.device = gpu; SET client_min_messages = error; $2"
	local one all before_fallbacks before_temp after_fallbacks after_temp start

	"${P[@]}" -c "$settings" -c "$QUERY" >/dev/null || fail "a first sort"    # (warms the service up)
	echo "== $name: one sort alone, held by the service:"
	"${P[@]}" -c "$settings" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT * FROM sl_t ORDER BY k, id" |
		grep -E "Sort Method|Batches Held|Not Held|Workers Launched" | head -4
	start=$(ms_now)
	"${P[@]}" -c "$settings" -c "$QUERY" >/dev/null
	one=$(($(ms_now) - start))

	before_fallbacks=$(fallbacks)
	before_temp=$(temp_files)
	start=$(ms_now)
	for s in $(seq 1 "$SESSIONS"); do
		"${P[@]}" -c "$settings" -c "$QUERY" >"$TMP/out.$s" 2>"$TMP/err.$s" &
	done
	wait
	all=$(($(ms_now) - start))
	sleep 1    # (the sessions' statistics reach pg_stat_database as they end)
	after_fallbacks=$(fallbacks)
	after_temp=$(temp_files)

	for s in $(seq 1 "$SESSIONS"); do
		if [ "$(cat "$TMP/out.$s")" != "$want" ]; then
			echo "$name, session $s: WRONG ORDER or error: $(head -c 300 "$TMP/err.$s")"
			fails=$((fails + 1))
		fi
	done
	echo "$name: $SESSIONS sessions at once: $all ms; one sort alone: $one ms (bound: 1.2 x $SESSIONS x one = $((one * SESSIONS * 12 / 10)) ms)"
	echo "$name: fallbacks 'no room' and 'job failed': $before_fallbacks -> $after_fallbacks; temporary files: $before_temp -> $after_temp"
	[ "$after_fallbacks" = "$before_fallbacks" ] || { echo "$name: sorts went to sorted runs or failed"; fails=$((fails + 1)); }
	[ "$after_temp" = "$before_temp" ] || { echo "$name: temporary files were written"; fails=$((fails + 1)); }
	[ "$all" -le $((one * SESSIONS * 12 / 10)) ] || { echo "$name: slower than the sorts one after another"; fails=$((fails + 1)); }
}
load serial "$SERIAL"
load parallel "$PARALLEL"
"${P[@]}" -d postgres -c "DROP DATABASE $DB" >/dev/null
if [ "$fails" -eq 0 ]; then
	echo "service load test: PASS"
else
	echo "service load test: FAIL ($fails)"
	exit 1
fi
