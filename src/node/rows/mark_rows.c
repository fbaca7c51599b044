/*-------------------------------------------------------------------------
 *
 * mark_rows.c
 *	  The rows a merge join may go back to, kept by a GpuSort whose rows are
 *	  their one sort key.
 *
 * A merge join marks its inner input at the first row of a group that
 * matches and goes back to that mark when the next outer row matches the
 * same group.  Where the inner Sort is expected to spill, the planner puts
 * a Material above it, which copies every row into a tuplestore so that the
 * sort can merge its runs on the fly.  A GpuSort whose rows are nothing but
 * a one-word key (keys_only) needs no such copy: the rows since the mark
 * are a few values, each repeated, kept here as runs of equal values, and
 * the planner drops that Material (planner.c).  Between a merge join's mark
 * and a restore lie the rows of one key and the row after them: two runs.
 * The join reads further past its mark only once its outer rows have passed
 * the marked key, after which it never goes back to that mark; so the
 * record keeps at most MARK_RUNS_KEPT runs, in a fixed array, and stops
 * recording past them until the next mark.  A restore past that limit
 * (which no merge join asks for) is an error, not wrong rows.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "node/rows/mark_rows.h"

/* The runs of equal values kept since a mark; a merge join needs two. */
#define MARK_RUNS_KEPT	64

/* Rows of one value, in order. */
typedef struct ValueRun
{
	Datum		value;
	bool		isnull;
	int64		count;
} ValueRun;

struct MarkRows
{
	bool		marked;			/* rows are recorded from the mark on */
	bool		overflowed;		/* more runs came than are kept */
	ValueRun	runs[MARK_RUNS_KEPT];	/* the rows since the mark */
	int			nruns;
	int			next;			/* replaying: the run of the next row, and */
	int64		offset;			/* its rows given already; reading anew:
								 * next is nruns and offset 0 */
	int64		replayed;		/* rows given again, in all */
};

MarkRows *
mark_rows_create(void)
{
	return palloc0(sizeof(MarkRows));
}

void
mark_rows_mark(MarkRows *marks)
{
	if (!marks->marked || marks->next >= marks->nruns)
	{
		marks->nruns = 0;
		marks->overflowed = false;
	}
	else
	{
		/* marked while replaying: the rows still to give stay */
		marks->runs[marks->next].count -= marks->offset;
		memmove(marks->runs, &marks->runs[marks->next],
				sizeof(ValueRun) * (marks->nruns - marks->next));
		marks->nruns -= marks->next;
	}
	marks->marked = true;
	marks->next = 0;
	marks->offset = 0;
}

void
mark_rows_restore(MarkRows *marks)
{
	if (!marks->marked)
		elog(ERROR, "GpuSort: restore without a mark");
	if (marks->overflowed)
		elog(ERROR, "GpuSort: restore to a mark more than %d distinct values back",
			 MARK_RUNS_KEPT);
	marks->next = 0;
	marks->offset = 0;
}

void
mark_rows_reset(MarkRows *marks)
{
	marks->marked = false;
	marks->overflowed = false;
	marks->nruns = 0;
	marks->next = 0;
	marks->offset = 0;
}

TupleTableSlot *
mark_rows_replay(MarkRows *marks, TupleTableSlot *slot)
{
	ValueRun   *run;

	if (marks->next >= marks->nruns)
		return NULL;
	run = &marks->runs[marks->next];
	ExecClearTuple(slot);
	slot->tts_values[0] = run->value;
	slot->tts_isnull[0] = run->isnull;
	ExecStoreVirtualTuple(slot);
	marks->replayed++;
	if (++marks->offset == run->count)
	{
		marks->next++;
		marks->offset = 0;
	}
	return slot;
}

void
mark_rows_add(MarkRows *marks, TupleTableSlot *slot)
{
	ValueRun   *last = marks->nruns > 0 ? &marks->runs[marks->nruns - 1] : NULL;
	Datum		value;
	bool		isnull;

	if (!marks->marked || marks->overflowed)
		return;
	Assert(marks->next == marks->nruns && marks->offset == 0);
	value = slot_getattr(slot, 1, &isnull);
	if (last != NULL && last->isnull == isnull &&
		(isnull || last->value == value))
	{
		last->count++;
		return;
	}
	if (marks->nruns == MARK_RUNS_KEPT)
	{
		marks->overflowed = true;	/* (the join is past its mark) */
		return;
	}
	marks->runs[marks->nruns].value = isnull ? (Datum) 0 : value;
	marks->runs[marks->nruns].isnull = isnull;
	marks->runs[marks->nruns].count = 1;
	marks->nruns++;
	marks->next = marks->nruns;
}

int64
mark_rows_replayed(const MarkRows *marks)
{
	return marks->replayed;
}

Size
mark_rows_memory(const MarkRows *marks)
{
	return sizeof(MarkRows);
}
