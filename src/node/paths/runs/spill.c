/*-------------------------------------------------------------------------
 *
 * spill.c
 *	  The GpuSort node's path for inputs larger than its memory budget:
 *	  sorted runs, each sorted by an engine, merged on the way out.
 *
 * When the row store is full, its rows are sorted as an input that fit
 * would be (sort_rows.c: the engine, then the comparators), written to a
 * temporary tape as a sorted run, and the store is emptied for the next
 * rows.  Once the input ends, the last rows are sorted and stay in the
 * store, and all runs are merged (sorted_runs.c) as the rows are returned; where the plan wants to go back (backward scans,
 * mark/restore, rewinds), the merged rows are kept in a tuplestore.
 *
 * Rows that are their one sort key (a keys-only store) are written as runs
 * of keys and merged as keys (sorted_runs.h), each row returned as its key
 * decoded into the node's virtual slot: no tuple is formed, written, read
 * back or compared on the way.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/tuplestore.h"

#include "node/collect/memory.h"
#include "node/node_state.h"
#include "node/paths/path.h"
#include "node/paths/runs/runs.h"
#include "node/paths/runs/share.h"
#include "node/rows/row_store.h"
#include "settings.h"

/* Rows between interrupt checks while a run is written. */
#define RUN_CHECK_ROWS		(1 << 16)

/* How far ahead a run's writer fetches the rows it will write. */
#define PREFETCH_DISTANCE	16

/* Makes the node's RunsState, as it begins: nothing over the budget yet. */
void
node_spill_create(GpuSortState *state)
{
	state->spill = palloc0(sizeof(RunsState));
}

/* Starts the runs, at the first one. */
static void
begin_runs(GpuSortState *state)
{
	const KeyColumn *columns = state->store.columns;
	int			ncolumns = 1;
	int			firstkey = 0;

	/*
	 * After an exact leading key, the words of the exact keys that follow
	 * it (those of numeric(p,s), uuid or interval, two each, too), up to
	 * MERGE_KEY_WORDS in all; rows of equal merge keys are compared from the
	 * sort key after them, or from the last one where its words did not all
	 * fit.
	 */
	if (columns[0].codec->exact)
	{
		const KeyColumn *last;

		while (ncolumns < Min(state->store.ncolumns, MERGE_KEY_WORDS) &&
			   columns[ncolumns].codec->exact)
			ncolumns++;
		last = &columns[ncolumns - 1];
		firstkey = last->keyno + (last->word == last->codec->words - 1 ? 1 : 0);
	}
	sorted_runs_begin(&state->spill->runs, CurrentMemoryContext, &state->ties, firstkey,
					  columns, ncolumns, node_memory_part(state, MEMORY_RUN_WINDOW),
					  state->keys_only, state->nullsfirst[0]);
}

/*
 * Can the leading column's keys of this run be compared with those of the
 * others?  Not where they were made past a start the run's values share,
 * given up, or are strxfrm() keys, which only the check after the sort
 * trusts.
 */
static bool
lead_keys_mergeable(GpuSortState *state)
{
	const KeyColumn *lead = &state->store.columns[0];

	return state->radix_keys > 0 && !lead->dropped && lead->skipped == 0 &&
		lead->xfrm == NULL;
}

/*
 * Under a Unique whose columns are the leading sort keys (distinct_keys),
 * the key columns that hold all their words, where those words tell the
 * Unique's groups apart in this run: exact keys, not given up (those made
 * past a start that the run's values share compare alike), and no NULL in
 * a later one (the leading key's NULLs lie apart); else 0.  Only the first
 * row of each group of a sorted run can be its group's first once the runs
 * are merged.
 */
static int
run_group_words(GpuSortState *state)
{
	RowStore   *store = &state->store;
	int			words = state->distinct_keys == 0 ? 0 :
		row_store_group_columns(store, state->distinct_keys);

	if (words > state->radix_keys)
		return 0;
	for (int c = 0; c < words; c++)
		if (store->columns[c].dropped ||
			(store->columns[c].keyno > 0 && store->columns[c].nulls != NULL))
			return 0;
	return words;
}

