/*-------------------------------------------------------------------------
 *
 * emit_ring.c
 *	  The gather ring of the GpuSort node: queueing the gathering of the
 *	  sorted rows into the ring's buffers, and starting it.  Reading a row
 *	  from the ring is inline, in emit_ring.h.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "node/node_state.h"
#include "node/paths/memory/emit_ring.h"
#include "node/rows/row_store.h"
#include "settings.h"
#include "util/cacheline.h"
#include "util/prefault.h"

/* Queues the gathering of chunk c of the sorted rows into its buffer. */
void
node_gather_chunk(GpuSortState *state, int64 c)
{
	GatherRing *ring = state->ring;
	int			b = c % RING_CHUNKS;
	int64		first = c * RING_ROWS;

	if (first >= state->ntotal)
		return;
	prefault_gather(state->sorted + first, Min(RING_ROWS, state->ntotal - first),
					ring->area + b * ring->chunk_bytes, ring->chunk_bytes,
					ring->tuples + (Size) b * RING_ROWS, &ring->state[b]);
}

/* Starts gathering the sorted rows for a forward read, where it pays. */
void
node_start_ring(GpuSortState *state)
{
	Size		row_bytes;
	Size		room;
	GatherRing *ring;

	state->ring = NULL;
	if (state->random_access || state->keys_only ||
		state->ntotal < RING_MIN_ROWS || gpusort_prefault_threads <= 0)
		return;
	row_bytes = state->store.tupledata / state->ntotal;
	if (row_bytes > RING_MAX_ROW_BYTES)
		return;
	room = Min(RING_MAX_BUFFER_BYTES, state->store.tupledata / (2 * RING_CHUNKS));
	room = Max(room, RING_ROWS * GPUSORT_CACHE_LINE);
	ring = MemoryContextAllocZero(state->store.cxt, sizeof(GatherRing));
	ring->chunk_bytes = Min(room, RING_ROWS * Max(2 * MAXALIGN(row_bytes), GPUSORT_CACHE_LINE));
	ring->area = (char *) TYPEALIGN(GPUSORT_CACHE_LINE,
									MemoryContextAlloc(state->store.cxt,
													   RING_CHUNKS * ring->chunk_bytes +
													   GPUSORT_CACHE_LINE));
	ring->tuples = MemoryContextAlloc(state->store.cxt,
									  sizeof(MinimalTuple) * RING_CHUNKS * RING_ROWS);
	state->memory_used += RING_CHUNKS * (ring->chunk_bytes + sizeof(MinimalTuple) * RING_ROWS);
	state->ring = ring;
	for (int c = 0; c < RING_CHUNKS; c++)
		node_gather_chunk(state, c);
}
