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
 * window's order, for a row after N earlier rows that are not its peers.  Over rows in no particular order, few
 * enter a partition's first N so far: about N (1 + ln(R / N)) of a
 * partition's R rows.
 *
 * Each partition (its key words) has a heap of the later key words of its
 * first N rows so far, the last on top; a row is kept where it comes before
 * the top of a full heap (and takes its place), where the heap is not full,
 * or, for rank(), where it equals the top.  The words are those of every
 * sort key (for rank(), of the window's), each with its direction, so the
 * filter applies only where those sort keys have exact codecs.
 * Rows with a NULL sort key are kept.  The heaps take at most half the
 * node's memory budget, and the row store what they leave: once they fill
 * their half, rows of partitions not seen yet are kept without a heap.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_opfamily.h"
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "keys/key_column.h"
#include "node/node_state.h"
#include "node/row_store.h"
#include "node/top_n_filter.h"
#include "node/window.h"

/*
 * A partition's heap of the words after its partition keys; the hash entry
 * starts with those keys.
 */
typedef struct PartitionHeap
{
	int			nrows;
	int			capacity;
	uint64	   *words;			/* nrows rows of nwords words, a max-heap */
} PartitionHeap;

struct TopNFilter
{
	int64		n;				/* rows kept per partition */
	bool		peers_kept;		/* rank(): rows equal to the N-th are kept */
	int			ncolumns;		/* the key columns compared (key words):
								 * every sort key's, or, for rank(), the
								 * window's */
	const KeyColumn *columns;
	int			partition_words;	/* the first of them: the partition's
									 * keys, the heaps' hash key */
	int			nwords;			/* the rest: a heap row's */
	RowStore   *store;			/* the node's, whose budget the heaps share */
	Size		node_budget;
	Size		budget;			/* the most the heaps take */
	MemoryContext cxt;			/* the heaps */
	HTAB	   *partitions;
	PartitionHeap single;		/* without PARTITION BY */
	bool		full;			/* the heaps fill their memory */
	uint64	   *row_words;		/* the current row's key words */
	uint64	   *swap;			/* a heap row's words, to swap two */
	int64		dropped;		/* rows dropped (EXPLAIN ANALYZE) */
};

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
	/* at most half the node's memory budget, taken from the store's */
	f->store = &state->store;
	f->node_budget = state->store.budget;
	f->budget = f->node_budget / 2;
	f->row_words = palloc(sizeof(uint64) * Max(f->ncolumns, 1));
	f->swap = palloc(sizeof(uint64) * Max(f->nwords, 1));
	top_n_filter_reset(f);
	return f;
}

