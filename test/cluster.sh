#!/bin/bash
# Throwaway PostgreSQL clusters for gpusort's tests and demonstration.
# Source this file, then:
#
#   cluster_start [postgres -c options...]   initdb + start in a new temp dir
#   cluster_stop                             stop it and remove the dir
#
# cluster_start exports PGHOST, PGPORT, PGUSER and PGDATABASE for psql and
# pg_regress.  PG_CONFIG picks the PostgreSQL installation (default:
# pg_config on PATH).  Run as root, the server runs as the user "gpusort",
# created if missing, since PostgreSQL refuses to run as root.

PG_CONFIG=${PG_CONFIG:-pg_config}

cluster_start() {
	local bindir port
	bindir=$("$PG_CONFIG" --bindir) || return 1
	CLUSTER_DIR=$(mktemp -d /tmp/gpusort-cluster.XXXXXX)
	CLUSTER_RUNAS=()
	if [ "$(id -u)" = 0 ]; then
		id gpusort >/dev/null 2>&1 || useradd --system --no-create-home gpusort
		chown gpusort "$CLUSTER_DIR"
		CLUSTER_RUNAS=(runuser -u gpusort --)
	fi
	port=${CLUSTER_PORT:-55432}
	while [ -e "/tmp/.s.PGSQL.$port" ] || ls "/tmp"/gpusort-cluster.*/.s.PGSQL.$port >/dev/null 2>&1; do
		port=$((port + 1))
	done
	"${CLUSTER_RUNAS[@]}" "$bindir/initdb" -D "$CLUSTER_DIR/data" -A trust -U postgres \
		--no-sync >"$CLUSTER_DIR/initdb.log" 2>&1 || { cat "$CLUSTER_DIR/initdb.log"; return 1; }
	local opts="-p $port -k $CLUSTER_DIR -c listen_addresses= -c fsync=off"
	for o in "$@"; do opts="$opts $o"; done
	"${CLUSTER_RUNAS[@]}" "$bindir/pg_ctl" -D "$CLUSTER_DIR/data" -l "$CLUSTER_DIR/server.log" \
		-w -o "$opts" start >/dev/null || { tail -20 "$CLUSTER_DIR/server.log"; return 1; }
	export PGHOST=$CLUSTER_DIR PGPORT=$port PGUSER=postgres PGDATABASE=postgres
	CLUSTER_BINDIR=$bindir
}

cluster_stop() {
	[ -n "${CLUSTER_DIR:-}" ] || return 0
	"${CLUSTER_RUNAS[@]}" "$CLUSTER_BINDIR/pg_ctl" -D "$CLUSTER_DIR/data" -m fast stop >/dev/null 2>&1
	rm -rf "$CLUSTER_DIR"
	CLUSTER_DIR=
}
