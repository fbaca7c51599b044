/*
 * gs_warpsort.cu
 *	  GPU-Warpsort (Ye, Xiao, Huang, Wang): the comparison-based sort.
 *	  1. Each warp sorts a tile of WS_T pairs in registers with a bitonic
 *	     network (barrier-free: shuffles and register swaps only); then one
 *	     block per WS_RUN0 pairs merges its tiles in shared memory with
 *	     bitonic merge stages, in registers by rounds (merge_tiles_smem).
 *	  2. Sorted runs are merged pairwise, level by level.  Each merge is
 *	     split into independent pieces of at most WS_PIECE outputs by
 *	     splitters found on the merge path (exact, so pieces are balanced;
 *	     each warp finds its own two by a 16-way search), and each piece is
 *	     merged by one warp with Ye's bitonic merge: the
 *	     warp keeps the WS_T largest pairs seen so far in registers, loads
 *	     the next WS_T pairs (coalesced) from whichever run has the smaller
 *	     head (loaded before the network that frees room for it runs), and
 *	     a bitonic merge network emits the WS_T smallest.
 *	  Pairs compare as (key, value), so the sort is stable for values that
 *	  are input positions.
 */
#include "gs_internal.cuh"

/* The warpsort policy (gs_tuning.cuh) by the names the kernels use */
#define WS_E (gs_warpsort_tuning.items)
#define WS_WARPS (gs_warpsort_tuning.warps)
#define WS_PIECE (gs_warpsort_tuning.piece)
#define WS_RUN0 (gs_warpsort_tuning.run0)
#define WS_MF (gs_warpsort_tuning.merge_log2_items)
#define WS_MERGE_TILES_MINB (gs_warpsort_tuning.merge_tiles_blocks_per_sm)
#define WS_MERGE_MINB_SMALL (gs_warpsort_tuning.merge_blocks_per_sm_small)
#define WS_MERGE_MINB_LARGE (gs_warpsort_tuning.merge_blocks_per_sm_large)
#define WS_WIDE_REGS_MAX_N (gs_warpsort_tuning.small_n_max)

#define WS_T (32 * WS_E)		/* pairs per warp tile / merge step */

template <typename K>
__device__ __forceinline__ void
reg_cas(K &ka, uint32_t &va, K &kb, uint32_t &vb, bool up)
{
	bool		sw = up ? gs_pair_less(kb, vb, ka, va) : gs_pair_less(ka, va, kb, vb);

	if (sw)
	{
		K			tk = ka;
		uint32_t	tv = va;

		ka = kb;
		va = vb;
		kb = tk;
		vb = tv;
	}
}

template <typename K>
__device__ __forceinline__ void
shfl_cas(K &k, uint32_t &v, int s, bool up, int lane)
{
	K			pk = __shfl_xor_sync(0xffffffffu, k, s);
	uint32_t	pv = __shfl_xor_sync(0xffffffffu, v, s);
	bool		take_min = ((lane & s) == 0) == up;
	bool		sw = take_min ? gs_pair_less(pk, pv, k, v) : gs_pair_less(k, v, pk, pv);

	if (sw)
	{
		k = pk;
		v = pv;
	}
}

/* Sorts a bitonic sequence held striped (index j*32+lane) ascending. */
template <typename K>
__device__ __forceinline__ void
bitonic_clean(K (&k)[WS_E], uint32_t (&v)[WS_E], int lane)
{
#pragma unroll
	for (int s = WS_T / 2; s >= 32; s >>= 1)
	{
#pragma unroll
		for (int j = 0; j < WS_E; j++)
		{
			const int	r = s / 32;

			if ((j & r) == 0)
				reg_cas(k[j], v[j], k[j | r], v[j | r], true);
		}
	}
#pragma unroll
	for (int s = 16; s >= 1; s >>= 1)
	{
#pragma unroll
		for (int j = 0; j < WS_E; j++)
			shfl_cas(k[j], v[j], s, true, lane);
	}
}

