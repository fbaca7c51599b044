/*-------------------------------------------------------------------------
 *
 * spill_stage.c
 *	  The GpuSort node's inputs larger than its memory budget, held by the
 *	  sort engine that holds rows (RowStager, engine/row_seams.h: the GPU's
 *	  device memory; engine.h's sort_engine_holder) rather than spilled in
 *	  sorted runs.
 *
 * Each full store goes to the engine as it is, unsorted, and is emptied; its
 * key columns are the words of the rows' keys (up to HELD_KEY_WORDS), the
 * NULLs of the later sort keys given keys of their own (held_null_keys),
 * strxfrm() and ICU keys made store by store, alike in every one
 * (KeyColumn's fixed), and where a text key is the last held whole, its next
 * words (tie words, row_seams.h), by which the engine orders the rows that
 * the others leave tied.  Where those words do not order the rows completely
 * (a prefix key: text, numeric; more words than that; a later key with no
 * codec), the store keeps each row's words after its tuple, and the rows the
 * engine hands back are put in order by them and by the comparators
 * (held_order.h), a tied group over the budget by a tuplesort of its own;
 * where every such group is expected over the budget (by the statistics of
 * the keys' tables, key_statistics.h, or else a sample of the first store),
 * the engine holds none, and tuplesort sorts the input.  Rows led by a NULL
 * go to a tuplesort, which orders them by the later keys; a NULL in a later
 * key whose keys leave no room for one ends the holding (the rows held
 * become the first sorted run), and, found in the first store, keeps it from
 * starting (the input may then fit tuplesort's memory, which runs would
 * write to disk).  Once the input ends, the engine sorts all rows at once
 * and hands them back in order, a buffer at a time.  Where the engine cannot
 * start, or take the first store (the rows expected would not fit beside
 * what it holds for other sorts), the runs of spill.c sort the input
 * instead; where it cannot take a later store, the rows it holds come back
 * sorted as the first of those runs (node_stage_to_run).
 *
 * The engine may hold the rows in parts (the GPU service's several GPU
 * processes), each sorted on its own: they are then runs that come from the
 * engine (node_stage_add_part_runs), which sorted_runs.c merges as it merges
 * runs on tape, by merge keys made again from the rows and the comparators;
 * the rows led by a NULL are a run of their own.
 *
 * In a parallel query the participants may add to one input
 * (shared_stage.c): then every participant's rows go to it, even those
 * that fit its budget; a worker returns only the rows led by a NULL, and
 * the leader, once every worker adds no more, sorts and returns all of
 * them.  A participant that the engine refuses adds no more and sorts the
 * rest in runs, the leader turning the shared input into a run of its own
 * once all have added theirs.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "utils/tuplesort.h"

#include "engine/engine.h"
#include "keys/xfrm_keys.h"
#include "node/collect/key_statistics.h"
#include "node/collect/memory.h"
#include "node/node_state.h"
#include "node/paths/runs/held_order.h"
#include "node/paths/runs/runs.h"
#include "node/paths/runs/share.h"
#include "node/plan/gpusort_node.h"
#include "node/rows/row_keys.h"
#include "node/rows/row_store.h"
#include "node/rows/sorted_runs.h"
#include "settings.h"

/*
 * The first sort key that the words an engine holds of the rows' keys (at
 * most HELD_KEY_WORDS) leave ties in: a prefix key, a key whose words do
 * not all fit, or the key after the last that has a codec; nkeys where
 * they order the rows completely.
 */
static int
held_tie_key(GpuSortState *state)
{
	RowStore   *store = &state->store;
	int			nwords = Min(store->ncolumns, HELD_KEY_WORDS);
	const KeyColumn *last = &store->columns[nwords - 1];

	for (int c = 0; c < nwords; c++)
		if (!store->columns[c].codec->exact)
			return store->columns[c].keyno;
	if (last->word < last->codec->words - 1)
		return last->keyno;
	return last->keyno + 1;
}

/*
 * Under a Unique whose columns are the leading sort keys (distinct_keys),
 * those keys' words, where the engine orders the rows by their words alone
 * (held_tie_key: every key exact, all its words held, and no NULL tied
 * with a value): the first row of each group of equal words is then the
 * first of the Unique's group, and the engine may keep it alone.  Else 0,
 * and where the groups are all the words of a key of several (the GPU
 * engine's sort takes the last word's room as it sorts the others).
 */
static int
held_group_words(GpuSortState *state)
{
	RowStore   *store = &state->store;
	int			nwords = Min(store->ncolumns, HELD_KEY_WORDS);
	int			words = 0;

	if (state->distinct_keys == 0 || state->spill->held_tie_key < state->nkeys)
		return 0;
	while (words < nwords && store->columns[words].keyno < state->distinct_keys)
		words++;
	return words < nwords || nwords == 1 ? words : 0;
}

/*
 * The sort keys whose equal rows the held words leave tied: those before
 * the tie key, and the tie key where its prefix is held.
 */
