/*-------------------------------------------------------------------------
 *
 * memory.c
 *	  A GpuSort node's memory budget (memory.h): the parts its consumers
 *	  take, and whether the input the planner expects will exceed it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/block.h"
#include "miscadmin.h"

#include "node/collect/memory.h"

Size
node_memory_part(const GpuSortState *state, NodeMemoryPart part)
{
	Size		budget = node_budget(state);

	switch (part)
	{
		case MEMORY_RUN_WINDOW:
			/* a sixteenth, for runs written a block at a time */
			return Max(budget / 16, 8 * BLCKSZ);
		case MEMORY_MERGE_BUFFERS:
			/* all but a tenth, which the merge's heap and rows take */
			return budget * 9 / 10;
		case MEMORY_LAST_RUN_BUFFERS:
			return budget / 10;
		case MEMORY_TIED_BATCH:
			/* half: the batch's rows and their copies being ordered */
			return budget / 2;
		case MEMORY_TOP_N:
			/* what PostgreSQL's hash tables may take */
			return (Size) Min((double) budget * hash_mem_multiplier,
							  (double) MaxAllocHugeSize);
	}
	pg_unreachable();
}

bool
node_expected_over_budget(GpuSortState *state, double *bytes)
{
	Plan	   *plan = state->css.ss.ps.plan;
	double		expected = row_store_expected_bytes(&state->store, plan->plan_rows,
													plan->plan_width);

	if (bytes)
		*bytes = expected;
	return expected > (double) node_budget(state);
}
