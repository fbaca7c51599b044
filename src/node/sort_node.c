/*-------------------------------------------------------------------------
 *
 * sort_node.c
 *	  The GpuSort custom scan node: the executor's Sort, with the sorting
 *	  done by a sort engine (GPU or CPU radix sort) on integer keys.
 *
 * The node reads its whole input into a row store (row_store.c), sorts the
 * rows by their leading integer keys with a sort engine, resolves the ties
 * that remain by the other sort keys with PostgreSQL's comparators, and
 * returns the rows in order.  It behaves like Sort in every other way: it
 * supports backward scans, mark/restore and rescans.
 *
 * Inputs that turn out larger than the memory budget are handed to
 * PostgreSQL's tuplesort, rows already read included; inputs that turn out
 * smaller than gpusort.min_rows are sorted by the CPU engine.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_opfamily_d.h"
#include "catalog/pg_type_d.h"
#include "executor/executor.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "portability/instr_time.h"
#include "storage/s_lock.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
#include "utils/sortsupport.h"
#include "utils/tuplesort.h"
#include "utils/typcache.h"

#include "compat.h"
#include "node/gpusort_node.h"
#include "settings.h"
#include "util/prefault.h"
#include "keys/row_store.h"
#include "engine/engine.h"
#include "keys/sort_keys.h"
#include "node/tie_order.h"

/* Rows between interrupt checks in linear passes over the sorted rows. */
#define TIE_SCAN_CHUNK		(1 << 16)

/* How far ahead the emit phase prefetches the tuples it will return. */
#define PREFETCH_DISTANCE	32

/*
 * The ring of rows that helper threads gather in sorted order ahead of the
 * emit phase (prefault.h): chunk c of the sorted rows goes into buffer
 * c % RING_CHUNKS, and is gathered while the emit phase reads the chunks
 * before it.  Only forward scans of inputs of RING_MIN_ROWS rows or more
 * that are not wide use it.
 */
#define RING_ROWS			4096
#define RING_CHUNKS			16
#define RING_MIN_ROWS		(RING_ROWS * RING_CHUNKS)
#define RING_PREFETCH_ROWS	64	/* a 4 kB page ahead: the hardware's own
								 * prefetching stops at page boundaries */

typedef struct GatherRing
{
	char	   *slots;			/* RING_CHUNKS buffers of RING_ROWS slots */
	volatile uint32 state[RING_CHUNKS]; /* GATHER_QUEUED, _DONE, _DROPPED */
	bool		direct;			/* the current chunk is read from sorted */
} GatherRing;

typedef enum NodePhase
{
	PHASE_START,				/* nothing read yet */
	PHASE_SORTED,				/* rows sorted in the row store */
	PHASE_TUPLESORT				/* rows sorted by tuplesort */
} NodePhase;

/* What ran, for EXPLAIN ANALYZE. */
typedef enum RunKind
{
	RUN_NONE,
	RUN_ENGINE,
	RUN_TUPLESORT
} RunKind;

typedef struct GpuSortState
{
	CustomScanState css;

	/* sort keys, from the plan */
	int			nkeys;
	AttrNumber *attnos;
	Oid		   *sortops;
	Oid		   *collations;
	bool	   *nullsfirst;
	SortSupport ssups;			/* comparators for all keys */
	TieOrder	ties;			/* orders rows the engine leaves tied */
	int			nintkeys;		/* leading keys that are integers */
	TupleDesc	indesc;			/* the input's tuple descriptor */
	bool		random_access;	/* backward scan, mark or rewind wanted */
	bool		keys_only;		/* the row is its one integer key */

	NodePhase	phase;
	RowStore	store;
	uint32	   *perm;			/* keys_only: the order of the keys */
	MinimalTuple *sorted;		/* otherwise: all rows, in order */
	GatherRing *ring;			/* sorted's rows gathered ahead, or NULL */
	bool		wide_rows;		/* tuples average more than a cache line */
	TupleTableSlot *sort_slot;	/* keys_only: tuplesort's MinimalTuples */
	int64		ntotal;			/* rows to return */
	int64		current;		/* last row returned: -1 before the first,
								 * ntotal after the last */
	int64		marked;
	Tuplesortstate *tuplesort;

	/* EXPLAIN ANALYZE */
	RunKind		ran;
	SortJobReport report;
	const char *tuplesort_reason;
	int			radix_keys;
	Size		memory_used;
	double		collect_ms;
	double		sort_ms;
	double		emit_ms;
} GpuSortState;

