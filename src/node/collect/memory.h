/*-------------------------------------------------------------------------
 *
 * memory.h
 *	  A GpuSort node's memory budget, in one place and one unit: its ledger
 *	  (GpuSortState.memory, rows/memory_ledger.h) of bytes, taken once as
 *	  the node begins (gpusort.work_mem, or work_mem), and the one
 *	  judgement of whether the input the planner expects will exceed it,
 *	  which the executor's choices and EXPLAIN read alike.
 *
 * The row store charges its rows and blocks to the ledger as they come
 * and releases them as it empties (row_store.c), and asks it whether the
 * next row fits; what takes memory beside the store or after it (the
 * sorted runs' buffers, their merge, the ties of held rows, a top N
 * filter, tuplesort and tuplestore) is given its part of the budget, each
 * part named here (NodeMemoryPart) and sized in memory.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_NODE_MEMORY_H
#define GPUSORT_NODE_MEMORY_H

#include "node/node_state.h"

/* Takes the node's budget, budget_kb, into its ledger. */
static inline void
node_memory_begin(GpuSortState *state, int budget_kb)
{
	memory_ledger_init(&state->memory, (Size) budget_kb * 1024);
}

/* The node's memory budget, in bytes. */
static inline Size
node_budget(const GpuSortState *state)
{
	return state->memory.budget;
}

/* The same in kB, as PostgreSQL's tuplesort and tuplestore take it. */
static inline int
node_budget_kb(const GpuSortState *state)
{
	return (int) (state->memory.budget / 1024);
}

/* The parts of the budget that the node's consumers take. */
typedef enum NodeMemoryPart
{
	MEMORY_RUN_WINDOW,			/* a sorted run's rows held back before they
								 * are written (sorted_runs.c) */
	MEMORY_MERGE_BUFFERS,		/* the read buffers of the runs merged at
								 * once */
	MEMORY_LAST_RUN_BUFFERS,	/* the runs' read buffers, for the last run
								 * to stay in memory beside them (spill.c) */
	MEMORY_TIED_BATCH,			/* a batch of held rows' tied groups ordered
								 * on threads (held_order.c) */
	MEMORY_TOP_N				/* a top N filter's table, beside the row
								 * store (top_n_filter.c) */
} NodeMemoryPart;

/* The bytes a part of the budget takes. */
extern Size node_memory_part(const GpuSortState *state, NodeMemoryPart part);

/*
 * Will the input the planner expects take the row store over the budget?
 * *bytes, where not NULL, gets what it is expected to take there.
 */
extern bool node_expected_over_budget(GpuSortState *state, double *bytes);

#endif							/* GPUSORT_NODE_MEMORY_H */
