/*
 * gs_samplesort.cu
 *	  Deterministic sample sort / GPU Bucket Sort (Dehne & Zaboli):
 *	  1. sort tiles of SS_TILE pairs locally (CUB block merge sort);
 *	  2. take s equidistant samples from every sorted tile;
 *	  3. sort the samples (CUB radix sort), and take nb-1 equidistant
 *	     global splitters;
 *	  4. find the splitters in every tile (binary search in shared memory),
 *	     scan the (bucket, tile) counts, and scatter each tile's pieces so
 *	     that bucket b holds the pairs between splitters b-1 and b;
 *	  5. sort each bucket (bitonic when it fits a block, else radix).
 *	  Steps 1-4 are gs_bucket_partition(), the building block for inputs
 *	  sorted piece by piece; everything but the final bucket boundaries
 *	  stays on the device.
 *
 *	  The order is the total order (key, value, tile, rank in the sorted
 *	  tile): a run of equal pairs is split between buckets like any other
 *	  range.  A sample records its tile and rank in its id (tile * s +
 *	  sample number); the sample sort is stable over ids.  The last tile is
 *	  padded with pairs greater than every real one, which never leave it.
 *
 *	  The bound (gpusort_cuda.h): tiles of T pairs, m tiles, s samples a
 *	  tile (s = the power of two >= nb, at most T), g = T / s pairs between
 *	  samples, S = m * s samples, splitter b the sample of rank
 *	  floor(b * S / nb).  A tile has at least u*g and fewer than (u+1)*g
 *	  pairs below a splitter of which u of its samples lie below, so bucket
 *	  b gets fewer than (u_hi - u_lo + 1) * g from each tile and at most
 *	  ceil(S / nb) * g + m * (g - 1) in all; that is below (2n + 3T) / nb
 *	  for s >= nb, and at most ceil(m * T / nb) for s = T (g = 1).
 */
#include <vector>

#include <cub/block/block_exchange.cuh>
#include <cub/block/block_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>

#include "gs_internal.cuh"

/* The sample sort policy (gs_tuning.cuh) by the names the kernels use */
#define SS_BUCKET_PAIRS (gs_samplesort_tuning.bucket_pairs)
#define SS_MAX_BUCKETS (gs_samplesort_tuning.max_buckets)
#define SS_THREADS (gs_samplesort_tuning.threads)
#define SS_TILE_THREADS (gs_samplesort_tuning.tile_threads)
#define SS_TILE_ITEMS (gs_samplesort_tuning.tile_items)
#define SS_TILE_BLOCKS_PER_SM (gs_samplesort_tuning.tile_blocks_per_sm)

#define SS_TILE (SS_TILE_THREADS * SS_TILE_ITEMS)
/* gs_bucket_partition's most buckets: the bound's proof needs 2T >= it */
#define SS_PARTITION_MAX_BUCKETS 8192

static_assert((SS_TILE & (SS_TILE - 1)) == 0 && SS_TILE >= 4096 && SS_TILE <= 8192,
			  "the bucket bound in gpusort_cuda.h needs tiles of 4096 to 8192 pairs, a power of two");
static_assert(SS_THREADS % 32 == 0, "whole warps");

/*
 * A (key, value) pair as one sortable item: 32-bit keys packed with the
 * value into one word (key high), 64-bit keys beside it in three 32-bit
 * words (12 bytes, not 16 with a 64-bit field's alignment, so that a tile's
 * merge sort takes 48 KB of shared memory, which Turing's 64 KB block
 * holds).  pad() is the largest pair, the last tile's filler.
 */
template <typename K> struct ss_pair;

template <>
struct ss_pair<uint32_t>
{
	uint64_t	kv;

	__host__ __device__ static ss_pair make(uint32_t k, uint32_t v)
	{
		return {((uint64_t) k << 32) | v};
	}
	__host__ __device__ static ss_pair pad() { return {~(uint64_t) 0}; }
	__host__ __device__ uint32_t key() const { return (uint32_t) (kv >> 32); }
	__host__ __device__ uint32_t val() const { return (uint32_t) kv; }
	__device__ bool less(const ss_pair &o) const { return kv < o.kv; }
};

