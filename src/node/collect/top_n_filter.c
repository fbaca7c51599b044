/*-------------------------------------------------------------------------
 *
 * top_n_filter.c
 *	  Rows that cannot be among the top N of their partition, dropped as the
 *	  input is read, for a GpuSort that computes row_number() or rank()
 *	  under a run condition "rn <= N" (window_plan.c): only the rest are
 *	  collected and sorted.
 *
 * A row that comes after N earlier rows of its partition in the sort's
 * order is not among the first N of the partition, and row_number() over
 * the rows kept numbers the first N of each partition as it would over all
 * of them; so whatever the filter keeps beyond them, the node's run
 * condition returns the same rows.  The same holds of rank() <= N, in the
 * window's order, for a row after N earlier rows that are not its peers.
 * Over rows in no particular order, few enter a partition's first N so
 * far: about N (1 + ln(R / N)) of a partition's R rows.
 *
 * Each partition (its key words) has a heap of the later key words of its
 * first N rows so far, the last on top; a row is kept where it comes before
 * the top of a full heap (and takes its place), where the heap is not full,
 * or, for rank(), where it equals the top.  The words are those of every
 * sort key (for rank(), of the window's), each with its direction, so the
 * filter applies only where those sort keys have exact codecs.
 * Rows with a NULL sort key are kept.  The heaps lie in one table of
 * fixed slots, a partition's key words and its heap each, which takes what
 * PostgreSQL's hash tables may: the node's memory budget times
 * hash_mem_multiplier, beside the row store's budget: at PostgreSQL's
 * defaults 8 MB, for the top 3 by one order key of a partition by one
 * (40 bytes a slot), about 150,000 partitions, as the table is used up to
 * 3/4 of its slots.  Once it is full, rows of partitions not seen yet are
 * kept without a heap.
 *
 * Under a Unique whose columns are the leading sort keys (DISTINCT ON,
 * DISTINCT), the same filter with N = 1 keeps no table: only the best row
 * so far of the group that the rows just before came from, as tables are
 * often stored in the order of such keys (TPC-H's lineitem by l_orderkey).
 * A row of that group that does not come before it in the sort's order is
 * dropped: a row kept before it is at least as good (where a later key
 * has prefix keys, only one that comes after it by their words).  Where
 * it drops fewer than one row in 16 of the first 65536, it stops looking.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_opfamily.h"
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/lsyscache.h"

#include "keys/key_column.h"
#include "node/collect/collect.h"
#include "node/collect/memory.h"
#include "node/collect/top_n_filter.h"
#include "node/node_state.h"
#include "node/plan/window.h"
#include "node/rows/row_store.h"
#include "util/cacheline.h"

/*
 * The partitions' heaps, in one table of slots addressed by a hash of the
 * partition's key words (open addressing, linear probing).  A slot is the
 * partition's key words, its rows so far (0: a free slot), then a max-heap
 * of the later key words of its first N rows so far, nwords words each.
 * Without PARTITION BY, the table is one slot.
 */
struct TopNFilter
{
	int64		n;				/* rows kept per partition */
	bool		peers_kept;		/* rank(): rows equal to the N-th are kept */
	int			ncolumns;		/* the key columns compared (key words):
								 * every sort key's, or, for rank(), the
								 * window's */
	const KeyColumn *columns;
	int			partition_words;	/* the first of them: the partition's
									 * keys, the slots' hash key */
	int			nwords;			/* the rest: a heap row's */
	Size		slot_words;		/* partition_words + 1 + n * nwords */
	uint64		max_capacity;	/* the most slots the budget allows */
	MemoryContext cxt;			/* where the table lies */
	uint64	   *slots;			/* the table, or NULL once ended: from a
								 * cache line's start, so that a slot of
								 * 64 bytes is one line (one miss a row) */
	void	   *slots_chunk;	/* the allocation it lies in */
	uint64		capacity;		/* slots */
	uint64		used;
	uint64	   *row_words;		/* the current row's key words */
	uint64	   *swap;			/* a heap row's words, to swap two */
	int64		dropped;		/* rows dropped (EXPLAIN ANALYZE) */

	/* under a Unique: the group of the rows just before, and its best */
	bool		consecutive;	/* this way, without a table */
	bool		ties_dropped;	/* the later words order rows whole */
	uint64	   *last;			/* its words, then its best row's */
	bool		have_last;		/* last is set */
	int64		seen;			/* rows seen, until it gives up or not */
	bool		given_up;		/* it dropped too few */
};

/* The rows after which a filter under a Unique that drops too few gives up. */
#define CONSECUTIVE_TRIAL_ROWS	65536

