/*-------------------------------------------------------------------------
 *
 * tie_order.c
 *	  Ordering rows that the engine's keys leave tied, by the remaining
 *	  sort keys, with PostgreSQL's own comparators.
 *
 * The engines sort rows by their leading encoded keys; rows equal in those
 * (and rows whose leading key is NULL) are then ordered here, group by
 * group, the way tuplesort orders its tuples: the first remaining key of
 * each row is fetched once, into an array of (key, row) entries, and turned
 * into an abbreviated key where the type's sort support offers one (text,
 * numeric, uuid, ...); the entries are sorted with the abbreviated
 * comparator, ties settled by the full comparator and then the later keys.
 * As in tuplesort, abbreviation is given up when its keys turn out not to
 * tell the values apart.
 *
 * Every comparison checks for interrupts, so that a cancel stops even one
 * long group at once.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "node/rows/row_store.h"
#include "node/rows/tie_order.h"

/* Rows between interrupt checks while keys are abbreviated. */
#define CONVERT_CHUNK	1024

struct TiedRow
{
	Datum		datum1;			/* the first key: abbreviated, or the value */
	uint32		row;			/* the row's number in the rows array */
	bool		isnull1;
};

/* What the comparator of one sort needs. */
typedef struct TieRun
{
	TieOrder   *order;
	MinimalTuple *rows;
	int			firstkey;
	SortSupport lead;			/* the first key's comparator */
	bool		abbreviated;	/* datum1 holds abbreviated keys */
} TieRun;

void
tie_order_init(TieOrder *order, TupleDesc desc, int nkeys,
			   const AttrNumber *attnos, SortSupport ssups,
			   const Oid *sortops, const Oid *collations,
			   const bool *nullsfirst)
{
	memset(order, 0, sizeof(TieOrder));
	order->desc = desc;
	order->nkeys = nkeys;
	order->attnos = attnos;
	order->ssups = ssups;
	order->sortops = sortops;
	order->collations = collations;
	order->nullsfirst = nullsfirst;
	order->cxt = CurrentMemoryContext;
	order->leads = palloc0(sizeof(SortSupportData) * nkeys);
	order->lead_ready = palloc0(sizeof(bool) * nkeys);
	order->abbrev_count = palloc0(sizeof(int64) * nkeys);
	order->abbrev_next = palloc0(sizeof(int64) * nkeys);
}

void
tie_order_done(TieOrder *order)
{
	if (order->entries)
		pfree(order->entries);
	order->entries = NULL;
	order->capacity = 0;
}

Tuplesortstate *
tie_order_tuplesort(const TieOrder *order, int work_mem_kb, int sortopt)
{
	return tuplesort_begin_heap(order->desc, order->nkeys, (AttrNumber *) order->attnos,
								(Oid *) order->sortops, (Oid *) order->collations,
								(bool *) order->nullsfirst, work_mem_kb, NULL, sortopt);
}

int64
tie_order_tuplesort_disk_kb(Tuplesortstate *sort)
{
	TuplesortInstrumentation stats;

	tuplesort_get_stats(sort, &stats);
	return stats.spaceType == SORT_SPACE_TYPE_DISK ? stats.spaceUsed : 0;
}

int64
tie_order_tuplesort_end(Tuplesortstate *sort)
{
	int64		disk_kb = tie_order_tuplesort_disk_kb(sort);

	tuplesort_end(sort);
	return disk_kb;
}

/* The comparator of key k as the first key of a sort, abbreviating. */
static SortSupport
lead_comparator(TieOrder *order, int k)
{
	SortSupport lead = &order->leads[k];

	if (!order->lead_ready[k])
	{
		lead->ssup_cxt = order->cxt;
		lead->ssup_collation = order->collations[k];
		lead->ssup_nulls_first = order->nullsfirst[k];
		lead->ssup_attno = order->attnos[k];
		lead->abbreviate = true;
		PrepareSortSupportFromOrderingOp(order->sortops[k], lead);
		order->abbrev_next[k] = 10;
		order->lead_ready[k] = true;
	}
	return lead;
}

/* Abbreviation does not pay: compare the values themselves from now on. */
static void
stop_abbreviating(SortSupport lead)
{
	lead->comparator = lead->abbrev_full_comparator;
	lead->abbrev_converter = NULL;
	lead->abbrev_abort = NULL;
	lead->abbrev_full_comparator = NULL;
}

static inline Datum
row_value(TieRun *run, uint32 row, int k, bool *isnull)
{
	TieOrder   *order = run->order;

	return minimal_tuple_getattr(run->rows[row], order->attnos[k], order->desc, isnull);
}