template <typename K>
__global__ void __launch_bounds__(WS_WARPS * 32)
warp_tile_sort(const K *kin, const uint32_t *vin, K *kout, uint32_t *vout,
			   uint32_t n)
{
	const int	lane = threadIdx.x & 31;
	const uint64_t base = ((uint64_t) blockIdx.x * WS_WARPS + (threadIdx.x >> 5)) * WS_T;
	K			k[WS_E];
	uint32_t	v[WS_E];

	if (base >= n)
		return;
#pragma unroll
	for (int j = 0; j < WS_E; j++)
	{
		uint64_t	i = base + j * 32 + lane;

		k[j] = i < n ? kin[i] : gs_key_max<K>::value;
		v[j] = i < n ? vin[i] : 0xFFFFFFFFu;
	}
#pragma unroll
	for (int size = 2; size <= WS_T; size <<= 1)
	{
#pragma unroll
		for (int s = size / 2; s >= 1; s >>= 1)
		{
#pragma unroll
			for (int j = 0; j < WS_E; j++)
			{
				const bool	up = (((j * 32 + lane) & size) == 0);

				if (s >= 32)
				{
					const int	r = s / 32;

					if ((j & r) == 0)
						reg_cas(k[j], v[j], k[j | r], v[j | r], up);
				}
				else
					shfl_cas(k[j], v[j], s, up, lane);
			}
		}
	}
#pragma unroll
	for (int j = 0; j < WS_E; j++)
	{
		uint64_t	i = base + j * 32 + lane;

		if (i < n)
		{
			kout[i] = k[j];
			vout[i] = v[j];
		}
	}
}

/*
 * Merges the sorted WS_T-pair warp tiles of one run0-pair segment (WS_RUN0,
 * or fewer where the device's block has not the shared memory: first_run)
 * into one sorted run, in shared memory, in place, with run0 / WS_ME threads
 * and bitonic merge stages (k = 2 WS_T .. run0), the first step of each
 * comparing an element with its mirror so that both halves may be ascending.
 * Each thread holds WS_ME = 2^WS_MF elements at a time: the steps of
 * distance >= 32 go in rounds of up to WS_MF steps in registers (one
 * shared-memory round trip per round, not per step), the steps of distance <
 * 32 by shuffles right after the last round of a stage, whose elements are
 * 32 consecutive ones per warp.  A round over the steps j_top .. j_low
 * (distances halving) gives thread g the elements base(g) + r * j_low, r <
 * WS_ME, where base(g) has zeros at the bit positions j_low .. j_top.
 */
#define WS_ME (1 << WS_MF)
#define WS_MT (WS_RUN0 / WS_ME)	/* threads per block, at most */
static_assert(WS_RUN0 >= 2 * WS_T && (WS_RUN0 & (WS_RUN0 - 1)) == 0, "WS_RUN0");
static_assert((32 << (WS_MF - 1)) <= WS_T, "the first stage's first round");

