#!/bin/bash
# bench-tpch.sh: the sorts users run, on TPC-H data at PostgreSQL's default
# settings: whole rows of lineitem by one key and by three, CREATE TABLE AS
# ... ORDER BY two keys (and without it, its floor), orders by its comment
# (text under the database's collation, under "C" and under ICU's
# und-x-icu; the scan of its whole rows, their floor), lineitem by its
# comment, alone and after l_shipmode (and the scan of its whole rows),
# orders by its comment after o_orderpriority (text of five values first: a
# sort whose tied groups the statistics expect over the budget), a
# merge join of the two, a rank()
# window, the top 3 lines per supplier and DISTINCT ON (the first line of
# each order, by ship date); then the window work around the sort: rank()
# with every row out, dense_rank(), sum() over the partition, lag(), two
# window clauses over one sort, and the floors those are measured against
# (the scan with the same output: a sum, or the same columns out).  Native
# (gpusort.enabled = off)
# and GpuSort take turns, RUNS times each, in one session per run, each
# after a CHECKPOINT (not timed); the medians and their ratio per query.
# With DuckDB's Python package at hand, the same orders in DuckDB on
# the same CSV files, as a peer (each ORDER BY materialized as a table,
# since DuckDB drops an ORDER BY under a count).  Against a running server
# that preloads gpusort (PGHOST, PGPORT, PGUSER: a superuser).
#
#   test/bench/bench-tpch.sh [RESULTS_DIR]
#
# Environment: SCALE (10), TPCH_DIR (/tmp/tpch) and NOT_NULL (0: tables
# without NOT NULL declarations), as test/bench/tpch-load.sh takes them; RUNS (3); WORK_MEMS (default: "default", nothing SET; e.g.
# "default 1GB" adds runs with work_mem and gpusort.work_mem at 1GB);
# NATIVE_RUNS (RUNS: native's runs, the first of the turns, where it is
# slow); ONLY (a regular expression of the query names to run); DUCKDB (0: no
# peer); TAG (added to the file names); WORKERS (each run SETs
# max_parallel_workers_per_gather to it: 0 for serial plans; default: as
# the server has it, PostgreSQL's 2 unless changed); EXPLAIN_TIMING (ON:
# the plans' EXPLAIN ANALYZE with TIMING, and their phase times: Collect,
# Sort, Emit, Hold and Read Back Time); EXPLAIN_PLANS (0: no EXPLAIN ANALYZE
# run after the timed runs).  Writes RESULTS_DIR/bench-tpch-<scale>[-TAG]-<cores>core-<gpu>.txt
# and, beside it, -explain.txt: what GpuSort's plan said of each query.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RESULTS=${1:-$ROOT/test/results}
RUNS=${RUNS:-3}
WORK_MEMS=${WORK_MEMS:-default}
ONLY=${ONLY:-.}
PSQL=(psql -X -q -At -v ON_ERROR_STOP=1)
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
source "$ROOT/test/bench/tpch-load.sh"
mkdir -p "$RESULTS"

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '_')
source "$ROOT/test/lib/results-name.sh"
OUT=$RESULTS/$(results_name bench-tpch-$SCALE${TAG:+-$TAG}).txt
EXPLAIN=$RESULTS/$(results_name bench-tpch-$SCALE${TAG:+-$TAG}-explain).txt

