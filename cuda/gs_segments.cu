/*
 * gs_segments.cu
 *	  GPU-Warpsort (Ye, Xiao, Huang, Wang) by segments: many independent
 *	  segments of a permutation, each ordered by a key of up to four words
 *	  that the rows' numbers look up.  The job it is made for is the one a
 *	  radix sort does badly: the groups of rows that a sort left tied on
 *	  the first words of a long key (a text's), each of 2 to thousands of
 *	  rows, finished by the next words.
 *
 * Rows compare by (key words, row number), a strict order, so the result
 * is the stable one where a segment's row numbers ascend, as a stable sort
 * leaves a tied group.
 *	  1. A segment of at most 16 rows is sorted by a group of 8 or 16 lanes
 *	     of a warp (4 or 2 segments a warp), one of at most SEG_WARP_MAX
 *	     rows by one warp, in registers, with a bitonic network of 8 to 256
 *	     elements by its size (shuffles and register swaps, no barrier).
 *	  2. A larger segment is cut into chunks of SEG_CHUNK rows.  One block
 *	     a chunk: each warp sorts a tile of 256 rows in registers as in 1,
 *	     and the tiles are merged in shared memory, each row finding its
 *	     place by a binary search of the other run (rows are distinct, so
 *	     the places are too).
 *	  3. The chunks of a segment are merged pairwise, level by level, out of
 *	     place.  One block an output chunk: two searches on the merge path
 *	     bound what each run gives it, both pieces go to shared memory, and
 *	     each row finds its place there as in 2.
 *	  The merged rows' numbers go back into the permutation.
 */
#include "gs_internal.cuh"

/* Rows of the segments that one warp sorts: eight per lane. */
#define SEG_E			8
#define SEG_WARP_MAX	(32 * SEG_E)

/* Rows of a chunk, one block's: four warp tiles. */
#define SEG_CHUNK_WARPS	4
#define SEG_CHUNK		(SEG_CHUNK_WARPS * SEG_WARP_MAX)
#define SEG_THREADS		(SEG_CHUNK_WARPS * 32)

/* Segments of at most this many rows: a group of lanes sorts each. */
#define SEG_GROUP_MAX	16

/* Warps of a block in the kernel of the warps' segments. */
#define SEG_WARPS		4

/*
 * Words of a key: every key is compared as four, those past the caller's
 * nwords zero (one instantiation of each kernel, not four).
 */
#define W				GS_SEGMENTS_MAX_WORDS

/* The arrays of a key's words, each indexed by row number. */
typedef struct SegWords
{
	const uint64_t *w[4];
} SegWords;

/* A row: its key words and its number. */
struct SegRow
{
	uint64_t	k[W];
	uint32_t	id;
};

__device__ __forceinline__ bool
row_less(const SegRow &a, const SegRow &b)
{
#pragma unroll
	for (int w = 0; w < W; w++)
		if (a.k[w] != b.k[w])
			return a.k[w] < b.k[w];
	return a.id < b.id;
}

/* Past the last row: after every row (no row number is 0xFFFFFFFF). */
__device__ __forceinline__ SegRow
pad_row()
{
	SegRow	r;

#pragma unroll
	for (int w = 0; w < W; w++)
		r.k[w] = ~(uint64_t) 0;
	r.id = 0xFFFFFFFFu;
	return r;
}

__device__ __forceinline__ SegRow
load_row(const SegWords &words, int nwords, uint32_t id)
{
	SegRow		r;

#pragma unroll
	for (int w = 0; w < W; w++)
		r.k[w] = w < nwords ? words.w[w][id] : 0;
	r.id = id;
	return r;
}

__device__ __forceinline__ SegRow
shfl_row(const SegRow &r, int lanemask)
{
	SegRow	o;

#pragma unroll
	for (int w = 0; w < W; w++)
		o.k[w] = __shfl_xor_sync(0xffffffffu, r.k[w], lanemask);
	o.id = __shfl_xor_sync(0xffffffffu, r.id, lanemask);
	return o;
}

