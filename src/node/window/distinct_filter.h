/*-------------------------------------------------------------------------
 *
 * distinct_filter.h
 *	  The first row of each group that a Unique above keeps, and no other,
 *	  returned by the GpuSort node (distinct_filter.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_NODE_DISTINCT_FILTER_H
#define GPUSORT_NODE_DISTINCT_FILTER_H

#include "nodes/execnodes.h"

typedef struct DistinctFilter DistinctFilter;

/*
 * A filter of rows described by desc, by the Unique's columns (columns: as
 * gpusort_distinct_columns gives them), in the node's context.
 */
extern DistinctFilter *distinct_filter_begin(PlanState *node, TupleDesc desc,
											 List *columns);

/* Is the row the first of its group (the filter then keeps a copy)? */
extern bool distinct_filter_first(DistinctFilter *f, TupleTableSlot *row);

/*
 * How many of the node's leading sort keys (attribute numbers of the rows
 * it returns, and ordering operators) are the Unique's columns, each
 * compared by its sort key's equality: rows that those keys order as
 * equal are then one group of the Unique's.  0 where they are not.
 */
extern int	distinct_filter_leading_keys(const DistinctFilter *f, int nkeys,
										 const AttrNumber *attnos, const Oid *sortops);

/* Forgets the last group (a rescan). */
extern void distinct_filter_reset(DistinctFilter *f);

/* Rows that were not the first of their group (EXPLAIN ANALYZE). */
extern int64 distinct_filter_dropped(const DistinctFilter *f);

#endif							/* GPUSORT_NODE_DISTINCT_FILTER_H */
