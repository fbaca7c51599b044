/*-------------------------------------------------------------------------
 *
 * runs_path.c
 *	  The sorted runs path of the GpuSort node: an input larger than the
 *	  memory budget, held by the engine that holds rows (spill_stage.c,
 *	  shared by a parallel query's participants in shared_stage.c) or
 *	  sorted in runs on temporary files (spill.c), returned in order: read
 *	  back from the engine, merged as the rows are returned, or from the
 *	  tuplestore of the merged rows where the plan goes back.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "commands/explain.h"
#include "executor/tuptable.h"
#include "utils/tuplestore.h"

#include "engine/engine.h"
#include "node/node_state.h"
#include "node/paths/path.h"
#include "node/paths/runs/runs.h"
#include "node/paths/runs/share.h"

/*
 * The next (or previous) row in order: from the merged rows where the plan
 * goes back, else from the merge or the engine; none in a worker that
 * handed its rows to the leader.
 */
static TupleTableSlot *
runs_next(GpuSortState *state, bool forward, TupleTableSlot *slot)
{
	if (state->spill->merged)
	{
		TupleTableSlot *into = state->keys_only ? state->sort_slot : slot;

		if (!tuplestore_gettupleslot(state->spill->merged, forward, false, into))
			return ExecClearTuple(slot);
		/* our slot is virtual: copy the row into it */
		if (state->keys_only)
			return ExecCopySlot(slot, into);
	}
	else if (state->parallel->rest_handed ||
			 !node_spill_next_in_order(state, slot, &state->group_first))
		return ExecClearTuple(slot);
	return slot;
}

/* A mark and a restore: the merged rows' second read pointer. */
static void
runs_mark(GpuSortState *state)
{
	if (state->spill->merged)
		tuplestore_copy_read_pointer(state->spill->merged, 0, 1);
}

static void
runs_restore(GpuSortState *state)
{
	if (state->spill->merged)
		tuplestore_copy_read_pointer(state->spill->merged, 1, 0);
}

/* Only the merged rows go back to the first; a merge is read once. */
static bool
runs_rescan(GpuSortState *state)
{
	if (state->parallel->rest_handed)
		return true;			/* none to read */
	if (!state->random_access)
		return false;
	tuplestore_rescan(state->spill->merged);
	return true;
}

/* Forgets the runs, the rows the engine holds and the merged rows. */
static void
runs_end(GpuSortState *state)
{
	if (state->spill->merged)
		tuplestore_end(state->spill->merged);
	state->spill->merged = NULL;
	sorted_runs_end(&state->spill->runs);
	node_stage_end(state);
	state->spill->spilling = false;
	state->spill->spilled_rows = 0;
	state->spill->spilled_tied_rows = 0;
	state->spill->staged_batches = 0;
	state->spill->staged_rows = 0;
	state->spill->run_dropped = 0;
}

/*
 * The engine beside the CPU's that sorted the rows (its runs, or all of
 * them, held), or the CPU engine.
 */
static SortEngineId
runs_engine(GpuSortState *state)
{
	if (state->spill->staged_batches > 0)
		return state->report.engine;
	return state->spill->offloaded_runs > 0 ? sort_report_offload(&state->report) :
		SORT_ENGINE_CPU;
}

static const char *
runs_engine_shown(GpuSortState *state)
{
	if (runs_engine(state) != SORT_ENGINE_CPU)
		return sort_engine_name(runs_engine(state));
	return sort_engine_name(state->report.engine);
}

/* How the rows were sorted: held, shared, handed over, or in runs. */
static const char *
runs_method_shown(GpuSortState *state)
{
	const char *title;

	if (state->parallel->rest_handed)
		return "refused midway: handed to the leader";
	if (state->spill->staged_batches == 0)
		return "external merge of sorted runs";
	title = sort_engine_get(runs_engine(state))->title;
	if (!node_share_active(state))
		return psprintf("rows held on the %s, sorted at once", title);
	if (node_is_slices(state) && !node_leader_returns_all(state))
		return IsParallelWorker() ?
			psprintf("held by the leader on the %s, read in slices", title) :
			psprintf("rows of all participants held on the %s, sorted at once, read back in slices by each", title);
	return IsParallelWorker() ?
		psprintf("rows handed to the leader, held on the %s", title) :
		psprintf("rows of all participants held on the %s, sorted at once", title);
}

