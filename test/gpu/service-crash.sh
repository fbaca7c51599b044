#!/bin/bash
# service-crash.sh: the GPU service survives kill -9 of its GPU processes
# while sessions sort, and the server does not restart.  Against a running
# server that preloads gpusort with gpusort.service on (PGHOST, PGPORT,
# PGUSER name it, a superuser; run as root or as the server's user, to send
# the signal):
#   1. SESSIONS sessions sort a table of ROWS rows ROUNDS times each with
#      gpusort.device = DEVICE;
#   2. KILL_AFTER seconds in, every GPU process of the service gets SIGKILL;
#   3. checks that every sort returned PostgreSQL's order (a GPU job lost
#      with its process is sorted on the CPU), that the server went through
#      no crash restart (its checkpointer is the same process:
#      pg_postmaster_start_time() stays what it was across one), and that
#      each GPU has a new process, ready (or "no device" on a host without a
#      GPU), within 10 s, its restart counted.
# Prints what it saw and "service crash test: passed" or "... FAILED".
# test/gpu/gpu-tests.sh runs it against the server it tests, on a GPU host (a
# cluster of the test's own would start a second service on the same GPUs).
# The test command runs the same test as a TAP test, on a cluster of its own
# (test/t/001_service_crash.pl).
#
# Environment: SESSIONS (default 16), ROWS (default 1000000), ROUNDS
# (default 3), DEVICE (default gpu), KILL_AFTER (default 1), DB (default
# gpusort_crash, created and dropped).
set -uo pipefail
SESSIONS=${SESSIONS:-16}
ROWS=${ROWS:-1000000}
ROUNDS=${ROUNDS:-3}
DEVICE=${DEVICE:-gpu}
KILL_AFTER=${KILL_AFTER:-1}
DB=${DB:-gpusort_crash}
PSQL=(psql -X -q -At -v ON_ERROR_STOP=1)
TMP=$(mktemp -d /tmp/gpusort-crash.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "service crash test: FAILED: $*"; exit 1; }

"${PSQL[@]}" -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" || fail "no server"
export PGDATABASE=$DB
"${PSQL[@]}" -c "CREATE EXTENSION gpusort" \
	-c "CREATE TABLE sc_t AS SELECT g AS id, (random() * 1e9)::int8 AS k, md5(g::text) AS pad
	    FROM generate_series(1, $ROWS) g" -c "ANALYZE sc_t" || fail "could not make the table"
pids=$("${PSQL[@]}" -c "SELECT string_agg(pid::text, ' ') FROM gpusort_service")
[ -n "$pids" ] || fail "the service has no process (is gpusort preloaded with gpusort.service on?)"
CHECKPOINTER="SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'"
started=$("${PSQL[@]}" -c "$CHECKPOINTER")
QUERY="SELECT md5(string_agg(id::text, ',')) FROM (SELECT id FROM sc_t ORDER BY k, id OFFSET 0) s"
want=$("${PSQL[@]}" -c "SET gpusort.enabled = off" -c "$QUERY")
echo "== $SESSIONS sessions x $ROUNDS sorts of $ROWS rows (gpusort.device = $DEVICE); GPU processes: $pids"

for s in $(seq 1 "$SESSIONS"); do
	{
		echo "SET gpusort.device = $DEVICE; SET work_mem = '1GB'; SET client_min_messages = error;"
		for _ in $(seq 1 "$ROUNDS"); do echo "$QUERY;"; done
	} | psql -X -q -At >"$TMP/out.$s" 2>"$TMP/err.$s" &
done
sleep "$KILL_AFTER"
killed_at=$(date +%s%N)
kill -9 $pids || fail "could not kill the GPU processes $pids"
echo "== killed the GPU processes $pids"

# back within 10 s: new processes, settled
back=""
for _ in $(seq 1 100); do
	state=$("${PSQL[@]}" -c "SELECT bool_and(pid IS NOT NULL AND pid NOT IN ($(echo "$pids" | tr ' ' ','))
	    AND state IN ('ready', 'no device') AND restarts >= 1) FROM gpusort_service" 2>/dev/null)
	if [ "$state" = t ]; then
		back=$(awk -v a="$killed_at" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
		break
	fi
	sleep 0.1
done
wait

bad=0
errors=0
for s in $(seq 1 "$SESSIONS"); do
	got=$(grep -c -x "$want" "$TMP/out.$s")
	if [ "$got" -ne "$ROUNDS" ]; then
		bad=$((bad + 1))
		[ -s "$TMP/err.$s" ] && errors=$((errors + 1)) && sed 's/^/   session error: /' "$TMP/err.$s" | head -3
	fi
done
"${PSQL[@]}" -c "SELECT gpu, state, pid, jobs, failures, restarts FROM gpusort_service" | sed 's/^/   service: /'
"${PSQL[@]}" -c "SELECT reason, sorts FROM gpusort_service_fallbacks() WHERE sorts > 0" | sed 's/^/   fallbacks: /'
now=$("${PSQL[@]}" -c "$CHECKPOINTER")
after=$("${PSQL[@]}" -c "SET gpusort.device = $DEVICE" -c "SET client_min_messages = error" -c "$QUERY")
"${PSQL[@]}" -d postgres -c "DROP DATABASE $DB"

echo "   sessions whose sorts were all right: $((SESSIONS - bad)) of $SESSIONS ($errors with an error)"
echo "   checkpointer: $started -> $now"
echo "   service back after: ${back:-never (10 s)} s"
[ "$bad" -eq 0 ] || fail "$bad sessions got wrong rows or an error"
[ "$started" = "$now" ] || fail "the server restarted"
[ -n "$back" ] || fail "the service did not come back within 10 s"
[ "$after" = "$want" ] || fail "a sort after the restart returned wrong rows"
echo "service crash test: passed"
