#!/bin/bash
# service-buckets.sh: a sort larger than one GPU's share of
# gpusort.service_memory runs in buckets on every GPU process of the
# service, and returns PostgreSQL's order.  Against a running server that
# preloads gpusort with the service on, two or more GPU processes (two GPUs,
# or gpusort.service_gpus = '0,0') and a gpusort.service_memory that ROWS
# rows exceed (PGHOST, PGPORT, PGUSER name it, a superuser):
#   1. a table of ROWS rows of about 100 bytes: a random int8 k (unique: its
#      low digits are the row's id, so that no two rows tie), d with 1000
#      values, h with 2, s with 90% of its rows of one value, md5 text t;
#   2. orders that take each way a bucket's result comes back (the rows with
#      one key or several, the permutation with a prefix key, the sorted
#      prefix keys), each compared with PostgreSQL's Sort, and each run on
#      the GPU with EXPLAIN ANALYZE's "GPU Service: N buckets on GPUs 0, 1",
#      and each GPU's buckets, rows and time;
#   3. orders led by keys that repeat (two values; 90% of the rows one
#      value; all equal; a Zipf-like key; half NULL, first and last), which
#      the buckets split by row number, rows presorted and reversed, and a
#      key that defeats the sample the splitters come from (the rows at the
#      sampled places all 0, the others above), whose ranges are cut at
#      their own rows: on every GPU, the rows right, the largest bucket
#      within the bound EXPLAIN states ("largest bucket: R rows, bound B",
#      B = ceil(rows / buckets) or what a GPU's share holds), and no sort
#      sent to the CPU engine as too large;
#   4. inputs over a 4 MB budget (the first HELD_ROWS rows), held in parts
#      on the GPU processes, each part sorted at once and the parts merged
#      as the rows are returned (EXPLAIN ANALYZE: "GPU Service: rows held on
#      2 GPU processes, merged", each one's rows and sort time): one that
#      one process has no room for, then with gpusort.held_gpus = 2, by one
#      key and several, with NULLs of a one-key order first and last, and
#      with two parallel workers sharing the input: the rows are Sort's; and
#      an eighth of them on one process, with gpusort.held_gpus = 1 and 0;
#   5. every GPU process ran jobs (the gpusort_service view);
#   6. SESSIONS (default 8) sessions sort in buckets at once: each gets
#      PostgreSQL's order;
#   7. sorts in buckets cancelled by statement_timeout at 1 to 3.1 s: none
#      leaves a job queued, and a sort after them is right, in buckets.
# Prints what it saw, with the times of one order with and without gpusort
# (for information, not checked), and "service buckets test: passed" or
# "... FAILED".
#
# Environment: ROWS (default 8000000), HELD_ROWS (default 2000000), DB
# (default gpusort_buckets, created and dropped).
set -uo pipefail
ROWS=${ROWS:-8000000}
HELD_ROWS=${HELD_ROWS:-2000000}
SESSIONS=${SESSIONS:-8}
DB=${DB:-gpusort_buckets}
PSQL=(psql -X -q -At -v ON_ERROR_STOP=1)
SETTINGS="SET work_mem = '4GB'; SET gpusort.work_mem = '4GB'; SET max_parallel_workers_per_gather = 0;
SET gpusort.device = gpu; SET client_min_messages = error;"
fail() { echo "service buckets test: FAILED: $*"; exit 1; }

"${PSQL[@]}" -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" || fail "no server"
export PGDATABASE=$DB
"${PSQL[@]}" -c "CREATE EXTENSION gpusort" || fail "no gpusort"
ready=$("${PSQL[@]}" -c "SELECT count(*) FROM gpusort_service WHERE state = 'ready'")
"${PSQL[@]}" -c "SELECT gpu, device, state, memory_limit_mb FROM gpusort_service" | sed 's/^/   service: /'
[ "${ready:-0}" -ge 2 ] || fail "the service has $ready GPU processes ready; this test needs two"
"${PSQL[@]}" -c "CREATE TABLE bk_t AS
	    SELECT g AS id, (random() * 1e7)::int8 * 1000000000 + g AS k, g % 1000 AS d, g % 2 AS h,
	           CASE WHEN g % 10 = 0 THEN g ELSE 7 END AS s,
	           md5(g::text) AS t, repeat('x', 30) AS pad,
	           CASE WHEN g - 1 = floor(ceil((g - 1) * 8192.0 / $ROWS) * $ROWS / 8192)
	                THEN 0 ELSE 1 + (random() * 1e15)::int8 END AS a,
	           floor(1000 / (1 + 999 * random()))::int4 AS z,
	           CASE WHEN g % 2 = 0 THEN NULL ELSE (random() * 1e15)::int8 END AS n,
	           1 AS c
	    FROM generate_series(1, $ROWS) g" -c "ANALYZE bk_t" || fail "could not make the table"
