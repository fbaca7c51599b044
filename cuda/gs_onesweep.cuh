/*
 * gs_onesweep.cuh
 *	  The building blocks that the one-sweep passes share (the radix sort's
 *	  digit passes and the counting sort's pass): a tile's extent, the
 *	  warp-striped loads, ranking among equal buckets of a warp (lane masks
 *	  or ballots), and the decoupled look-back's status words.
 *
 *	  A tile is THREADS * IT pairs, tile-local indices [0, count) 32-bit;
 *	  warp w holds the pairs wofs + i * 32 + lane (wofs = w * 32 * IT, i <
 *	  IT), "rows" of 32 pairs, so that loads are coalesced and ranking in
 *	  (item, lane) order keeps the pass stable.
 */
#ifndef GS_ONESWEEP_CUH
#define GS_ONESWEEP_CUH

#include "gs_internal.cuh"

/*
 * Tile indices are claimed in launch order (an atomic counter, not
 * blockIdx), so that a tile's predecessors are running or done and the
 * look-back cannot wait on a block not yet scheduled.  Thread 0 claims into
 * *s_tile, read after a barrier.
 */
__device__ __forceinline__ void
gs_claim_tile(uint32_t *tile_counter, uint32_t *s_tile)
{
	if (threadIdx.x == 0)
		*s_tile = atomicAdd(tile_counter, 1u);
}

/*
 * My items of the tile (tkin: its first pair, count: its pairs, wofs: my
 * warp's first pair); fill past its end.
 */
template <typename K, int IT>
__device__ __forceinline__ void
gs_load_rows(const K *tkin, uint32_t count, uint32_t wofs, int lane, K fill,
			 K (&key)[IT])
{
#pragma unroll
	for (int i = 0; i < IT; i++)
	{
		uint32_t	li = wofs + i * 32 + lane;

		key[i] = li < count ? tkin[li] : fill;
	}
}

/*
 * The values are read last (while staging): each of a warp's first IT
 * lanes asks for one of its rows' lines in L2 now.
 */
template <int IT>
__device__ __forceinline__ void
gs_prefetch_rows_l2(const uint32_t *tvin, uint32_t count, uint32_t wofs,
					int lane)
{
	if (lane < IT && wofs + lane * 32 < count)
		asm volatile("prefetch.global.L2 [%0];" :: "l"(tvin + wofs + lane * 32));
}

/*
 * Ranking among equal buckets of a warp.  counter: the warp's count of my
 * bucket so far (shared memory); lt: the mask of the lanes below mine; peers: the lanes whose valid item has my
 * bucket.  Returns my rank (items of my bucket before mine in (item, lane)
 * order); the lowest peer adds the peers to the counter, and with
 * CLEAR_MASK zeroes the bucket's lane mask again.
 */
template <typename C>
__device__ __forceinline__ uint32_t
gs_warp_rank_masks(uint32_t *mask, C *counters, uint32_t b, bool valid,
				   int lane, uint32_t lt)
{
	uint32_t	peers,
				before = 0;

	if (valid)
		atomicOr(mask, 1u << lane);
	__syncwarp();
	peers = valid ? *(volatile uint32_t *) mask : 0;
	if (valid)
		before = counters[b];
	__syncwarp();
	if (valid && (peers & lt) == 0)
	{
		*mask = 0;
		counters[b] = (C) (before + __popc(peers));
	}
	__syncwarp();
	return before + __popc(peers & lt);
}

/*
 * Decoupled look-back status words: epoch << 34 | flag << 32 | count, one
 * per tile and bucket.  GS_LB_AGG: the tile's own count; GS_LB_INC: the
 * count inclusive of all tiles before it.  A word of an older epoch is not
 * published yet.
 */
#define GS_LB_AGG 1u
#define GS_LB_INC 2u

__device__ __forceinline__ unsigned long long
gs_status_word(unsigned long long tag, uint32_t flag, uint32_t count)
{
	return tag | ((unsigned long long) flag << 32) | count;
}

/*
 * Look-back over status[t * stride + o], from tile k down: gs_lookback_load
 * reads W words at once (all in flight), gs_lookback_add adds them in order
 * until an inclusive one (returns true) or an unpublished one, where the
 * next window starts (*k is moved past the words used).
 */
template <int W>
__device__ __forceinline__ void
gs_lookback_load(volatile unsigned long long *status, uint32_t stride,
				 uint32_t o, int64_t k, unsigned long long (&s)[W])
{
#pragma unroll
	for (int i = 0; i < W; i++)
		s[i] = (k - i >= 0) ? status[(uint64_t) (k - i) * stride + o] : 0ull;
}

template <int W>
__device__ __forceinline__ bool
gs_lookback_add(const unsigned long long (&s)[W], uint32_t epoch, int64_t *k,
				uint32_t *excl)
{
	int			used = 0;
	bool		done = false;

#pragma unroll
	for (int i = 0; i < W; i++)
	{
		if (!done && used == i && (s[i] >> 34) == epoch)
		{
			*excl += (uint32_t) s[i];
			used++;
			done = ((s[i] >> 32) & 3u) == GS_LB_INC;
		}
	}
	*k -= used;
	return done;
}

#endif							/* GS_ONESWEEP_CUH */
