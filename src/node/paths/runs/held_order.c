/*-------------------------------------------------------------------------
 *
 * held_order.c
 *	  The rows an engine holding a GpuSort node's input hands back, in the
 *	  order of the sort keys (held_order.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "keys/collation.h"
#include "node/paths/runs/held_order.h"

/* Rows of a group between interrupt checks. */
#define GROUP_CHECK_ROWS	(64 * 1024)

/* The most rows of a batch of groups ordered on threads (fill_batch). */
#define BATCH_ROWS			(32 * 1024)

void
held_order_begin(HeldOrder *order, HeldRowsFn next_rows, void *arg, Size tail,
				 int nwords, const KeyColumn *columns, int tie_key,
				 TieOrder *ties, Size budget, Size batch_bytes, int64 *tied_rows,
				 int64 *disk_kb)
{
	memset(order, 0, sizeof(HeldOrder));
	/*
	 * The rows are grouped by the words up to the tie key's: a NULL that a
	 * key's words leave no room for ties with the end of its range
	 * (store_holdable), whatever the later words say.
	 */
	while (nwords > 1 && columns[nwords - 1].keyno > tie_key)
		nwords--;
	order->next_rows = next_rows;
	order->arg = arg;
	order->tail = tail;
	order->nwords = nwords;
	order->columns = columns;
	order->tie_key = tie_key;
	order->ties = ties;
	order->budget = budget;
	order->batch_bytes = batch_bytes;
	order->tied_rows = tied_rows;
	order->disk_kb = disk_kb;
	order->home = CurrentMemoryContext;
	if (tail > 0)
		order->cxt = AllocSetContextCreate(CurrentMemoryContext, "GpuSort held ties",
										   ALLOCSET_DEFAULT_SIZES);
	order->batched = tail > 0 &&
		text_ties_init(&order->text, ties, columns, nwords, tie_key);
}

/* The key words that follow a held tuple. */
static inline const uint64 *
row_key(MinimalTuple tuple)
{
	return (const uint64 *) ((const char *) tuple + MAXALIGN(tuple->t_len));
}

/* The next row the engine handed back, or NULL after the last. */
static MinimalTuple
read_row(HeldOrder *order)
{
	MinimalTuple tuple;

	if (order->left == 0)
	{
		order->left = order->next_rows(order->arg, &order->row);
		if (order->left == 0)
			return NULL;
	}
	tuple = (MinimalTuple) order->row;
	order->row += MAXALIGN(tuple->t_len) + order->tail;
	order->left--;
	return tuple;
}

/* *buffer (of *size bytes), grown to need bytes. */
static char *
buffer_for(HeldOrder *order, char **buffer, Size *size, Size need)
{
	if (need > *size)
	{
		if (*buffer)
			pfree(*buffer);
		*size = Max(need, 2 * *size);
		*buffer = MemoryContextAlloc(order->home, *size);
	}
	return *buffer;
}

/*
 * The row read ahead, where the next read may replace the buffer it lies
 * in: a copy of it.
 */
static MinimalTuple
keep_ahead(HeldOrder *order)
{
	Size		size = MAXALIGN(order->ahead->t_len) + order->tail;

	if (order->left > 0)
		return order->ahead;
	return memcpy(buffer_for(order, &order->spare, &order->spare_size, size),
				  order->ahead, size);
}

/* A pair of rows that strxfrm() keys put in the wrong order: an error. */
static void
report_inversion(int keyno)
{
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("GpuSort found strxfrm() and strcoll() disagreeing on the order of two values of sort key %d",
					keyno + 1),
			 errdetail("The rows were held with strxfrm() keys, and those already returned cannot be ordered again."),
			 errhint("Sort by this column under an ICU collation, or set gpusort.device = cpu for this query.")));
}

/*
 * The column of the first of a's key words that b's differ in (the last
 * word where none does).
 */
static const KeyColumn *
first_difference(HeldOrder *order, MinimalTuple a, MinimalTuple b)
{
	const uint64 *ka = row_key(a);
	const uint64 *kb = row_key(b);
	int			w = 0;

	while (w < order->nwords - 1 && ka[w] == kb[w])
		w++;
	return &order->columns[w];
}

/*
 * a and b, next to each other, hold different key words: where the first
 * that differs is of a strxfrm() key, is a before b by the comparator too?
 */
static void
check_pair(HeldOrder *order, MinimalTuple a, MinimalTuple b)
{
	const KeyColumn *column = first_difference(order, a, b);

	if (column->xfrm == NULL || column->xfrm->icu)
		return;
	/* the words before are equal: compare from the key they belong to */
	if (tie_order_compare(order->ties, a, b, column->keyno) > 0)
		report_inversion(column->keyno);
}