static int
grouping_keys(GpuSortState *state)
{
	RowStore   *store = &state->store;
	int			tie = state->spill->held_tie_key;
	const KeyColumn *last = &store->columns[Min(store->ncolumns, HELD_KEY_WORDS) - 1];

	return tie <= last->keyno ? tie + 1 : tie;
}

/* Would a group of rows rows of the input take more than the budget? */
static bool
group_over_budget(GpuSortState *state, double rows)
{
	Plan	   *plan = state->css.ss.ps.plan;

	return row_store_expected_bytes(&state->store, rows, plan->plan_width) >
		(double) node_budget(state);
}

/*
 * Where the groups of rows that the held words leave tied would each take
 * more than the budget, as the statistics of the keys' tables expect them
 * (key_statistics.h), why the engine holds none; else NULL, and
 * groups_estimated false where no statistics tell.  Each group would go to
 * a tuplesort of its own in one process after the engine held it
 * (held_order.c): where all of them do, as under a text key of a few
 * values, holding costs more than Sort's own (each parallel participant
 * sorting its share).
 */
static char *
tied_groups_why(GpuSortState *state)
{
	double		rows = node_expected_group_rows(state, grouping_keys(state));

	state->spill->groups_estimated = rows >= 0;
	if (rows < 0 || !group_over_budget(state, rows))
		return NULL;
	return psprintf("the table's statistics expect groups of %.0f rows that the held keys leave tied, each over the memory budget",
					rows);
}

/* The rows of a store that sampled_groups_why orders, at most. */
#define GROUPS_SAMPLE_ROWS	1024

/*
 * Where the keys leave ties and no statistics tell (tied_groups_why), the
 * tied groups the first full store shows: a sample of its rows, ordered by
 * the comparators, whose groups of rows equal in the grouping keys are each
 * expected in the input as large as their share of the sample.  Where most
 * of the rows are in groups expected over the budget, why the engine holds
 * none (also groups_why); else NULL.
 */
static char *
sampled_groups_why(GpuSortState *state)
{
	RowStore   *store = &state->store;
	Plan	   *plan = state->css.ss.ps.plan;
	uint32		n = Min(store->nrows, GROUPS_SAMPLE_ROWS);
	int			nkeys = grouping_keys(state);
	double		input = Max(plan->plan_rows, (double) store->nrows);
	MinimalTuple *sample;
	uint32		start = 0;
	uint32		big = 0;
	double		largest = 0;

	if (state->spill->groups_estimated || state->spill->held_tie_key == state->nkeys ||
		n < 2)
		return NULL;
	sample = palloc(sizeof(MinimalTuple) * n);
	for (uint32 i = 0; i < n; i++)
		sample[i] = store->rows[(uint64) i * store->nrows / n];
	tie_order_sort(&state->ties, sample, NULL, n, 0, CurrentMemoryContext);
	for (uint32 i = 1; i <= n; i++)
	{
		double		rows;

		if (i < n && tie_order_compare_keys(&state->ties, sample[start], sample[i],
											0, nkeys) == 0)
			continue;
		rows = input * (i - start) / n;
		if (group_over_budget(state, rows))
			big += i - start;
		largest = Max(largest, rows);
		start = i;
	}
	tie_order_done(&state->ties);
	pfree(sample);
	if (big * 2 <= n)
		return NULL;
	state->spill->groups_why =
		psprintf("the first %u rows show groups of up to %.0f rows that the held keys leave tied, each over the memory budget",
				 store->nrows, largest);
	return state->spill->groups_why;
}

/*
 * The engine that may hold this node's rows, as far as the order, the
 * groups it leaves tied and gpusort.device tell, whether or not the store
 * kept room for the keys that the order needs with them; else NULL with
 * the reason in *why.
 */
static const RowStager *
engine_stager(GpuSortState *state, char **why)
{
	RowStore   *store = &state->store;
	const SortEngine *holder;

	/* a parallel query's shared input, whatever the engine says now */
	if (state->parallel->shared_stage)
	{
		*why = NULL;
		return state->parallel->shared_stager;
	}
	if (state->keys_only)
	{
		*why = "the rows are their one sort key: no tuples to hold";
		return NULL;
	}
	for (int c = 0; c < Min(store->ncolumns, HELD_KEY_WORDS); c++)
		if (store->columns[c].codec->source == KEY_PREFIX_ABBREV &&
			!store->columns[c].codec->exact)
		{
			*why = "the order has a key whose prefix keys each store may give up";
			return NULL;
		}
	if (state->spill->groups_why)
	{
		*why = state->spill->groups_why;
		return NULL;
	}
	holder = sort_engine_holder(state->settings.device, why);
	return *why == NULL ? holder->stager : NULL;
}

/* engine_stager's, where the store kept what the order needs held too. */
static const RowStager *
stager_for(GpuSortState *state, char **why)
{
	const RowStager *stager = engine_stager(state, why);

	if (stager != NULL && state->spill->held_tie_key < state->nkeys && state->store.tail == 0)
	{
		*why = "the order's keys leave ties, and the rows were stored without room for their keys";
		return NULL;
	}
	return stager;
}

