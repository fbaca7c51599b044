/*
 * gs_radix.cu
 *	  LSD radix sort of (key, value) pairs, onesweep style (Adinets &
 *	  Merrill): one upfront histogram of every digit, then one kernel per
 *	  8-bit digit that ranks a tile in shared memory, finds its global
 *	  offsets by decoupled look-back, and scatters through shared memory.
 *
 * Only significant bits are sorted: keys are taken as (key - min) >> lo,
 * where lo is the number of low bits that all keys share; digit passes in
 * which all keys share the digit are skipped.  64-bit keys whose significant
 * bits fit 32 travel between the first and the last pass as 64-bit words
 * (key - min) >> lo << 32 | value, one stream staged once per pass.  Sorts
 * of at most RADIX_FOLD_PASSES digits skip the upfront histogram: the first
 * digit is counted by the key-range pass (gs_keyrange.low_hist), the others
 * by the first digit pass.
 */
#include "gs_onesweep.cuh"

/* The radix policy (gs_tuning.cuh) by the names the kernels use */
#define RADIX_BITS (gs_radix_tuning.radix_bits)
#define RT (gs_radix_tuning.threads)
#define RITEMS_NARROW (gs_radix_tuning.items_narrow)
#define RITEMS_WIDE (gs_radix_tuning.items_wide)
#define RADIX_BLOCKS_PER_SM (gs_radix_tuning.blocks_per_sm)
#define RLB_WINDOW (gs_radix_tuning.lookback_window)
#define RADIX_FOLD_PASSES (gs_radix_tuning.fold_passes)

#define RADIX (1 << RADIX_BITS)
#define RWARPS (RT / 32)
#define RTILE_MIN (RT * RITEMS_WIDE)
/* most later digits a fold pass counts */
#define RADIX_FOLD_EXTRA (RADIX_FOLD_PASSES - 1)

/* Histogram of every digit pass, on (key - sub) >> lo. */
template <typename K>
__global__ void __launch_bounds__(GS_HIST_THREADS)
radix_histogram(const K *__restrict__ keys, uint32_t n, K sub, int lo,
				int npass, uint32_t *hist)
{
	__shared__ uint32_t h[8 * RADIX];

	for (int i = threadIdx.x; i < npass * RADIX; i += blockDim.x)
		h[i] = 0;
	__syncthreads();
	uint32_t	stride = gridDim.x * blockDim.x;

	for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) GS_HIST_LOADS * stride)
	{
		K			k[GS_HIST_LOADS];

#pragma unroll
		for (int u = 0; u < GS_HIST_LOADS; u++)
			k[u] = i + u * stride < n ? keys[i + u * stride] : sub;
#pragma unroll
		for (int u = 0; u < GS_HIST_LOADS; u++)
		{
			if (i + u * stride >= n)
				break;
			K			rk = (K) (k[u] - sub) >> lo;

			for (int p = 0; p < npass; p++)
				atomicAdd(&h[p * RADIX + (uint32_t) ((rk >> (p * RADIX_BITS)) & (RADIX - 1))], 1u);
		}
	}
	__syncthreads();
	for (int i = threadIdx.x; i < npass * RADIX; i += blockDim.x)
		if (h[i])
			atomicAdd(&hist[i], h[i]);
}

/*
 * Per pass p in [first, npass): exclusive digit offsets, and whether one
 * digit holds all keys.
 */
__global__ void
radix_offsets(const uint32_t *hist, uint32_t n, int first, int npass,
			  uint32_t *offs, uint32_t *trivial)
{
	__shared__ uint32_t ws[RADIX / 32];

	for (int p = first; p < npass; p++)
	{
		uint32_t	c = hist[p * RADIX + threadIdx.x];
		uint32_t	any_all = __syncthreads_or(c == n);

		offs[p * RADIX + threadIdx.x] = gs_block_exclusive_scan<RADIX / 32>(c, ws);
		if (threadIdx.x == 0)
			trivial[p] = any_all;
		__syncthreads();
	}
}

/*
 * The first digit's offsets from the key-range pass's count of k & 4095
 * (lo + 8 <= 12): digit of bin b is ((b - min) & 4095) >> lo & 255.
 */
