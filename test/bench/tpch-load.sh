#!/bin/bash
# tpch-load.sh: TPC-H's lineitem and orders in unlogged tables, for the
# benchmarks.  Source it, then:
#
#   tpch_load TABLE...     (lineitem, orders)
#
# loads each table that the server (PGHOST, PGPORT, PGUSER) lacks from the
# CSV files that tpchgen-cli writes (TPCH_DIR/TABLE/*.csv, with a header
# line), made with scale factor SCALE (default 10) where TPCH_DIR (default
# /tmp/tpch) has none and tpchgen-cli is on PATH; the files are copied in
# sixteen sessions at once, then the table is analyzed.  NOT_NULL=0 loads
# the columns without their NOT NULL declarations, as users' tables often
# are (a table already there is kept as it is).  Says what it did in lines
# starting with "# ".

TPCH_DIR=${TPCH_DIR:-/tmp/tpch}
SCALE=${SCALE:-10}

# The columns of each table, as TPC-H defines them (all NOT NULL).
tpch_columns() {
	case $1 in
		lineitem)
			echo "l_orderkey int8 NOT NULL, l_partkey int8 NOT NULL, l_suppkey int8 NOT NULL, l_linenumber int4 NOT NULL,
				l_quantity numeric(15,2) NOT NULL, l_extendedprice numeric(15,2) NOT NULL,
				l_discount numeric(15,2) NOT NULL, l_tax numeric(15,2) NOT NULL, l_returnflag char(1) NOT NULL,
				l_linestatus char(1) NOT NULL, l_shipdate date NOT NULL, l_commitdate date NOT NULL,
				l_receiptdate date NOT NULL, l_shipinstruct char(25) NOT NULL, l_shipmode char(10) NOT NULL,
				l_comment varchar(44) NOT NULL" ;;
		orders)
			echo "o_orderkey int8 NOT NULL, o_custkey int8 NOT NULL, o_orderstatus char(1) NOT NULL,
				o_totalprice numeric(15,2) NOT NULL, o_orderdate date NOT NULL, o_orderpriority char(15) NOT NULL,
				o_clerk char(15) NOT NULL, o_shippriority int4 NOT NULL, o_comment varchar(79) NOT NULL" ;;
		*)
			echo "tpch_load: no table $1" >&2
			return 1 ;;
	esac
}

tpch_load() {
	local table start pids f columns
	local psql=(psql -X -q -At -v ON_ERROR_STOP=1)

	for table in "$@"; do
		columns=$(tpch_columns "$table") || return 1
		[ "${NOT_NULL:-1}" = 0 ] && columns=${columns// NOT NULL/}
		"${psql[@]}" -c "SELECT 1 FROM $table LIMIT 1" >/dev/null 2>&1 && continue
		if ! ls "$TPCH_DIR/$table"/*.csv >/dev/null 2>&1; then
			start=$(date +%s)
			tpchgen-cli csv -s "$SCALE" --tables "$table" --parts 16 \
				--output-dir "$TPCH_DIR" >/dev/null || return 1
			echo "# tpchgen-cli: $table of scale $SCALE in $(($(date +%s) - start)) s"
		fi
		chmod -R a+rX "$TPCH_DIR"
		"${psql[@]}" -c "CREATE UNLOGGED TABLE $table ($columns)" || return 1
		start=$(date +%s)
		pids=()
		for f in "$TPCH_DIR/$table"/*.csv; do
			"${psql[@]}" -c "\\copy $table FROM '$f' (FORMAT csv, HEADER)" &
			pids+=($!)
		done
		wait "${pids[@]}" || return 1
		"${psql[@]}" -c "VACUUM ANALYZE $table" || return 1
		echo "# $table: $("${psql[@]}" -c "SELECT count(*) FROM $table") rows$([ "${NOT_NULL:-1}" = 0 ] && echo ', no NOT NULL declared')," \
			"$("${psql[@]}" -c "SELECT pg_size_pretty(pg_table_size('$table'))"), loaded in $(($(date +%s) - start)) s"
	done
}