/*
 * Slots are used up to 3/4 of the table, then it grows; one is always
 * free, where a search for a partition not in it ends.
 */
#define MAX_FILL(capacity)	Min((capacity) - (capacity) / 4, (capacity) - 1)

/* The most bytes of a new table, which doubles as partitions come. */
#define FIRST_TABLE_BYTES	(64 * 1024)

/*
 * The rows a run condition keeps: N where it is f <= N (or < N + 1, or the
 * same written the other way round) over a column of the node's functions,
 * all of them row_number() or all rank() (*kind); else 0.
 */
static int64
run_condition_rows(WindowAgg *clause, List *funcs, int nsorted, WindowFuncKind *kind)
{
	int64		n = 0;
	ListCell   *lc;

	*kind = window_func_kind(linitial_node(WindowFunc, funcs));
	if (*kind != WINFUNC_ROW_NUMBER && *kind != WINFUNC_RANK)
		return 0;
	foreach(lc, funcs)
		if (window_func_kind(lfirst_node(WindowFunc, lc)) != *kind)
			return 0;
	foreach(lc, clause->runCondition)
	{
		OpExpr	   *op = lfirst(lc);
		Node	   *left,
				   *right;
		Const	   *limit;
		int			strategy;
		int64		value;
		int64		rows;

		if (!IsA(op, OpExpr) || list_length(op->args) != 2)
			return 0;
		left = linitial(op->args);
		right = lsecond(op->args);
		strategy = get_op_opfamily_strategy(op->opno, INTEGER_BTREE_FAM_OID);
		if (IsA(left, Const) && IsA(right, Var))
		{
			/* c > rn is rn < c */
			limit = (Const *) left;
			left = right;
			strategy = (strategy == BTGreaterStrategyNumber ? BTLessStrategyNumber :
						strategy == BTGreaterEqualStrategyNumber ? BTLessEqualStrategyNumber : 0);
		}
		else if (IsA(left, Var) && IsA(right, Const))
			limit = (Const *) right;
		else
			return 0;
		if (((Var *) left)->varattno <= nsorted || limit->constisnull)
			return 0;
		switch (limit->consttype)
		{
			case INT2OID:
				value = DatumGetInt16(limit->constvalue);
				break;
			case INT4OID:
				value = DatumGetInt32(limit->constvalue);
				break;
			case INT8OID:
				value = DatumGetInt64(limit->constvalue);
				break;
			default:
				return 0;
		}
		if (strategy == BTLessStrategyNumber)
			rows = value - 1;
		else if (strategy == BTLessEqualStrategyNumber)
			rows = value;
		else
			return 0;
		if (rows < 1)
			return 0;
		n = (n == 0) ? rows : Min(n, rows);
	}
	return n;
}

/*
 * The leading sort keys that the window's columns attnos[0 .. n - 1] are
 * (sorted_for_window: the partition columns lead the sort, then the order
 * columns; later keys only order peers).
 */
static int
leading_keys(GpuSortState *state, const AttrNumber *attnos, int n)
{
	int			nkeys = 0;

	for (int i = 0; i < n; i++)
		for (int k = 0; k < state->nkeys; k++)
			if (state->attnos[k] == attnos[i])
			{
				nkeys = Max(nkeys, k + 1);
				break;
			}
	return nkeys;
}

TopNFilter *
top_n_filter_begin(GpuSortState *state, WindowAgg *clause, List *funcs, int nsorted)
{
	TopNFilter *f;
	WindowFuncKind kind;
	int64		n;
	int			partition_keys;
	int			nkeys;
	int			ncolumns = 0;
	int			partition_words = 0;
	double		budget;

	if (clause == NULL || clause->runCondition == NIL || funcs == NIL ||
		(n = run_condition_rows(clause, funcs, nsorted, &kind)) == 0)
		return NULL;

	/*
	 * row_number() numbers the rows in the sort's order, every key of it;
	 * rank() counts the rows before a row's peers, in the window's order
	 */
	partition_keys = leading_keys(state, clause->partColIdx, clause->partNumCols);
	nkeys = kind != WINFUNC_RANK ? state->nkeys :
		Max(partition_keys, leading_keys(state, clause->ordColIdx, clause->ordNumCols));
	if (state->codec_keys < nkeys)
		return NULL;
	for (int c = 0; c < state->store.ncolumns; c++)
	{
		const KeyColumn *column = &state->store.columns[c];

		if (column->keyno >= nkeys)
			break;
		if (!column->codec->exact || column->xfrm)
			return NULL;
		ncolumns++;
		if (column->keyno < partition_keys)
			partition_words++;
	}

	f = palloc0(sizeof(TopNFilter));
	f->n = n;
	f->peers_kept = (kind == WINFUNC_RANK);
	f->ncolumns = ncolumns;
	f->columns = state->store.columns;
	f->partition_words = partition_words;
	f->nwords = ncolumns - partition_words;

	/*
	 * The table takes what PostgreSQL's hash tables may, the node's budget
	 * times hash_mem_multiplier, beside the row store's; without room for
	 * two partitions' slots, no filter
	 */
	budget = (double) node_memory_part(state, MEMORY_TOP_N);
	f->slot_words = partition_words + 1 + (Size) Min(n, budget) * f->nwords;
	if ((double) f->slot_words * sizeof(uint64) * 2 > budget)
	{
		pfree(f);
		return NULL;
	}
	f->max_capacity = partition_words == 0 ? 1 :
		(uint64) (budget / (sizeof(uint64) * f->slot_words));
	f->row_words = palloc(sizeof(uint64) * Max(f->ncolumns, 1));
	f->swap = palloc(sizeof(uint64) * Max(f->nwords, 1));
	f->cxt = CurrentMemoryContext;
	top_n_filter_reset(f);
	return f;
}

