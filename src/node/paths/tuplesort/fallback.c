/*-------------------------------------------------------------------------
 *
 * fallback.c
 *	  The GpuSort node's fallback to PostgreSQL's tuplesort, for inputs larger
 *	  than the memory budget and while gpusort.enabled is off: the tuplesort,
 *	  configured as the Sort node's would be (a Datum sort where Sort makes
 *	  one), the rows it takes and the rows it returns: the node's tuplesort
 *	  path (path.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/explain.h"
#include "executor/executor.h"
#include "utils/tuplesort.h"

#include "compat.h"
#include "node/collect/memory.h"
#include "node/node_state.h"
#include "node/paths/path.h"
#include "node/rows/row_store.h"
#include "settings.h"

/* The tuplesort path's state. */
typedef struct TuplesortPathState
{
	Tuplesortstate *tuplesort;	/* NULL once it ended */
	bool		datums;			/* it sorts Datums, as Sort would */
	const char *choice;			/* why it ran: chosen, */
	const char *reason;			/* or fallen back to */
} TuplesortPathState;

/*
 * Starts a tuplesort configured as the Sort node's would be, within
 * GpuSort's memory budget.
 */
static Tuplesortstate *
begin_tuplesort(GpuSortState *state)
{
	int			sortopt = state->random_access ? TUPLESORT_RANDOMACCESS : TUPLESORT_NONE;

	if (state->fallback == NULL)
		state->fallback = palloc0(sizeof(TuplesortPathState));
	state->fallback->datums = compat_sort_datums(state->indesc);
	if (state->fallback->datums)
		return tuplesort_begin_datum(TupleDescAttr(state->indesc, 0)->atttypid,
									 state->sortops[0], state->collations[0],
									 state->nullsfirst[0], node_budget_kb(state),
									 NULL, sortopt);
	return tie_order_tuplesort(&state->ties, node_budget_kb(state), sortopt);
}

/* Hands the slot's row to tuplesort: its one value, or the row. */
static void
put_row(GpuSortState *state, TupleTableSlot *slot)
{
	if (state->fallback->datums)
	{
		slot_getsomeattrs(slot, 1);
		tuplesort_putdatum(state->fallback->tuplesort, slot->tts_values[0], slot->tts_isnull[0]);
	}
	else
		tuplesort_puttupleslot(state->fallback->tuplesort, slot);
}

/* Hands a row of the row store to tuplesort (row_store_drain). */
static void
put_stored_row(MinimalTuple tuple, int64 keyrow, void *arg)
{
	GpuSortState *state = arg;
	TupleTableSlot *slot = state->css.ss.ss_ScanTupleSlot;

	put_row(state, tuple ? ExecStoreMinimalTuple(tuple, slot, false) :
			store_key_row(state, slot, keyrow));
}

/*
 * Takes the input over: the rows collected so far and the pending slot (if
 * not NULL) go to tuplesort, which takes the rest as the input comes.  The
 * row store frees its memory as its rows move to tuplesort, so that the two
 * stay within about one budget.  Why, for EXPLAIN ANALYZE: a choice
 * (gpusort.enabled is off), or a fallback (the memory budget); the other is
 * NULL.
 */
void
node_tuplesort_begin(GpuSortState *state, TupleTableSlot *pending,
					 const char *choice, const char *fallback_reason)
{
	RowStore   *store = &state->store;
	Tuplesortstate *tuplesort = begin_tuplesort(state);	/* (makes fallback) */

	state->fallback->tuplesort = tuplesort;
	state->fallback->choice = choice;
	state->fallback->reason = fallback_reason;
	state->memory_used = Max(state->memory_used, row_store_memory(store));
	row_store_drain(store, put_stored_row, state);
	ExecClearTuple(state->css.ss.ss_ScanTupleSlot);
	state->path = &node_tuplesort_path;
	if (!TupIsNull(pending))
		put_row(state, pending);
}