template <typename K>
__global__ void __launch_bounds__(WS_MT, GS_MIN_BLOCKS(WS_MT, WS_MERGE_TILES_MINB))
merge_tiles_smem(K *keys, uint32_t *vals, uint32_t n, uint32_t run0)
{
	extern __shared__ __align__(16) unsigned char dyn[];
	K		   *sk = (K *) dyn;
	uint32_t   *sv = (uint32_t *) (sk + run0);
	const uint64_t begin = (uint64_t) blockIdx.x * run0;
	const uint32_t len = (uint32_t) min((uint64_t) run0, n - begin);
	const uint32_t g = threadIdx.x;
	const int	lane = (int) (threadIdx.x & 31);

	for (uint32_t i = threadIdx.x; i < run0; i += blockDim.x)
	{
		sk[i] = i < len ? keys[begin + i] : gs_key_max<K>::value;
		sv[i] = i < len ? vals[begin + i] : 0xFFFFFFFFu;
	}
	__syncthreads();
#pragma unroll 1
	for (uint32_t k = 2 * WS_T; k <= run0; k <<= 1)
	{
		/* steps j = k/2 .. 32: L of them, in rounds; the first takes the rest */
		const int	L = __ffs(k) - 1 - 5;
		const int	R = (L + WS_MF - 1) / WS_MF;
		int			c = L - WS_MF * (R - 1);
		uint32_t	jtop = k >> 1;

#pragma unroll 1
		for (int rd = 0; rd < R; rd++)
		{
			const uint32_t jlow = jtop >> (WS_MF - 1);
			const uint32_t base = (g & (jlow - 1)) | ((g & ~(jlow - 1)) << WS_MF);
			const bool	mirror = (rd == 0);
			/* the mirror step as a normal one on the upper half reversed */
			auto		idx = [&](int r) -> uint32_t {
				uint32_t	v = base + r * jlow;

				return (mirror && (r >> (WS_MF - 1))) ? v ^ (jtop - 1) : v;
			};
			K			kk[WS_ME];
			uint32_t	vv[WS_ME];

#pragma unroll
			for (int r = 0; r < WS_ME; r++)
			{
				kk[r] = sk[idx(r)];
				vv[r] = sv[idx(r)];
			}
#pragma unroll
			for (int s = 0; s < WS_MF; s++)
			{
				if (s < c)
				{
					const int	bit = 1 << (WS_MF - 1 - s);

#pragma unroll
					for (int r = 0; r < WS_ME; r++)
						if ((r & bit) == 0)
						{
							/* in a mirror round the upper half runs reversed */
							const bool	up = !(mirror && s > 0 && (r >> (WS_MF - 1)));

							reg_cas(kk[r], vv[r], kk[r | bit], vv[r | bit], up);
						}
				}
			}
			if (rd == R - 1)
			{
				/*
				 * jlow == 32: steps 16 .. 1 among the lanes; an element of
				 * a reversed upper half (a mirror round that is also the
				 * stage's last) sits at lane ~(its index), so it runs down
				 */
#pragma unroll
				for (int r = 0; r < WS_ME; r++)
#pragma unroll
					for (int j = 16; j >= 1; j >>= 1)
						shfl_cas(kk[r], vv[r], j, !(mirror && (r >> (WS_MF - 1))), lane);
			}
#pragma unroll
			for (int r = 0; r < WS_ME; r++)
			{
				sk[idx(r)] = kk[r];
				sv[idx(r)] = vv[r];
			}
			__syncthreads();
			jtop >>= c;
			c = WS_MF;
		}
	}
	for (uint32_t i = threadIdx.x; i < len; i += blockDim.x)
	{
		keys[begin + i] = sk[i];
		vals[begin + i] = sv[i];
	}
}

/*
 * Merge-path splits, one per half-warp: lanes 0-15 find how many of the
 * first d0 outputs of merging A[0, na) and B[0, nb) come from A, lanes
 * 16-31 the same for d1.  Each round probes 16 points of the interval that
 * holds the split (one load of A and B each per lane), so it shrinks
 * 16-fold: about 7 rounds for a 2^26-pair run, where a binary search takes
 * 26 dependent loads.  Returns the split for d0 in every lane of half 0,
 * for d1 in half 1.
 */
template <typename K>
__device__ __forceinline__ uint64_t
warp_merge_path(const K *ka, const uint32_t *va, uint64_t na,
				const K *kb, const uint32_t *vb, uint64_t nb,
				uint64_t d0, uint64_t d1, int lane)
{
	const int	h = lane >> 4,
				t = lane & 15;
	const uint64_t d = h ? d1 : d0;
	uint64_t	lo = d > nb ? d - nb : 0,
				hi = d < na ? d : na;

	/* P(i): A[i] is among the first d outputs; true for i < split */
	while (__any_sync(0xffffffffu, lo < hi))
	{
		const uint64_t len = hi - lo;
		const uint64_t p = lo + len * t / 16;
		bool		pred = false;

		if (lo < hi)
			pred = !gs_pair_less(kb[d - 1 - p], vb[d - 1 - p], ka[p], va[p]);
		const uint32_t c = __popc((__ballot_sync(0xffffffffu, pred) >> (h * 16)) & 0xFFFFu);

		if (lo < hi)
		{
			if (c == 0)
				hi = lo;
			else
			{
				const uint64_t nlo = lo + len * (c - 1) / 16 + 1;

				hi = c < 16 ? lo + len * c / 16 : hi;
				lo = nlo;
			}
		}
	}
	return lo;
}

template <typename K>
__device__ __forceinline__ void
load_run(const K *keys, const uint32_t *vals, uint64_t pos, uint64_t end,
		 bool reversed, K (&k)[WS_E], uint32_t (&v)[WS_E], int lane)
{
#pragma unroll
	for (int j = 0; j < WS_E; j++)
	{
		uint64_t	i = pos + (reversed ? (WS_T - 1 - (j * 32 + lane)) : (j * 32 + lane));

		k[j] = i < end ? keys[i] : gs_key_max<K>::value;
		v[j] = i < end ? vals[i] : 0xFFFFFFFFu;
	}
}

