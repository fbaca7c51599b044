#!/usr/bin/env bash
# test/bench/bench-arrays.sh: times the array functions of gpusort against
# the ways PostgreSQL sorts an array without it.
#
#   PGHOST=... PGPORT=... [PGUSER=... PGDATABASE=...] test/bench/bench-arrays.sh
#
# Builds, once per run, a table holding one N-element (default 10M) array of
# each of int4, int8 and float8 (random values, setseed for repeatability, no
# NULLs: intarray's sort() rejects them) and times, server-side
# (clock_timestamp() in a DO block), the median of RUNS runs after one
# warm-up run of:
#   gpusort              gpusort(arr)
#   gpusort_permutation  gpusort_permutation(arr)
#   intarray             intarray's sort(arr)  (int4 only)
#   unnest               (SELECT array_agg(x ORDER BY x) FROM unnest(arr) x)
#   read                 cardinality(arr): reading (detoasting) the array,
#                        which every other method includes
# Prints a table with each method's time relative to gpusort and writes it as
# CSV to test/results/arrays-<engine>-<host>.csv, where <engine> is the engine
# that actually sorted (as the array functions report it at DEBUG1: the GPU
# falls back to the CPU engine by itself).  Then draws the charts of
# test/results (test/bench/plot-results.sh) where matplotlib is there.
#
# Environment:
#   DEVICE      gpusort.device for the session (default: the server's setting)
#   N           elements per array (default 10000000)
#   RUNS        timed runs per method (default 5)
#   WORK_MEM    work_mem for the session, so that the unnest path sorts in
#               memory (default 1GB)
#   BENCH_HOST  <host> in the file name (default: hostname -s)
#   KEEP_TABLE  1 keeps the table gpusort_bench_arrays for another run
#
# Needs the extensions gpusort and intarray (postgresql-contrib) installed;
# creates them in the database when missing.
set -euo pipefail

N=${N:-10000000}
RUNS=${RUNS:-5}
WORK_MEM=${WORK_MEM:-1GB}
DEVICE=${DEVICE:-}
HOST_NAME=${BENCH_HOST:-$(hostname -s)}
KEEP_TABLE=${KEEP_TABLE:-0}
HERE=$(cd "$(dirname "$0")" && pwd)
RESULTS=$(cd "$HERE/.." && pwd)/results

die() { echo "bench-arrays: $*" >&2; exit 1; }
[[ $N =~ ^[0-9]+$ && $N -ge 1 ]] || die "N must be a positive integer, got '$N'"
[[ $RUNS =~ ^[0-9]+$ && $RUNS -ge 1 ]] || die "RUNS must be a positive integer, got '$RUNS'"
[[ $WORK_MEM =~ ^[0-9]+[kMGT]?B?$ ]] || die "WORK_MEM must be a size such as 1GB, got '$WORK_MEM'"
[[ -z $DEVICE || $DEVICE =~ ^(auto|gpu|cpu)$ ]] || die "DEVICE must be auto, gpu or cpu, got '$DEVICE'"

PSQL=(psql -X -q -At -v ON_ERROR_STOP=1)
SESSION="SET work_mem = '$WORK_MEM';"
[[ -n $DEVICE ]] && SESSION+=" SET gpusort.device = '$DEVICE';"

"${PSQL[@]}" -c "SELECT 1" >/dev/null || die "cannot connect (set PGHOST, PGPORT, PGUSER, PGDATABASE)"

# --- the arrays ---------------------------------------------------------------
echo "bench-arrays: building the arrays ($N elements each)" >&2
"${PSQL[@]}" <<EOF
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
CREATE EXTENSION IF NOT EXISTS intarray;
DROP TABLE IF EXISTS gpusort_bench_arrays;
SELECT setseed(0.42) \\g /dev/null
CREATE TABLE gpusort_bench_arrays AS
SELECT array_agg((random() * 4294967295 - 2147483648)::int4 ORDER BY g) AS i4,
       array_agg(((random() - 0.5) * 1.8e19)::int8 ORDER BY g) AS i8,
       array_agg((random() - 0.5) * 1e12 ORDER BY g) AS f8
FROM generate_series(1, $N) g;
EOF

# --- the engine that sorts, and a sanity check --------------------------------
engine_log=$("${PSQL[@]}" 2>&1 <<EOF
$SESSION
SET client_min_messages = debug1;
SELECT cardinality(gpusort(i4)) FROM gpusort_bench_arrays;
EOF
) || die "gpusort failed: $engine_log"
ENGINE=$(sed -n 's/.*sorted [0-9]* array elements on the \([a-z]*\) engine.*/\1/p' <<<"$engine_log" | head -n1)
[[ -n $ENGINE ]] || die "could not tell which engine sorted (no DEBUG1 report): $engine_log"
FALLBACK=$(sed -n 's/.*sorted [0-9]* array elements on the [a-z]* engine: \(.*\)$/\1/p' <<<"$engine_log" | head -n1)
SETTING=$("${PSQL[@]}" <<EOF | tail -n1
$SESSION
SELECT cardinality(gpusort('{1}'::int4[])) \\g /dev/null
SHOW gpusort.device;
EOF
)
ok=$("${PSQL[@]}" -c "SELECT gpusort(i4) = sort(i4) FROM gpusort_bench_arrays")
[[ $ok == t ]] || die "gpusort(int4[]) disagrees with intarray's sort()"
echo "bench-arrays: gpusort.device = $SETTING, engine = $ENGINE${FALLBACK:+ (GPU not used: $FALLBACK)}" >&2

