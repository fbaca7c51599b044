#!/bin/bash
# bench-service.sh: many sessions sorting at once, as the GPU service runs
# them, against PostgreSQL's Sort and the CPU engine, in one run.  Against a
# running server that preloads gpusort (PGHOST, PGPORT, PGUSER: a superuser).
#
#   test/bench/bench-service.sh [OUT_DIR]
#
# Each test starts its sessions together (one psql each) and reports the wall
# time until the last is done, per mode:
#   off   gpusort.enabled = off (PostgreSQL's Sort)
#   cpu   gpusort.device = cpu
#   gpu   gpusort.device = gpu (through the service, if gpusort.service is
#         on; else each backend's own CUDA)
#   auto  gpusort.device = auto
# Tests (each sort returns every row: SELECT * ... ORDER BY k OFFSET rows):
#   many    SMALL_SESSIONS (128) sessions x SMALL_ROUNDS (3) sorts of a
#           SMALL_ROWS (1M) row table
#   large   LARGE_SESSIONS (16) x LARGE_ROUNDS (2) sorts of LARGE_ROWS (10M)
#   tiny    TINY_SESSIONS (32) x TINY_ROUNDS (100) sorts of TINY_ROWS (20K):
#           what small jobs cost the GPU processes, and where they go
#   single  one session, one sort of LARGE_ROWS rows, RUNS (3) times, median
#   fresh   a new connection's first sort of SMALL_ROWS rows, RUNS times:
#           its time and engine (EXPLAIN ANALYZE), per mode
# Rows are about 70 bytes (id, k int8, an md5 text).  The peak device memory
# (nvidia-smi) is sampled during the gpu mode.  Results: OUT_DIR/
# bench-service[-TAG]-<host>-<cores>-<date>-<commit>.txt
# (test/lib/results-name.sh; TAG default: service-off where the service is
# not on).
#
# Environment: MODES (default "off cpu gpu auto"), TESTS (default "many
# large single fresh"), and the sizes above.
set -uo pipefail
OUT=${1:-/tmp/gpusort-bench-service}
mkdir -p "$OUT"
MODES=${MODES:-off cpu gpu auto}
TESTS=${TESTS:-many large tiny single fresh}
SMALL_ROWS=${SMALL_ROWS:-1000000}
SMALL_SESSIONS=${SMALL_SESSIONS:-128}
SMALL_ROUNDS=${SMALL_ROUNDS:-3}
LARGE_ROWS=${LARGE_ROWS:-10000000}
LARGE_SESSIONS=${LARGE_SESSIONS:-16}
LARGE_ROUNDS=${LARGE_ROUNDS:-2}
TINY_ROWS=${TINY_ROWS:-20000}
TINY_SESSIONS=${TINY_SESSIONS:-32}
TINY_ROUNDS=${TINY_ROUNDS:-100}
RUNS=${RUNS:-3}
DB=${DB:-gpusort_bench_service}
PSQL=(psql -X -q -At -v ON_ERROR_STOP=1)
service=$("${PSQL[@]}" -d postgres -c "SELECT current_setting('gpusort.service', true)")
[ "${service:-none}" = on ] || TAG=${TAG:-service-${service:-none}}
source "$(dirname "${BASH_SOURCE[0]}")/../lib/results-name.sh"
RES="$OUT/$(results_name bench-service${TAG:+-$TAG}).txt"
TMP=$(mktemp -d /tmp/gpusort-bench-service.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
exec > >(tee "$RES") 2>&1

echo "# bench-service on $(hostname), $(nproc) cores, $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo 'no GPU')"
echo "# $("${PSQL[@]}" -d postgres -c 'SELECT version()')"
echo "# gpusort.service = ${service:-not preloaded}; modes: $MODES"

if ! "${PSQL[@]}" -d "$DB" -c "SELECT 1 FROM bs_tiny LIMIT 1" >/dev/null 2>&1; then
	"${PSQL[@]}" -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
	"${PSQL[@]}" -d "$DB" -c "CREATE EXTENSION gpusort" \
		-c "CREATE TABLE bs_small AS SELECT g AS id, (random() * 1e15)::int8 AS k, md5(g::text) AS pad
		    FROM generate_series(1, $SMALL_ROWS) g" \
		-c "CREATE TABLE bs_large AS SELECT g AS id, (random() * 1e15)::int8 AS k, md5(g::text) AS pad
		    FROM generate_series(1, $LARGE_ROWS) g" \
		-c "CREATE TABLE bs_tiny AS SELECT g AS id, (random() * 1e15)::int8 AS k, md5(g::text) AS pad
		    FROM generate_series(1, $TINY_ROWS) g" \
		-c "VACUUM ANALYZE bs_small" -c "VACUUM ANALYZE bs_large" -c "VACUUM ANALYZE bs_tiny"
	"${PSQL[@]}" -d "$DB" -c "SELECT count(*) FROM bs_small" -c "SELECT count(*) FROM bs_large" >/dev/null
fi
export PGDATABASE=$DB

settings() {
	local mode=$1 mem=$2
	echo "SET work_mem = '$mem'; SET max_parallel_workers_per_gather = 0; SET client_min_messages = error;"
	case $mode in
	off) echo "SET gpusort.enabled = off;" ;;
	*) echo "SET gpusort.device = $mode;" ;;
	esac
}

