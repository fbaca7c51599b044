/*
 * gs_tuning.cuh
 *	  Every tuning value of the kernels, in one place: a policy struct per
 *	  algorithm and per shared pass (as CUB keeps its tuning policies), and
 *	  one constant of it, the tuning in use.  The kernels read these
 *	  constants at compile time (each .cu names the values it uses), so a
 *	  policy costs nothing at run time; the dispatcher's table of algorithms
 *	  (gs_sort.cu) points at each algorithm's policy.
 *
 *	  Each value has the measurement that chose it: NVIDIA H200, 100M pairs
 *	  unless noted, from test/gpu/kernels/NOTES.md (section named) and its
 *	  results/ CSVs.  "Not varied": a first choice that no measurement has
 *	  challenged yet.  The same values serve every architecture (sm_75 up);
 *	  what a GPU has less of than an H200 is taken into account where it
 *	  would make a launch fail:
 *	  - shared memory per block (227 KB on Hopper, 163 on an A100, 99 on an
 *	    Ada or Ampere GA10x, 64 on Turing): the device's
 *	    (cudaDevAttrMaxSharedMemoryPerBlockOptin, gs_context.smem_optin),
 *	    against which each kernel that asks for more than 48 KB picks its
 *	    tile (gs_smem_fits): the counting sort the small tile below or the
 *	    radix sort, the radix sort's first pass no folded histograms, the
 *	    warpsort a shorter first run;
 *	  - resident threads per SM (2048 on sm_80, sm_90 and sm_100, 1536 on
 *	    sm_86 to sm_89 and sm_120, 1024 on sm_75): GS_ARCH_THREADS_PER_SM
 *	    below caps the blocks per SM that a kernel's launch bounds ask for,
 *	    and the device's (gs_context.threads_per_sm) the grids sized by
 *	    blocks per SM (gs_resident_blocks);
 *	  - SMs: every grid is sized by the device's count (gs_context.sm_count).
 *
 *	  Sizes that an algorithm's structure fixes (32 lanes, the key-range
 *	  pass's 4096-bin histogram, GS_BITONIC_MAX and GS_COUNTING_MAX_RANGE of
 *	  the C API) are not tuning values and stay where they are defined.
 *	  Initializers are positional, in the order of the struct's fields.
 */
#ifndef GS_TUNING_CUH
#define GS_TUNING_CUH

#include <stdint.h>

/*
 * Resident threads per SM of the architecture that the device pass compiles
 * for (the CUDA Programming Guide's table; one not listed there takes the
 * smaller, 1536).  A kernel's __launch_bounds__ asks for
 * GS_MIN_BLOCKS(threads, blocks): its policy's blocks per SM, or as many as
 * fit that architecture.
 */
#if !defined(__CUDA_ARCH__)
#define GS_ARCH_THREADS_PER_SM 2048	/* the host pass: not used */
#elif __CUDA_ARCH__ == 750
#define GS_ARCH_THREADS_PER_SM 1024
#elif __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || \
	(__CUDA_ARCH__ >= 1000 && __CUDA_ARCH__ < 1100)
#define GS_ARCH_THREADS_PER_SM 2048
#else
#define GS_ARCH_THREADS_PER_SM 1536
#endif
#define GS_MIN_BLOCKS(threads, blocks) \
	((threads) * (blocks) <= GS_ARCH_THREADS_PER_SM ? (blocks) : \
	 GS_ARCH_THREADS_PER_SM / (threads))

/* ---- radix sort (gs_radix.cu) ---- */

typedef struct gs_radix_policy
{
	int			radix_bits;		/* digit width: one look-back thread per digit */
	int			threads;		/* threads per digit-pass tile */
	int			items_narrow;	/* pairs per thread, 32-bit keys in and out */
	int			items_wide;		/* pairs per thread, 64-bit keys or packed words */
	int			blocks_per_sm;	/* digit-pass blocks per SM */
	int			lookback_window;	/* predecessors' status words read at once */
	int			fold_passes;	/* most digit passes without the histogram pass */
} gs_radix_policy;