# --- the timings ----------------------------------------------------------------
echo "bench-arrays: timing, $RUNS runs per method" >&2
mkdir -p "$RESULTS"
source "$HERE/../lib/results-name.sh"
CSV=$RESULTS/$(results_name arrays "$ENGINE").csv
"${PSQL[@]}" --csv -P tuples_only=off >"$CSV" <<EOF
$SESSION
CREATE TEMP TABLE timings (type text, method text, run int, ms float8);
DO \$\$
DECLARE
  cases text[][] := ARRAY[
    ['int4', 'gpusort', 'cardinality(gpusort(i4))'],
    ['int4', 'gpusort_permutation', 'cardinality(gpusort_permutation(i4))'],
    ['int4', 'intarray', 'cardinality(sort(i4))'],
    ['int4', 'unnest', 'cardinality((SELECT array_agg(x ORDER BY x) FROM unnest(i4) x))'],
    ['int4', 'read', 'cardinality(i4)'],
    ['int8', 'gpusort', 'cardinality(gpusort(i8))'],
    ['int8', 'gpusort_permutation', 'cardinality(gpusort_permutation(i8))'],
    ['int8', 'unnest', 'cardinality((SELECT array_agg(x ORDER BY x) FROM unnest(i8) x))'],
    ['int8', 'read', 'cardinality(i8)'],
    ['float8', 'gpusort', 'cardinality(gpusort(f8))'],
    ['float8', 'gpusort_permutation', 'cardinality(gpusort_permutation(f8))'],
    ['float8', 'unnest', 'cardinality((SELECT array_agg(x ORDER BY x) FROM unnest(f8) x))'],
    ['float8', 'read', 'cardinality(f8)']];
  t0 timestamptz;
  n bigint;
BEGIN
  FOR c IN 1 .. array_length(cases, 1) LOOP
    FOR r IN 0 .. $RUNS LOOP		-- run 0 warms up
      t0 := clock_timestamp();
      EXECUTE 'SELECT ' || cases[c][3] || ' FROM gpusort_bench_arrays' INTO n;
      IF n <> $N THEN
        RAISE EXCEPTION '% on %: % elements, expected $N', cases[c][2], cases[c][1], n;
      END IF;
      IF r > 0 THEN
        INSERT INTO timings
        VALUES (cases[c][1], cases[c][2], r,
                extract(epoch FROM clock_timestamp() - t0) * 1000);
      END IF;
    END LOOP;
  END LOOP;
END
\$\$;
WITH m AS (
  SELECT type, method,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS median_ms,
         min(ms) AS min_ms, max(ms) AS max_ms, count(*) AS runs
  FROM timings GROUP BY type, method)
SELECT '$ENGINE' AS engine, current_setting('gpusort.device') AS device,
       '$HOST_NAME' AS host, m.type, $N AS elements, m.method,
       round(m.median_ms::numeric, 1) AS median_ms,
       round(m.min_ms::numeric, 1) AS min_ms,
       round(m.max_ms::numeric, 1) AS max_ms, m.runs,
       round((m.median_ms / g.median_ms)::numeric, 2) AS vs_gpusort,
       current_setting('work_mem') AS work_mem,
       current_setting('server_version') AS server_version
FROM m JOIN m g ON g.type = m.type AND g.method = 'gpusort'
ORDER BY array_position('{int4,int8,float8}'::text[], m.type),
         array_position('{gpusort,gpusort_permutation,intarray,unnest,read}'::text[], m.method);
EOF

if [[ $KEEP_TABLE != 1 ]]; then
    "${PSQL[@]}" -c "DROP TABLE gpusort_bench_arrays"
fi

# --- the table ------------------------------------------------------------------
echo
echo "gpusort array benchmark: $N elements, median of $RUNS runs (ms); engine $ENGINE, gpusort.device = $SETTING, work_mem = $WORK_MEM"
echo "vs_gpusort: the method's median over gpusort's (above 1: gpusort is faster)"
echo
awk -F, 'NR == 1 { next }
         { rows[NR] = sprintf("%-7s %-20s %10s %10s %10s %10s", $4, $6, $7, $8, $9, $11) }
         END {
             printf "%-7s %-20s %10s %10s %10s %10s\n", "type", "method", "median", "min", "max", "vs_gpusort"
             for (i = 2; i <= NR; i++) print rows[i]
         }' "$CSV"
echo
echo "CSV: $CSV"
PLOT_INSTALL=no "$HERE/plot-results.sh" "$RESULTS"