static inline int
compare_tied(const TiedRow *a, const TiedRow *b, TieRun *run)
{
	TieOrder   *order = run->order;
	int			cmp;

	CHECK_FOR_INTERRUPTS();
	cmp = ApplySortComparator(a->datum1, a->isnull1, b->datum1, b->isnull1, run->lead);
	if (cmp != 0)
		return cmp;
	if (run->abbreviated)
	{
		bool		anull;
		bool		bnull;
		Datum		av = row_value(run, a->row, run->firstkey, &anull);
		Datum		bv = row_value(run, b->row, run->firstkey, &bnull);

		cmp = ApplySortAbbrevFullComparator(av, anull, bv, bnull, run->lead);
		if (cmp != 0)
			return cmp;
	}
	for (int k = run->firstkey + 1; k < order->nkeys; k++)
	{
		bool		anull;
		bool		bnull;
		Datum		av = row_value(run, a->row, k, &anull);
		Datum		bv = row_value(run, b->row, k, &bnull);

		cmp = ApplySortComparator(av, anull, bv, bnull, &order->ssups[k]);
		if (cmp != 0)
			return cmp;
	}
	return 0;
}

#define ST_SORT sort_tied_entries
#define ST_ELEMENT_TYPE TiedRow
#define ST_COMPARE(a, b, arg) compare_tied(a, b, arg)
#define ST_COMPARE_ARG_TYPE TieRun
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/*
 * Fills the entries of rows index[0..n-1] (or 0..n-1) with their first key,
 * abbreviated while that pays.
 */
static void
fill_entries(TieRun *run, TiedRow *entries, const uint32 *index, uint32 n)
{
	TieOrder   *order = run->order;
	SortSupport lead = run->lead;
	int			k = run->firstkey;

	run->abbreviated = (lead->abbrev_converter != NULL);
	for (uint32 i = 0; i < n; i++)
	{
		TiedRow    *e = &entries[i];

		if (i % CONVERT_CHUNK == 0)
			CHECK_FOR_INTERRUPTS();
		e->row = index ? index[i] : i;
		e->datum1 = row_value(run, e->row, k, &e->isnull1);
		if (!run->abbreviated || e->isnull1)
			continue;
		e->datum1 = lead->abbrev_converter(e->datum1, lead);
		if (++order->abbrev_count[k] < order->abbrev_next[k])
			continue;
		order->abbrev_next[k] *= 2;
		if (!lead->abbrev_abort(order->abbrev_count[k], lead))
			continue;

		/* the abbreviated keys do not tell the values apart: undo them */
		stop_abbreviating(lead);
		run->abbreviated = false;
		for (uint32 j = 0; j <= i; j++)
			entries[j].datum1 = row_value(run, entries[j].row, k, &entries[j].isnull1);
	}
}

int
tie_order_compare(TieOrder *order, MinimalTuple a, MinimalTuple b, int firstkey)
{
	return tie_order_compare_keys(order, a, b, firstkey, order->nkeys);
}

int
tie_order_compare_keys(TieOrder *order, MinimalTuple a, MinimalTuple b, int firstkey,
					   int endkey)
{
	for (int k = firstkey; k < endkey; k++)
	{
		bool		anull;
		bool		bnull;
		Datum		av = minimal_tuple_getattr(a, order->attnos[k], order->desc, &anull);
		Datum		bv = minimal_tuple_getattr(b, order->attnos[k], order->desc, &bnull);
		int			cmp = ApplySortComparator(av, anull, bv, bnull, &order->ssups[k]);

		if (cmp != 0)
			return cmp;
	}
	return 0;
}

void
tie_order_sort(TieOrder *order, MinimalTuple *rows, uint32 *index, uint32 n,
			   int firstkey, MemoryContext cxt)
{
	TieRun		run;
	MemoryContext oldcxt;

	if (n < 2 || firstkey >= order->nkeys)
		return;
	if (order->capacity < n)
	{
		if (order->entries)
			pfree(order->entries);
		order->capacity = n;
		order->entries = MemoryContextAllocHuge(cxt, sizeof(TiedRow) * order->capacity);
	}

	run.order = order;
	run.rows = rows;
	run.firstkey = firstkey;
	run.lead = lead_comparator(order, firstkey);

	/* comparators may detoast into the current context: use the sort's */
	oldcxt = MemoryContextSwitchTo(cxt);
	fill_entries(&run, order->entries, index, n);
	sort_tied_entries(order->entries, n, &run);
	MemoryContextSwitchTo(oldcxt);

	if (index)
	{
		for (uint32 i = 0; i < n; i++)
			index[i] = order->entries[i].row;
	}
	else
	{
		MinimalTuple *copy = MemoryContextAllocHuge(cxt, sizeof(MinimalTuple) * n);

		memcpy(copy, rows, sizeof(MinimalTuple) * n);
		for (uint32 i = 0; i < n; i++)
			rows[i] = copy[order->entries[i].row];
		pfree(copy);
	}
}
