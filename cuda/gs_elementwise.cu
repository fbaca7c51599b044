/*
 * gs_elementwise.cu
 *	  Element-wise device helpers for the engine: iota and gathers (of words,
 *	  and of rows of variable length).
 */
#include "gs_internal.cuh"

__global__ void
iota_kernel(uint32_t *out, uint64_t n)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
		out[i] = (uint32_t) i;
}

template <typename T>
__global__ void
gather_kernel(T *out, const T *__restrict__ in,
			  const uint32_t *__restrict__ idx, uint64_t n)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
		out[i] = in[idx[i]];
}

gs_status
gs_fill_iota(gs_context *ctx, uint32_t *out, uint64_t n)
{
	if (!ctx || (n && !out))
		return gs_fail(ctx, GS_ERR_INVALID, "NULL argument");
	if (n > GS_MAX_PAIRS + 1)
		return gs_fail(ctx, GS_ERR_TOO_LARGE, "n = %llu does not fit 32-bit "
					   "indexes", (unsigned long long) n);
	if (n == 0)
		return GS_OK;
	iota_kernel<<<gs_stride_grid(ctx, n), GS_STRIDE_THREADS, 0, ctx->stream>>>(out, n);
	return gs_after_launch(ctx, "iota");
}

template <typename T>
static gs_status
gather(gs_context *ctx, T *out, const T *in, const uint32_t *idx, uint64_t n)
{
	if (!ctx || (n && (!out || !in || !idx)))
		return gs_fail(ctx, GS_ERR_INVALID, "NULL argument");
	if (n == 0)
		return GS_OK;
	gather_kernel<T><<<gs_stride_grid(ctx, n), GS_STRIDE_THREADS, 0, ctx->stream>>>(out, in, idx, n);
	return gs_after_launch(ctx, "gather");
}

gs_status
gs_gather_u64(gs_context *ctx, uint64_t *out, const uint64_t *in,
			  const uint32_t *idx, uint64_t n)
{
	return gather(ctx, out, in, idx, n);
}

gs_status
gs_gather_u32(gs_context *ctx, uint32_t *out, const uint32_t *in,
			  const uint32_t *idx, uint64_t n)
{
	return gather(ctx, out, in, idx, n);
}

/*
 * Rows of variable length, in 8-byte words: row i is lengths[i] bytes at
 * in + src_offsets[i], copied to out + dst_offsets[i] (offsets multiples of
 * 8, and the source readable up to its next multiple of 8).  A warp copies
 * each row.
 */
__global__ void
gather_rows_kernel(uint64_t *out, const uint64_t *__restrict__ in,
				   const uint64_t *__restrict__ src_offsets,
				   const uint64_t *__restrict__ dst_offsets,
				   const uint32_t *__restrict__ lengths, uint64_t n)
{
	uint64_t	nwarps = (uint64_t) gridDim.x * blockDim.x / 32;
	unsigned	lane = threadIdx.x % 32;

	for (uint64_t i = (blockIdx.x * (uint64_t) blockDim.x + threadIdx.x) / 32; i < n;
		 i += nwarps)
	{
		const uint64_t *src = in + src_offsets[i] / 8;
		uint64_t   *dst = out + dst_offsets[i] / 8;
		uint64_t	words = (lengths[i] + 7) / 8;

		for (uint64_t w = lane; w < words; w += 32)
			dst[w] = src[w];
	}
}

gs_status
gs_gather_rows(gs_context *ctx, void *out, const void *in,
			   const uint64_t *src_offsets, const uint64_t *dst_offsets,
			   const uint32_t *lengths, uint64_t n)
{
	if (!ctx || (n && (!out || !in || !src_offsets || !dst_offsets || !lengths)))
		return gs_fail(ctx, GS_ERR_INVALID, "NULL argument");
	if (n == 0)
		return GS_OK;
	gather_rows_kernel<<<gs_stride_grid(ctx, n * 32), GS_STRIDE_THREADS, 0, ctx->stream>>>(
		(uint64_t *) out, (const uint64_t *) in, src_offsets, dst_offsets, lengths, n);
	return gs_after_launch(ctx, "gather rows");
}