template <>
struct ss_pair<uint64_t>
{
	uint32_t	khi;
	uint32_t	klo;
	uint32_t	v;

	__host__ __device__ static ss_pair make(uint64_t k, uint32_t v)
	{
		return {(uint32_t) (k >> 32), (uint32_t) k, v};
	}
	__host__ __device__ static ss_pair pad() { return {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}; }
	__host__ __device__ uint64_t key() const { return ((uint64_t) khi << 32) | klo; }
	__host__ __device__ uint32_t val() const { return v; }
	__device__ bool less(const ss_pair &o) const
	{
		const uint64_t a = key(),
					b = o.key();

		return a < b || (a == b && v < o.v);
	}
};
static_assert(sizeof(ss_pair<uint64_t>) == 12, "12-byte pairs");

struct ss_pair_less
{
	template <typename P>
	__device__ bool operator()(const P &a, const P &b) const { return a.less(b); }
};

/* The fields of a pair for CUB's radix sort, most significant first */
template <typename K> struct ss_decomposer;

template <>
struct ss_decomposer<uint32_t>
{
	__host__ __device__ cuda::std::tuple<uint64_t &> operator()(ss_pair<uint32_t> &p) const
	{
		return {p.kv};
	}
};

template <>
struct ss_decomposer<uint64_t>
{
	__host__ __device__ cuda::std::tuple<uint32_t &, uint32_t &, uint32_t &> operator()(ss_pair<uint64_t> &p) const
	{
		return {p.khi, p.klo, p.v};
	}
};

template <typename K>
struct ss_tile_sort
{
	typedef cub::BlockMergeSort<ss_pair<K>, SS_TILE_THREADS, SS_TILE_ITEMS> Sort;
	typedef cub::BlockExchange<ss_pair<K>, SS_TILE_THREADS, SS_TILE_ITEMS> Exchange;
	static constexpr size_t smem = sizeof(typename Sort::TempStorage) > sizeof(typename Exchange::TempStorage) ?
		sizeof(typename Sort::TempStorage) : sizeof(typename Exchange::TempStorage);
};

/* Pairs of tile t: [t * SS_TILE, + tile_len) */
__device__ __forceinline__ uint32_t
tile_len(uint32_t n, uint32_t t)
{
	uint64_t	base = (uint64_t) t * SS_TILE;

	return (uint32_t) min((uint64_t) SS_TILE, n - base);
}

/*
 * Step 1 and 2, one block per tile: sort the tile (padded to SS_TILE), write
 * it back (kin may equal tk), and write its s samples, the pairs of ranks
 * g-1, 2g-1, ... (padding pairs included) with their ids.
 */
template <typename K>
__global__ void __launch_bounds__(SS_TILE_THREADS, GS_MIN_BLOCKS(SS_TILE_THREADS, SS_TILE_BLOCKS_PER_SM))
sort_tiles(const K *kin, const uint32_t *vin, K *tk, uint32_t *tv, uint32_t n,
		   int s_log2, ss_pair<K> *samples, uint32_t *sample_ids)
{
	typedef ss_tile_sort<K> TS;
	extern __shared__ __align__(16) unsigned char ss_smem[];
	const uint32_t t = blockIdx.x;
	const uint64_t base = (uint64_t) t * SS_TILE;
	const uint32_t len = tile_len(n, t);
	const int	g_log2 = __ffs(SS_TILE) - 1 - s_log2;
	ss_pair<K>	items[SS_TILE_ITEMS];

	/* striped loads (coalesced): the sort does not care where items start */
#pragma unroll
	for (int i = 0; i < SS_TILE_ITEMS; i++)
	{
		uint32_t	j = i * SS_TILE_THREADS + threadIdx.x;

		items[i] = j < len ? ss_pair<K>::make(kin[base + j], vin[base + j]) :
			ss_pair<K>::pad();
	}
	typename TS::Sort(*(typename TS::Sort::TempStorage *) ss_smem).Sort(items, ss_pair_less());

	/* blocked now: thread i holds ranks i * SS_TILE_ITEMS + 0, 1, ... */
#pragma unroll
	for (int i = 0; i < SS_TILE_ITEMS; i++)
	{
		uint32_t	r = threadIdx.x * SS_TILE_ITEMS + i;

		if (((r + 1) & ((1u << g_log2) - 1)) == 0)
		{
			uint32_t	id = (t << s_log2) + (r >> g_log2);

			samples[id] = items[i];
			sample_ids[id] = id;
		}
	}
	__syncthreads();			/* the sort's shared memory is the exchange's */
	typename TS::Exchange(*(typename TS::Exchange::TempStorage *) ss_smem).BlockedToStriped(items);
#pragma unroll
	for (int i = 0; i < SS_TILE_ITEMS; i++)
	{
		uint32_t	j = i * SS_TILE_THREADS + threadIdx.x;

		if (j < len)
		{
			tk[base + j] = items[i].key();
			tv[base + j] = items[i].val();
		}
	}
}