/*
 * The first column of the store's strxfrm() or ICU key among the words
 * held, whose keys are made after the rows come (xfrm_keys.h), or NULL.
 * (The columns end at a prefix key: there is one at most.)
 */
static KeyColumn *
collation_column(RowStore *store)
{
	for (int c = 0; c < Min(store->ncolumns, HELD_KEY_WORDS); c++)
		if (store->columns[c].xfrm && store->columns[c].word == 0)
			return &store->columns[c];
	return NULL;
}

/*
 * The first column of the last key held, where all its words are held and
 * are a prefix of text (strxfrm(), ICU or bytes keys): the key whose next
 * words, its tie words (row_seams.h), the rows held bring; else NULL.
 */
static KeyColumn *
tie_column(RowStore *store)
{
	KeyColumn  *last = &store->columns[Min(store->ncolumns, HELD_KEY_WORDS) - 1];

	if (last->codec->exact || last->word != last->codec->words - 1 ||
		!(last->xfrm || KEY_CODEC_OF_BYTES(last->codec)))
		return NULL;
	return last - last->word;
}

/*
 * Where the engine's keys would leave ties, has the store keep room after
 * each tuple for its key words (held_order.h), and the keys made alike in
 * every store, where the input is expected not to fit (or may be a
 * parallel query's shared input) and the engine could hold it.
 */
void
node_stage_plan_tails(GpuSortState *state)
{
	RowStore   *store = &state->store;
	Plan	   *plan = state->css.ss.ps.plan;
	int			nwords = Min(store->ncolumns, HELD_KEY_WORDS);
	KeyColumn  *tie;
	char	   *why;

	state->spill->held_tie_key = held_tie_key(state);
	state->spill->held_words = nwords;
	state->spill->held_columns = store->columns;
	if (state->keys_only || state->spill->held_tie_key == state->nkeys)
		return;
	state->spill->groups_why = tied_groups_why(state);
	/* only where the input is expected not to fit, or may be shared */
	if (!gpusort_shares_input((CustomScan *) plan) &&
		!node_expected_over_budget(state, NULL))
		return;
	if (engine_stager(state, &why) == NULL)
		return;
	for (int c = 0; c < nwords; c++)
		store->columns[c].fixed = true;

	/* a text key held whole brings its tie words, as later words of it */
	if ((tie = tie_column(store)) != NULL)
	{
		KeyColumn  *columns = palloc(sizeof(KeyColumn) * HELD_ROW_WORDS);

		StaticAssertStmt(COLLATION_TIE_WORDS <= HELD_TIE_WORDS, "tie words");
		memcpy(columns, store->columns, sizeof(KeyColumn) * nwords);
		for (int t = 0; t < COLLATION_TIE_WORDS; t++)
		{
			columns[nwords + t] = store->columns[nwords - 1];
			columns[nwords + t].word = tie->codec->words + t;
		}
		state->spill->held_words = nwords + COLLATION_TIE_WORDS;
		state->spill->held_columns = columns;
	}
	store->tail = MAXALIGN(sizeof(uint64) * state->spill->held_words);
}

/* The engine that holds the rows, as messages name it ("GPU"). */
static const char *
holder_title(GpuSortState *state)
{
	return sort_engine_get(sort_engine_holding(state->spill->stager))->title;
}

bool
node_stage_possible(GpuSortState *state)
{
	char	   *why;

	return stager_for(state, &why) != NULL;
}

/*
 * Can the engine's keys order the rows in the store?  A later key with a
 * NULL that its keys leave no room for ties the NULL with the end of the
 * key's range, which the comparators then order from that key on: where
 * the rows are held with their key words (the store's tail) and by this
 * backend alone, the comparators start there from now on, for the rows of
 * every store (held_tie_key only moves down, and the rows are read back
 * after the last store); else false with the reason.
 */
static bool
store_holdable(GpuSortState *state, char **why)
{
	RowStore   *store = &state->store;

	for (int c = 1; c < Min(store->ncolumns, HELD_KEY_WORDS); c++)
	{
		const KeyColumn *column = &store->columns[c];

		if (column->word != 0 || column->nulls == NULL || column->codec->bits < 64 ||
			column->keyno >= state->spill->held_tie_key)
			continue;
		if (store->tail > 0 && !state->parallel->held_shared)
			state->spill->held_tie_key = column->keyno;
		else
		{
			*why = psprintf("sort key %d has a NULL, which its keys leave no room for",
							column->keyno + 1);
			return false;
		}
	}
	return true;
}

/*
 * Starts holding the rows on the engine, if the order lets it, the first
 * store's rows can be held (store_holdable) and the engine can; else
 * false with the reason in state->spill->stage_why.
 */