TopNFilter *
top_n_filter_begin_distinct(GpuSortState *state)
{
	const RowStore *store = &state->store;
	TopNFilter *f;
	int			partition_words;
	int			ncolumns;
	bool		exact = state->codec_keys == state->nkeys;
	const KeyColumn *last;

	if (state->distinct_keys == 0 || state->window != NULL ||
		(partition_words = row_store_group_columns(store, state->distinct_keys)) == 0)
		return NULL;
	/* the later columns up to strxfrm() or ICU keys, made after the collect */
	for (ncolumns = partition_words; ncolumns < store->ncolumns; ncolumns++)
	{
		if (store->columns[ncolumns].xfrm)
			break;
		exact &= store->columns[ncolumns].codec->exact;
	}
	last = &store->columns[ncolumns - 1];
	exact &= last->keyno == state->nkeys - 1 && last->word == last->codec->words - 1;

	f = palloc0(sizeof(TopNFilter));
	f->n = 1;
	f->consecutive = true;
	f->ties_dropped = exact;
	f->ncolumns = ncolumns;
	f->columns = store->columns;
	f->partition_words = partition_words;
	f->nwords = ncolumns - partition_words;
	f->row_words = palloc(sizeof(uint64) * ncolumns);
	f->last = palloc(sizeof(uint64) * ncolumns);
	top_n_filter_reset(f);
	return f;
}

bool
top_n_filter_is_distinct(const TopNFilter *f)
{
	return f->consecutive;
}

/*
 * A table of capacity free slots, from a cache line's start (*chunk: the
 * allocation it lies in).
 */
static uint64 *
new_slots(TopNFilter *f, uint64 capacity, void **chunk)
{
	*chunk = MemoryContextAllocExtended(f->cxt, sizeof(uint64) * f->slot_words * capacity +
										GPUSORT_CACHE_LINE,
										MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	return (uint64 *) TYPEALIGN(GPUSORT_CACHE_LINE, *chunk);
}

void
top_n_filter_reset(TopNFilter *f)
{
	f->dropped = 0;
	if (f->consecutive)
	{
		f->seen = 0;
		f->given_up = false;
		f->have_last = false;
		return;
	}
	top_n_filter_end(f);
	f->capacity = Min(f->max_capacity,
					  Max(2, FIRST_TABLE_BYTES / (sizeof(uint64) * f->slot_words)));
	f->slots = new_slots(f, f->capacity, &f->slots_chunk);
	f->used = 0;
	f->dropped = 0;
}

void
top_n_filter_end(TopNFilter *f)
{
	if (f->slots)
		pfree(f->slots_chunk);
	f->slots = NULL;
}

int64
top_n_filter_dropped(const TopNFilter *f)
{
	return f->dropped;
}

Size
top_n_filter_memory(const TopNFilter *f)
{
	return f->slots ? sizeof(uint64) * f->slot_words * f->capacity : 0;
}

/* Are a's words after b's in the sort's order? */
static inline bool
words_after(const uint64 *a, const uint64 *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] > b[i];
	return false;
}

/* A slot's rows so far, and row i of its heap: that row's words. */
#define SLOT_ROWS(f, slot)		((slot)[(f)->partition_words])
#define HEAP_ROW(f, slot, i)	((slot) + (f)->partition_words + 1 + (Size) (i) * (f)->nwords)