/* Step 3: splitter b (1 <= b < nb) is the sample of rank b * ns / nb. */
template <typename K>
__global__ void
pick_splitters(const ss_pair<K> *sorted, const uint32_t *sorted_ids,
			   uint32_t ns, uint32_t nb, ss_pair<K> *spl, uint32_t *spl_ids)
{
	uint32_t	b = blockIdx.x * blockDim.x + threadIdx.x + 1;

	if (b >= nb)
		return;
	uint64_t	i = (uint64_t) b * ns / nb;

	spl[b - 1] = sorted[i];
	spl_ids[b - 1] = sorted_ids[i];
}

/*
 * Step 4, one block per sorted tile: P[t][b] = the tile's pairs below
 * splitter b (P[t][0] = 0, P[t][nb] = len); C[b][t] = bucket b's count in
 * the tile, from the P[t] that the block wrote (read back after the
 * barrier: up to 32 KB that shared memory need not hold beside the tile).
 * Below, in the total order: a tile before the splitter's tile counts its
 * pairs equal to the splitter's (key, value), a tile after it does not, and
 * the splitter's own tile counts the ranks before it.
 */
template <typename K>
__global__ void __launch_bounds__(SS_THREADS)
tile_bounds(const K *tk, const uint32_t *tv, uint32_t n, uint32_t m,
			int s_log2, const ss_pair<K> *spl, const uint32_t *spl_ids,
			uint32_t nb, uint32_t *P, uint32_t *C)
{
	extern __shared__ __align__(16) unsigned char ss_smem[];
	K		   *sk = (K *) ss_smem;
	uint32_t   *sv = (uint32_t *) (sk + SS_TILE);
	const uint32_t t = blockIdx.x;
	uint32_t   *Pt = P + (uint64_t) t * (nb + 1);
	const uint64_t base = (uint64_t) t * SS_TILE;
	const uint32_t len = tile_len(n, t);
	const int	g_log2 = __ffs(SS_TILE) - 1 - s_log2;

	for (uint32_t j = threadIdx.x; j < len; j += SS_THREADS)
	{
		sk[j] = tk[base + j];
		sv[j] = tv[base + j];
	}
	__syncthreads();
	for (uint32_t b = threadIdx.x; b <= nb; b += SS_THREADS)
	{
		uint32_t	pos;

		if (b == 0)
			pos = 0;
		else if (b == nb)
			pos = len;
		else
		{
			const ss_pair<K> sp_b = spl[b - 1];
			const uint32_t id = spl_ids[b - 1];
			const uint32_t st = id >> s_log2;

			if (st == t)
			{
				uint32_t	rank = (((id & ((1u << s_log2) - 1)) + 1) << g_log2) - 1;

				pos = min(rank, len);
			}
			else
			{
				const K		k = sp_b.key();
				const uint32_t v = sp_b.val();
				const bool	or_equal = t < st;
				uint32_t	lo = 0,
							hi = len;

				while (lo < hi)
				{
					uint32_t	mid = (lo + hi) >> 1;
					bool		below = sk[mid] < k ||
						(sk[mid] == k && (sv[mid] < v || (or_equal && sv[mid] == v)));

					if (below)
						lo = mid + 1;
					else
						hi = mid;
				}
				pos = lo;
			}
		}
		Pt[b] = pos;
	}
	__syncthreads();
	for (uint32_t b = threadIdx.x; b < nb; b += SS_THREADS)
		C[(uint64_t) b * m + t] = Pt[b + 1] - Pt[b];
}

