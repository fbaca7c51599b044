#!/bin/bash
# server-ctl.sh: pg_ctl on the running server that PGDATA names, as the
# data directory's owner (the scripts run as root or as that user), for the
# checks that restart it on a GPU host. Source it, then:
#
#   server_ctl [VAR=value...] ARGS...   pg_ctl -D $PGDATA -l <its log> -w ARGS,
#                                       with the extra environment
#   restart_server [VAR=value...]       a fast restart, likewise
#
# The log: $PGDATA/log where that is a file, else $PGDATA/server.log.
# SERVER_ENV (VAR=value ..., split on blanks) goes into every start's
# environment, before the arguments' (test/gpu/gpu-ptx.sh: CUDA_FORCE_PTX_JIT=1).

server_ctl() {
	local owner logf run=() envs=(${SERVER_ENV:-})
	owner=$(stat -c %U "$PGDATA") || return 1
	logf=$PGDATA/log
	[ -f "$logf" ] || logf=$PGDATA/server.log
	[ "$(id -un)" = "$owner" ] || run=(runuser -u "$owner" --)
	while [ $# -gt 0 ] && [[ $1 == *=* ]]; do
		envs+=("$1")
		shift
	done
	"${run[@]}" env PATH="$PATH" LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" "${envs[@]}" \
		pg_ctl -D "$PGDATA" -l "$logf" -w "$@" >/dev/null
}

restart_server() {
	server_ctl "$@" -m fast restart
}
