#!/bin/bash
# Installs what building and testing gpusort needs, when it is missing:
# PostgreSQL 15 server and headers from the distribution's packages (for the
# default pg_config), a C toolchain, perl's IPC::Run (the TAP tests in
# test/t, through PostgreSQL::Test::Cluster), and the en_US.UTF-8 locale (the
# key_libc suite sorts under it where it exists).  Source it; it does nothing
# when everything is there.  Needs root (or sudo) to install, and says what it
# installs into the system.

gpusort_install_deps() {
	local need=()
	command -v make >/dev/null 2>&1 || need+=(make)
	command -v gcc >/dev/null 2>&1 || need+=(gcc)
	perl -MIPC::Run -e 1 >/dev/null 2>&1 || need+=(libipc-run-perl)
	if [ -z "${PG_CONFIG:-}" ] || [ "$PG_CONFIG" = pg_config ]; then
		if ! command -v pg_config >/dev/null 2>&1 ||
			[ ! -e "$(pg_config --includedir-server 2>/dev/null)/postgres.h" ]; then
			need+=(postgresql-15 postgresql-server-dev-15 postgresql-contrib)
		fi
	fi
	# ICU's headers, where the server was built with ICU (gpusort keys its
	# collations with PostgreSQL's own collator)
	if grep -qs '^#define USE_ICU 1' "$(${PG_CONFIG:-pg_config} --includedir-server 2>/dev/null)/pg_config.h" &&
		[ ! -e /usr/include/unicode/ucol.h ]; then
		need+=(libicu-dev)
	fi
	local locale=no
	locale -a 2>/dev/null | grep -qix 'en_US.utf8' || locale=yes
	[ $locale = yes ] && ! command -v locale-gen >/dev/null 2>&1 && need+=(locales)
	[ ${#need[@]} -eq 0 ] && [ $locale = no ] && return 0
	local sudo=()
	[ "$(id -u)" = 0 ] || sudo=(sudo)
	if [ ${#need[@]} -gt 0 ]; then
		echo "== installing into the system with apt-get: ${need[*]}"
		case " ${need[*]} " in *" postgresql-15 "*)
			echo "   (PostgreSQL 15 for the default pg_config; the package also creates its own cluster, 15/main, on port 5432)" ;;
		esac
		"${sudo[@]}" apt-get update -qq &&
			DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null ||
			return 1
	fi
	if [ $locale = yes ]; then
		# a locale PostgreSQL compares text under with strcoll()
		echo "== generating the en_US.UTF-8 locale (locale-gen, system-wide)"
		grep -qx 'en_US.UTF-8 UTF-8' /etc/locale.gen 2>/dev/null ||
			echo 'en_US.UTF-8 UTF-8' | "${sudo[@]}" tee -a /etc/locale.gen >/dev/null
		"${sudo[@]}" locale-gen >/dev/null 2>&1 || echo "(no en_US.UTF-8: key_libc sorts under C.UTF-8)"
	fi
	return 0
}

# make install writes into PostgreSQL's directories: use sudo when not root.
gpusort_make_install() {
	if [ "$(id -u)" = 0 ] || [ -w "$("${PG_CONFIG:-pg_config}" --pkglibdir)" ]; then
		echo "== installing gpusort into $("${PG_CONFIG:-pg_config}" --pkglibdir) and $("${PG_CONFIG:-pg_config}" --sharedir)/extension (make install)"
		make -s install "$@"
	else
		echo "== installing gpusort into $("${PG_CONFIG:-pg_config}" --pkglibdir) and $("${PG_CONFIG:-pg_config}" --sharedir)/extension (sudo make install)"
		sudo make -s install "$@"
	fi
}
