/*
 * gs_tuning.cuh
 *	  Every tuning value of the kernels, in one place, by algorithm (as CUB
 *	  keeps its tuning policies): threads per block, pairs per thread, blocks
 *	  per SM, look-back windows, pass counts and size thresholds.  Each has
 *	  the measurement that chose it: NVIDIA H200, 100M pairs unless noted,
 *	  from test/kernels/NOTES.md (section named) and its results/ CSVs.
 *	  "Not varied": a first choice that no measurement has challenged yet.
 *
 *	  Sizes that an algorithm's structure fixes (32 lanes, the key-range
 *	  pass's 4096-bin histogram, GS_BITONIC_MAX and GS_COUNTING_MAX_RANGE of
 *	  the C API) are not tuning values and stay where they are defined.
 */
#ifndef GS_TUNING_CUH
#define GS_TUNING_CUH

/* ---- radix sort (gs_radix.cu) ---- */

/* digit width: one look-back thread per digit value; not varied */
#define RADIX_BITS 8
/* threads per digit-pass tile: 384 x 21/16 beat 256 x 16 by 14-26 % (NOTES "Versions", v2) */
#define RT 384
/* pairs per thread, 32-bit keys in and out: 24.83 vs 24.65 G/s for 13 (NOTES "Versions", v4 tile shapes) */
#define RITEMS_NARROW 21
/* pairs per thread, 64-bit keys or packed words: packed 2.881 vs 3.019 ms for 3 blocks/SM (NOTES v8; ab-NVIDIA_H200-v8.csv) */
#define RITEMS_WIDE 16
/* digit-pass blocks per SM (80 registers): the large tiles above need 2 (NOTES "Versions", v4) */
#define RADIX_BLOCKS_PER_SM 2
/* look-back: predecessors' status words read at once; 64-bit full 9.61 vs 9.84 ms for 1 (NOTES v6) */
#define RLB_WINDOW 4
/* most digit passes a sort may take without the histogram pass; 32-bit full 3.96 vs 4.03 ms (NOTES v6) */
#define RADIX_FOLD_PASSES 4

/* ---- upfront histograms (radix_histogram, counting_hist) ---- */

/* threads per block; not varied */
#define GS_HIST_THREADS 256
/* keys per thread that size the grid, capped at GS_HIST_BLOCKS_PER_SM; not varied */
#define GS_HIST_ITEMS 16
#define GS_HIST_BLOCKS_PER_SM 4
/* loads in flight per thread: part of v2's +14-26 % (NOTES "Versions", v2) */
#define GS_HIST_LOADS 4

/* ---- counting sort (gs_counting.cu) ---- */

/* threads per block, 2 blocks per SM (64 registers); not varied since v4 (NOTES "Before v6") */
#define CT 512
#define CBLOCKS_PER_SM 2
/* pairs per thread: 1.386-1.388 vs 1.45-1.50 ms at 16; 22+ do not fit range 4096 (NOTES v7) */
#define CITEMS 20
/* pairs per thread, 32-bit keys of <= CNARROW_RANGE values: 22 1.021 ms, 24 1.027 (40 B spills), 20 1.105 (NOTES v8) */
#define CITEMS_NARROW 22
/* widest range at which CITEMS_NARROW tiles keep 2 blocks per SM (shared memory; static_assert in gs_counting.cu) */
#define CNARROW_RANGE 1024
/*
 * (The counting sort's look-back reads one status word per key at a time,
 * two keys together: 1 word 1.49 ms, 2 words 1.54, 4 words 1.67 (NOTES v6).)
 */

/* ---- warpsort (gs_warpsort.cu) ---- */

/* pairs per lane in a warp tile / merge step (WS_T = 256); not varied */
#define WS_E 8
/* warps per block of the warp kernels; not varied */
#define WS_WARPS 4
/* outputs per warp in a merge: 4096 gave 10M 2.70 / 100M 27.25 ms vs 2.61 / 27.0-27.2 (NOTES v6) */
#define WS_PIECE 2048
/* first runs of the global merges: 100M 26.43 vs 26.77 ms for 4096 (NOTES v7) */
#define WS_RUN0 8192
/* log2 of the elements per thread of the tile merge: 16 gave 26.43 / 2.54 ms, 8 gave 26.75 / 2.59 (NOTES v7) */
#define WS_MF 4
/* tile-merge blocks per SM at 16 elements per thread (512 threads, 96 KB at 64-bit keys; NOTES v7) */
#define WS_MERGE_TILES_MINB 2
/* warp_merge's blocks per SM: 1 (127 registers) 1.8 % faster at 10M, 5 (96) 1.5 % faster at 100M (NOTES v6) */
#define WS_MERGE_MINB_SMALL 1
#define WS_MERGE_MINB_LARGE 5
/* below this many pairs warp_merge takes WS_MERGE_MINB_SMALL (between the 10M and 100M points above) */
#define WS_WIDE_REGS_MAX_N (1u << 25)

/* ---- bitonic segments (gs_bitonic.cu) ---- */

/* most threads per block: one per compare-exchange up to a full block; not varied */
#define BITONIC_MAX_THREADS 1024

/* ---- sample sort (gs_samplesort.cu) ---- */

/* pairs per bucket aimed at (2..SS_MAX_BUCKETS buckets), and threads of its small kernels; not varied */
#define SS_BUCKET_PAIRS 2048
#define SS_MAX_BUCKETS 1024
#define SS_THREADS 256

/* ---- key range (gs_keyrange.cu) ---- */

/* 1024 threads x 2 blocks per SM, 4 loads in flight: few blocks add into low_hist (NOTES v6) */
#define KR_THREADS 1024
#define KR_BLOCKS_PER_SM 2
#define KR_UNROLL 4

/* ---- prefix sum (gs_scan.cu) ---- */

/* threads per block and counts per thread; not varied */
#define SCAN_THREADS 256
#define SCAN_ITEMS 8

/* ---- grid-stride element-wise kernels (gs_elementwise.cu, gs_values.cu) ---- */

/* threads per block, and blocks per SM at most; not varied */
#define GS_STRIDE_THREADS 256
#define GS_STRIDE_BLOCKS_PER_SM 16

#endif							/* GS_TUNING_CUH */
