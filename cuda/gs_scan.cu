/*
 * gs_scan.cu
 *	  Exclusive prefix sum of uint32 counts on the device (reduce, scan of
 *	  the block sums, downsweep), for the counting sort's count matrix and
 *	  the sample sort's bucket counts.
 */
#include "gs_internal.cuh"

/* The scan policy (gs_tuning.cuh) by the names the kernels use */
#define SCAN_THREADS (gs_scan_tuning.threads)
#define SCAN_ITEMS (gs_scan_tuning.items)

#define SCAN_CHUNK (SCAN_THREADS * SCAN_ITEMS)

__global__ void
scan_reduce(const uint32_t *__restrict__ data, uint32_t n, uint32_t *sums)
{
	uint64_t	base = (uint64_t) blockIdx.x * SCAN_CHUNK;
	uint32_t	s = 0;

	for (int i = 0; i < SCAN_ITEMS; i++)
	{
		uint64_t	j = base + i * SCAN_THREADS + threadIdx.x;

		if (j < n)
			s += data[j];
	}
	__shared__ uint32_t warp_sums[SCAN_THREADS / 32];
	uint32_t	total;

	gs_block_exclusive_scan<SCAN_THREADS / 32>(s, warp_sums, &total);
	if (threadIdx.x == 0)
		sums[blockIdx.x] = total;
}

__global__ void
scan_down(uint32_t *data, uint32_t n, const uint32_t *__restrict__ bases)
{
	uint64_t	base = (uint64_t) blockIdx.x * SCAN_CHUNK +
		(uint64_t) threadIdx.x * SCAN_ITEMS;
	uint32_t	v[SCAN_ITEMS],
				s = 0;

	for (int i = 0; i < SCAN_ITEMS; i++)
	{
		v[i] = (base + i < n) ? data[base + i] : 0;
		s += v[i];
	}
	__shared__ uint32_t warp_sums[SCAN_THREADS / 32];
	uint32_t	excl = gs_block_exclusive_scan<SCAN_THREADS / 32>(s, warp_sums);

	excl += bases ? bases[blockIdx.x] : 0;
	for (int i = 0; i < SCAN_ITEMS; i++)
	{
		if (base + i < n)
			data[base + i] = excl;
		excl += v[i];
	}
}

uint32_t
gs_scan_tmp_words(uint32_t n)
{
	uint32_t	words = 0;

	while (n > SCAN_CHUNK)
	{
		n = gs_blocks(n, SCAN_CHUNK);
		words += n;
	}
	return words + 1;
}

gs_status
gs_scan_u32(gs_context *ctx, uint32_t *data, uint32_t n, uint32_t *tmp)
{
	uint32_t	nb = gs_blocks(n, SCAN_CHUNK);

	if (n == 0)
		return GS_OK;
	if (nb == 1)
	{
		scan_down<<<1, SCAN_THREADS, 0, ctx->stream>>>(data, n, NULL);
		return gs_after_launch(ctx, "scan");
	}
	scan_reduce<<<nb, SCAN_THREADS, 0, ctx->stream>>>(data, n, tmp);
	GS_TRY(gs_after_launch(ctx, "scan reduce"));
	GS_TRY(gs_scan_u32(ctx, tmp, nb, tmp + nb));
	scan_down<<<nb, SCAN_THREADS, 0, ctx->stream>>>(data, n, tmp);
	return gs_after_launch(ctx, "scan downsweep");
}