__global__ void
bucket_starts(const uint32_t *C, uint32_t m, uint32_t nb, uint32_t n,
			  uint32_t *off)
{
	uint32_t	b = blockIdx.x * blockDim.x + threadIdx.x;

	if (b < nb)
		off[b] = C[(uint64_t) b * m];
	else if (b == nb)
		off[b] = n;
}

/*
 * Step 4, the scatter, one block per sorted tile: rank j of tile t lies in
 * the bucket b with P[t][b] <= j < P[t][b+1] and goes to C[b][t] + j -
 * P[t][b] (C scanned).  Consecutive ranks go to consecutive places.
 */
template <typename K>
__global__ void __launch_bounds__(SS_THREADS)
scatter(const K *tk, const uint32_t *tv, K *kout, uint32_t *vout,
		uint32_t n, uint32_t m, uint32_t nb, uint32_t top, const uint32_t *P,
		const uint32_t *C)
{
	/* sp[b] = P[t][b] for b < nb (the search reads no other): 2 nb words */
	extern __shared__ __align__(16) unsigned char ss_smem[];
	uint32_t   *sp = (uint32_t *) ss_smem;
	uint32_t   *dst0 = sp + nb;
	const uint32_t t = blockIdx.x;
	const uint64_t base = (uint64_t) t * SS_TILE;
	const uint32_t len = tile_len(n, t);

	for (uint32_t b = threadIdx.x; b < nb; b += SS_THREADS)
	{
		uint32_t	p = P[(uint64_t) t * (nb + 1) + b];

		sp[b] = p;
		dst0[b] = C[(uint64_t) b * m + t] - p;	/* mod 2^32: + j fits */
	}
	__syncthreads();
	for (uint32_t j = threadIdx.x; j < len; j += SS_THREADS)
	{
		/* the last b < nb with sp[b] <= j (sp[0] = 0; top: 2^floor(log2 nb)) */
		uint32_t	b = 0;

		for (uint32_t step = top; step; step >>= 1)
			if (b + step < nb && sp[b + step] <= j)
				b += step;
		uint32_t	dst = dst0[b] + j;

		kout[dst] = tk[base + j];
		vout[dst] = tv[base + j];
	}
}

static uint32_t
choose_buckets(uint32_t n)
{
	uint32_t	nb = gs_blocks(n, SS_BUCKET_PAIRS);

	return nb < 2 ? 2 : (nb > SS_MAX_BUCKETS ? SS_MAX_BUCKETS : nb);
}

static uint32_t
align256(uint64_t bytes)
{
	return (uint32_t) ((bytes + 255) & ~(uint64_t) 255);
}

/*
 * Steps 1-4: kin -> (sorted tiles in tk/tv) -> buckets in kout/vout, for
 * 1 <= n and 2 <= nb <= SS_PARTITION_MAX_BUCKETS.  tk/tv may equal
 * kin/vin.  The nb + 1 bucket boundaries land in off (host); split_keys,
 * when given, gets the nb - 1 splitters' keys (bucket b's keys lie in
 * [split_keys[b-1], split_keys[b]]).
 */