__global__ void
radix_offsets_low(const uint32_t *__restrict__ low_hist, uint32_t rot, int lo,
				  uint32_t *offs)
{
	__shared__ uint32_t cnt[RADIX];
	__shared__ uint32_t ws[RADIX / 32];

	cnt[threadIdx.x] = 0;
	__syncthreads();
	for (uint32_t b = threadIdx.x; b < GS_LOWHIST_BINS; b += RADIX)
	{
		uint32_t	c = low_hist[b];

		if (c)
			atomicAdd(&cnt[(((b - rot) & (GS_LOWHIST_BINS - 1)) >> lo) & (RADIX - 1)], c);
	}
	__syncthreads();
	offs[threadIdx.x] = gs_block_exclusive_scan<RADIX / 32>(cnt[threadIdx.x], ws);
}

/*
 * The pass's digit of a key: of (k - sub) >> lo, or of a packed word's key
 * half (PIN).
 */
template <typename KI, bool PIN>
__device__ __forceinline__ uint32_t
radix_digit(KI k, uint64_t sub, int lo, int shift)
{
	if (PIN)
		return ((uint32_t) ((uint64_t) k >> 32) >> shift) & (RADIX - 1);
	KI			rk = (KI) (k - (KI) sub) >> lo;

	return (uint32_t) (rk >> shift) & (RADIX - 1);
}

/* A trivial pass (one digit holds every key) is a copy of its tile. */
template <typename KI, typename KO, int MODE>
__device__ __forceinline__ void
copy_tile(const KI *tkin, const uint32_t *tvin, KO *kout, uint32_t *vout,
		  uint64_t tile_base, uint32_t count)
{
	const int	tid = threadIdx.x;

	for (uint32_t j = tid; j < count; j += RT)
	{
		kout[tile_base + j] = (KO) tkin[j];
		if (MODE == 0)
			vout[tile_base + j] = tvin[j];
	}
}

/*
 * Ranks each item among equal digits of its warp, in (item, lane) order,
 * counting the warp's digits in whist.  FOLD: also counts the next nextra
 * digits of each key into fhist.
 */
template <typename KI, bool PIN, int IT, bool FOLD>
__device__ __forceinline__ void
rank_tile(const KI (&key)[IT], uint32_t (&rank)[IT], uint32_t count,
		  uint32_t wofs, int lane, int w, uint32_t lt, uint32_t *masks, uint32_t (*whist)[RADIX], uint64_t sub, int lo,
		  int shift, int nextra, uint32_t *fhist)
{
#pragma unroll
	for (int i = 0; i < IT; i++)
	{
		const bool	valid = wofs + i * 32 + lane < count;
		const uint32_t d = radix_digit<KI, PIN>(key[i], sub, lo, shift);

		rank[i] = gs_warp_rank_masks(masks + w * RADIX + d, whist[w], d, valid, lane, lt);
		if (FOLD && valid)
		{
			KI			rk = (KI) (key[i] - (KI) sub) >> lo;

#pragma unroll
			for (int p = 0; p < RADIX_FOLD_EXTRA; p++)
				if (p < nextra)
					atomicAdd(&fhist[p * RADIX + (uint32_t) ((rk >> (shift + (p + 1) * RADIX_BITS)) & (RADIX - 1))], 1u);
		}
	}
}

/*
 * Digit d's warp counts become the warps' exclusive prefixes; returns the
 * tile's count of d.
 */
__device__ __forceinline__ uint32_t
warp_prefixes(uint32_t (*whist)[RADIX], uint32_t d)
{
	uint32_t	run = 0;

#pragma unroll
	for (int ww = 0; ww < RWARPS; ww++)
	{
		uint32_t	c = whist[ww][d];

		whist[ww][d] = run;
		run += c;
	}
	return run;
}

/*
 * Publishes the tile's count of digit d and looks back, RLB_WINDOW words at
 * a time, for the keys of digit d before the tile (tile 0: the digit's
 * offset); publishes the inclusive count and returns the exclusive one.
 */
__device__ __forceinline__ uint32_t
look_back(volatile unsigned long long *status, uint32_t tile, uint32_t d,
		  uint32_t total, uint32_t epoch, const uint32_t *digit_offsets)
{
	volatile unsigned long long *my = status + (uint64_t) tile * RADIX + d;
	const unsigned long long tag = (unsigned long long) epoch << 34;
	uint32_t	excl = 0;

	if (tile == 0)
	{
		excl = digit_offsets[d];
		*my = gs_status_word(tag, GS_LB_INC, excl + total);
	}
	else
	{
		*my = gs_status_word(tag, GS_LB_AGG, total);
		int64_t		k = (int64_t) tile - 1;

		for (;;)
		{
			unsigned long long s[RLB_WINDOW];

			gs_lookback_load<RLB_WINDOW>(status, RADIX, d, k, s);
			if (gs_lookback_add<RLB_WINDOW>(s, epoch, &k, &excl))
				break;
		}
		*my = gs_status_word(tag, GS_LB_INC, excl + total);
	}
	return excl;
}

