/*
 * gs_counting.cu
 *	  Stable counting sort for narrow key ranges (max - min + 1 <=
 *	  GS_COUNTING_MAX_RANGE): comparison-free, after Abdel-hafeez et al.,
 *	  in one pass over the pairs, like one radix pass whose digit is the
 *	  whole key (up to 4096 buckets):
 *	  1. a histogram of the keys and its exclusive scan: where each key's
 *	     run starts in the output.  The key-range pass counted the keys by
 *	     their low 12 bits (gs_keyrange.low_hist); as the range is at most
 *	     4096, (k - min) = ((k & 4095) - (min & 4095)) & 4095, so that count
 *	     rotated is the histogram, and the keys are not read a second time;
 *	  2. one kernel over tiles of CT * IT pairs: ranks each pair among equal
 *	     keys of its warp (lane masks or ballots, per-warp counters), makes
 *	     the tile's count per key and each warp's first slot per key (two
 *	     keys per 32-bit word), publishes the counts and finds those of the
 *	     tiles before it by decoupled look-back (a thread's key pairs),
 *	     stages the values in shared memory in key order and writes them
 *	     out, so that each key's values leave as one contiguous run per
 *	     tile, next to the runs of the tiles just before and after.  The
 *	     output keys follow from the histogram alone (position p holds
 *	     min + b for offset[b] <= p < offset[b + 1]): each tile writes the
 *	     keys of its own range of positions, in order, 16 bytes a store.
 */
#include "gs_onesweep.cuh"

/* The counting policy (gs_tuning.cuh) by the names the kernels use */
#define CT (gs_counting_tuning.threads)
#define CBLOCKS_PER_SM (gs_counting_tuning.blocks_per_sm)
#define CITEMS (gs_counting_tuning.items)
#define CITEMS_NARROW (gs_counting_tuning.items_narrow)
#define CNARROW_RANGE (gs_counting_tuning.narrow_range)
#define CITEMS_SMALL (gs_counting_tuning.items_small)

#define CWARPS (CT / 32)

static_assert(GS_COUNTING_MAX_RANGE <= 4096 && GS_COUNTING_MAX_RANGE <= GS_LOWHIST_BINS,
			  "counting_offsets scans at most 4096 keys");

/* Histogram of k - kmin, for when the key-range pass did not count the keys. */
template <typename K>
__global__ void __launch_bounds__(GS_HIST_THREADS)
counting_hist(const K *__restrict__ keys, uint32_t n, K kmin, uint32_t range,
			  uint32_t *counts)
{
	extern __shared__ uint32_t hist[];
	const uint32_t stride = gridDim.x * blockDim.x;

	for (uint32_t i = threadIdx.x; i < range; i += blockDim.x)
		hist[i] = 0;
	__syncthreads();
	for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) GS_HIST_LOADS * stride)
	{
		K			k[GS_HIST_LOADS];

#pragma unroll
		for (int u = 0; u < GS_HIST_LOADS; u++)
			k[u] = i + u * stride < n ? keys[i + u * stride] : kmin;
#pragma unroll
		for (int u = 0; u < GS_HIST_LOADS; u++)
			if (i + u * stride < n)
				atomicAdd(&hist[(uint32_t) (k[u] - kmin)], 1u);
	}
	__syncthreads();
	for (uint32_t i = threadIdx.x; i < range; i += blockDim.x)
		if (hist[i])
			atomicAdd(&counts[i], hist[i]);
}

/*
 * Exclusive scan of the histogram: offs[o] = sum of h[(o' + rot) & mask] over
 * o' < o, for o < range <= 4096 (one block of 1024 threads).  With the key-
 * range pass's low-bits histogram: rot = min & 4095, mask = 4095; with the
 * histogram counting_hist made: rot = 0, mask = ~0.
 */
__global__ void __launch_bounds__(1024)
counting_offsets(const uint32_t *__restrict__ h, uint32_t rot, uint32_t mask,
				 uint32_t range, uint32_t *__restrict__ offs)
{
	__shared__ uint32_t ws[32];
	const uint32_t o0 = threadIdx.x * 4;
	uint32_t	c[4],
				sum = 0;

#pragma unroll
	for (int i = 0; i < 4; i++)
	{
		c[i] = o0 + i < range ? h[(o0 + i + rot) & mask] : 0;
		sum += c[i];
	}
	uint32_t	base = gs_block_exclusive_scan<32>(sum, ws);

#pragma unroll
	for (int i = 0; i < 4; i++)
	{
		if (o0 + i < range)
			offs[o0 + i] = base;
		base += c[i];
	}
}

