/*-------------------------------------------------------------------------
 *
 * runs.h
 *	  The sorted runs path's entry points: an input over the memory budget
 *	  sorted in runs on temporary files (spill.c) or held by the engine that
 *	  holds rows (spill_stage.c); the path's table is in path.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_NODE_RUNS_H
#define GPUSORT_NODE_RUNS_H

#include "node/node_state.h"

/* spill.c */
#define NODE_TUPLESORT_HOLDS \
	"the input is expected to fit in tuplesort's memory, not in the engine's"
#define NODE_TUPLESORT_XFRM_RUNS \
	"the input exceeds the memory budget, and runs of collation keys would merge by comparisons as tuplesort does"
#define NODE_TUPLESORT_BACKWARD \
	"the input exceeds the memory budget and the plan reads it backward"
extern const char *node_tuplesort_planned(GpuSortState *state);
extern const char *node_spill_begin(GpuSortState *state);
extern void node_spill_run(GpuSortState *state);
extern void node_spill_row(GpuSortState *state, TupleTableSlot *slot);
extern void node_spill_refused(GpuSortState *state, TupleTableSlot *slot);
extern void node_spill_finish(GpuSortState *state);
extern bool node_spill_next_in_order(GpuSortState *state, TupleTableSlot *into);

/* spill_stage.c */
extern bool node_stage_possible(GpuSortState *state);
extern void node_stage_plan_tails(GpuSortState *state);
extern bool node_stage_begin(GpuSortState *state);
extern bool node_stage_store(GpuSortState *state);
extern void node_stage_to_run(GpuSortState *state);
extern void node_stage_held_to_run(GpuSortState *state);
extern void node_stage_closed_to_run(GpuSortState *state);
extern void node_stage_finish(GpuSortState *state);
extern bool node_stage_next(GpuSortState *state, TupleTableSlot *into);
extern void node_stage_add_part_runs(GpuSortState *state);
extern void node_stage_seek(GpuSortState *state, int64 row);
extern void node_stage_end(GpuSortState *state);

#endif							/* GPUSORT_NODE_RUNS_H */
