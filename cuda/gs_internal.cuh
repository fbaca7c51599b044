/*
 * gs_internal.cuh
 *	  What the library's .cu files share and the C API does not show: the
 *	  context's layout, error helpers, scratch slots, grid sizes, key
 *	  traits, block-wide helpers, and the entry points of each algorithm
 *	  (one .cu file each).  Tuning values: gs_tuning.cuh; the one-sweep
 *	  passes' shared parts: gs_onesweep.cuh.
 */
#ifndef GS_INTERNAL_CUH
#define GS_INTERNAL_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include "gpusort_cuda.h"
#include "gs_tuning.cuh"

/* The shared passes' policies (gs_tuning.cuh) by the names the kernels use */
#define GS_HIST_THREADS (gs_hist_tuning.threads)
#define GS_HIST_ITEMS (gs_hist_tuning.items)
#define GS_HIST_BLOCKS_PER_SM (gs_hist_tuning.blocks_per_sm)
#define GS_HIST_LOADS (gs_hist_tuning.loads)
#define GS_STRIDE_THREADS (gs_stride_tuning.threads)
#define GS_STRIDE_BLOCKS_PER_SM (gs_stride_tuning.blocks_per_sm)

/*
 * Scratch slots: each algorithm uses fixed slots, so that an algorithm that
 * calls another (the sample sort sorts its buckets with the radix sort) does
 * not hand out the same memory twice.
 */
enum gs_slot
{
	GS_SLOT_ALT_KEYS = 0,		/* second key buffer (radix, warpsort) */
	GS_SLOT_ALT_VALS,			/* second value buffer */
	GS_SLOT_WORK,				/* count matrix, merge partitions */
	GS_SLOT_STATUS,				/* radix look-back status words, nothing else */
	GS_SLOT_SMALL,				/* key range, histograms, offsets */
	GS_SLOT_BUCKET_KEYS,		/* sample sort: relocated keys */
	GS_SLOT_BUCKET_VALS,		/* sample sort: relocated values */
	GS_SLOT_BUCKET_WORK,		/* sample sort: samples, splitters, counts */
	GS_SLOT_SAMPLE_KEYS,		/* sample sort: samples (sorted in place) */
	GS_SLOT_SAMPLE_VALS,
	GS_NSLOTS
};

struct gs_context
{
	int			device;
	int			sm_count;
	int			threads_per_sm; /* resident threads per SM at most */
	size_t		smem_optin;		/* shared memory one block may have */
	size_t		smem_device;	/* the device's, before a test's cap */
	cudaStream_t stream;
	size_t		mem_limit;		/* 0: none */
	size_t		mem_used;		/* scratch + user buffers */
	void	   *slot[GS_NSLOTS];
	size_t		slot_bytes[GS_NSLOTS];
	uint32_t	epoch;			/* look-back status generation */
	const volatile int *interrupt;
	void	   *allocs;			/* std::unordered_map of user buffers */
	char		msg[512];
};

/* Records a message (printf-style) and returns status. */
gs_status	gs_fail(gs_context *ctx, gs_status status, const char *fmt, ...);
/* Turns a CUDA error into GS_ERR_CUDA / GS_ERR_NO_MEMORY with a message. */
gs_status	gs_cuda_fail(gs_context *ctx, cudaError_t err, const char *what);
/* After a launch: the launch error, and the interrupt flag. */
gs_status	gs_after_launch(gs_context *ctx, const char *what);
/* Device pointer of at least bytes in a slot (contents not kept on growth). */
gs_status	gs_scratch(gs_context *ctx, int slot, size_t bytes, void **ptr);
/* A fresh look-back generation; clears the status words when it wraps. */
uint32_t	gs_next_epoch(gs_context *ctx);