static Node *gpusort_create_state(CustomScan *cscan);
static void gpusort_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *gpusort_exec(CustomScanState *node);
static void gpusort_end(CustomScanState *node);
static void gpusort_rescan(CustomScanState *node);
static void gpusort_mark(CustomScanState *node);
static void gpusort_restore(CustomScanState *node);
static void gpusort_explain(CustomScanState *node, List *ancestors,
							ExplainState *es);

static CustomScanMethods gpusort_plan_methods = {
	.CustomName = "GpuSort",
	.CreateCustomScanState = gpusort_create_state,
};

static CustomExecMethods gpusort_exec_methods = {
	.CustomName = "GpuSort",
	.BeginCustomScan = gpusort_begin,
	.ExecCustomScan = gpusort_exec,
	.EndCustomScan = gpusort_end,
	.ReScanCustomScan = gpusort_rescan,
	.MarkPosCustomScan = gpusort_mark,
	.RestrPosCustomScan = gpusort_restore,
	.ExplainCustomScan = gpusort_explain,
};

void
gpusort_node_init(void)
{
	/* lets plans with GpuSort be copied to parallel workers */
	RegisterCustomScanMethods(&gpusort_plan_methods);
}

static double
elapsed_ms(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

/*
 * The width in bits of an integer sort key that the engines can sort, or 0:
 * the key must be int2, int4 or int8 (or a domain over one) ordered by the
 * integer btree operator family.
 */
static int
integer_key_width(Oid sortop, Oid keytype, bool *descending)
{
	Oid			opfamily;
	Oid			opcintype;

	if (!compat_ordering_op_properties(sortop, &opfamily, &opcintype, descending) ||
		opfamily != INTEGER_BTREE_FAM_OID ||
		getBaseType(keytype) != opcintype)
		return 0;
	switch (opcintype)
	{
		case INT2OID:
			return 16;
		case INT4OID:
			return 32;
		case INT8OID:
			return 64;
	}
	return 0;
}

/* Can GpuSort run this Sort?  Its leading key must be an integer. */
bool
gpusort_sort_supported(Sort *sort)
{
	TargetEntry *tle;
	bool		descending;

	if (sort->numCols < 1 || sort->plan.lefttree == NULL)
		return false;
	tle = get_tle_by_resno(sort->plan.lefttree->targetlist, sort->sortColIdx[0]);
	if (tle == NULL)
		return false;
	return integer_key_width(sort->sortOperators[0], exprType((Node *) tle->expr),
							 &descending) != 0;
}

/*
 * Builds the GpuSort node that takes the place of a Sort, after set_plan_refs:
 * the Sort's input becomes the node's outer plan, the Sort's targetlist its
 * scan tuple, and its own targetlist returns the scan tuple unchanged.
 */
CustomScan *
gpusort_make_node(Sort *sort)
{
	CustomScan *cscan = makeNode(CustomScan);
	Plan	   *plan = &cscan->scan.plan;
	List	   *cols = NIL;
	List	   *ops = NIL;
	List	   *colls = NIL;
	List	   *nullsfirst = NIL;
	ListCell   *lc;

	memcpy(plan, &sort->plan, sizeof(Plan));
	plan->type = T_CustomScan;
	plan->targetlist = NIL;
	foreach(lc, sort->plan.targetlist)
	{
		TargetEntry *tle = flatCopyTargetEntry(lfirst_node(TargetEntry, lc));

		tle->expr = (Expr *) makeVarFromTargetEntry(INDEX_VAR, tle);
		plan->targetlist = lappend(plan->targetlist, tle);
	}
	plan->qual = NIL;
	plan->righttree = NULL;

	for (int i = 0; i < sort->numCols; i++)
	{
		cols = lappend_int(cols, sort->sortColIdx[i]);
		ops = lappend_oid(ops, sort->sortOperators[i]);
		colls = lappend_oid(colls, sort->collations[i]);
		nullsfirst = lappend_int(nullsfirst, sort->nullsFirst[i]);
	}

	cscan->scan.scanrelid = 0;
	cscan->flags = CUSTOMPATH_SUPPORT_BACKWARD_SCAN | CUSTOMPATH_SUPPORT_MARK_RESTORE;
	cscan->custom_private = list_make4(cols, ops, colls, nullsfirst);
	cscan->custom_scan_tlist = sort->plan.targetlist;
	cscan->methods = &gpusort_plan_methods;
	return cscan;
}

static Node *
gpusort_create_state(CustomScan *cscan)
{
	GpuSortState *state = palloc0(sizeof(GpuSortState));

	NodeSetTag(state, T_CustomScanState);
	state->css.methods = &gpusort_exec_methods;
	return (Node *) state;
}

static void
gpusort_begin(CustomScanState *node, EState *estate, int eflags)
{
	GpuSortState *state = (GpuSortState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *cols = linitial(cscan->custom_private);
	List	   *ops = lsecond(cscan->custom_private);
	List	   *colls = lthird(cscan->custom_private);
	List	   *nullsfirst = lfourth(cscan->custom_private);
	TupleDesc	scandesc = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor;
	KeyColumn  *columns;
	int			ncolumns = 0;
	Size		rowbytes;

	/* As Sort does: we can go back and rewind; our input need not. */
	state->random_access = (eflags & (EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD |
									  EXEC_FLAG_MARK)) != 0;
	eflags &= ~(EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK);
	outerPlanState(node) = ExecInitNode(outerPlan(cscan), estate, eflags);
	state->indesc = ExecGetResultType(outerPlanState(node));

	state->nkeys = list_length(cols);
	state->attnos = palloc(sizeof(AttrNumber) * state->nkeys);
	state->sortops = palloc(sizeof(Oid) * state->nkeys);
	state->collations = palloc(sizeof(Oid) * state->nkeys);
	state->nullsfirst = palloc(sizeof(bool) * state->nkeys);
	state->ssups = palloc0(sizeof(SortSupportData) * state->nkeys);
	columns = palloc0(sizeof(KeyColumn) * state->nkeys);
	for (int i = 0; i < state->nkeys; i++)
	{
		SortSupport ssup = &state->ssups[i];
		int			width;
		bool		descending = false;

		state->attnos[i] = list_nth_int(cols, i);
		state->sortops[i] = list_nth_oid(ops, i);
		state->collations[i] = list_nth_oid(colls, i);
		state->nullsfirst[i] = list_nth_int(nullsfirst, i);

		ssup->ssup_cxt = CurrentMemoryContext;
		ssup->ssup_collation = state->collations[i];
		ssup->ssup_nulls_first = state->nullsfirst[i];
		ssup->ssup_attno = state->attnos[i];
		PrepareSortSupportFromOrderingOp(state->sortops[i], ssup);

		width = integer_key_width(state->sortops[i],
								  TupleDescAttr(state->indesc, state->attnos[i] - 1)->atttypid,
								  &descending);
		if (width == 0 || ncolumns < i)
			continue;
		columns[ncolumns].attno = state->attnos[i];
		columns[ncolumns].width = width;
		columns[ncolumns].descending = descending;
		ncolumns++;
	}
	if (ncolumns == 0)
		elog(ERROR, "GpuSort needs an integer leading sort key");
	tie_order_init(&state->ties, state->indesc, state->nkeys, state->attnos,
				   state->ssups, state->sortops, state->collations,
				   state->nullsfirst);
	state->nintkeys = ncolumns;

	/*
	 * A row that is nothing but its integer sort key needs no tuple: the
	 * key is kept, and decoded into a virtual tuple on the way out.  Other
	 * rows are returned as MinimalTuples: make the scan slot one of that
	 * kind, so that the nodes above us deform it correctly.
	 */
	state->keys_only = (state->nkeys == 1 && state->indesc->natts == 1);
	if (state->keys_only)
		state->sort_slot = ExecAllocTableSlot(&estate->es_tupleTable, scandesc,
											  &TTSOpsMinimalTuple);
	else
	{
		node->ss.ss_ScanTupleSlot = ExecAllocTableSlot(&estate->es_tupleTable, scandesc,
													   &TTSOpsMinimalTuple);
		node->ss.ps.scanops = &TTSOpsMinimalTuple;
	}
	ExecAssignScanProjectionInfoWithVarno(&node->ss, INDEX_VAR);
	if (node->ss.ps.ps_ProjInfo != NULL)
		elog(ERROR, "GpuSort node must not project");

	/* a row's pointers, its keys, its place in the order and sort scratch */
	rowbytes = (state->keys_only ? 0 : 2 * sizeof(MinimalTuple)) +
		ncolumns * sizeof(uint64) + sizeof(uint32) + cpu_sort_scratch_bytes(1);
	row_store_init(&state->store, CurrentMemoryContext, ncolumns, columns,
				   (Size) gpusort_memory_budget_kb() * 1024, rowbytes,
				   cscan->scan.plan.plan_rows, state->keys_only,
				   &sort_engine_uploader);
	state->phase = PHASE_START;
	state->ran = RUN_NONE;
}

/*
 * Starts a tuplesort configured as the Sort node's would be, within
 * GpuSort's memory budget.
 */
static Tuplesortstate *
begin_tuplesort(GpuSortState *state)
{
	return tuplesort_begin_heap(state->indesc, state->nkeys, state->attnos,
								state->sortops, state->collations,
								state->nullsfirst, gpusort_memory_budget_kb(), NULL,
								state->random_access ? TUPLESORT_RANDOMACCESS : TUPLESORT_NONE);
}

/* Stores the row of a keys-only store (row -1: the NULL) in a virtual slot. */
static TupleTableSlot *
store_key_row(GpuSortState *state, TupleTableSlot *slot, int64 row)
{
	KeyColumn  *column = &state->store.columns[0];

	ExecClearTuple(slot);
	slot->tts_isnull[0] = (row < 0);
	slot->tts_values[0] = (row < 0) ? (Datum) 0 :
		sort_key_decode_int(column->keys[row], column->width, column->descending);
	return ExecStoreVirtualTuple(slot);
}

/* Hands a row of the row store to tuplesort (row_store_drain). */
static void
put_stored_row(MinimalTuple tuple, int64 keyrow, void *arg)
{
	GpuSortState *state = arg;
	TupleTableSlot *slot = state->css.ss.ss_ScanTupleSlot;

	tuplesort_puttupleslot(state->tuplesort, tuple ?
						   ExecStoreMinimalTuple(tuple, slot, false) :
						   store_key_row(state, slot, keyrow));
}

/*
 * Sorts with tuplesort: the rows collected so far, the pending slot (if not
 * NULL), and the rest of the input.  The row store frees its memory as its
 * rows move to tuplesort, so that the two stay within about one budget.
 */
static void
sort_with_tuplesort(GpuSortState *state, TupleTableSlot *pending,
					const char *reason, instr_time start)
{
	PlanState  *outer = outerPlanState(state);
	RowStore   *store = &state->store;
	Tuplesortstate *tuplesort = begin_tuplesort(state);
	instr_time	sort_start;

	state->memory_used = Max(state->memory_used, row_store_memory(store));
	state->tuplesort = tuplesort;
	row_store_drain(store, put_stored_row, state);
	ExecClearTuple(state->css.ss.ss_ScanTupleSlot);

	if (!TupIsNull(pending))
	{
		tuplesort_puttupleslot(tuplesort, pending);
		for (;;)
		{
			TupleTableSlot *next = ExecProcNode(outer);

			if (TupIsNull(next))
				break;
			tuplesort_puttupleslot(tuplesort, next);
		}
	}
	state->collect_ms = elapsed_ms(start);

	INSTR_TIME_SET_CURRENT(sort_start);
	tuplesort_performsort(tuplesort);
	state->sort_ms = elapsed_ms(sort_start);

	state->tuplesort_reason = reason;
	state->ran = RUN_TUPLESORT;
	state->phase = PHASE_TUPLESORT;
}

/* Are two rows equal in the integer keys that the engine sorted? */
static bool
radix_keys_equal(GpuSortState *state, uint32 a, uint32 b)
{
	for (int i = 0; i < state->radix_keys; i++)
		if (state->store.columns[i].keys[a] != state->store.columns[i].keys[b])
			return false;
	return true;
}

/*
 * Gives the NULLs of the integer key columns after the first a key in the
 * column's order, so that the engines can sort them, and returns how many
 * leading columns can be sorted so.  A column whose keys leave no room for
 * a NULL key ends the columns the engine sorts; comparators sort the rest.
 */
static int
place_key_nulls(GpuSortState *state)
{
	RowStore   *store = &state->store;

	for (int i = 1; i < store->ncolumns; i++)
	{
		KeyColumn  *column = &store->columns[i];
		bool		first = state->nullsfirst[i];
		uint64		nullkey;

		if (column->nulls == NULL)
			continue;
		if (column->min > column->max)
			nullkey = 0;		/* all NULL */
		else if (first ? column->min == 0 : column->max == PG_UINT64_MAX)
			return i;
		else
			nullkey = first ? column->min - 1 : column->max + 1;
		for (uint32 row = 0; row < store->nrows; row++)
			if (key_column_isnull(column, row))
				column->keys[row] = nullkey;
	}
	return store->ncolumns;
}

/*
 * Sorts the collected rows with a sort engine and the comparators.  An
 * input below gpusort.min_rows stays on the CPU engine: handing rows already
 * collected to tuplesort would cost more than sorting them here.
 */
static void
sort_rows(GpuSortState *state, bool small)
{
	RowStore   *store = &state->store;
	const uint64 **keys;
	uint32	   *perm;
	MinimalTuple *sorted = NULL;
	MinimalTuple *sorted_rows = NULL;
	SortJob		job;

	state->radix_keys = place_key_nulls(state);
	keys = palloc(sizeof(uint64 *) * state->radix_keys);
	for (int i = 0; i < state->radix_keys; i++)
		keys[i] = store->columns[i].keys;

	job.nrows = store->nrows;
	job.nkeys = state->radix_keys;
	job.keys = keys;
	job.payload = NULL;
	job.payload_sorted = false;
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
		if (state->radix_keys == state->nkeys)
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
	state->report.fallback_reason = NULL;
	if (small)
		sort_job_run_on_cpu(&job, "input below gpusort.min_rows", &state->report);
	else if (store->nrows > 0)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(store->cxt);

		sort_job_run(&job, &state->report);
		MemoryContextSwitchTo(oldcxt);
	}
	row_store_end_upload(store);
	perm = job.perm;
	pfree(keys);

	/* Rows equal in the engine's keys are ordered by the remaining keys. */
	if (state->radix_keys < state->nkeys)
	{
		uint32		start = 0;

		for (uint32 i = 1; i <= store->nrows; i++)
		{
			if (i % TIE_SCAN_CHUNK == 0)
				CHECK_FOR_INTERRUPTS();
			if (i < store->nrows && radix_keys_equal(state, perm[start], perm[i]))
				continue;
			tie_order_sort(&state->ties, store->rows, perm + start, i - start,
						   state->radix_keys, store->cxt);
			start = i;
		}
	}

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
	if (perm)
		pfree(perm);
	state->sorted = sorted;
}

/* Queues the gathering of chunk c of the sorted rows into its buffer. */
static void
gather_chunk(GpuSortState *state, int64 c)
{
	GatherRing *ring = state->ring;
	int			b = c % RING_CHUNKS;
	int64		first = c * RING_ROWS;

	if (first >= state->ntotal)
		return;
	prefault_gather(state->sorted + first, Min(RING_ROWS, state->ntotal - first),
					ring->slots + (Size) b * RING_ROWS * GATHER_SLOT_BYTES,
					&ring->state[b]);
}

/* Starts gathering the sorted rows for a forward read, where it pays. */
static void
start_ring(GpuSortState *state)
{
	Size		bytes = (Size) RING_CHUNKS * RING_ROWS * GATHER_SLOT_BYTES;
	GatherRing *ring;

	state->ring = NULL;
	if (state->random_access || state->keys_only || state->wide_rows ||
		state->ntotal < RING_MIN_ROWS || gpusort_prefault_threads <= 0)
		return;
	ring = MemoryContextAllocZero(state->store.cxt, sizeof(GatherRing));
	ring->slots = (char *) TYPEALIGN(GPUSORT_CACHE_LINE,
									 MemoryContextAlloc(state->store.cxt, bytes + GPUSORT_CACHE_LINE));
	state->ring = ring;
	for (int c = 0; c < RING_CHUNKS; c++)
		gather_chunk(state, c);
}

/*
 * The row at position pos of a forward read through the ring.  Entering a
 * chunk, the emit phase queues the gathering of the chunk that takes the
 * buffer of the one before the previous (the previous one's last row may
 * still be in use), and waits for the chunk's own, or reads the chunk from
 * sorted if its gathering was dropped.
 */
static MinimalTuple
ring_row(GpuSortState *state, int64 pos)
{
	GatherRing *ring = state->ring;
	int64		c = pos / RING_ROWS;
	char	   *slot;
	MinimalTuple tuple;

	if (pos % RING_ROWS == 0)
	{
		volatile uint32 *chunk_state = &ring->state[c % RING_CHUNKS];
		uint32		st;

		if (c >= 2)
			gather_chunk(state, c - 2 + RING_CHUNKS);
		for (uint32 spins = 1;
			 (st = __atomic_load_n(chunk_state, __ATOMIC_ACQUIRE)) == GATHER_QUEUED;
			 spins++)
		{
			pg_spin_delay();
			if (spins % 4096 == 0)
				CHECK_FOR_INTERRUPTS();
		}
		ring->direct = (st == GATHER_DROPPED);
	}
	if (ring->direct)
		return state->sorted[pos];
	slot = ring->slots + ((Size) (c % RING_CHUNKS) * RING_ROWS + pos % RING_ROWS) *
		GATHER_SLOT_BYTES;
	__builtin_prefetch(ring->slots + (Size) ((pos + RING_PREFETCH_ROWS) %
											 (RING_CHUNKS * RING_ROWS)) * GATHER_SLOT_BYTES);
	if (((MinimalTuple) slot)->t_len != 0)
		return (MinimalTuple) slot;
	memcpy(&tuple, slot + GATHER_POINTER_OFFSET, sizeof(tuple));
	return tuple;
}

/* Reads the input and sorts it, with an engine or with tuplesort. */
static void
collect_and_sort(GpuSortState *state)
{
	PlanState  *outer = outerPlanState(state);
	RowStore   *store = &state->store;
	instr_time	start;
	instr_time	sort_start;

	INSTR_TIME_SET_CURRENT(start);

	if (!gpusort_enabled)
	{
		sort_with_tuplesort(state, ExecProcNode(outer), "gpusort.enabled is off", start);
		return;
	}

	for (;;)
	{
		TupleTableSlot *slot = ExecProcNode(outer);

		if (TupIsNull(slot))
			break;
		if (!row_store_add(store, slot))
		{
			sort_with_tuplesort(state, slot, "memory budget exceeded", start);
			return;
		}
	}

	state->ntotal = (int64) store->nrows + store->nnullrows;
	state->wide_rows = store->tupledata > (Size) GPUSORT_CACHE_LINE * state->ntotal;
	state->collect_ms = elapsed_ms(start);

	INSTR_TIME_SET_CURRENT(sort_start);
	sort_rows(state, state->ntotal < gpusort_min_rows);
	state->sort_ms = elapsed_ms(sort_start);

	state->memory_used = Max(state->memory_used, row_store_memory(store));
	state->ran = RUN_ENGINE;
	state->phase = PHASE_SORTED;
	state->current = -1;
	start_ring(state);
}

/*
 * The row at position pos of the sorted output: its row number in the store,
 * or -(i + 1) for the i-th row led by a NULL.
 */
static inline int64
sorted_row(GpuSortState *state, int64 pos)
{
	RowStore   *store = &state->store;

	if (state->nullsfirst[0])
		return pos < store->nnullrows ? -pos - 1 :
			(int64) state->perm[pos - store->nnullrows];
	return pos < store->nrows ? (int64) state->perm[pos] :
		-(pos - store->nrows) - 1;
}

static TupleTableSlot *
gpusort_exec(CustomScanState *node)
{
	GpuSortState *state = (GpuSortState *) node;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	bool		forward = ScanDirectionIsForward(node->ss.ps.state->es_direction);
	bool		timing = node->ss.ps.instrument && node->ss.ps.instrument->need_timer;
	instr_time	start;

	if (state->phase == PHASE_START)
		collect_and_sort(state);

	if (state->phase == PHASE_TUPLESORT)
	{
		if (!state->keys_only)
		{
			(void) tuplesort_gettupleslot(state->tuplesort, forward, false, slot, NULL);
			return slot;
		}
		/* our slot is virtual: copy tuplesort's MinimalTuple into it */
		if (tuplesort_gettupleslot(state->tuplesort, forward, false, state->sort_slot, NULL))
			return ExecCopySlot(slot, state->sort_slot);
		return ExecClearTuple(slot);
	}

	if (timing)
		INSTR_TIME_SET_CURRENT(start);
	if (forward)
		state->current = Min(state->current + 1, state->ntotal);
	else
		state->current = Max(state->current - 1, -1);

	if (state->current < 0 || state->current >= state->ntotal)
		ExecClearTuple(slot);
	else if (state->ring && forward)
		ExecStoreMinimalTuple(ring_row(state, state->current), slot, false);
	else if (state->keys_only)
	{
		int64		ahead = state->current + PREFETCH_DISTANCE;

		if (forward && ahead < state->ntotal && (ahead = sorted_row(state, ahead)) >= 0)
			__builtin_prefetch(&state->store.columns[0].keys[ahead]);
		store_key_row(state, slot, Max(sorted_row(state, state->current), -1));
	}
	else
	{
		int64		ahead = state->current + PREFETCH_DISTANCE;

		/*
		 * The rows lie in memory in input order, so reading them in sorted
		 * order misses the caches at every row.  Going forward, fetch ahead
		 * (the first line, and the second if rows are wide), so that
		 * independent misses overlap instead of stalling one after another.
		 * (This stays here: GCC drops calls to a function whose only effect
		 * is a prefetch.)
		 */
		if (forward && ahead < state->ntotal)
		{
			__builtin_prefetch(state->sorted[ahead]);
			if (state->wide_rows)
				__builtin_prefetch((char *) state->sorted[ahead] + GPUSORT_CACHE_LINE);
		}
		ExecStoreMinimalTuple(state->sorted[state->current], slot, false);
	}
	if (timing)
		state->emit_ms += elapsed_ms(start);
	return slot;
}

/* Forgets the sorted rows, so that the next fetch reads the input again. */
static void
forget_rows(GpuSortState *state)
{
	if (state->tuplesort)
		tuplesort_end(state->tuplesort);
	state->tuplesort = NULL;
	row_store_reset(&state->store);
	state->report.fallback_reason = NULL;	/* it may have lived there */
	state->perm = NULL;
	state->sorted = NULL;
	state->ring = NULL;
	state->phase = PHASE_START;
}

static void
gpusort_end(CustomScanState *node)
{
	GpuSortState *state = (GpuSortState *) node;

	if (state->tuplesort)
		tuplesort_end(state->tuplesort);
	state->tuplesort = NULL;
	MemoryContextDelete(state->store.cxt);
	ExecEndNode(outerPlanState(node));
}

static void
gpusort_rescan(CustomScanState *node)
{
	GpuSortState *state = (GpuSortState *) node;
	PlanState  *outer = outerPlanState(node);

	if (state->phase == PHASE_START)
		return;					/* not read yet: the input rescans itself */
	ExecClearTuple(node->ss.ss_ScanTupleSlot);

	/*
	 * With new parameters the input must be read again; a tuplesort that was
	 * not made for random access cannot go back to the start.
	 */
	if (outer->chgParam != NULL ||
		(state->phase == PHASE_TUPLESORT && !state->random_access))
	{
		forget_rows(state);
		if (outer->chgParam == NULL)
			ExecReScan(outer);
		return;
	}
	if (state->phase == PHASE_TUPLESORT)
		tuplesort_rescan(state->tuplesort);
	else
	{
		state->current = -1;
		state->ring = NULL;		/* its first chunks are gone */
	}
}

static void
gpusort_mark(CustomScanState *node)
{
	GpuSortState *state = (GpuSortState *) node;

	if (state->phase == PHASE_TUPLESORT)
		tuplesort_markpos(state->tuplesort);
	else
		state->marked = state->current;
}

static void
gpusort_restore(CustomScanState *node)
{
	GpuSortState *state = (GpuSortState *) node;

	if (state->phase == PHASE_TUPLESORT)
		tuplesort_restorepos(state->tuplesort);
	else
		state->current = state->marked;
}

/* Appends a sort key's ordering options, as EXPLAIN shows them for Sort. */
static void
append_sort_options(StringInfo buf, Node *expr, Oid sortop, Oid collation,
					bool nullsfirst)
{
	Oid			type = exprType(expr);
	TypeCacheEntry *typentry = lookup_type_cache(type, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
	bool		reverse = false;

	if (OidIsValid(collation) && collation != get_typcollation(type))
		appendStringInfo(buf, " COLLATE %s",
						 quote_identifier(get_collation_name(collation)));
	if (sortop == typentry->gt_opr)
	{
		appendStringInfoString(buf, " DESC");
		reverse = true;
	}
	else if (sortop != typentry->lt_opr)
	{
		appendStringInfo(buf, " USING %s", get_opname(sortop));
		(void) get_equality_op_for_ordering_op(sortop, &reverse);
	}
	if (nullsfirst && !reverse)
		appendStringInfoString(buf, " NULLS FIRST");
	else if (!nullsfirst && reverse)
		appendStringInfoString(buf, " NULLS LAST");
}

static void
explain_sort_keys(GpuSortState *state, List *ancestors, ExplainState *es)
{
	CustomScan *cscan = (CustomScan *) state->css.ss.ps.plan;
	List	   *context;
	List	   *keys = NIL;
	bool		useprefix = compat_explain_useprefix(es);

	context = set_deparse_context_plan(es->deparse_cxt, (Plan *) cscan, ancestors);
	for (int i = 0; i < state->nkeys; i++)
	{
		TargetEntry *tle = get_tle_by_resno(cscan->custom_scan_tlist, state->attnos[i]);
		StringInfoData buf;

		initStringInfo(&buf);
		appendStringInfoString(&buf, deparse_expression((Node *) tle->expr, context,
														useprefix, true));
		append_sort_options(&buf, (Node *) tle->expr, state->sortops[i],
							state->collations[i], state->nullsfirst[i]);
		keys = lappend(keys, buf.data);
	}
	ExplainPropertyList("Sort Key", keys, es);
}

static void
gpusort_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuSortState *state = (GpuSortState *) node;

	explain_sort_keys(state, ancestors, es);
	if (!es->analyze || state->ran == RUN_NONE)
		return;

	if (state->ran == RUN_TUPLESORT)
	{
		TuplesortInstrumentation stats;

		ExplainPropertyText("Sort Engine", "tuplesort", es);
		ExplainPropertyText("Fallback Reason", state->tuplesort_reason, es);
		if (state->tuplesort)
		{
			tuplesort_get_stats(state->tuplesort, &stats);
			ExplainPropertyText("Sort Method", tuplesort_method_name(stats.sortMethod), es);
			ExplainPropertyInteger("Sort Space Used", "kB", stats.spaceUsed, es);
			ExplainPropertyText("Sort Space Type", tuplesort_space_type_name(stats.spaceType), es);
		}
	}
	else
	{
		ExplainPropertyText("Sort Engine", sort_engine_name(state->report.engine), es);
		if (state->report.fallback_reason)
			ExplainPropertyText("Fallback Reason", state->report.fallback_reason, es);
		ExplainPropertyInteger("Sorted Rows", NULL, state->ntotal, es);
		ExplainPropertyInteger("Engine Keys", NULL, state->radix_keys, es);
	}
	ExplainPropertyInteger("Memory Used", "kB", (state->memory_used + 1023) / 1024, es);
	if (es->timing)
	{
		ExplainPropertyFloat("Collect Time", "ms", state->collect_ms, 3, es);
		ExplainPropertyFloat("Sort Time", "ms", state->sort_ms, 3, es);
		if (state->ran == RUN_ENGINE)
			ExplainPropertyFloat("Emit Time", "ms", state->emit_ms, 3, es);
	}
}