# sessions MODE TABLE ROWS N ROUNDS MEM: wall seconds of N sessions together
sessions() {
	local mode=$1 table=$2 rows=$3 n=$4 rounds=$5 mem=$6 start
	for s in $(seq 1 "$n"); do
		{
			settings "$mode" "$mem"
			for _ in $(seq 1 "$rounds"); do echo "SELECT * FROM $table ORDER BY k OFFSET $rows;"; done
		} >"$TMP/in.$s"
	done
	local pids=()
	start=$(date +%s%N)
	for s in $(seq 1 "$n"); do
		psql -X -q -At -f "$TMP/in.$s" >/dev/null 2>"$TMP/err.$s" &
		pids+=($!)
	done
	wait "${pids[@]}"
	awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f\n", (b - a) / 1e9 }'
	cat "$TMP"/err.* 2>/dev/null | sort | uniq -c | head -3 | sed 's/^/#   stderr: /' >&2
	rm -f "$TMP"/err.*
}

# peak device memory in MB while a command runs (nvidia-smi, if there)
peak_memory() {
	if command -v nvidia-smi >/dev/null 2>&1; then
		nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 >"$TMP/mem" 2>/dev/null &
		local smi=$!
		"$@"
		kill $smi 2>/dev/null
		wait $smi 2>/dev/null
		echo "#   peak device memory (nvidia-smi, all GPUs' max): $(sort -n "$TMP/mem" | tail -1) MB" >&2
	else
		"$@"
	fi
}

concurrent() {
	local name=$1 table=$2 rows=$3 n=$4 rounds=$5 mem=$6 base=""
	echo "## $name: $n sessions x $rounds sorts of $rows rows (work_mem $mem)"
	echo "test|mode|wall_s|vs_off"
	for mode in $MODES; do
		local t
		if [ "$mode" = gpu ]; then
			t=$(peak_memory sessions "$mode" "$table" "$rows" "$n" "$rounds" "$mem")
		else
			t=$(sessions "$mode" "$table" "$rows" "$n" "$rounds" "$mem")
		fi
		[ "$mode" = off ] && base=$t
		echo "$name|$mode|$t|$([ -n "$base" ] && awk -v a="$base" -v b="$t" 'BEGIN { printf "%.2f", a / b }')x"
	done
	"${PSQL[@]}" -c "SELECT 'service: gpu ' || gpu || ' ' || state || ', jobs ' || jobs || ', busy ' || round(busy_ms) || ' ms, memory used/limit ' || memory_used_mb || '/' || memory_limit_mb || ' MB' FROM gpusort_service" 2>/dev/null | sed 's/^/#   /'
	"${PSQL[@]}" -c "SELECT 'fallbacks: ' || coalesce(string_agg(reason || ' ' || sorts, ', '), 'none') FROM gpusort_service_fallbacks() WHERE sorts > 0" 2>/dev/null | sed 's/^/#   /'
}

source "$(dirname "${BASH_SOURCE[0]}")/../lib/stats.sh"

# explain MODE TABLE ROWS MEM: "ms engine" of one sort in a new connection
explain_fresh() {
	local mode=$1 table=$2 rows=$3 mem=$4
	{ settings "$mode" "$mem"; echo "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT * FROM $table ORDER BY k OFFSET $rows;"; } |
		psql -X -q -At 2>/dev/null |
		awk '/Sort Engine:/ {e=$3} /Engine Choice:/ {sub(/.*Engine Choice: /, ""); c=$0} /Execution Time:/ {t=$3} END {printf "%s %s (%s)\n", t, (e ? e : "sort"), c}'
}

for test in $TESTS; do
	case $test in
	many) concurrent many bs_small "$SMALL_ROWS" "$SMALL_SESSIONS" "$SMALL_ROUNDS" 256MB ;;
	large) concurrent large bs_large "$LARGE_ROWS" "$LARGE_SESSIONS" "$LARGE_ROUNDS" 2GB ;;
	tiny) concurrent tiny bs_tiny "$TINY_ROWS" "$TINY_SESSIONS" "$TINY_ROUNDS" 4MB ;;
	single|fresh)
		if [ "$test" = single ]; then
			table=bs_large rows=$LARGE_ROWS mem=2GB
			echo "## single: one session, ORDER BY int8 of $rows rows, median of $RUNS (fresh connections, execution time)"
		else
			table=bs_small rows=$SMALL_ROWS mem=256MB
			echo "## fresh: a new connection's first sort of $rows rows, median of $RUNS"
		fi
		echo "test|mode|ms|engine (choice)"
		for mode in $MODES; do
			for _ in $(seq 1 "$RUNS"); do explain_fresh "$mode" "$table" "$rows" "$mem"; done >"$TMP/fresh"
			m=$(awk '{print $1}' "$TMP/fresh" | median)
			echo "$test|$mode|$m|$(grep -m1 "^$m " "$TMP/fresh" | cut -d' ' -f2-)"
		done
		;;
	esac
done
echo "# results: $RES"
