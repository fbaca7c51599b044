/*-------------------------------------------------------------------------
 *
 * sorted_runs.c
 *	  Sorted runs of rows on temporary tapes, and their merge (sorted_runs.h).
 *
 * On a tape, each row is what tuplesort writes for it (writetup_heap, with
 * no trailing length): a 32-bit word, the length of the tuple's body, then
 * the body, the MinimalTuple less its first MINIMAL_TUPLE_DATA_OFFSET bytes
 * (its length and padding).  The word's top bit says whether the row has a
 * merge key, which is made again from the row as it is read back.  The
 * rows of a run are counted, so no word marks its end.
 *
 * The merge keeps one cursor per run, each holding the run's next row, in a
 * binary heap ordered by merge key and then by the comparators.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "commands/tablespace.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "node/sorted_runs.h"

/* Rows between interrupt checks while runs are merged. */
#define MERGE_CHECK_ROWS	4096

typedef struct SortedRun
{
	LogicalTape *tape;			/* NULL: the run in memory */
	int64		rows;
} SortedRun;

/* A row's word on tape: the length of its body, and this if it has a key. */
#define RUN_ROW_KEYED		((uint32) 1 << 31)

struct RunCursor
{
	LogicalTape *tape;			/* NULL: the run in memory */
	int64		pos;			/* the run in memory: its next row */
	int64		left;			/* rows not read yet */
	bool		haskey;
	uint64		key;
	MinimalTuple tuple;			/* the run's current row */
	Size		space;			/* allocated for tuple */
};

void
sorted_runs_begin(SortedRuns *runs, MemoryContext parent, TieOrder *ties,
				  int key_firstkey, const KeyColumn *lead)
{
	MemoryContext oldcxt;

	memset(runs, 0, sizeof(SortedRuns));
	runs->cxt = AllocSetContextCreate(parent, "GpuSort sorted runs",
									  ALLOCSET_DEFAULT_SIZES);
	runs->ties = ties;
	runs->key_firstkey = key_firstkey;
	runs->lead = lead;
	runs->maxruns = 16;
	runs->runs = MemoryContextAlloc(runs->cxt, sizeof(SortedRun) * runs->maxruns);
	runs->last = -1;

	/* temp_tablespaces, as tuplesort does before it makes its tapes */
	PrepareTempTablespaces();
	oldcxt = MemoryContextSwitchTo(runs->cxt);
	runs->tapes = LogicalTapeSetCreate(false, NULL, -1);
	MemoryContextSwitchTo(oldcxt);
}

void
sorted_runs_start_run(SortedRuns *runs)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(runs->cxt);

	Assert(runs->writing == NULL);
	runs->writing = LogicalTapeCreate(runs->tapes);
	runs->writing_rows = 0;
	MemoryContextSwitchTo(oldcxt);
}

void
sorted_runs_put(SortedRuns *runs, MinimalTuple tuple, bool haskey)
{
	uint32		bodylen = tuple->t_len - MINIMAL_TUPLE_DATA_OFFSET;
	uint32		word = bodylen | (haskey ? RUN_ROW_KEYED : 0);
	MemoryContext oldcxt = MemoryContextSwitchTo(runs->cxt);	/* for the
																 * tape's buffer */

	if (bodylen & RUN_ROW_KEYED)
		elog(ERROR, "GpuSort row of %u bytes too large for a run", tuple->t_len);
	LogicalTapeWrite(runs->writing, (void *) &word, sizeof(word));
	LogicalTapeWrite(runs->writing, (char *) tuple + MINIMAL_TUPLE_DATA_OFFSET, bodylen);
	runs->writing_rows++;
	MemoryContextSwitchTo(oldcxt);
}

/* Adds a run as sorted_runs_end_run does, of the rows on a tape or in memory. */
static void
add_run(SortedRuns *runs, LogicalTape *tape, int64 rows)
{
	if (runs->nruns == runs->maxruns)
	{
		runs->maxruns *= 2;
		runs->runs = repalloc(runs->runs, sizeof(SortedRun) * runs->maxruns);
	}
	runs->runs[runs->nruns].tape = tape;
	runs->runs[runs->nruns].rows = rows;
	runs->nruns++;
}