void
top_n_filter_reset(TopNFilter *f)
{
	top_n_filter_end(f);
	/* (blocks of at most 256 kB, so that their sum follows what is used) */
	f->cxt = AllocSetContextCreate(CurrentMemoryContext, "GpuSort top N",
								   ALLOCSET_DEFAULT_MINSIZE, ALLOCSET_DEFAULT_INITSIZE,
								   256 * 1024);
	f->partitions = NULL;
	if (f->partition_words > 0)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(uint64) * f->partition_words;
		ctl.entrysize = ctl.keysize + sizeof(PartitionHeap);
		ctl.hcxt = f->cxt;
		f->partitions = hash_create("GpuSort top N partitions", 1024, &ctl,
									HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	memset(&f->single, 0, sizeof(PartitionHeap));
	f->full = false;
	f->dropped = 0;
	f->store->budget = f->node_budget;
}

void
top_n_filter_end(TopNFilter *f)
{
	if (f->cxt)
		MemoryContextDelete(f->cxt);
	f->cxt = NULL;
}

int64
top_n_filter_dropped(const TopNFilter *f)
{
	return f->dropped;
}

Size
top_n_filter_memory(const TopNFilter *f)
{
	return f->cxt ? MemoryContextMemAllocated(f->cxt, true) : 0;
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

/* Row i of the heap: its words. */
#define HEAP_ROW(heap, i, n)	((heap)->words + (Size) (i) * (n))

static inline void
swap_rows(TopNFilter *f, PartitionHeap *heap, int i, int j)
{
	Size		bytes = sizeof(uint64) * f->nwords;

	memcpy(f->swap, HEAP_ROW(heap, i, f->nwords), bytes);
	memcpy(HEAP_ROW(heap, i, f->nwords), HEAP_ROW(heap, j, f->nwords), bytes);
	memcpy(HEAP_ROW(heap, j, f->nwords), f->swap, bytes);
}

/* Moves the heap's top row down to its place. */
static void
sift_down(TopNFilter *f, PartitionHeap *heap)
{
	int			n = f->nwords;
	int			i = 0;

	for (;;)
	{
		int			largest = i;
		int			l = 2 * i + 1;
		int			r = l + 1;

		if (l < heap->nrows && words_after(HEAP_ROW(heap, l, n), HEAP_ROW(heap, largest, n), n))
			largest = l;
		if (r < heap->nrows && words_after(HEAP_ROW(heap, r, n), HEAP_ROW(heap, largest, n), n))
			largest = r;
		if (largest == i)
			return;
		swap_rows(f, heap, i, largest);
		i = largest;
	}
}

/* Moves the heap's last row up to its place. */
static void
sift_up(TopNFilter *f, PartitionHeap *heap)
{
	int			n = f->nwords;
	int			i = heap->nrows - 1;

	while (i > 0)
	{
		int			parent = (i - 1) / 2;

		if (!words_after(HEAP_ROW(heap, i, n), HEAP_ROW(heap, parent, n), n))
			return;
		swap_rows(f, heap, i, parent);
		i = parent;
	}
}

/*
 * The row's key words, each key's direction applied: its partition's, then
 * the rest; false where a key is NULL.
 */
static bool
row_words(TopNFilter *f, TupleTableSlot *slot)
{
	for (int c = 0; c < f->ncolumns; c++)
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
 * Is the row (its words in row_words) among its partition's first N so
 * far?  Then its words join the partition's heap, where there is room.
 */
static bool
among_first(TopNFilter *f)
{
	PartitionHeap *heap = &f->single;
	int			n = f->nwords;
	const uint64 *words = f->row_words + f->partition_words;

	if (f->partitions)
	{
		bool		found;
		char	   *entry = hash_search(f->partitions, f->row_words,
										f->full ? HASH_FIND : HASH_ENTER, &found);

		if (entry == NULL)
			return true;		/* no room for its partition */
		heap = (PartitionHeap *) (entry + sizeof(uint64) * f->partition_words);
		if (!found)
			memset(heap, 0, sizeof(PartitionHeap));
	}
	if (heap->nrows == f->n)
	{
		/*
		 * full: a row before the last of the first N takes its place; one
		 * after it is dropped; one equal to it is dropped by row_number()
		 * (its place among its equals is anyone's), kept by rank() (its
		 * rank is theirs)
		 */
		if (words_after(HEAP_ROW(heap, 0, n), words, n))
		{
			memcpy(HEAP_ROW(heap, 0, n), words, sizeof(uint64) * n);
			sift_down(f, heap);
			return true;
		}
		return f->peers_kept && !words_after(words, HEAP_ROW(heap, 0, n), n);
	}
	if (heap->nrows == heap->capacity)
	{
		int			capacity = (int) Min(f->n, Max(8, 2 * (int64) heap->capacity));

		if (f->full)
			return true;		/* no room to grow: kept, not counted */
		heap->words = heap->words == NULL ?
			MemoryContextAlloc(f->cxt, sizeof(uint64) * Max(n, 1) * capacity) :
			repalloc(heap->words, sizeof(uint64) * Max(n, 1) * capacity);
		heap->capacity = capacity;
	}
	memcpy(HEAP_ROW(heap, heap->nrows, n), words, sizeof(uint64) * n);
	heap->nrows++;
	sift_up(f, heap);
	return true;
}

TupleTableSlot *
node_input_next(GpuSortState *state)
{
	if (state->top_n)
		return top_n_filter_next(state->top_n, outerPlanState(state));
	return ExecProcNode(outerPlanState(state));
}

TupleTableSlot *
top_n_filter_next(TopNFilter *f, PlanState *outer)
{
	for (;;)
	{
		TupleTableSlot *slot = ExecProcNode(outer);

		if (TupIsNull(slot) || !row_words(f, slot))
			return slot;		/* the end, or a NULL key: kept */
		if (among_first(f))
		{
			if (!f->full)
			{
				Size		used = MemoryContextMemAllocated(f->cxt, true);

				f->full = used > f->budget;
				f->store->budget = f->node_budget - Min(used, f->budget);
			}
			return slot;
		}
		f->dropped++;
	}
}