/*
 * MODE 1-3: packed words into shared memory in digit order (MODE 1 packs
 * them from keys and values), then out to gbase[digit] + slot (MODE 3
 * unpacks them into keys and values).
 */
template <typename KI, typename KO, int MODE, int IT>
__device__ __forceinline__ void
stage_and_scatter_packed(const KI (&key)[IT], const uint32_t (&rank)[IT],
						 uint32_t count, uint32_t wofs, int lane,
						 unsigned long long *stage_p,
						 const uint32_t *local_start, uint32_t (*whist)[RADIX],
						 const uint32_t *gbase, const uint32_t *tvin,
						 KO *kout, uint32_t *vout, uint64_t sub, int lo,
						 int shift)
{
	constexpr bool PIN = (MODE == 2 || MODE == 3);
	const int	tid = threadIdx.x,
				w = tid >> 5;

#pragma unroll
	for (int i = 0; i < IT; i++)
	{
		uint32_t	li = wofs + i * 32 + lane;

		if (li < count)
		{
			uint32_t	d = radix_digit<KI, PIN>(key[i], sub, lo, shift);
			uint32_t	lp = local_start[d] + whist[w][d] + rank[i];

			if (PIN)
				stage_p[lp] = key[i];
			else
				stage_p[lp] = (((uint64_t) key[i] - sub) >> lo << 32) | tvin[li];
		}
	}
	__syncthreads();
#pragma unroll
	for (int i = 0; i < IT; i++)
	{
		uint32_t	j = i * RT + tid;

		if (j < count)
		{
			unsigned long long word = stage_p[j];
			uint32_t	hi = (uint32_t) (word >> 32);
			uint32_t	dst = gbase[(hi >> shift) & (RADIX - 1)] + j;

			if (MODE == 3)
			{
				kout[dst] = ((uint64_t) hi << lo) + sub;
				vout[dst] = (uint32_t) word;
			}
			else
				kout[dst] = word;
		}
	}
}

/*
 * MODE 0: keys into shared memory in digit order and out, then the values
 * through the same buffer (the keys' output slots kept in registers).
 */
template <typename K, int IT>
__device__ __forceinline__ void
stage_and_scatter_pairs(const K (&key)[IT], uint32_t (&rank)[IT],
						uint32_t count, uint32_t wofs, int lane,
						K *stage_k, uint32_t *stage_v,
						const uint32_t *local_start, uint32_t (*whist)[RADIX],
						const uint32_t *gbase, const uint32_t *tvin,
						K *kout, uint32_t *vout, uint64_t sub, int lo,
						int shift)
{
	const int	tid = threadIdx.x,
				w = tid >> 5;

#pragma unroll
	for (int i = 0; i < IT; i++)
	{
		if (wofs + i * 32 + lane < count)
		{
			uint32_t	d = radix_digit<K, false>(key[i], sub, lo, shift);
			uint32_t	lp = local_start[d] + whist[w][d] + rank[i];

			stage_k[lp] = key[i];
			rank[i] = lp;
		}
	}
	__syncthreads();

	uint32_t	dst[IT];

#pragma unroll
	for (int i = 0; i < IT; i++)
	{
		uint32_t	j = i * RT + tid;

		dst[i] = 0;
		if (j < count)
		{
			K			ko = stage_k[j];

			dst[i] = gbase[radix_digit<K, false>(ko, sub, lo, shift)] + j;
			kout[dst[i]] = ko;
		}
	}
	__syncthreads();
#pragma unroll
	for (int i = 0; i < IT; i++)
	{
		uint32_t	li = wofs + i * 32 + lane;

		if (li < count)
			stage_v[rank[i]] = tvin[li];
	}
	__syncthreads();
#pragma unroll
	for (int i = 0; i < IT; i++)
	{
		uint32_t	j = i * RT + tid;

		if (j < count)
			vout[dst[i]] = stage_v[j];
	}
}

