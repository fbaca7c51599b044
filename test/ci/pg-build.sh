#!/usr/bin/env bash
# test/ci/pg-build.sh VERSION [PREFIX]
#
# Build and install a minimal PostgreSQL VERSION (e.g. 17, 18) from the Debian
# source package postgresql-VERSION (upstream orig tarball only, Debian patches
# are ignored) into PREFIX (default /opt/postgresql-VERSION), so that gpusort can
# be built and tested against it with PGXS:
#   make PG_CONFIG=PREFIX/bin/pg_config && make PG_CONFIG=... installcheck
# Installs the server, client tools, PGXS (incl. pg_regress, and the TAP
# tests' perl modules: configured with --enable-tap-tests) and the contrib
# modules intarray and postgres_fdw.
#
# PostgreSQL 16 is in none of the Debian releases the deb-src entry names
# (bookworm has 15, trixie 17, sid 18): for 16, the script installs instead
# the complete PostgreSQL 16.2 (server, client tools, headers, PGXS,
# pg_regress; no contrib modules, no TAP tests' modules) that the PyPI package
# pgserver ships in its x86-64 wheel, downloaded with pip.
#
# - Must run as root (adds a deb-src entry, installs build deps with apt-get).
# - The deb-src entry is derived from the machine's own Debian apt sources
#   (Types: deb -> deb-src, Suites: <this release> trixie sid); added once.
# - No-op (prints the pg_config path) when PREFIX already holds a complete
#   install of the right major version, so CI can reuse a cached prefix.
# - The last line of output is always PREFIX/bin/pg_config.
#
# Environment:
#   PGBUILD_CACHE       download/build directory (default /var/cache/gpusort-pg)
#   PGBUILD_JOBS        parallel make jobs (default: nproc)
# Exit status 3: the source package could not be downloaded and none is
# cached (a mirror without it); CI then skips that version, saying so.
#
#   PGBUILD_CONFIGURE   extra configure options (e.g. "--enable-cassert --enable-debug");
#                       give such a build its own PREFIX (/opt/postgresql-18-cassert)
set -euo pipefail

usage() { echo "usage: $0 VERSION [PREFIX]" >&2; exit 2; }
log()   { echo "pg-build: $*" >&2; }
die()   { log "error: $*"; exit 1; }