void
sorted_runs_add_memory_run(SortedRuns *runs, const SortedMemoryRun *run)
{
	Assert(runs->memory.rows == NULL);
	runs->memory = *run;
	add_run(runs, NULL, run->nrows);
}

void
sorted_runs_end_run(SortedRuns *runs)
{
	/*
	 * Flush the run and give back its write buffer now: a buffer of one
	 * block is read from it, allocated only when the merge reads it, so
	 * that runs waiting for the merge hold no memory.
	 */
	LogicalTapeRewindForRead(runs->writing, BLCKSZ);
	add_run(runs, runs->writing, runs->writing_rows);
	runs->writing = NULL;
	runs->disk_blocks = Max(runs->disk_blocks, LogicalTapeSetBlocks(runs->tapes));
}

/* The run kept in memory: its next row. */
static bool
memory_read(SortedRuns *runs, RunCursor *cursor)
{
	const SortedMemoryRun *mem = &runs->memory;
	int64		pos = cursor->pos;

	if (cursor->left == 0)
		return false;
	cursor->pos++;
	cursor->tuple = mem->rows[pos];
	cursor->haskey = mem->keys && pos >= mem->keyed_first &&
		pos < mem->keyed_first + mem->nkeyed;
	if (cursor->haskey)
		cursor->key = mem->keys[mem->perm[pos - mem->keyed_first]];
	cursor->left--;
	return true;
}

/* The merge key of a row read back: its leading value's key, as the run's. */
static inline uint64
merge_key(SortedRuns *runs, MinimalTuple tuple)
{
	bool		isnull;
	Datum		value = minimal_tuple_getattr(tuple, runs->lead->attno,
											  runs->ties->desc, &isnull);

	Assert(!isnull);
	return key_column_encode(runs->lead, value);
}

/* Reads a cursor's next row; false at the end of its run. */
static bool
cursor_read(SortedRuns *runs, RunCursor *cursor)
{
	uint32		word;
	uint32		bodylen;
	Size		len;

	if (cursor->tape == NULL)
		return memory_read(runs, cursor);
	if (cursor->left == 0)
		return false;
	if (LogicalTapeRead(cursor->tape, &word, sizeof(word)) != sizeof(word))
		elog(ERROR, "unexpected end of a GpuSort run");
	bodylen = word & ~RUN_ROW_KEYED;
	len = (Size) bodylen + MINIMAL_TUPLE_DATA_OFFSET;
	if (len > cursor->space)
	{
		if (cursor->tuple)
			pfree(cursor->tuple);
		cursor->space = Max(len, 2 * cursor->space);
		cursor->tuple = MemoryContextAllocHuge(runs->cxt, cursor->space);
	}
	if (LogicalTapeRead(cursor->tape, (char *) cursor->tuple + MINIMAL_TUPLE_DATA_OFFSET,
						bodylen) != bodylen)
		elog(ERROR, "unexpected end of a GpuSort run");
	cursor->tuple->t_len = len;
	cursor->haskey = (word & RUN_ROW_KEYED) != 0;
	if (cursor->haskey)
		cursor->key = merge_key(runs, cursor->tuple);
	cursor->left--;
	return true;
}

/* Compares the rows of two cursors, as Sort orders them. */
static inline int
compare_cursors(SortedRuns *runs, int a, int b)
{
	RunCursor  *ca = &runs->cursors[a];
	RunCursor  *cb = &runs->cursors[b];

	if (ca->haskey && cb->haskey)
	{
		if (ca->key != cb->key)
			return ca->key < cb->key ? -1 : 1;
		return tie_order_compare(runs->ties, ca->tuple, cb->tuple, runs->key_firstkey);
	}
	return tie_order_compare(runs->ties, ca->tuple, cb->tuple, 0);
}

/* Moves the heap's entry at i down to its place. */
static void
sift_down(SortedRuns *runs, int i)
{
	int		   *heap = runs->heap;
	int			entry = heap[i];

	for (;;)
	{
		int			child = 2 * i + 1;

		if (child >= runs->nheap)
			break;
		if (child + 1 < runs->nheap &&
			compare_cursors(runs, heap[child + 1], heap[child]) < 0)
			child++;
		if (compare_cursors(runs, entry, heap[child]) <= 0)
			break;
		heap[i] = heap[child];
		i = child;
	}
	heap[i] = entry;
}