"${PSQL[@]}" -c "SELECT gpusort_stats_reset()" >/dev/null
before=$("${PSQL[@]}" -c "SELECT sorts FROM gpusort_service_fallbacks() WHERE reason = 'too large'")

# digest of the ids in a query's order, with gpusort on and off
digest() {
	"${PSQL[@]}" -c "$SETTINGS SET gpusort.enabled = $2;" \
		-c "SELECT md5(string_agg(id::text, ',')) FROM ($1 OFFSET 0) s"
}
# EXPLAIN ANALYZE of a query; what it says under a name
explain() {
	"${PSQL[@]}" -c "$SETTINGS" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $1 OFFSET 0"
}
said() { sed -n "s/^ *$2: //p" <<<"$1" | head -1; }
# what the expected notes are matched against: "engine: service note reason"
engine_says() { echo "$(said "$1" "Sort Engine"): $(said "$1" "GPU Service") $(said "$1" "Fallback Reason")"; }

bad=0
# the largest bucket within the bound, where the plan has buckets
within_bound() {
	local largest bound
	read -r largest bound < <(sed -n 's/.*largest bucket: \([0-9]*\) rows, bound \([0-9]*\).*/\1 \2/p' <<<"$1")
	[ -z "$largest" ] || [ "$largest" -le "$bound" ]
}
check() {
	local name=$1 query=$2 want_note=$3 got want plan note engine reason
	got=$(digest "$query" on)
	want=$(digest "$query" off)
	plan=$(explain "$query")
	note=$(said "$plan" "GPU Service")
	engine=$(said "$plan" "Sort Engine")
	reason=$(said "$plan" "Fallback Reason")
	echo "== $name: $query"
	echo "   rows: $([ "$got" = "$want" ] && echo "PostgreSQL's order" || echo "DIFFERENT ($got vs $want)")"
	echo "   engine: $engine; GPU Service: ${note:-none}${reason:+; Fallback Reason: $reason}"
	if [ "$got" != "$want" ] || [ -z "$got" ] || ! grep -Eq "$want_note" <<<"$(engine_says "$plan")" ||
		! within_bound "${note:-}"; then
		echo "   ^ FAILED (expected: $want_note)"
		bad=$((bad + 1))
	fi
}

spread='^gpu: [0-9]+ buckets on GPUs [0-9]+(, [0-9]+)+, queued .*; GPU [0-9]+: [0-9]+ buckets, [0-9]+ rows, [0-9.]+ ms'
check "one key, rows back sorted" "SELECT id FROM bk_t ORDER BY k" "$spread"
check "two keys, rows back sorted" "SELECT id FROM bk_t ORDER BY d, id" "$spread"
check "a key and a prefix key, the permutation back" \
	"SELECT id FROM bk_t ORDER BY d DESC, t COLLATE \"C\"" "$spread"
check "a prefix key, its keys back sorted" "SELECT id FROM bk_t ORDER BY t COLLATE \"C\"" "$spread"
check "a leading key of two values" "SELECT id FROM bk_t ORDER BY h, id" "$spread"
check "90% of the rows one value, then the id" "SELECT id FROM bk_t ORDER BY s, id" "$spread"
# (the rows in the table's order: the scan starts at its first page)
SETTINGS="$SETTINGS SET synchronize_seqscans = off;" \
	check "a key that defeats the sample (8192 places)" "SELECT id FROM bk_t ORDER BY a, id" \
	"$spread.*key ranges of the sample cut at their rows: [0-9]+"