# name|SQL: each ORDER BY returns whole rows to a Limit whose OFFSET lies past
# the last, which reads every row and sends none, so that the client's
# reading of them is not timed; ctas_ writes a table (ctas_floor: the same
# statement without its ORDER BY, so no sort: the least that ctas_part_supp
# can take, the same plan with gpusort on and off); the windows sum or
# count what they compute (window_sort_only: their sort alone, its rows
# counted, which tells the sort's part of rank_window from the window's).
# (Files of this script before its -whole- ones timed
# SELECT count(*) FROM (SELECT * ... ORDER BY ... OFFSET 0) s, from
# whose rows PostgreSQL drops the columns that the count does not read:
# those sorted the sort keys alone, the other columns NULL.)
QUERIES=$(cat <<'SQL'
lineitem_partkey|SELECT * FROM lineitem ORDER BY l_partkey OFFSET 1000000000000
lineitem_ship3|SELECT * FROM lineitem ORDER BY l_shipdate, l_orderkey, l_linenumber OFFSET 1000000000000
ctas_part_supp|CREATE TABLE bench_tpch_ctas AS SELECT * FROM lineitem ORDER BY l_partkey, l_suppkey
ctas_floor|CREATE TABLE bench_tpch_ctas AS SELECT * FROM lineitem
orders_comment|SELECT * FROM orders ORDER BY o_comment OFFSET 1000000000000
orders_comment_c|SELECT * FROM orders ORDER BY o_comment COLLATE "C" OFFSET 1000000000000
orders_comment_icu|SELECT * FROM orders ORDER BY o_comment COLLATE "und-x-icu" OFFSET 1000000000000
lineitem_comment|SELECT * FROM lineitem ORDER BY l_comment OFFSET 1000000000000
lineitem_mode_comment|SELECT * FROM lineitem ORDER BY l_shipmode, l_comment OFFSET 1000000000000
orders_priority_comment|SELECT * FROM orders ORDER BY o_orderpriority, o_comment OFFSET 1000000000000
floor_lineitem|SELECT * FROM lineitem OFFSET 1000000000000
floor_orders|SELECT * FROM orders OFFSET 1000000000000
merge_join|SET enable_hashjoin = off; SELECT count(*) FROM lineitem JOIN orders ON l_orderkey = o_orderkey
rank_window|SELECT sum(r) FROM (SELECT l_orderkey, l_linenumber, rank() OVER (PARTITION BY l_suppkey ORDER BY l_extendedprice DESC) AS r FROM lineitem) s
top3_supplier|SELECT count(*) FROM (SELECT * FROM (SELECT l_suppkey, l_extendedprice, row_number() OVER (PARTITION BY l_suppkey ORDER BY l_extendedprice DESC) AS rn FROM lineitem) s WHERE rn <= 3) t
window_sort_only|SELECT count(*) FROM (SELECT l_suppkey, l_extendedprice FROM lineitem ORDER BY l_suppkey, l_extendedprice DESC OFFSET 0) s
distinct_on|SELECT DISTINCT ON (l_orderkey) l_orderkey, l_shipdate, l_extendedprice FROM lineitem ORDER BY l_orderkey, l_shipdate DESC OFFSET 1000000000000
rank_rows_out|SELECT l_orderkey, l_linenumber, rank() OVER (PARTITION BY l_suppkey ORDER BY l_extendedprice DESC) FROM lineitem OFFSET 1000000000000
dense_rank_window|SELECT sum(r) FROM (SELECT dense_rank() OVER (PARTITION BY l_suppkey ORDER BY l_extendedprice DESC) AS r FROM lineitem) s
sum_partition|SELECT sum(s) FROM (SELECT sum(l_extendedprice) OVER (PARTITION BY l_suppkey) AS s FROM lineitem) t
lag_window|SELECT sum(d) FROM (SELECT l_extendedprice - lag(l_extendedprice) OVER (PARTITION BY l_suppkey ORDER BY l_extendedprice DESC) AS d FROM lineitem) s
two_windows|SELECT sum(r + c) FROM (SELECT rank() OVER (PARTITION BY l_suppkey ORDER BY l_extendedprice DESC) AS r, count(*) OVER (PARTITION BY l_suppkey) AS c FROM lineitem) s
floor_sum|SELECT sum(l_extendedprice) FROM lineitem
floor_rows_out|SELECT l_orderkey, l_linenumber FROM lineitem OFFSET 1000000000000
SQL
)

