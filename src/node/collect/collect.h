/*-------------------------------------------------------------------------
 *
 * collect.h
 *	  What the GpuSort node reads its input through: the input node, or the
 *	  table's pages read by the node itself (heap_input.c), either past the
 *	  top N filter where it has one (top_n_filter.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_NODE_COLLECT_H
#define GPUSORT_NODE_COLLECT_H

#include "node/node_state.h"

/*
 * top_n_filter.c: the next row of the node's input, through its top N
 * filter where it has one.
 */
extern TupleTableSlot *node_input_next(GpuSortState *state);


/* heap_input.c */
typedef struct HeapInput HeapInput;
extern HeapInput *heap_input_begin(PlanState *outer, bool filtered);
extern TupleTableSlot *heap_input_fill(HeapInput *input, RowStore *store,
									   struct TopNFilter *filter);

#endif							/* GPUSORT_NODE_COLLECT_H */
