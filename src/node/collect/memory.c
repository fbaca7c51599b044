/*-------------------------------------------------------------------------
 *
 * memory.c
 *	  A GpuSort node's memory budget (memory.h): whether the input the
 *	  planner expects will exceed it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "node/collect/memory.h"

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
