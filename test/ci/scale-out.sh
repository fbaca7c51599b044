#!/bin/bash
# Scale-out test and benchmark: a table sharded over several PostgreSQL
# servers through postgres_fdw, every shard sorting with GpuSort.
#
#   test/ci/scale-out.sh [RESULTS_DIR]
#
# Starts, on this machine, a coordinator and SHARDS shard clusters in
# temporary directories (Unix sockets only, ports BASE_PORT, BASE_PORT+1,
# ...), each with shared_preload_libraries = gpusort.  On the coordinator, a
# table t range-partitioned by id whose partitions are postgres_fdw foreign
# tables, one per shard, and a local table ref holding the same rows.  The
# data is loaded through the coordinator (INSERT INTO t SELECT * FROM ref,
# routed to the shards).
#
# Checks, for ORDER BY on int8, timestamp, text under "C", two keys,
# DESC NULLS FIRST, with OFFSET and with LIMIT, run through the coordinator:
#   - the rows are those of the same query on ref (with gpusort off);
#   - EXPLAIN VERBOSE shows a Merge Append on the coordinator, no Sort, and
#     the ORDER BY in every shard's Remote SQL;
#   - every shard's GpuSort sorted all of that shard's rows, for that query:
#     gpusort_stats() of the very backend that ran it, read through the same
#     postgres_fdw connection, before and after;
#   - EXPLAIN ANALYZE of the Remote SQL on each shard shows GpuSort.
# Exits non-zero when a check fails.  With BENCH=1 it times ORDER BY int8,
# full result and LIMIT 1000, over the shards with gpusort on and off on
# every shard, and on one server holding all rows (the coordinator's ref)
# with gpusort off and on, and reports where the time goes; the results go
# to RESULTS_DIR (scale-out-<rows>-<host>-<cores>-<date>-<commit>.csv and .txt,
# test/lib/results-name.sh).
#
# Environment:
#   SHARDS       number of shards (default 2)
#   ROWS         rows in the table (default 200000)
#   BENCH        1: the benchmark instead of the checks (CHECKS=1 runs both)
#   RUNS         timed runs per benchmark query (default 3)
#   WARMUP       untimed runs before them, in the same session (default 1)
#   EXTRAS       0: leave out the cases that only explain the others (LIMIT
#                with postgres_fdw's default costs, all rows without ORDER BY,
#                the EXPLAIN ANALYZE through the coordinator), which each
#                move every row to the coordinator (default 1)
#   LOAD         coordinator (default without BENCH): INSERT through the
#                coordinator; shards (default with BENCH): each shard makes
#                its own rows, all at once, from the same generator
#   BASE_PORT    coordinator's port; shards take the next ones (default 56000)
#   WORK_MEM     work_mem of every server (default 8GB: sorts stay in memory)
#   SHARED_BUFFERS  (default 256MB)
#   FETCH_SIZE   postgres_fdw fetch_size (default 10000)
#   FDW_TUPLE_COST  postgres_fdw fdw_tuple_cost (default 0.2, see README)
#   REMOTE_ESTIMATE postgres_fdw use_remote_estimate (default true)
#   DEVICE       gpusort.device on every server (default auto)
#   SHARD_GPUS   GPU ids given to the shards in turn (gpusort.gpu_id), e.g.
#                "0 1" for one GPU per shard on a host with two
#   BUILD        auto (default): build and install gpusort when PostgreSQL's
#                headers are there; 1: always; 0: never (use what is installed)
#   PG_CONFIG    the PostgreSQL to use (default: pg_config on PATH, else the
#                directory of postgres on PATH)
# Run as root, the servers run as the user "gpusort" (created if missing).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

