/*
 * gs_warpsort.cu
 *	  GPU-Warpsort (Ye, Xiao, Huang, Wang): the comparison-based sort.
 *	  1. Each warp sorts a tile of WS_T pairs in registers with a bitonic
 *	     network (barrier-free: shuffles and register swaps only); then one
 *	     block per WS_RUN0 pairs merges its 16 tiles in shared memory with
 *	     bitonic merge stages (a 4096-pair run: 4 global merge levels fewer).
 *	  2. Sorted runs are merged pairwise, level by level.  Each merge is
 *	     split into independent pieces of at most WS_PIECE outputs by
 *	     splitters found on the merge path (exact, so pieces are balanced),
 *	     and each piece is merged by one warp with Ye's bitonic merge: the
 *	     warp keeps the WS_T largest pairs seen so far in registers, loads
 *	     the next WS_T pairs (coalesced) from whichever run has the smaller
 *	     head, and a bitonic merge network emits the WS_T smallest.
 *	  Pairs compare as (key, value), so the sort is stable for values that
 *	  are input positions.
 */
#include "gs_internal.cuh"

#define WS_E 8					/* pairs per lane */
#define WS_T (32 * WS_E)		/* pairs per warp tile / merge step */
#define WS_PIECE 2048			/* outputs per warp in a merge */
#define WS_WARPS 4				/* warps per block */
#define WS_RUN0 4096			/* first runs of the global merges */

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
 * Merges the sorted WS_T-pair warp tiles of one WS_RUN0-pair segment into
 * one sorted run, in shared memory, in place: bitonic merge stages only
 * (k = 2 WS_T .. WS_RUN0), the first step of each comparing an element with
 * its mirror so that both halves may be ascending; the steps of distance
 * < 32 by shuffles in registers (shared-memory bandwidth bounds the rest).
 */
template <typename K>
__global__ void __launch_bounds__(1024)
merge_tiles_smem(K *keys, uint32_t *vals, uint32_t n)
{
	__shared__ K sk[WS_RUN0];
	__shared__ uint32_t sv[WS_RUN0];
	const uint64_t begin = (uint64_t) blockIdx.x * WS_RUN0;
	const uint32_t len = (uint32_t) min((uint64_t) WS_RUN0, n - begin);

	for (uint32_t i = threadIdx.x; i < WS_RUN0; i += 1024)
	{
		sk[i] = i < len ? keys[begin + i] : gs_key_max<K>::value;
		sv[i] = i < len ? vals[begin + i] : 0xFFFFFFFFu;
	}
	__syncthreads();
#pragma unroll 1
	for (uint32_t k = 2 * WS_T; k <= WS_RUN0; k <<= 1)
	{
#pragma unroll 1
		for (uint32_t j = k >> 1; j >= 32; j >>= 1)
		{
#pragma unroll
			for (uint32_t t = threadIdx.x; t < WS_RUN0 / 2; t += 1024)
			{
				uint32_t	i = 2 * t - (t & (j - 1));
				uint32_t	l = (j == (k >> 1)) ? (i ^ (k - 1)) : (i + j);
				K			ka = sk[i],
							kb = sk[l];
				uint32_t	va = sv[i],
							vb = sv[l];

				if (gs_pair_less(kb, vb, ka, va))
				{
					sk[i] = kb;
					sk[l] = ka;
					sv[i] = vb;
					sv[l] = va;
				}
			}
			__syncthreads();
		}
		/*
		 * Steps j = 16 .. 1 stay inside aligned groups of 32: in registers,
		 * by shuffles (one shared-memory read and write instead of five).
		 */
#pragma unroll
		for (int r = 0; r < WS_RUN0 / 1024; r++)
		{
			const uint32_t i = r * 1024 + threadIdx.x;
			K			kk = sk[i];
			uint32_t	vv = sv[i];

#pragma unroll
			for (int j = 16; j >= 1; j >>= 1)
				shfl_cas(kk, vv, j, true, (int) (threadIdx.x & 31));
			sk[i] = kk;
			sv[i] = vv;
		}
		__syncthreads();
	}
	for (uint32_t i = threadIdx.x; i < len; i += 1024)
	{
		keys[begin + i] = sk[i];
		vals[begin + i] = sv[i];
	}
}

