#!/bin/bash
# bench-sql.sh: ORDER BY end to end, PostgreSQL's Sort against GpuSort on the
# CPU engine and on the GPU, side by side in one run, against the server that
# PGHOST/PGPORT/PGUSER name (it must load gpusort).  Needs only psql.
#
#   test/bench/bench-sql.sh [RESULTS_DIR]
#
# For each table size and query it reports the median of RUNS executions
# (psql's \timing of "SELECT ... ORDER BY ... OFFSET <rows>": every row is
# sorted and emitted, none is sent), its ratio to the native Sort, and, from
# one more EXPLAIN ANALYZE run (TIMING ON, so inflated by instrumentation),
# the GpuSort phases: Collect, Sort and Emit Time, and for the GPU the
# upload, sort and download times of the engine (its DEBUG1 report).
# Writes RESULTS_DIR/sql-bench-<host>-<cores>-<date>-<commit>.csv
# (test/lib/results-name.sh) and prints a table; then draws the charts of
# RESULTS_DIR (test/bench/plot-results.sh) where matplotlib is there.
#
# Environment:
#   SIZES       table sizes (default "1000000 10000000 100000000")
#   BIG         sizes from this one up run only the main queries, once
#               (default 50000000)
#   ENGINES     default "native cpu gpu"
#   RUNS        runs per query (default 3; RUNS_SMALL, default 15, after a
#               warm-up run, for the inputs below gpusort.min_rows: half as
#               many rows as gpusort.min_rows, from a table of that size, and
#               filtered at run time from the first size's table, which the
#               planner expects to be larger)
#   WORK_MEM    work_mem and gpusort.work_mem, so that every sort stays in
#               memory (default 32GB)
#   BUDGET      seconds the whole benchmark may take (default 420); what
#               would not fit is skipped and marked so
#   SKIP_100M   1: leave out sizes of 100M rows and more
#   CASES_MATCHING  a bash regular expression: only the cases whose names
#               match it run (default: all)
#   QUERY_TIMEOUT  seconds one psql session may take (default 240)
set -uo pipefail
RESULTS=${1:-test/results}
SIZES=${SIZES:-1000000 10000000 100000000}
BIG=${BIG:-50000000}
ENGINES=${ENGINES:-native cpu gpu}
RUNS=${RUNS:-3}
RUNS_SMALL=${RUNS_SMALL:-15}
WORK_MEM=${WORK_MEM:-32GB}
BUDGET=${BUDGET:-420}
QUERY_TIMEOUT=${QUERY_TIMEOUT:-240}
START=$(date +%s)
DB=${BENCH_DB:-gpusort_bench}
export PGDATABASE=$DB
PSQL=(timeout "$QUERY_TIMEOUT" psql -X -q -v ON_ERROR_STOP=1)
mkdir -p "$RESULTS"

elapsed() { echo $(($(date +%s) - START)); }
left() { echo $((BUDGET - $(elapsed))); }
log() { echo "[$(elapsed)s] $*" >&2; }

psql -X -q -d postgres -c "CREATE DATABASE $DB" 2>/dev/null
psql -X -q -c "CREATE EXTENSION IF NOT EXISTS gpusort" >/dev/null || exit 1

DEVICE=$(psql -X -At -c "SELECT name FROM gpusort_devices() ORDER BY id LIMIT 1" 2>/dev/null)
DEVICE=${DEVICE:-$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)}
DEVICE=${DEVICE:-no GPU}
source "$(dirname "${BASH_SOURCE[0]}")/../lib/results-name.sh"
CSV=$RESULTS/$(results_name sql-bench).csv
TABLE=${CSV%.csv}.txt
SERVER=$(psql -X -At -c "SHOW server_version")
CORES=$(nproc)