static inline void
swap_rows(TopNFilter *f, uint64 *slot, int64 i, int64 j)
{
	Size		bytes = sizeof(uint64) * f->nwords;

	memcpy(f->swap, HEAP_ROW(f, slot, i), bytes);
	memcpy(HEAP_ROW(f, slot, i), HEAP_ROW(f, slot, j), bytes);
	memcpy(HEAP_ROW(f, slot, j), f->swap, bytes);
}

/* Moves the slot's heap's top row down to its place. */
static void
sift_down(TopNFilter *f, uint64 *slot)
{
	int			n = f->nwords;
	int64		nrows = SLOT_ROWS(f, slot);
	int64		i = 0;

	for (;;)
	{
		int64		largest = i;
		int64		l = 2 * i + 1;
		int64		r = l + 1;

		if (l < nrows && words_after(HEAP_ROW(f, slot, l), HEAP_ROW(f, slot, largest), n))
			largest = l;
		if (r < nrows && words_after(HEAP_ROW(f, slot, r), HEAP_ROW(f, slot, largest), n))
			largest = r;
		if (largest == i)
			return;
		swap_rows(f, slot, i, largest);
		i = largest;
	}
}

/* Moves the slot's heap's last row up to its place. */
static void
sift_up(TopNFilter *f, uint64 *slot)
{
	int			n = f->nwords;
	int64		i = SLOT_ROWS(f, slot) - 1;

	while (i > 0)
	{
		int64		parent = (i - 1) / 2;

		if (!words_after(HEAP_ROW(f, slot, i), HEAP_ROW(f, slot, parent), n))
			return;
		swap_rows(f, slot, i, parent);
		i = parent;
	}
}