/*
 * Sorts the E * 32 rows a warp holds striped (row j * 32 + lane in r[j])
 * ascending: a bitonic network, distances of 32 and more between a lane's
 * own registers, shorter ones by shuffles.
 */
template <int E>
__device__ __forceinline__ void
warp_bitonic(SegRow (&r)[E], int lane)
{
	constexpr int T = 32 * E;

#pragma unroll
	for (int size = 2; size <= T; size <<= 1)
	{
#pragma unroll
		for (int s = size / 2; s >= 1; s >>= 1)
		{
#pragma unroll
			for (int j = 0; j < E; j++)
			{
				const bool	up = (((j * 32 + lane) & size) == 0);

				if (s >= 32)
				{
					const int	d = s / 32;

					if ((j & d) == 0 && (row_less(r[j | d], r[j]) == up))
					{
						SegRow	t = r[j];

						r[j] = r[j | d];
						r[j | d] = t;
					}
				}
				else
				{
					SegRow	p = shfl_row(r[j], s);
					const bool	take_min = ((lane & s) == 0) == up;

					if (take_min ? row_less(p, r[j]) : row_less(r[j], p))
						r[j] = p;
				}
			}
		}
	}
}

/*
 * Sorts the G rows that each group of G lanes holds (one a lane) ascending:
 * the same network within each group, its direction by the lane's place
 * in the group, so that every group's last merge is ascending.
 */
template <int G>
__device__ __forceinline__ void
group_bitonic(SegRow &r, int lane)
{
	const int	idx = lane & (G - 1);

#pragma unroll
	for (int size = 2; size <= G; size <<= 1)
	{
#pragma unroll
		for (int s = size / 2; s >= 1; s >>= 1)
		{
			SegRow		p = shfl_row(r, s);
			const bool	up = (idx & size) == 0;
			const bool	take_min = ((idx & s) == 0) == up;

			if (take_min ? row_less(p, r) : row_less(r, p))
				r = p;
		}
	}
}

/*
 * G lanes per segment of more than shorter and at most G rows, 32 / G
 * segments a warp; others are left.  Every lane takes part in the
 * shuffles, a lane without a row holding padding.
 */
template <int G>
__global__ void __launch_bounds__(SEG_WARPS * 32)
sort_group_segments(SegWords words, int nwords, uint32_t *order,
					const uint32_t *__restrict__ begins,
					const uint32_t *__restrict__ ends, uint32_t nsegs, uint32_t shorter)
{
	const int	lane = threadIdx.x & 31;
	const uint32_t seg = (blockIdx.x * SEG_WARPS + (threadIdx.x >> 5)) * (32 / G) + lane / G;
	const uint32_t idx = lane & (G - 1);
	uint32_t	begin = 0,
				len = 0;
	SegRow		r;

	if (seg < nsegs)
	{
		begin = begins[seg];
		len = ends[seg] - begin;
		if (len <= max(shorter, 1u) || len > G)
			len = 0;
	}
	r = idx < len ? load_row(words, nwords, order[begin + idx]) : pad_row();
	group_bitonic<G>(r, lane);
	if (idx < len)
		order[begin + idx] = r.id;
}

/* Sorts rows[0, len) (len <= 32 * E) of a warp's segment in place. */
template <int E>
__device__ __forceinline__ void
warp_segment(const SegWords &words, int nwords, uint32_t *rows, uint32_t len, int lane)
{
	SegRow	r[E];

#pragma unroll
	for (int j = 0; j < E; j++)
	{
		const uint32_t i = j * 32 + lane;

		r[j] = i < len ? load_row(words, nwords, rows[i]) : pad_row();
	}
	warp_bitonic<E>(r, lane);
#pragma unroll
	for (int j = 0; j < E; j++)
	{
		const uint32_t i = j * 32 + lane;

		if (i < len)
			rows[i] = r[j].id;
	}
}