/*
 * One digit pass over a tile of RT * IT pairs.  MODE 0: keys (KI = KO) and
 * values, digit of (k - sub) >> lo.  Modes 1-3 carry 64-bit keys of at most
 * 32 significant bits as packed words, (k - sub) >> lo << 32 | value:
 * MODE 1: 64-bit keys and values in, packed words out; MODE 2: packed words
 * in and out; MODE 3: packed words in, (w << lo) + sub and the values out.
 * Dynamic shared memory: the staging tile (MODE 0: keys, then values; 1-3:
 * packed words, staged once), and before it the ranking's lane masks; a
 * staged key's digit is recomputed from the key itself.  FOLD (first pass
 * only): also counts the next nextra digits of the tile's keys into
 * fold_hist (global, digit p's counts at p * RADIX).  trivial (modes 0 and
 * 2, or NULL): a device flag, set when one digit holds all keys; the pass
 * then copies its tile.
 *
 * Steps: claim a tile and clear the counters; load the keys; rank_tile;
 * (FOLD) add the later digits' counts; per digit, warp_prefixes and
 * look_back, then the tile's local starts; stage and scatter.
 */
template <typename KI, typename KO, int MODE, int IT, bool FOLD>
__global__ void __launch_bounds__(RT, GS_MIN_BLOCKS(RT, RADIX_BLOCKS_PER_SM))
radix_onesweep(const KI *__restrict__ kin, const uint32_t *__restrict__ vin,
			   KO *__restrict__ kout, uint32_t *__restrict__ vout, uint32_t n,
			   uint64_t sub, int lo, int shift,
			   const uint32_t *__restrict__ digit_offsets,
			   volatile unsigned long long *status, uint32_t *tile_counter,
			   uint32_t epoch, int nextra, uint32_t *fold_hist,
			   const uint32_t *trivial)
{
	constexpr bool PIN = (MODE == 2 || MODE == 3);	/* packed words in */
	static_assert(MODE == 0 || (sizeof(KI) == 8 && sizeof(KO) == 8), "radix: packed words");
	static_assert(RT * IT * sizeof(KO) >= RWARPS * RADIX * 4, "radix: lane masks");
	extern __shared__ __align__(16) unsigned char dyn[];
	/* the ranking's lane masks, a word per warp and digit, over the staging tile */
	uint32_t   *masks = (uint32_t *) dyn;
	__shared__ uint32_t whist[RWARPS][RADIX];
	__shared__ uint32_t local_start[RADIX];
	__shared__ uint32_t gbase[RADIX];
	__shared__ uint32_t ws[RWARPS];
	__shared__ uint32_t s_tile;
	__shared__ uint32_t fhist[FOLD ? RADIX_FOLD_EXTRA * RADIX : 1];

	const int	tid = threadIdx.x,
				lane = tid & 31,
				w = tid >> 5;
	const uint32_t lt = (1u << lane) - 1;
	/* a digit that holds every key: the pass is a copy (flag read early) */
	const bool	copy = (MODE == 0 || MODE == 2) && trivial && *trivial;

	gs_claim_tile(tile_counter, &s_tile);
	for (int i = tid; i < RWARPS * RADIX; i += RT)
	{
		(&whist[0][0])[i] = 0;
		masks[i] = 0;
	}
	if (FOLD)
		for (int i = tid; i < nextra * RADIX; i += RT)
			fhist[i] = 0;
	__syncthreads();

	const uint32_t tile = s_tile;
	const uint64_t tile_base = (uint64_t) tile * (RT * IT);
	const uint32_t count = (uint32_t) min((uint64_t) (RT * IT), n - tile_base);
	const uint32_t wofs = (uint32_t) w * 32 * IT;
	const KI   *tkin = kin + tile_base;
	const uint32_t *tvin = vin + tile_base;
	KI			key[IT];
	uint32_t	rank[IT];

	if (copy)
	{
		copy_tile<KI, KO, MODE>(tkin, tvin, kout, vout, tile_base, count);
		return;
	}
	gs_load_rows(tkin, count, wofs, lane, (KI) 0, key);
	if (!PIN)
		gs_prefetch_rows_l2<IT>(tvin, count, wofs, lane);
	rank_tile<KI, PIN, IT, FOLD>(key, rank, count, wofs, lane, w, lt, masks, whist,
								 sub, lo, shift, nextra, fhist);
	__syncthreads();
	/* the threads that do no look-back add the tile's later digits */
	if (FOLD && tid >= RADIX)
		for (int i = tid - RADIX; i < nextra * RADIX; i += RT - RADIX)
			if (fhist[i])
				atomicAdd(&fold_hist[RADIX + i], fhist[i]);

	/* per digit, after the ranking: its counts are final only then */
	uint32_t	total = 0,
				excl = 0;

	if (tid < RADIX)
	{
		total = warp_prefixes(whist, tid);
		excl = look_back(status, tile, tid, total, epoch, digit_offsets);
	}
	{
		uint32_t	ls = gs_block_exclusive_scan<RWARPS>(total, ws);

		if (tid < RADIX)
		{
			local_start[tid] = ls;
			gbase[tid] = excl - ls;
		}
	}
	__syncthreads();

	if constexpr (MODE != 0)
		stage_and_scatter_packed<KI, KO, MODE, IT>(key, rank, count, wofs, lane,
												   (unsigned long long *) dyn,
												   local_start, whist, gbase, tvin,
												   kout, vout, sub, lo, shift);
	else
		stage_and_scatter_pairs<KI, IT>(key, rank, count, wofs, lane,
										(KO *) dyn, (uint32_t *) dyn,
										local_start, whist, gbase, tvin, kout, vout,
										sub, lo, shift);
}