template <typename K>
static gs_status
partition(gs_context *ctx, const K *kin, const uint32_t *vin, K *tk,
		  uint32_t *tv, K *kout, uint32_t *vout, uint32_t n, uint32_t nb,
		  std::vector<uint32_t> &off, std::vector<K> *split_keys)
{
	typedef ss_pair<K> Pair;
	const uint32_t m = gs_blocks(n, SS_TILE);
	int			s_log2 = 0;

	while ((1u << s_log2) < nb && (1u << s_log2) < (uint32_t) SS_TILE)
		s_log2++;
	const uint64_t ns = (uint64_t) m << s_log2;
	const uint64_t ncount = (uint64_t) nb * m;
	uint32_t	top = 1;

	while (top * 2 < nb)
		top *= 2;
	if (ns > 0xFFFFFFFFull || ncount > 0xFFFFFFFFull)
		return gs_fail(ctx, GS_ERR_TOO_LARGE, "n = %u: too many samples or buckets", n);

	/* samples and their ids, twice (CUB's double buffers) */
	Pair	   *samples;
	uint32_t   *ids;

	GS_TRY(gs_scratch(ctx, GS_SLOT_SAMPLE_KEYS, 2 * ns * sizeof(Pair), (void **) &samples));
	GS_TRY(gs_scratch(ctx, GS_SLOT_SAMPLE_VALS, 2 * ns * 4, (void **) &ids));
	cub::DoubleBuffer<Pair> dsamples(samples, samples + ns);
	cub::DoubleBuffer<uint32_t> dids(ids, ids + ns);
	size_t		cub_bytes = 0;

	GS_CHECK(ctx, cub::DeviceRadixSort::SortPairs(NULL, cub_bytes, dsamples, dids, (uint32_t) ns,
												  ss_decomposer<K>(), ctx->stream));

	/* work: splitters | their ids | P (m x (nb+1)) | C (nb x m) | scan tmp | offsets | CUB's */
	size_t		o_spl = 0,
				o_ids = o_spl + align256((uint64_t) nb * sizeof(Pair)),
				o_P = o_ids + align256((uint64_t) nb * 4),
				o_C = o_P + align256((uint64_t) m * (nb + 1) * 4),
				o_tmp = o_C + align256(ncount * 4),
				o_off = o_tmp + align256((uint64_t) gs_scan_tmp_words((uint32_t) ncount) * 4),
				o_cub = o_off + align256((uint64_t) (nb + 1) * 4),
				bytes = o_cub + cub_bytes;
	char	   *work;

	GS_TRY(gs_scratch(ctx, GS_SLOT_BUCKET_WORK, bytes, (void **) &work));
	Pair	   *spl = (Pair *) (work + o_spl);
	uint32_t   *spl_ids = (uint32_t *) (work + o_ids);
	uint32_t   *P = (uint32_t *) (work + o_P);
	uint32_t   *C = (uint32_t *) (work + o_C);
	uint32_t   *d_off = (uint32_t *) (work + o_off);

	/* steps 1-2 */
	const size_t sort_smem = ss_tile_sort<K>::smem;

	GS_TRY(gs_set_smem(ctx, sort_tiles<K>, sort_smem, "samplesort: tiles"));
	sort_tiles<K><<<m, SS_TILE_THREADS, sort_smem, ctx->stream>>>(kin, vin, tk, tv, n, s_log2,
																   samples, ids);
	GS_TRY(gs_after_launch(ctx, "samplesort: tiles"));

	/* step 3: stable over the ids, so ties keep (tile, rank) order */
	GS_CHECK(ctx, cub::DeviceRadixSort::SortPairs(work + o_cub, cub_bytes, dsamples, dids,
												  (uint32_t) ns, ss_decomposer<K>(), ctx->stream));
	GS_TRY(gs_after_launch(ctx, "samplesort: samples"));
	pick_splitters<K><<<gs_blocks(nb, SS_THREADS), SS_THREADS, 0, ctx->stream>>>(dsamples.Current(), dids.Current(),
																				 (uint32_t) ns, nb, spl, spl_ids);
	GS_TRY(gs_after_launch(ctx, "samplesort: splitters"));

	/* step 4 */
	const size_t bounds_smem = (size_t) SS_TILE * (sizeof(K) + 4);

	GS_TRY(gs_set_smem(ctx, tile_bounds<K>, bounds_smem, "samplesort: tile bounds"));
	tile_bounds<K><<<m, SS_THREADS, bounds_smem, ctx->stream>>>(tk, tv, n, m, s_log2, spl, spl_ids,
																nb, P, C);
	GS_TRY(gs_after_launch(ctx, "samplesort: tile bounds"));
	GS_TRY(gs_scan_u32(ctx, C, (uint32_t) ncount, (uint32_t *) (work + o_tmp)));
	bucket_starts<<<gs_blocks(nb + 1, SS_THREADS), SS_THREADS, 0, ctx->stream>>>(C, m, nb, n, d_off);
	GS_TRY(gs_after_launch(ctx, "samplesort: bucket starts"));
	const size_t scatter_smem = (size_t) 2 * nb * 4;

	GS_TRY(gs_set_smem(ctx, scatter<K>, scatter_smem, "samplesort: scatter"));
	scatter<K><<<m, SS_THREADS, scatter_smem, ctx->stream>>>(tk, tv, kout, vout, n, m, nb, top, P, C);
	GS_TRY(gs_after_launch(ctx, "samplesort: scatter"));

	off.resize(nb + 1);
	GS_CHECK(ctx, cudaMemcpyAsync(off.data(), d_off, (nb + 1) * 4, cudaMemcpyDeviceToHost, ctx->stream));
	std::vector<Pair> hspl(split_keys ? nb - 1 : 0);

	if (split_keys)
		GS_CHECK(ctx, cudaMemcpyAsync(hspl.data(), spl, (nb - 1) * sizeof(Pair), cudaMemcpyDeviceToHost, ctx->stream));
	GS_CHECK(ctx, cudaStreamSynchronize(ctx->stream));
	if (split_keys)
	{
		split_keys->resize(nb - 1);
		for (uint32_t b = 0; b + 1 < nb; b++)
			(*split_keys)[b] = hspl[b].key();
	}
	return GS_OK;
}

