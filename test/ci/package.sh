#!/bin/bash
# Builds the Debian package postgresql-15-gpusort from debian/ (pg_buildext,
# dpkg-buildpackage -b), installs it with dpkg into the system PostgreSQL 15,
# checks on a throwaway cluster that it loads (shared_preload_libraries =
# gpusort), that CREATE EXTENSION gpusort makes the control file's default version and that an
# ORDER BY runs on GpuSort, then removes the package.
#
# - Needs root (or sudo): apt-get for the build tools, dpkg for the package.
# - Builds in a copy of the source tree in a temporary directory (the
#   package build cleans the tree it builds in), with CUDA when nvcc is found
#   as make does (several minutes: every GPU architecture); GPUSORT_CUDA=no
#   builds the CPU-only package.  CUDA objects that this tree has built and
#   that are up to date with their sources and flags (make -q) are copied
#   into it and reused, as in CI, where the PostgreSQL 15 step has just
#   built them (for the first PostgreSQL version only: pg_buildext cleans
#   between versions); REUSE_CUDA=0 builds them anew.
# - Files of gpusort that `make install` left in the system PostgreSQL (no
#   package owns them) are set aside while the package is installed and put
#   back after it is removed.
# Ends with a line "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/../.."
export DEBIAN_FRONTEND=noninteractive
sudo=()
[ "$(id -u)" = 0 ] || sudo=(sudo)

pg_config=/usr/lib/postgresql/15/bin/pg_config
need=()
for p in dpkg-dev debhelper fakeroot postgresql-server-dev-all postgresql-15; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "== installing into the system (apt-get): ${need[*]}"
	"${sudo[@]}" apt-get update -qq
	"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

work=$(mktemp -d /tmp/gpusort-package.XXXXXX)
installed=no
aside=$work/set-aside
restore() {
	set +e
	[ "$(type -t cluster_stop)" = function ] && cluster_stop
	if [ $installed = yes ]; then
		echo "== removing the package (dpkg --purge postgresql-15-gpusort)"
		"${sudo[@]}" dpkg --purge postgresql-15-gpusort >/dev/null
	fi
	if [ -d "$aside" ] && [ -n "$(find "$aside" -type f)" ]; then
		echo "== putting back the files make install had left in the system PostgreSQL"
		(cd "$aside" && find . -type f) | while read -r f; do
			"${sudo[@]}" cp -a "$aside/${f#./}" "/${f#./}"
		done
	fi
	rm -rf "$work"
}
trap restore EXIT

version=$(dpkg-parsechangelog -S Version)
src=$work/gpusort-$version
echo "== copying the source tree to $src"
mkdir -p "$src"
if git rev-parse --git-dir >/dev/null 2>&1; then
	# (-p: the times that make compares, for the objects reused below)
	git ls-files -z --cached --others --exclude-standard | xargs -0 cp -p --parents -t "$src"
else
	tar --exclude='*.o' --exclude='*.so' --exclude=.kbuild -cf - . | tar -xf - -C "$src"
fi

buildopts=(-us -uc -b)
if [ "${GPUSORT_CUDA:-}" = no ] || [ "$(make -s print-cuda PG_CONFIG=$pg_config 2>/dev/null)" != yes ]; then
	echo "== building the package (dpkg-buildpackage -b, CPU-only: no nvcc or GPUSORT_CUDA=no)"
	export DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:+$DEB_BUILD_OPTIONS }nocuda"
elif objs=$(make -s print-cuda-objs PG_CONFIG=$pg_config) && [ "${REUSE_CUDA:-1}" != 0 ] &&
	make -q $objs PG_CONFIG=$pg_config 2>/dev/null; then
	echo "== building the package (dpkg-buildpackage -b, with CUDA: the CUDA objects of this tree, up to date, reused)"
	# cleaned first as dpkg-buildpackage would (which would remove them)
	(cd "$src" && debian/rules clean) >"$work/clean.log" 2>&1 ||
		{ tail -n 20 "$work/clean.log"; echo "package clean failed"; echo "0 passed, 1 failed"; exit 1; }
	cp -p --parents $objs cuda/nvccflags.stamp "$src"
	buildopts+=(-nc)