/* Are the store's rows a and b of one group by the first words key columns? */
static inline bool
same_group(RowStore *store, int words, int64 a, int64 b)
{
	for (int c = 0; c < words; c++)
		if (store->columns[c].keys[a] != store->columns[c].keys[b])
			return false;
	return true;
}

/*
 * Writes the sorted rows of the store as a run: under a Unique, where the
 * keys tell its groups apart, only the first of each group (and every row
 * led by a NULL, which the distinct filter sees).
 */
static void
write_run(GpuSortState *state)
{
	RowStore   *store = &state->store;
	bool		mergeable = lead_keys_mergeable(state);
	int			group_words = run_group_words(state);
	int64		nwritten = state->ntotal;
	int64		previous = -1;

	if (state->keys_only)
	{
		/* the keys in order, the rows of NULL counted */
		Assert(mergeable);
		sorted_runs_put_keys(&state->spill->runs, store->columns[0].keys, state->perm,
							 store->nrows, store->nnullrows);
		return;
	}
	if (group_words > 0)
	{
		/* (the run's rows are counted before they are written) */
		for (int64 pos = 0; pos < state->ntotal; pos++)
		{
			int64		row = sorted_row(state, pos);

			if (row >= 0 && previous >= 0 && same_group(store, group_words, row, previous))
				nwritten--;
			previous = row;
		}
		state->spill->run_dropped += state->ntotal - nwritten;
		previous = -1;
	}
	sorted_runs_start_run(&state->spill->runs, nwritten);
	for (int64 pos = 0; pos < state->ntotal; pos++)
	{
		int64		row = sorted_row(state, pos);
		bool		keyed = row >= 0 && mergeable;

		if (pos % RUN_CHECK_ROWS == 0)
			CHECK_FOR_INTERRUPTS();
		if (group_words > 0)
		{
			bool		dropped = row >= 0 && previous >= 0 &&
				same_group(store, group_words, row, previous);

			previous = row;
			if (dropped)
				continue;
		}

		/*
		 * The rows lie in input order: fetch ahead, so that the cache misses
		 * of reading them in sorted order overlap.
		 */
		if (pos + PREFETCH_DISTANCE < state->ntotal)
			__builtin_prefetch(state->sorted[pos + PREFETCH_DISTANCE]);

		sorted_runs_put(&state->spill->runs, state->sorted[pos], keyed);
	}
	sorted_runs_end_run(&state->spill->runs);
}

/* Sorts the rows in the store as a run; false if there are none. */
static bool
sort_run(GpuSortState *state)
{
	RowStore   *store = &state->store;
	instr_time	start;

	state->ntotal = (int64) store->nrows + store->nnullrows;
	if (state->ntotal == 0)
		return false;

	/* a run is part of an input over the budget: never small */
	INSTR_TIME_SET_CURRENT(start);
	node_sort_rows(state, false, true);
	state->sort_ms += ms_since(start);
	if (state->report.engine != SORT_ENGINE_CPU)
		state->spill->offloaded_runs++;
	state->spill->spilled_tied_rows += state->tied_rows + store->nnullrows;
	state->spill->spilled_rows += state->ntotal;
	state->memory_used = Max(state->memory_used, row_store_memory(store));
	return true;
}

/*
 * Bytes a row takes in tuplesort's memory beside its tuple: its SortTuple
 * and the tuple's chunk header.
 */
#define TUPLESORT_ROW_BYTES		32

/*
 * Would tuplesort hold rows rows whose tuples take tuple bytes each in
 * memory?  The store keeps more for each row (keys, the sort's permutation
 * and scratch space): where it cannot hold them, sorted runs would write to
 * disk an input that Sort keeps in memory.
 */
static bool
tuplesort_holds(GpuSortState *state, double rows, double tuple)
{
	return rows * (tuple + TUPLESORT_ROW_BYTES) <=
		(double) node_budget(state);
}

/*
 * Where runs would be ordered by comparisons as tuplesort's are, why
 * tuplesort sorts an input over the budget instead: where the tied groups
 * expected kept the engine from holding it (the comparators would order
 * nearly every row), or where it is led by a collation key (runs do not
 * share its keys); else NULL.
 */
