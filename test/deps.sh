#!/bin/bash
# Installs what building and testing gpusort needs, when it is missing:
# PostgreSQL 15 server and headers from the distribution's packages (for the
# default pg_config) and a C toolchain.  Source it; it does nothing when
# everything is there.  Needs root (or sudo) to install.

gpusort_install_deps() {
	local need=()
	command -v make >/dev/null 2>&1 || need+=(make)
	command -v gcc >/dev/null 2>&1 || need+=(gcc)
	if [ -z "${PG_CONFIG:-}" ] || [ "$PG_CONFIG" = pg_config ]; then
		if ! command -v pg_config >/dev/null 2>&1 ||
			[ ! -e "$(pg_config --includedir-server 2>/dev/null)/postgres.h" ]; then
			need+=(postgresql-15 postgresql-server-dev-15 postgresql-contrib)
		fi
	fi
	[ ${#need[@]} -eq 0 ] && return 0
	local sudo=()
	[ "$(id -u)" = 0 ] || sudo=(sudo)
	echo "installing: ${need[*]}"
	"${sudo[@]}" apt-get update -qq &&
		DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}

# make install writes into PostgreSQL's directories: use sudo when not root.
gpusort_make_install() {
	if [ "$(id -u)" = 0 ] || [ -w "$("${PG_CONFIG:-pg_config}" --pkglibdir)" ]; then
		make -s install "$@"
	else
		sudo make -s install "$@"
	fi
}