/* A 64-bit word's bits mixed (MurmurHash3's finalizer). */
static inline uint64
mix_word(uint64 x)
{
	x ^= x >> 33;
	x *= UINT64CONST(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64CONST(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

/* Are the partition words of a slot and a row's the same? */
static inline bool
same_partition(const TopNFilter *f, const uint64 *slot, const uint64 *key)
{
	for (int w = 0; w < f->partition_words; w++)
		if (slot[w] != key[w])
			return false;
	return true;
}

/*
 * Where a search for the partition whose key words are key starts in a
 * table of capacity slots: a hash of them, its high bits times capacity
 * (no division, where 128-bit products are at hand).
 */
static inline uint64
home_slot(const TopNFilter *f, uint64 capacity, const uint64 *key)
{
	uint64		hash = 0;

	for (int w = 0; w < f->partition_words; w++)
		hash = hash_combine64(hash, mix_word(key[w]));
#ifdef HAVE_INT128
	return (uint64) (((uint128) hash * capacity) >> 64);
#else
	return hash % capacity;
#endif
}

/*
 * The slot of the partition whose key words are key in a table of slots,
 * or the free one where it would go, searched from its home slot.
 */
static uint64 *
find_slot(TopNFilter *f, const uint64 *slots, uint64 capacity, const uint64 *key,
		  uint64 home)
{
	for (uint64 i = home;; i = (i + 1 == capacity ? 0 : i + 1))
	{
		const uint64 *slot = slots + i * f->slot_words;

		if (SLOT_ROWS(f, slot) == 0 || same_partition(f, slot, key))
			return (uint64 *) slot;
	}
}

/* Doubles the table, or less where the budget ends: false at its end. */
static bool
grow_slots(TopNFilter *f)
{
	uint64		capacity = Min(f->capacity * 2, f->max_capacity);
	uint64	   *slots;
	void	   *chunk;

	if (capacity == f->capacity)
		return false;
	slots = new_slots(f, capacity, &chunk);
	for (uint64 i = 0; i < f->capacity; i++)
	{
		const uint64 *slot = f->slots + i * f->slot_words;

		if (SLOT_ROWS(f, slot) > 0)
			memcpy(find_slot(f, slots, capacity, slot, home_slot(f, capacity, slot)),
				   slot, sizeof(uint64) * f->slot_words);
	}
	pfree(f->slots_chunk);
	f->slots = slots;
	f->slots_chunk = chunk;
	f->capacity = capacity;
	return true;
}

/*
 * The slot of the row's partition (its words in row_words, its home slot
 * home), taken for it if it has none; NULL where there is no room for
 * another partition.
 */
static uint64 *
partition_slot(TopNFilter *f, uint64 home)
{
	uint64	   *slot = find_slot(f, f->slots, f->capacity, f->row_words, home);

	if (SLOT_ROWS(f, slot) > 0)
		return slot;
	/* (without PARTITION BY, the one slot is the table) */
	if (f->partition_words > 0 && f->used + 1 > MAX_FILL(f->capacity))
	{
		if (!grow_slots(f))
			return NULL;
		slot = find_slot(f, f->slots, f->capacity, f->row_words,
						 home_slot(f, f->capacity, f->row_words));
	}
	memcpy(slot, f->row_words, sizeof(uint64) * f->partition_words);
	f->used++;
	return slot;
}

/*
 * The row's key words from column from up to to, each key's direction
 * applied (its partition's come first, then the rest); false where a key
 * is NULL.
 */
static bool
row_words(TopNFilter *f, TupleTableSlot *slot, int from, int to)
{
	for (int c = from; c < to; c++)
	{
		const KeyColumn *column = &f->columns[c];
		bool		isnull;
		Datum		value = slot_getattr(slot, column->attno, &isnull);
		uint64		key;

		if (isnull)
			return false;
		key = column->codec->encode(&column->part, value, column->word);
		f->row_words[c] = column->part.descending ? ~key : key;
	}
	return true;
}

/*
 * Is the row (its words in row_words, its partition's home slot home)
 * among its partition's first N so far?  Then its words join the
 * partition's heap, where there is room.
 */
static bool
among_first(TopNFilter *f, uint64 home)
{
	int			n = f->nwords;
	const uint64 *words = f->row_words + f->partition_words;
	uint64	   *slot = partition_slot(f, home);

	if (slot == NULL)
		return true;			/* no room for its partition: kept */
	if (SLOT_ROWS(f, slot) == f->n)
	{
		/*
		 * full: a row before the last of the first N takes its place; one
		 * after it is dropped; one equal to it is dropped by row_number()
		 * (its place among its equals is anyone's), kept by rank() (its
		 * rank is theirs)
		 */
		if (words_after(HEAP_ROW(f, slot, 0), words, n))
		{
			memcpy(HEAP_ROW(f, slot, 0), words, sizeof(uint64) * n);
			sift_down(f, slot);
			return true;
		}
		return f->peers_kept && !words_after(words, HEAP_ROW(f, slot, 0), n);
	}
	memcpy(HEAP_ROW(f, slot, SLOT_ROWS(f, slot)), words, sizeof(uint64) * n);
	SLOT_ROWS(f, slot)++;
	sift_up(f, slot);
	return true;
}

/*
 * A filter under a Unique: is the row not after the best so far of the
 * group of the rows just before (where it is of that group)?
 */
static bool
consecutive_keeps(TopNFilter *f, TupleTableSlot *slot)
{
	uint64	   *best = f->last + f->partition_words;
	const uint64 *words = f->row_words + f->partition_words;

	if (f->given_up)
		return true;
	if (++f->seen == CONSECUTIVE_TRIAL_ROWS && f->dropped < f->seen / 16)
		f->given_up = true;
	if (!row_words(f, slot, 0, f->ncolumns))
		return true;			/* (a NULL key: kept) */
	if (!f->have_last || !same_partition(f, f->last, f->row_words))
	{
		memcpy(f->last, f->row_words, sizeof(uint64) * f->ncolumns);
		f->have_last = true;
		return true;
	}
	if (f->ties_dropped ? !words_after(best, words, f->nwords) :
		words_after(words, best, f->nwords))
	{
		f->dropped++;
		return false;
	}
	if (words_after(best, words, f->nwords))
		memcpy(best, words, sizeof(uint64) * f->nwords);
	return true;
}

bool
top_n_filter_keeps(TopNFilter *f, TupleTableSlot *slot)
{
	uint64		home;

	if (f->consecutive)
		return consecutive_keeps(f, slot);

	/* the partition's slot comes into the cache while the rest are made */
	if (!row_words(f, slot, 0, f->partition_words))
		return true;			/* (a NULL key: kept) */
	home = home_slot(f, f->capacity, f->row_words);
	__builtin_prefetch(f->slots + home * f->slot_words);
	if (!row_words(f, slot, f->partition_words, f->ncolumns) || among_first(f, home))
		return true;
	f->dropped++;
	return false;
}

/*
 * The next input row that the node collects: the outer plan's next row,
 * or with a filter, the next that it keeps (top_n_filter_keeps); NULL at
 * the end.
 */
TupleTableSlot *
node_input_next(GpuSortState *state)
{
	PlanState  *outer = outerPlanState(state);

	for (;;)
	{
		TupleTableSlot *slot = ExecProcNode(outer);

		if (state->top_n == NULL || TupIsNull(slot) ||
			top_n_filter_keeps(state->top_n, slot))
			return slot;
	}
}