constexpr gs_radix_policy gs_radix_tuning = {
	/* radix_bits: not varied */
	8,
	/* threads: 384 x 21/16 beat 256 x 16 by 14-26 % (NOTES "Versions", v2) */
	384,
	/* items_narrow: 24.83 vs 24.65 G/s for 13 (NOTES "Versions", v4 tile shapes) */
	21,
	/* items_wide: packed 2.881 vs 3.019 ms for 3 blocks/SM (NOTES v8; kernels-ab-h200-16core-2026-11-21-6f6af90.csv) */
	16,
	/* blocks_per_sm (80 registers): the large tiles above need 2 (NOTES "Versions", v4) */
	2,
	/* lookback_window: 64-bit full 9.61 vs 9.84 ms for 1 (NOTES v6) */
	4,
	/* fold_passes: 32-bit full 3.96 vs 4.03 ms (NOTES v6) */
	4,
};

/* ---- upfront histograms (radix_histogram, counting_hist) ---- */

typedef struct gs_hist_policy
{
	int			threads;		/* threads per block */
	int			items;			/* keys per thread that size the grid */
	int			blocks_per_sm;	/* the grid's cap, per SM */
	int			loads;			/* loads in flight per thread */
} gs_hist_policy;

constexpr gs_hist_policy gs_hist_tuning = {
	/* threads, items, blocks_per_sm: not varied */
	256,
	16,
	4,
	/* loads: part of v2's +14-26 % (NOTES "Versions", v2) */
	4,
};

/* ---- counting sort (gs_counting.cu) ---- */

typedef struct gs_counting_policy
{
	int			threads;		/* threads per block */
	int			blocks_per_sm;	/* blocks per SM (64 registers) */
	int			items;			/* pairs per thread */
	int			items_narrow;	/* pairs per thread, 32-bit keys of <= narrow_range values */
	int			narrow_range;	/* widest range at which items_narrow keeps blocks_per_sm */
	int			items_small;	/* pairs per thread where a GPU's shared memory
								 * per block does not hold the tile of items
								 * at the key range (64 KB: ranges up to about
								 * 1000, where items fits about 100) */
} gs_counting_policy;

constexpr gs_counting_policy gs_counting_tuning = {
	/* threads, blocks_per_sm: not varied since v4 (NOTES "Before v6") */
	512,
	2,
	/* items: 1.386-1.388 vs 1.45-1.50 ms at 16; 22+ do not fit range 4096 (NOTES v7) */
	20,
	/* items_narrow: 22 1.021 ms, 24 1.027 (40 B spills), 20 1.105 (NOTES v8) */
	22,
	/* narrow_range: shared memory (static_assert in gs_counting.cu) */
	1024,
	/* items_small: not measured (no GPU below Hopper measured yet) */
	8,
};

/*
 * (The counting sort's look-back reads one status word per key at a time,
 * two keys together: 1 word 1.49 ms, 2 words 1.54, 4 words 1.67 (NOTES v6).)
 */

/* ---- warpsort (gs_warpsort.cu) ---- */

typedef struct gs_warpsort_policy
{
	int			items;			/* pairs per lane in a warp tile / merge step */
	int			warps;			/* warps per block of the warp kernels */
	int			piece;			/* outputs per warp in a merge */
	int			run0;			/* first runs of the global merges */
	int			merge_log2_items;	/* log2 of the tile merge's elements per thread */
	int			merge_tiles_blocks_per_sm;	/* tile-merge blocks per SM */
	int			merge_blocks_per_sm_small;	/* warp_merge's blocks per SM, small n */
	int			merge_blocks_per_sm_large;	/* the same, large n */
	uint32_t	small_n_max;	/* below this many pairs n is small */
} gs_warpsort_policy;

