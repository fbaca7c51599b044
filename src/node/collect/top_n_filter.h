/*-------------------------------------------------------------------------
 *
 * top_n_filter.h
 *	  Rows that cannot be among the top N of their partition, dropped as a
 *	  GpuSort reads its input, for row_number() or rank() under a run condition
 *	  (top_n_filter.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef TOP_N_FILTER_H
#define TOP_N_FILTER_H

#include "postgres.h"

#include "nodes/execnodes.h"
#include "nodes/plannodes.h"

typedef struct TopNFilter TopNFilter;
struct GpuSortState;

/*
 * The filter of a node that computes funcs (all row_number(), or all
 * rank()) under the clause's run condition "rn <= N", over a sorted row of
 * nsorted columns, with the node's budget times hash_mem_multiplier;
 * NULL where it does not apply.
 */
extern TopNFilter *top_n_filter_begin(struct GpuSortState *state, WindowAgg *clause,
									  List *funcs, int nsorted);

/*
 * The filter of a node under a Unique whose columns are its leading sort
 * keys (distinct_keys), with exact keys: the rows after the best so far of
 * the group of the rows just before are dropped; NULL where it does not
 * apply.
 */
extern TopNFilter *top_n_filter_begin_distinct(struct GpuSortState *state);

/* Is it that filter (else a run condition's)? */
extern bool top_n_filter_is_distinct(const TopNFilter *filter);

/*
 * Does the filter keep the row: among the first N of its partition so far,
 * or one it cannot judge (a NULL sort key, a partition it has no room
 * for)?  Those it drops are counted.
 */
extern bool top_n_filter_keeps(TopNFilter *filter, TupleTableSlot *slot);

/* Forgets the rows kept, for a new read of the input. */
extern void top_n_filter_reset(TopNFilter *filter);

/* Lets the filter's memory go. */
extern void top_n_filter_end(TopNFilter *filter);

/* Rows dropped so far, and the memory the filter holds. */
extern int64 top_n_filter_dropped(const TopNFilter *filter);
extern Size top_n_filter_memory(const TopNFilter *filter);

#endif							/* TOP_N_FILTER_H */