[[ $# -ge 1 && $# -le 2 ]] || usage
VERSION=$1
[[ $VERSION =~ ^[0-9]+$ && $VERSION -ge 10 ]] || die "VERSION must be a major version number such as 17, got '$VERSION'"
PREFIX=${2:-/opt/postgresql-$VERSION}
[[ $PREFIX == /* ]] || die "PREFIX must be an absolute path, got '$PREFIX'"
PREFIX=${PREFIX%/}
CACHE=${PGBUILD_CACHE:-/var/cache/gpusort-pg}
JOBS=${PGBUILD_JOBS:-$(nproc)}
PG_CONFIG=$PREFIX/bin/pg_config
SRC_LIST=/etc/apt/sources.list.d/gpusort-src.sources

# Major version reported by a pg_config binary ("PostgreSQL 17.11" -> 17).
pg_major() { "$1" --version 2>/dev/null | sed -n 's/^PostgreSQL \([0-9][0-9]*\).*/\1/p'; }

# Everything CI needs from the prefix.  Paths come from pg_config: configure
# appends /postgresql to lib/share dirs unless PREFIX contains "postgres" or
# "pgsql" (for /opt/postgresql-N pg_regress is PREFIX/lib/pgxs/src/test/regress).
prefix_complete() {
    [[ -x $PG_CONFIG && "$(pg_major "$PG_CONFIG")" == "$VERSION" ]] || return 1
    local pgxs bindir sharedir pkglibdir
    pgxs=$("$PG_CONFIG" --pgxs) bindir=$("$PG_CONFIG" --bindir) \
        sharedir=$("$PG_CONFIG" --sharedir) pkglibdir=$("$PG_CONFIG" --pkglibdir) || return 1
    [[ -f $pgxs && -x ${pgxs%/src/makefiles/pgxs.mk}/src/test/regress/pg_regress ]] || return 1
    # postgres_fdw is built too, but not required: prefixes built before it was are kept
    if [[ ! -f $PREFIX/.pgserver-wheel ]]; then
        [[ -f $sharedir/extension/intarray.control && -f $pkglibdir/_int.so ]] || return 1
        # the TAP tests' support: a prefix built without it is built again
        grep -qE '^enable_tap_tests[[:space:]]*=[[:space:]]*yes' "${pgxs%/makefiles/pgxs.mk}/Makefile.global" &&
            [[ -f ${pgxs%/src/makefiles/pgxs.mk}/src/test/perl/PostgreSQL/Test/Cluster.pm ]] || return 1
    fi
    [[ -x $bindir/initdb && -x $bindir/postgres && -x $bindir/psql && -x $bindir/pg_ctl ]] || return 1
}

# --- 4. reuse an existing prefix --------------------------------------------
if [[ -x $PG_CONFIG ]]; then
    have=$(pg_major "$PG_CONFIG")
    [[ $have == "$VERSION" ]] || die "$PG_CONFIG reports major version '${have:-?}', expected $VERSION; remove $PREFIX or choose another PREFIX"
    if prefix_complete; then
        log "$PREFIX already holds PostgreSQL $("$PG_CONFIG" --version | awk '{print $2}'); nothing to do"
        echo "$PG_CONFIG"
        exit 0
    fi
    log "$PREFIX is incomplete (binaries, pg_regress, contrib modules or TAP support missing); rebuilding"
fi

[[ $EUID -eq 0 ]] || die "must run as root (apt-get); PostgreSQL itself is built without needing root"
export DEBIAN_FRONTEND=noninteractive

# --- 0. PostgreSQL 16: the installation inside the pgserver wheel -------------
# The wheel holds pgserver/pginstall/{bin,include,lib,share} (relocatable:
# pg_config and postgres find their files relative to their own path) and
# pgserver.libs/ (the libpq that psql loads through ../../../pgserver.libs).
# Both are unpacked into PREFIX as they are, and PREFIX/bin points at the
# installation's bin, so that PREFIX/bin/pg_config works like any other.
if [[ $VERSION == 16 ]]; then
    [[ -z ${PGBUILD_CONFIGURE:-} ]] || die "PostgreSQL 16 comes prebuilt from the pgserver wheel: PGBUILD_CONFIGURE does not apply"
    [[ $(uname -m) == x86_64 ]] || die "the pgserver wheel is built for x86-64 only"
    missing=()
    command -v unzip >/dev/null || missing+=(unzip)
    python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
    if (( ${#missing[@]} )); then
        log "installing: ${missing[*]}"
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
    wheels=$CACHE/wheels
    mkdir -p "$wheels"
    log "downloading the pgserver 0.1.4 wheel (PostgreSQL 16.2) with pip into $wheels"
    python3 -m pip download -q --no-deps --only-binary :all: \
        --platform manylinux2014_x86_64 --python-version 3.11 --implementation cp \
        -d "$wheels" pgserver==0.1.4 >&2
    whl=$(ls "$wheels"/pgserver-0.1.4-*.whl | head -n1)
    rm -rf "$PREFIX"
    mkdir -p "$PREFIX"
    unzip -q "$whl" 'pgserver/pginstall/*' 'pgserver.libs/*' -d "$PREFIX"
    ln -s pgserver/pginstall/bin "$PREFIX/bin"
    echo "pgserver 0.1.4 wheel: $(basename "$whl")" >"$PREFIX/.pgserver-wheel"
    prefix_complete || die "the pgserver wheel unpacked into $PREFIX is incomplete"
    log "installed PostgreSQL $("$PG_CONFIG" --version | awk '{print $2}') into $PREFIX"
    echo "$PG_CONFIG"
    exit 0
fi

# --- 1. deb-src entry ---------------------------------------------------------
# Prints a deb822 deb-src stanza derived from the machine's main Debian archive
# entry (deb822 debian.sources, or a one-line "deb URI SUITE COMPONENTS" entry).
derive_src_stanza() {
    local codename suites
    # shellcheck disable=SC1091
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    [[ -n $codename ]] || codename=$(sed -n 's/^Suites:[[:space:]]*\([^[:space:]]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
    [[ -n $codename ]] || return 1
    # <this release> trixie sid, without duplicates, in that order
    suites=$(printf '%s\n' "$codename" trixie sid | awk '!seen[$0]++' | paste -sd' ')
    if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
        # First stanza whose Suites contain the release itself (not -security/-updates).
        awk -v cn="$codename" -v suites="$suites" '
            BEGIN { RS = ""; FS = "\n" }
            {
                ok = 0
                for (i = 1; i <= NF; i++)
                    if ($i ~ /^Suites:/) { n = split($i, w, /[ \t]+/); for (j = 2; j <= n; j++) if (w[j] == cn) ok = 1 }
                if (!ok) next
                for (i = 1; i <= NF; i++) {
                    line = $i
                    if (line ~ /^Types:/)       line = "Types: deb-src"
                    else if (line ~ /^Suites:/) line = "Suites: " suites
                    print line
                }
                exit
            }' /etc/apt/sources.list.d/debian.sources
    else
        # One-line format: first "deb [opts] URI CODENAME ..." line.
        awk -v cn="$codename" -v suites="$suites" '
            $1 == "deb" {
                i = 2; signed = ""
                if ($2 ~ /^\[/) { for (; i <= NF; i++) { if ($i ~ /signed-by=/) { signed = $i; sub(/.*signed-by=/, "", signed); sub(/\]$/, "", signed) } if ($i ~ /\]$/) break } i++ }
                if ($(i + 1) != cn) next
                print "Types: deb-src"; print "URIs: " $i; print "Suites: " suites; print "Components: main"
                if (signed == "" && (getline _ < "/usr/share/keyrings/debian-archive-keyring.gpg") > 0) signed = "/usr/share/keyrings/debian-archive-keyring.gpg"
                if (signed != "") print "Signed-By: " signed
                exit
            }' /etc/apt/sources.list 2>/dev/null
    fi
}

need_update=0
if [[ ! -f $SRC_LIST ]]; then
    stanza=$(derive_src_stanza) || true
    [[ -n ${stanza:-} ]] || die "could not derive a deb-src entry from the Debian apt sources of this machine"
    printf '%s\n' "$stanza" > "$SRC_LIST"
    log "added $SRC_LIST"
    need_update=1
elif ! apt-cache showsrc "postgresql-$VERSION" 2>/dev/null | grep -q '^Package:'; then
    need_update=1   # entry present but source indexes not fetched yet
fi
if (( need_update )); then
    apt-get update -qq
fi

# --- 2. build dependencies (minimal: no LLVM, ICU, readline, OpenSSL) ---------
# (IPC::Run: configure --enable-tap-tests checks for it)
deps=(gcc make libc6-dev bison flex perl libipc-run-perl zlib1g-dev bzip2 xz-utils)
missing=()
for p in "${deps[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if (( ${#missing[@]} )); then
    log "installing build dependencies: ${missing[*]}"
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- 3. fetch, unpack, configure, build, install ------------------------------
mkdir -p "$CACHE"
cd "$CACHE"
# The cache is root-owned: download as root instead of the _apt sandbox user.
fetch() { apt-get source --download-only -qq -o APT::Sandbox::User=root "postgresql-$VERSION" >/dev/null; }
if ! fetch; then
    log "apt-get source failed; refreshing indexes and retrying"
    if ! { apt-get update -qq && fetch; }; then
        log "download failed; falling back to a cached tarball if any"
    fi
fi
orig=
for f in "postgresql-${VERSION}_"*.orig.tar.*; do
    if [[ -f $f && $f != *.asc ]]; then orig+="$f"$'\n'; fi
done
orig=$(printf '%s' "$orig" | sort -V | tail -n1)
if [[ -z $orig ]]; then
    # exit status 3: the source is not to be had here (CI skips the version)
    log "error: no orig tarball for postgresql-$VERSION in $CACHE, and the mirrors gave none"
    exit 3
fi
log "using $CACHE/$orig"

# one build directory per prefix: a cassert build does not remove another's
build=$CACHE/build-$(basename "$PREFIX")
rm -rf "$build"
mkdir -p "$build"
tar -xf "$orig" -C "$build"
srcdir=$(find "$build" -mindepth 1 -maxdepth 1 -type d -name 'postgresql-*' | head -n1)
[[ -n $srcdir ]] || die "unexpected layout of $orig"
cd "$srcdir"

logf=$build/build.log
log "building in $srcdir (log: $logf)"
# shellcheck disable=SC2086  # PGBUILD_CONFIGURE is a word list on purpose
if ! { ./configure --prefix="$PREFIX" \
            --without-llvm --without-icu --without-readline \
            --disable-nls --enable-tap-tests ${PGBUILD_CONFIGURE:-} \
       && make -j"$JOBS" \
       && make -j"$JOBS" -C contrib/intarray \
       && make -j"$JOBS" -C contrib/postgres_fdw \
       && make install \
       && make -C contrib/intarray install \
       && make -C contrib/postgres_fdw install; } >"$logf" 2>&1; then
    tail -n 40 "$logf" >&2
    die "build of PostgreSQL $VERSION failed (full log: $logf)"
fi

prefix_complete || die "install into $PREFIX is incomplete (pg_config, binaries, pg_regress, contrib modules or TAP support missing)"
log "installed PostgreSQL $("$PG_CONFIG" --version | awk '{print $2}') into $PREFIX"
echo "$PG_CONFIG"
