/*
 * gs_elementwise.cu
 *	  Element-wise device helpers for the engine: iota and gathers.
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