bool
node_stage_begin(GpuSortState *state)
{
	RowStore   *store = &state->store;
	Size		budget = node_budget(state);
	Plan	   *plan = state->css.ss.ps.plan;
	double		expected;
	char	   *why = NULL;

	expected = row_store_expected_bytes(store, plan->plan_rows, plan->plan_width);
	if (state->parallel->shared_stage)
	{
		/* begun (or joined) for the parallel query's participants */
		state->spill->stager = state->parallel->shared_stager;
		state->spill->stage = state->parallel->shared_stage;
		state->parallel->shared_stage = NULL;
		state->parallel->held_shared = true;
	}
	else if ((state->spill->stager = stager_for(state, &why)) == NULL ||
			 !store_holdable(state, &why) ||
			 (why = sampled_groups_why(state)) != NULL ||
			 (state->spill->stage = state->spill->stager->begin(budget, plan->plan_rows,
																expected,
																state->settings.held_gpus,
																&why)) == NULL)
	{
		state->spill->stager = NULL;
		state->spill->stage_why = why;
		return false;
	}
	/* the rows go up whole: no early upload of their keys for a sort */
	row_store_end_upload(store);
	store->uploader = NULL;
	/* (sorted by the later keys, which have no codec or no room for them) */
	state->spill->stage_nulls = tie_order_tuplesort(&state->ties, node_budget_kb(state),
											 TUPLESORT_NONE);
	state->spill->null_rows = 0;
	state->spill->stage_why = NULL;
	return true;
}

/*
 * The keys of the NULLs of a later sort key, the same in every store: where
 * its codec's keys stay below 2^bits (bits < 64), NULLS LAST takes 2^bits,
 * and NULLS FIRST 0, the keys of values then moved up by one (in every
 * store, NULL or not); where they take all 64 bits (a key that the
 * comparators order from, as store_holdable allows), NULLS FIRST takes 0
 * and NULLS LAST the largest key, which values of those keys tie with.
 * Returns the column's words, or a copy where they change.
 */
static const uint64 *
held_null_keys(const KeyColumn *column, uint32 nrows)
{
	int			bits = column->codec->bits;
	bool		first = column->part.nulls_first;
	uint64	   *keys;

	if (column->nulls == NULL && (bits == 64 || !first))
		return column->keys;
	keys = palloc(sizeof(uint64) * Max(nrows, 1));
	for (uint32 row = 0; row < nrows; row++)
	{
		bool		isnull = key_column_isnull(column, row);

		if (bits == 64)
			keys[row] = !isnull ? column->keys[row] : first ? 0 : PG_UINT64_MAX;
		else
			keys[row] = isnull ? (first ? 0 : UINT64CONST(1) << bits) :
				column->keys[row] + (first ? 1 : 0);
	}
	return keys;
}

/*
 * Makes the keys of the store's collation column, the same way in every
 * store (KeyColumn's fixed), and the tie words of its text key, where held
 * (the view's words after the key columns', arrays of the store's context
 * freed once it is added); returns the references to the values that the
 * collation keys replace (put_back_references), or NULL where there are
 * none.
 */
static uint64 *
make_held_keys(GpuSortState *state, StoredRows *rows)
{
	RowStore   *store = &state->store;
	KeyColumn  *collation = collation_column(store);
	uint64	   *ties[HELD_TIE_WORDS];
	int			first_tie = Min(store->ncolumns, HELD_KEY_WORDS);
	int			ntie = state->spill->held_words - first_tie;
	uint64	   *refs = NULL;

	if (store->nrows == 0)
		return NULL;
	for (int t = 0; t < ntie; t++)
		rows->keys[first_tie + t] = ties[t] =
			MemoryContextAllocHuge(store->cxt, sizeof(uint64) * store->nrows);
	rows->nwords = state->spill->held_words;
	if (collation != NULL)
	{
		refs = MemoryContextAllocHuge(store->cxt, sizeof(uint64) * store->nrows);
		xfrm_make_keys(collation, store->nrows, refs, ntie > 0 ? ties : NULL);
	}
	else if (ntie > 0)
		row_keys_tie_words(tie_column(store), store->rows, store->nrows,
						   state->indesc, ntie, ties);
	return refs;
}

/*
 * The rows of a store that the engine did not take are sorted as a run,
 * which makes their collation keys itself: their key column holds the
 * references again.
 */
static void
put_back_references(RowStore *store, const uint64 *refs)
{
	KeyColumn  *column = collation_column(store);

	for (uint32 row = 0; row < store->nrows; row++)
		if (!key_column_isnull(column, row))
			column->keys[row] = refs[row];
}

/*
 * Writes each row's key words after its tuple, in the tail the store kept,
 * for the order of the rows whose words tie (held_order.h).
 */
static void
write_tails(const StoredRows *rows)
{
	for (uint32 row = 0; row < rows->nrows; row++)
	{
		MinimalTuple tuple = rows->rows[row];
		uint64	   *key = (uint64 *) ((char *) tuple + MAXALIGN(tuple->t_len));

		for (int w = 0; w < rows->nwords; w++)
			key[w] = rows->keys[w][row];
	}
}

/*
 * The view's tie words, past its first_tie words, where held
 * (make_held_keys made them for the values): those of a NULL are its first
 * word's, as its later words are.
 */