static const char *
comparison_runs_choice(GpuSortState *state)
{
	if (state->spill->groups_why)
		return psprintf("the input exceeds the memory budget, and %s: runs would order them by comparisons as tuplesort does",
						state->spill->groups_why);
	if (state->store.columns[0].xfrm)
		return NODE_TUPLESORT_XFRM_RUNS;
	return NULL;
}

/*
 * Where tuplesort's method pays better for the input the planner expects,
 * before any row is read: why, else NULL.  Never where the engine may hold
 * the rows (the GPU, which writes no disk), nor where the planner expects
 * the input to fit the store.  Tuplesort would hold in memory an input that
 * the store, which keeps more for each row, would write to disk in runs; a
 * plan that reads backward would take tuplesort once the store is full
 * (node_runs_begin), the store's rows copied once more; runs of collation
 * keys would merge by comparisons, as tuplesort's do, so their keys would
 * be made for nothing.
 */
const char *
node_tuplesort_planned(GpuSortState *state)
{
	Plan	   *plan = state->css.ss.ps.plan;
	double		tuple = MAXALIGN(SizeofMinimalTupleHeader + plan->plan_width);

	if (node_stage_possible(state) || !node_expected_over_budget(state, NULL))
		return NULL;
	if (tuplesort_holds(state, plan->plan_rows, tuple))
		return NODE_TUPLESORT_HOLDS;
	if (state->random_access)
		return NODE_TUPLESORT_BACKWARD;
	return comparison_runs_choice(state);
}

/*
 * Would tuplesort hold the input once the store is full: the planner's rows
 * (or more), as wide as those in the store?
 */
static bool
tuplesort_holds_seen(GpuSortState *state)
{
	RowStore   *store = &state->store;
	Plan	   *plan = state->css.ss.ps.plan;
	double		rows = (double) store->nrows + store->nnullrows;
	double		tuple = MAXALIGN(SizeofMinimalTupleHeader + plan->plan_width);

	if (!store->keys_only)
	{
		Size		used = 0;

		for (int b = 0; b < store->nblocks; b++)
			used += row_store_block_used(store, b);
		tuple = used / Max(rows, 1);
	}
	return tuplesort_holds(state, Max(plan->plan_rows, rows), tuple);
}

/*
 * The store is full for the first time: the runs path takes the input over
 * from the in-memory path (path.h), the engine holding the rows where it
 * can (spill_stage.c), else sorted runs.  Or, starting nothing, returns why
 * tuplesort's method pays better here:
 * where the plan reads the rows backward (the runs would be merged into a
 * tuplestore, writing every row twice, while the last run stays in
 * memory), where tuplesort is expected to hold the input in memory (the
 * runs would write it to disk), or where the budget holds too few rows for
 * runs to pay.
 */
const char *
node_runs_begin(GpuSortState *state)
{
	RowStore   *store = &state->store;
	const char *choice;

	if (node_stage_begin(state))
	{
		state->spill->spilling = true;
		state->path = &node_runs_path;
		return NULL;
	}
	if (state->random_access)
		return NODE_TUPLESORT_BACKWARD;
	if (tuplesort_holds_seen(state))
		return NODE_TUPLESORT_HOLDS;
	/* runs this short cost more than tuplesort's (test/bench/bench-budgets.sh) */
	if ((int64) store->nrows + store->nnullrows < state->settings.min_run_rows)
		return "the memory budget holds too few rows for sorted runs to pay";

	/*
	 * Runs of collation keys (strxfrm(), ICU), which runs do not share, are
	 * merged by the collation's comparison, as tuplesort merges, after the
	 * cost of the keys: 2M rows of 65-byte text at 4 MB took 0.76x of Sort's
	 * time in runs under en_US.utf8, 0.87x under en-US-x-icu, and Sort's in
	 * tuplesort (test/results/text-libc-cpu-2core-2026-11-25-03ee080.txt);
	 * runs whose rows are nearly all tied groups are ordered by comparisons
	 * too (comparison_runs_choice).
	 */
	if ((choice = comparison_runs_choice(state)) != NULL)
		return choice;
	state->spill->spilling = true;
	state->path = &node_runs_path;
	begin_runs(state);
	return NULL;
}

bool
node_runs_take_shared(GpuSortState *state)
{
	if (state->parallel->shared_stage == NULL)
		return false;
	/* (the engine holds them, in the input begun or joined) */
	return node_runs_begin(state) == NULL;
}