# DuckDB's form of each: an ORDER BY materialized, windows as they are.
DUCK_QUERIES=$(cat <<'SQL'
lineitem_partkey|CREATE OR REPLACE TEMP TABLE r AS SELECT * FROM lineitem ORDER BY l_partkey
lineitem_ship3|CREATE OR REPLACE TEMP TABLE r AS SELECT * FROM lineitem ORDER BY l_shipdate, l_orderkey, l_linenumber
ctas_part_supp|CREATE OR REPLACE TEMP TABLE r AS SELECT * FROM lineitem ORDER BY l_partkey, l_suppkey
ctas_floor|CREATE OR REPLACE TEMP TABLE r AS SELECT * FROM lineitem
orders_comment|CREATE OR REPLACE TEMP TABLE r AS SELECT * FROM orders ORDER BY o_comment
orders_comment_c|CREATE OR REPLACE TEMP TABLE r AS SELECT * FROM orders ORDER BY o_comment
lineitem_comment|CREATE OR REPLACE TEMP TABLE r AS SELECT * FROM lineitem ORDER BY l_comment
lineitem_mode_comment|CREATE OR REPLACE TEMP TABLE r AS SELECT * FROM lineitem ORDER BY l_shipmode, l_comment
orders_priority_comment|CREATE OR REPLACE TEMP TABLE r AS SELECT * FROM orders ORDER BY o_orderpriority, o_comment
rank_window|SELECT sum(r) FROM (SELECT l_orderkey, l_linenumber, rank() OVER (PARTITION BY l_suppkey ORDER BY l_extendedprice DESC) AS r FROM lineitem) s
top3_supplier|SELECT count(*) FROM (SELECT * FROM (SELECT l_suppkey, l_extendedprice, row_number() OVER (PARTITION BY l_suppkey ORDER BY l_extendedprice DESC) AS rn FROM lineitem) s WHERE rn <= 3) t
distinct_on|CREATE OR REPLACE TEMP TABLE r AS SELECT DISTINCT ON (l_orderkey) l_orderkey, l_shipdate, l_extendedprice FROM lineitem ORDER BY l_orderkey, l_shipdate DESC
rank_rows_out|CREATE OR REPLACE TEMP TABLE r AS SELECT l_orderkey, l_linenumber, rank() OVER (PARTITION BY l_suppkey ORDER BY l_extendedprice DESC) FROM lineitem
dense_rank_window|SELECT sum(r) FROM (SELECT dense_rank() OVER (PARTITION BY l_suppkey ORDER BY l_extendedprice DESC) AS r FROM lineitem) s
sum_partition|SELECT sum(s) FROM (SELECT sum(l_extendedprice) OVER (PARTITION BY l_suppkey) AS s FROM lineitem) t
lag_window|SELECT sum(d) FROM (SELECT l_extendedprice - lag(l_extendedprice) OVER (PARTITION BY l_suppkey ORDER BY l_extendedprice DESC) AS d FROM lineitem) s
two_windows|SELECT sum(r + c) FROM (SELECT rank() OVER (PARTITION BY l_suppkey ORDER BY l_extendedprice DESC) AS r, count(*) OVER (PARTITION BY l_suppkey) AS c FROM lineitem) s
floor_sum|SELECT sum(l_extendedprice) FROM lineitem
floor_rows_out|CREATE OR REPLACE TEMP TABLE r AS SELECT l_orderkey, l_linenumber FROM lineitem
SQL
)

# settings WORK_MEM: what a run SETs before its query
settings() {
	[ -n "${WORKERS:-}" ] && echo "SET max_parallel_workers_per_gather = $WORKERS;"
	[ "$1" = default ] && return
	echo "SET work_mem = '$1'; SET gpusort.work_mem = '$1';"
}

# run ENABLED WORK_MEM SQL: milliseconds of one run (empty on an error)
run() {
	local out
	out=$("${PSQL[@]}" 2>&1 <<EOF
SET client_min_messages = warning;
$(settings "$2") SET gpusort.enabled = $1;
DROP TABLE IF EXISTS bench_tpch_ctas;
CHECKPOINT;
SELECT clock_timestamp() AS t0 \gset
$3;
SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000);
DROP TABLE IF EXISTS bench_tpch_ctas;
EOF
)
	[ $? = 0 ] && echo "$out" | tail -n 1 || echo "   $1: $(echo "$out" | tail -n 2 | tr '\n' ' ')" >&2
}

source "$ROOT/test/lib/stats.sh"

# duck_times: "name ms" for each DuckDB query, medians of RUNS, loading the
# CSV files into tables first (not timed)
# (the queries come in DUCK_QUERIES: the program itself is standard input)
duck_times() {
	DUCK_QUERIES=$DUCK_QUERIES python3 - "$TPCH_DIR" "$RUNS" "$ONLY" <<'PY'
import glob, os, re, statistics, sys, time
import duckdb
tpch, runs, only = sys.argv[1], int(sys.argv[2]), sys.argv[3]
con = duckdb.connect()
for t in ("lineitem", "orders"):
    if glob.glob(f"{tpch}/{t}/*.csv"):
        con.execute(f"CREATE TABLE {t} AS SELECT * FROM read_csv('{tpch}/{t}/*.csv', header=true)")
for line in os.environ["DUCK_QUERIES"].strip().splitlines():
    name, sql = line.split("|", 1)
    if not re.search(only, name) or not all(
            glob.glob(f"{tpch}/{t}/*.csv") for t in re.findall(r"\b(lineitem|orders)\b", sql)):
        continue
    times = []
    for _ in range(runs):
        start = time.time()
        con.execute(sql).fetchall()
        times.append((time.time() - start) * 1000)
    print(name, round(statistics.median(times)))
PY
}

