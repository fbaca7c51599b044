#!/bin/bash
# Benchmark of ORDER BY: PostgreSQL's Sort against GpuSort on each engine,
# side by side in one run, against the server that PGHOST/PGPORT name.
#
#   test/bench-node.sh [OUT.csv]
#
# Environment: SIZES (rows, default "1000000 10000000"), ENGINES (default
# "native cpu"; add gpu on a GPU host), RUNS (default 5; the median is
# reported), WORK_MEM (default 8GB: every sort stays in memory).
# Each query is "SELECT ... ORDER BY ... OFFSET <rows>", so that all rows are
# sorted and emitted but none is sent to the client; the time is psql's.
set -euo pipefail
out=${1:-/dev/null}
SIZES=${SIZES:-1000000 10000000}
ENGINES=${ENGINES:-native cpu}
RUNS=${RUNS:-5}
WORK_MEM=${WORK_MEM:-8GB}
PSQL=(psql -X -q -v ON_ERROR_STOP=1)

# name|query (with :n for the row count)
CASES=(
	"int8 random, full row|SELECT * FROM bench_:n ORDER BY k8 OFFSET :n"
	"int4 random, full row|SELECT * FROM bench_:n ORDER BY k4 OFFSET :n"
	"int8 random, narrow|SELECT k8 FROM bench_:n ORDER BY k8 OFFSET :n"
	"int4 random, narrow|SELECT k4 FROM bench_:n ORDER BY k4 OFFSET :n"
	"int8 presorted, full row|SELECT * FROM bench_:n ORDER BY id OFFSET :n"
	"two int keys, full row|SELECT * FROM bench_:n ORDER BY g, k4 OFFSET :n"
	"int8 DESC NULLS FIRST, 10% NULL|SELECT * FROM bench_:n ORDER BY kn DESC NULLS FIRST OFFSET :n"
)

settings() {
	case $1 in
	native) echo "SET gpusort.enabled = off;" ;;
	*) echo "SET gpusort.enabled = on; SET gpusort.device = $1;" ;;
	esac
	echo "SET work_mem = '$WORK_MEM'; SET gpusort.work_mem = '$WORK_MEM'; SET max_parallel_workers_per_gather = 0; SET jit = off;"
}

# Median time in ms of RUNS executions of a query (after one warm-up).
time_query() {
	local engine=$1 query=$2
	{
		settings "$engine"
		echo '\timing on'
		for _ in $(seq 0 "$RUNS"); do echo "$query;"; done
	} | "${PSQL[@]}" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -n +2 | sort -n |
		awk '{t[NR] = $1} END {print t[int((NR + 1) / 2)]}'
}

make_table() {
	local n=$1
	"${PSQL[@]}" -o /dev/null <<SQL
SELECT setseed(0.5);
DROP TABLE IF EXISTS bench_$n;
CREATE UNLOGGED TABLE bench_$n AS
  SELECT g::int8 AS id,
         (random() * 9.2e18)::int8 * (CASE WHEN random() < 0.5 THEN -1 ELSE 1 END) AS k8,
         (random() * 4.2e9 - 2.1e9)::int4 AS k4,
         (g % 1000)::int4 AS g,
         CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 1e12)::int8 END AS kn,
         md5(g::text) AS payload
  FROM generate_series(1, $n) g;
VACUUM ANALYZE bench_$n;
SQL
}

host=$(hostname)
echo "case,rows,engine,median_ms,ratio_to_native,host" >"$out"
printf '%-34s %10s' "case" rows
for e in $ENGINES; do printf ' %12s' "$e ms"; done
for e in $ENGINES; do [ "$e" = native ] || printf ' %9s' "x $e"; done
echo

run_case() {
	local name=$1 n=$2 query=$3
	local -A ms
	query=${query//:n/$n}
	for e in $ENGINES; do ms[$e]=$(time_query "$e" "$query"); done
	printf '%-34s %10s' "$name" "$n"
	for e in $ENGINES; do printf ' %12.1f' "${ms[$e]}"; done
	for e in $ENGINES; do
		[ "$e" = native ] && continue
		printf ' %9.2f' "$(echo "${ms[native]} / ${ms[$e]}" | bc -l)"
	done
	echo
	for e in $ENGINES; do
		echo "\"$name\",$n,$e,${ms[$e]},$(echo "${ms[native]} / ${ms[$e]}" | bc -l | cut -c1-6),$host" >>"$out"
	done
}

for n in $SIZES; do
	make_table "$n"
	for c in "${CASES[@]}"; do
		run_case "${c%%|*}" "$n" "${c#*|}"
	done
done

# Below gpusort.min_rows the plan keeps PostgreSQL's Sort: only the planner
# hook's cost remains.
n=${SMALL:-500}
make_table "$n"
RUNS=$((RUNS * 40)) run_case "below gpusort.min_rows" "$n" "SELECT * FROM bench_:n ORDER BY k8 OFFSET :n"
for m in $n $SIZES; do "${PSQL[@]}" -c "DROP TABLE IF EXISTS bench_$m"; done
