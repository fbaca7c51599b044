/*-------------------------------------------------------------------------
 *
 * prefault.h
 *	  Mapping fresh memory ahead of its first use, on other cores.
 *
 * The first write to each page of fresh memory costs a page fault in which
 * the kernel zeroes the page: about 0.35 s per GB on one core of the hosts
 * measured, a third of a 10-million-row sort's time.  The sort's large
 * allocations are therefore handed to a few helper threads of the backend
 * (gpusort.prefault_threads) that map their pages, in 2 MB pieces, while the
 * backend goes on; it finds the pages mapped when it gets there.
 *
 * The threads only call madvise(MADV_POPULATE_WRITE), which maps pages
 * without reading or writing their contents, so they never race with the
 * backend's own writes, and memory freed meanwhile is simply skipped.  They
 * run no PostgreSQL code and receive no signals.
 *
 *-------------------------------------------------------------------------
 */
#ifndef PREFAULT_H
#define PREFAULT_H

#include "postgres.h"

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
 * Forgets the ranges still queued and waits for those being mapped: called
 * before queued memory is freed, so that no work is spent on it.
 */
extern void prefault_cancel(void);

#endif							/* PREFAULT_H */
