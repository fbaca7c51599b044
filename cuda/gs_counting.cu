/*
 * gs_counting.cu
 *	  Stable counting sort for narrow key ranges (max - min + 1 <=
 *	  GS_COUNTING_MAX_RANGE): comparison-free, after Abdel-hafeez et al.
 *	  The input is cut into T contiguous tiles; one kernel counts each key
 *	  per tile into a key-major matrix, one exclusive scan turns the counts
 *	  into output positions, one kernel scatters every pair to its place,
 *	  ranking equal keys by input position (warp match + per-warp counters).
 */
#include "gs_internal.cuh"

#define CT 256					/* threads per block */
#define CWARPS (CT / 32)
#define CITEMS 16
#define CSUB (CT * CITEMS)		/* elements per sub-tile */

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
__global__ void __launch_bounds__(CT)
counting_count(const K *__restrict__ keys, uint32_t n, K kmin, uint32_t range, int bits,
			   uint32_t subs_per_tile, uint32_t ntiles, uint32_t *matrix)
{
	extern __shared__ uint32_t hist[];
	const uint64_t begin = (uint64_t) blockIdx.x * subs_per_tile * CSUB;
	const uint64_t end = min((uint64_t) n, begin + (uint64_t) subs_per_tile * CSUB);
	const int	lane = threadIdx.x & 31;

	for (uint32_t i = threadIdx.x; i < range; i += CT)
		hist[i] = 0;
	__syncthreads();
	for (uint64_t i = begin + threadIdx.x; i - lane < end; i += CT)
	{
		bool		valid = i < end;
		uint32_t	o = valid ? (uint32_t) (keys[i] - kmin) : 0xFFFFFFFFu;
		uint32_t	peers = match_bits(o, valid, bits);

		if (valid && (peers & ((1u << lane) - 1)) == 0)
			atomicAdd(&hist[o], __popc(peers));
	}
	__syncthreads();
	for (uint32_t i = threadIdx.x; i < range; i += CT)
		matrix[(uint64_t) i * ntiles + blockIdx.x] = hist[i];
}

template <typename K>
__global__ void __launch_bounds__(CT)
counting_scatter(const K *__restrict__ kin, const uint32_t *__restrict__ vin,
				 K *__restrict__ kout, uint32_t *__restrict__ vout, uint32_t n,
				 K kmin, uint32_t range, int bits, uint32_t subs_per_tile,
				 uint32_t ntiles, const uint32_t *__restrict__ matrix)
{
	extern __shared__ uint32_t smem[];
	uint32_t   *cursor = smem;	/* [range] next output position per key */
	uint16_t   *wcnt = (uint16_t *) (cursor + range);	/* [CWARPS][range] */
	uint16_t   *tot = wcnt + CWARPS * range;	/* [range] */
	const int	tid = threadIdx.x,
				lane = tid & 31,
				w = tid >> 5;
	const uint32_t lt = (1u << lane) - 1;
	const uint64_t begin = (uint64_t) blockIdx.x * subs_per_tile * CSUB;
	const uint64_t end = min((uint64_t) n, begin + (uint64_t) subs_per_tile * CSUB);

	for (uint32_t i = tid; i < range; i += CT)
		cursor[i] = matrix[(uint64_t) i * ntiles + blockIdx.x];
	for (uint64_t sub = begin; sub < end; sub += CSUB)
	{
		for (uint32_t i = tid; i < CWARPS * range / 2; i += CT)
			((uint32_t *) wcnt)[i] = 0;
		__syncthreads();

		const uint64_t wb = sub + (uint64_t) w * 32 * CITEMS;
		K			key[CITEMS];
		uint32_t	val[CITEMS];
		uint32_t	rank[CITEMS];

#pragma unroll
		for (int i = 0; i < CITEMS; i++)
		{
			uint64_t	idx = wb + i * 32 + lane;

			if (idx < end)
			{
				key[i] = kin[idx];
				val[i] = vin[idx];
			}
		}
#pragma unroll
		for (int i = 0; i < CITEMS; i++)
		{
			uint64_t	idx = wb + i * 32 + lane;
			bool		valid = idx < end;
			uint32_t	o = valid ? (uint32_t) (key[i] - kmin) : 0xFFFFFFFFu;
			uint32_t	peers = match_bits(o, valid, bits);
			uint32_t	before = 0;

			if (valid)
				before = wcnt[w * range + o];
			__syncwarp();
			if (valid && (peers & lt) == 0)
				wcnt[w * range + o] = (uint16_t) (before + __popc(peers));
			__syncwarp();
			rank[i] = before + __popc(peers & lt);
		}
		__syncthreads();
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
			tot[o] = (uint16_t) run;
		}
		__syncthreads();
#pragma unroll
		for (int i = 0; i < CITEMS; i++)
		{
			uint64_t	idx = wb + i * 32 + lane;

			if (idx < end)
			{
				uint32_t	o = (uint32_t) (key[i] - kmin);
				uint32_t	pos = cursor[o] + wcnt[w * range + o] + rank[i];

				kout[pos] = key[i];
				vout[pos] = val[i];
			}
		}
		__syncthreads();
		for (uint32_t o = tid; o < range; o += CT)
			cursor[o] += tot[o];
		/* the next sub-tile's zeroing is ordered by this barrier */
		__syncthreads();
	}
}