# The tables: t_<n> with a presorted id, random int8 and int4 keys, a key of
# 1000 values (the first of two keys), an int8 key with 10% NULLs and a text.
# Values are hashes of the row number, so every load gives the same table;
# large tables are loaded by several sessions at once.
make_table() {
	local n=$1 t=t_$1 parts=1
	if [ "$(psql -X -At -c "SELECT count(*) FROM pg_class WHERE relname = '$t'")" = 1 ]; then
		return 0
	fi
	[ "$n" -ge 20000000 ] && parts=$CORES
	[ "$parts" -gt 8 ] && parts=8
	log "loading $t ($n rows, $parts sessions)"
	psql -X -q -c "CREATE UNLOGGED TABLE $t (id int8, k8 int8, k4 int4, a int4, kn int8, txt text)" || return 1
	for p in $(seq 0 $((parts - 1))); do
		local lo=$((n / parts * p + 1)) hi=$((n / parts * (p + 1)))
		[ "$p" -eq $((parts - 1)) ] && hi=$n
		psql -X -q -c "INSERT INTO $t
			SELECT g, hashint8extended(g, 1), hashint8(g), ((hashint8extended(g, 2) & 1023) % 1000)::int4,
			       CASE WHEN (hashint8extended(g, 3) & 1023) < 102 THEN NULL ELSE hashint8extended(g, 4) END,
			       'row ' || g
			FROM generate_series($lo::int8, $hi::int8) g" &
	done
	wait
	psql -X -q -c "VACUUM ANALYZE $t" || return 1
	log "loaded $t: $(psql -X -At -c "SELECT pg_size_pretty(pg_table_size('$t'))")"
}

settings() {
	local engine=$1 wm=$2
	case $engine in
	native) echo "SET gpusort.enabled = off;" ;;
	*) echo "SET gpusort.enabled = on; SET gpusort.device = $engine;" ;;
	esac
	if [ "$wm" = default ]; then
		echo "RESET work_mem; RESET gpusort.work_mem;"
	else
		echo "SET work_mem = '$WORK_MEM'; SET gpusort.work_mem = '$WORK_MEM';"
	fi
	echo "SET max_parallel_workers_per_gather = 0; SET jit = off;"
	# the GPU's start-up is not part of a query's time
	[ "$engine" = gpu ] && echo "SELECT gpusort_gpu_start();"
}

# Prints the sorted times in ms of runs executions in one session, after
# warm-up executions that are not counted.  With a batch above 1, each run
# executes the query batch times inside the server (planned each time, as a
# client's query is) and counts the mean: client round trips would drown the
# time of small queries.
time_runs() {
	local engine=$1 wm=$2 runs=$3 warm=$4 query=$5 batch=${6:-1}
	if [ "$batch" -gt 1 ]; then
		{
			settings "$engine" "$wm"
			for _ in $(seq $((runs + warm))); do
				cat <<SQL
DO \$\$DECLARE t0 timestamptz := clock_timestamp();
BEGIN
  FOR i IN 1..$batch LOOP EXECUTE \$q\$$query\$q\$; END LOOP;
  RAISE NOTICE 'Time: % ms', extract(epoch FROM clock_timestamp() - t0) * 1000 / $batch;
END\$\$;
SQL
			done
		} | "${PSQL[@]}" -o /dev/null 2>&1 | sed -n 's/^NOTICE:  Time: \([0-9.]*\) ms.*/\1/p' |
			tail -n "$runs" | sort -n
		return
	fi
	{
		settings "$engine" "$wm"
		echo '\timing on'
		for _ in $(seq $((runs + warm))); do echo "$query;"; done
	} | "${PSQL[@]}" -o /dev/null 2>/dev/null | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' |
		tail -n "$runs" | sort -n
}

# One EXPLAIN ANALYZE run: prints engine|fallback|collect|sort|emit|upload|gpusort|download|method.
explain_run() {
	local engine=$1 wm=$2 query=$3 out
	out=$({
		settings "$engine" "$wm"
		[ "$engine" = gpu ] && echo "SET client_min_messages = debug1;"
		echo "EXPLAIN (ANALYZE, COSTS OFF) $query;"
	} | "${PSQL[@]}" -A -t 2>&1)
	field() { echo "$out" | sed -n "s/.*$1: \([^ ]*\).*/\1/p" | head -1; }
	printf '%s|%s|%s|%s|%s|%s|%s|%s|%s\n' \
		"$(field 'Sort Engine')" \
		"$(echo "$out" | sed -n 's/.*Fallback Reason: //p' | head -1 | tr -d '|,')" \
		"$(field 'Collect Time')" "$(field 'Sort Time')" "$(field 'Emit Time')" \
		"$(echo "$out" | sed -n 's/.*GPU sort of.* upload \([0-9.]*\) ms.*/\1/p' | tail -1)" \
		"$(echo "$out" | sed -n 's/.*GPU sort of.*, sort \([0-9.]*\) ms.*/\1/p' | tail -1)" \
		"$(echo "$out" | sed -n 's/.*GPU sort of.* download \([0-9.]*\) ms.*/\1/p' | tail -1)" \
		"$(echo "$out" | sed -n 's/.*Sort Method: \([a-z ]*\).*/\1/p' | head -1 | sed 's/ *$//')"
}