/*
 * Sorts the rows in the store, writes them to a new run and empties the
 * store for the rows that follow.
 */
void
node_spill_run(GpuSortState *state)
{
	instr_time	start;

	Assert(state->spill->spilling);
	INSTR_TIME_SET_CURRENT(start);
	if (state->parallel->rest_handed)
	{
		/* a parallel window's worker whose rows the engine refused */
		node_share_put_rest(state, NULL);
		state->spill->spill_ms += ms_since(start);
		return;
	}
	if (state->spill->stage)
	{
		if (node_stage_store(state))
		{
			state->spill->spill_ms += ms_since(start);
			return;
		}
		if (node_share_can_hand_rest(state))
		{
			/* they and the rest go to the leader, the input to the end */
			state->spill->closed_stage = state->spill->stage;
			state->spill->stage = NULL;
			node_share_put_rest(state, NULL);
			state->spill->spill_ms += ms_since(start);
			return;
		}

		/*
		 * the engine could not take them: sorted runs from here on (a
		 * shared input becomes a run once every participant has added)
		 */
		begin_runs(state);
		if (state->spill->stage)
			node_stage_to_run(state);
		state->spill->spill_ms += ms_since(start);
	}
	if (!sort_run(state))
		return;
	INSTR_TIME_SET_CURRENT(start);
	write_run(state);
	row_store_reset(&state->store);
	state->perm = NULL;
	state->sorted = NULL;
	state->spill->spill_ms += ms_since(start);
}

/*
 * Sorts the rows in the store as the last run, which the merge reads from
 * the store.
 */
static void
keep_last_run(GpuSortState *state)
{
	RowStore   *store = &state->store;
	SortedMemoryRun run;

	if (!sort_run(state))
		return;
	run.rows = state->sorted;	/* NULL for keys only: a run of keys */
	run.nrows = state->ntotal;
	run.keys = lead_keys_mergeable(state) ? store->columns[0].keys : NULL;
	Assert(run.keys || !state->keys_only);
	run.perm = state->perm;
	run.keyed_first = state->nullsfirst[0] ? store->nnullrows : 0;
	run.nkeyed = store->nrows;
	sorted_runs_add_memory_run(&state->spill->runs, &run);
}

/* Writes a row that alone is larger than the memory budget as its own run. */
void
node_spill_row(GpuSortState *state, TupleTableSlot *slot)
{
	bool		shouldfree;
	MinimalTuple tuple;

	Assert(state->spill->spilling && !state->keys_only);	/* a key fits any budget */
	if (state->parallel->rest_handed)
	{
		node_share_put_rest(state, slot);
		return;
	}
	if (state->spill->stage)
	{
		/* the engine takes it from the store, which holds it this once */
		if (!row_store_add_beyond_budget(&state->store, slot))
			elog(ERROR, "GpuSort could not hold a row");
		/* to the engine, or (if it could not take it) a run of its own */
		node_spill_run(state);
		return;
	}
	tuple = ExecFetchSlotMinimalTuple(slot, &shouldfree);
	sorted_runs_start_run(&state->spill->runs, 1);
	sorted_runs_put(&state->spill->runs, tuple, false);
	sorted_runs_end_run(&state->spill->runs);
	state->spill->spilled_rows++;
	if (shouldfree)
		pfree(tuple);
}

/*
 * A row that the full store refused: the store's rows go to the engine or
 * become a run, then the row goes into the store, or alone into a run.
 */
void
node_spill_refused(GpuSortState *state, TupleTableSlot *slot)
{
	node_spill_run(state);
	if (!row_store_add(&state->store, slot))
		node_spill_row(state, slot);
}

/*
 * Does the engine that holds the rows hand them back in order itself (one
 * part), rather than the merge of runs (none held, or parts to merge)?
 */
static inline bool
stage_in_order(GpuSortState *state)
{
	return state->spill->stage != NULL && state->spill->stage_parts <= 1;
}

/*
 * Stores the next row of the merge, or of the engine, into the slot: a
 * MinimalTuple, or for keys only the key decoded into the (virtual) slot.
 * *group_first (where not NULL): the row is one the engine kept as the
 * first of its group of a Unique's (node_stage_next); not set by the merge.
 */