static void
held_null_ties(RowStore *store, StoredRows *rows, int first_tie)
{
	const KeyColumn *column;
	const uint64 *first;

	if (rows->nwords == first_tie || (column = tie_column(store))->nulls == NULL)
		return;
	first = rows->keys[column - store->columns];
	for (uint32 row = 0; row < rows->nrows; row++)
		if (key_column_isnull(column, row))
			for (int w = first_tie; w < rows->nwords; w++)
				((uint64 *) rows->keys[w])[row] = first[row];
}

/*
 * The store as the engine sees it, and in *refs what make_held_keys
 * returns; false with the reason where its keys cannot order it
 * (store_holdable).
 */
static bool
held_view(GpuSortState *state, StoredRows *rows, uint64 **refs, char **why)
{
	RowStore   *store = &state->store;
	int			ncolumns;

	row_store_view(store, rows);
	if (!store_holdable(state, why))
		return false;
	ncolumns = rows->nwords;	/* the key columns', before any tie words */
	*refs = make_held_keys(state, rows);
	for (int w = 1; w < ncolumns; w++)
	{
		/*
		 * a key's later words are of the value its first word had, but
		 * those of a NULL of 64-bit keys are all the first one's
		 */
		if (store->columns[w].word == 0 || store->columns[w].codec->bits == 64)
			rows->keys[w] = held_null_keys(&store->columns[w], rows->nrows);
	}
	held_null_ties(store, rows, ncolumns);
	if (rows->tail > 0)
		write_tails(rows);
	return true;
}

/*
 * Hands the rows of the store to the engine and empties it.  False if the
 * engine could not take them: if they were the first, nothing is held, and
 * the engine is let go; else it still holds the stores before
 * (node_stage_to_run).
 */
bool
node_stage_store(GpuSortState *state)
{
	RowStore   *store = &state->store;
	TupleTableSlot *slot = state->css.ss.ss_ScanTupleSlot;
	char	   *why = NULL;
	StoredRows	rows;
	uint64	   *refs = NULL;
	bool		added;
	instr_time	start;

	state->memory_used = Max(state->memory_used, row_store_memory(store));
	INSTR_TIME_SET_CURRENT(start);
	added = held_view(state, &rows, &refs, &why) &&
		(rows.nrows == 0 || state->spill->stager->add(state->spill->stage, &rows, &why));
	if (!added && refs)
		put_back_references(store, refs);
	state->spill->hold_ms += ms_since(start);
	pfree((void *) rows.block_start);
	pfree((void *) rows.block_used);
	for (int w = 1; w < rows.nwords; w++)
		if (rows.keys[w] && (w >= Min(store->ncolumns, HELD_KEY_WORDS) ||
							 rows.keys[w] != store->columns[w].keys))
			pfree((void *) rows.keys[w]);
	if (!added)
	{
		state->spill->stage_why = why;
		if (node_share_active(state))
		{
			/*
			 * the others' rows stay: the leader turns them into a run once
			 * all have added theirs; a worker's own rows led by a NULL
			 * become its first run now (node_stage_to_run), or, in a
			 * parallel window, go to the leader with the rest of its rows,
			 * after which it says it adds no more (node_share_put_rest)
			 */
			if (!node_share_can_hand_rest(state))
				node_share_done(state, state->spill->staged_batches, state->spill->staged_rows, false);
			if (!IsParallelWorker())
			{
				state->spill->closed_stage = state->spill->stage;
				state->spill->stage = NULL;
			}
		}
		else if (state->spill->staged_batches == 0)
			node_stage_end(state);
		return false;
	}
	for (uint32 i = 0; i < store->nnullrows; i++)
		tuplesort_puttupleslot(state->spill->stage_nulls,
							   ExecStoreMinimalTuple(store->nullrows[i], slot, false));
	ExecClearTuple(slot);
	state->spill->null_rows += store->nnullrows;
	/* an empty store adds nothing: the engine may hold no input yet */
	if (store->nrows > 0)
		state->spill->staged_batches++;
	state->spill->staged_rows += store->nrows;
	state->spill->spilled_rows += (int64) store->nrows + store->nnullrows;
	row_store_reset(store);
	return true;
}

/*
 * A parallel window's worker, as it adds no more: its rows led by a NULL
 * go to the leader (node_share_put_null), and none is left to read here;
 * false where it has some, but no file set to hand them in.
 */
bool
node_stage_hand_nulls(GpuSortState *state)
{
	TupleTableSlot *slot = state->css.ss.ss_ScanTupleSlot;

	if (state->spill->null_rows > 0)
	{
		if (!node_share_can_hand_rest(state))
			return false;
		tuplesort_performsort(state->spill->stage_nulls);
		while (tuplesort_gettupleslot(state->spill->stage_nulls, true, false, slot, NULL))
		{
			bool		shouldfree;
			MinimalTuple tuple = ExecFetchSlotMinimalTuple(slot, &shouldfree);

			node_share_put_null(state, tuple);
			if (shouldfree)
				pfree(tuple);
		}
		ExecClearTuple(slot);
		node_share_nulls_done(state);
	}
	state->spill->nulls_done = true;
	return true;
}