/* Pairs per thread of a pass: RITEMS_NARROW for 32-bit keys, else RITEMS_WIDE. */
template <typename KI, typename KO>
constexpr int
pass_items()
{
	return (sizeof(KI) == 4 && sizeof(KO) == 4) ? RITEMS_NARROW : RITEMS_WIDE;
}

/* A pass's dynamic shared memory: its staging tile. */
template <typename KI, typename KO>
constexpr size_t
pass_smem()
{
	return (size_t) RT * pass_items<KI, KO>() * sizeof(KO);
}

/*
 * Can the first pass count the later digits (fold)?  Its counters take
 * 3 KB more than a pass's, which a 64 KB block (Turing) has not beside the
 * tile of 64-bit keys: there the histogram pass counts them.  (The packed
 * first pass, mode 1, has the shared memory of mode 0.)
 */
template <typename K>
static bool
fold_fits(const gs_context *ctx)
{
	return gs_smem_fits(ctx, radix_onesweep<K, K, 0, pass_items<K, K>(), true>,
						pass_smem<K, K>());
}

/* Launches one pass. */
template <typename KI, typename KO, int MODE, bool FOLD>
static gs_status
launch_pass(gs_context *ctx, const void *kin, const uint32_t *vin, void *kout,
			uint32_t *vout, uint32_t n, uint64_t sub, int lo, int shift,
			const uint32_t *dofs, volatile unsigned long long *status,
			uint32_t *counter, uint32_t epoch, int nextra, uint32_t *fold_hist,
			const uint32_t *trivial)
{
	constexpr int IT = pass_items<KI, KO>();
	auto		kernel = radix_onesweep<KI, KO, MODE, IT, FOLD>;
	const size_t smem = pass_smem<KI, KO>();

	GS_TRY(gs_set_smem(ctx, kernel, smem, "radix pass"));
	kernel<<<gs_blocks(n, RT * IT), RT, smem, ctx->stream>>>(
		(const KI *) kin, vin, (KO *) kout, vout, n, sub, lo, shift, dofs,
		status, counter, epoch, nextra, fold_hist, trivial);
	return gs_after_launch(ctx, "radix pass");
}

/* Small-slot layout (bytes). */
#define SMALL_HIST   1024
#define SMALL_OFFS   (SMALL_HIST + 8 * RADIX * 4)
#define SMALL_CNT    (SMALL_OFFS + 8 * RADIX * 4)
#define SMALL_TRIV   (SMALL_CNT + 64)
static_assert(SMALL_TRIV + 64 <= 32 * 1024, "radix: small slot layout");