/* Split of each merge piece: pairs taken from run A before the piece. */
template <typename K>
__global__ void
merge_partition(const K *keys, const uint32_t *vals, uint32_t n, uint32_t run,
				uint32_t piece, uint32_t npieces, uint32_t *split)
{
	uint32_t	q = blockIdx.x * blockDim.x + threadIdx.x;

	if (q >= npieces)
		return;
	uint64_t	g = (uint64_t) q * piece;
	uint64_t	pair_base = g / (2ull * run) * (2ull * run);
	uint64_t	na = min((uint64_t) run, n - pair_base);
	uint64_t	nb = min((uint64_t) run, n - pair_base - na);
	uint64_t	d = g - pair_base;
	const K    *ka = keys + pair_base,
			   *kb = keys + pair_base + na;
	const uint32_t *va = vals + pair_base,
			   *vb = vals + pair_base + na;
	uint64_t	lo = d > nb ? d - nb : 0,
				hi = d < na ? d : na;

	while (lo < hi)
	{
		uint64_t	mid = (lo + hi) >> 1;

		/* A[mid] <= B[d-1-mid]: A[mid] is among the first d outputs */
		if (!gs_pair_less(kb[d - 1 - mid], vb[d - 1 - mid], ka[mid], va[mid]))
			lo = mid + 1;
		else
			hi = mid;
	}
	split[q] = (uint32_t) lo;
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

template <typename K>
__global__ void __launch_bounds__(WS_WARPS * 32)
warp_merge(const K *__restrict__ kin, const uint32_t *__restrict__ vin,
		   K *__restrict__ kout, uint32_t *__restrict__ vout, uint32_t n,
		   uint32_t run, uint32_t piece, uint32_t npieces,
		   const uint32_t *__restrict__ split)
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
	const uint64_t i0 = split[q];
	const uint64_t i1 = (d1 == na + nb) ? na : split[q + 1];
	const uint64_t a0 = pair_base + i0,
				a1 = pair_base + i1;
	const uint64_t b0 = pair_base + na + (d0 - i0),
				b1 = pair_base + na + (d1 - i1);
	const uint64_t out0 = pair_base + d0;
	const uint32_t total = (uint32_t) (d1 - d0);

	K			bk[WS_E],
				ck[WS_E];
	uint32_t	bv[WS_E],
				cv[WS_E];
	uint64_t	ia = a0,
				ib = b0;

	load_run(kin, vin, ia, a1, false, bk, bv, lane);
	ia += WS_T;
	load_run(kin, vin, ib, b1, true, ck, cv, lane);
	ib += WS_T;
	for (uint32_t done = 0;;)
	{
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
		if (done >= total)
			break;
		bitonic_clean(ck, cv, lane);
#pragma unroll
		for (int j = 0; j < WS_E; j++)
		{
			bk[j] = ck[j];
			bv[j] = cv[j];
		}
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
			load_run(kin, vin, ia, a1, true, ck, cv, lane);
			ia += WS_T;
		}
		else
		{
			load_run(kin, vin, ib, b1, true, ck, cv, lane);
			ib += WS_T;
		}
	}
}

template <typename K>
static gs_status
warpsort(gs_context *ctx, const K *kin, const uint32_t *vin, K *kout,
		 uint32_t *vout, uint32_t n)
{
	/*
	 * Warp tiles of WS_T pairs, then (when n needs merges) one block merges
	 * each WS_RUN0 segment of tiles in shared memory.  Starting the global
	 * merges from 4096-pair runs instead of 256-pair tiles saves 4 merge
	 * levels, each a full pass over the pairs.
	 */
	const uint64_t run0 = (n > WS_T) ? WS_RUN0 : WS_T;
	int			levels = 0;

	for (uint64_t run = run0; run < n; run <<= 1)
		levels++;
	K		   *sk = NULL;
	uint32_t   *sv = NULL,
			   *split = NULL;

	if (levels > 0)
	{
		GS_TRY(gs_scratch(ctx, GS_SLOT_ALT_KEYS, (size_t) n * sizeof(K), (void **) &sk));
		GS_TRY(gs_scratch(ctx, GS_SLOT_ALT_VALS, (size_t) n * 4, (void **) &sv));
		GS_TRY(gs_scratch(ctx, GS_SLOT_WORK, ((size_t) n / 256 + 16) * 4, (void **) &split));
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
		merge_tiles_smem<K><<<gs_blocks(n, WS_RUN0), 1024, 0, ctx->stream>>>(dk, dv, n);
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
		merge_partition<K><<<gs_blocks(npieces, 256), 256, 0, ctx->stream>>>(
			srck, srcv, n, (uint32_t) run, piece, npieces, split);
		GS_TRY(gs_after_launch(ctx, "warpsort partition"));
		warp_merge<K><<<gs_blocks(npieces, WS_WARPS), WS_WARPS * 32, 0, ctx->stream>>>(
			srck, srcv, dk, dv, n, (uint32_t) run, piece, npieces, split);
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