template <typename K>
static gs_status
counting_sort(gs_context *ctx, const K *kin, const uint32_t *vin, K *kout,
			  uint32_t *vout, uint32_t n, const gs_keyrange *kr)
{
	const uint32_t range = (uint32_t) (kr->max - kr->min) + 1;
	const int	bits = range > 1 ? 32 - __builtin_clz(range - 1) : 0;
	const uint32_t nsub = gs_blocks(n, CSUB);
	uint32_t	ntiles = (uint32_t) ctx->sm_count * 8;

	if (ntiles > nsub)
		ntiles = nsub;
	const uint32_t subs_per_tile = gs_blocks(nsub, ntiles);

	ntiles = gs_blocks(nsub, subs_per_tile);

	const uint64_t entries = (uint64_t) range * ntiles;
	uint32_t   *matrix;
	K		   *sk = kout;
	uint32_t   *sv = vout;

	GS_TRY(gs_scratch(ctx, GS_SLOT_WORK,
					  (entries + gs_scan_tmp_words((uint32_t) entries)) * 4,
					  (void **) &matrix));
	if ((const void *) kin == (const void *) kout)
	{
		/* in place: scatter from a copy */
		GS_TRY(gs_scratch(ctx, GS_SLOT_ALT_KEYS, (size_t) n * sizeof(K), (void **) &sk));
		GS_TRY(gs_scratch(ctx, GS_SLOT_ALT_VALS, (size_t) n * 4, (void **) &sv));
		GS_CHECK(ctx, cudaMemcpyAsync(sk, kin, (size_t) n * sizeof(K), cudaMemcpyDeviceToDevice, ctx->stream));
		GS_CHECK(ctx, cudaMemcpyAsync(sv, vin, (size_t) n * 4, cudaMemcpyDeviceToDevice, ctx->stream));
		kin = sk;
		vin = sv;
	}
	counting_count<K><<<ntiles, CT, range * 4, ctx->stream>>>(
		kin, n, (K) kr->min, range, bits, subs_per_tile, ntiles, matrix);
	GS_TRY(gs_after_launch(ctx, "counting: count"));
	GS_TRY(gs_scan_u32(ctx, matrix, (uint32_t) entries, matrix + entries));

	size_t		smem = (size_t) range * 4 + (size_t) CWARPS * range * 2 + (size_t) range * 2 + 8;

	GS_CHECK(ctx, cudaFuncSetAttribute(counting_scatter<K>,
									   cudaFuncAttributeMaxDynamicSharedMemorySize,
									   (int) smem));
	counting_scatter<K><<<ntiles, CT, smem, ctx->stream>>>(
		kin, vin, kout, vout, n, (K) kr->min, range, bits, subs_per_tile, ntiles, matrix);
	return gs_after_launch(ctx, "counting: scatter");
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