SHARDS=${SHARDS:-2}
ROWS=${ROWS:-200000}
BENCH=${BENCH:-0}
CHECKS=${CHECKS:-$([ "$BENCH" = 1 ] && echo 0 || echo 1)}
RUNS=${RUNS:-3}
WARMUP=${WARMUP:-1}
EXTRAS=${EXTRAS:-1}
LOAD=${LOAD:-$([ "$BENCH" = 1 ] && echo shards || echo coordinator)}
BASE_PORT=${BASE_PORT:-56000}
WORK_MEM=${WORK_MEM:-8GB}
SHARED_BUFFERS=${SHARED_BUFFERS:-256MB}
FETCH_SIZE=${FETCH_SIZE:-10000}
FDW_TUPLE_COST=${FDW_TUPLE_COST:-0.2}
REMOTE_ESTIMATE=${REMOTE_ESTIMATE:-true}
DEVICE=${DEVICE:-auto}
SHARD_GPUS=${SHARD_GPUS:-}
BUILD=${BUILD:-auto}
RESULTS=${1:-}
if [ "$BENCH" = 1 ] && [ -z "$RESULTS" ]; then
	RESULTS=${TMPDIR:-/tmp}/gpusort-scale-out
fi

die() { echo "scale-out: $*" >&2; exit 1; }
[[ $SHARDS =~ ^[0-9]+$ && $SHARDS -ge 1 ]] || die "SHARDS must be a positive number"
[[ $ROWS =~ ^[0-9]+$ ]] || die "ROWS must be a number"
# Each shard's sort must be planned as one for GpuSort (gpusort.min_rows).
[ "$ROWS" -ge $((SHARDS * 2000)) ] || die "ROWS must be at least 2000 per shard"
case $LOAD in coordinator | shards) ;; *) die "LOAD must be coordinator or shards" ;; esac

if [ -n "$RESULTS" ]; then
	mkdir -p "$RESULTS"
	RESULTS=$(cd "$RESULTS" && pwd)
	exec > >(tee "$RESULTS/scale-out.log") 2>&1
fi

# --- PostgreSQL ----------------------------------------------------------------
if [ -n "${PG_CONFIG:-}" ]; then
	BINDIR=$("$PG_CONFIG" --bindir)
elif command -v pg_config >/dev/null 2>&1; then
	PG_CONFIG=pg_config
	BINDIR=$(pg_config --bindir)
elif command -v postgres >/dev/null 2>&1; then
	BINDIR=$(dirname "$(command -v postgres)")
else
	die "no PostgreSQL: set PG_CONFIG, or put pg_config or postgres on PATH"
fi
for b in initdb pg_ctl postgres psql; do
	[ -x "$BINDIR/$b" ] || die "$BINDIR/$b is missing"
done
echo "== PostgreSQL: $("$BINDIR/postgres" --version) in $BINDIR"

if [ "$BUILD" = auto ]; then
	BUILD=0
	if [ -n "${PG_CONFIG:-}" ] && command -v make >/dev/null 2>&1 &&
		[ -e "$("$PG_CONFIG" --includedir-server 2>/dev/null)/postgres.h" ]; then
		BUILD=1
	fi
fi
if [ "$BUILD" = 1 ]; then
	[ -n "${PG_CONFIG:-}" ] || die "BUILD=1 needs pg_config"
	source test/lib/deps.sh
	echo "== building gpusort and installing it into $("$PG_CONFIG" --pkglibdir)"
	stamp=.build-pg_config
	if [ "$(cat "$stamp" 2>/dev/null)" != "$(command -v "$PG_CONFIG")" ]; then
		make -s clean PG_CONFIG="$PG_CONFIG" >/dev/null
		command -v "$PG_CONFIG" >"$stamp"
	fi
	make -s PG_CONFIG="$PG_CONFIG"
	gpusort_make_install PG_CONFIG="$PG_CONFIG"
else
	echo "== using the gpusort installed in that PostgreSQL (BUILD=0)"
fi

# --- clusters --------------------------------------------------------------------
# Node 0 is the coordinator, nodes 1..SHARDS the shards.
RUNAS=()
if [ "$(id -u)" = 0 ]; then
	id gpusort >/dev/null 2>&1 || useradd --system --no-create-home gpusort
	RUNAS=(runuser -u gpusort -- env "PATH=$PATH" "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}")
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpusort-scale-out.XXXXXX")
chmod 755 "$WORK"
NODE_DIR=()
NODE_PORT=()
STARTED=()