template <typename K>
static gs_status
samplesort(gs_context *ctx, const K *kin, const uint32_t *vin, K *kout,
		   uint32_t *vout, uint32_t n)
{
	const uint32_t nb = choose_buckets(n);
	std::vector<uint32_t> off;
	std::vector<K> spl;
	gs_keyrange kr;
	K		   *bk;
	uint32_t   *bv;
	uint32_t	maxb = 0;

	GS_TRY(gs_key_range(ctx, sizeof(K) * 8, kin, n, &kr));
	GS_TRY(gs_scratch(ctx, GS_SLOT_BUCKET_KEYS, (size_t) n * sizeof(K), (void **) &bk));
	GS_TRY(gs_scratch(ctx, GS_SLOT_BUCKET_VALS, (size_t) n * 4, (void **) &bv));
	/* sorted tiles in the output, buckets in scratch, sorted into output */
	GS_TRY(partition(ctx, kin, vin, kout, vout, bk, bv, n, nb, off, &spl));
	for (uint32_t b = 0; b < nb; b++)
		maxb = off[b + 1] - off[b] > maxb ? off[b + 1] - off[b] : maxb;
	if (maxb <= GS_BITONIC_MAX)
	{
		uint32_t   *d_off = NULL;

		/* bucket boundaries for the segmented sort: upper half of SMALL */
		GS_TRY(gs_scratch(ctx, GS_SLOT_SMALL, GS_SMALL_BYTES, (void **) &d_off));
		d_off = (uint32_t *) ((char *) d_off + 32 * 1024);
		GS_CHECK(ctx, cudaMemcpyAsync(d_off, off.data(), (nb + 1) * 4, cudaMemcpyHostToDevice, ctx->stream));
		GS_TRY(gs_bitonic_segments(ctx, sizeof(K) * 8, bk, bv, kout, vout, n,
								   d_off, nb, 0, maxb));
		/* off is a host vector: wait before it goes away */
		GS_CHECK(ctx, cudaStreamSynchronize(ctx->stream));
		return GS_OK;
	}
	for (uint32_t b = 0; b < nb; b++)
	{
		uint32_t	lo = off[b],
					len = off[b + 1] - off[b];

		if (len == 0)
			continue;
		if (len <= GS_BITONIC_MAX)
		{
			GS_TRY(gs_bitonic_segments(ctx, sizeof(K) * 8, bk + lo, bv + lo,
									   kout + lo, vout + lo, len, NULL, 1,
									   len, len));
			continue;
		}
		gs_keyrange bkr;
		gs_sort_info info;

		bkr.min = b == 0 ? kr.min : (uint64_t) spl[b - 1];
		bkr.max = b == nb - 1 ? kr.max : (uint64_t) spl[b];
		bkr.diff = kr.diff;
		bkr.low_hist = NULL;	/* the whole input's, not the bucket's */
		GS_TRY(gs_radix_sort(ctx, sizeof(K) * 8, bk + lo, bv + lo, kout + lo,
							 vout + lo, len, &bkr, &info));
	}
	return GS_OK;
}

