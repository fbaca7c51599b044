/*
 * gs_counting.cu
 *	  Stable counting sort for narrow key ranges (max - min + 1 <=
 *	  GS_COUNTING_MAX_RANGE): comparison-free, after Abdel-hafeez et al.,
 *	  in one pass over the pairs, like one radix pass whose digit is the
 *	  whole key (up to 4096 buckets):
 *	  1. a histogram of the keys and its exclusive scan: where each key's
 *	     run starts in the output.  The key-range pass counted the keys by
 *	     their low 12 bits (gs_keyrange.low_hist); as the range is at most
 *	     4096, (k - min) = ((k & 4095) - (min & 4095)) & 4095, so that count
 *	     rotated is the histogram, and the keys are not read a second time;
 *	  2. one kernel over tiles of CTILE pairs: ranks each pair among equal
 *	     keys of its tile (warp match + per-warp counters), publishes the
 *	     tile's count per key and finds the counts of the tiles before it by
 *	     decoupled look-back (a thread's two keys looked back together),
 *	     stages the tile in shared memory in key order
 *	     and writes it out, so that each key's pairs leave as one contiguous
 *	     run per tile, next to the runs of the tiles just before and after.
 */
#include "gs_internal.cuh"

#define CT 512					/* threads per block */
#define CWARPS (CT / 32)
#ifndef CITEMS
#define CITEMS 20				/* pairs per thread (shared memory: <= 220 KiB at range 4096) */
#endif
#define CTILE (CT * CITEMS)		/* pairs per tile */

static_assert(GS_COUNTING_MAX_RANGE <= 4096 && GS_COUNTING_MAX_RANGE <= GS_LOWHIST_BINS,
			  "counting_offsets scans at most 4096 keys");

#define CFLAG_AGG 1u
#define CFLAG_INC 2u			/* gs_lookback_add's inclusive flag */
#define CLB_WINDOW 1			/* look-back: status words per read (2 and 4 spill, slower) */

/* Lanes of the warp whose valid o equals mine, by one ballot per bit. */
__device__ __forceinline__ uint32_t
match_bits(uint32_t o, bool valid, int bits)
{
	uint32_t	peers = __ballot_sync(0xffffffffu, valid);

	for (int b = 0; b < bits; b++)
	{
		uint32_t	x = __ballot_sync(0xffffffffu, (o >> b) & 1);

		peers &= ((o >> b) & 1) ? x : ~x;
	}
	return peers;
}

template <typename K>
__global__ void __launch_bounds__(256)
counting_hist(const K *__restrict__ keys, uint32_t n, K kmin, uint32_t range,
			  uint32_t *counts)
{
	extern __shared__ uint32_t hist[];
	const uint32_t stride = gridDim.x * blockDim.x;

	for (uint32_t i = threadIdx.x; i < range; i += blockDim.x)
		hist[i] = 0;
	__syncthreads();
	for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 4ull * stride)
	{
		K			k[4];

#pragma unroll
		for (int u = 0; u < 4; u++)
			k[u] = i + u * stride < n ? keys[i + u * stride] : kmin;
#pragma unroll
		for (int u = 0; u < 4; u++)
			if (i + u * stride < n)
				atomicAdd(&hist[(uint32_t) (k[u] - kmin)], 1u);
	}
	__syncthreads();
	for (uint32_t i = threadIdx.x; i < range; i += blockDim.x)
		if (hist[i])
			atomicAdd(&counts[i], hist[i]);
}

/*
 * Exclusive scan of the histogram: offs[o] = sum of h[(o' + rot) & mask] over
 * o' < o, for o < range <= 4096 (one block of 1024 threads).  With the key-
 * range pass's low-bits histogram: rot = min & 4095, mask = 4095; with the
 * histogram counting_hist made: rot = 0, mask = ~0.
 */
__global__ void __launch_bounds__(1024)
counting_offsets(const uint32_t *__restrict__ h, uint32_t rot, uint32_t mask,
				 uint32_t range, uint32_t *__restrict__ offs)
{
	__shared__ uint32_t ws[32];
	const uint32_t o0 = threadIdx.x * 4;
	uint32_t	c[4],
				sum = 0;

#pragma unroll
	for (int i = 0; i < 4; i++)
	{
		c[i] = o0 + i < range ? h[(o0 + i + rot) & mask] : 0;
		sum += c[i];
	}
	uint32_t	base = gs_block_exclusive_scan<32>(sum, ws);

#pragma unroll
	for (int i = 0; i < 4; i++)
	{
		if (o0 + i < range)
			offs[o0 + i] = base;
		base += c[i];
	}
}

