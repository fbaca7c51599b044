#!/bin/bash
# bench-orders.sh: ORDER BYs of a set, PostgreSQL's Sort against GpuSort,
# side by side in one run, against the server that PGHOST/PGPORT/PGUSER name
# (it must load gpusort).  Sets:
#   ties   tie-heavy orders: a leading integer key of few values, then text,
#          numeric or float keys that PostgreSQL's comparators order;
#   types  one leading key of each type the engines sort (timestamp, date,
#          float8, uuid, numeric, text under C (the column's collation),
#          ICU and en_US.UTF-8 of the C library), rows of about 120 bytes;
#          and URLs whose first 34 bytes all rows share (a table of their
#          own).  The libc orders need the en_US.UTF-8 locale (LOCPATH may
#          point the server at one) and are left out without;
#   more   the other key types: timestamptz, time, float4, bool, oid, money,
#          varchar and char(n) under C, bytea, and a domain over int8, rows
#          of about 120 bytes.
#
#   test/bench/bench-orders.sh SET [RESULTS_DIR]
#
# Reports the median of RUNS executions of "SELECT * ... ORDER BY ...
# OFFSET <rows>" (every row sorted and read, none sent), each in a new
# session, native and gpusort taking turns, and the ratio native / gpusort
# (above 1: gpusort is faster).  Writes
# RESULTS_DIR/bench-SET[-TAG]-<host>-<cores>-<date>-<commit>.txt (the scheme of
# test/lib/results-name.sh), and beside it bench-SET[-TAG]-explain-<...>.txt
# with an EXPLAIN ANALYZE of each order under gpusort (where the time went);
# then draws the charts of RESULTS_DIR (test/bench/plot-results.sh) where
# matplotlib is there.
#
# Environment: ROWS (default 1000000), RUNS (default 3), DEVICE (gpusort's
# engine, default cpu), WORK_MEM (default 2GB), ONLY (an extended regular
# expression: only the orders that match it), WIDE (default 1: every column
# of the rows is sorted, about 170 bytes, as "SELECT * ... ORDER BY ...
# OFFSET <rows>" runs; 0: a count over the sort, which leaves only the sort
# key in the rows, as the results before 2026-11-28 without "whole rows" in
# their header measured), TAG (added to the results file's name).
set -uo pipefail
SET=${1:?usage: bench-orders.sh ties|types|more [RESULTS_DIR]}
RESULTS=${2:-test/results}
ROWS=${ROWS:-1000000}
RUNS=${RUNS:-3}
DEVICE=${DEVICE:-cpu}
WORK_MEM=${WORK_MEM:-2GB}
PSQL=(psql -X -q -v ON_ERROR_STOP=1)
mkdir -p "$RESULTS"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/results-name.sh"
OUTFILE=$RESULTS/$(results_name bench-$SET${TAG:+-$TAG} "$DEVICE").txt
# The statement timed: whole rows that the OFFSET skips, or (WIDE=0) a
# count over the sort.
timed() {
	if [ "${WIDE:-1}" = 1 ]; then
		echo "$1 OFFSET $ROWS"
	else
		echo "SELECT count(*) FROM ($1 OFFSET 0) s"
	fi
}
TABLE=${SET}_$ROWS

"${PSQL[@]}" -c "CREATE EXTENSION IF NOT EXISTS gpusort" || exit 1
case $SET in
ties)
	COLUMNS="g AS id, (hashint4(g) % 30000)::int2 AS r2, md5(g::text) AS t,
	         (hashint4(g + 1) % 100000)::numeric / 7 AS n, (hashint4(g + 2) % 100000)::float8 / 7 AS f"
	ORDERS='(r2 % 2)::int, t COLLATE "C"
(r2 % 2)::int, t COLLATE "en-x-icu"
(r2 % 2)::int, t
(r2 * 0)::int, t COLLATE "C"
(r2 % 100)::int, n
(r2 % 100)::int, f
r2::int, t COLLATE "C"
(CASE WHEN id % 2 = 0 THEN r2 END)::int, t COLLATE "C"' ;;
types)
	# rows of about 120 bytes; pad's collation is C (ORDER BY pad sorts it
	# under C, as for a column declared so); an explicit COLLATE in the
	# ORDER BY makes the scan add the sort key to every row, which both
	# sorts then carry
	COLUMNS="g AS id, '2000-01-01'::timestamp + hashint8(g) % 1000000000 * interval '1 ms' AS ts,
	         DATE '2000-01-01' + (hashint4(g + 2) % 10000) AS d,
	         hashint8(g + 3)::float8 / 1e12 AS f8, md5(g::text)::uuid AS u,
	         hashint8(g + 4) AS k8, (hashint8(g + 5) % 1000000000)::numeric / 1000 AS n,
	         md5(g::text) COLLATE \"C\" AS pad"
	# orders of URLs (a table of their own, url: before the order)
	URL_COLUMNS="g AS id, 'https://example.com/a/shared/path/' || md5(g::text) COLLATE \"C\" AS url"
	ORDERS='k8