#define GS_CHECK(ctx, call) \
	do { cudaError_t e_ = (call); \
		 if (e_ != cudaSuccess) return gs_cuda_fail((ctx), e_, #call); } while (0)
#define GS_TRY(call) \
	do { gs_status s_ = (call); if (s_ != GS_OK) return s_; } while (0)

static inline uint32_t
gs_blocks(uint64_t n, uint32_t per_block)
{
	return (uint32_t) ((n + per_block - 1) / per_block);
}

/*
 * Blocks of threads that the device keeps resident at once: per_sm (a
 * policy's blocks per SM) on each SM, or as many as fit its threads.
 */
static inline uint32_t
gs_resident_blocks(const gs_context *ctx, int threads, int per_sm)
{
	int			fit = ctx->threads_per_sm / threads;

	if (fit > per_sm)
		fit = per_sm;
	return (uint32_t) ctx->sm_count * (uint32_t) (fit > 0 ? fit : 1);
}

/*
 * Does kernel, with dyn bytes of dynamic shared memory, fit one block of
 * the device (its static shared memory included)?  Kernels that ask for
 * more than 48 KB choose their tile by it: the device's block may hold
 * less than the policy's tile (gs_tuning.cuh).
 */
template <typename F>
static inline bool
gs_smem_fits(const gs_context *ctx, F kernel, size_t dyn)
{
	cudaFuncAttributes attr;

	if (cudaFuncGetAttributes(&attr, (const void *) kernel) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return false;
	}
	return attr.sharedSizeBytes + dyn <= ctx->smem_optin;
}

/*
 * Lets kernel have dyn bytes of dynamic shared memory, before its launch;
 * fails, saying so, where the device's block has not that much.
 */
template <typename F>
static inline gs_status
gs_set_smem(gs_context *ctx, F kernel, size_t dyn, const char *what)
{
	if (!gs_smem_fits(ctx, kernel, dyn))
		return gs_fail(ctx, GS_ERR_CUDA, "%s: %zu bytes of shared memory per "
					   "block asked for, more than the device's %zu",
					   what, dyn, ctx->smem_optin);
	GS_CHECK(ctx, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) dyn));
	return GS_OK;
}

/* Grid of a grid-stride element-wise kernel over n items (at least 1 block). */
static inline uint32_t
gs_stride_grid(const gs_context *ctx, uint64_t n)
{
	uint64_t	b = (n + GS_STRIDE_THREADS - 1) / GS_STRIDE_THREADS;
	uint64_t	cap = (uint64_t) ctx->sm_count * GS_STRIDE_BLOCKS_PER_SM;

	return (uint32_t) (b < cap ? (b ? b : 1) : cap);
}

/* Grid of an upfront histogram pass over n keys (radix, counting). */
static inline uint32_t
gs_hist_grid(const gs_context *ctx, uint32_t n)
{
	uint32_t	grid = gs_blocks(n, GS_HIST_THREADS * GS_HIST_ITEMS);
	uint32_t	cap = gs_resident_blocks(ctx, GS_HIST_THREADS, GS_HIST_BLOCKS_PER_SM);

	return grid < cap ? grid : cap;
}

/*
 * The small slot (GS_SLOT_SMALL): the key range at offset 0, the radix
 * sort's histograms and offsets from 1 KiB, the sample sort's bucket
 * boundaries from 32 KiB, the key-range pass's low-bits histogram from
 * GS_SMALL_LOWHIST.
 */
#define GS_SMALL_BYTES (80 * 1024)
#define GS_SMALL_LOWHIST (64 * 1024)
#define GS_LOWHIST_BITS 12
#define GS_LOWHIST_BINS (1u << GS_LOWHIST_BITS)

/* Key range, computed on the device. */
typedef struct gs_keyrange
{
	uint64_t	min;
	uint64_t	max;
	uint64_t	diff;			/* OR of key ^ keys[0]: the bits that differ */
	/*
	 * Device array of GS_LOWHIST_BINS counts: how many keys have each value
	 * of key & (GS_LOWHIST_BINS - 1), counted in the same pass, or NULL.
	 * Since (k - min) mod 2^12 depends only on k mod 2^12 and min, it gives
	 * the counting sort's histogram (range <= 4096) and the radix sort's
	 * first digit (lo + 8 <= 12) without another read of the keys.  Valid
	 * until the small slot is reused (the next sort).
	 */
	const uint32_t *low_hist;
} gs_keyrange;

