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
 * and its restore lie the rows of one key and the row after them, so the
 * record holds two runs; any other caller is served too, the record growing
 * with the distinct values read since its mark.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "node/mark_rows.h"

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
	ValueRun   *runs;			/* the rows since the mark */
	int			nruns;
	int			maxruns;
	int			next;			/* replaying: the run of the next row, and */
	int64		offset;			/* its rows given already; reading anew:
								 * next is nruns and offset 0 */
	int64		replayed;		/* rows given again, in all */
};

MarkRows *
mark_rows_create(void)
{
	MarkRows   *marks = palloc0(sizeof(MarkRows));

	marks->maxruns = 4;
	marks->runs = palloc(sizeof(ValueRun) * marks->maxruns);
	return marks;
}

void
mark_rows_mark(MarkRows *marks)
{
	if (!marks->marked || marks->next >= marks->nruns)
		marks->nruns = 0;
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
	marks->next = 0;
	marks->offset = 0;
}

void
mark_rows_reset(MarkRows *marks)
{
	marks->marked = false;
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

	if (!marks->marked)
		return;
	Assert(marks->next == marks->nruns && marks->offset == 0);
	value = slot_getattr(slot, 1, &isnull);
	if (last != NULL && last->isnull == isnull &&
		(isnull || last->value == value))
	{
		last->count++;
		return;
	}
	if (marks->nruns == marks->maxruns)
	{
		marks->maxruns *= 2;
		marks->runs = repalloc(marks->runs, sizeof(ValueRun) * marks->maxruns);
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
	return sizeof(MarkRows) + sizeof(ValueRun) * marks->maxruns;
}
