/*-------------------------------------------------------------------------
 *
 * parallel.h
 *	  Running a loop over many items on the backend and helper threads
 *	  together, interruptibly.
 *
 * The items are handed out in chunks; the backend works on chunks too, and
 * between chunks it looks for a pending interrupt.  When one is pending it
 * stops handing chunks out, waits for the threads to finish theirs, and only
 * then lets the interrupt be processed (which may raise an error), so that
 * no thread ever reads memory that the error frees.  The loop body runs on
 * threads: it must call no PostgreSQL function that allocates, reports or
 * reads the catalogs.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_PARALLEL_H
#define GPUSORT_PARALLEL_H

#include "postgres.h"

/*
 * The loop body: items start..end-1.  part is the caller's slot of the
 * worker that runs it (0: the backend), below the nworkers that
 * parallel_for was given, so that a body can keep per-worker results.
 */
typedef void (*ParallelBody) (void *arg, int part, uint64 start, uint64 end);

/*
 * Runs body over items 0..n-1 in chunks of chunk items, on the backend and
 * up to nworkers - 1 helper threads (fewer when threads cannot start).
 * Returns after all items were done, or raises the interrupt that stopped
 * the loop.
 */
extern void parallel_for(uint64 n, uint64 chunk, int nworkers,
						 ParallelBody body, void *arg);

/* Workers a loop gets: gpusort.key_threads + 1, at most the cores. */
extern int	parallel_workers(void);

/* memcpy() of many bytes, on the backend and helper threads together. */
extern void parallel_copy(void *dst, const void *src, Size bytes);

#endif							/* GPUSORT_PARALLEL_H */