template <typename K, int MINB>
__global__ void __launch_bounds__(WS_WARPS * 32, GS_MIN_BLOCKS(WS_WARPS * 32, MINB))
warp_merge(const K *__restrict__ kin, const uint32_t *__restrict__ vin,
		   K *__restrict__ kout, uint32_t *__restrict__ vout, uint32_t n,
		   uint32_t run, uint32_t piece, uint32_t npieces)
{
	const int	lane = threadIdx.x & 31;
	const uint32_t q = blockIdx.x * WS_WARPS + (threadIdx.x >> 5);

	if (q >= npieces)
		return;
	const uint64_t g = (uint64_t) q * piece;
	const uint64_t pair_base = g / (2ull * run) * (2ull * run);
	const uint64_t na = min((uint64_t) run, n - pair_base);
	const uint64_t nb = min((uint64_t) run, n - pair_base - na);
	const uint64_t d0 = g - pair_base;
	const uint64_t d1 = min(d0 + piece, na + nb);
	const uint64_t sp = warp_merge_path(kin + pair_base, vin + pair_base, na,
										kin + pair_base + na, vin + pair_base + na,
										nb, d0, d1, lane);
	const uint64_t i0 = __shfl_sync(0xffffffffu, sp, 0);
	const uint64_t i1 = __shfl_sync(0xffffffffu, sp, 16);
	const uint64_t a0 = pair_base + i0,
				a1 = pair_base + i1;
	const uint64_t b0 = pair_base + na + (d0 - i0),
				b1 = pair_base + na + (d1 - i1);
	const uint64_t out0 = pair_base + d0;
	const uint32_t total = (uint32_t) (d1 - d0);

	K			bk[WS_E],
				ck[WS_E],
				nk[WS_E];
	uint32_t	bv[WS_E],
				cv[WS_E],
				nv[WS_E];
	uint64_t	ia = a0,
				ib = b0;

	load_run(kin, vin, ia, a1, false, bk, bv, lane);
	ia += WS_T;
	load_run(kin, vin, ib, b1, true, ck, cv, lane);
	ib += WS_T;
	for (uint32_t done = 0;;)
	{
		/*
		 * The pairs the next step needs are known now: load them before
		 * this step's network, so that the load overlaps it.
		 */
		const bool	more = done + WS_T < total;

		if (more)
		{
			/* the next WS_T pairs come from the run with the smaller head */
			bool		take_a;

			if (ia >= a1)
				take_a = false;
			else if (ib >= b1)
				take_a = true;
			else
				take_a = !gs_pair_less(kin[ib], vin[ib], kin[ia], vin[ia]);
			if (take_a)
			{
				load_run(kin, vin, ia, a1, true, nk, nv, lane);
				ia += WS_T;
			}
			else
			{
				load_run(kin, vin, ib, b1, true, nk, nv, lane);
				ib += WS_T;
			}
		}
		/* half-cleaner: bk = smaller half, ck = larger half, both bitonic */
#pragma unroll
		for (int j = 0; j < WS_E; j++)
			reg_cas(bk[j], bv[j], ck[j], cv[j], true);
		bitonic_clean(bk, bv, lane);
#pragma unroll
		for (int j = 0; j < WS_E; j++)
		{
			uint32_t	o = done + j * 32 + lane;

			if (o < total)
			{
				kout[out0 + o] = bk[j];
				vout[out0 + o] = bv[j];
			}
		}
		done += WS_T;
		if (!more)
			break;
		bitonic_clean(ck, cv, lane);
#pragma unroll
		for (int j = 0; j < WS_E; j++)
		{
			bk[j] = ck[j];
			bv[j] = cv[j];
			ck[j] = nk[j];
			cv[j] = nv[j];
		}
	}
}

/* A run0-pair segment's shared memory in merge_tiles_smem. */
template <typename K>
static size_t
merge_tiles_bytes(uint32_t run0)
{
	return (size_t) run0 * (sizeof(K) + 4);
}

