/*
 * gs_keyrange.cu
 *	  The key range of an array on the device: min, max, and the bits in
 *	  which keys differ.  The dispatcher and the radix sort use it to sort
 *	  only the significant bits.
 */
#include "gs_internal.cuh"

template <typename K>
__global__ void
keyrange_init(gs_keyrange *kr)
{
	kr->min = ~(uint64_t) 0;
	kr->max = 0;
	kr->diff = 0;
}

template <typename K>
__global__ void
keyrange_kernel(const K *__restrict__ keys, uint32_t n, gs_keyrange *kr)
{
	const K		k0 = keys[0];
	uint64_t	mn = ~(uint64_t) 0,
				mx = 0,
				df = 0;
	uint32_t	stride = gridDim.x * blockDim.x;
	__shared__ uint64_t s_mn[32],
				s_mx[32],
				s_df[32];

	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
	{
		uint64_t	k = keys[i];

		mn = k < mn ? k : mn;
		mx = k > mx ? k : mx;
		df |= k ^ (uint64_t) k0;
		if (i > n - stride)		/* no overflow of i += stride */
			break;
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
}

template <typename K>
static gs_status
key_range(gs_context *ctx, const K *keys, uint32_t n, gs_keyrange *out)
{
	gs_keyrange *d_kr;
	uint32_t	grid = gs_blocks(n, 256 * 8);

	if (grid > (uint32_t) ctx->sm_count * 8)
		grid = ctx->sm_count * 8;
	GS_TRY(gs_scratch(ctx, GS_SLOT_SMALL, 64 * 1024, (void **) &d_kr));
	keyrange_init<K><<<1, 1, 0, ctx->stream>>>(d_kr);
	keyrange_kernel<K><<<grid, 256, 0, ctx->stream>>>(keys, n, d_kr);
	GS_TRY(gs_after_launch(ctx, "key range"));
	GS_CHECK(ctx, cudaMemcpyAsync(out, d_kr, sizeof(*out),
								  cudaMemcpyDeviceToHost, ctx->stream));
	GS_CHECK(ctx, cudaStreamSynchronize(ctx->stream));
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