# the tables that the queries chosen read
tables=$(while IFS='|' read -r name sql; do
	[[ $name =~ $ONLY ]] && grep -o -w -E 'lineitem|orders' <<<"$sql"
done <<<"$QUERIES" | sort -u)
tpch_load $tables || exit 1
duck=""
# (the queries whose tables have CSV files here: those chosen)
if [ "${DUCKDB:-1}" != 0 ] && python3 -c 'import duckdb' 2>/dev/null &&
	ls "$TPCH_DIR"/lineitem/*.csv >/dev/null 2>&1; then
	duck=$(duck_times)
fi

{
	echo "# bench-tpch: TPC-H scale $SCALE, $(nproc) cores, ${gpu:-no GPU}, $(date -u +%Y-%m-%d)"
	echo "# $("${PSQL[@]}" -c 'SELECT version()' | cut -d, -f1); work_mem $("${PSQL[@]}" -c 'SHOW work_mem')," \
		"max_parallel_workers_per_gather ${WORKERS:-$("${PSQL[@]}" -c 'SHOW max_parallel_workers_per_gather')}," \
		"gpusort.device $("${PSQL[@]}" -c 'SHOW gpusort.device'), gpusort.service $("${PSQL[@]}" -c "SELECT current_setting('gpusort.service', true)")"
	echo "# medians of $RUNS runs (native: ${NATIVE_RUNS:-$RUNS}), ms; native and GpuSort taking turns${duck:+; DuckDB $(python3 -c 'import duckdb; print(duckdb.__version__)') on the same CSV files, its ORDER BYs materialized as tables}"
	for t in $tables; do
		echo "# $t: $("${PSQL[@]}" -c "SELECT count(*) FILTER (WHERE attnotnull) || ' of ' || count(*)
			FROM pg_attribute WHERE attrelid = '$t'::regclass AND attnum > 0") columns declared NOT NULL"
	done
	printf '%-18s %-8s %10s %10s %8s %10s\n' query work_mem native gpusort ratio duckdb
} | tee "$OUT"
[ "${EXPLAIN_PLANS:-1}" = 0 ] || : >"$EXPLAIN"
for wm in $WORK_MEMS; do
	while IFS='|' read -r name sql; do
		[[ $name =~ $ONLY ]] || continue
		native=() ours=()
		for r in $(seq "$RUNS"); do
			[ "$r" -le "${NATIVE_RUNS:-$RUNS}" ] && native+=("$(run off "$wm" "$sql")")
			ours+=("$(run on "$wm" "$sql")")
		done
		n=$(echo "${native[*]}" | median)
		g=$(echo "${ours[*]}" | median)
		ratio=$(awk -v n="$n" -v g="$g" 'BEGIN { if (n > 0 && g > 0) printf "%.2fx", n / g }')
		d=$(echo "$duck" | awk -v q="$name" -v wm="$wm" '$1 == q && wm == "default" { print $2 }')
		printf '%-18s %-8s %10s %10s %8s %10s\n' "$name" "$wm" "$n" "$g" "$ratio" "${d:--}" | tee -a "$OUT"
		[ "${EXPLAIN_PLANS:-1}" = 0 ] && continue
		# the plan of the query's last statement, after those before it
		pre="" last=$sql
		if [[ $sql == *"; "* ]]; then
			pre="${sql%; *};" last=${sql##*; }
		fi
		{
			echo "== $name, work_mem $wm: native ${native[*]}; gpusort ${ours[*]}"
			"${PSQL[@]}" -c "$(settings "$wm") $pre
				EXPLAIN (ANALYZE, COSTS OFF, TIMING ${EXPLAIN_TIMING:-OFF}) $last" 2>&1 |
				grep -E 'GpuSort|Gather|Engine|Method|Held|Runs|Merge Key|Kinds|Comparators|WindowAgg|Sort Key|Worker [0-9]| Time:' | sed 's/^/   /'
			"${PSQL[@]}" -c "DROP TABLE IF EXISTS bench_tpch_ctas"
		} >>"$EXPLAIN"
	done <<<"$QUERIES"
done
echo "== results in $OUT and $EXPLAIN"
