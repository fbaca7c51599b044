/*-------------------------------------------------------------------------
 *
 * memory_path.c
 *	  The in-memory path of the GpuSort node, the one it begins with: every
 *	  row in the row store, sorted by an engine and the comparators
 *	  (sort_rows.c), returned by its place in the order: through the gather
 *	  ring going forward (emit_ring.h), from the sorted array otherwise, or
 *	  decoded from its key where the row is nothing but its key.  A store
 *	  that outgrows the memory budget hands the input on to the runs path or
 *	  to tuplesort.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/tuptable.h"

#include "node/node_state.h"
#include "node/paths/memory/emit_ring.h"
#include "node/paths/path.h"
#include "util/cacheline.h"

/* How far ahead the emit phase prefetches the tuples it will return. */
#define PREFETCH_DISTANCE	32

const char *
node_tuplesort_first(GpuSortState *state)
{
	if (!state->settings.enabled)
		return "gpusort.enabled = off";
	return state->settings.spill ? node_tuplesort_planned(state) : NULL;
}

/* The input goes to tuplesort before any row where node_tuplesort_first says. */
static void
memory_begin(GpuSortState *state)
{
	const char *choice = node_tuplesort_first(state);

	if (choice != NULL)
		node_tuplesort_begin(state, NULL, choice, NULL);
}

/*
 * The store is full for the first time: the input goes out of core (the
 * runs path), or to tuplesort where that pays better or gpusort.spill is
 * off.
 */
static void
memory_full(GpuSortState *state, TupleTableSlot *slot)
{
	const char *choice;

	if (!state->settings.spill)
		node_tuplesort_begin(state, slot, NULL, "memory budget exceeded");
	else if ((choice = node_runs_begin(state)) != NULL)
		node_tuplesort_begin(state, slot, choice, NULL);
	else
		state->path->full(state, slot);
}

/* Sorts every row of the input, which the store holds. */
static void
memory_finish(GpuSortState *state)
{
	RowStore   *store = &state->store;
	instr_time	sort_start;

	if (node_runs_take_shared(state))
	{
		state->path->finish(state);
		return;
	}
	state->ntotal = (int64) store->nrows + store->nnullrows;
	state->wide_rows = store->tupledata > (Size) GPUSORT_CACHE_LINE * state->ntotal;
	state->collect_ms = ms_since(state->collect_start);

	INSTR_TIME_SET_CURRENT(sort_start);
	node_sort_rows(state, state->ntotal < state->settings.min_rows, false);
	state->sort_ms = ms_since(sort_start);

	state->memory_used = Max(state->memory_used, row_store_memory(store));
	state->ran = state->path;
	state->current = -1;
	node_start_ring(state);
}

static TupleTableSlot *
memory_next(GpuSortState *state, bool forward, TupleTableSlot *slot)
{
	int64		ahead;

	if (forward)
		state->current = Min(state->current + 1, state->ntotal);
	else
		state->current = Max(state->current - 1, -1);
	if (state->current < 0 || state->current >= state->ntotal)
		return ExecClearTuple(slot);
	if (state->ring && forward)
	{
		ExecStoreMinimalTuple(node_ring_row(state, state->current), slot, false);
		return slot;
	}

	ahead = state->current + PREFETCH_DISTANCE;
	if (state->keys_only)
	{
		if (forward && ahead < state->ntotal && (ahead = sorted_row(state, ahead)) >= 0)
			__builtin_prefetch(&state->store.columns[0].keys[ahead]);
		return store_key_row(state, slot, Max(sorted_row(state, state->current), -1));
	}

	/*
	 * The rows lie in memory in input order, so reading them in sorted order
	 * misses the caches at every row.  Going forward, fetch ahead (the first
	 * line, and the second if rows are wide), so that independent misses
	 * overlap instead of stalling one after another.  (This stays here: GCC
	 * drops calls to a function whose only effect is a prefetch.)
	 */
	if (forward && ahead < state->ntotal)
	{
		__builtin_prefetch(state->sorted[ahead]);
		if (state->wide_rows)
			__builtin_prefetch((char *) state->sorted[ahead] + GPUSORT_CACHE_LINE);
	}
	ExecStoreMinimalTuple(state->sorted[state->current], slot, false);
	return slot;
}

static void
memory_mark(GpuSortState *state)
{
	state->marked = state->current;
}

static void
memory_restore(GpuSortState *state)
{
	state->current = state->marked;
}

static bool
memory_rescan(GpuSortState *state)
{
	state->current = -1;
	state->ring = NULL;			/* its first chunks are gone */
	return true;
}

static void
memory_end(GpuSortState *state)
{
	state->perm = NULL;
	state->sorted = NULL;
	state->ring = NULL;
}

static const char *
memory_engine_shown(GpuSortState *state)
{
	return sort_engine_name(state->report.engine);
}

static const char *
memory_method_shown(GpuSortState *state)
{
	return "in memory";
}

static void
memory_explain(GpuSortState *state, ExplainState *es)
{
	/* (the rows led by a NULL were ordered by the comparators too) */
	node_path_explain_engine(state, es, true, true, state->store.nnullrows);
}

static void
memory_explain_times(GpuSortState *state, ExplainState *es)
{
	ExplainPropertyFloat("Emit Time", "ms", state->emit_ms, 3, es);
}

const NodePath node_memory_path = {
	.name = "in memory",
	.begin = memory_begin,
	.add = node_store_add,
	.full = memory_full,
	.finish = memory_finish,
	.next = memory_next,
	.mark = memory_mark,
	.restore = memory_restore,
	.rescan = memory_rescan,
	.end = memory_end,
	.engine_shown = memory_engine_shown,
	.method_shown = memory_method_shown,
	.explain = memory_explain,
	.explain_times = memory_explain_times,
};