/*
 * In the leader of a parallel window, once every worker adds no more: the
 * rows led by a NULL that they handed over join its own.
 */
static void
take_nulls(GpuSortState *state)
{
	TupleTableSlot *slot = state->css.ss.ss_ScanTupleSlot;

	while (node_share_next_null(state, slot) != NULL)
	{
		CHECK_FOR_INTERRUPTS();
		tuplesort_puttupleslot(state->spill->stage_nulls, slot);
		state->spill->null_rows++;
		state->spill->spilled_rows++;
	}
	ExecClearTuple(slot);
}

/*
 * Has the engine sort what it holds, to be read from the first row.  The
 * leader of a shared input first waits for every participant's rows, and
 * then returns them all; a worker's rows are the leader's to return, but
 * for a parallel window's slices, which every participant reads once the
 * leader has sorted them.  The rows led by a NULL, which the engine does
 * not hold, each participant returns its own of, but in a parallel window:
 * there they are partitions of their own, and the leader computes them
 * all, after its slices.
 */
static void
sort_held(GpuSortState *state)
{
	char	   *why = NULL;
	instr_time	start;

	state->spill->nulls_done = false;
	state->spill->stage_parts = 1;
	if (node_share_active(state))
	{
		bool		slices = node_is_slices(state);
		bool		nulls_kept = slices &&
			(!IsParallelWorker() || node_stage_hand_nulls(state));
		int64		apart = state->spill->spilled_rows - state->spill->staged_rows -
			(nulls_kept ? state->spill->null_rows : 0);
		int64		rows;

		node_share_done(state, state->spill->staged_batches, state->spill->staged_rows,
						apart == 0 && state->spill->runs.nruns == 0);
		if (IsParallelWorker())
		{
			state->spill->held_empty = !slices;
			if (slices)
				node_share_wait_sorted(state);
			else
				tuplesort_performsort(state->spill->stage_nulls);
			return;
		}
		INSTR_TIME_SET_CURRENT(start);
		state->spill->staged_batches = node_share_wait(state, &rows);
		state->spill->spilled_rows += rows - state->spill->staged_rows;
		state->spill->staged_rows = rows;
		state->sort_ms += ms_since(start);
		if (slices)
			take_nulls(state);
	}
	tuplesort_performsort(state->spill->stage_nulls);

	/* stores of rows led by NULLs alone: the engine holds nothing */
	state->spill->held_empty = (state->spill->staged_batches == 0);
	if (!state->spill->held_empty)
	{
		INSTR_TIME_SET_CURRENT(start);
		state->spill->group_words = held_group_words(state);
		if (!state->spill->stager->sort(state->spill->stage, state->spill->group_words,
										&state->spill->held_kept, &why))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("GpuSort could not sort the rows it held on the %s: %s",
							holder_title(state), why),
					 errhint("Set gpusort.device = cpu to sort such inputs in runs on disk.")));
		state->sort_ms += ms_since(start);
		if (state->spill->stager->parts)
			state->spill->stage_parts = state->spill->stager->parts(state->spill->stage, NULL);
	}
	if (node_is_slices(state) && node_share_active(state))
	{
		node_share_sorted(state, state->spill->held_empty ? 0 : state->spill->staged_rows);
		if (node_share_alone(state) && state->spill->stage_why == NULL)
			state->spill->stage_why = "a worker's rows came to the leader, refused midway";
	}
}

/*
 * A part of the rows the engine holds, read in the sort's order
 * (held_order.h); where it holds several, a run (sorted_runs.h).
 */
typedef struct StagePart
{
	GpuSortState *state;
	int			part;
	HeldOrder	order;
	TupleTableSlot *slot;		/* the rows led by a NULL: read into it */
	SortedRunSource source;
} StagePart;

/* The next rows the engine hands back of a part (HeldOrder's next_rows). */
static int64
part_rows(void *arg, char **rows)
{
	StagePart  *part = arg;
	GpuSortState *state = part->state;
	char	   *why = NULL;
	instr_time	start;
	int64		n;

	INSTR_TIME_SET_CURRENT(start);
	n = state->spill->stager->next(state->spill->stage, part->part, rows, &why);
	state->spill->read_back_ms += ms_since(start);
	if (n < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("GpuSort could not read back the rows it held on the %s: %s",
						holder_title(state), why)));
	return n;
}

/* Starts reading part p of what the engine holds. */
static void
part_begin(GpuSortState *state, StagePart *part, int p)
{
	RowStore   *store = &state->store;

	part->state = state;
	part->part = p;
	held_order_begin(&part->order, part_rows, part, store->tail,
					 state->spill->held_words, state->spill->held_columns,
					 state->spill->held_tie_key, &state->ties,
					 node_budget(state), node_memory_part(state, MEMORY_TIED_BATCH),
					 &state->tied_rows,
					 &state->spill->held_disk_kb);
}

