#!/bin/bash
# service-shm.sh: the GPU service's buffer does not outlive its server.
# Starts a throwaway cluster with shared_preload_libraries = gpusort and a
# buffer of an odd size (gpusort.service_buffer = BUFFER_MB), waits for the
# service to settle, and checks /dev/shm:
#   1. while it runs: the buffer is there where a GPU is ready, and nothing
#      of it where none is (a host without a GPU creates no buffer);
#   2. after pg_ctl stop -m immediate: nothing of it is left, neither a
#      segment of the buffer's size seen while it ran nor a file of gpusort's
#      own (gpusort.<postmaster pid>.*).
# Uses PG_CONFIG (default: pg_config on PATH), with gpusort installed there.
# Prints what it saw and "service shm test: passed" or "... FAILED".
set -uo pipefail
cd "$(dirname "$0")/.."
source test/cluster.sh
BUFFER_MB=${BUFFER_MB:-37}
PSQL=(psql -X -q -At -v ON_ERROR_STOP=1)
trap cluster_stop EXIT
fail() { echo "service shm test: FAILED: $*"; exit 1; }

# /dev/shm's files of the buffer's size owned by the server's user, and
# gpusort's own files of that server
buffer_files() {
	local owner=$1 pmpid=$2
	find /dev/shm -maxdepth 1 -type f -user "$owner" \
		\( -size "$((BUFFER_MB * 1024 * 1024))c" -o -name "gpusort.$pmpid.*" \) | sort
}

cluster_start -c shared_preload_libraries=gpusort -c gpusort.service_buffer=${BUFFER_MB}MB ||
	fail "the cluster did not start"
owner=$(stat -c %U "$CLUSTER_DIR/data")
pmpid=$(head -1 "$CLUSTER_DIR/data/postmaster.pid")
"${PSQL[@]}" -c "CREATE EXTENSION gpusort" || fail "no extension"

# settled: every GPU ready, or "no device" (or no service: a CPU-only build)
ready=""
for _ in $(seq 1 100); do
	ready=$("${PSQL[@]}" -c "SELECT count(*) FILTER (WHERE state = 'ready')
	    FROM gpusort_service HAVING bool_and(state IN ('ready', 'no device'))
	    OR count(*) = 0")
	[ -n "$ready" ] && break
	sleep 0.1
done
[ -n "$ready" ] || fail "the service did not settle in 10 s"
running=$(buffer_files "$owner" "$pmpid")
echo "== postmaster $pmpid, GPUs ready: $ready; the buffer's files: ${running:-none}"
if [ "$ready" -gt 0 ]; then
	[ -n "$running" ] || fail "a GPU is ready, and there is no buffer of $BUFFER_MB MB"
else
	[ -z "$running" ] || fail "no GPU is ready, and there is a buffer: $running"
fi

"${CLUSTER_RUNAS[@]}" "$CLUSTER_BINDIR/pg_ctl" -D "$CLUSTER_DIR/data" -m immediate -w stop >/dev/null ||
	fail "pg_ctl stop -m immediate failed"
left=""
for f in $running $(buffer_files "$owner" "$pmpid"); do
	[ -e "$f" ] && left="$left $f"
done
echo "== stopped with -m immediate; left in /dev/shm:${left:- nothing}"
[ -z "$left" ] || fail "the server's buffer outlived it:$left"
echo "service shm test: passed"