/* One warp per segment of SEG_GROUP_MAX + 1 to SEG_WARP_MAX rows; others are left. */
__global__ void __launch_bounds__(SEG_WARPS * 32)
sort_warp_segments(SegWords words, int nwords, uint32_t *order, const uint32_t *__restrict__ begins,
				   const uint32_t *__restrict__ ends, uint32_t nsegs)
{
	const uint32_t seg = blockIdx.x * SEG_WARPS + (threadIdx.x >> 5);
	const int	lane = threadIdx.x & 31;

	if (seg >= nsegs)
		return;
	const uint32_t begin = begins[seg];
	const uint32_t len = ends[seg] - begin;

	if (len <= SEG_GROUP_MAX || len > SEG_WARP_MAX)
		return;
	if (len <= 32)
		warp_segment<1>(words, nwords, order + begin, len, lane);
	else if (len <= 64)
		warp_segment<2>(words, nwords, order + begin, len, lane);
	else if (len <= 128)
		warp_segment<4>(words, nwords, order + begin, len, lane);
	else
		warp_segment<8>(words, nwords, order + begin, len, lane);
}

/*
 * The chunks of the segments larger than a warp's: chunks[s] = their
 * number (0 for the others); the widest segment's count in *most.
 */
__global__ void
count_chunks(const uint32_t *__restrict__ begins, const uint32_t *__restrict__ ends,
			 uint32_t nsegs, uint32_t *chunks, uint32_t *most)
{
	for (uint32_t s = blockIdx.x * blockDim.x + threadIdx.x; s < nsegs;
		 s += gridDim.x * blockDim.x)
	{
		const uint32_t len = ends[s] - begins[s];
		const uint32_t c = len > SEG_WARP_MAX ? (len + SEG_CHUNK - 1) / SEG_CHUNK : 0;

		chunks[s] = c;
		if (c > 0)
			atomicMax(most, c);
	}
}