constexpr gs_warpsort_policy gs_warpsort_tuning = {
	/* items (a warp tile of 256 pairs), warps: not varied */
	8,
	4,
	/* piece: 4096 gave 10M 2.70 / 100M 27.25 ms vs 2.61 / 27.0-27.2 (NOTES v6) */
	2048,
	/* run0: 100M 26.43 vs 26.77 ms for 4096 (NOTES v7) */
	8192,
	/* merge_log2_items: 16 gave 26.43 / 2.54 ms, 8 gave 26.75 / 2.59 (NOTES v7) */
	4,
	/*
	 * merge_tiles_blocks_per_sm: 512 threads, 96 KB at 64-bit keys (NOTES
	 * v7); a GPU with less shared memory per block merges shorter first
	 * runs (run0 / 2 on Turing at 64-bit keys)
	 */
	2,
	/* merge_blocks_per_sm_small: 1 (127 registers) 1.8 % faster at 10M (NOTES v6) */
	1,
	/* merge_blocks_per_sm_large: 5 (96) 1.5 % faster at 100M (NOTES v6) */
	5,
	/* small_n_max: between the 10M and 100M points above */
	1u << 25,
};

/* ---- bitonic segments (gs_bitonic.cu) ---- */

typedef struct gs_bitonic_policy
{
	int			max_threads;	/* one per compare-exchange up to this many */
} gs_bitonic_policy;

constexpr gs_bitonic_policy gs_bitonic_tuning = {
	/* max_threads: a full block; not varied */
	1024,
};

/* ---- sample sort (gs_samplesort.cu) ---- */

typedef struct gs_samplesort_policy
{
	int			bucket_pairs;	/* pairs per bucket aimed at (the full sort) */
	int			max_buckets;	/* 2..max_buckets buckets (the full sort) */
	int			threads;		/* threads of the bounds and scatter kernels */
	int			tile_threads;	/* threads of the tile sort (a power of two) */
	int			tile_items;		/* pairs per thread of the tile sort */
	int			tile_blocks_per_sm;	/* tile-sort blocks per SM (register cap) */
} gs_samplesort_policy;

/*
 * The partition's tile (tile_threads x tile_items pairs) must be a power of
 * two from 4096 to 8192: gpusort_cuda.h states the bucket bound for tiles of
 * at most 8192 pairs, and the bound's proof needs 2 x tile >= 8192, the most
 * buckets (static_assert in gs_samplesort.cu).
 */
constexpr gs_samplesort_policy gs_samplesort_tuning = {
	/* bucket_pairs, max_buckets, threads: not varied */
	2048,
	1024,
	256,
	/*
	 * tile_threads, tile_items, tile_blocks_per_sm: 4096-pair tiles, not
	 * measured yet.  ptxas (64-bit keys, then 16-byte pairs): 256 x 16
	 * took 167 registers (1 block per SM) unbounded, 128 with 4 B of spills
	 * at 2 blocks per SM (67.5 KB of shared memory each, more than Turing's
	 * 64: the pairs are 12 bytes now, 48 KB); 512 x 8 at 2 blocks spilled
	 * 92 B.  32-bit keys (packed 8-byte pairs): 54 registers.
	 */
	256,
	16,
	2,
};

/* ---- key range (gs_keyrange.cu) ---- */

typedef struct gs_keyrange_policy
{
	int			threads;		/* threads per block */
	int			blocks_per_sm;	/* the grid's cap, per SM */
	int			unroll;			/* loads in flight per thread */
} gs_keyrange_policy;

constexpr gs_keyrange_policy gs_keyrange_tuning = {
	/* 1024 x 2 per SM, 4 loads in flight: few blocks add into low_hist (NOTES v6) */
	1024,
	2,
	4,
};

/* ---- prefix sum (gs_scan.cu) ---- */

typedef struct gs_scan_policy
{
	int			threads;		/* threads per block */
	int			items;			/* counts per thread */
} gs_scan_policy;

constexpr gs_scan_policy gs_scan_tuning = {
	/* not varied */
	256,
	8,
};

/* ---- grid-stride element-wise kernels (gs_elementwise.cu, gs_values.cu) ---- */

typedef struct gs_stride_policy
{
	int			threads;		/* threads per block */
	int			blocks_per_sm;	/* blocks per SM at most */
} gs_stride_policy;

constexpr gs_stride_policy gs_stride_tuning = {
	/* not varied */
	256,
	16,
};

#endif							/* GS_TUNING_CUH */
