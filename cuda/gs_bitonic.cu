/*
 * gs_bitonic.cu
 *	  Bitonic sort in shared memory, one block per segment: the fast path for
 *	  inputs of at most GS_BITONIC_MAX pairs, and the tile/bucket sort inside
 *	  the sample sort.  Compares (key, value) pairs, so it is stable when the
 *	  values are the input positions.
 */
#include "gs_internal.cuh"

/* The bitonic policy (gs_tuning.cuh) by the name the kernels use */
#define BITONIC_MAX_THREADS (gs_bitonic_tuning.max_threads)

/* threads for a segment of at most CAP pairs: one per compare-exchange */
#define BITONIC_THREADS(CAP) ((CAP) / 2 < BITONIC_MAX_THREADS ? (CAP) / 2 : BITONIC_MAX_THREADS)

template <typename K, int CAP>
__global__ void __launch_bounds__(BITONIC_THREADS(CAP))
bitonic_segments(const K *kin, const uint32_t *vin, K *kout, uint32_t *vout,
				 uint32_t n, const uint32_t *__restrict__ offsets,
				 uint32_t seg_len)
{
	constexpr int T = BITONIC_THREADS(CAP);
	__shared__ K sk[CAP];
	__shared__ uint32_t sv[CAP];
	uint64_t	begin,
				end;

	if (offsets)
	{
		begin = offsets[blockIdx.x];
		end = offsets[blockIdx.x + 1];
	}
	else
	{
		begin = (uint64_t) blockIdx.x * seg_len;
		end = begin + seg_len < n ? begin + seg_len : n;
	}
	const uint32_t len = (uint32_t) (end - begin);

	if (len <= 1)
	{
		if (len == 1 && (kin != kout))
		{
			if (threadIdx.x == 0)
			{
				kout[begin] = kin[begin];
				vout[begin] = vin[begin];
			}
		}
		return;
	}
	/* the smallest power of two holding the segment */
	uint32_t	size = 2;

	while (size < len)
		size <<= 1;
	for (uint32_t i = threadIdx.x; i < size; i += T)
	{
		if (i < len)
		{
			sk[i] = kin[begin + i];
			sv[i] = vin[begin + i];
		}
		else
		{
			sk[i] = gs_key_max<K>::value;
			sv[i] = 0xFFFFFFFFu;
		}
	}
	__syncthreads();
	for (uint32_t k = 2; k <= size; k <<= 1)
	{
		for (uint32_t j = k >> 1; j > 0; j >>= 1)
		{
			for (uint32_t t = threadIdx.x; t < size / 2; t += T)
			{
				uint32_t	i = 2 * t - (t & (j - 1));
				uint32_t	l = i + j;
				K			ka = sk[i],
							kb = sk[l];
				uint32_t	va = sv[i],
							vb = sv[l];
				bool		up = (i & k) == 0;
				bool		sw = up ? gs_pair_less(kb, vb, ka, va)
					: gs_pair_less(ka, va, kb, vb);

				if (sw)
				{
					sk[i] = kb;
					sk[l] = ka;
					sv[i] = vb;
					sv[l] = va;
				}
			}
			__syncthreads();
		}
	}
	for (uint32_t i = threadIdx.x; i < len; i += T)
	{
		kout[begin + i] = sk[i];
		vout[begin + i] = sv[i];
	}
}

template <typename K>
static gs_status
segments(gs_context *ctx, const K *kin, const uint32_t *vin, K *kout,
		 uint32_t *vout, uint32_t n, const uint32_t *offsets, uint32_t nsegs,
		 uint32_t seg_len, uint32_t max_len)
{
	if (nsegs == 0)
		return GS_OK;
	if (max_len > GS_BITONIC_MAX)
		return gs_fail(ctx, GS_ERR_INVALID, "bitonic segment of %u pairs "
					   "exceeds %d", max_len, GS_BITONIC_MAX);
	if (max_len <= 256)
		bitonic_segments<K, 256><<<nsegs, BITONIC_THREADS(256), 0, ctx->stream>>>(
			kin, vin, kout, vout, n, offsets, seg_len);
	else if (max_len <= 1024)
		bitonic_segments<K, 1024><<<nsegs, BITONIC_THREADS(1024), 0, ctx->stream>>>(
			kin, vin, kout, vout, n, offsets, seg_len);
	else
		bitonic_segments<K, 4096><<<nsegs, BITONIC_THREADS(4096), 0, ctx->stream>>>(
			kin, vin, kout, vout, n, offsets, seg_len);
	return gs_after_launch(ctx, "bitonic sort");
}

gs_status
gs_bitonic_segments(gs_context *ctx, int key_bits, const void *kin,
					const uint32_t *vin, void *kout, uint32_t *vout,
					uint32_t n, const uint32_t *offsets, uint32_t nsegs,
					uint32_t seg_len, uint32_t max_len)
{
	if (key_bits == 32)
		return segments(ctx, (const uint32_t *) kin, vin, (uint32_t *) kout,
						vout, n, offsets, nsegs, seg_len, max_len);
	return segments(ctx, (const uint64_t *) kin, vin, (uint64_t *) kout,
					vout, n, offsets, nsegs, seg_len, max_len);
}