else
	echo "== building the package (dpkg-buildpackage -b, with CUDA: nvcc takes several minutes)"
fi
start=$(date +%s)
if ! (cd "$src" && dpkg-buildpackage "${buildopts[@]}") >"$work/build.log" 2>&1; then
	tail -n 40 "$work/build.log"
	echo "package build failed"
	echo "0 passed, 1 failed"
	exit 1
fi
deb=$(ls "$work"/postgresql-15-gpusort_"$version"_*.deb)
echo "== built $(basename "$deb") in $(($(date +%s) - start)) s:"
dpkg-deb -c "$deb" | awk '{print "   " $6}' | grep -v '/$'

# Files the package brings that exist already, owned by no package: make install's.
mkdir -p "$aside"
while read -r f; do
	f=${f#.}
	[ -f "$f" ] || continue
	dpkg -S "$f" >/dev/null 2>&1 && continue
	mkdir -p "$aside$(dirname "$f")"
	cp -a "$f" "$aside$f"
done < <(dpkg-deb --fsys-tarfile "$deb" | tar -t | grep -v '/$')
if [ -n "$(find "$aside" -type f)" ]; then
	echo "== set aside while the package is installed (make install's, no package's):"
	(cd "$aside" && find . -type f | sed 's/^\./   /')
fi

echo "== installing into the system PostgreSQL 15: dpkg -i $(basename "$deb")"
"${sudo[@]}" dpkg -i "$deb" >/dev/null
installed=yes
dpkg -s postgresql-15-gpusort | grep -E '^(Status|Version|Depends):' | sed 's/^/   /'

passed=0
failed=0
check() {
	local what=$1 got=$2 want=$3
	if [[ $got == "$want" ]]; then
		echo "ok - $what"
		passed=$((passed + 1))
	else
		echo "not ok - $what: got '$got', want '$want'"
		failed=$((failed + 1))
	fi
}

export PG_CONFIG=$pg_config
source test/lib/cluster.sh
cluster_start -c shared_preload_libraries=gpusort -c gpusort.device=cpu
psql=(psql -X -q -A -t -v ON_ERROR_STOP=1)
check "CREATE EXTENSION gpusort" \
	"$("${psql[@]}" -c 'CREATE EXTENSION gpusort' -c "SELECT extversion FROM pg_extension WHERE extname = 'gpusort'")" "$(sed -n "s/^default_version = '\(.*\)'/\1/p" gpusort.control)"
check "gpusort is preloaded" \
	"$("${psql[@]}" -c "SELECT setting FROM pg_settings WHERE name = 'gpusort.enabled'")" on
check "an array function" "$("${psql[@]}" -c "SELECT gpusort(ARRAY[3, 1, 2])")" '{1,2,3}'
plan=$("${psql[@]}" -c "SET gpusort.min_rows = 0" \
	-c "EXPLAIN (COSTS OFF) SELECT g FROM generate_series(1, 1000) g ORDER BY g DESC")
check "ORDER BY is planned on GpuSort" "$(echo "$plan" | grep -c 'Custom Scan (GpuSort)')" 1
check "ORDER BY sorts" "$("${psql[@]}" -c "SET gpusort.min_rows = 0" \
	-c "SELECT string_agg(g::text, ',') FROM (SELECT g FROM generate_series(1, 5) g ORDER BY g DESC) s")" 5,4,3,2,1
docdir=/usr/share/doc/postgresql-15-gpusort
links=$(grep -o '](docs/[^)#]*' README.md | cut -c3- | sort -u)
check "the documents README.md links to are installed beside it" \
	"$(for f in README.md $links; do [ -f "$docdir/$f" ] || echo "$f"; done)" ""
check "DROP EXTENSION gpusort" "$("${psql[@]}" -c 'DROP EXTENSION gpusort' -c "SELECT count(*) FROM pg_extension WHERE extname = 'gpusort'")" 0

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