/* The engine that would have held the rows over the budget, as titles name it. */
static const char *
would_hold_title(GpuSortState *state)
{
	char	   *why;
	const SortEngine *holder = sort_engine_holder(state->settings.device, &why);

	return holder ? holder->title : "an Engine";
}

/*
 * Held on the engine that holds rows (the GPU), in batches, with the disk
 * that the tuplesorts of its tied groups over the budget and of its rows
 * led by a NULL took, if any; or in sorted runs, with why that engine did
 * not hold it, how many runs another engine than the CPU's sorted, the
 * disk they took (as Sort shows an external sort's), and the runs merged
 * into one before the rows were returned.
 */
static void
runs_explain(GpuSortState *state, ExplainState *es)
{
	int64		disk_kb;

	node_path_explain_engine(state, es, runs_engine(state) == SORT_ENGINE_CPU,
							 state->spill->staged_batches == 0, 0);
	ExplainPropertyText("Sort Method", runs_method_shown(state), es);
	if (state->spill->staged_batches > 0)
	{
		ExplainPropertyInteger(psprintf("Batches Held on %s",
										sort_engine_get(runs_engine(state))->title),
							   NULL, state->spill->staged_batches, es);
		ExplainPropertyInteger("Held Key Width", "bytes",
							   state->spill->held_words * sizeof(uint64), es);
		if (state->spill->group_words > 0)
			ExplainPropertyInteger(psprintf("Rows Dropped on %s",
											sort_engine_get(runs_engine(state))->title),
								   NULL, state->spill->staged_rows - state->spill->held_kept, es);
		disk_kb = state->spill->held_disk_kb + (state->spill->stage_nulls ?
										 tie_order_tuplesort_disk_kb(state->spill->stage_nulls) : 0);
		if (disk_kb > 0)
			ExplainPropertyInteger("Disk Used", "kB", disk_kb, es);
		return;
	}
	if (state->spill->stage_why)
		ExplainPropertyText(psprintf("Not Held on %s", would_hold_title(state)),
							state->spill->stage_why, es);
	ExplainPropertyInteger("Sorted Runs", NULL, state->spill->runs.runs_written, es);
	if (state->spill->run_dropped > 0)
		ExplainPropertyInteger("Rows Dropped from Runs", NULL, state->spill->run_dropped, es);
	ExplainPropertyInteger("Merge Key Columns", NULL, state->spill->runs.ncolumns, es);
	if (state->spill->runs.memory_run)
		ExplainPropertyText("Last Run", "in memory", es);
	if (state->spill->offloaded_runs > 0)
		ExplainPropertyInteger(psprintf("Runs Sorted on %s",
										sort_engine_get(runs_engine(state))->title),
							   NULL, state->spill->offloaded_runs, es);
	if (state->spill->runs.early_merges > 0)
		ExplainPropertyInteger("Runs Merged Early", NULL, state->spill->runs.early_merges, es);
	ExplainPropertyInteger("Disk Used", "kB",
						   state->spill->runs.disk_blocks * (BLCKSZ / 1024), es);
}

/* Writing and merging the runs; what the engine that held rows took. */
static void
runs_explain_times(GpuSortState *state, ExplainState *es)
{
	ExplainPropertyFloat("Spill Time", "ms", state->spill->spill_ms, 3, es);
	ExplainPropertyFloat("Merge Time", "ms", state->spill->merge_ms, 3, es);
	if (state->spill->staged_batches > 0)
	{
		ExplainPropertyFloat("Hold Time", "ms", state->spill->hold_ms, 3, es);
		ExplainPropertyFloat("Read Back Time", "ms", state->spill->read_back_ms, 3, es);
	}
	ExplainPropertyFloat("Emit Time", "ms", state->emit_ms, 3, es);
}

/*
 * The input ended: the engine sorts the rows it holds, or the last run is
 * sorted and the merge readied (spill.c).
 */
static void
runs_finish(GpuSortState *state)
{
	node_spill_finish(state);
	/* (the runs' sorts and writes are not the collect's) */
	state->collect_ms = ms_since(state->collect_start) - state->sort_ms -
		node_spill_ms(state);
}

const NodePath node_runs_path = {
	.name = "sorted runs",
	.add = node_store_add,
	.full = node_spill_refused,
	.finish = runs_finish,
	.next = runs_next,
	.mark = runs_mark,
	.restore = runs_restore,
	.rescan = runs_rescan,
	.end = runs_end,
	.engine_shown = runs_engine_shown,
	.method_shown = runs_method_shown,
	.explain = runs_explain,
	.explain_times = runs_explain_times,
};
