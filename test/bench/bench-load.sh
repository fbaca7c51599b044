#!/bin/bash
# bench-load.sh: several sessions sorting a large table at once, at
# PostgreSQL's default settings (work_mem, parallel query: nothing is SET),
# with gpusort off (PostgreSQL's Sort) and on, and one session alone with it
# on, in one run: the wall time until the last session is done, whether
# every session returned every row, the GPU service's fallbacks for want of
# room or a failed job, and the temporary files written.  Against a running server that preloads gpusort (PGHOST, PGPORT,
# PGUSER: a superuser).
#
#   test/bench/bench-load.sh [OUT_DIR]
#
# The table is TPC-H's lineitem, loaded by test/bench/tpch-load.sh (from the
# CSV files of tpchgen-cli in TPCH_DIR, made with SCALE where there are
# none).
# Each session runs QUERY (default: every row of lineitem ordered by
# l_partkey, counted over the sort) and checks the count.
#
# Environment: SESSIONS (8), SCALE (10), TPCH_DIR (/tmp/tpch), MODES ("alone
# on off"; alone: one session, gpusort on), QUERY, TIMEOUT (seconds a mode
# may take, 280), TAG.
# Writes OUT_DIR/bench-load[-TAG]-<host>-<cores>-<date>-<commit>.txt
# (test/lib/results-name.sh).
set -uo pipefail
OUT=${1:-/tmp/gpusort-bench-load}
mkdir -p "$OUT"
SESSIONS=${SESSIONS:-8}
MODES=${MODES:-alone on off}
TIMEOUT=${TIMEOUT:-280}
QUERY=${QUERY:-SELECT count(*) FROM (SELECT * FROM lineitem ORDER BY l_partkey OFFSET 0) s}
source "$(dirname "${BASH_SOURCE[0]}")/../lib/results-name.sh"
RES="$OUT/$(results_name bench-load${TAG:+-$TAG}).txt"
PSQL=(psql -X -q -At -v ON_ERROR_STOP=1)
TMP=$(mktemp -d /tmp/gpusort-bench-load.XXXXXX)
chmod 755 "$TMP"
trap 'rm -rf "$TMP"' EXIT
exec > >(tee "$RES") 2>&1

echo "# bench-load on $(nproc) cores, $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null | head -1 || echo 'no GPU')"
echo "# $("${PSQL[@]}" -c 'SELECT version()')"
echo "# work_mem $("${PSQL[@]}" -c 'SHOW work_mem'), max_parallel_workers_per_gather" \
	"$("${PSQL[@]}" -c 'SHOW max_parallel_workers_per_gather'), gpusort.service_memory" \
	"$("${PSQL[@]}" -c "SELECT current_setting('gpusort.service_memory', true)")"

source "$(dirname "$0")/tpch-load.sh"
tpch_load lineitem || exit 1
rows=$("${PSQL[@]}" -c "SELECT count(*) FROM lineitem")
echo "# lineitem: $rows rows, $("${PSQL[@]}" -c "SELECT pg_size_pretty(pg_table_size('lineitem'))")"
echo "# $SESSIONS sessions at once: $QUERY"

# running PID...: is any of them still running?
running() {
	local p
	for p in "$@"; do
		kill -0 "$p" 2>/dev/null && return 0
	done
	return 1
}

# the service's fallbacks for want of room or a failed job, and this
# database's temporary files and their MB
counts() {
	"${PSQL[@]}" -c "SELECT pg_stat_clear_snapshot()" \
		-c "SELECT (SELECT coalesce(sum(sorts), 0) FROM gpusort_service_fallbacks()
		            WHERE reason IN ('no room', 'job failed')) || ' ' ||
		           (SELECT temp_files || ' ' || temp_bytes / 1048576 FROM pg_stat_database
		            WHERE datname = current_database())" 2>/dev/null | tail -n 1
}

for mode in $MODES; do
	setting=""
	[ "$mode" = off ] && setting="SET gpusort.enabled = off;"
	sessions=$SESSIONS
	[ "$mode" = alone ] && sessions=1
	rm -f "$TMP"/s.*
	read -r fallbacks0 files0 mb0 < <(counts)
	start=$(date +%s.%N)
	pids=()
	for ((s = 0; s < sessions; s++)); do
		timeout "$TIMEOUT" "${PSQL[@]}" -c "$setting $QUERY" >"$TMP/s.$s" 2>&1 &
		pids+=($!)
	done
	peak=0
	# (not wait or jobs: they would wait for the tee of this script's output)
	while running "${pids[@]}"; do
		used=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | head -1)
		[ -n "$used" ] && [ "$used" -gt "$peak" ] && peak=$used
		sleep 0.5
	done
	wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {print b - a}')
	sleep 1    # (the sessions' statistics reach pg_stat_database as they end)
	read -r fallbacks1 files1 mb1 < <(counts)
	right=0
	for ((s = 0; s < sessions; s++)); do
		if [ "$(tail -n 1 "$TMP/s.$s")" = "$rows" ]; then
			right=$((right + 1))
		else
			echo "   session $s ($mode): $(tr '\n' ' ' <"$TMP/s.$s" | cut -c1-300)"
		fi
	done
	printf 'gpusort %-5s  wall %7.1f s  sessions with every row: %d of %d  peak device memory %s MiB  no room or failed: %s  temporary files: %s (%s MB)\n' \
		"$mode" "$wall" "$right" "$sessions" "$peak" "$((${fallbacks1:-0} - ${fallbacks0:-0}))" \
		"$((${files1:-0} - ${files0:-0}))" "$((${mb1:-0} - ${mb0:-0}))"
done
# what one session's GpuSort did, alone
[ "${EXPLAIN:-1}" = 1 ] && "${PSQL[@]}" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $QUERY" | grep -E 'GpuSort|Engine|Method|Held|Runs|Workers|Worker [0-9]|Rows:' | sed 's/^/   /'