check "90% of the rows one value, DESC, then a prefix key" \
	"SELECT id FROM bk_t ORDER BY s DESC, t COLLATE \"C\"" "$spread"
check "all keys equal, then the id" "SELECT id FROM bk_t ORDER BY c, id" "$spread"
check "a Zipf-like key (half the rows under 2), then the id" "SELECT id FROM bk_t ORDER BY z, id" "$spread"
SETTINGS="$SETTINGS SET synchronize_seqscans = off;" \
	check "presorted (the rows in the table's order)" "SELECT id, d FROM bk_t ORDER BY id" "$spread"
SETTINGS="$SETTINGS SET synchronize_seqscans = off;" \
	check "reversed" "SELECT id, d FROM bk_t ORDER BY id DESC" "$spread"
check "half NULL, NULLS FIRST, then the id" "SELECT id FROM bk_t ORDER BY n NULLS FIRST, id" "$spread"
check "half NULL, DESC NULLS LAST, then the id" "SELECT id FROM bk_t ORDER BY n DESC NULLS LAST, id" "$spread"

# inputs over a 4 MB budget held in parts, one on each GPU process, sorted
# at once and merged as they are returned; then on one process alone
HELD="SET work_mem = '4MB'; SET gpusort.work_mem = -1; SET max_parallel_workers_per_gather = 0;
SET gpusort.device = gpu; SET client_min_messages = error;"
PARALLEL="SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;"
SUB="(SELECT * FROM bk_t WHERE id <= $HELD_ROWS) b"
parts='^gpu: rows held on [0-9]+ GPU processes, merged; GPU [0-9]+: [0-9]+ rows, sorted in [0-9.]+ ms; GPU [0-9]+: [0-9]+ rows'
# (gpusort.held_gpus = 0: parts where one GPU process has no room for them,
# that is for twice their bytes, but all the processes together have: over
# half of a GPU process's share and under all of it.  Where the processes
# share one GPU, or each has a GPU of its own, the window lies elsewhere, as
# the bytes of a row held do: the first of the sizes from once to 3.5 times
# HELD_ROWS that EXPLAIN shows held in parts is checked; each size tried is
# printed.)
for eighths in 8 10 12 14 16 18 20 22 24 26 28; do
	parts_rows=$((HELD_ROWS * eighths / 8))
	text=$(SETTINGS=$HELD explain "SELECT id FROM bk_t WHERE id <= $parts_rows ORDER BY k")
	plan=$(engine_says "$text")
	echo "   $parts_rows rows: $(said "$text" "Sort Method"); $plan$(said "$text" "Not Held on GPU" | sed 's/^./; &/')"
	grep -Eq "$parts" <<<"$plan" && break
done
echo "== held in parts on two GPU processes: $parts_rows rows"
SETTINGS=$HELD check "held in parts, too large for one GPU process: one key" \
	"SELECT id FROM bk_t WHERE id <= $parts_rows ORDER BY k" "$parts"
HELD="$HELD SET gpusort.held_gpus = 2;"
SETTINGS=$HELD check "held in parts: two keys, DESC" "SELECT id FROM $SUB ORDER BY d DESC, id" "$parts"
SETTINGS=$HELD check "held in parts: three keys" "SELECT id FROM $SUB ORDER BY h, d DESC, id" "$parts"
SETTINGS=$HELD check "held in parts: one key, NULLs first (a run of their own)" \
	"SELECT coalesce(n, -1) AS id FROM (SELECT nullif(d, 3) AS n FROM $SUB) s ORDER BY n NULLS FIRST" "$parts"
SETTINGS=$HELD check "held in parts: one key DESC, NULLs last" \
	"SELECT coalesce(n, -1) AS id FROM (SELECT nullif(d, 3) AS n FROM $SUB) s ORDER BY n DESC NULLS LAST" "$parts"
SETTINGS="$HELD $PARALLEL" check "held in parts, 2 workers sharing the input: one key" \
	"SELECT id FROM $SUB ORDER BY k" "$parts"
SETTINGS="$HELD $PARALLEL" check "held in parts, 2 workers sharing the input: two keys" \
	"SELECT id FROM $SUB ORDER BY s, id" "$parts"
