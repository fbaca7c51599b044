/*-------------------------------------------------------------------------
 *
 * big_array.h
 *	  Large arrays that grow by remapping their pages, never by copying.
 *
 * The row store's per-row arrays grow with its input, doubling from a small
 * start, since the planner's estimate of the input may be far off.  Grown
 * with repalloc, each doubling copies the array into fresh memory (glibc
 * copies chunks below its mmap threshold, which rises to 32 MB) and faults
 * that memory in on the backend: 11% of a 10M-row sort on the GPU host.
 * These arrays are anonymous mappings instead, resized with mremap(), which
 * moves page tables, not data.  A memory context owns each one: it is
 * unmapped when the context is reset or deleted, on error too.  So are the
 * row store's blocks of tuples, whose pages a helper thread frees after the
 * sort, while the backend goes on.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BIG_ARRAY_H
#define BIG_ARRAY_H

#include "postgres.h"

typedef struct BigArray
{
	char	   *data;			/* may move at each resize; NULL once freed */
	Size		bytes;			/* mapped, a multiple of the page size */
	Size		discarded;		/* bytes at its start given back
								 * (big_array_discard) */
	MemoryContextCallback unmap;	/* when the owning context goes */
} BigArray;

/* A zeroed array of at least bytes bytes, owned by cxt. */
extern BigArray *big_array_create(MemoryContext cxt, Size bytes);

/* Grows or shrinks the array to at least bytes bytes, keeping its contents. */
extern void big_array_resize(BigArray *array, Size bytes);

/* The bytes that an array of at least bytes bytes maps. */
extern Size big_array_bytes(Size bytes);

/*
 * Frees the array: its mapping is kept for the next array of its size
 * (big_array.c), or unmapped, now or, if it is large, soon on a helper
 * thread (prefault_unmap); its handle stays, with data NULL.
 */
extern void big_array_free(BigArray *array);

/*
 * Frees the array and unmaps it now, keeping nothing for reuse and leaving
 * nothing to a helper thread: for memory that another structure is about
 * to take in its place.
 */
extern void big_array_unmap(BigArray *array);

/*
 * Gives the kernel back the whole pages of the array's first upto bytes,
 * which nothing will read again; the array stays mapped, its size as it was.
 */
extern void big_array_discard(BigArray *array, Size upto);

/* Unmaps the mappings that freed arrays left for reuse. */
extern void big_array_release_kept(void);

#endif							/* BIG_ARRAY_H */
