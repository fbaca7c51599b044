#!/bin/bash
# ab-builds.sh: A/B of gpusort builds on one server and the same data.  Each
# round installs each build's gpusort.so in turn, restarts the server, and
# runs test/bench/bench-sql.sh on the chosen cases (or
# test/bench/bench-orders.sh, with BENCH=orders; or GpuSort's side of
# test/bench/bench-tpch.sh, with BENCH=tpch); the rows of every run go into
# one CSV with the build and the round in front.
#
#   test/bench/ab-builds.sh RESULTS_DIR NAME=path/to/gpusort.so [NAME=...]
#
# Needs the server that PGHOST/PGPORT/PGUSER name, PGDATA and pg_ctl (run as
# root or as the data directory's owner), and write access to the server's
# pkglibdir.  The build installed last stays installed.  Environment:
#   ROUNDS          rounds (default 2), builds interleaved in each, in
#                   the reverse order every second round
#   SIZES, RUNS, ENGINES, CASES_MATCHING   passed to bench-sql.sh (defaults
#                   10000000, 5, "cpu gpu", the 10M int8 full-row case)
#   BENCH           sql (default) or orders: test/bench/bench-orders.sh SET
#                   (default types), which reads ROWS, RUNS, DEVICE, WIDE
#                   and ONLY; or tpch: test/bench/bench-tpch.sh with
#                   gpusort on alone, which reads RUNS, SCALE, TPCH_DIR and
#                   ONLY (default: lineitem by l_partkey and by three keys)
# Writes RESULTS_DIR/ab-TAG-<host>-<cores>-<date>-<commit>.csv
# (test/lib/results-name.sh; TAG default sql-bench, or orders) and prints
# the medians by build.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/test/lib/results-name.sh"
RESULTS=${1:?usage: ab-builds.sh RESULTS_DIR NAME=gpusort.so ...}
shift
mkdir -p "$RESULTS"
ROUNDS=${ROUNDS:-2}
export SIZES=${SIZES:-10000000} RUNS=${RUNS:-5} ENGINES=${ENGINES:-"cpu gpu"}
export CASES_MATCHING=${CASES_MATCHING:-'^int8 random \(full row\)$'}
PKGLIB=$(pg_config --pkglibdir)

# Runs pg_ctl as the data directory's owner.
pg_ctl_as_owner() {
	local owner run=()
	owner=$(stat -c %U "$PGDATA")
	[ "$(id -un)" = "$owner" ] || run=(runuser -u "$owner" --)
	"${run[@]}" env PATH="$PATH" LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" \
		pg_ctl -D "$PGDATA" -l "$PGDATA/log" -w "$@" >/dev/null
}

# Installs a build and restarts the server on it.  The library is renamed
# into place, not overwritten: a library overwritten under a running server
# can crash it, and crash recovery empties the benchmark's unlogged tables.
install_build() {
	cp "$1" "$PKGLIB/gpusort.so.new" && mv "$PKGLIB/gpusort.so.new" "$PKGLIB/gpusort.so" &&
		pg_ctl_as_owner -m fast restart
}

out=
builds=("$@")
for round in $(seq "$ROUNDS"); do
	# the builds' order reverses each round (A B, B A, ...), so that a drift
	# of the host over the rounds does not favour one
	order=("${builds[@]}")
	if [ $((round % 2)) = 0 ]; then
		order=()
		for ((i = ${#builds[@]} - 1; i >= 0; i--)); do order+=("${builds[i]}"); done
	fi
	for build in "${order[@]}"; do
		name=${build%%=*}
		install_build "${build#*=}" || { echo "install of $name failed"; exit 1; }
		dir=$RESULTS/ab-$name-$round
		echo "== round $round, build $name"
		if [ "${BENCH:-sql}" = orders ]; then
			"$ROOT/test/bench/bench-orders.sh" "${SET:-types}" "$dir" >"$dir.log" 2>&1 ||
				{ tail -5 "$dir.log"; exit 1; }
			out=$RESULTS/$(results_name "ab-${TAG:-orders}").csv
			[ -f "$out" ] || echo "build,round,order,native_ms,gpusort_ms" >"$out"
			# "ORDER BY  native  gpusort  ratio" lines: the order may hold spaces, commas, quotes
			ls "$dir"/bench-*.txt | grep -v -- '-explain-' | xargs grep -hv -e '^#' -e '^ORDER BY' |
				awk -v b="$name" -v r="$round" '{ o = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+x$/, "", o)
					gsub(/"/, "\"\"", o); print b "," r ",\"" o "\"," $(NF - 2) "," $(NF - 1) }' >>"$out"
			rm -rf "$dir" "$dir.log"
			continue
		fi
		if [ "${BENCH:-sql}" = tpch ]; then
			NATIVE_RUNS=0 DUCKDB=0 EXPLAIN_PLANS=0 ONLY=${ONLY:-'^lineitem_(partkey|ship3)$'} \
				"$ROOT/test/bench/bench-tpch.sh" "$dir" >"$dir.log" 2>&1 || { tail -5 "$dir.log"; exit 1; }
			out=$RESULTS/$(results_name "ab-${TAG:-tpch}").csv
			[ -f "$out" ] || echo "build,round,query,work_mem,gpusort_ms" >"$out"
			# "query work_mem native gpusort ratio duckdb" lines, native and ratio empty
			grep -hv -e '^#' -e '^query' "$dir"/bench-tpch-*.txt |
				awk -v b="$name" -v r="$round" 'NF >= 3 { print b "," r "," $1 "," $2 "," $3 }' >>"$out"
			rm -rf "$dir" "$dir.log"
			continue
		fi
		BUDGET=${BUDGET:-300} "$ROOT/test/bench/bench-sql.sh" "$dir" >/dev/null 2>"$dir.log" ||
			{ tail -5 "$dir.log"; exit 1; }
		csv=$(ls "$dir"/sql-bench-*.csv)
		[ -n "$out" ] || { out=$RESULTS/$(results_name "ab-${TAG:-sql-bench}").csv; echo "build,round,$(head -1 "$csv")" >"$out"; }
		tail -n +2 "$csv" | sed "s/^/$name,$round,/" >>"$out"
		rm -rf "$dir" "$dir.log"
	done
done
echo "CSV: $out"
if [ "${BENCH:-sql}" = tpch ]; then
	# build | query: each round's median (ms)
	awk -F, 'NR > 1 { k = $1 " | " $3 " " $4; v[k] = v[k] " " $5 } END { for (k in v) print k ":" v[k] }' "$out" | sort
	exit 0
fi
if [ "${BENCH:-sql}" = orders ]; then
	# build | order: each round's gpusort median (ms)
	awk -F, 'NR > 1 { o = $0; sub(/^[^"]*"/, "", o); sub(/"[^"]*$/, "", o); gsub(/""/, "\"", o)
		k = $1 " | " o; v[k] = v[k] " " $NF } END { for (k in v) print k ":" v[k] }' "$out" | sort
	exit 0
fi
# build | case | engine: each round's median (ms)
awk -F, 'NR > 1 && $10 != "" { k = $1 " | " $6 " | " $7; v[k] = v[k] " " $10 }
	END { for (k in v) print k ":" v[k] }' "$out" | sort