echo "device,server,size,case,engine,work_mem,runs,median_ms,min_ms,max_ms,vs_native,sort_engine,fallback_reason,collect_ms,sort_ms,emit_ms,gpu_upload_ms,gpu_sort_ms,gpu_download_ms,native_sort_method" >"$CSV"

declare -A NATIVE
# name | query (:n = size) | flags: main (also at BIG sizes, once), small
# (RUNS_SMALL runs), batch (each run SMALL_BATCH executions, default 100,
# timed in the server), once / first (at the first size only), default_wm
CASES=(
	"int8 random (full row)|SELECT * FROM t_:n ORDER BY k8 OFFSET :n|main"
	"int4 random (full row)|SELECT * FROM t_:n ORDER BY k4 OFFSET :n|"
	"int8 random (key only)|SELECT k8 FROM t_:n ORDER BY k8 OFFSET :n|"
	"int8 presorted (full row)|SELECT * FROM t_:n ORDER BY id OFFSET :n|"
	"two int keys (full row)|SELECT * FROM t_:n ORDER BY a, k4 OFFSET :n|main"
	"int8 DESC NULLS FIRST 10% NULL|SELECT * FROM t_:n ORDER BY kn DESC NULLS FIRST OFFSET :n|"
	"below min_rows (planned Sort)|SELECT * FROM t_:s ORDER BY k8 OFFSET :s|small batch once"
	"below min_rows (at run time)|SELECT * FROM t_:n WHERE id + 0 <= :s ORDER BY k8 OFFSET :s|small first"
	"int8 random (default work_mem)|SELECT * FROM t_:n ORDER BY k8 OFFSET :n|default_wm first"
)

GPU_START=$(psql -X -At -c "SELECT round(gpusort_gpu_start()::numeric, 1)" 2>/dev/null)
log "device: $DEVICE; CUDA start-up in a new backend: ${GPU_START:-n/a} ms"
# inputs below gpusort.min_rows: half as many rows
MIN_ROWS=$(psql -X -At -c "SHOW gpusort.min_rows")
SMALL=$((MIN_ROWS / 2))
[ "$SMALL" -ge 100 ] || SMALL=100
make_table "$SMALL" || exit 1