cleanup() {
	local rc=$?
	for n in "${STARTED[@]}"; do
		"${RUNAS[@]}" "$BINDIR/pg_ctl" -D "${NODE_DIR[$n]}/data" -m immediate stop >/dev/null 2>&1 || true
	done
	rm -rf "$WORK"
	echo "== clusters stopped, $WORK removed"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

node_name() { if [ "$1" = 0 ]; then echo coordinator; else echo "shard $1"; fi; }

start_node() {
	local n=$1 dir=$WORK/node$1 port=$((BASE_PORT + $1)) gpu=""
	while [ -e "/tmp/.s.PGSQL.$port" ]; do port=$((port + SHARDS + 1)); done
	mkdir -p "$dir"
	[ ${#RUNAS[@]} -eq 0 ] || chown gpusort "$dir"
	"${RUNAS[@]}" "$BINDIR/initdb" -D "$dir/data" -A trust -U postgres --no-sync \
		>"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log"; exit 1; }
	if [ "$n" -gt 0 ] && [ -n "$SHARD_GPUS" ]; then
		local gpus
		read -r -a gpus <<<"$SHARD_GPUS"
		gpu=${gpus[$(((n - 1) % ${#gpus[@]}))]}
	fi
	local opts="-p $port -k $dir -c listen_addresses= -c fsync=off -c jit=off"
	opts="$opts -c shared_preload_libraries=gpusort -c work_mem=$WORK_MEM"
	opts="$opts -c shared_buffers=$SHARED_BUFFERS -c max_parallel_workers_per_gather=0"
	opts="$opts -c gpusort.device=$DEVICE${gpu:+ -c gpusort.gpu_id=$gpu}"
	"${RUNAS[@]}" "$BINDIR/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -o "$opts" start \
		>/dev/null || { tail -20 "$dir/server.log"; exit 1; }
	NODE_DIR[$n]=$dir
	NODE_PORT[$n]=$port
	STARTED+=("$n")
	echo "   $(node_name "$n"): port $port, socket and data in $dir${gpu:+, gpusort.gpu_id=$gpu}"
}

# psql on node N: q N [psql arguments...]
q() {
	local n=$1
	shift
	"$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "${NODE_DIR[$n]}" -p "${NODE_PORT[$n]}" \
		-U postgres -d postgres "$@"
}

echo "== starting a coordinator and $SHARDS shards (gpusort preloaded, work_mem $WORK_MEM, gpusort.device $DEVICE)"
for n in $(seq 0 "$SHARDS"); do start_node "$n"; done
q 0 -c "CREATE EXTENSION gpusort" -c "CREATE EXTENSION postgres_fdw" ||
	die "postgres_fdw is not installed with this PostgreSQL (it is part of its contrib modules)"

# --- schema ----------------------------------------------------------------------
# The rows, from id alone: k8 and ts unique and in an order unlike id's, kn
# with NULLs and ties, tx unique under "C", g4 of 100 values.
COLUMNS="id int8 NOT NULL, k8 int8, kn int8, ts timestamp, tx text COLLATE \"C\", g4 int4, pad text"
gen_rows() { # FIRST LAST
	cat <<SQL
SELECT g AS id, (g * 2654435761 % 4294967311) - 2147483648 AS k8,
       CASE WHEN g % 10 = 0 THEN NULL ELSE g * 40503 % 1000003 END AS kn,
       timestamp '2000-01-01' + (g * 40503 % 4294967291) * interval '1 microsecond' AS ts,
       md5(g::text) AS tx, (g % 100)::int4 AS g4, 'row ' || g AS pad
  FROM generate_series($1::int8, $2::int8) g
SQL
}
# Shard i holds ids [lo(i), lo(i+1)).
lo() { echo $((1 + ($1 - 1) * ROWS / SHARDS)); }

echo "== schema: on each shard t_pN ($COLUMNS) and gpusort_stats_v, a view of gpusort_stats()"
for s in $(seq 1 "$SHARDS"); do
	q "$s" <<SQL
CREATE EXTENSION gpusort;
CREATE TABLE t_p$s ($COLUMNS);
CREATE VIEW gpusort_stats_v AS SELECT engine, sorts, rows FROM gpusort_stats();
SQL
done
echo "   on the coordinator: servers shard1..shard$SHARDS (postgres_fdw: use_remote_estimate $REMOTE_ESTIMATE, fetch_size $FETCH_SIZE,"
echo "   fdw_tuple_cost $FDW_TUPLE_COST, batch_size 1000), t PARTITION BY RANGE (id) of foreign tables, local ref"
{
	for s in $(seq 1 "$SHARDS"); do
		to=$([ "$s" = "$SHARDS" ] && echo MAXVALUE || lo $((s + 1)))
		cat <<SQL
CREATE SERVER shard$s FOREIGN DATA WRAPPER postgres_fdw
  OPTIONS (host '${NODE_DIR[$s]}', port '${NODE_PORT[$s]}', dbname 'postgres',
           use_remote_estimate '$REMOTE_ESTIMATE', fetch_size '$FETCH_SIZE',
           fdw_tuple_cost '$FDW_TUPLE_COST', batch_size '1000');
CREATE USER MAPPING FOR CURRENT_USER SERVER shard$s OPTIONS (user 'postgres');
SQL
		[ "$s" = 1 ] && echo "CREATE TABLE t ($COLUMNS) PARTITION BY RANGE (id);"
		cat <<SQL
CREATE FOREIGN TABLE t_p$s PARTITION OF t FOR VALUES FROM ($(lo "$s")) TO ($to)
  SERVER shard$s OPTIONS (table_name 't_p$s');
CREATE FOREIGN TABLE stats_p$s (engine text, sorts int8, rows int8)
  SERVER shard$s OPTIONS (table_name 'gpusort_stats_v');
SQL
	done
	echo "CREATE VIEW shard_stats AS"
	for s in $(seq 1 "$SHARDS"); do
		[ "$s" = 1 ] || echo "UNION ALL"
		echo "SELECT $s AS shard, engine, sorts, rows FROM stats_p$s"
	done
	echo ";"
	echo "CREATE TABLE ref ($COLUMNS);"
} | q 0

now_ms() { date +%s%3N; }
echo "== loading $ROWS rows into ref (coordinator)"
t0=$(now_ms)
gen_rows 1 "$ROWS" | { echo "INSERT INTO ref"; cat; } | q 0
echo "   $(($(now_ms) - t0)) ms"
t0=$(now_ms)
if [ "$LOAD" = coordinator ]; then
	echo "== loading t through the coordinator: INSERT INTO t SELECT * FROM ref (routed to the shards)"
	q 0 -c "INSERT INTO t SELECT * FROM ref"
else
	echo "== loading t: each shard inserts its own ids, all shards at once (LOAD=shards)"
	pids=()
	for s in $(seq 1 "$SHARDS"); do
		last=$(($(lo $((s + 1))) - 1))
		gen_rows "$(lo "$s")" "$last" | { echo "INSERT INTO t_p$s"; cat; } | q "$s" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
fi
echo "   $(($(now_ms) - t0)) ms"
SHARD_ROWS=()
for s in $(seq 1 "$SHARDS"); do
	q "$s" -c "VACUUM ANALYZE t_p$s"
	SHARD_ROWS[$s]=$(q "$s" -At -c "SELECT count(*) FROM t_p$s")
done
q 0 -c "VACUUM ANALYZE ref" -c "ANALYZE t"
echo "   rows per shard: ${SHARD_ROWS[*]:1}"
total=$(q 0 -At -c "SELECT count(*) FROM t")
[ "$total" = "$ROWS" ] || die "t has $total rows through the coordinator, expected $ROWS"

# --- checks ----------------------------------------------------------------------
PASSED=0
FAILED=0
ok() { PASSED=$((PASSED + 1)); echo "   ok: $*"; }
bad() { FAILED=$((FAILED + 1)); echo "   FAILED: $*"; }

# The coordinator's plan: Merge Append, no sort of its own, every shard's
# Remote SQL with an ORDER BY.  Prints the plan.
# (grep -q reads a here-string, not a pipe: under pipefail, a grep -q that
# exits at its first match can break the pipe of a writer still writing,
# and the pipeline then fails though the line was there.)
check_plan() { # SQL
	local plan
	plan=$(q 0 -At -c "EXPLAIN (VERBOSE, COSTS OFF) $1")
	echo "$plan" | sed 's/^/      /'
	local pushed
	pushed=$(echo "$plan" | grep -c -E 'Remote SQL: .* ORDER BY ' || true)
	if ! grep -q -E '^ *(-> +)?Merge Append$' <<<"$plan"; then
		bad "no Merge Append on the coordinator"
	elif grep -q -E '^ *(-> +)?(Sort|Incremental Sort|Custom Scan \(GpuSort\))$' <<<"$plan"; then
		bad "the coordinator sorts"
	elif [ "$pushed" != "$SHARDS" ]; then
		bad "ORDER BY pushed to $pushed of $SHARDS shards"
	else
		ok "Merge Append on the coordinator, ORDER BY pushed to all $SHARDS shards"
	fi
}

# (no ORDER BY: it would be pushed to the shards and be a sort of its own)
stats_sql="SELECT shard, engine, sorts, rows FROM shard_stats"

# Runs SQL through the coordinator into OUT, between two reads of the
# shards' gpusort_stats() on the same postgres_fdw connections (so in the
# backends that ran the shards' queries), and checks that each shard's
# GpuSort sorted all its rows once on an engine (all but those whose leading
# key is NULL: GpuSort keeps those apart).
check_sharded_run() { # SQL OUT
	local lead
	lead=$(echo "$1" | sed -n 's/.* ORDER BY \([a-z0-9_]*\).*/\1/p')
	q 0 -At -F '|' <<SQL
\o $WORK/stats.before
$stats_sql;
\o $2
$1;
\o $WORK/stats.after
$stats_sql;
SQL
	local s
	for s in $(seq 1 "$SHARDS"); do
		local d
		d=$(join -t '|' <(awk -F'|' -v s="$s" '$1 == s {print $2 "|" $3 "|" $4}' "$WORK/stats.before" | sort) \
			<(awk -F'|' -v s="$s" '$1 == s {print $2 "|" $3 "|" $4}' "$WORK/stats.after" | sort) |
			awk -F'|' '$4 > $2 {printf "%s%s: %d sort(s), %d rows", (n++ ? ", " : ""), $1, $4 - $2, $5 - $3; sorts += $4 - $2; rows += $5 - $3}
				END {printf "|%d|%d", sorts, rows}')
		local what=${d%%|*} rest=${d#*|}
		local sorts=${rest%%|*} rows=${rest#*|} want
		want=$(q "$s" -At -c "SELECT count($lead) FROM t_p$s")
		if [ "$sorts" = 1 ] && [ "$rows" = "$want" ]; then
			ok "shard $s: GpuSort sorted its $want rows with a non-NULL $lead ($what)"
		else
			bad "shard $s: gpusort_stats() shows ${what:-no sort} for this query, expected one sort of $want rows"
		fi
	done
}

# Rows through the coordinator against the same query on ref, sorted by
# PostgreSQL.  KEYS (fields, 1-based) is empty when the order is unique:
# then the rows must be identical; else the key fields must come in the same
# sequence and the rows be the same multiset.
check_rows() { # NAME SQL KEYS
	local name=$1 sql=$2 keys=$3 a=$WORK/$1.sharded b=$WORK/$1.ref
	q 0 -At -F '|' -c "SET gpusort.enabled = off" -c "${sql//FROM t /FROM ref }" >"$b"
	local n
	n=$(wc -l <"$b")
	if [ -z "$keys" ]; then
		if cmp -s "$a" "$b"; then ok "$n rows, identical to ref's"; else bad "rows differ from ref's"; fi
	elif cmp -s <(cut -d '|' -f "$keys" "$a") <(cut -d '|' -f "$keys" "$b") &&
		cmp -s <(sort "$a") <(sort "$b"); then
		ok "$n rows: the same key sequence (fields $keys) and the same rows as ref's"
	else
		bad "rows differ from ref's"
	fi
}

if [ "$CHECKS" = 1 ]; then
	half=$((ROWS / 2))
	QUERIES=(
		"int8||SELECT * FROM t ORDER BY k8"
		"timestamp||SELECT * FROM t ORDER BY ts"
		"text_C||SELECT * FROM t ORDER BY tx"
		"two_keys||SELECT * FROM t ORDER BY g4, ts DESC"
		"desc_nulls_first|3|SELECT * FROM t ORDER BY kn DESC NULLS FIRST"
		"offset||SELECT * FROM t ORDER BY k8 OFFSET $half"
		"limit||SELECT * FROM t ORDER BY k8 LIMIT 1000"
		"offset_limit||SELECT * FROM t ORDER BY ts DESC OFFSET 1000 LIMIT 1000"
	)
	for entry in "${QUERIES[@]}"; do
		name=${entry%%|*}
		rest=${entry#*|}
		keys=${rest%%|*}
		sql=${rest#*|}
		echo "== $name: $sql"
		check_plan "$sql"
		check_sharded_run "$sql" "$WORK/$name.sharded"
		check_rows "$name" "$sql" "$keys"
	done

	sql="SELECT * FROM t ORDER BY k8"
	echo "== EXPLAIN ANALYZE of the Remote SQL of \"$sql\" on each shard"
	for s in $(seq 1 "$SHARDS"); do
		remote=$(q 0 -At -c "EXPLAIN (VERBOSE, COSTS OFF) $sql" |
			sed -n "s/^ *Remote SQL: \(.*FROM public\.t_p$s .*\)$/\1/p")
		echo "   shard $s: $remote"
		plan=$(q "$s" -At -c "EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) $remote")
		echo "$plan" | grep -E 'GpuSort|Sort Engine|Sorted Rows|Sort Key Kinds|Fallback|Execution Time' | sed 's/^/      /'
		if grep -q 'Custom Scan (GpuSort)' <<<"$plan" &&
			grep -q -E "Sort Engine: (cpu|gpu)$" <<<"$plan" &&
			grep -q "Sorted Rows: ${SHARD_ROWS[$s]}$" <<<"$plan"; then
			ok "shard $s sorts its rows with GpuSort"
		else
			bad "shard $s: no GpuSort on an engine in the plan of the Remote SQL"
		fi
	done

	echo "== where postgres_fdw does not push the sort down"
	echo "   LIMIT with postgres_fdw's default fdw_tuple_cost (0.01):"
	q 0 -At <<SQL | sed 's/^/      /'
$(for s in $(seq 1 "$SHARDS"); do echo "ALTER SERVER shard$s OPTIONS (SET fdw_tuple_cost '0.01');"; done)
EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM t ORDER BY k8 LIMIT 1000;
$(for s in $(seq 1 "$SHARDS"); do echo "ALTER SERVER shard$s OPTIONS (SET fdw_tuple_cost '$FDW_TUPLE_COST');"; done)
SQL
	echo "$PASSED passed, $FAILED failed"
fi

# --- benchmark -------------------------------------------------------------------
# Times SQL on node N in one session (so that postgres_fdw's connections and
# the shards' backends, CUDA started, last): one warm-up run, then RUNS timed
# runs (psql's \timing, wall time at the client; results sent to /dev/null).
# Prints the times in ms, one a line.
time_sql() { # N SETUP SQL
	local _
	{
		echo '\o /dev/null'
		echo "$2"
		for _ in $(seq 1 "$WARMUP"); do echo "$3;"; done
		echo '\timing on'
		for _ in $(seq 1 "$RUNS"); do echo "$3;"; done
	} | q "$1" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'
}
source "$ROOT/test/lib/stats.sh"

# Records one case: a line of the CSV, and its median for later use.
declare -A MEDIAN
bench() { # KEY CASE QUERY_NAME N SETUP SQL
	local times med
	times=$(time_sql "$4" "$5" "$6")
	[ -n "$times" ] || die "no timing for $2 / $3"
	med=$(echo "$times" | median)
	MEDIAN[$1]=$med
	echo "$2,$3,$ROWS,$SHARDS,$RUNS,$med,$(echo "$times" | sort -n | head -1),$(echo "$times" | sort -n | tail -1),\"$6\"" >>"$CSV"
	printf '   %-44s %-22s %10.1f ms  (runs: %s)\n' "$2" "$3" "$med" "$(echo $times)"
}

set_shards_gpusort() { # on|off
	local s
	for s in $(seq 1 "$SHARDS"); do
		q "$s" -At -c "ALTER SYSTEM SET gpusort.enabled = $1" -c "SELECT pg_reload_conf()" >/dev/null
	done
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2fx", a / b}'; }

if [ "$BENCH" = 1 ]; then
	source "$ROOT/test/lib/results-name.sh"
	CSV=$RESULTS/$(results_name "scale-out-$ROWS").csv
	TXT=${CSV%.csv}.txt
	echo "case,query,rows,shards,runs,median_ms,min_ms,max_ms,sql" >"$CSV"
	FULL="SELECT * FROM t ORDER BY k8 OFFSET $ROWS"
	LIMIT="SELECT * FROM t ORDER BY k8 LIMIT 1000"
	PER_SHARD="SELECT * FROM ($(for s in $(seq 1 "$SHARDS"); do
		[ "$s" = 1 ] || printf ' UNION ALL '
		printf '(SELECT * FROM t_p%s ORDER BY k8 LIMIT 1000)' "$s"
	done)) u ORDER BY k8 LIMIT 1000"
	DEFAULT_COST="$(for s in $(seq 1 "$SHARDS"); do echo "ALTER SERVER shard$s OPTIONS (SET fdw_tuple_cost '0.01');"; done)"
	RECIPE_COST="$(for s in $(seq 1 "$SHARDS"); do echo "ALTER SERVER shard$s OPTIONS (SET fdw_tuple_cost '$FDW_TUPLE_COST');"; done)"
	echo "== benchmark: $ROWS rows, $SHARDS shards, $RUNS runs after $WARMUP warm-up run(s), median ms ($(nproc) cores)"
	for mode in on off; do
		set_shards_gpusort "$mode"
		bench "sh_$mode.full" "sharded, shards with gpusort $mode" "ORDER BY k8 (all)" 0 "" "$FULL"
		bench "sh_$mode.limit" "sharded, shards with gpusort $mode" "ORDER BY k8 LIMIT 1000" 0 "" "$LIMIT"
		for s in $(seq 1 "$SHARDS"); do
			n=${SHARD_ROWS[$s]}
			bench "sh_$mode.sort$s" "shard $s alone, gpusort $mode" "ORDER BY k8 (all)" "$s" "" \
				"SELECT * FROM t_p$s ORDER BY k8 OFFSET $n"
		done
	done
	set_shards_gpusort on
	echo "   -- where postgres_fdw does not push the sort down, and the alternatives"
	bench sh_on.limit_per_shard "sharded, LIMIT in each shard's query" "ORDER BY k8 LIMIT 1000" 0 "" "$PER_SHARD"
	if [ "$EXTRAS" = 1 ]; then
		q 0 -c "$DEFAULT_COST"
		bench sh_on.limit_default "sharded, fdw_tuple_cost 0.01" "ORDER BY k8 LIMIT 1000" 0 "" "$LIMIT"
		LIMIT_DEFAULT_PLAN=$(q 0 -At -c "EXPLAIN (COSTS OFF) $LIMIT")
		q 0 -c "$RECIPE_COST"
		echo "   -- fetching all rows without a sort: scan and transfer"
		bench sh.fetch "sharded, no ORDER BY" "all rows" 0 "" "SELECT * FROM t OFFSET $ROWS"
		for s in $(seq 1 "$SHARDS"); do
			bench "sh.scan$s" "shard $s alone, no ORDER BY" "all rows" "$s" "" \
				"SELECT * FROM t_p$s OFFSET ${SHARD_ROWS[$s]}"
		done
	fi
	echo "   -- one server holding all rows (the coordinator's table ref)"
	for mode in off on; do
		bench "one_$mode.full" "one server, gpusort $mode" "ORDER BY k8 (all)" 0 \
			"SET gpusort.enabled = $mode;" "${FULL//FROM t /FROM ref }"
		bench "one_$mode.limit" "one server, gpusort $mode" "ORDER BY k8 LIMIT 1000" 0 \
			"SET gpusort.enabled = $mode;" "${LIMIT//FROM t /FROM ref }"
	done

	# Where the time of the sharded full sort goes.  Merge Append asks each
	# shard for its first rows in turn, so the shards sort one after another.
	{
		echo "gpusort scale-out benchmark: $ROWS rows, $SHARDS shards (${SHARD_ROWS[*]:1} rows), $(nproc) cores, $("$BINDIR/postgres" --version)"
		echo "median of $RUNS runs after $WARMUP warm-up run(s) in the same session, ms, wall time at the client; work_mem $WORK_MEM,"
		echo "postgres_fdw fetch_size $FETCH_SIZE, fdw_tuple_cost $FDW_TUPLE_COST, use_remote_estimate $REMOTE_ESTIMATE; gpusort.device $DEVICE"
		echo
		printf '%-46s %12s %12s\n' "" "all rows" "LIMIT 1000"
		for c in "sh_on:sharded, shards with gpusort on" "sh_off:sharded, shards with gpusort off" \
			"one_off:one server, gpusort off" "one_on:one server, gpusort on"; do
			printf '%-46s %12.1f %12.1f\n' "${c#*:}" "${MEDIAN[${c%%:*}.full]}" "${MEDIAN[${c%%:*}.limit]}"
		done
		echo
		echo "(one server, LIMIT: a top-N heapsort, PostgreSQL's Sort, with gpusort on or off)"
		echo "sharded, shards with gpusort on against off: all rows $(ratio "${MEDIAN[sh_off.full]}" "${MEDIAN[sh_on.full]}"), LIMIT 1000 $(ratio "${MEDIAN[sh_off.limit]}" "${MEDIAN[sh_on.limit]}")"
		echo "LIMIT 1000 in each shard's query (UNION ALL of the partitions, top-N on the shards): ${MEDIAN[sh_on.limit_per_shard]} ms"
		if [ "$EXTRAS" = 1 ]; then
			echo "LIMIT 1000 with postgres_fdw's default fdw_tuple_cost (0.01): ${MEDIAN[sh_on.limit_default]} ms, the plan:"
			echo "$LIMIT_DEFAULT_PLAN" | sed 's/^/    /'
		fi
		echo
		echo "where the time goes, ORDER BY k8 of all $ROWS rows through the coordinator (Merge Append asks"
		echo "each shard for its first rows in turn: the shards sort one after another, see the EXPLAIN ANALYZE below)"
		for mode in on off; do
			sorts=$(for s in $(seq 1 "$SHARDS"); do echo "${MEDIAN[sh_$mode.sort$s]}"; done | awk '{s += $1} END {printf "%.1f", s}')
			echo "  shards with gpusort $mode: ${MEDIAN[sh_$mode.full]} ms in all; the shards' sorts $sorts ms"
			echo "    ($(for s in $(seq 1 "$SHARDS"); do printf '%s ' "${MEDIAN[sh_$mode.sort$s]}"; done | sed 's/ $//') ms: scan, sort and emit on each shard, nothing sent);"
			echo "    the rest, $(awk -v t="${MEDIAN[sh_$mode.full]}" -v s="$sorts" 'BEGIN {printf "%.1f", t - s}') ms: the rows sent as text, read by the coordinator, merged"
		done
		if [ "$EXTRAS" = 1 ]; then
			echo "  for comparison, all rows through the coordinator without ORDER BY (Append, no sort, no merge):"
			echo "    ${MEDIAN[sh.fetch]} ms; the shards' scans alone $(for s in $(seq 1 "$SHARDS"); do printf '%s ' "${MEDIAN[sh.scan$s]}"; done | sed 's/ $//') ms"
		fi
	} >"$TXT"

	echo "== EXPLAIN ANALYZE: each shard's Remote SQL on the shard, and the coordinator's plan" | tee -a "$TXT"
	remote_plans() {
		local s remote
		for s in $(seq 1 "$SHARDS"); do
			remote=$(q 0 -At -c "EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM t ORDER BY k8" |
				sed -n "s/^ *Remote SQL: \(.*FROM public\.t_p$s .*\)$/\1/p")
			echo "-- shard $s with gpusort $1: EXPLAIN (ANALYZE) $remote"
			# the second run, in the same session
			q "$s" -At -c "EXPLAIN (ANALYZE, COSTS OFF) $remote" \
				-c "EXPLAIN (ANALYZE, COSTS OFF) $remote" | awk 'NR > 1 && prev ~ /^Execution Time/ {p = 1} {prev = $0} p'
		done
		if [ "$EXTRAS" = 1 ]; then
			echo "-- coordinator, shards with gpusort $1: EXPLAIN (ANALYZE) $FULL"
			q 0 -At -c "EXPLAIN (ANALYZE, COSTS OFF) $FULL"
		fi
	}
	for mode in on off; do
		set_shards_gpusort "$mode"
		remote_plans "$mode" >>"$TXT"
	done
	set_shards_gpusort on
	echo
	cat "$TXT"
	echo
	echo "== results: $CSV, $TXT"
fi

[ "$FAILED" -eq 0 ] || exit 1