/* Starts merging runs[first .. first + n - 1]. */
static void
merge_open(SortedRuns *runs, int first, int n)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(runs->cxt);	/* for the
																 * tapes' buffers */

	runs->cursors = MemoryContextAllocZero(runs->cxt, sizeof(RunCursor) * n);
	runs->heap = MemoryContextAlloc(runs->cxt, sizeof(int) * n);
	runs->nheap = 0;
	runs->last = -1;
	for (int i = 0; i < n; i++)
	{
		RunCursor  *cursor = &runs->cursors[i];

		cursor->tape = runs->runs[first + i].tape;
		cursor->left = runs->runs[first + i].rows;
		if (cursor_read(runs, cursor))
			runs->heap[runs->nheap++] = i;
	}
	for (int i = runs->nheap / 2 - 1; i >= 0; i--)
		sift_down(runs, i);
	MemoryContextSwitchTo(oldcxt);
	runs->merge_memory = Max(runs->merge_memory,
							 MemoryContextMemAllocated(runs->cxt, true));
}

/* The merge's next row and its cursor, or NULL at the end. */
static RunCursor *
merge_pop(SortedRuns *runs)
{
	if (runs->last >= 0)
	{
		/* the row returned last is no longer needed: replace it */
		if (cursor_read(runs, &runs->cursors[runs->last]))
			sift_down(runs, 0);
		else
		{
			runs->heap[0] = runs->heap[--runs->nheap];
			if (runs->nheap > 0)
				sift_down(runs, 0);
		}
	}
	if (runs->nheap == 0)
	{
		runs->last = -1;
		return NULL;
	}
	runs->last = runs->heap[0];
	if (++runs->merged % MERGE_CHECK_ROWS == 0)
		CHECK_FOR_INTERRUPTS();
	return &runs->cursors[runs->last];
}

/* Closes the tapes of a finished merge of n runs from first. */
static void
merge_close(SortedRuns *runs, int first, int n)
{
	for (int i = 0; i < n; i++)
	{
		if (runs->cursors[i].tape == NULL)
			continue;			/* the run in memory: its rows are not ours */
		if (runs->cursors[i].tuple)
			pfree(runs->cursors[i].tuple);
		LogicalTapeClose(runs->cursors[i].tape);
	}
	pfree(runs->cursors);
	pfree(runs->heap);
	runs->cursors = NULL;
	runs->heap = NULL;
	memmove(&runs->runs[first], &runs->runs[first + n],
			sizeof(SortedRun) * (runs->nruns - first - n));
	runs->nruns -= n;
}

static int
compare_run_rows(const void *a, const void *b)
{
	int64		ra = ((const SortedRun *) a)->rows;
	int64		rb = ((const SortedRun *) b)->rows;

	return (ra > rb) - (ra < rb);
}

void
sorted_runs_merge_begin(SortedRuns *runs, Size budget)
{
	/* the runs whose read buffers, a block each, fit the budget */
	int			order = Max(2, (int) Min(budget * 9 / 10 / BLCKSZ, (Size) INT_MAX / 2));

	runs->runs_written = runs->nruns;
	while (runs->nruns > order)
	{
		/* merge the smallest runs into one, just enough of them */
		int			n = Min(runs->nruns - order + 1, order);
		RunCursor  *cursor;

		qsort(runs->runs, runs->nruns, sizeof(SortedRun), compare_run_rows);
		merge_open(runs, 0, n);
		sorted_runs_start_run(runs);
		while ((cursor = merge_pop(runs)) != NULL)
			sorted_runs_put(runs, cursor->tuple, cursor->haskey);
		merge_close(runs, 0, n);
		sorted_runs_end_run(runs);
		runs->early_merges++;
	}

	merge_open(runs, 0, runs->nruns);
	runs->merged = 0;
}

MinimalTuple
sorted_runs_merge_next(SortedRuns *runs)
{
	RunCursor  *cursor = merge_pop(runs);

	return cursor ? cursor->tuple : NULL;
}

void
sorted_runs_end(SortedRuns *runs)
{
	if (runs->cxt == NULL)
		return;
	LogicalTapeSetClose(runs->tapes);
	MemoryContextDelete(runs->cxt);
	runs->cxt = NULL;
}