bool
node_spill_next_in_order(GpuSortState *state, TupleTableSlot *into, bool *group_first)
{
	MinimalTuple tuple;

	if (stage_in_order(state))
		return node_stage_next(state, into, group_first);
	if (state->keys_only)
	{
		uint64		key = 0;
		bool		isnull;

		if (!sorted_runs_merge_next_key(&state->spill->runs, &key, &isnull))
			return false;
		store_key_value(state, into, key, isnull);
		return true;
	}
	tuple = sorted_runs_merge_next(&state->spill->runs);
	if (tuple == NULL)
		return false;
	ExecStoreMinimalTuple(tuple, into, false);
	return true;
}

/*
 * Ends the input: the engine sorts the rows it holds, or the last run is
 * sorted and the merge readied.  Where the plan wants to go back, all rows
 * go into a tuplestore now.
 */
void
node_spill_finish(GpuSortState *state)
{
	RowStore   *store = &state->store;
	instr_time	start;

	/* the engine sorts what it holds, if it can take the last rows */
	if (state->spill->stage || state->parallel->rest_handed)
		node_spill_run(state);
	if (state->parallel->rest_handed)
	{
		/* a parallel window's worker: its rows are the leader's to sort */
		(void) node_stage_hand_nulls(state);
		node_share_rest_done(state);
		state->ntotal = 0;
		state->ran = state->path = &node_runs_path;
		return;
	}
	if (state->spill->stage)
	{
		node_stage_finish(state);
		if (node_share_alone(state))
		{
			/* a parallel window's rows held, then the workers' refused */
			begin_runs(state);
			node_stage_held_to_run(state);
		}
		else if (state->spill->stage_parts > 1)
		{
			/* held in parts: they are merged as runs are */
			begin_runs(state);
			node_stage_add_part_runs(state);
		}
	}
	else
		/* a shared input that the leader added no more to: a run first */
		node_stage_closed_to_run(state);
	if (state->spill->stage == NULL)
	{
		/* a parallel window's leader that computes it alone takes them */
		if (node_share_alone(state))
		{
			TupleTableSlot *slot;

			while ((slot = node_share_next_rest(state)) != NULL)
			{
				CHECK_FOR_INTERRUPTS();
				if (!row_store_add(store, slot))
					node_spill_refused(state, slot);
			}
			ExecClearTuple(state->css.ss.ss_ScanTupleSlot);
		}

		/*
		 * The last run stays in memory, unless the read buffers of the runs
		 * on tape would take more than a tenth of the budget beside it.
		 */
		if ((Size) state->spill->runs.nruns * BLCKSZ <=
			node_memory_part(state, MEMORY_LAST_RUN_BUFFERS))
			keep_last_run(state);
		else
			node_spill_run(state);
	}
	state->ntotal = state->spill->spilled_rows;
	state->tied_rows = state->spill->spilled_tied_rows;

	INSTR_TIME_SET_CURRENT(start);
	if (!stage_in_order(state))
		sorted_runs_merge_begin(&state->spill->runs,
								node_memory_part(state, MEMORY_MERGE_BUFFERS));
	if (state->random_access)
	{
		TupleTableSlot *slot = state->css.ss.ss_ScanTupleSlot;
		int			eflags = EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK;

		state->spill->merged = tuplestore_begin_heap(true, false, node_budget_kb(state));
		tuplestore_set_eflags(state->spill->merged, eflags);
		(void) tuplestore_alloc_read_pointer(state->spill->merged, eflags & ~EXEC_FLAG_MARK);
		while (node_spill_next_in_order(state, slot, NULL))
		{
			CHECK_FOR_INTERRUPTS();
			tuplestore_puttupleslot(state->spill->merged, slot);
		}
		ExecClearTuple(slot);
		sorted_runs_end(&state->spill->runs);
		node_stage_end(state);
		row_store_reset(store);	/* the last run's rows */
	}
	state->spill->merge_ms = ms_since(start);
	state->memory_used = Max(state->memory_used,
							 row_store_memory(store) + state->spill->runs.merge_memory);
	state->ran = state->path = &node_runs_path;
}