/*
 * Dynamic shared memory: stage_o[CTILE] (uint16 key offsets, k - kmin) and
 * stage_v[CTILE] (values), both in key order; wcnt[CWARPS][range] (uint16),
 * lstart[range], gbase[range] (uint32).  The keys are not staged: the key of
 * staged slot j is kmin + stage_o[j], so a tile's keys leave as runs of
 * equal keys next to their values, in one loop.
 */
template <typename K>
__global__ void __launch_bounds__(CT, 2)
counting_onesweep(const K *__restrict__ kin, const uint32_t *__restrict__ vin,
				  K *__restrict__ kout, uint32_t *__restrict__ vout, uint32_t n,
				  K kmin, uint32_t range, int bits,
				  const uint32_t *__restrict__ key_offsets,
				  volatile unsigned long long *status, uint32_t *tile_counter,
				  uint32_t epoch)
{
	extern __shared__ __align__(16) unsigned char dyn[];
	uint32_t   *stage_v = (uint32_t *) dyn;
	uint16_t   *stage_o = (uint16_t *) (stage_v + CTILE);
	uint16_t   *wcnt = stage_o + CTILE;
	uint32_t   *lstart = (uint32_t *) (wcnt + ((CWARPS * range + 1) & ~1u));
	uint32_t   *gbase = lstart + range;
	__shared__ uint32_t ws[CWARPS];
	__shared__ uint32_t s_tile;

	const int	tid = threadIdx.x,
				lane = tid & 31,
				w = tid >> 5;
	const uint32_t lt = (1u << lane) - 1;

	if (tid == 0)
		s_tile = atomicAdd(tile_counter, 1u);
	for (uint32_t i = tid; i < (CWARPS * range + 1) / 2; i += CT)
		((uint32_t *) wcnt)[i] = 0;
	__syncthreads();

	const uint32_t tile = s_tile;
	const uint64_t tile_base = (uint64_t) tile * CTILE;
	/* tile-local indices are 32-bit: the tile's pairs are [0, count) */
	const uint32_t count = (uint32_t) min((uint64_t) CTILE, n - tile_base);
	const uint32_t wofs = (uint32_t) w * 32 * CITEMS;
	const K    *tkin = kin + tile_base;
	const uint32_t *tvin = vin + tile_base;
	/* per item: key offset o (low 16 bits) | rank among equal keys << 16 */
	uint32_t	item[CITEMS];

	{
		K			key[CITEMS];

#pragma unroll
		for (int i = 0; i < CITEMS; i++)
		{
			uint32_t	li = wofs + i * 32 + lane;

			key[i] = li < count ? tkin[li] : kmin;
		}
#pragma unroll
		for (int i = 0; i < CITEMS; i++)
			item[i] = (uint32_t) (key[i] - kmin);
	}
	/* the values are read last: ask for their lines in L2 now */
	if (lane < CITEMS && wofs + lane * 32 < count)
		asm volatile("prefetch.global.L2 [%0];" :: "l"(tvin + wofs + lane * 32));
	const unsigned long long tag = (unsigned long long) epoch << 34;
	volatile unsigned long long *mine = status + (uint64_t) tile * range;

	/*
	 * Look-back of the keys of this thread (tid, tid + CT, ...; two at a
	 * time, both in flight): gbase[o] = pairs of key o in the tiles before
	 * this one (+ the key's output start); publishes the inclusive counts.
	 * lstart[o] holds the tile's count of key o.
	 */
	auto		lookback = [&]() {
		for (uint32_t o = tid; o < range; o += 2 * CT)
		{
			const uint32_t o2 = o + CT;
			const bool	has2 = o2 < range;
			uint32_t	excl = 0,
						excl2 = 0;

			if (tile == 0)
			{
				excl = key_offsets[o];
				if (has2)
					excl2 = key_offsets[o2];
			}
			else
			{
				int64_t		k = (int64_t) tile - 1,
							k2 = k;
				bool		done = false,
							done2 = !has2;

				while (!(done && done2))
				{
					unsigned long long s1[CLB_WINDOW],
								s2[CLB_WINDOW];

					if (!done)
						gs_lookback_load<CLB_WINDOW>(status, range, o, k, s1);
					if (!done2)
						gs_lookback_load<CLB_WINDOW>(status, range, o2, k2, s2);
					if (!done)
						done = gs_lookback_add<CLB_WINDOW>(s1, epoch, &k, &excl);
					if (!done2)
						done2 = gs_lookback_add<CLB_WINDOW>(s2, epoch, &k2, &excl2);
				}
				mine[o] = tag | ((unsigned long long) CFLAG_INC << 32) | (uint32_t) (excl + lstart[o]);
				if (has2)
					mine[o2] = tag | ((unsigned long long) CFLAG_INC << 32) | (uint32_t) (excl2 + lstart[o2]);
			}
			gbase[o] = excl;
			if (has2)
				gbase[o2] = excl2;
		}
	};
	auto		publish = [&](uint32_t o, uint32_t run) {
		if (tile == 0)
			mine[o] = tag | ((unsigned long long) CFLAG_INC << 32) | (uint32_t) (key_offsets[o] + run);
		else
			mine[o] = tag | ((unsigned long long) CFLAG_AGG << 32) | run;
	};

	/* rank each item among equal keys of its warp, in (item, lane) order */
#pragma unroll
	for (int i = 0; i < CITEMS; i++)
	{
		const bool	valid = wofs + i * 32 + lane < count;
		const uint32_t o = item[i];
		/* (match.any: 1.65 vs 1.58 ms, NOTES.md) */
		const uint32_t peers = match_bits(o, valid, bits);
		uint32_t	before = 0;

		if (valid)
			before = wcnt[w * range + o];
		__syncwarp();
		if (valid && (peers & lt) == 0)
			wcnt[w * range + o] = (uint16_t) (before + __popc(peers));
		__syncwarp();
		item[i] = o | ((before + __popc(peers & lt)) << 16);
	}
	__syncthreads();

	/*
	 * Per key: warp prefixes and the tile's count, published at once; then
	 * the look-back.  (Counts published before the ranking, by shared-memory
	 * atomics right after the load, measured 8 % slower: NOTES.md.)
	 */
	for (uint32_t o = tid; o < range; o += CT)
	{
		uint32_t	run = 0;

#pragma unroll
		for (int ww = 0; ww < CWARPS; ww++)
		{
			uint32_t	c = wcnt[ww * range + o];

			wcnt[ww * range + o] = (uint16_t) run;
			run += c;
		}
		lstart[o] = run;		/* the tile's count, for now */
		publish(o, run);
	}
	lookback();
	__syncthreads();

	/* exclusive scan of the tile's counts over the keys (in lstart) */
	{
		const uint32_t per = (range + CT - 1) / CT;
		const uint32_t o0 = min(range, tid * per),
					o1 = min(range, o0 + per);
		uint32_t	sum = 0;

		for (uint32_t o = o0; o < o1; o++)
			sum += lstart[o];
		uint32_t	base = gs_block_exclusive_scan<CWARPS>(sum, ws);

		for (uint32_t o = o0; o < o1; o++)
		{
			uint32_t	c = lstart[o];

			lstart[o] = base;
			gbase[o] -= base;	/* output position of staged slot j: gbase + j */
			base += c;
		}
	}
	__syncthreads();

	/* key offsets and values into shared memory in key order */
#pragma unroll
	for (int i = 0; i < CITEMS; i++)
	{
		uint32_t	li = wofs + i * 32 + lane;

		if (li < count)
		{
			uint32_t	o = item[i] & 0xFFFFu;
			uint32_t	lp = lstart[o] + wcnt[w * range + o] + (item[i] >> 16);

			stage_o[lp] = (uint16_t) o;
			stage_v[lp] = tvin[li];
		}
	}
	__syncthreads();

	/* then out: each key's pairs as one contiguous run */
#pragma unroll
	for (int i = 0; i < CITEMS; i++)
	{
		uint32_t	j = i * CT + tid;

		if (j < count)
		{
			uint32_t	o = stage_o[j];
			uint32_t	d = gbase[o] + j;

			kout[d] = kmin + (K) o;
			vout[d] = stage_v[j];
		}
	}
}