/*
 * Look-back status words of two adjacent keys at once (16 bytes; the status
 * rows are rpad words long, rpad even, so a key pair's words are aligned).
 */
__device__ __forceinline__ void
status_load2(volatile unsigned long long *p, unsigned long long &a,
			 unsigned long long &b)
{
	asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];"
				 : "=l"(a), "=l"(b) : "l"(p) : "memory");
}

__device__ __forceinline__ void
status_store2(volatile unsigned long long *p, unsigned long long a,
			  unsigned long long b)
{
	asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};"
				 :: "l"(p), "l"(a), "l"(b) : "memory");
}

/* Largest b in [lo, hi] with offs[b] <= p (offs ascending, offs[lo] <= p). */
__device__ __forceinline__ uint32_t
key_at(const uint32_t *__restrict__ offs, uint32_t lo, uint32_t hi, uint32_t p)
{
	while (lo < hi)
	{
		uint32_t	mid = (lo + hi + 1) / 2;

		if (__ldg(offs + mid) <= p)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Lanes of the warp whose valid o equals mine, by one ballot per bit. */
__device__ __forceinline__ uint32_t
match_bits(uint32_t o, bool valid, int bits)
{
	uint32_t	peers = __ballot_sync(0xffffffffu, valid);

	for (int b = 0; b < bits; b++)
	{
		uint32_t	x = __ballot_sync(0xffffffffu, (o >> b) & 1);

		peers &= ((o >> b) & 1) ? x : ~x;
	}
	return peers;
}

/*
 * Ranks each item among equal keys of its warp, in (item, lane) order, by
 * lane masks (ARANK) or ballots; the warps' counts go to wcnt.  item[i]
 * holds the key offset o and becomes o | rank << 16.
 */
template <int IT, bool ARANK>
__device__ __forceinline__ void
rank_tile(uint32_t (&item)[IT], uint32_t count, uint32_t wofs, int lane,
		  int w, uint32_t lt, uint32_t *masks, uint16_t *wcnt, uint32_t rpad,
		  uint32_t range, int bits)
{
#pragma unroll
	for (int i = 0; i < IT; i++)
	{
		const bool	valid = wofs + i * 32 + lane < count;
		const uint32_t o = item[i];

		if (ARANK)
			item[i] = o | (gs_warp_rank_masks(masks + w * range + o, wcnt + w * rpad + o, 0,
											  valid, lane, lt) << 16);
		else
		{
			/* ballots: the masks do not fit in shared memory */
			uint32_t	peers = match_bits(o, valid, bits),
						before = 0;

			if (valid)
				before = wcnt[w * rpad + o];
			__syncwarp();
			if (valid && (peers & lt) == 0)
				wcnt[w * rpad + o] = (uint16_t) (before + __popc(peers));
			__syncwarp();
			item[i] = o | ((before + __popc(peers & lt)) << 16);
		}
	}
}

/*
 * Key pairs [p0, p1) (a thread's own): the tile's counts from the warps'
 * counts (two uint16 counts per word, added as one) into tcount, published
 * at once (tile 0: inclusive of the keys' output starts).  Returns their
 * sum.
 */
__device__ __forceinline__ uint32_t
publish_counts(uint32_t p0, uint32_t p1, const uint32_t *wcnt2, uint32_t np,
			   uint32_t *tcount, uint32_t tile, uint32_t range,
			   const uint32_t *key_offsets, volatile unsigned long long *mine,
			   unsigned long long tag)
{
	uint32_t	sum = 0;

	for (uint32_t p = p0; p < p1; p++)
	{
		uint32_t	c = 0;

#pragma unroll
		for (int ww = 0; ww < CWARPS; ww++)
			c += wcnt2[ww * np + p];

		const uint32_t c0 = c & 0xFFFFu,
					c1 = c >> 16;

		tcount[2 * p] = c0;
		tcount[2 * p + 1] = c1;
		sum += c0 + c1;
		if (tile == 0)
		{
			uint32_t	e0 = key_offsets[2 * p],
						e1 = 2 * p + 1 < range ? key_offsets[2 * p + 1] : 0;

			status_store2(mine + 2 * p, gs_status_word(tag, GS_LB_INC, e0 + c0),
						  gs_status_word(tag, GS_LB_INC, e1 + c1));
		}
		else
			status_store2(mine + 2 * p, gs_status_word(tag, GS_LB_AGG, c0),
						  gs_status_word(tag, GS_LB_AGG, c1));
	}
	return sum;
}

/*
 * Key pairs [p0, p1), base: the tile's pairs of the keys before them.  Each
 * key's local start goes to gbase (for now), and each warp's first staging
 * slot per key replaces its count in wcnt2 (both halves stay <= TILE <
 * 2^16: no carry between them).
 */
__device__ __forceinline__ void
local_starts(uint32_t p0, uint32_t p1, uint32_t base, uint32_t *wcnt2,
			 uint32_t np, const uint32_t *tcount, uint32_t *gbase)
{
	for (uint32_t p = p0; p < p1; p++)
	{
		const uint32_t c0 = tcount[2 * p],
					c1 = tcount[2 * p + 1];
		uint32_t	s = base | ((base + c0) << 16);

		gbase[2 * p] = base;
		gbase[2 * p + 1] = base + c0;
		base += c0 + c1;
#pragma unroll
		for (int ww = 0; ww < CWARPS; ww++)
		{
			uint32_t	c = wcnt2[ww * np + p];

			wcnt2[ww * np + p] = s;
			s += c;
		}
	}
}

/*
 * Look-back of key pairs [p0, p1): gbase[o] = pairs of key o in the tiles
 * before this one (+ the key's output start) - the key's local start, so
 * that staged slot j goes to gbase[o] + j.  Publishes the inclusive counts.
 * A pair's two words are read together while both keys are at the same
 * tile.
 */
__device__ __forceinline__ void
look_back(uint32_t p0, uint32_t p1, uint32_t tile, uint32_t range,
		  uint32_t rpad, const uint32_t *key_offsets,
		  volatile unsigned long long *status,
		  volatile unsigned long long *mine, unsigned long long tag,
		  uint32_t epoch, const uint32_t *tcount, uint32_t *gbase)
{
	for (uint32_t p = p0; p < p1; p++)
	{
		const uint32_t o = 2 * p;
		const bool	has1 = o + 1 < range;
		uint32_t	e0 = 0,
					e1 = 0;

		if (tile == 0)
		{
			e0 = key_offsets[o];
			if (has1)
				e1 = key_offsets[o + 1];
		}
		else
		{
			int			k0 = (int) tile - 1,
						k1 = k0;
			bool		d0 = false,
						d1 = !has1;

			/* a word of the current generation: add it; an inclusive one ends */
			auto		add = [&](unsigned long long s, int *k, uint32_t *e) -> bool {
				if ((s >> 34) != epoch)
					return false;
				*e += (uint32_t) s;
				(*k)--;
				return ((s >> 32) & 3u) == GS_LB_INC;
			};

			while (!(d0 && d1))
			{
				unsigned long long s0 = 0,
							s1 = 0;

				if (!d0 && !d1 && k0 == k1)
					status_load2(status + (size_t) k0 * rpad + o, s0, s1);
				else
				{
					if (!d0)
						s0 = status[(size_t) k0 * rpad + o];
					if (!d1)
						s1 = status[(size_t) k1 * rpad + o + 1];
				}
				if (!d0)
					d0 = add(s0, &k0, &e0);
				if (!d1)
					d1 = add(s1, &k1, &e1);
			}
			status_store2(mine + o, gs_status_word(tag, GS_LB_INC, e0 + tcount[o]),
						  gs_status_word(tag, GS_LB_INC, e1 + tcount[o + 1]));
		}
		gbase[o] = e0 - gbase[o];
		gbase[o + 1] = e1 - gbase[o + 1];
	}
}

/*
 * Key offsets and values into shared memory in key order, then out: each
 * key's pairs as one contiguous run (keys too unless FILL).
 */
template <typename K, int IT, bool FILL>
__device__ __forceinline__ void
stage_and_scatter(const uint32_t (&item)[IT], uint32_t count, uint32_t wofs,
				  int lane, int w, int tid, const uint16_t *wcnt, uint32_t rpad,
				  uint16_t *stage_o, uint32_t *stage_v, const uint32_t *gbase,
				  const uint32_t *tvin, K kmin, K *kout, uint32_t *vout)
{
#pragma unroll
	for (int i = 0; i < IT; i++)
	{
		uint32_t	li = wofs + i * 32 + lane;

		if (li < count)
		{
			uint32_t	o = item[i] & 0xFFFFu;
			uint32_t	lp = wcnt[w * rpad + o] + (item[i] >> 16);

			stage_o[lp] = (uint16_t) o;
			stage_v[lp] = tvin[li];
		}
	}
	__syncthreads();
#pragma unroll
	for (int i = 0; i < IT; i++)
	{
		uint32_t	j = i * CT + tid;

		if (j < count)
		{
			uint32_t	o = stage_o[j];
			uint32_t	d = gbase[o] + j;

			if (!FILL)
				kout[d] = kmin + (K) o;
			vout[d] = stage_v[j];
		}
	}
}

/*
 * The keys of the tile's own output range [pbase, pbase + count), in order,
 * 16 bytes a store: position p holds kmin + b for key_offsets[b] <= p <
 * key_offsets[b + 1].
 */
template <typename K, uint32_t TILE>
__device__ __forceinline__ void
fill_keys(K *tkout, uint32_t pbase, uint32_t count, int lane, int tid,
		  const uint32_t *__restrict__ key_offsets, uint32_t range, K kmin)
{
	constexpr int V = 16 / sizeof(K);	/* keys per store */
	/* the key at output position p: 32 probes a round (2 for 1024 keys) */
	auto		warp_key_at = [&](uint32_t p) -> uint32_t {
		uint32_t	blo = 0,
					bhi = range - 1;

		while (blo < bhi)
		{
			const uint32_t step = (bhi - blo + 32) / 32;
			const uint32_t probe = blo + lane * step;
			const uint32_t ok = __ballot_sync(0xffffffffu,
											  probe <= bhi && __ldg(key_offsets + probe) <= p);

			blo += (31 - __clz(ok)) * step;
			bhi = min(bhi, blo + step - 1);
		}
		return blo;
	};
	/* the keys of the tile's first and last positions */
	const uint32_t b0 = warp_key_at(pbase),
				b1 = warp_key_at(pbase + count - 1);

	if (count == TILE)
	{
		constexpr uint32_t NV = TILE / V;	/* stores per tile */

#pragma unroll 1
		for (uint32_t v = 0; v < (NV + CT - 1) / CT; v++)
		{
			const uint32_t q = (v * CT + tid) * V;
			K			kk[V];

			if (NV % CT && q >= TILE)
				break;
			if (b0 == b1)
			{
#pragma unroll
				for (int e = 0; e < V; e++)
					kk[e] = kmin + (K) b0;
			}
			else
			{
				uint32_t	b = key_at(key_offsets, b0, b1, pbase + q);

#pragma unroll
				for (int e = 0; e < V; e++)
				{
					while (b < b1 && __ldg(key_offsets + b + 1) <= pbase + q + e)
						b++;
					kk[e] = kmin + (K) b;
				}
			}
			uint4		x;

			memcpy(&x, kk, 16);
			*(uint4 *) (tkout + q) = x;
		}
	}
	else
		for (uint32_t j = tid; j < count; j += CT)
			tkout[j] = kmin + (K) key_at(key_offsets, b0, b1, pbase + j);
}

/*
 * The pass over tiles of CT * IT pairs.  Dynamic shared memory (rpad =
 * range rounded up to even): stage_v[TILE] (values) and stage_o[TILE]
 * (uint16 key offsets, k - kmin), both in key order; wcnt[CWARPS][rpad]
 * (uint16: the warps' counts, then each warp's first staging slot per key);
 * tcount[rpad] (the tile's count per key) and gbase[rpad] (uint32).  ARANK:
 * the ranking's lane masks, masks[CWARPS][range] (uint32), lie over the
 * staging buffers, unused until the ranking is done.  The keys are not
 * staged: the key of staged slot j is kmin + stage_o[j].  FILL (a 16-byte
 * aligned key output): the output keys are not scattered but written in
 * order by fill_keys, each tile the positions of its own input range.
 *
 * Steps: claim a tile and clear the counters; load the keys; rank_tile;
 * per key pair (a thread's own contiguous pairs), publish_counts, their
 * exclusive scan over the keys and local_starts, then look_back; stage and
 * scatter the values; fill_keys last (no item register is live then).
 */
template <typename K, int IT, bool ARANK, bool FILL>
__global__ void __launch_bounds__(CT, GS_MIN_BLOCKS(CT, CBLOCKS_PER_SM))
counting_onesweep(const K *__restrict__ kin, const uint32_t *__restrict__ vin,
				  K *__restrict__ kout, uint32_t *__restrict__ vout, uint32_t n,
				  K kmin, uint32_t range, int bits,
				  const uint32_t *__restrict__ key_offsets,
				  volatile unsigned long long *status, uint32_t *tile_counter,
				  uint32_t epoch)
{
	constexpr uint32_t TILE = CT * IT;
	const uint32_t rpad = (range + 1) & ~1u;
	const uint32_t np = rpad / 2;	/* key pairs (2p, 2p + 1) */
	extern __shared__ __align__(16) unsigned char dyn[];
	uint32_t   *stage_v = (uint32_t *) dyn;
	uint16_t   *stage_o = (uint16_t *) (stage_v + TILE);
	uint16_t   *wcnt = stage_o + TILE;
	uint32_t   *wcnt2 = (uint32_t *) wcnt;	/* wcnt by key pairs */
	uint32_t   *tcount = (uint32_t *) (wcnt + CWARPS * rpad);
	uint32_t   *gbase = tcount + rpad;
	uint32_t   *masks = (uint32_t *) dyn;
	__shared__ uint32_t ws[CWARPS];
	__shared__ uint32_t s_tile;

	const int	tid = threadIdx.x,
				lane = tid & 31,
				w = tid >> 5;
	const uint32_t lt = (1u << lane) - 1;

	gs_claim_tile(tile_counter, &s_tile);
	for (uint32_t i = tid; i < CWARPS * np; i += CT)
		wcnt2[i] = 0;
	if (ARANK)
		for (uint32_t i = tid; i < CWARPS * range; i += CT)
			masks[i] = 0;
	__syncthreads();

	const uint32_t tile = s_tile;
	const uint64_t tile_base = (uint64_t) tile * TILE;
	const uint32_t count = (uint32_t) min((uint64_t) TILE, n - tile_base);
	const uint32_t wofs = (uint32_t) w * 32 * IT;
	const K    *tkin = kin + tile_base;
	const uint32_t *tvin = vin + tile_base;
	/* per item: key offset o (low 16 bits) | rank among equal keys << 16 */
	uint32_t	item[IT];

	{
		K			key[IT];

		gs_load_rows(tkin, count, wofs, lane, kmin, key);
#pragma unroll
		for (int i = 0; i < IT; i++)
			item[i] = (uint32_t) (key[i] - kmin);
	}
	gs_prefetch_rows_l2<IT>(tvin, count, wofs, lane);
	rank_tile<IT, ARANK>(item, count, wofs, lane, w, lt, masks, wcnt, rpad, range, bits);
	__syncthreads();

	const unsigned long long tag = (unsigned long long) epoch << 34;
	volatile unsigned long long *mine = status + (uint64_t) tile * rpad;
	const uint32_t per = (np + CT - 1) / CT;
	const uint32_t p0 = min(np, tid * per),
				p1 = min(np, p0 + per);
	const uint32_t sum = publish_counts(p0, p1, wcnt2, np, tcount, tile, range,
										key_offsets, mine, tag);

	local_starts(p0, p1, gs_block_exclusive_scan<CWARPS>(sum, ws), wcnt2, np,
				 tcount, gbase);
	look_back(p0, p1, tile, range, rpad, key_offsets, status, mine, tag, epoch,
			  tcount, gbase);
	__syncthreads();
	stage_and_scatter<K, IT, FILL>(item, count, wofs, lane, w, tid, wcnt, rpad,
								   stage_o, stage_v, gbase, tvin, kmin, kout, vout);
	if (FILL)
		fill_keys<K, TILE>(kout + tile_base, (uint32_t) tile_base, count, lane, tid,
						   key_offsets, range, kmin);
}

static size_t
onesweep_smem(uint32_t range, int items)
{
	const size_t rpad = (range + 1) & ~1u;

	return (size_t) CT * items * 6 + rpad * CWARPS * 2 + rpad * 8;
}
/*
 * Shared memory: the widest range fits one block of a Hopper or a B200 (227
 * KiB); narrow ranges two blocks per SM there (228 KiB per SM, 1 KiB
 * reserved per block).  A GPU with less takes narrower ranges at these
 * tiles (counting_items): an A100's block (163 KiB) ranges up to about
 * 2600, an Ada's (99 KiB) about 1000; with the small tile, about 3500 and
 * 1900, and a Turing's (64 KiB) about 1000.  Wider ones go to the radix
 * sort (gs_counting_fits).
 */
static_assert((size_t) CT * CITEMS * 6 + (size_t) CWARPS * GS_COUNTING_MAX_RANGE * 2 +
			  (size_t) GS_COUNTING_MAX_RANGE * 8 <= 227 * 1024, "counting tile too large");
static_assert((size_t) CT * CITEMS_NARROW * 6 + (size_t) CWARPS * CNARROW_RANGE * 2 +
			  (size_t) CNARROW_RANGE * 8 + 1024 <= 114 * 1024, "narrow counting tile too large");
static_assert(CITEMS_SMALL < CITEMS, "the small tile is the smaller");

/* One launch of the pass over tiles of CT * IT pairs. */
template <typename K, int IT, bool ARANK, bool FILL>
static gs_status
launch_onesweep(gs_context *ctx, const K *kin, const uint32_t *vin, K *kout,
				uint32_t *vout, uint32_t n, const gs_keyrange *kr, uint32_t range,
				int bits, const uint32_t *counts, void *st, uint32_t *counter,
				uint32_t epoch)
{
	const size_t smem = onesweep_smem(range, IT);
	auto		kernel = counting_onesweep<K, IT, ARANK, FILL>;

	GS_TRY(gs_set_smem(ctx, kernel, smem, "counting: pass"));
	kernel<<<gs_blocks(n, CT * IT), CT, smem, ctx->stream>>>(
		kin, vin, kout, vout, n, (K) kr->min, range, bits, counts,
		(volatile unsigned long long *) st, counter, epoch);
	return gs_after_launch(ctx, "counting: pass");
}

/* Does the pass at IT pairs per thread fit the device's block at range? */
template <typename K, int IT>
static bool
tile_fits(const gs_context *ctx, uint32_t range)
{
	/* the variants of ARANK and FILL have the same static shared memory */
	return gs_smem_fits(ctx, counting_onesweep<K, IT, false, false>,
						onesweep_smem(range, IT));
}

/*
 * Pairs per thread, by key width and range: the policy's, or the small
 * tile's where the device's block has not the shared memory for those at
 * this range; 0 where it has not even that.
 */
template <typename K>
static int
counting_items(const gs_context *ctx, uint32_t range)
{
	if constexpr (sizeof(K) == 4)
		if (range <= CNARROW_RANGE && tile_fits<K, CITEMS_NARROW>(ctx, range))
			return CITEMS_NARROW;
	if (tile_fits<K, CITEMS>(ctx, range))
		return CITEMS;
	return tile_fits<K, CITEMS_SMALL>(ctx, range) ? CITEMS_SMALL : 0;
}

/* The pass at IT pairs per thread: lane masks where they fit, fill where aligned. */
template <typename K, int IT>
static gs_status
launch_items(gs_context *ctx, const K *kin, const uint32_t *vin, K *kout,
			 uint32_t *vout, uint32_t n, const gs_keyrange *kr, uint32_t range,
			 int bits, const uint32_t *counts, void *st, uint32_t *counter,
			 uint32_t epoch)
{
	/* the lane masks lie over the staging buffers (64 B per key) */
	const bool	arank = (size_t) range * CWARPS * 4 <= (size_t) CT * IT * 6;
	const bool	fill = ((uintptr_t) kout & 15) == 0;

	if (arank)
		return fill ? launch_onesweep<K, IT, true, true>(ctx, kin, vin, kout, vout, n, kr, range, bits, counts, st, counter, epoch)
			: launch_onesweep<K, IT, true, false>(ctx, kin, vin, kout, vout, n, kr, range, bits, counts, st, counter, epoch);
	return fill ? launch_onesweep<K, IT, false, true>(ctx, kin, vin, kout, vout, n, kr, range, bits, counts, st, counter, epoch)
		: launch_onesweep<K, IT, false, false>(ctx, kin, vin, kout, vout, n, kr, range, bits, counts, st, counter, epoch);
}

template <typename K>
static gs_status
counting_sort(gs_context *ctx, const K *kin, const uint32_t *vin, K *kout,
			  uint32_t *vout, uint32_t n, const gs_keyrange *kr)
{
	const uint32_t range = (uint32_t) (kr->max - kr->min) + 1;
	const int	bits = range > 1 ? 32 - __builtin_clz(range - 1) : 0;
	const uint32_t rpad = (range + 1) & ~1u;	/* status row: key pairs aligned */
	const int	items = counting_items<K>(ctx, range);
	const uint32_t ntiles = gs_blocks(n, CT * items);
	uint32_t   *counts;
	void	   *st;
	K		   *sk;
	uint32_t   *sv;

	/* work slot: offsets[range], a histogram[range], the tile counter */
	GS_TRY(gs_scratch(ctx, GS_SLOT_WORK, ((size_t) 2 * range + 1) * 4, (void **) &counts));
	uint32_t   *tmp = counts + range;
	uint32_t   *counter = tmp + range;

	GS_TRY(gs_scratch(ctx, GS_SLOT_STATUS, (size_t) ntiles * rpad * 8, &st));
	if ((const void *) kin == (const void *) kout)
	{
		/* in place: sort from a copy */
		GS_TRY(gs_scratch(ctx, GS_SLOT_ALT_KEYS, (size_t) n * sizeof(K), (void **) &sk));
		GS_TRY(gs_scratch(ctx, GS_SLOT_ALT_VALS, (size_t) n * 4, (void **) &sv));
		GS_CHECK(ctx, cudaMemcpyAsync(sk, kin, (size_t) n * sizeof(K), cudaMemcpyDeviceToDevice, ctx->stream));
		GS_CHECK(ctx, cudaMemcpyAsync(sv, vin, (size_t) n * 4, cudaMemcpyDeviceToDevice, ctx->stream));
		kin = sk;
		vin = sv;
	}
	GS_CHECK(ctx, cudaMemsetAsync(counter, 0, 4, ctx->stream));
	if (kr->low_hist)
	{
		/* the key-range pass's count of k & 4095, rotated by min */
		counting_offsets<<<1, 1024, 0, ctx->stream>>>(kr->low_hist,
													  (uint32_t) kr->min & (GS_LOWHIST_BINS - 1),
													  GS_LOWHIST_BINS - 1, range, counts);
		GS_TRY(gs_after_launch(ctx, "counting: offsets"));
	}
	else
	{
		GS_CHECK(ctx, cudaMemsetAsync(tmp, 0, (size_t) range * 4, ctx->stream));
		counting_hist<K><<<gs_hist_grid(ctx, n), GS_HIST_THREADS, range * 4, ctx->stream>>>(kin, n, (K) kr->min, range, tmp);
		GS_TRY(gs_after_launch(ctx, "counting: histogram"));
		counting_offsets<<<1, 1024, 0, ctx->stream>>>(tmp, 0, ~0u, range, counts);
		GS_TRY(gs_after_launch(ctx, "counting: offsets"));
	}

	const uint32_t epoch = gs_next_epoch(ctx);

	if constexpr (sizeof(K) == 4)
		if (items == CITEMS_NARROW)
			return launch_items<K, CITEMS_NARROW>(ctx, kin, vin, kout, vout, n, kr, range,
												  bits, counts, st, counter, epoch);
	if (items == CITEMS_SMALL)
		return launch_items<K, CITEMS_SMALL>(ctx, kin, vin, kout, vout, n, kr, range, bits,
											 counts, st, counter, epoch);
	return launch_items<K, CITEMS>(ctx, kin, vin, kout, vout, n, kr, range, bits, counts, st,
								   counter, epoch);
}

bool
gs_counting_fits(const gs_context *ctx, int key_bits, uint64_t range)
{
	if (range >= GS_COUNTING_MAX_RANGE)
		return false;
	if (key_bits == 32)
		return counting_items<uint32_t>(ctx, (uint32_t) range + 1) > 0;
	return counting_items<uint64_t>(ctx, (uint32_t) range + 1) > 0;
}

gs_status
gs_counting_sort(gs_context *ctx, int key_bits, const void *kin,
				 const uint32_t *vin, void *kout, uint32_t *vout, uint32_t n,
				 const gs_keyrange *kr)
{
	if (!gs_counting_fits(ctx, key_bits, kr->max - kr->min))
		return gs_fail(ctx, GS_ERR_INVALID, "key range too wide for the "
					   "counting sort on this device");
	if (key_bits == 32)
		return counting_sort(ctx, (const uint32_t *) kin, vin,
							 (uint32_t *) kout, vout, n, kr);
	return counting_sort(ctx, (const uint64_t *) kin, vin,
						 (uint64_t *) kout, vout, n, kr);
}