/* A group over the budget: its rows so far go to tuplesort. */
static void
group_to_tuplesort(HeldOrder *order)
{
	TieOrder   *ties = order->ties;

	order->big = tie_order_tuplesort(ties, (int) (order->budget / 1024), TUPLESORT_NONE);
	if (order->big_slot == NULL)
		order->big_slot = MakeSingleTupleTableSlot(ties->desc, &TTSOpsMinimalTuple);
	for (uint32 i = 0; i < order->ngroup; i++)
		tuplesort_puttupleslot(order->big,
							   ExecStoreMinimalTuple(order->group[i], order->big_slot, false));
	ExecClearTuple(order->big_slot);
	MemoryContextReset(order->cxt);
	order->group = NULL;
	order->ngroup = 0;
	order->capacity = 0;
}

/* Adds a row to the group: a copy, or to tuplesort's. */
static void
group_add(HeldOrder *order, MinimalTuple tuple)
{
	MinimalTuple copy;

	if (order->big)
	{
		tuplesort_puttupleslot(order->big,
							   ExecStoreMinimalTuple(tuple, order->big_slot, false));
		ExecClearTuple(order->big_slot);
		return;
	}
	if (order->ngroup == order->capacity)
	{
		order->capacity = Max(64, order->capacity * 2);
		order->group = order->group ?
			repalloc_huge(order->group, sizeof(MinimalTuple) * order->capacity) :
			MemoryContextAllocHuge(order->cxt, sizeof(MinimalTuple) * order->capacity);
	}
	/* (with its key, for the check after the group) */
	copy = MemoryContextAlloc(order->cxt, MAXALIGN(tuple->t_len) + order->tail);
	memcpy(copy, tuple, MAXALIGN(tuple->t_len) + order->tail);
	order->group[order->ngroup++] = copy;
	order->group_bytes += GetMemoryChunkSpace(copy);
	if (order->group_bytes + sizeof(MinimalTuple) * order->capacity > order->budget)
		group_to_tuplesort(order);
}

/* Frees the rows of the group (or batch) returned, to read the next. */
static void
empty_group(HeldOrder *order)
{
	MemoryContextReset(order->cxt);
	order->group = NULL;
	order->ngroup = 0;
	order->capacity = 0;
	order->next = 0;
	order->group_bytes = 0;
	order->starts = NULL;
	order->check = NULL;
	order->ngroups = 0;
	order->groups_capacity = 0;
}

/* Starts the group (or the batch's next group) with first, and its key. */
static void
group_start(HeldOrder *order, MinimalTuple first)
{
	memcpy(order->key, row_key(first), sizeof(uint64) * order->nwords);
	group_add(order, first);
}

/*
 * Adds next (read already, or NULL) and the rows after it to the group
 * while they have its key words; returns the row after them, or NULL.
 */
static MinimalTuple
group_rest(HeldOrder *order, MinimalTuple next)
{
	Size		keybytes = sizeof(uint64) * order->nwords;

	while (next != NULL && memcmp(row_key(next), order->key, keybytes) == 0)
	{
		group_add(order, next);
		if ((order->ngroup + 1) % GROUP_CHECK_ROWS == 0)
			CHECK_FOR_INTERRUPTS();
		next = read_row(order);
	}
	return next;
}

/*
 * Reads the group that starts with first, whose key is the next row's too
 * (second), and the row after it, and orders the group.
 */
static void
read_group(HeldOrder *order, MinimalTuple first, MinimalTuple second)
{
	MinimalTuple tuple;

	empty_group(order);
	group_start(order, first);
	tuple = group_rest(order, second);
	order->ahead = tuple;
	if (order->big)
	{
		tuplesort_performsort(order->big);
		return;
	}
	*order->tied_rows += order->ngroup;
	tie_order_sort(order->ties, order->group, NULL, order->ngroup, order->tie_key,
				   order->cxt);
	tie_order_done(order->ties);	/* (its scratch is in the group's memory) */
	if (tuple != NULL)
		check_pair(order, order->group[order->ngroup - 1], tuple);
}

/*
 * The next row of a group over the budget, or NULL after its last, which
 * is then checked against the row after the group.
 */
static MinimalTuple
big_next(HeldOrder *order)
{
	bool		shouldfree;
	MinimalTuple tuple;
	char	   *last;
	Size		keybytes = sizeof(uint64) * order->nwords;

	if (tuplesort_gettupleslot(order->big, true, false, order->big_slot, NULL))
	{
		(*order->tied_rows)++;
		tuple = ExecFetchSlotMinimalTuple(order->big_slot, &shouldfree);
		/* (tuplesort's rows carry no key: the group's is theirs) */
		last = buffer_for(order, &order->big_last, &order->big_last_size,
						  MAXALIGN(tuple->t_len) + order->tail);
		memcpy(last, tuple, tuple->t_len);
		memcpy(last + MAXALIGN(tuple->t_len), order->key, keybytes);
		return tuple;
	}
	*order->disk_kb += tie_order_tuplesort_end(order->big);
	order->big = NULL;
	if (order->ahead != NULL && order->big_last != NULL)
		check_pair(order, (MinimalTuple) order->big_last, order->ahead);
	return NULL;
}

