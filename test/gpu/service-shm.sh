#!/bin/bash
# service-shm.sh: the GPU service whatever dynamic_shared_memory_type is,
# and none of PostgreSQL's shared memory in the processes that run CUDA
# (src/service/gpu_process.c, src/service/shm_objects.c), on a GPU host,
# against a running server that preloads gpusort with gpusort.service on
# (PGHOST, PGPORT, PGUSER name it, a superuser; PGDATA and pg_ctl restart
# it: run as root or as the data directory's owner, who may read the
# processes' maps and signal them). test/gpu/gpu-tests.sh runs it. For each of
# posix, mmap and sysv (ALTER SYSTEM SET dynamic_shared_memory_type, a
# restart; with mmap also gpusort.service_buffer = 0, so that every job
# travels in an object of its own):
#   1. the postmaster before the restart left nothing in /dev/shm;
#   2. EXPLAIN ANALYZE of a sort of ROWS rows with gpusort.device = gpu says
#      that the service sorted it (Sort Engine: gpu, GPU Service: GPU n);
#   3. while a session sorts, /proc/<pid>/maps of every GPU process, read
#      SAMPLES times, holds none of PostgreSQL's shared memory: no mapping
#      of a file (device and inode) that the postmaster maps shared and
#      that is not gpusort's own (the main segment, its System V header,
#      the dynamic segments' control segment), and no dynamic segment
#      (/dev/shm/PostgreSQL.*, System V, pg_dynshmem/);
#   4. kill -9 of the GPU processes while CRASH_SESSIONS sessions sort
#      (test/gpu/service-crash.sh): every row right, no restart of the server,
#      the service back within 10 s; the new processes' maps as in 3;
#   5. /dev/shm holds no object of a job (gpusort.<postmaster>.<pid>.<n>).
# Then both settings as they were, pg_ctl stop -m immediate: nothing of
# that postmaster's is left in /dev/shm; and the server started again
# (with the options it had).
# Prints each check, and "service shm test: passed" or "... FAILED" last.
#
# Environment: ROWS (default 2000000), SAMPLES (default 20), TYPES (default
# "posix mmap sysv"), CRASH_SESSIONS (default 16), DB (default gpusort_shm,
# created and dropped).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/test/gpu/server-ctl.sh"
ROWS=${ROWS:-2000000}
SAMPLES=${SAMPLES:-20}
TYPES=${TYPES:-posix mmap sysv}
CRASH_SESSIONS=${CRASH_SESSIONS:-16}
DB=${DB:-gpusort_shm}
P=(psql -X -q -At -v ON_ERROR_STOP=1)
GPU="SET gpusort.device = gpu; SET max_parallel_workers_per_gather = 0; SET work_mem = '1GB';"
fails=0

# check NAME STATUS [DETAIL]: STATUS 0 passes
check() {
	if [ "$2" = 0 ]; then
		echo "   ok      $1${3:+ ($3)}"
	else
		echo "   FAILED  $1${3:+ ($3)}"
		fails=$((fails + 1))
	fi
}

if [ -z "${PGDATA:-}" ] || [ ! -f "$PGDATA/postmaster.pid" ]; then
	echo "service shm test: FAILED: PGDATA names no running server's data directory"
	exit 1
fi
postmaster() { head -1 "$PGDATA/postmaster.pid"; }

# Every GPU of the service ready, within 30 s (asked in $DB, which has the
# extension and so its view).
wait_ready() {
	for _ in $(seq 1 150); do
		[ "$("${P[@]}" -d "$DB" -c "SELECT count(*) > 0 AND bool_and(state = 'ready')
			FROM gpusort_service" 2>/dev/null)" = t ] && return 0
		sleep 0.2
	done
	return 1
}

# The files (device:inode) that postmaster $1 maps shared to write,
# gpusort's own objects left out: PostgreSQL's shared memory.
postgres_files() {
	awk '$2 ~ /^rw.s$/ && $0 !~ /\/gpusort\./ { print $4 ":" $5 }' "/proc/$1/maps" | sort -u | tr '\n' ' '
}

