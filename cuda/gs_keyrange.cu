/*
 * gs_keyrange.cu
 *	  The key range of an array on the device: min, max, and the bits in
 *	  which keys differ.  The dispatcher and the radix sort use it to sort
 *	  only the significant bits.  The same pass counts the keys by their low
 *	  12 bits (gs_keyrange.low_hist): the counting sort's histogram and the
 *	  radix sort's first digit, with no second read of the keys.
 */
#include "gs_internal.cuh"

/* The key-range policy (gs_tuning.cuh) by the names the kernels use */
#define KR_THREADS (gs_keyrange_tuning.threads)
#define KR_BLOCKS_PER_SM (gs_keyrange_tuning.blocks_per_sm)
#define KR_UNROLL (gs_keyrange_tuning.unroll)

__global__ void
keyrange_init(gs_keyrange *kr, uint32_t *low_hist)
{
	if (blockIdx.x == 0 && threadIdx.x == 0)
	{
		kr->min = ~(uint64_t) 0;
		kr->max = 0;
		kr->diff = 0;
	}
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < GS_LOWHIST_BINS;
		 i += gridDim.x * blockDim.x)
		low_hist[i] = 0;
}

/*
 * Min, max and differing bits, and the histogram of key & 4095 (shared-
 * memory counters per block, added into low_hist at the end).  KR_UNROLL
 * loads in flight per thread.
 */
template <typename K>
__global__ void __launch_bounds__(KR_THREADS, GS_MIN_BLOCKS(KR_THREADS, KR_BLOCKS_PER_SM))
keyrange_kernel(const K *__restrict__ keys, uint32_t n, gs_keyrange *kr,
				uint32_t *low_hist)
{
	__shared__ uint32_t h[GS_LOWHIST_BINS];
	__shared__ uint64_t s_mn[32],
				s_mx[32],
				s_df[32];
	const K		k0 = keys[0];
	uint64_t	mn = ~(uint64_t) 0,
				mx = 0,
				df = 0;
	const uint32_t stride = gridDim.x * blockDim.x;

	for (uint32_t i = threadIdx.x; i < GS_LOWHIST_BINS; i += blockDim.x)
		h[i] = 0;
	__syncthreads();
	for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) KR_UNROLL * stride)
	{
		K			k[KR_UNROLL];

		/* past the end: k0, which changes neither min, max nor diff */
#pragma unroll
		for (int u = 0; u < KR_UNROLL; u++)
			k[u] = i + u * stride < n ? keys[i + u * stride] : k0;
#pragma unroll
		for (int u = 0; u < KR_UNROLL; u++)
		{
			uint64_t	x = k[u];

			mn = x < mn ? x : mn;
			mx = x > mx ? x : mx;
			df |= x ^ (uint64_t) k0;
			if (i + u * stride < n)
				atomicAdd(&h[(uint32_t) x & (GS_LOWHIST_BINS - 1)], 1u);
		}
	}
	for (int o = 16; o > 0; o >>= 1)
	{
		uint64_t	a = __shfl_xor_sync(0xffffffffu, mn, o);
		uint64_t	b = __shfl_xor_sync(0xffffffffu, mx, o);

		mn = a < mn ? a : mn;
		mx = b > mx ? b : mx;
		df |= __shfl_xor_sync(0xffffffffu, df, o);
	}
	int			w = threadIdx.x / 32;

	if ((threadIdx.x & 31) == 0)
	{
		s_mn[w] = mn;
		s_mx[w] = mx;
		s_df[w] = df;
	}
	__syncthreads();
	if (threadIdx.x == 0)
	{
		for (int i = 1; i < (int) (blockDim.x / 32); i++)
		{
			mn = s_mn[i] < mn ? s_mn[i] : mn;
			mx = s_mx[i] > mx ? s_mx[i] : mx;
			df |= s_df[i];
		}
		atomicMin((unsigned long long *) &kr->min, (unsigned long long) mn);
		atomicMax((unsigned long long *) &kr->max, (unsigned long long) mx);
		atomicOr((unsigned long long *) &kr->diff, (unsigned long long) df);
	}
	for (uint32_t i = threadIdx.x; i < GS_LOWHIST_BINS; i += blockDim.x)
		if (h[i])
			atomicAdd(&low_hist[i], h[i]);
}

template <typename K>
static gs_status
key_range(gs_context *ctx, const K *keys, uint32_t n, gs_keyrange *out)
{
	char	   *small;
	uint32_t	grid = gs_blocks(n, KR_THREADS * KR_UNROLL * 2);
	uint32_t	cap = gs_resident_blocks(ctx, KR_THREADS, KR_BLOCKS_PER_SM);

	/* few blocks, so few adds into low_hist; all resident at once */
	if (grid > cap)
		grid = cap;
	GS_TRY(gs_scratch(ctx, GS_SLOT_SMALL, GS_SMALL_BYTES, (void **) &small));
	gs_keyrange *d_kr = (gs_keyrange *) small;
	uint32_t   *low_hist = (uint32_t *) (small + GS_SMALL_LOWHIST);

	keyrange_init<<<GS_LOWHIST_BINS / 256, 256, 0, ctx->stream>>>(d_kr, low_hist);
	keyrange_kernel<K><<<grid, KR_THREADS, 0, ctx->stream>>>(keys, n, d_kr, low_hist);
	GS_TRY(gs_after_launch(ctx, "key range"));
	GS_CHECK(ctx, cudaMemcpyAsync(out, d_kr, 3 * sizeof(uint64_t),
								  cudaMemcpyDeviceToHost, ctx->stream));
	GS_CHECK(ctx, cudaStreamSynchronize(ctx->stream));
	out->low_hist = low_hist;
	return GS_OK;
}

gs_status
gs_key_range(gs_context *ctx, int key_bits, const void *keys, uint32_t n,
			 gs_keyrange *kr)
{
	if (key_bits == 32)
		return key_range(ctx, (const uint32_t *) keys, n, kr);
	return key_range(ctx, (const uint64_t *) keys, n, kr);
}
