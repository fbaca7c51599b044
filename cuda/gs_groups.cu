/*
 * gs_groups.cu
 *	  The first row of each group of equal keys in a sorted order, and the
 *	  rows' places and lengths compacted to those rows: what a Unique above
 *	  a sort keeps (DISTINCT, DISTINCT ON), decided where the sorted keys
 *	  are, so that only those rows leave the device.
 *
 * A row starts a group where any word of its key differs from the row's
 * before it (a flag per row, one pass per word); an exclusive prefix sum of
 * the flags (gs_scan.cu) gives each kept row its place, and one pass moves
 * it there.  The groups of two rows or more are found the same way, as the
 * segments of the order that a sort by more words finishes (gs_segments.cu).
 */
#include "gs_internal.cuh"

/*
 * heads[i] = 1 where row i of the order starts a group by this word (row 0
 * always), or keeps what the words before found (first: nothing).
 */
__global__ void
mark_heads_kernel(uint32_t *heads, const uint64_t *__restrict__ words,
				  const uint32_t *__restrict__ order, uint64_t n, int first)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		uint32_t	head;

		if (i == 0)
			head = 1;
		else if (order)
			head = words[order[i]] != words[order[i - 1]];
		else
			head = words[i] != words[i - 1];
		heads[i] = first ? head : (heads[i] | head);
	}
}

/*
 * Row i of the order moves to offsets[i] (the exclusive sum of the heads)
 * where it is a head: where the next row's offset (or, for the last, the
 * rows kept) is past its own.
 */
__global__ void
keep_heads_kernel(uint64_t *out_places, uint32_t *out_lengths,
				  const uint64_t *__restrict__ places,
				  const uint32_t *__restrict__ lengths,
				  const uint32_t *__restrict__ offsets, uint64_t n, uint32_t kept)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		uint32_t	next = i + 1 < n ? offsets[i + 1] : kept;

		if (next != offsets[i])
		{
			out_places[offsets[i]] = places[i];
			out_lengths[offsets[i]] = lengths[i];
		}
	}
}

/* Does row i start a group of two rows or more? */
__device__ __forceinline__ bool
starts_tied(const uint32_t *heads, uint64_t i, uint64_t n)
{
	return heads[i] && i + 1 < n && !heads[i + 1];
}

/* Flags the rows that start a group of two rows or more. */
__global__ void
tied_starts_kernel(uint32_t *flags, const uint32_t *__restrict__ heads, uint64_t n)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
		flags[i] = starts_tied(heads, i, n);
}

/*
 * Each such group's bounds at its number, from offsets (the exclusive sum
 * of the flags): the first row's is its offset, and the last row's (not a
 * head, the next one is or there is none) one less than its own, the
 * groups before it and its own having started before it.
 */
__global__ void
tied_bounds_kernel(uint32_t *begins, uint32_t *ends, const uint32_t *__restrict__ heads,
				   const uint32_t *__restrict__ offsets, uint64_t n)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		if (starts_tied(heads, i, n))
			begins[offsets[i]] = (uint32_t) i;
		else if (!heads[i] && (i + 1 == n || heads[i + 1]))
			ends[offsets[i] - 1] = (uint32_t) (i + 1);
	}
}

/* The arguments' check: no NULL where rows are, and rows of 32-bit indexes. */
static gs_status
check_rows(gs_context *ctx, bool given, uint64_t n)
{
	if (!ctx || (n && !given))
		return gs_fail(ctx, GS_ERR_INVALID, "NULL argument");
	if (n > GS_MAX_PAIRS)
		return gs_fail(ctx, GS_ERR_TOO_LARGE, "n = %llu does not fit 32-bit "
					   "indexes", (unsigned long long) n);
	return GS_OK;
}

gs_status
gs_mark_group_heads(gs_context *ctx, uint32_t *heads, const uint64_t *words,
					const uint32_t *order, uint64_t n, int first)
{
	GS_TRY(check_rows(ctx, heads && words, n));
	if (n == 0)
		return GS_OK;
	mark_heads_kernel<<<gs_stride_grid(ctx, n), GS_STRIDE_THREADS, 0, ctx->stream>>>(
		heads, words, order, n, first);
	return gs_after_launch(ctx, "mark group heads");
}

gs_status
gs_keep_group_heads(gs_context *ctx, uint64_t *out_places, uint32_t *out_lengths,
					const uint64_t *places, const uint32_t *lengths,
					uint32_t *heads, uint64_t n, uint64_t *kept)
{
	uint32_t	last_head = 0,
				last_offset = 0;
	uint32_t   *tmp;

	if (!kept)
		return gs_fail(ctx, GS_ERR_INVALID, "NULL argument");
	GS_TRY(check_rows(ctx, out_places && out_lengths && places && lengths && heads, n));
	*kept = 0;
	if (n == 0)
		return GS_OK;
	GS_TRY(gs_scratch(ctx, GS_SLOT_WORK, (size_t) gs_scan_tmp_words((uint32_t) n) * 4,
					  (void **) &tmp));
	GS_CHECK(ctx, cudaMemcpyAsync(&last_head, heads + n - 1, sizeof(uint32_t),
								  cudaMemcpyDeviceToHost, ctx->stream));
	GS_TRY(gs_scan_u32(ctx, heads, (uint32_t) n, tmp));
	GS_CHECK(ctx, cudaMemcpyAsync(&last_offset, heads + n - 1, sizeof(uint32_t),
								  cudaMemcpyDeviceToHost, ctx->stream));
	GS_CHECK(ctx, cudaStreamSynchronize(ctx->stream));
	*kept = (uint64_t) last_offset + last_head;
	keep_heads_kernel<<<gs_stride_grid(ctx, n), GS_STRIDE_THREADS, 0, ctx->stream>>>(
		out_places, out_lengths, places, lengths, heads, n, (uint32_t) *kept);
	return gs_after_launch(ctx, "keep group heads");
}

gs_status
gs_tied_segments(gs_context *ctx, uint32_t *begins, uint32_t *ends,
				 const uint32_t *heads, uint64_t n, uint32_t *nsegs)
{
	uint32_t   *offsets;

	if (!nsegs)
		return gs_fail(ctx, GS_ERR_INVALID, "NULL argument");
	GS_TRY(check_rows(ctx, begins && ends && heads, n));
	*nsegs = 0;
	if (n < 2)
		return GS_OK;
	GS_TRY(gs_scratch(ctx, GS_SLOT_WORK,
					  ((size_t) n + gs_scan_tmp_words((uint32_t) n)) * 4,
					  (void **) &offsets));
	tied_starts_kernel<<<gs_stride_grid(ctx, n), GS_STRIDE_THREADS, 0, ctx->stream>>>(
		offsets, heads, n);
	GS_TRY(gs_after_launch(ctx, "tied groups' starts"));
	GS_TRY(gs_scan_u32(ctx, offsets, (uint32_t) n, offsets + n));
	/* the last row starts no group of two: its offset counts them all */
	GS_CHECK(ctx, cudaMemcpyAsync(nsegs, offsets + n - 1, sizeof(uint32_t),
								  cudaMemcpyDeviceToHost, ctx->stream));
	GS_CHECK(ctx, cudaStreamSynchronize(ctx->stream));
	if (*nsegs == 0)
		return GS_OK;
	tied_bounds_kernel<<<gs_stride_grid(ctx, n), GS_STRIDE_THREADS, 0, ctx->stream>>>(
		begins, ends, heads, offsets, n);
	return gs_after_launch(ctx, "tied groups' bounds");
}
