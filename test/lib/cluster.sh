#!/bin/bash
# Throwaway PostgreSQL clusters for gpusort's tests and demonstration.
# Source this file, then:
#
#   cluster_start [postgres -c options...]   initdb + start in a new temp dir
#   cluster_stop                             stop it and remove the dir
#   cluster_use [postgres -c options...]     the server PGHOST names, if set;
#                                            else cluster_start, stopped at exit
#
# cluster_start exports PGHOST, PGPORT, PGUSER and PGDATABASE for psql and
# pg_regress.  PG_CONFIG picks the PostgreSQL installation (default:
# pg_config on PATH).  Run as root, the server runs as the user "gpusort",
# created if missing, since PostgreSQL refuses to run as root.  CLUSTER_PORT
# is the first port tried (default 55432; the next free one is taken).  Both
# functions say what they do in lines starting with "== ".

PG_CONFIG=${PG_CONFIG:-pg_config}

cluster_start() {
	local bindir port
	bindir=$("$PG_CONFIG" --bindir) || return 1
	CLUSTER_DIR=$(mktemp -d /tmp/gpusort-cluster.XXXXXX)
	CLUSTER_BINDIR=$bindir
	CLUSTER_RUNAS=()
	if [ "$(id -u)" = 0 ]; then
		if ! id gpusort >/dev/null 2>&1; then
			echo "== creating the OS user gpusort (useradd --system) to run the server: PostgreSQL refuses root"
			useradd --system --no-create-home gpusort
		fi
		chown gpusort "$CLUSTER_DIR"
		CLUSTER_RUNAS=(runuser -u gpusort --)
	fi
	port=${CLUSTER_PORT:-55432}
	while [ -e "/tmp/.s.PGSQL.$port" ] || ls "/tmp"/gpusort-cluster.*/.s.PGSQL.$port >/dev/null 2>&1; do
		port=$((port + 1))
	done
	"${CLUSTER_RUNAS[@]}" "$bindir/initdb" -D "$CLUSTER_DIR/data" -A trust -U postgres \
		--no-sync >"$CLUSTER_DIR/initdb.log" 2>&1 || { cat "$CLUSTER_DIR/initdb.log"; return 1; }
	CLUSTER_PORTNUM=$port
	local opts="-p $port -k $CLUSTER_DIR -c listen_addresses= -c fsync=off"
	for o in "$@"; do opts="$opts $o"; done
	echo "== starting a throwaway cluster of $("$bindir/postgres" --version | sed 's/.*(PostgreSQL) /PostgreSQL /') in $CLUSTER_DIR, port $port${*:+, with $*}"
	"${CLUSTER_RUNAS[@]}" "$bindir/pg_ctl" -D "$CLUSTER_DIR/data" -l "$CLUSTER_DIR/server.log" \
		-w -o "$opts" start >/dev/null || { tail -20 "$CLUSTER_DIR/server.log"; return 1; }
	export PGHOST=$CLUSTER_DIR PGPORT=$port PGUSER=postgres PGDATABASE=postgres
}

cluster_stop() {
	[ -n "${CLUSTER_DIR:-}" ] || return 0
	echo "== stopping the cluster on port ${CLUSTER_PORTNUM:-?} and removing $CLUSTER_DIR"
	"${CLUSTER_RUNAS[@]}" "$CLUSTER_BINDIR/pg_ctl" -D "$CLUSTER_DIR/data" -m fast stop >/dev/null 2>&1
	rm -rf "$CLUSTER_DIR"
	CLUSTER_DIR=
}

cluster_use() {
	[ -n "${PGHOST:-}" ] && return 0
	trap cluster_stop EXIT
	cluster_start "$@"
}