first_size=
for n in $SIZES; do
	[ -n "${SKIP_100M:-}" ] && [ "$n" -ge 100000000 ] && { log "size $n skipped (SKIP_100M)"; continue; }
	[ -z "$first_size" ] && first_size=$n
	if [ "$n" -ge "$BIG" ]; then
		# load (~1.5 s per 10M rows per session) plus one native run (~6 s per 10M)
		need=$((n / 10000000 * 9))
		if [ "$(left)" -lt "$need" ]; then
			log "size $n skipped: about ${need}s needed, $(left)s left"
			echo "$DEVICE,$SERVER,$n,all,all,,0,,,,,,skipped (time),,,,,,," >>"$CSV"
			continue
		fi
	fi
	make_table "$n" || { log "loading t_$n failed"; continue; }
	for c in "${CASES[@]}"; do
		IFS='|' read -r name query flags <<<"$c"
		query=${query//:n/$n}
		query=${query//:s/$SMALL}
		[[ -z ${CASES_MATCHING:-} || $name =~ $CASES_MATCHING ]] || continue
		runs=$RUNS
		warm=0
		batch=1
		wm=big
		case " $flags " in *" small "*) runs=$RUNS_SMALL warm=1 ;; esac
		case " $flags " in *" batch "*) batch=${SMALL_BATCH:-100} ;; esac
		case " $flags " in *" default_wm "*) wm=default ;; esac
		case " $flags " in *" once "*) [ "$n" = "$first_size" ] || continue ;; esac
		case " $flags " in *" first "*) [ "$n" = "$first_size" ] || continue ;; esac
		if [ "$n" -ge "$BIG" ]; then
			case " $flags " in *" main "*) runs=1 ;; *) continue ;; esac
		fi
		for engine in $ENGINES; do
			key="$n|$name"
			if [ "$(left)" -le 0 ]; then
				echo "$DEVICE,$SERVER,$n,$name,$engine,$wm,0,,,,,,skipped (time),,,,,,," >>"$CSV"
				continue
			fi
			log "$n rows, $name, $engine"
			mapfile -t times < <(time_runs "$engine" "$wm" "$runs" "$warm" "$query" "$batch")
			if [ ${#times[@]} -eq 0 ]; then
				echo "$DEVICE,$SERVER,$n,$name,$engine,$wm,0,,,,,,failed or timed out,,,,,,," >>"$CSV"
				continue
			fi
			med=${times[$(((${#times[@]} - 1) / 2))]}
			ratio=
			if [ "$engine" = native ]; then
				NATIVE[$key]=$med
			elif [ -n "${NATIVE[$key]:-}" ]; then
				ratio=$(awk -v a="${NATIVE[$key]}" -v b="$med" 'BEGIN { printf "%.2f", a / b }')
			fi
			ex="||||||||"
			# phases: one more run (native: only to show the sort method of
			# the main queries, below the large sizes)
			case "$engine|$flags" in
			native*main*) [ "$n" -lt "$BIG" ] && ex=$(explain_run "$engine" "$wm" "$query") ;;
			native*) ;;
			*) ex=$(explain_run "$engine" "$wm" "$query") ;;
			esac
			IFS='|' read -r eng reason col srt emi up gs down method <<<"$ex"
			echo "$DEVICE,$SERVER,$n,$name,$engine,$wm,${#times[@]},$med,${times[0]},${times[-1]},$ratio,$eng,$reason,$col,$srt,$emi,$up,$gs,$down,$method" >>"$CSV"
		done
	done
done

# The table: one line per size and query, the engines side by side.
{
	echo "SQL benchmark on $DEVICE ($CORES CPU cores), PostgreSQL $SERVER, work_mem $WORK_MEM unless noted;"
	echo "median of $RUNS runs ($RUNS_SMALL below min_rows, 1 at $BIG rows and more), ms; (x) = native / engine;"
	echo "phases from one EXPLAIN ANALYZE run of the GPU engine (collect / sort [upload+sort+download] / emit, ms)."
	echo "CUDA start-up in a new backend: ${GPU_START:-n/a} ms"
	awk -F, 'NR > 1 {
		k = $3 SUBSEP $4
		if (!(k in seen)) { seen[k] = 1; order[++n] = k; size[k] = $3; name[k] = $4 }
		t = ($8 == "") ? $13 : $8
		if ($11 != "") t = t " (" $11 "x)"
		cell[k, $5] = t
		if ($5 == "gpu") ph[k] = sprintf("%s / %s [%s+%s+%s] / %s %s", $14, $15, $17, $18, $19, $16, ($12 == "gpu" ? "" : "ran: " $12))
		if ($5 == "native" && $20 != "") meth[k] = $20
	} END {
		printf "%-10s %-32s %12s %18s %18s  %s\n", "rows", "query", "native", "gpusort cpu", "gpusort gpu", "gpu phases"
		for (i = 1; i <= n; i++) {
			k = order[i]
			printf "%-10s %-32s %12s %18s %18s  %s\n", size[k], name[k], cell[k, "native"], cell[k, "cpu"], cell[k, "gpu"], ph[k]
		}
	}' "$CSV"
} | tee "$TABLE"
log "CSV: $CSV"
PLOT_INSTALL=no "$(dirname "$0")/plot-results.sh" "$RESULTS"