# The mappings of process $1 that are PostgreSQL's shared memory: a file of
# $2 (postgres_files), or a dynamic segment.
postgres_in() {
	awk -v files="$2" '
		BEGIN { n = split(files, f, " "); for (i = 1; i <= n; i++) pg[f[i]] = 1 }
		$2 ~ /s$/ && (($4 ":" $5) in pg || $0 ~ /\/PostgreSQL\.|\/SYSV|\/pg_dynshmem\//)' \
		"/proc/$1/maps" 2>/dev/null
}

gpu_pids() { "${P[@]}" -d "$DB" -c "SELECT string_agg(pid::text, ' ') FROM gpusort_service WHERE pid IS NOT NULL"; }

# maps_check NAME: every GPU process's maps, read $SAMPLES times, hold none
# of PostgreSQL's shared memory.
maps_check() {
	local pm pg pids found="" job=no
	pm=$(postmaster)
	pg=$(postgres_files "$pm")
	pids=$(gpu_pids)
	for _ in $(seq 1 "$SAMPLES"); do
		for pid in $pids; do
			found+=$(postgres_in "$pid" "$pg")
			grep -q -E "/dev/shm/gpusort\.$pm\.[0-9]+\.[0-9]+" "/proc/$pid/maps" 2>/dev/null && job=yes
		done
		sleep 0.1
	done
	[ -n "$pg" ] && [ -n "$pids" ] && [ -z "$found" ]
	check "$1: no PostgreSQL shared memory in the GPU processes $pids" $? \
		"${found:-the postmaster's: $pg; a job's object seen mapped: $job}"
	for pid in $pids; do
		echo "      shared mappings of GPU process $pid:" \
			"$(awk '$2 ~ /s$/ { print $6 }' "/proc/$pid/maps" 2>/dev/null | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
	done
}

# The value that ALTER SYSTEM gave setting $1, or nothing.
auto_conf() {
	"${P[@]}" -d postgres -c "SELECT setting FROM pg_file_settings
		WHERE name = '$1' AND sourcefile LIKE '%/postgresql.auto.conf' ORDER BY seqno DESC LIMIT 1"
}
# alter_system SETTING VALUE: ALTER SYSTEM SET, or RESET for no value.
alter_system() {
	if [ -n "$2" ]; then
		"${P[@]}" -d postgres -c "ALTER SYSTEM SET $1 = '$2'"
	else
		"${P[@]}" -d postgres -c "ALTER SYSTEM RESET $1"
	fi
}

was_type=$(auto_conf dynamic_shared_memory_type)
was_buffer=$(auto_conf gpusort.service_buffer)
"${P[@]}" -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" \
	-c "CREATE DATABASE $DB" || exit 1
export PGDATABASE=$DB
"${P[@]}" -c "CREATE EXTENSION gpusort" \
	-c "CREATE UNLOGGED TABLE shm_t AS SELECT g AS id, hashint8(g) AS k, md5(g::text) AS pad
	    FROM generate_series(1, $ROWS) g" -c "VACUUM ANALYZE shm_t" || exit 1
want=$("${P[@]}" -c "SET gpusort.enabled = off" \
	-c "SELECT md5(string_agg(id::text, ',')) FROM (SELECT id FROM shm_t ORDER BY k, id OFFSET 0) s")

for type in $TYPES; do
	buffer=$was_buffer
	[ "$type" = mmap ] && buffer=0
	before=$(postmaster)
	alter_system dynamic_shared_memory_type "$type" && alter_system gpusort.service_buffer "$buffer" &&
		restart_server
	check "$type: restarted" $?
	pm=$(postmaster)
	echo "== dynamic_shared_memory_type = $("${P[@]}" -c "SHOW dynamic_shared_memory_type")," \
		"gpusort.service_buffer = $("${P[@]}" -c "SHOW gpusort.service_buffer"), postmaster $pm"
	left=$(ls /dev/shm | grep -E "^gpusort\.$before\." | tr '\n' ' ')
	[ -z "$left" ]
	check "$type: nothing of postmaster $before left in /dev/shm" $? "$left"
	wait_ready
	check "$type: the service ready" $? \
		"$("${P[@]}" -c "SELECT string_agg(gpu || ': ' || state || ' ' || coalesce(reason, ''), '; ') FROM gpusort_service")"

	plan=$("${P[@]}" -c "$GPU" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF)
		SELECT * FROM shm_t ORDER BY k, id OFFSET $ROWS" 2>&1)
	engine=$(grep -o 'Sort Engine: [a-z]*' <<<"$plan" | head -1)
	note=$(grep -o 'GPU Service: .*' <<<"$plan" | head -1)
	got=$("${P[@]}" -c "$GPU" \
		-c "SELECT md5(string_agg(id::text, ',')) FROM (SELECT id FROM shm_t ORDER BY k, id OFFSET 0) s")
	[ "$engine" = "Sort Engine: gpu" ] && [ -n "$note" ] && [ "$got" = "$want" ]
	check "$type: EXPLAIN ANALYZE says the GPU service sorted, and the rows are Sort's" $? \
		"$engine; $note$(grep -o 'Fallback Reason: .*' <<<"$plan"); rows $([ "$got" = "$want" ] && echo right || echo WRONG)"

	# a session sorts while the maps are read
	{
		echo "$GPU"
		for _ in $(seq 1 8); do echo "SELECT count(*) FROM (SELECT * FROM shm_t ORDER BY k OFFSET 0) s;"; done
	} | psql -X -q -At >/dev/null 2>&1 &
	sorter=$!
	maps_check "$type"
	wait "$sorter"

	out=$(SESSIONS=$CRASH_SESSIONS ROWS=1000000 DB=${DB}_crash "$ROOT/test/gpu/service-crash.sh" 2>&1)
	rc=$?
	sed 's/^/      /' <<<"$out"
	check "$type: kill -9 of the GPU processes while $CRASH_SESSIONS sessions sort" $rc \
		"$(grep -E 'all right|back after' <<<"$out" | tr -s ' ' | tr '\n' ';')"
	wait_ready
	SAMPLES=1 maps_check "$type, after the restart of the GPU processes"

	sleep 1
	left=$(ls /dev/shm | grep -E "^gpusort\.$pm\.[0-9]+\.[0-9]+$" | tr '\n' ' ')
	[ -z "$left" ]
	check "$type: no job's object left in /dev/shm" $? \
		"${left:-$(ls /dev/shm | grep -E "^gpusort\.$pm\." | tr '\n' ' ')}"
done

alter_system dynamic_shared_memory_type "$was_type" && alter_system gpusort.service_buffer "$was_buffer"
check "the settings as they were" $?
pm=$(postmaster)
server_ctl -m immediate stop
sleep 1
left=$(ls /dev/shm | grep -E "^gpusort\.$pm\." | tr '\n' ' ')
[ -z "$left" ]
check "pg_ctl stop -m immediate: nothing of postmaster $pm left in /dev/shm" $? "$left"
# (pg_ctl restart starts a stopped server with the options it last had)
restart_server 2>/dev/null
wait_ready
check "the server started again" $?
"${P[@]}" -d postgres -c "DROP DATABASE $DB"

if [ "$fails" -eq 0 ]; then
	echo "service shm test: passed"
else
	echo "service shm test: FAILED ($fails checks)"
	exit 1
fi