/*
 * The first runs' length: WS_RUN0 pairs, or the longest power of two whose
 * segment the device's block holds (4096 at 64-bit keys on Turing's 64 KB);
 * WS_T (no merge in shared memory) where not even 2 * WS_T fit.
 */
template <typename K>
static uint32_t
first_run(const gs_context *ctx)
{
	for (uint32_t run = WS_RUN0; run >= 2 * WS_T; run >>= 1)
		if (gs_smem_fits(ctx, merge_tiles_smem<K>, merge_tiles_bytes<K>(run)))
			return run;
	return WS_T;
}

template <typename K>
static gs_status
warpsort(gs_context *ctx, const K *kin, const uint32_t *vin, K *kout,
		 uint32_t *vout, uint32_t n)
{
	/*
	 * Warp tiles of WS_T pairs, then (when n needs merges) one block merges
	 * each run0 (WS_RUN0) segment of tiles in shared memory: the global
	 * merges start from run0-pair runs, log2(run0 / WS_T) merge levels (each
	 * a full pass over the pairs) fewer.
	 */
	const uint64_t run0 = (n > WS_T) ? first_run<K>(ctx) : WS_T;
	int			levels = 0;

	for (uint64_t run = run0; run < n; run <<= 1)
		levels++;
	K		   *sk = NULL;
	uint32_t   *sv = NULL;

	if (levels > 0)
	{
		GS_TRY(gs_scratch(ctx, GS_SLOT_ALT_KEYS, (size_t) n * sizeof(K), (void **) &sk));
		GS_TRY(gs_scratch(ctx, GS_SLOT_ALT_VALS, (size_t) n * 4, (void **) &sv));
	}
	/* stage s writes the output when (levels - s) is even */
	K		   *dk = (levels & 1) ? sk : kout;
	uint32_t   *dv = (levels & 1) ? sv : vout;

	uint32_t	tiles = gs_blocks(n, WS_T);

	warp_tile_sort<K><<<gs_blocks(tiles, WS_WARPS), WS_WARPS * 32, 0, ctx->stream>>>(
		kin, vin, dk, dv, n);
	GS_TRY(gs_after_launch(ctx, "warpsort tiles"));
	if (run0 > WS_T)
	{
		const size_t smem = merge_tiles_bytes<K>((uint32_t) run0);

		GS_TRY(gs_set_smem(ctx, merge_tiles_smem<K>, smem, "warpsort tile merge"));
		merge_tiles_smem<K><<<gs_blocks(n, (uint32_t) run0), (uint32_t) run0 / WS_ME, smem,
			ctx->stream>>>(dk, dv, n, (uint32_t) run0);
		GS_TRY(gs_after_launch(ctx, "warpsort tile merge"));
	}
	for (uint64_t run = run0; run < n; run <<= 1)
	{
		const K    *srck = dk;
		const uint32_t *srcv = dv;
		uint32_t	piece = (uint32_t) min((uint64_t) WS_PIECE, 2 * run);
		uint32_t	npieces = gs_blocks(n, piece);

		dk = (dk == kout) ? sk : kout;
		dv = (dv == vout) ? sv : vout;
		/* the register budget by size: more registers pay at smaller n */
		if (n < WS_WIDE_REGS_MAX_N)
			warp_merge<K, WS_MERGE_MINB_SMALL><<<gs_blocks(npieces, WS_WARPS), WS_WARPS * 32, 0, ctx->stream>>>(
				srck, srcv, dk, dv, n, (uint32_t) run, piece, npieces);
		else
			warp_merge<K, WS_MERGE_MINB_LARGE><<<gs_blocks(npieces, WS_WARPS), WS_WARPS * 32, 0, ctx->stream>>>(
				srck, srcv, dk, dv, n, (uint32_t) run, piece, npieces);
		GS_TRY(gs_after_launch(ctx, "warpsort merge"));
	}
	return GS_OK;
}

gs_status
gs_warpsort(gs_context *ctx, int key_bits, const void *kin,
			const uint32_t *vin, void *kout, uint32_t *vout, uint32_t n)
{
	if (key_bits == 32)
		return warpsort(ctx, (const uint32_t *) kin, vin, (uint32_t *) kout,
						vout, n);
	return warpsort(ctx, (const uint64_t *) kin, vin, (uint64_t *) kout,
					vout, n);
}