/* Starts a group of the batch at its next row; check: see HeldOrder. */
static void
start_batch_group(HeldOrder *order, bool check)
{
	if (order->ngroups + 1 >= order->groups_capacity)
	{
		order->groups_capacity = Max(256, 2 * order->groups_capacity);
		order->starts = order->starts ?
			repalloc(order->starts, sizeof(uint32) * order->groups_capacity) :
			MemoryContextAlloc(order->cxt, sizeof(uint32) * order->groups_capacity);
		order->check = order->check ?
			repalloc(order->check, sizeof(bool) * order->groups_capacity) :
			MemoryContextAlloc(order->cxt, sizeof(bool) * order->groups_capacity);
	}
	order->starts[order->ngroups] = order->ngroup;
	order->check[order->ngroups] = check;
	order->ngroups++;
}

/*
 * Reads whole groups into the batch (group[]), up to BATCH_ROWS rows or
 * batch_bytes, and orders them on threads; a group over the budget
 * takes the batch to tuplesort (order->big).  Checks the pair of the last
 * batch's last row and this one's first.
 */
static void
fill_batch(HeldOrder *order)
{
	bool		prev = order->ngroup > 0;
	uint32		bad;

	if (prev)
	{
		MinimalTuple last = order->group[order->ngroup - 1];
		Size		size = MAXALIGN(last->t_len) + order->tail;

		memcpy(buffer_for(order, &order->prev_last, &order->prev_last_size, size),
			   last, size);
	}
	empty_group(order);
	while (order->ngroup < BATCH_ROWS && order->group_bytes < order->batch_bytes)
	{
		if (order->ahead == NULL && (order->ahead = read_row(order)) == NULL)
			break;
		/* (the pair before a group is checked where it first differs in the text) */
		start_batch_group(order, order->ngroup > 0 &&
						  first_difference(order, order->group[order->ngroup - 1],
										   order->ahead)->keyno == order->text.column->keyno);
		/* (ahead is copied into the group before the next read) */
		group_start(order, order->ahead);
		order->ahead = group_rest(order, read_row(order));
		if (order->big)
		{
			tuplesort_performsort(order->big);
			return;
		}
	}
	if (order->ngroup == 0)
		return;
	order->starts[order->ngroups] = order->ngroup;
	for (uint32 g = 0; g < order->ngroups; g++)
		if (order->starts[g + 1] - order->starts[g] > 1)
			*order->tied_rows += order->starts[g + 1] - order->starts[g];
	bad = text_ties_order(&order->text, order->group, order->ngroup, order->starts,
						  order->check, order->ngroups, order->cxt);
	if (bad > 0)
		report_inversion(order->text.column->keyno);
	if (prev)
		check_pair(order, (MinimalTuple) order->prev_last, order->group[0]);
}

MinimalTuple
held_order_next(HeldOrder *order)
{
	MinimalTuple first;
	MinimalTuple second;

	if (order->tail == 0)
		return read_row(order);
	if (order->next < order->ngroup)
		return order->group[order->next++];
	if (order->batched)
	{
		if (order->big && (first = big_next(order)) != NULL)
			return first;
		fill_batch(order);
		if (order->big)
			return big_next(order);
		return order->next < order->ngroup ? order->group[order->next++] : NULL;
	}
	if (order->big && (first = big_next(order)) != NULL)
		return first;

	/* a new group, from the row read ahead */
	if (order->ahead == NULL && (order->ahead = read_row(order)) == NULL)
		return NULL;
	first = keep_ahead(order);
	second = read_row(order);
	if (second == NULL || memcmp(row_key(first), row_key(second),
								 sizeof(uint64) * order->nwords) != 0)
	{
		if (second != NULL)
			check_pair(order, first, second);
		order->ahead = second;
		return first;
	}
	read_group(order, first, second);
	if (order->big)
		return big_next(order);
	return order->group[order->next++];
}

void
held_order_end(HeldOrder *order)
{
	if (order->big)
		*order->disk_kb += tie_order_tuplesort_end(order->big);
	order->big = NULL;
	if (order->big_slot)
		ExecDropSingleTupleTableSlot(order->big_slot);
	order->big_slot = NULL;
	if (order->cxt)
		MemoryContextDelete(order->cxt);
	order->cxt = NULL;
	if (order->spare)
		pfree(order->spare);
	order->spare = NULL;
	if (order->big_last)
		pfree(order->big_last);
	order->big_last = NULL;
	if (order->prev_last)
		pfree(order->prev_last);
	order->prev_last = NULL;
	order->ahead = NULL;
	order->left = 0;
	order->ngroup = 0;
	order->next = 0;
}