template <typename K>
static gs_status
radix_sort(gs_context *ctx, const K *kin, const uint32_t *vin, K *kout,
		   uint32_t *vout, uint32_t n, const gs_keyrange *kr,
		   gs_sort_info *info)
{
	const uint64_t range = kr->max - kr->min;
	const size_t kbytes = (size_t) n * sizeof(K),
				vbytes = (size_t) n * sizeof(uint32_t);
	const bool	in_place = ((const void *) kin == (const void *) kout);

	info->radix_passes = 0;
	info->key_bits = 0;
	if (range == 0)
	{
		if (!in_place)
		{
			GS_CHECK(ctx, cudaMemcpyAsync(kout, kin, kbytes, cudaMemcpyDeviceToDevice, ctx->stream));
			GS_CHECK(ctx, cudaMemcpyAsync(vout, vin, vbytes, cudaMemcpyDeviceToDevice, ctx->stream));
		}
		return GS_OK;
	}
	const int	hi = 64 - __builtin_clzll(range);
	const int	lo = __builtin_ctzll(kr->diff);
	const int	sig = hi - lo;
	const int	npass = (sig + RADIX_BITS - 1) / RADIX_BITS;

	info->key_bits = sig;

	char	   *small;

	GS_TRY(gs_scratch(ctx, GS_SLOT_SMALL, GS_SMALL_BYTES, (void **) &small));
	uint32_t   *hist = (uint32_t *) (small + SMALL_HIST);
	uint32_t   *offs = (uint32_t *) (small + SMALL_OFFS);
	uint32_t   *counters = (uint32_t *) (small + SMALL_CNT);
	uint32_t   *trivial = (uint32_t *) (small + SMALL_TRIV);

	/*
	 * fold: no histogram pass.  Digit 0 (never trivial: some key differs
	 * from min in bit lo) is counted from the key-range pass's low bits; the
	 * first pass counts the others.  Which of those are trivial is known on
	 * the device only after it: such a pass (never the last: the top digit
	 * is not trivial either) reads its flag and copies its tiles, so that
	 * the host plans every pass up front and waits for nothing.
	 */
	const bool	fold = kr->low_hist && npass <= RADIX_FOLD_PASSES &&
		lo + RADIX_BITS <= GS_LOWHIST_BITS && fold_fits<K>(ctx);

	GS_CHECK(ctx, cudaMemsetAsync(hist, 0, 8 * RADIX * 4, ctx->stream));
	GS_CHECK(ctx, cudaMemsetAsync(counters, 0, 64, ctx->stream));
	int			active[8],
				m = 0;
	uint32_t	triv[8];

	if (fold)
	{
		radix_offsets_low<<<1, RADIX, 0, ctx->stream>>>(kr->low_hist,
														(uint32_t) kr->min & (GS_LOWHIST_BINS - 1),
														lo, offs);
		GS_TRY(gs_after_launch(ctx, "radix offsets"));
		for (int p = 0; p < npass; p++)
			active[m++] = p;	/* trivial ones copy */
	}
	else
	{
		radix_histogram<K><<<gs_hist_grid(ctx, n), GS_HIST_THREADS, 0, ctx->stream>>>(kin, n, (K) kr->min, lo, npass, hist);
		GS_TRY(gs_after_launch(ctx, "radix histogram"));
		radix_offsets<<<1, RADIX, 0, ctx->stream>>>(hist, n, 0, npass, offs, trivial);
		GS_TRY(gs_after_launch(ctx, "radix offsets"));
		GS_CHECK(ctx, cudaMemcpyAsync(triv, trivial, npass * 4, cudaMemcpyDeviceToHost, ctx->stream));
		GS_CHECK(ctx, cudaStreamSynchronize(ctx->stream));
		for (int p = 0; p < npass; p++)
			if (!triv[p])
				active[m++] = p;
	}
	/* range != 0, so some digit differs: m >= 1 */

	const uint32_t ntiles = gs_blocks(n, RTILE_MIN);
	void	   *sk,
			   *sv,
			   *st;

	GS_TRY(gs_scratch(ctx, GS_SLOT_ALT_KEYS, kbytes, &sk));
	GS_TRY(gs_scratch(ctx, GS_SLOT_ALT_VALS, vbytes, &sv));
	GS_TRY(gs_scratch(ctx, GS_SLOT_STATUS, (size_t) ntiles * RADIX * 8, &st));

	/*
	 * Destinations.  Out of place: passes alternate between the output and
	 * scratch so that the last planned one writes the output.  In place:
	 * scratch, output, scratch, ...  A last pass into scratch (an odd number
	 * in place) ends with a copy.
	 */
	bool		dest_out = in_place ? false : (((m - 1) & 1) == 0);

	/*
	 * 64-bit keys of <= 32 significant bits travel as packed words, (key -
	 * min) >> lo << 32 | value, from the first pass to the last (m >= 2):
	 * the scratch key buffer and the output's keys hold them.
	 */
	const bool	packed = (sizeof(K) == 8 && sig <= 32 && m >= 2);
	const void *src_k = kin;
	const uint32_t *src_v = vin;
	int			done = 0;

	for (int j = 0; j < m; j++)
	{
		void	   *dk = dest_out ? (void *) kout : sk;
		uint32_t   *dv = dest_out ? vout : (uint32_t *) sv;
		const int	shift = active[j] * RADIX_BITS;
		const uint32_t *dofs = offs + active[j] * RADIX;
		uint32_t	epoch = gs_next_epoch(ctx);
		volatile unsigned long long *status = (volatile unsigned long long *) st;
		const bool	first_fold = fold && j == 0;
		const int	nextra = first_fold ? npass - 1 : 0;
		/* fold: a middle pass copies if its digit turns out trivial */
		const uint32_t *tflag = (fold && j > 0 && j < m - 1) ? trivial + active[j] : NULL;
		uint32_t   *ctr = counters + j;

		if (!packed)
		{
			if (first_fold)
				GS_TRY((launch_pass<K, K, 0, true>(ctx, src_k, src_v, dk, dv, n, kr->min, lo,
												   shift, dofs, status, ctr, epoch, nextra,
												   hist, NULL)));
			else
				GS_TRY((launch_pass<K, K, 0, false>(ctx, src_k, src_v, dk, dv, n, kr->min, lo,
													shift, dofs, status, ctr, epoch, 0, NULL,
													tflag)));
		}
		else if (j == 0)
		{
			if (first_fold)
				GS_TRY((launch_pass<uint64_t, uint64_t, 1, true>(ctx, src_k, src_v, dk, dv, n,
																 kr->min, lo, shift, dofs,
																 status, ctr, epoch, nextra,
																 hist, NULL)));
			else
				GS_TRY((launch_pass<uint64_t, uint64_t, 1, false>(ctx, src_k, src_v, dk, dv, n,
																  kr->min, lo, shift, dofs,
																  status, ctr, epoch, 0, NULL,
																  NULL)));
		}
		else if (j < m - 1)
			GS_TRY((launch_pass<uint64_t, uint64_t, 2, false>(ctx, src_k, src_v, dk, dv, n,
															  0, 0, shift, dofs, status, ctr,
															  epoch, 0, NULL, tflag)));
		else
			GS_TRY((launch_pass<uint64_t, uint64_t, 3, false>(ctx, src_k, src_v, dk, dv, n,
															  kr->min, lo, shift, dofs,
															  status, ctr, epoch, 0, NULL,
															  NULL)));
		src_k = dk;
		src_v = dv;
		dest_out = !dest_out;
		done++;
		if (first_fold && nextra > 0)
		{
			/* the later digits' offsets, and which of them are trivial */
			radix_offsets<<<1, RADIX, 0, ctx->stream>>>(hist, n, 1, npass, offs, trivial);
			GS_TRY(gs_after_launch(ctx, "radix offsets"));
		}
	}
	if (src_k != (const void *) kout)
	{
		GS_CHECK(ctx, cudaMemcpyAsync(kout, sk, kbytes, cudaMemcpyDeviceToDevice, ctx->stream));
		GS_CHECK(ctx, cudaMemcpyAsync(vout, sv, vbytes, cudaMemcpyDeviceToDevice, ctx->stream));
	}
	if (fold && m > 2)
	{
		/* digit passes made: the middle ones that copied do not count */
		GS_CHECK(ctx, cudaMemcpyAsync(triv, trivial, npass * 4, cudaMemcpyDeviceToHost, ctx->stream));
		GS_CHECK(ctx, cudaStreamSynchronize(ctx->stream));
		for (int j = 1; j < m - 1; j++)
			if (triv[active[j]])
				done--;
	}
	info->radix_passes = done;
	return GS_OK;
}

gs_status
gs_radix_sort(gs_context *ctx, int key_bits, const void *kin,
			  const uint32_t *vin, void *kout, uint32_t *vout, uint32_t n,
			  const gs_keyrange *kr, gs_sort_info *info)
{
	if (key_bits == 32)
		return radix_sort(ctx, (const uint32_t *) kin, vin, (uint32_t *) kout,
						  vout, n, kr, info);
	return radix_sort(ctx, (const uint64_t *) kin, vin, (uint64_t *) kout,
					  vout, n, kr, info);
}
