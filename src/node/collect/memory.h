/*-------------------------------------------------------------------------
 *
 * memory.h
 *	  A GpuSort node's memory budget, in one place and one unit: its bytes,
 *	  taken once as the node begins (gpusort.work_mem, or work_mem), and
 *	  the one judgement of whether the input the planner expects will
 *	  exceed it, which the executor's choices and EXPLAIN read alike.
 *
 * The row store charges its rows against the budget as they come
 * (row_store_add) and says when it lacks room; what takes memory beside it
 * (the sorted runs' buffers, their merge, the ties of held rows, a top N
 * filter, tuplesort) is given the budget, or its share of it, where it is
 * made.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_NODE_MEMORY_H
#define GPUSORT_NODE_MEMORY_H

#include "node/node_state.h"

/* The node's memory budget, in bytes. */
static inline Size
node_budget(const GpuSortState *state)
{
	return (Size) state->settings.budget_kb * 1024;
}

/*
 * Will the input the planner expects take the row store over the budget?
 * *bytes, where not NULL, gets what it is expected to take there.
 */
extern bool node_expected_over_budget(GpuSortState *state, double *bytes);

#endif							/* GPUSORT_NODE_MEMORY_H */
