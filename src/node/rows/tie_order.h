/*-------------------------------------------------------------------------
 *
 * tie_order.h
 *	  Ordering rows that the engine's keys leave tied, by the remaining
 *	  sort keys, with PostgreSQL's own comparators.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TIE_ORDER_H
#define TIE_ORDER_H

#include "postgres.h"

#include "access/htup_details.h"
#include "utils/sortsupport.h"
#include "utils/tuplesort.h"

typedef struct TiedRow TiedRow;

typedef struct TieOrder
{
	TupleDesc	desc;			/* of the rows */
	int			nkeys;			/* all sort keys of the node */
	const AttrNumber *attnos;
	SortSupport ssups;			/* their comparators */
	const Oid  *sortops;
	const Oid  *collations;
	const bool *nullsfirst;
	MemoryContext cxt;			/* for the comparators prepared below */

	/*
	 * The comparator of each key as the first one that ties are ordered by:
	 * on abbreviated keys where its type has them (as tuplesort does),
	 * prepared when first used.
	 */
	SortSupport leads;
	bool	   *lead_ready;
	int64	   *abbrev_count;	/* keys abbreviated so far, per key */
	int64	   *abbrev_next;	/* when to ask whether abbreviation pays */

	TiedRow    *entries;		/* scratch of the current group */
	uint32		capacity;
} TieOrder;

extern void tie_order_init(TieOrder *order, TupleDesc desc, int nkeys,
						   const AttrNumber *attnos, SortSupport ssups,
						   const Oid *sortops, const Oid *collations,
						   const bool *nullsfirst);

/*
 * Sorts rows[index[0..n-1]] by the sort keys from firstkey on, rewriting
 * index in that order.  With index NULL, sorts rows[0..n-1] themselves.
 * Checks for interrupts throughout.  Scratch memory comes from cxt.
 */
extern void tie_order_sort(TieOrder *order, MinimalTuple *rows, uint32 *index,
						   uint32 n, int firstkey, MemoryContext cxt);

/* Compares two rows by the sort keys from firstkey on, as Sort would. */
extern int	tie_order_compare(TieOrder *order, MinimalTuple a, MinimalTuple b,
							  int firstkey);

/* The same, by the sort keys from firstkey up to endkey (not included). */
extern int	tie_order_compare_keys(TieOrder *order, MinimalTuple a, MinimalTuple b,
								   int firstkey, int endkey);

/*
 * A tuplesort that orders rows by all the sort keys, as the Sort node's
 * would, within work_mem_kb; sortopt as tuplesort_begin_heap takes it.
 */
extern Tuplesortstate *tie_order_tuplesort(const TieOrder *order, int work_mem_kb,
										   int sortopt);

/* Ends such a sort; returns the kB it wrote to disk (0 if it stayed in memory). */
extern int64 tie_order_tuplesort_end(Tuplesortstate *sort);

/* The kB a sort that has not ended wrote to disk so far (0 in memory). */
extern int64 tie_order_tuplesort_disk_kb(Tuplesortstate *sort);

/* Frees the scratch memory of the sorts, once all are done. */
extern void tie_order_done(TieOrder *order);

#endif							/* TIE_ORDER_H */