/* The input ended: tuplesort sorts it. */
static void
tuplesort_finish(GpuSortState *state)
{
	instr_time	sort_start;

	state->collect_ms = ms_since(state->collect_start);
	INSTR_TIME_SET_CURRENT(sort_start);
	tuplesort_performsort(state->fallback->tuplesort);
	state->sort_ms = ms_since(sort_start);
	state->ran = state->path;
}

/* The next (or previous) row that tuplesort returns, in slot. */
static TupleTableSlot *
tuplesort_next(GpuSortState *state, bool forward, TupleTableSlot *slot)
{
	if (state->fallback->datums)
	{
		ExecClearTuple(slot);
		if (compat_tuplesort_getdatum(state->fallback->tuplesort, forward,
									  &slot->tts_values[0], &slot->tts_isnull[0]))
			ExecStoreVirtualTuple(slot);
		return slot;
	}
	if (!state->keys_only)
	{
		(void) tuplesort_gettupleslot(state->fallback->tuplesort, forward, false, slot, NULL);
		return slot;
	}
	/* our slot is virtual: copy tuplesort's MinimalTuple into it */
	if (tuplesort_gettupleslot(state->fallback->tuplesort, forward, false, state->sort_slot, NULL))
		return ExecCopySlot(slot, state->sort_slot);
	return ExecClearTuple(slot);
}

static void
tuplesort_mark(GpuSortState *state)
{
	tuplesort_markpos(state->fallback->tuplesort);
}

static void
tuplesort_restore(GpuSortState *state)
{
	tuplesort_restorepos(state->fallback->tuplesort);
}

/* A tuplesort that was not made for random access cannot go back. */
static bool
tuplesort_back_to_start(GpuSortState *state)
{
	if (!state->random_access)
		return false;
	tuplesort_rescan(state->fallback->tuplesort);
	return true;
}

static void
tuplesort_forget(GpuSortState *state)
{
	if (state->fallback->tuplesort)
		tuplesort_end(state->fallback->tuplesort);
	state->fallback->tuplesort = NULL;
}

static const char *
tuplesort_engine_shown(GpuSortState *state)
{
	return "tuplesort";
}

static const char *
tuplesort_method_shown(GpuSortState *state)
{
	TuplesortInstrumentation stats;

	if (state->fallback->tuplesort == NULL)
		return "tuplesort";
	tuplesort_get_stats(state->fallback->tuplesort, &stats);
	return tuplesort_method_name(stats.sortMethod);
}

/* Why tuplesort sorted, and what Sort shows of it. */
static void
tuplesort_explain(GpuSortState *state, ExplainState *es)
{
	TuplesortInstrumentation stats;

	ExplainPropertyText("Sort Engine", "tuplesort", es);
	if (state->fallback->choice)
		ExplainPropertyText("Engine Choice", state->fallback->choice, es);
	if (state->fallback->reason)
		ExplainPropertyText("Fallback Reason", state->fallback->reason, es);
	if (state->fallback->tuplesort == NULL)
		return;
	tuplesort_get_stats(state->fallback->tuplesort, &stats);
	ExplainPropertyText("Sort Method", tuplesort_method_name(stats.sortMethod), es);
	ExplainPropertyInteger("Sort Space Used", "kB", stats.spaceUsed, es);
	ExplainPropertyText("Sort Space Type", tuplesort_space_type_name(stats.spaceType), es);
}

/* (tuplesort's own times are not kept apart from the sort's) */
static void
tuplesort_explain_times(GpuSortState *state, ExplainState *es)
{
}

const NodePath node_tuplesort_path = {
	.name = "tuplesort",
	.add = put_row,
	.finish = tuplesort_finish,
	.next = tuplesort_next,
	.mark = tuplesort_mark,
	.restore = tuplesort_restore,
	.rescan = tuplesort_back_to_start,
	.end = tuplesort_forget,
	.engine_shown = tuplesort_engine_shown,
	.method_shown = tuplesort_method_shown,
	.explain = tuplesort_explain,
	.explain_times = tuplesort_explain_times,
};