/* Chunk t's segment: the last s whose first chunk (first[s]) is at most t. */
__device__ __forceinline__ uint32_t
chunk_segment(const uint32_t *first, uint32_t nsegs, uint32_t t)
{
	uint32_t	lo = 0,
				hi = nsegs;

	while (hi - lo > 1)
	{
		const uint32_t mid = (lo + hi) / 2;

		if (first[mid] <= t)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The rows of a segment in the merge buffers: row o of segment s at
 * begins[s] + o, its place in the order, keys row-major (W words a row),
 * numbers apart.
 */
struct SegBuffer
{
	uint64_t   *keys;
	uint32_t   *ids;
};

__device__ __forceinline__ SegRow
buffer_row(const SegBuffer &b, uint64_t q)
{
	SegRow	r;

#pragma unroll
	for (int w = 0; w < W; w++)
		r.k[w] = b.keys[q * W + w];
	r.id = b.ids[q];
	return r;
}

__device__ __forceinline__ void
buffer_put(const SegBuffer &b, uint64_t q, const SegRow &r)
{
#pragma unroll
	for (int w = 0; w < W; w++)
		b.keys[q * W + w] = r.k[w];
	b.ids[q] = r.id;
}

/* Rows in shared memory, a word array each, so that lanes' reads spread. */
struct SmemRows
{
	uint64_t	k[W][SEG_CHUNK];
	uint32_t	id[SEG_CHUNK];
};

__device__ __forceinline__ SegRow
smem_row(const SmemRows &s, uint32_t i)
{
	SegRow	r;

#pragma unroll
	for (int w = 0; w < W; w++)
		r.k[w] = s.k[w][i];
	r.id = s.id[i];
	return r;
}

__device__ __forceinline__ void
smem_put(SmemRows &s, uint32_t i, const SegRow &r)
{
#pragma unroll
	for (int w = 0; w < W; w++)
		s.k[w][i] = r.k[w];
	s.id[i] = r.id;
}

/* How many of rows[from, from + n) are below r (they ascend). */
__device__ __forceinline__ uint32_t
rank_in(const SmemRows &s, uint32_t from, uint32_t n, const SegRow &r)
{
	uint32_t	lo = 0,
				hi = n;

	while (lo < hi)
	{
		const uint32_t mid = (lo + hi) / 2;

		if (row_less(smem_row(s, from + mid), r))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Sorts chunk t of its segment: the warps' tiles in registers, then merged
 * in shared memory (runs of 256 to SEG_CHUNK / 2), each thread's rows
 * held in registers between a level's reads and its writes; writes the
 * chunk's rows to the merge buffer.
 */
__global__ void __launch_bounds__(SEG_THREADS)
sort_chunks(SegWords words, int nwords, const uint32_t *__restrict__ order,
			const uint32_t *__restrict__ begins, const uint32_t *__restrict__ ends,
			const uint32_t *__restrict__ first, uint32_t nsegs, SegBuffer out)
{
	__shared__ SmemRows rows;
	constexpr int M = SEG_CHUNK / SEG_THREADS;
	const uint32_t t = blockIdx.x;
	const uint32_t s = chunk_segment(first, nsegs, t);
	const uint32_t c = t - first[s];
	const uint32_t begin = begins[s] + c * SEG_CHUNK;
	const uint32_t len = min((uint32_t) SEG_CHUNK, ends[s] - begin);
	const int	lane = threadIdx.x & 31;
	const uint32_t tile = (threadIdx.x >> 5) * SEG_WARP_MAX;
	SegRow	r[SEG_E];
	uint32_t	place[M];

	static_assert(M == SEG_E, "a thread's rows: a tile's lane's");
#pragma unroll
	for (int j = 0; j < SEG_E; j++)
	{
		const uint32_t i = tile + j * 32 + lane;

		r[j] = i < len ? load_row(words, nwords, order[begin + i]) : pad_row();
	}
	warp_bitonic<SEG_E>(r, lane);
#pragma unroll
	for (int j = 0; j < SEG_E; j++)
		smem_put(rows, tile + j * 32 + lane, r[j]);
	__syncthreads();

	for (uint32_t run = SEG_WARP_MAX; run < len; run <<= 1)
	{
#pragma unroll
		for (int m = 0; m < M; m++)
		{
			const uint32_t i = threadIdx.x + m * SEG_THREADS;

			if (i < len)
			{
				const uint32_t k = i / run;
				const uint32_t p = (k ^ 1) * run;

				r[m] = smem_row(rows, i);
				place[m] = (k & ~1u) * run + (i - k * run);
				if (p < len)
					place[m] += rank_in(rows, p, min(run, len - p), r[m]);
			}
		}
		__syncthreads();
#pragma unroll
		for (int m = 0; m < M; m++)
			if (threadIdx.x + m * SEG_THREADS < len)
				smem_put(rows, place[m], r[m]);
		__syncthreads();
	}
	for (uint32_t i = threadIdx.x; i < len; i += SEG_THREADS)
		buffer_put(out, (uint64_t) begins[s] + c * SEG_CHUNK + i,
					  smem_row(rows, i));
}

/*
 * How many rows of run A (na) are among the first d of A merged with B (nb):
 * the merge path's split, by binary search.
 */
__device__ __forceinline__ uint32_t
merge_split(const SegBuffer &buf, uint64_t a, uint32_t na, uint64_t b,
			uint32_t nb, uint32_t d)
{
	uint32_t	lo = d > nb ? d - nb : 0,
				hi = min(d, na);

	while (lo < hi)
	{
		const uint32_t mid = (lo + hi) / 2;

		if (row_less(buffer_row(buf, a + mid), buffer_row(buf, b + d - 1 - mid)))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * One level of the chunks' merges: output chunk t of its segment, from the
 * pair of runs of run rows it lies in (the second may be short or absent).
 */
__global__ void __launch_bounds__(SEG_THREADS)
merge_chunks(const uint32_t *__restrict__ begins, const uint32_t *__restrict__ ends,
			 const uint32_t *__restrict__ first, uint32_t nsegs, uint32_t run,
			 SegBuffer in, SegBuffer out)
{
	__shared__ SmemRows piece;
	__shared__ uint32_t split[2];
	const uint32_t t = blockIdx.x;
	const uint32_t s = chunk_segment(first, nsegs, t);
	const uint32_t len = ends[s] - begins[s];
	const uint64_t base = begins[s];
	const uint32_t d0 = (t - first[s]) * SEG_CHUNK;
	const uint32_t pair = d0 / (2 * run) * (2 * run);
	const uint32_t na = min(run, len - pair);
	const uint32_t nb = len - pair > run ? min(run, len - pair - run) : 0;
	const uint32_t e0 = d0 - pair;
	const uint32_t e1 = min(e0 + SEG_CHUNK, na + nb);

	if (threadIdx.x < 2)
		split[threadIdx.x] = merge_split(in, base + pair, na, base + pair + na, nb,
											threadIdx.x == 0 ? e0 : e1);
	__syncthreads();

	const uint32_t a0 = split[0],
				a1 = split[1];
	const uint32_t b0 = e0 - a0;
	const uint32_t nA = a1 - a0;
	const uint32_t n = e1 - e0;

	/* A's piece first, then B's */
	for (uint32_t i = threadIdx.x; i < n; i += SEG_THREADS)
		smem_put(piece, i, buffer_row(in, i < nA ? base + pair + a0 + i
											: base + pair + na + b0 + (i - nA)));
	__syncthreads();
	for (uint32_t i = threadIdx.x; i < n; i += SEG_THREADS)
	{
		const SegRow row = smem_row(piece, i);
		uint32_t	place;

		if (i < nA)
			place = i + rank_in(piece, nA, n - nA, row);
		else
			place = (i - nA) + rank_in(piece, 0, nA, row);
		buffer_put(out, base + d0 + place, row);
	}
}

/* The merged rows' numbers back into the permutation. */
__global__ void __launch_bounds__(SEG_THREADS)
put_back(uint32_t *order, const uint32_t *__restrict__ begins,
		 const uint32_t *__restrict__ ends, const uint32_t *__restrict__ first,
		 uint32_t nsegs, SegBuffer in)
{
	const uint32_t t = blockIdx.x;
	const uint32_t s = chunk_segment(first, nsegs, t);
	const uint32_t c = (t - first[s]) * SEG_CHUNK;
	const uint32_t len = min((uint32_t) SEG_CHUNK, ends[s] - begins[s] - c);

	for (uint32_t i = threadIdx.x; i < len; i += SEG_THREADS)
		order[begins[s] + c + i] = in.ids[(uint64_t) begins[s] + c + i];
}

static gs_status
sort_segments(gs_context *ctx, int nwords, const SegWords &words, uint32_t *order,
			  uint64_t n, const uint32_t *begins, const uint32_t *ends, uint32_t nsegs)
{
	uint32_t   *first;
	uint32_t   *small;
	uint32_t	host[2];
	uint32_t	nchunks,
				most;
	SegBuffer buf[2];
	int			cur = 0;

	/* 2 to 8 rows: 8 lanes each; 9 to 16: 16 lanes; then a warp each */
	sort_group_segments<8><<<gs_blocks(nsegs, SEG_WARPS * 4), SEG_WARPS * 32, 0, ctx->stream>>>(
		words, nwords, order, begins, ends, nsegs, 0);
	GS_TRY(gs_after_launch(ctx, "segments: groups of 8 lanes"));
	sort_group_segments<SEG_GROUP_MAX><<<gs_blocks(nsegs, SEG_WARPS * 2), SEG_WARPS * 32, 0, ctx->stream>>>(
		words, nwords, order, begins, ends, nsegs, 8);
	GS_TRY(gs_after_launch(ctx, "segments: groups of 16 lanes"));
	sort_warp_segments<<<gs_blocks(nsegs, SEG_WARPS), SEG_WARPS * 32, 0, ctx->stream>>>(
		words, nwords, order, begins, ends, nsegs);
	GS_TRY(gs_after_launch(ctx, "segments: warps"));

	/* the larger segments' chunks: their count, each segment's first */
	GS_TRY(gs_scratch(ctx, GS_SLOT_WORK,
					  ((size_t) nsegs + 1 + gs_scan_tmp_words(nsegs + 1)) * 4,
					  (void **) &first));
	GS_TRY(gs_scratch(ctx, GS_SLOT_SMALL, GS_SMALL_BYTES, (void **) &small));
	GS_CHECK(ctx, cudaMemsetAsync(small, 0, 4, ctx->stream));
	GS_CHECK(ctx, cudaMemsetAsync(first + nsegs, 0, 4, ctx->stream));
	count_chunks<<<gs_stride_grid(ctx, nsegs), GS_STRIDE_THREADS, 0, ctx->stream>>>(
		begins, ends, nsegs, first, small);
	GS_TRY(gs_after_launch(ctx, "segments: chunks"));
	GS_TRY(gs_scan_u32(ctx, first, nsegs + 1, first + nsegs + 1));
	GS_CHECK(ctx, cudaMemcpyAsync(&host[0], first + nsegs, 4, cudaMemcpyDeviceToHost, ctx->stream));
	GS_CHECK(ctx, cudaMemcpyAsync(&host[1], small, 4, cudaMemcpyDeviceToHost, ctx->stream));
	GS_CHECK(ctx, cudaStreamSynchronize(ctx->stream));
	nchunks = host[0];
	most = host[1];
	if (nchunks == 0)
		return GS_OK;

	/* two buffers of the order's length (GS_SEGMENTS_ROW_BYTES) */
	GS_TRY(gs_scratch(ctx, GS_SLOT_ALT_KEYS, (size_t) 2 * n * W * 8, (void **) &buf[0].keys));
	GS_TRY(gs_scratch(ctx, GS_SLOT_ALT_VALS, (size_t) 2 * n * 4, (void **) &buf[0].ids));
	buf[1].keys = buf[0].keys + (size_t) n * W;
	buf[1].ids = buf[0].ids + (size_t) n;

	sort_chunks<<<nchunks, SEG_THREADS, 0, ctx->stream>>>(
		words, nwords, order, begins, ends, first, nsegs, buf[0]);
	GS_TRY(gs_after_launch(ctx, "segments: chunk sort"));
	for (uint32_t run = SEG_CHUNK; run < most * SEG_CHUNK; run <<= 1)
	{
		merge_chunks<<<nchunks, SEG_THREADS, 0, ctx->stream>>>(
			begins, ends, first, nsegs, run, buf[cur], buf[cur ^ 1]);
		GS_TRY(gs_after_launch(ctx, "segments: chunk merge"));
		cur ^= 1;
	}
	put_back<<<nchunks, SEG_THREADS, 0, ctx->stream>>>(order, begins, ends, first,
														   nsegs, buf[cur]);
	return gs_after_launch(ctx, "segments: put back");
}

gs_status
gs_sort_segments(gs_context *ctx, int nwords, const uint64_t *const *words,
				 uint32_t *order, uint64_t n, const uint32_t *begins,
				 const uint32_t *ends, uint32_t nsegs)
{
	SegWords	cols = {{NULL, NULL, NULL, NULL}};

	if (!ctx || nwords < 1 || nwords > GS_SEGMENTS_MAX_WORDS || (nsegs && (!words || !order || !begins || !ends)))
		return gs_fail(ctx, GS_ERR_INVALID, "segments: NULL argument or %d key words", nwords);
	if (n > GS_MAX_PAIRS - 1)
		return gs_fail(ctx, GS_ERR_TOO_LARGE, "n = %llu does not fit 32-bit "
					   "indexes", (unsigned long long) n);
	if (nsegs == 0)
		return GS_OK;
	for (int w = 0; w < nwords; w++)
		cols.w[w] = words[w];
	return sort_segments(ctx, nwords, cols, order, n, begins, ends, nsegs);
}