gs_status	gs_key_range(gs_context *ctx, int key_bits, const void *keys,
						 uint32_t n, gs_keyrange *kr);

/* The algorithms.  n >= 2; outputs may equal inputs unless noted. */
gs_status	gs_radix_sort(gs_context *ctx, int key_bits,
						  const void *kin, const uint32_t *vin,
						  void *kout, uint32_t *vout, uint32_t n,
						  const gs_keyrange *kr, gs_sort_info *info);
gs_status	gs_counting_sort(gs_context *ctx, int key_bits,
							 const void *kin, const uint32_t *vin,
							 void *kout, uint32_t *vout, uint32_t n,
							 const gs_keyrange *kr);
/* Does the counting sort take keys of this range (max - min) on the device? */
bool		gs_counting_fits(const gs_context *ctx, int key_bits, uint64_t range);
gs_status	gs_warpsort(gs_context *ctx, int key_bits,
						const void *kin, const uint32_t *vin,
						void *kout, uint32_t *vout, uint32_t n);
gs_status	gs_samplesort(gs_context *ctx, int key_bits,
						  const void *kin, const uint32_t *vin,
						  void *kout, uint32_t *vout, uint32_t n);

/*
 * Sorts segments independently, one block each, in shared memory, by
 * (key, value).  Segment s is [offsets[s], offsets[s+1]) when offsets is
 * given (a device array), else [s*seg_len, min(n, (s+1)*seg_len)).  Every
 * segment must be at most max_len <= GS_BITONIC_MAX long.  In place allowed.
 */
gs_status	gs_bitonic_segments(gs_context *ctx, int key_bits,
								const void *kin, const uint32_t *vin,
								void *kout, uint32_t *vout, uint32_t n,
								const uint32_t *offsets, uint32_t nsegs,
								uint32_t seg_len, uint32_t max_len);

/* Device-side exclusive scan of n uint32 counts, in place (n < 2^32). */
gs_status	gs_scan_u32(gs_context *ctx, uint32_t *data, uint32_t n,
						uint32_t *tmp /* >= gs_scan_tmp_words(n) words */);
uint32_t	gs_scan_tmp_words(uint32_t n);

/* ---- device helpers ---- */

/* (key, value) ordering used by the comparison sorts. */
template <typename K>
__device__ __forceinline__ bool
gs_pair_less(K ka, uint32_t va, K kb, uint32_t vb)
{
	return ka < kb || (ka == kb && va < vb);
}

template <typename K> struct gs_key_max;
template <> struct gs_key_max<uint32_t> { static constexpr uint32_t value = 0xFFFFFFFFu; };
template <> struct gs_key_max<uint64_t> { static constexpr uint64_t value = ~(uint64_t) 0; };

/*
 * Exclusive scan of one value per thread across a block of NWARPS full
 * warps (every thread must call).  warp_sums: shared memory, NWARPS words.
 * One barrier inside; the caller synchronizes before warp_sums is used
 * again.  *total, when given, gets the block's sum.
 */
template <int NWARPS>
__device__ __forceinline__ uint32_t
gs_block_exclusive_scan(uint32_t v, uint32_t *warp_sums, uint32_t *total = nullptr)
{
	const int	lane = threadIdx.x & 31,
				w = threadIdx.x >> 5;
	uint32_t	x = v;

	for (int o = 1; o < 32; o <<= 1)
	{
		uint32_t	y = __shfl_up_sync(0xffffffffu, x, o);

		if (lane >= o)
			x += y;
	}
	if (lane == 31)
		warp_sums[w] = x;
	__syncthreads();
	uint32_t	base = 0;

	if (total)
	{
		uint32_t	tot = 0;

#pragma unroll
		for (int i = 0; i < NWARPS; i++)
		{
			uint32_t	s = warp_sums[i];

			base += (i < w) ? s : 0;
			tot += s;
		}
		*total = tot;
	}
	else
		for (int i = 0; i < w; i++)
			base += warp_sums[i];
	return base + x - v;
}

#endif							/* GS_INTERNAL_CUH */
