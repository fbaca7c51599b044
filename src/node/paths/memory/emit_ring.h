/*-------------------------------------------------------------------------
 *
 * emit_ring.h
 *	  The gather ring of the GpuSort node: helper threads copy the sorted
 *	  rows into a ring of buffers in their sorted order ahead of the emit
 *	  phase, which then reads them sequentially.
 *
 * node_ring_row is inline, so that the emit phase (gpusort_exec) makes no
 * call for a row it reads from the ring.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_EMIT_RING_H
#define GPUSORT_EMIT_RING_H

#include "postgres.h"

#include "miscadmin.h"
#include "storage/s_lock.h"

#include "node/node_state.h"
#include "util/prefault.h"

/*
 * The ring of rows that helper threads gather in sorted order ahead of the
 * emit phase (prefault.h): chunk c of the sorted rows goes into buffer
 * c % RING_CHUNKS, and is gathered while the emit phase reads the chunks
 * before it.  A buffer holds the copies of RING_ROWS rows, one after
 * another, in room for rows of twice the average size (at least a cache
 * line), but no more than RING_MAX_BUFFER_BYTES, nor more than half the
 * rows' bytes over all buffers (unless that is below a cache line a row);
 * rows past that room are read where they lie.  Only forward scans of
 * inputs of RING_MIN_ROWS rows or more, whose rows average at most
 * RING_MAX_ROW_BYTES, use it.
 */
#define RING_ROWS			4096
#define RING_CHUNKS			16
#define RING_MIN_ROWS		(RING_ROWS * RING_CHUNKS)
#define RING_MAX_ROW_BYTES	512
#define RING_MAX_BUFFER_BYTES	((Size) 1024 * 1024)
#define RING_PREFETCH_ROWS	32	/* about a 4 kB page ahead: the hardware's
								 * own prefetching stops at page boundaries */

struct GatherRing
{
	char	   *area;			/* RING_CHUNKS buffers of chunk_bytes */
	Size		chunk_bytes;
	MinimalTuple *tuples;		/* RING_CHUNKS x RING_ROWS: each row's copy */
	volatile uint32 state[RING_CHUNKS]; /* GATHER_QUEUED, _DONE, _DROPPED */
	bool		direct;			/* the current chunk is read from sorted */
};

extern void node_gather_chunk(GpuSortState *state, int64 c);
extern void node_start_ring(GpuSortState *state);

/*
 * The row at position pos of a forward read through the ring.  Entering a
 * chunk, the emit phase queues the gathering of the chunk that takes the
 * buffer of the one before the previous (the previous one's last row may
 * still be in use), and waits for the chunk's own, or reads the chunk from
 * sorted if its gathering was dropped.
 */
static inline MinimalTuple
node_ring_row(GpuSortState *state, int64 pos)
{
	GatherRing *ring = state->ring;
	int64		c = pos / RING_ROWS;
	MinimalTuple *tuples;

	if (pos % RING_ROWS == 0)
	{
		volatile uint32 *chunk_state = &ring->state[c % RING_CHUNKS];
		uint32		st;

		if (c >= 2)
			node_gather_chunk(state, c - 2 + RING_CHUNKS);
		for (uint32 spins = 1;
			 (st = __atomic_load_n(chunk_state, __ATOMIC_ACQUIRE)) == GATHER_QUEUED;
			 spins++)
		{
			pg_spin_delay();
			if (spins % 4096 == 0)
				CHECK_FOR_INTERRUPTS();
		}
		ring->direct = (st == GATHER_DROPPED);
	}
	if (ring->direct)
		return state->sorted[pos];
	tuples = ring->tuples + (c % RING_CHUNKS) * RING_ROWS;
	if (pos % RING_ROWS + RING_PREFETCH_ROWS < RING_ROWS)
		__builtin_prefetch(tuples[pos % RING_ROWS + RING_PREFETCH_ROWS]);
	return tuples[pos % RING_ROWS];
}

#endif							/* GPUSORT_EMIT_RING_H */