gs_status
gs_samplesort(gs_context *ctx, int key_bits, const void *kin,
			  const uint32_t *vin, void *kout, uint32_t *vout, uint32_t n)
{
	if (key_bits == 32)
		return samplesort(ctx, (const uint32_t *) kin, vin, (uint32_t *) kout,
						  vout, n);
	return samplesort(ctx, (const uint64_t *) kin, vin, (uint64_t *) kout,
					  vout, n);
}

template <typename K>
static gs_status
bucket_partition(gs_context *ctx, const K *kin, const uint32_t *vin,
				 K *kout, uint32_t *vout, uint32_t n, uint32_t nb,
				 uint64_t *offsets)
{
	std::vector<uint32_t> off;
	K		   *tk;
	uint32_t   *tv;

	GS_TRY(gs_scratch(ctx, GS_SLOT_BUCKET_KEYS, (size_t) n * sizeof(K), (void **) &tk));
	GS_TRY(gs_scratch(ctx, GS_SLOT_BUCKET_VALS, (size_t) n * 4, (void **) &tv));
	GS_TRY(partition(ctx, kin, vin, tk, tv, kout, vout, n, nb, off, (std::vector<K> *) NULL));
	for (uint32_t b = 0; b <= nb; b++)
		offsets[b] = off[b];
	return GS_OK;
}

gs_status
gs_bucket_partition(gs_context *ctx, int key_bits, const void *keys_in,
					const uint32_t *vals_in, void *keys_out,
					uint32_t *vals_out, uint64_t n, int nbuckets,
					uint64_t *bucket_offsets)
{
	if (!ctx || !bucket_offsets || nbuckets < 1 ||
		nbuckets > SS_PARTITION_MAX_BUCKETS ||
		(key_bits != 32 && key_bits != 64) ||
		(n && (!keys_in || !vals_in || !keys_out || !vals_out)))
		return gs_fail(ctx, GS_ERR_INVALID, "invalid argument");
	if (n > GS_MAX_PAIRS)
		return gs_fail(ctx, GS_ERR_TOO_LARGE, "n = %llu: at most 2^32 - 1 "
					   "pairs", (unsigned long long) n);
	if (keys_in == keys_out || (const void *) vals_in == (void *) vals_out)
		return gs_fail(ctx, GS_ERR_INVALID, "bucket partition is out of place");
	GS_CHECK(ctx, cudaSetDevice(ctx->device));
	if (n == 0 || nbuckets == 1)
	{
		size_t		kb = n * (key_bits / 8);

		GS_CHECK(ctx, cudaMemcpyAsync(keys_out, keys_in, kb, cudaMemcpyDeviceToDevice, ctx->stream));
		GS_CHECK(ctx, cudaMemcpyAsync(vals_out, vals_in, n * 4, cudaMemcpyDeviceToDevice, ctx->stream));
		for (int b = 0; b <= nbuckets; b++)
			bucket_offsets[b] = b == 0 ? 0 : n;
		return gs_synchronize(ctx);
	}
	if (key_bits == 32)
		return bucket_partition(ctx, (const uint32_t *) keys_in, vals_in,
								(uint32_t *) keys_out, vals_out, (uint32_t) n,
								(uint32_t) nbuckets, bucket_offsets);
	return bucket_partition(ctx, (const uint64_t *) keys_in, vals_in,
							(uint64_t *) keys_out, vals_out, (uint32_t) n,
							(uint32_t) nbuckets, bucket_offsets);
}
