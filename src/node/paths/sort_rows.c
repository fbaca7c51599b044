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
#include "keys/xfrm_keys.h"
#include "node/node_state.h"
#include "node/paths/path.h"
#include "node/rows/row_keys.h"
#include "node/rows/tie_order.h"
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
 * Orders each group of rows of perm that are equal in the first ncolumns
 * key columns by the sort keys from firstkey on; returns the rows in groups
 * of more than one.
 */
static int64
order_groups(GpuSortState *state, uint32 *perm, int ncolumns, int firstkey)
{
	RowStore   *store = &state->store;
	int			saved = state->radix_keys;
	uint32		start = 0;
	int64		grouped = 0;

	state->radix_keys = ncolumns;
	for (uint32 i = 1; i <= store->nrows; i++)
	{
		if (i % TIE_SCAN_CHUNK == 0)
			CHECK_FOR_INTERRUPTS();
		if (i < store->nrows && radix_keys_equal(state, perm[start], perm[i]))
			continue;
		if (i - start > 1)
			grouped += i - start;
		tie_order_sort(&state->ties, store->rows, perm + start, i - start,
					   firstkey, store->cxt);
		start = i;
	}
	state->radix_keys = saved;
	return grouped;
}

/*
 * Orders each group of the rows in sorted order that tie on their sorted
 * keys (one column) by the sort keys from firstkey on; returns the rows in
 * groups of more than one.  Reads both arrays in order, unlike
 * order_groups.
 */
static int64
order_sorted_groups(GpuSortState *state, MinimalTuple *sorted_rows,
					const uint64 *keys, uint32 nrows, int firstkey)
{
	uint32		start = 0;
	int64		grouped = 0;

	for (uint32 i = 1; i <= nrows; i++)
	{
		if (i % TIE_SCAN_CHUNK == 0)
			CHECK_FOR_INTERRUPTS();
		if (i < nrows && keys[i] == keys[start])
			continue;
		if (i - start > 1)
		{
			grouped += i - start;
			tie_order_sort(&state->ties, sorted_rows + start, NULL, i - start,
						   firstkey, state->store.cxt);
		}
		start = i;
	}
	return grouped;
}

/*
 * The engine sorted strxfrm() keys (column j): check the order they gave
 * with strcoll(), confirm what it finds out of order with PostgreSQL's
 * comparator, and if anything is, order the rows that the columns before j
 * leave tied by the comparators alone (xfrm_keys.h).
 */
static void
check_xfrm_order(GpuSortState *state, uint32 *perm, int j, const uint64 *refs)
{
	RowStore   *store = &state->store;
	KeyColumn  *column = &store->columns[j];
	uint32		found[1024];
	uint32		nfound;
	uint64		suspects;

	suspects = xfrm_suspect_pairs(store->columns, j, refs, perm, store->nrows,
								  found, lengthof(found), &nfound);
	state->xfrm_inversions = 0;
	if (suspects > nfound)
		state->xfrm_inversions = suspects;	/* too many to confirm one by one */
	else
		for (uint32 k = 0; k < nfound; k++)
		{
			uint32		i = found[k];

			if (tie_order_compare(&state->ties, store->rows[perm[i - 1]],
								  store->rows[perm[i]], column->keyno) > 0)
				state->xfrm_inversions++;
		}
	if (state->xfrm_inversions > 0)
		state->tied_rows = order_groups(state, perm, j, column->keyno);
}

/*
 * The report's words may lie in the store's memory, which the next sorted
 * run resets: copies them where EXPLAIN ANALYZE reads them.
 */
static void
keep_report(GpuSortState *state)
{
	SortJobReport *report = &state->report;

	MemoryContextReset(state->report_cxt);
	if (report->choice)
		report->choice = MemoryContextStrdup(state->report_cxt, report->choice);
	if (report->fallback_reason)
		report->fallback_reason = MemoryContextStrdup(state->report_cxt,
													  report->fallback_reason);
	if (report->engine_note)
		report->engine_note = MemoryContextStrdup(state->report_cxt,
												  report->engine_note);
}

/*
 * Sorts the collected rows with a sort engine and the comparators.  An
 * input below gpusort.min_rows stays on the CPU engine: handing rows already
 * collected to tuplesort would cost more than sorting them here.
 */