static size_t
onesweep_smem(uint32_t range)
{
	return (size_t) CTILE * 6 + (size_t) ((CWARPS * range + 1) & ~1u) * 2 + (size_t) range * 8;
}
/* the widest range must fit one block (227 KiB of shared memory on Hopper) */
static_assert((size_t) CTILE * 6 + (size_t) CWARPS * GS_COUNTING_MAX_RANGE * 2 +
			  (size_t) GS_COUNTING_MAX_RANGE * 8 <= 227 * 1024, "counting tile too large");

template <typename K>
static gs_status
counting_sort(gs_context *ctx, const K *kin, const uint32_t *vin, K *kout,
			  uint32_t *vout, uint32_t n, const gs_keyrange *kr)
{
	const uint32_t range = (uint32_t) (kr->max - kr->min) + 1;
	const int	bits = range > 1 ? 32 - __builtin_clz(range - 1) : 0;
	const uint32_t ntiles = gs_blocks(n, CTILE);
	uint32_t   *counts;
	void	   *st;
	K		   *sk;
	uint32_t   *sv;

	/* work slot: offsets[range], a histogram[range], the tile counter */
	GS_TRY(gs_scratch(ctx, GS_SLOT_WORK, ((size_t) 2 * range + 1) * 4, (void **) &counts));
	uint32_t   *tmp = counts + range;
	uint32_t   *counter = tmp + range;

	GS_TRY(gs_scratch(ctx, GS_SLOT_STATUS, (size_t) ntiles * range * 8, &st));
	if ((const void *) kin == (const void *) kout)
	{
		/* in place: sort from a copy */
		GS_TRY(gs_scratch(ctx, GS_SLOT_ALT_KEYS, (size_t) n * sizeof(K), (void **) &sk));
		GS_TRY(gs_scratch(ctx, GS_SLOT_ALT_VALS, (size_t) n * 4, (void **) &sv));
		GS_CHECK(ctx, cudaMemcpyAsync(sk, kin, (size_t) n * sizeof(K), cudaMemcpyDeviceToDevice, ctx->stream));
		GS_CHECK(ctx, cudaMemcpyAsync(sv, vin, (size_t) n * 4, cudaMemcpyDeviceToDevice, ctx->stream));
		kin = sk;
		vin = sv;
	}
	GS_CHECK(ctx, cudaMemsetAsync(counter, 0, 4, ctx->stream));
	if (kr->low_hist)
	{
		/* the key-range pass's count of k & 4095, rotated by min */
		counting_offsets<<<1, 1024, 0, ctx->stream>>>(kr->low_hist,
													  (uint32_t) kr->min & (GS_LOWHIST_BINS - 1),
													  GS_LOWHIST_BINS - 1, range, counts);
		GS_TRY(gs_after_launch(ctx, "counting: offsets"));
	}
	else
	{
		uint32_t	grid = gs_blocks(n, 256 * 16);

		if (grid > (uint32_t) ctx->sm_count * 4)
			grid = ctx->sm_count * 4;
		GS_CHECK(ctx, cudaMemsetAsync(tmp, 0, (size_t) range * 4, ctx->stream));
		counting_hist<K><<<grid, 256, range * 4, ctx->stream>>>(kin, n, (K) kr->min, range, tmp);
		GS_TRY(gs_after_launch(ctx, "counting: histogram"));
		counting_offsets<<<1, 1024, 0, ctx->stream>>>(tmp, 0, ~0u, range, counts);
		GS_TRY(gs_after_launch(ctx, "counting: offsets"));
	}

	const size_t smem = onesweep_smem(range);
	const uint32_t epoch = gs_next_epoch(ctx);

	GS_CHECK(ctx, cudaFuncSetAttribute(counting_onesweep<K>,
									   cudaFuncAttributeMaxDynamicSharedMemorySize,
									   (int) smem));
	counting_onesweep<K><<<ntiles, CT, smem, ctx->stream>>>(
		kin, vin, kout, vout, n, (K) kr->min, range, bits, counts,
		(volatile unsigned long long *) st, counter, epoch);
	return gs_after_launch(ctx, "counting: pass");
}

gs_status
gs_counting_sort(gs_context *ctx, int key_bits, const void *kin,
				 const uint32_t *vin, void *kout, uint32_t *vout, uint32_t n,
				 const gs_keyrange *kr)
{
	if (kr->max - kr->min >= GS_COUNTING_MAX_RANGE)
		return gs_fail(ctx, GS_ERR_INVALID, "key range too wide for the "
					   "counting sort");
	if (key_bits == 32)
		return counting_sort(ctx, (const uint32_t *) kin, vin,
							 (uint32_t *) kout, vout, n, kr);
	return counting_sort(ctx, (const uint64_t *) kin, vin,
						 (uint64_t *) kout, vout, n, kr);
}
