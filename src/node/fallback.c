/*-------------------------------------------------------------------------
 *
 * fallback.c
 *	  The GpuSort node's fallback to PostgreSQL's tuplesort, for inputs larger
 *	  than the memory budget and while gpusort.enabled is off: the tuplesort,
 *	  configured as the Sort node's would be (a Datum sort where Sort makes
 *	  one), the rows it takes and the rows it returns.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "utils/tuplesort.h"

#include "compat.h"
#include "node/row_store.h"
#include "node/node_state.h"
#include "settings.h"

/*
 * Starts a tuplesort configured as the Sort node's would be, within
 * GpuSort's memory budget.
 */
static Tuplesortstate *
begin_tuplesort(GpuSortState *state)
{
	int			sortopt = state->random_access ? TUPLESORT_RANDOMACCESS : TUPLESORT_NONE;

	state->tuplesort_datums = compat_sort_datums(state->indesc);
	if (state->tuplesort_datums)
		return tuplesort_begin_datum(TupleDescAttr(state->indesc, 0)->atttypid,
									 state->sortops[0], state->collations[0],
									 state->nullsfirst[0], state->settings.budget_kb,
									 NULL, sortopt);
	return tie_order_tuplesort(&state->ties, state->settings.budget_kb, sortopt);
}

/* Hands the slot's row to tuplesort: its one value, or the row. */
static void
put_row(GpuSortState *state, TupleTableSlot *slot)
{
	if (state->tuplesort_datums)
	{
		slot_getsomeattrs(slot, 1);
		tuplesort_putdatum(state->tuplesort, slot->tts_values[0], slot->tts_isnull[0]);
	}
	else
		tuplesort_puttupleslot(state->tuplesort, slot);
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
 * Sorts with tuplesort: the rows collected so far, the pending slot (if not
 * NULL), and the rest of the input.  The row store frees its memory as its
 * rows move to tuplesort, so that the two stay within about one budget.
 * Why, for EXPLAIN ANALYZE: a choice (gpusort.enabled is off), or a
 * fallback (the memory budget); the other is NULL.
 */
void
node_sort_with_tuplesort(GpuSortState *state, TupleTableSlot *pending,
						 const char *choice, const char *fallback_reason,
						 instr_time start)
{
	RowStore   *store = &state->store;
	Tuplesortstate *tuplesort = begin_tuplesort(state);
	instr_time	sort_start;

	state->memory_used = Max(state->memory_used, row_store_memory(store));
	state->tuplesort = tuplesort;
	row_store_drain(store, put_stored_row, state);
	ExecClearTuple(state->css.ss.ss_ScanTupleSlot);

	if (!TupIsNull(pending))
	{
		put_row(state, pending);
		for (;;)
		{
			TupleTableSlot *next = node_input_next(state);

			if (TupIsNull(next))
				break;
			put_row(state, next);
		}
	}
	state->collect_ms = ms_since(start);

	INSTR_TIME_SET_CURRENT(sort_start);
	tuplesort_performsort(tuplesort);
	state->sort_ms = ms_since(sort_start);

	state->tuplesort_choice = choice;
	state->tuplesort_reason = fallback_reason;
	state->ran = RUN_TUPLESORT;
	state->phase = PHASE_TUPLESORT;
}

/* The next (or previous) row that tuplesort returns, in slot. */
TupleTableSlot *
node_tuplesort_next(GpuSortState *state, bool forward, TupleTableSlot *slot)
{
	if (state->tuplesort_datums)
	{
		ExecClearTuple(slot);
		if (compat_tuplesort_getdatum(state->tuplesort, forward,
									  &slot->tts_values[0], &slot->tts_isnull[0]))
			ExecStoreVirtualTuple(slot);
		return slot;
	}
	if (!state->keys_only)
	{
		(void) tuplesort_gettupleslot(state->tuplesort, forward, false, slot, NULL);
		return slot;
	}
	/* our slot is virtual: copy tuplesort's MinimalTuple into it */
	if (tuplesort_gettupleslot(state->tuplesort, forward, false, state->sort_slot, NULL))
		return ExecCopySlot(slot, state->sort_slot);
	return ExecClearTuple(slot);
}