/* The next row of a part, or NULL after its last. */
static MinimalTuple
part_next(void *arg)
{
	StagePart  *part = arg;

	return held_order_next(&part->order);
}

/* The next row led by a NULL, or NULL after the last. */
static MinimalTuple
null_next(void *arg)
{
	StagePart  *part = arg;
	bool		shouldfree;

	if (!tuplesort_gettupleslot(part->state->spill->stage_nulls, true, false, part->slot, NULL))
		return NULL;
	return ExecFetchSlotMinimalTuple(part->slot, &shouldfree);
}

/*
 * Readers of each part of the rows the engine sorted in several, and of the
 * rows led by a NULL, after them (state->spill->stage_part_runs).
 */
static StagePart *
part_readers(GpuSortState *state)
{
	int			nparts = state->spill->stage_parts;
	StagePart  *parts = palloc0(sizeof(StagePart) * (nparts + 1));

	Assert(nparts > 1 && state->spill->stage_part_runs == NULL);
	for (int p = 0; p <= nparts; p++)
	{
		part_begin(state, &parts[p], p);
		parts[p].source.arg = &parts[p];
		parts[p].source.next = part_next;
		parts[p].source.keyed = true;
	}
	parts[nparts].source.next = null_next;
	parts[nparts].source.keyed = false;
	parts[nparts].slot = MakeSingleTupleTableSlot(state->indesc, &TTSOpsMinimalTuple);
	state->spill->stage_part_runs = parts;
	return parts;
}

/* Adds the parts' readers to the runs begun, to be merged. */
void
node_stage_add_part_runs(GpuSortState *state)
{
	StagePart  *parts = part_readers(state);

	for (int p = 0; p <= state->spill->stage_parts; p++)
		sorted_runs_add_source_run(&state->spill->runs, &parts[p].source);
}

/* Each part of what the engine holds, sorted, a run; the NULL-led rows one. */
static void
parts_to_runs(GpuSortState *state)
{
	StagePart  *parts = part_readers(state);
	MinimalTuple tuple;

	for (int p = 0; p <= state->spill->stage_parts; p++)
	{
		StagePart  *part = &parts[p];

		sorted_runs_start_run(&state->spill->runs, state->spill->spilled_rows);	/* at most */
		while ((tuple = part->source.next(part)) != NULL)
			sorted_runs_put(&state->spill->runs, tuple, false);
		sorted_runs_end_run(&state->spill->runs);
	}
}

/*
 * The engine took stores, but cannot take the one in the store (other
 * sorts hold its memory): the rows it holds, sorted, and the rows led by a
 * NULL become the first sorted run (the runs begun), and the engine is let
 * go.  The rows in the store stay there.  (A leader's shared input becomes
 * a run once every participant has added its rows, as the input ends:
 * there may be none.)
 */
void
node_stage_to_run(GpuSortState *state)
{
	sort_held(state);
	node_stage_held_to_run(state);
}

/*
 * The same once the engine sorted what it holds: where the leader of a
 * parallel window computes it alone, the rows held are merged with those
 * the engine refused (node_share_next_rest).
 */
void
node_stage_held_to_run(GpuSortState *state)
{
	TupleTableSlot *slot = state->css.ss.ss_ScanTupleSlot;

	if (state->spill->stage_parts > 1)
		parts_to_runs(state);
	else if (node_stage_next(state, slot, NULL))
	{
		/* all it holds, less what a Unique's groups let it drop */
		sorted_runs_start_run(&state->spill->runs, state->spill->spilled_rows -
							  (state->spill->staged_rows - state->spill->held_kept));
		do
		{
			bool		shouldfree;
			MinimalTuple tuple = ExecFetchSlotMinimalTuple(slot, &shouldfree);

			sorted_runs_put(&state->spill->runs, tuple, false);
			if (shouldfree)
				pfree(tuple);
		} while (node_stage_next(state, slot, NULL));
		ExecClearTuple(slot);
		sorted_runs_end_run(&state->spill->runs);
	}
	state->spill->stage_why = psprintf("the %s held %lld stores, then could take no more "
								"(they became the first sorted run): %s",
								holder_title(state), (long long) state->spill->staged_batches,
								state->spill->stage_why);
	node_stage_end(state);
	state->spill->staged_batches = 0;
	state->spill->staged_rows = 0;
}

/*
 * A leader's shared input that it added no more to becomes a run, once
 * every participant has added its rows (there may be none).
 */
void
node_stage_closed_to_run(GpuSortState *state)
{
	if (state->spill->closed_stage == NULL)
		return;
	state->spill->stage = state->spill->closed_stage;
	state->spill->closed_stage = NULL;
	node_stage_to_run(state);
}