void
node_sort_rows(GpuSortState *state, bool small, bool run)
{
	RowStore   *store = &state->store;
	const uint64 **keys;
	uint32	   *perm;
	MinimalTuple *sorted = NULL;
	MinimalTuple *sorted_rows = NULL;
	SortJob		job;
	int			xfrm_column = -1;
	uint64	   *refs = NULL;

	/*
	 * strxfrm() and ICU keys are made now, by threads, from the stored
	 * values; keys of bytes that all values start alike are made again past
	 * that start.
	 */
	for (int i = 0; i < store->ncolumns; i++)
	{
		KeyColumn  *column = &store->columns[i];

		if (column->xfrm && column->word > 0)
			continue;			/* made with the key's first word */
		if (column->xfrm && store->nrows > 0)
		{
			uint64	   *column_refs = MemoryContextAllocHuge(store->cxt,
															 sizeof(uint64) * store->nrows);

			xfrm_make_keys(column, store->nrows, column_refs, NULL);

			/*
			 * The words after the first only where it leaves many rows tied
			 * (text whose first characters repeat): else the comparators
			 * order the few ties for less than the engine's passes over
			 * more columns (test/results/text-libc-cpu-2core-2026-11-25-03ee080.txt).
			 */
			if (column->codec->words > 1 &&
				!xfrm_first_word_ties(column, store->nrows))
				for (int w = 1; w < column->codec->words; w++)
					column[w].dropped = true;
			/* ICU keys are trusted; strxfrm() keys are checked after the sort */
			if (column->xfrm->icu)
				pfree(column_refs);
			else
			{
				xfrm_column = i;
				refs = column_refs;
			}
		}
		else if (KEY_CODEC_OF_BYTES(column->codec) && !state->keys_only)
			row_keys_rekey_shared(column, store->rows, store->nrows, state->indesc);
	}
	/* the keys uploaded while the rows came are not these */
	if (store->columns[0].skipped > 0)
		row_store_end_upload(store);

	state->radix_keys = row_keys_place_nulls(store->columns, store->ncolumns, store->nrows);
	/* prefix keys given up while the rows came (row_keys.h) sort nothing */
	for (int i = 0; i < state->radix_keys; i++)
		if (store->columns[i].dropped)
			state->radix_keys = i;
	state->tied_rows = 0;
	state->xfrm_inversions = 0;
	/* the sort keys those columns order completely */
	if (state->radix_keys < store->ncolumns)
		state->engine_keys = store->columns[state->radix_keys].keyno;
	else if (!store->columns[store->ncolumns - 1].codec->exact)
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
	job.want_sorted_keys = false;
	job.keys_sorted = NULL;
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

		/*
		 * Where comparators order what one key column leaves tied, the
		 * engine may hand back that column sorted too, so that the ties are
		 * found in order (not strxfrm() keys: their check needs perm).
		 */
		job.want_sorted_keys = (state->engine_keys < state->nkeys &&
								state->radix_keys == 1 && xfrm_column < 0);
		if ((state->engine_keys == state->nkeys || job.want_sorted_keys) &&
			!run)
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
	state->report.choice = NULL;
	state->report.fallback_reason = NULL;
	state->report.engine_note = NULL;
	if (small)
		sort_job_run_on_cpu(&job, "input below gpusort.min_rows", NULL,
							&state->report);
	else if (state->radix_keys == 0)
		sort_job_run_on_cpu(&job, "no keys for an engine",
							"the prefix keys do not tell the rows apart",
							&state->report);
	else if (store->nrows > 0)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(store->cxt);

		sort_job_run(&job, state->settings.device, &state->report);
		MemoryContextSwitchTo(oldcxt);
	}
	keep_report(state);
	row_store_end_upload(store);
	perm = job.perm;
	pfree(keys);

	/* Rows equal in the engine's keys are ordered by the remaining keys. */
	if (job.keys_sorted)
	{
		state->tied_rows = order_sorted_groups(state, sorted_rows, job.keys_sorted,
											   store->nrows, state->engine_keys);
		pfree(job.keys_sorted);
	}
	else if (state->engine_keys < state->nkeys)
		state->tied_rows = order_groups(state, perm, state->radix_keys,
										state->engine_keys);
	if (xfrm_column >= 0 && xfrm_column < state->radix_keys)
		check_xfrm_order(state, perm, xfrm_column, refs);
	if (refs)
		pfree(refs);

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
	/* a sorted run is written with its keys, which perm finds (spill.c) */
	if (run)
		state->perm = perm;
	else if (perm)
		pfree(perm);
	state->sorted = sorted;
}