ts
d
f8
u
d, ts
n
pad
pad COLLATE "en-x-icu"
pad, ts
url: url
url: url COLLATE "en-x-icu"
pad COLLATE bench_libc
pad COLLATE bench_libc, ts
url: url COLLATE bench_libc' ;;
more)
	"${PSQL[@]}" -c "DO \$\$ BEGIN CREATE DOMAIN bench_id AS int8 CHECK (VALUE > 0);
	                 EXCEPTION WHEN duplicate_object THEN NULL; END \$\$" || exit 1
	COLUMNS="g AS id, '2000-01-01 00:00+00'::timestamptz + hashint8(g) % 1000000000 * interval '1 ms' AS tz,
	         time '00:00' + (hashint4(g + 1) % 86400000) * interval '1 ms' AS tm,
	         (hashint4(g + 2) / 1e4)::float4 AS f4, hashint4(g + 3) % 2 = 0 AS b,
	         ((hashint4(g + 4)::int8 + 2147483648) % 4294967296)::oid AS o,
	         ((hashint4(g + 5) % 100000000)::numeric / 100)::money AS m,
	         md5((g + 6)::text)::varchar(32) COLLATE \"C\" AS vc,
	         substr(md5((g + 7)::text), 1, 16)::char(16) COLLATE \"C\" AS bc,
	         decode(md5((g + 8)::text), 'hex') AS by, (1 + (hashint8(g + 9) & 1152921504606846975))::bench_id AS di"
	ORDERS='tz
tm
f4
b, id
o
m
vc
bc
by
di' ;;
*)
	echo "unknown set $SET (ties, types, more)" >&2
	exit 2 ;;
esac

# text under the C library's en_US.UTF-8, where the server has it
if [ "$SET" = types ] &&
	! "${PSQL[@]}" -c "CREATE COLLATION IF NOT EXISTS bench_libc (provider = libc, locale = 'en_US.UTF-8')" 2>/dev/null; then
	echo "no en_US.UTF-8 locale: the bench_libc orders are left out" >&2
	ORDERS=$(grep -v bench_libc <<<"$ORDERS")
fi

# Creates table (unless it is there) of ROWS rows of columns.
make_table() {
	local table=$1 columns=$2
	if [ "$("${PSQL[@]}" -At -c "SELECT count(*) FROM pg_class WHERE relname = '$table'")" != 1 ]; then
		"${PSQL[@]}" -c "CREATE UNLOGGED TABLE $table AS SELECT $columns FROM generate_series(1, $ROWS) g" \
			-c "VACUUM ANALYZE $table" || exit 1
	fi
}
[ -z "${ONLY:-}" ] && ORDERS_RUN=$ORDERS || ORDERS_RUN=$(grep -E "$ONLY" <<<"$ORDERS")
make_table "$TABLE" "$COLUMNS"
grep -q '^url:' <<<"$ORDERS_RUN" && make_table "${TABLE}_url" "$URL_COLUMNS"

# Milliseconds of one run of the query, in a new session, with gpusort on
# or off.
run_ms() {
	local enabled=$1 query=$2
	"${PSQL[@]}" <<SQL | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'
SET work_mem = '$WORK_MEM';
SET max_parallel_workers_per_gather = 0;
SET gpusort.device = $DEVICE;
SET gpusort.enabled = $enabled;
$([ "$DEVICE" != cpu ] && [ "$enabled" = on ] && echo "SELECT gpusort_gpu_start();")
\\timing on
$(timed "$query");
SQL
}
source "$(dirname "${BASH_SOURCE[0]}")/../lib/stats.sh"

# EXPLAIN ANALYZE of the query with gpusort, after the timed runs.
explain_gpusort() {
	echo "== $1"
	"${PSQL[@]}" <<SQL
SET work_mem = '$WORK_MEM';
SET max_parallel_workers_per_gather = 0;
SET gpusort.device = $DEVICE;
$([ "$DEVICE" != cpu ] && echo "SELECT gpusort_gpu_start();")
EXPLAIN (ANALYZE, COSTS OFF) $(timed "$1");
SQL
}
EXPLAINS=$RESULTS/$(results_name bench-$SET${TAG:+-$TAG}-explain "$DEVICE").txt
: >"$EXPLAINS"

{
	echo "# bench-orders $SET: $ROWS rows$([ "${WIDE:-1}" = 1 ] && echo " (whole rows)" || echo " (a count over the sort: the keys alone)"), median of $RUNS, work_mem $WORK_MEM, gpusort.device = $DEVICE"
	echo "# $(psql -X -At -c 'SHOW server_version'), $(nproc) cores, $(date -u +%Y-%m-%d)"
	printf '%-58s %10s %10s %7s\n' "ORDER BY" "native ms" "gpusort ms" "ratio"
	while IFS= read -r order; do
		[ -n "$order" ] || continue
		table=$TABLE
		case $order in url:*) table=${TABLE}_url; order=${order#url: } ;; esac
		q="SELECT * FROM $table ORDER BY $order"
		# native and gpusort take turns, so that a host's drift meets both
		native= ours=
		for _ in $(seq "$RUNS"); do
			native+="$(run_ms off "$q")"$'\n'
			ours+="$(run_ms on "$q")"$'\n'
		done
		native=$(median <<<"$native")
		ours=$(median <<<"$ours")
		explain_gpusort "$q" >>"$EXPLAINS"
		awk -v o="$order$([ "$table" != "$TABLE" ] && echo " (URLs)")" -v n="$native" -v g="$ours" \
			'BEGIN { printf "%-58s %10.1f %10.1f %6.2fx\n", o, n, g, n / g }'
	done <<<"$ORDERS_RUN"
} | tee "$OUTFILE"
PLOT_INSTALL=no "$(dirname "$0")/plot-results.sh" "$RESULTS"