/* Has the engine sort what it holds, the last store's rows with it. */
void
node_stage_finish(GpuSortState *state)
{
	double		ms_before = state->sort_ms;

	sort_held(state);

	/* what EXPLAIN ANALYZE tells: the engine's keys ordered the sort keys */
	state->report.engine = sort_engine_holding(state->spill->stager);
	state->report.choice = MemoryContextStrdup(state->report_cxt,
											   psprintf("the input exceeds the memory budget: held on the %s",
														holder_title(state)));
	state->report.fallback_reason = NULL;
	state->report.engine_note = NULL;
	if (state->spill->stage_parts > 1)
	{
		char	   *note;

		(void) state->spill->stager->parts(state->spill->stage, &note);
		state->report.engine_note = MemoryContextStrdup(state->report_cxt, note);
	}
	/* gpusort_stats() counts the sort, where this process ran it */
	if (!state->spill->held_empty)
		sort_engine_count_sort(&state->report, state->spill->spilled_rows,
							   state->sort_ms - ms_before);
	state->radix_keys = Min(state->store.ncolumns, HELD_KEY_WORDS);
	state->engine_keys = state->spill->held_tie_key;	/* (the rest: held_order.h) */
	state->tied_rows = 0;
	state->spill->held_disk_kb = 0;
}

/* The NULL-led rows, where they come: false when there are no more. */
static bool
next_null_row(GpuSortState *state, TupleTableSlot *into)
{
	if (state->spill->nulls_done)
		return false;
	if (tuplesort_gettupleslot(state->spill->stage_nulls, true, false, into, NULL))
		return true;
	state->spill->nulls_done = true;
	return false;
}

/* The reader of the rows held in one part, begun where it is not. */
static StagePart *
held_main(GpuSortState *state)
{
	if (state->spill->held_main == NULL)
	{
		state->spill->held_main = palloc0(sizeof(StagePart));
		part_begin(state, state->spill->held_main, 0);
	}
	return state->spill->held_main;
}

/*
 * Stores the next row in order into the slot; false after the last.  (A
 * parallel window's slices are of the rows held alone: the leader reads
 * those led by a NULL after its last, node_stage_next_null.)  Where
 * group_first is not NULL, *group_first says whether the row is one the
 * engine kept as the first of its group of a Unique's (sort_held's
 * group_words), which no other row of its group follows.
 */
bool
node_stage_next(GpuSortState *state, TupleTableSlot *into, bool *group_first)
{
	bool		nulls = state->slicing != SLICES_READ;
	MinimalTuple tuple;

	if (group_first)
		*group_first = false;
	if (nulls && state->nullsfirst[0] && next_null_row(state, into))
		return true;
	tuple = state->spill->held_empty ? NULL : held_order_next(&held_main(state)->order);
	if (tuple == NULL)
		return nulls && !state->nullsfirst[0] && next_null_row(state, into);
	ExecStoreMinimalTuple(tuple, into, false);
	if (group_first)
		*group_first = state->spill->group_words > 0;
	return true;
}

/*
 * The next row led by a NULL into the slot (a parallel window's, which the
 * leader returns after its slices: a worker has none); false after the
 * last.
 */
bool
node_stage_next_null(GpuSortState *state, TupleTableSlot *into)
{
	return state->spill->stage_nulls != NULL && next_null_row(state, into);
}

/*
 * The next rows that node_stage_next returns are those from the row-th of
 * the input held, in order (a parallel window's slice): for rows held in
 * one part, in their keys' order alone, with none led by a NULL.
 */
void
node_stage_seek(GpuSortState *state, int64 row)
{
	char	   *why = NULL;

	Assert(state->spill->stage_parts == 1 && state->store.tail == 0);
	if (state->spill->held_empty)
		return;
	if (!state->spill->stager->seek(state->spill->stage, 0, row, &why))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("GpuSort could not read back the rows it held on the %s: %s",
						holder_title(state), why)));
	held_main(state)->order.left = 0;	/* the rows handed back before */
}

void
node_stage_end(GpuSortState *state)
{
	if (state->spill->stage)
		state->spill->stager->end(state->spill->stage);
	if (state->spill->closed_stage)
		state->spill->stager->end(state->spill->closed_stage);
	if (state->parallel->shared_stage)
		state->parallel->shared_stager->end(state->parallel->shared_stage);
	state->parallel->shared_stage = NULL;
	state->spill->stage = NULL;
	state->spill->closed_stage = NULL;
	state->spill->stager = NULL;
	state->spill->held_empty = false;
	if (state->spill->stage_nulls)
		state->spill->held_disk_kb += tie_order_tuplesort_end(state->spill->stage_nulls);
	state->spill->stage_nulls = NULL;
	if (state->spill->held_main)
	{
		held_order_end(&state->spill->held_main->order);
		pfree(state->spill->held_main);
	}
	state->spill->held_main = NULL;
	if (state->spill->stage_part_runs)
	{
		for (int p = 0; p <= state->spill->stage_parts; p++)
			held_order_end(&state->spill->stage_part_runs[p].order);
		ExecDropSingleTupleTableSlot(state->spill->stage_part_runs[state->spill->stage_parts].slot);
		pfree(state->spill->stage_part_runs);
	}
	state->spill->stage_part_runs = NULL;
	state->spill->stage_parts = 0;
}
