/*-------------------------------------------------------------------------
 *
 * sort_rows.c
 *	  Sorting the rows the GpuSort node collected: by the leading encoded
 *	  keys with a sort engine, then the rows those keys leave tied by the
 *	  remaining keys with PostgreSQL's comparators (tie_order.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "engine/engine.h"
#include "keys/row_store.h"
#include "node/node_state.h"
#include "node/tie_order.h"
#include "util/prefault.h"

/* Rows between interrupt checks in linear passes over the sorted rows. */
#define TIE_SCAN_CHUNK		(1 << 16)

/* Are two rows equal in the key columns that the engine sorted? */
static bool
radix_keys_equal(GpuSortState *state, uint32 a, uint32 b)
{
	for (int i = 0; i < state->radix_keys; i++)
		if (state->store.columns[i].keys[a] != state->store.columns[i].keys[b])
			return false;
	return true;
}

/*
 * Gives the NULLs of the key columns after the first a key in the
 * column's order, so that the engines can sort them, and returns how many
 * leading columns can be sorted so.  A column whose keys leave no room for
 * a NULL key ends the columns the engine sorts; comparators sort the rest.
 */
static int
place_key_nulls(GpuSortState *state)
{
	RowStore   *store = &state->store;

	for (int i = 1; i < store->ncolumns; i++)
	{
		KeyColumn  *column = &store->columns[i];
		bool		first = state->nullsfirst[column->keyno];
		uint64		nullkey;

		if (column->nulls == NULL)
			continue;
		if (column->min > column->max)
			nullkey = 0;		/* all NULL */
		else if (first ? column->min == 0 : column->max == PG_UINT64_MAX)
			return i;
		else
			nullkey = first ? column->min - 1 : column->max + 1;
		for (uint32 row = 0; row < store->nrows; row++)
			if (key_column_isnull(column, row))
				column->keys[row] = nullkey;
	}
	return store->ncolumns;
}

/*
 * Sorts the collected rows with a sort engine and the comparators.  An
 * input below gpusort.min_rows stays on the CPU engine: handing rows already
 * collected to tuplesort would cost more than sorting them here.
 */
void
node_sort_rows(GpuSortState *state, bool small)
{
	RowStore   *store = &state->store;
	const uint64 **keys;
	uint32	   *perm;
	MinimalTuple *sorted = NULL;
	MinimalTuple *sorted_rows = NULL;
	SortJob		job;

	state->radix_keys = place_key_nulls(state);
	/* prefix keys given up while the rows came (row_store.c) sort nothing */
	for (int i = 0; i < state->radix_keys; i++)
		if (store->columns[i].dropped)
			state->radix_keys = i;
	state->tied_rows = 0;
	/* the sort keys those columns order completely */
	if (state->radix_keys < store->ncolumns)
		state->engine_keys = store->columns[state->radix_keys].keyno;
	else if (store->columns[store->ncolumns - 1].prefix)
		state->engine_keys = store->columns[store->ncolumns - 1].keyno;
	else
		state->engine_keys = state->codec_keys;
	keys = palloc(sizeof(uint64 *) * state->radix_keys);
	for (int i = 0; i < state->radix_keys; i++)
		keys[i] = store->columns[i].keys;

	job.nrows = store->nrows;
	job.nkeys = state->radix_keys;
	job.keys = keys;
	job.payload = NULL;
	job.payload_sorted = false;
	job.upload = store->upload;
	if (!state->keys_only)
	{
		/*
		 * The tuple pointers in sorted order, NULL-led rows first or last.
		 * Unless comparators will reorder ties, the engine may order them
		 * along with the keys (the GPU does, where it is fast).
		 */
		sorted = prefault_alloc(store->cxt, sizeof(MinimalTuple) * Max(state->ntotal, 1));
		sorted_rows = sorted + (state->nullsfirst[0] ? store->nnullrows : 0);
		if (state->engine_keys == state->nkeys)
		{
			StaticAssertStmt(sizeof(MinimalTuple) == sizeof(uint64),
							 "tuple pointers travel as 64-bit words");
			job.payload = (const uint64 *) store->rows;
			job.payload_out = (uint64 *) sorted_rows;
		}
	}
	/* with a payload, only an engine that does not sort it needs perm */
	job.perm = (job.payload && !small) ? NULL :
		prefault_alloc(store->cxt, sizeof(uint32) * Max(store->nrows, 1));
	state->report.engine = SORT_ENGINE_CPU;
	state->report.fallback_reason = NULL;
	if (small)
		sort_job_run_on_cpu(&job, "input below gpusort.min_rows", &state->report);
	else if (state->radix_keys == 0)
		sort_job_run_on_cpu(&job, "the prefix keys do not tell the rows apart",
							&state->report);
	else if (store->nrows > 0)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(store->cxt);

		sort_job_run(&job, &state->report);
		MemoryContextSwitchTo(oldcxt);
	}
	row_store_end_upload(store);
	perm = job.perm;
	pfree(keys);

	/* Rows equal in the engine's keys are ordered by the remaining keys. */
	if (state->engine_keys < state->nkeys)
	{
		uint32		start = 0;

		for (uint32 i = 1; i <= store->nrows; i++)
		{
			if (i % TIE_SCAN_CHUNK == 0)
				CHECK_FOR_INTERRUPTS();
			if (i < store->nrows && radix_keys_equal(state, perm[start], perm[i]))
				continue;
			if (i - start > 1)
				state->tied_rows += i - start;
			tie_order_sort(&state->ties, store->rows, perm + start, i - start,
						   state->engine_keys, store->cxt);
			start = i;
		}
	}

	/* Rows whose leading key is NULL are ordered by the other keys. */
	tie_order_sort(&state->ties, store->nullrows, NULL, store->nnullrows, 1,
				   store->cxt);
	tie_order_done(&state->ties);

	if (state->keys_only)
	{
		state->perm = perm;
		return;
	}

	/*
	 * Put the rows in their final order, unless the engine did.  The loads
	 * of this loop are independent, so many cache misses overlap; the emit
	 * phase then reads the array in order.
	 */
	if (!job.payload_sorted)
		for (uint32 i = 0; i < store->nrows; i++)
		{
			if (i % TIE_SCAN_CHUNK == 0)
				CHECK_FOR_INTERRUPTS();
			sorted_rows[i] = store->rows[perm[i]];
		}
	if (store->nnullrows > 0)
		memcpy(state->nullsfirst[0] ? sorted : sorted + store->nrows,
			   store->nullrows, sizeof(MinimalTuple) * store->nnullrows);
	if (perm)
		pfree(perm);
	state->sorted = sorted;
}
