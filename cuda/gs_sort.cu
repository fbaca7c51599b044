/*
 * gs_sort.cu
 *	  gs_sort_pairs(): argument checks and the dispatcher that picks the
 *	  algorithm from n, the key width and the key range.
 *
 *	  n <= GS_BITONIC_MAX                 one-block bitonic sort
 *	  max - min < GS_COUNTING_MAX_RANGE   counting sort (one pass over the
 *	                                      pairs after a histogram of the keys;
 *	                                      the radix sort needs 1-2: NOTES.md)
 *	  otherwise                           LSD radix sort on the bits that
 *	                                      differ
 *	  The warpsort and the sample sort run when forced.
 */
#include <string.h>

#include "gs_internal.cuh"

gs_status
gs_sort_pairs(gs_context *ctx, int key_bits, const void *keys_in,
			  const uint32_t *vals_in, void *keys_out, uint32_t *vals_out,
			  uint64_t n, gs_algorithm algo, gs_sort_info *info)
{
	gs_sort_info dummy;
	gs_keyrange kr;
	bool		have_range = false;

	if (!info)
		info = &dummy;
	memset(info, 0, sizeof(*info));
	if (!ctx)
		return gs_fail(NULL, GS_ERR_INVALID, "ctx is NULL");
	if (key_bits != 32 && key_bits != 64)
		return gs_fail(ctx, GS_ERR_INVALID, "key_bits must be 32 or 64, not %d",
					   key_bits);
	if ((int) algo < 0 || algo >= GS_ALGO_COUNT_)
		return gs_fail(ctx, GS_ERR_INVALID, "unknown algorithm %d", (int) algo);
	if (n > GS_MAX_PAIRS)
		return gs_fail(ctx, GS_ERR_TOO_LARGE, "n = %llu: row indexes are 32-bit, "
					   "at most %llu pairs", (unsigned long long) n,
					   (unsigned long long) GS_MAX_PAIRS);
	if (n && (!keys_in || !vals_in || !keys_out || !vals_out))
		return gs_fail(ctx, GS_ERR_INVALID, "NULL buffer");
	if ((keys_in == keys_out) != ((const void *) vals_in == (void *) vals_out))
		return gs_fail(ctx, GS_ERR_INVALID, "keys and values must both be in "
					   "place or both out of place");
	GS_CHECK(ctx, cudaSetDevice(ctx->device));

	const size_t kb = (size_t) n * (key_bits / 8);
	const uint32_t n32 = (uint32_t) n;

	info->algorithm = algo;
	if (n <= 1)
	{
		info->algorithm = algo == GS_ALGO_AUTO ? GS_ALGO_BITONIC : algo;
		if (n == 1 && keys_in != keys_out)
		{
			GS_CHECK(ctx, cudaMemcpyAsync(keys_out, keys_in, kb, cudaMemcpyDeviceToDevice, ctx->stream));
			GS_CHECK(ctx, cudaMemcpyAsync(vals_out, vals_in, 4, cudaMemcpyDeviceToDevice, ctx->stream));
		}
		return gs_synchronize(ctx);
	}
	if (algo == GS_ALGO_BITONIC && n > GS_BITONIC_MAX)
		algo = GS_ALGO_WARPSORT;
	if (algo == GS_ALGO_AUTO && n <= GS_BITONIC_MAX)
		algo = GS_ALGO_BITONIC;
	if (algo == GS_ALGO_AUTO || algo == GS_ALGO_RADIX || algo == GS_ALGO_COUNTING)
	{
		GS_TRY(gs_key_range(ctx, key_bits, keys_in, n32, &kr));
		have_range = true;
		info->key_min = kr.min;
		info->key_max = kr.max;
		if (algo == GS_ALGO_COUNTING)
			algo = (kr.max - kr.min < GS_COUNTING_MAX_RANGE) ? GS_ALGO_COUNTING
				: GS_ALGO_RADIX;
		else if (algo == GS_ALGO_AUTO)
			algo = (kr.max - kr.min < GS_COUNTING_MAX_RANGE) ? GS_ALGO_COUNTING
				: GS_ALGO_RADIX;
	}
	info->algorithm = algo;
	switch (algo)
	{
		case GS_ALGO_BITONIC:
			GS_TRY(gs_bitonic_segments(ctx, key_bits, keys_in, vals_in, keys_out,
									   vals_out, n32, NULL, 1, n32, n32));
			break;
		case GS_ALGO_COUNTING:
			GS_TRY(gs_counting_sort(ctx, key_bits, keys_in, vals_in, keys_out,
									vals_out, n32, &kr));
			break;
		case GS_ALGO_RADIX:
			if (!have_range)
				return gs_fail(ctx, GS_ERR_INVALID, "internal: no key range");
			GS_TRY(gs_radix_sort(ctx, key_bits, keys_in, vals_in, keys_out,
								 vals_out, n32, &kr, info));
			break;
		case GS_ALGO_WARPSORT:
			GS_TRY(gs_warpsort(ctx, key_bits, keys_in, vals_in, keys_out,
							   vals_out, n32));
			break;
		case GS_ALGO_SAMPLESORT:
			GS_TRY(gs_samplesort(ctx, key_bits, keys_in, vals_in, keys_out,
								 vals_out, n32));
			break;
		default:
			return gs_fail(ctx, GS_ERR_INVALID, "unknown algorithm");
	}
	return gs_synchronize(ctx);
}
