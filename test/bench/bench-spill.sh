#!/bin/bash
# bench-spill.sh: ORDER BYs of inputs larger than the memory budget, at the
# work_mem values DBAs run with: PostgreSQL's Sort (an external merge sort
# there) against GpuSort (rows held on the GPU, spill_stage.c, or sorted
# runs spilled and merged, spill.c), side by side, through
# test/bench/bench-orders.sh, whole rows of about 170 bytes (WIDE=1; WIDE=0
# sorts rows that hold only their key).
#
#   test/bench/bench-spill.sh [RESULTS_DIR]
#
# Writes RESULTS_DIR/bench-spill[-TAG]-<host>-<cores>-<date>-<commit>.txt
# (test/lib/results-name.sh), one table per
# work_mem, and beside it each run's EXPLAIN ANALYZE.  Environment: as
# bench-orders.sh (ROWS, RUNS, DEVICE), and WORK_MEMS (default "4MB 64MB
# 256MB 1GB"), ORDERS_RE (default: int8, timestamp, text under C).
set -uo pipefail
cd "$(dirname "$0")/../.."
RESULTS=${1:-test/results}
DEVICE=${DEVICE:-cpu}
WORK_MEMS=${WORK_MEMS:-4MB 64MB 256MB 1GB}
export ONLY=${ORDERS_RE:-'^(k8|ts|pad COLLATE "C")$'} WIDE=${WIDE:-1} DEVICE
source test/lib/results-name.sh
OUTFILE=$RESULTS/$(results_name bench-spill${TAG:+-$TAG} "$DEVICE").txt
mkdir -p "$RESULTS"
: >"$OUTFILE"
for wm in $WORK_MEMS; do
	echo "== work_mem $wm"
	WORK_MEM=$wm TAG=spill-$wm test/bench/bench-orders.sh types "$RESULTS" || exit 1
	one=$RESULTS/$(results_name "bench-types-spill-$wm" "$DEVICE").txt
	cat "$one" >>"$OUTFILE"
	rm -f "$one"
done
echo "== results in $OUTFILE"
