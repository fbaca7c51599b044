/*-------------------------------------------------------------------------
 *
 * prefault.h
 *	  Mapping fresh memory ahead of its first use, gathering rows ahead of
 *	  their reading, and unmapping memory after its last, on other cores.
 *
 * The first write to each page of fresh memory costs a page fault in which
 * the kernel zeroes the page: about 0.35 s per GB on one core of the hosts
 * measured, a third of a 10-million-row sort's time.  The sort's large
 * allocations are therefore handed to a few helper threads of the backend
 * (gpusort.prefault_threads) that map their pages, in 2 MB pieces, while the
 * backend goes on; it finds the pages mapped when it gets there.
 *
 * The threads map pages with madvise(MADV_POPULATE_WRITE), which neither
 * reads nor writes their contents, so they never race with the backend's
 * own writes, and memory freed meanwhile is simply skipped.
 *
 * Sorted rows are read in an order unrelated to where they lie, and each
 * read misses the caches and the TLB; one core overlaps only a few such
 * misses.  So the threads also copy the rows, a few thousand at a time, in
 * sorted order into a small ring of buffers just ahead of the backend, which
 * then reads them in sequence (the GpuSort node's emit phase).
 *
 * Freeing is costly too: the kernel frees a large mapping's pages in
 * munmap(), about 35 ms per GB, after the last row is returned and before
 * the query ends.  So the threads also unmap the sort's large mappings
 * handed to them (big_array_free), while the backend goes on.
 *
 * The threads run no PostgreSQL code and receive no signals.
 *
 *-------------------------------------------------------------------------
 */
#ifndef PREFAULT_H
#define PREFAULT_H

#include "postgres.h"

#include "access/htup_details.h"

#include "util/cacheline.h"

/*
 * Queues [start, start + len) to be mapped by the helper threads.  Does
 * nothing for small ranges, with gpusort.prefault_threads = 0, or where the
 * kernel cannot do it.
 */
extern void prefault_range(void *start, Size len);

/*
 * MemoryContextAllocHuge(cxt, size), with the chunk queued to be mapped:
 * for large arrays about to be filled.
 */
extern void *prefault_alloc(MemoryContext cxt, Size size);

/*
 * With gpusort.huge_pages on, asks the kernel for transparent huge pages in
 * the 2 MB-aligned part of [start, start + len): for memory read at random,
 * whose TLB misses they save.
 */
extern void prefault_huge_pages(void *start, Size len);

/*
 * Gathering rows in the order the backend will read them: a helper thread
 * copies the tuples that rows[0..nrows-1] point to, one after another
 * (MAXALIGNed), into the area of area_bytes at area (cache-line aligned),
 * and sets tuples[i] to row i's copy, or to rows[i] itself once the area is
 * full.  *state goes from GATHER_QUEUED to GATHER_DONE when tuples[] is
 * filled, or to GATHER_DROPPED if the work was cancelled before it began;
 * it is GATHER_DROPPED at once when no helper thread runs or the queue is
 * full.
 */
#define GATHER_PREFETCH			16	/* rows a thread fetches ahead */

#define GATHER_QUEUED			0
#define GATHER_DONE				1
#define GATHER_DROPPED			2

extern void prefault_gather(MinimalTuple const *rows, uint32 nrows,
							char *area, Size area_bytes, MinimalTuple *tuples,
							volatile uint32 *state);

/*
 * Hands a mapping of the caller's, [start, start + len), to a helper thread
 * to unmap, so that the backend need not wait while the kernel frees its
 * pages (about 35 ms per GB).  Returns false, leaving it mapped, for small
 * mappings, where no helper thread runs or the queue is full.
 */
extern bool prefault_unmap(void *start, Size len);

/*
 * Forgets the work still queued, but for the mappings to unmap, and waits
 * for the pieces in progress: called before the memory it touches is
 * freed, or moves.
 */
extern void prefault_cancel(void);

#endif							/* PREFAULT_H */