SETTINGS="$HELD SET gpusort.held_gpus = 1;" check "held on one GPU process (gpusort.held_gpus = 1)" \
	"SELECT id FROM bk_t WHERE id <= $((HELD_ROWS / 8)) ORDER BY k" '^gpu: +$'
SETTINGS="$HELD SET gpusort.held_gpus = 0;" check "held on one GPU process, which has room (gpusort.held_gpus = 0)" \
	"SELECT id FROM bk_t WHERE id <= $((HELD_ROWS / 8)) ORDER BY k" '^gpu: +$'

# sessions at once, then cancels
K_QUERY="SELECT md5(string_agg(id::text, ',')) FROM (SELECT id FROM bk_t ORDER BY k OFFSET 0) s"
want=$(digest "SELECT id FROM bk_t ORDER BY k" off)
TMP=$(mktemp -d /tmp/gpusort-buckets.XXXXXX)
for s in $(seq 1 "$SESSIONS"); do
	"${PSQL[@]}" -c "$SETTINGS" -c "$K_QUERY" >"$TMP/out.$s" 2>&1 &
done
wait
right=$(cat "$TMP"/out.* | grep -c -x "$want")
rm -rf "$TMP"
echo "== $SESSIONS sessions at once, ORDER BY k: $right of $SESSIONS in PostgreSQL's order"
[ "$right" -eq "$SESSIONS" ] || { echo "   ^ FAILED"; bad=$((bad + 1)); }
cancelled=0
for ms in 1000 1300 1600 1900 2200 2500 2800 3100; do
	"${PSQL[@]}" -c "$SETTINGS SET statement_timeout = $ms;" -c "$K_QUERY" >/dev/null 2>&1 || cancelled=$((cancelled + 1))
done
queued=1
for _ in $(seq 1 20); do
	queued=$("${PSQL[@]}" -c "SELECT max(queued_jobs) FROM gpusort_service")
	[ "$queued" = 0 ] && break
	sleep 0.1
done
plan=$(explain "SELECT id FROM bk_t ORDER BY k")
echo "== 8 sorts under statement_timeout 1 to 3.1 s (collection, the buckets or the emit): $cancelled cancelled; jobs queued after: $queued"
echo "   a sort after: $([ "$(digest "SELECT id FROM bk_t ORDER BY k" on)" = "$want" ] && echo "PostgreSQL's order" || echo DIFFERENT); GPU Service: $(said "$plan" "GPU Service")"
if [ "$queued" != 0 ] || [ "$cancelled" -eq 0 ] || [ "$(digest "SELECT id FROM bk_t ORDER BY k" on)" != "$want" ] ||
	! grep -q "buckets on GPUs" <<<"$(said "$plan" "GPU Service")"; then
	echo "   ^ FAILED"
	bad=$((bad + 1))
fi

after=$("${PSQL[@]}" -c "SELECT sorts FROM gpusort_service_fallbacks() WHERE reason = 'too large'")
"${PSQL[@]}" -c "SELECT gpu, device, jobs, rows, round(busy_ms) FROM gpusort_service" | sed 's/^/   service: /'
idle=$("${PSQL[@]}" -c "SELECT count(*) FROM gpusort_service WHERE state = 'ready' AND jobs = 0")

echo "== times of ORDER BY k, $ROWS rows (information):"
for enabled in off on; do
	"${PSQL[@]}" -c "$SETTINGS SET gpusort.enabled = $enabled;" \
		-c "EXPLAIN (ANALYZE, COSTS OFF) SELECT * FROM bk_t ORDER BY k OFFSET $ROWS" |
		grep -E "Execution Time|Sort Time|GPU Service|Sort Method" | sed "s/^ */   gpusort $enabled: /"
done
"${PSQL[@]}" -d postgres -c "DROP DATABASE $DB"

echo "   orders wrong, or not in buckets or parts on every GPU: $bad"
echo "   'too large' fallbacks: $before -> $after"
echo "   GPU processes with no job: $idle"
[ "$bad" -eq 0 ] || fail "$bad orders"
[ "$after" = "$before" ] || fail "sorts sent to the CPU engine as too large"
[ "$idle" -eq 0 ] || fail "$idle GPU processes ran no job"
echo "service buckets test: passed"
