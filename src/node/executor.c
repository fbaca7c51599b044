/*-------------------------------------------------------------------------
 *
 * executor.c
 *	  The GpuSort custom scan node at run time: the executor's Sort, with the
 *	  sorting done by a sort engine (GPU or CPU radix sort) on encoded keys.
 *
 * The node reads its whole input into a row store (row_store.c), sorts the
 * rows by their leading encoded keys with a sort engine, resolves the ties
 * that remain by the other sort keys with PostgreSQL's comparators
 * (sort_rows.c), and returns the rows in order.  It behaves like Sort in
 * every other way: it supports backward scans, mark/restore and rescans.
 *
 * Inputs that turn out larger than the memory budget are held by the engine
 * or sorted in runs that the engine sorts, spilled to temporary files and
 * merged on the way out (spill.c); where that would not pay (a plan that
 * reads backward, a budget too small for runs) or gpusort.spill is off,
 * they are handed to PostgreSQL's tuplesort instead, rows already read
 * included (fallback.c).  Inputs that turn out smaller than gpusort.min_rows
 * are sorted by the CPU engine.  The settings are taken once, as the node
 * begins (NodeSettings).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "utils/memutils.h"

#include "engine/engine.h"
#include "node/collect/collect.h"
#include "node/collect/memory.h"
#include "node/collect/top_n_filter.h"
#include "node/explain/explain.h"
#include "node/node_state.h"
#include "node/paths/path.h"
#include "node/paths/runs/runs.h"
#include "node/paths/runs/share.h"
#include "node/plan/gpusort_node.h"
#include "node/plan/window.h"
#include "node/rows/mark_rows.h"
#include "node/rows/row_keys.h"
#include "node/window/distinct_filter.h"
#include "node/window/window_calc.h"
#include "settings.h"
#include "util/big_array.h"

static void gpusort_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *gpusort_exec(CustomScanState *node);
static TupleTableSlot *marked_next(GpuSortState *state);
static void gpusort_end(CustomScanState *node);
static void gpusort_rescan(CustomScanState *node);
static void gpusort_mark(CustomScanState *node);
static void gpusort_restore(CustomScanState *node);
static void gpusort_initialize_dsm(CustomScanState *node, ParallelContext *pcxt,
								   void *coordinate);
static void gpusort_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt,
									 void *coordinate);
static void gpusort_shutdown(CustomScanState *node);

CustomExecMethods gpusort_exec_methods = {
	.CustomName = "GpuSort",
	.BeginCustomScan = gpusort_begin,
	.ExecCustomScan = gpusort_exec,
	.EndCustomScan = gpusort_end,
	.ReScanCustomScan = gpusort_rescan,
	.MarkPosCustomScan = gpusort_mark,
	.RestrPosCustomScan = gpusort_restore,
	.ExplainCustomScan = gpusort_explain,
	/*
	 * a parallel query: its workers' statistics, and its participants
	 * sharing one input (shared_stage.c)
	 */
	.EstimateDSMCustomScan = node_share_estimate,
	.InitializeDSMCustomScan = gpusort_initialize_dsm,
	.ReInitializeDSMCustomScan = gpusort_reinitialize_dsm,
	.InitializeWorkerCustomScan = node_share_join,
	.ShutdownCustomScan = gpusort_shutdown,
};

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
	List	   *window_funcs = gpusort_window_funcs(cscan);
	List	   *distinct_columns;	/* of a Unique above, or NIL */
	TupleTableSlot *window_slot = NULL;
	KeyDesc    *key;			/* the leading keys that have codecs */
	KeyPart    *part;
	KeyColumn  *columns;
	int			ncolumns = 0;
	Size		rowbytes;
	int			mark_flags = eflags;	/* as asked, before those we take off */

	state->settings.enabled = gpusort_enabled;
	state->settings.spill = gpusort_spill;
	state->settings.min_rows = gpusort_min_rows;
	state->settings.min_run_rows = gpusort_min_run_rows;
	state->settings.device = gpusort_device;
	state->settings.held_gpus = gpusort_held_gpus;
	node_memory_begin(state, gpusort_memory_budget_kb());
	state->report_cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "GpuSort report",
											  ALLOCSET_SMALL_SIZES);
	node_spill_create(state);
	node_share_create(state);

	/*
	 * Computing window functions, the node's scan tuple is the sorted row
	 * followed by their values (window_calc.c): the rows are sorted and
	 * returned in a slot of the sorted row's columns alone.
	 */
	if (window_funcs != NIL)
	{
		List	   *sorted_tlist = list_copy(cscan->custom_scan_tlist);

		window_slot = node->ss.ss_ScanTupleSlot;
		sorted_tlist = list_truncate(sorted_tlist, list_length(sorted_tlist) -
									 list_length(window_funcs));
		scandesc = ExecTypeFromTL(sorted_tlist);
		node->ss.ss_ScanTupleSlot = ExecAllocTableSlot(&estate->es_tupleTable, scandesc,
													   &TTSOpsVirtual);
	}

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
	columns = palloc0(sizeof(KeyColumn) * state->nkeys * MAX_KEY_WORDS);
	key = key_desc_create(state->nkeys);
	for (int i = 0; i < state->nkeys; i++)
	{
		SortSupport ssup = &state->ssups[i];
		const KeyCodec *codec;
		SortSupport prefix;
		Form_pg_attribute attr;
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

		/*
		 * The leading keys that have codecs are the engines'.  A prefix key
		 * is the last: rows it leaves tied are ordered from it on by the
		 * comparators, whatever later keys the engine could sort.
		 */
		prefix = palloc0(sizeof(SortSupportData));
		prefix->ssup_cxt = CurrentMemoryContext;
		attr = TupleDescAttr(state->indesc, state->attnos[i] - 1);
		codec = key_codec_for_order(state->sortops[i], attr->atttypid, attr->atttypmod,
									state->collations[i], &descending, prefix);
		if (codec == NULL || state->codec_keys < i ||
			(ncolumns > 0 && !columns[ncolumns - 1].codec->exact))
			continue;
		part = key_desc_add(key, codec, descending, state->nullsfirst[i], prefix);
		ncolumns += row_keys_columns(&columns[ncolumns], part, state->attnos[i], i,
									 state->collations[i]);
		state->codec_keys++;
	}
	if (ncolumns == 0)
		elog(ERROR, "GpuSort needs a leading sort key that the engines sort");
	tie_order_init(&state->ties, state->indesc, state->nkeys, state->attnos,
				   state->ssups, state->sortops, state->collations,
				   state->nullsfirst);

	/*
	 * A row that is nothing but its sort key needs no tuple: the
	 * key is kept, and decoded into a virtual tuple on the way out.  Other
	 * rows are returned as MinimalTuples: make the scan slot one of that
	 * kind, so that the nodes above us deform it correctly.
	 */
	state->keys_only = gpusort_rows_are_key(cscan);

	/*
	 * A merge join's inner input, marked and restored but neither rewound
	 * nor read backward: rows that are their one key are kept from the mark
	 * (mark_rows.c), and the runs are merged on the fly as without a mark.
	 */
	state->marks = NULL;
	if (state->keys_only && window_funcs == NIL &&
		TupleDescAttr(state->indesc, 0)->attbyval &&
		(mark_flags & (EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK)) ==
		EXEC_FLAG_MARK)
	{
		state->marks = mark_rows_create();
		state->random_access = false;
	}
	if (state->keys_only)
		state->sort_slot = ExecAllocTableSlot(&estate->es_tupleTable, scandesc,
											  &TTSOpsMinimalTuple);
	else
	{
		node->ss.ss_ScanTupleSlot = ExecAllocTableSlot(&estate->es_tupleTable, scandesc,
													   &TTSOpsMinimalTuple);
		if (window_slot == NULL)
			node->ss.ps.scanops = &TTSOpsMinimalTuple;
	}
	/* (with window functions, the WindowAgg's targetlist projects window_slot) */
	if (window_slot == NULL)
	{
		ExecAssignScanProjectionInfoWithVarno(&node->ss, INDEX_VAR);
		if (node->ss.ps.ps_ProjInfo != NULL)
			elog(ERROR, "GpuSort node must not project");
	}

	/* a row's pointers, its keys, its place in the order and sort scratch */
	rowbytes = (state->keys_only ? 0 : 2 * sizeof(MinimalTuple)) +
		ncolumns * sizeof(uint64) + sizeof(uint32) + cpu_sort_scratch_bytes(1);
	/* strxfrm() keys: a reference to each value, kept for the check */
	if (columns[ncolumns - 1].xfrm)
		rowbytes += sizeof(uint64);

	/*
	 * The engine gets the leading keys while the rows come, unless they are
	 * strxfrm() keys, which are made after the last row.
	 */
	row_store_init(&state->store, CurrentMemoryContext, ncolumns, columns,
				   &state->memory, rowbytes,
				   cscan->scan.plan.plan_rows, state->keys_only,
				   columns[0].xfrm ? NULL :
				   sort_engine_uploader(state->settings.device));
	node_stage_plan_tails(state);
	/* (the window compares rows by the store's keys where it can) */
	state->top_n = NULL;
	state->slicing = gpusort_window_mode(cscan) == WINDOW_SLICES ||
		gpusort_leader_returns_all(cscan) ? SLICES_UNDECIDED : SLICES_NONE;
	if (window_slot != NULL)
	{
		/* (a node over a Gather Merge reads its rows in order: no sort) */
		state->window = node_window_begin(state, window_slot,
										  gpusort_window_mode(cscan) == WINDOW_OVER_SORTED ?
										  node_input_next : node_sorted_next);
		state->top_n = top_n_filter_begin(state, gpusort_window_clause(cscan),
										  gpusort_window_clause_funcs(cscan),
										  scandesc->natts);
	}
	distinct_columns = gpusort_distinct_columns(cscan);
	state->distinct = distinct_columns == NIL ? NULL :
		distinct_filter_begin(&node->ss.ps, ExecGetResultType(&node->ss.ps),
							  distinct_columns);
	state->distinct_keys = state->distinct == NULL || state->window != NULL ? 0 :
		distinct_filter_leading_keys(state->distinct, state->nkeys, state->attnos,
									 state->sortops);
	if (state->top_n == NULL)
		state->top_n = top_n_filter_begin_distinct(state);
	state->heap_input = heap_input_begin(outerPlanState(node), state->top_n != NULL);
	state->path = NULL;
	state->ran = NULL;
}

/*
 * Reads the input into the path it begins with, the in-memory path, or
 * tuplesort where it is chosen before any row; a path may hand the input on
 * to another as it grows (path.h).  The path that has it at its end sorts
 * it.
 */
static void
collect_and_sort(GpuSortState *state)
{
	INSTR_TIME_SET_CURRENT(state->collect_start);
	state->path = &node_memory_path;
	state->path->begin(state);
	/* (where the rows go to the store) */
	state->heap_read = state->heap_input != NULL && state->path->full != NULL;

	for (;;)
	{
		TupleTableSlot *slot;

		if (state->heap_read && state->path->full)
		{
			/* rows straight into the store, then the one it refused */
			slot = heap_input_fill(state->heap_input, &state->store, state->top_n);
			if (TupIsNull(slot))
				break;
			state->path->full(state, slot);
		}
		else
		{
			slot = node_input_next(state);
			if (TupIsNull(slot))
				break;
			state->path->add(state, slot);
		}
	}
	state->path->finish(state);
}

/*
 * How a parallel window's participant reads its rows, decided before its
 * first: slices of the shared input, once it has added its rows and the
 * leader sorted them all; or, where the leader did not share it, all of
 * them for the first participant to ask (whose input then has every row:
 * the parallel scan below gives all its pages to the process that reads
 * it) and none for the others, which leave their input unread.  A node
 * whose leader returns every row (gpusort_distinct_gather) reads no
 * slices: the leader reads them all, the workers none.
 */
static SliceReading
decide_slices(GpuSortState *state)
{
	if (!node_share_sharing(state))
		return node_share_solo(state) ? SLICES_ALONE : SLICES_NO_ROWS;
	if (!node_share_attach(state))
		return node_share_late_slices(state);
	node_collect(state);
	return node_share_slice_reading(state);
}

/* The next row the node returns, its window values with it. */
static TupleTableSlot *
next_row(GpuSortState *state)
{
	if (state->slicing == SLICES_UNDECIDED)
		state->slicing = decide_slices(state);
	if (state->window)
		return node_window_next(state);
	if (state->slicing >= SLICES_NO_ROWS)
		return ExecClearTuple(state->css.ss.ss_ScanTupleSlot);
	if (state->marks)
		return marked_next(state);
	return node_sorted_next(state);
}

static TupleTableSlot *
gpusort_exec(CustomScanState *node)
{
	GpuSortState *state = (GpuSortState *) node;
	TupleTableSlot *slot;

	/* as ExecSort: a cancel comes through while rows are only read back */
	CHECK_FOR_INTERRUPTS();
	state->group_first = false;
	slot = next_row(state);

	/*
	 * under a Unique: the first row of each of its groups (a group's first
	 * that the engine kept alone passes as it is: no row of its group, nor
	 * of the group before, comes back)
	 */
	if (state->distinct && !state->group_first)
		while (!TupIsNull(slot) && !distinct_filter_first(state->distinct, slot))
		{
			CHECK_FOR_INTERRUPTS();
			slot = next_row(state);
		}
	return slot;
}

/*
 * The next row where a merge join marks and restores: given again from the
 * rows kept since the mark, or read anew and kept.  Rows sorted in memory
 * are gone back to by their place instead (gpusort_mark).
 */
static TupleTableSlot *
marked_next(GpuSortState *state)
{
	TupleTableSlot *slot = state->css.ss.ss_ScanTupleSlot;

	if (node_keeps_marks(state) && mark_rows_replay(state->marks, slot) != NULL)
		return slot;
	slot = node_sorted_next(state);
	if (node_keeps_marks(state) && !TupIsNull(slot))
		mark_rows_add(state->marks, slot);
	return slot;
}

/* Reads and sorts the input, where it is not yet. */
void
node_collect(GpuSortState *state)
{
	if (state->path != NULL)
		return;
	/* (a participant that comes after the shared input was sorted: its own) */
	if (node_share_sharing(state))
		(void) node_share_attach(state);
	collect_and_sort(state);
	if (IsParallelWorker())
		gpusort_publish_worker_stats(state);
	/* (where the rows went elsewhere than the shared input: none) */
	if (node_share_sharing(state))
		node_share_done(state, 0, 0,
						state->path == &node_memory_path && state->ntotal == 0);
}

/* The next (or previous) sorted row, in the scan slot. */
TupleTableSlot *
node_sorted_next(GpuSortState *state)
{
	CustomScanState *node = &state->css;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	bool		forward = ScanDirectionIsForward(node->ss.ps.state->es_direction);
	bool		timing = node->ss.ps.instrument && node->ss.ps.instrument->need_timer;
	instr_time	start;

	node_collect(state);
	if (!timing)
		return state->path->next(state, forward, slot);
	INSTR_TIME_SET_CURRENT(start);
	slot = state->path->next(state, forward, slot);
	state->emit_ms += ms_since(start);
	return slot;
}

/* Forgets the sorted rows, so that the next fetch reads the input again. */
static void
forget_rows(GpuSortState *state)
{
	state->path->end(state);
	state->path = NULL;
	row_store_reset(&state->store);
	memset(&state->report, 0, sizeof(state->report));	/* a new sort */
	if (state->top_n)
		top_n_filter_reset(state->top_n);
	if (state->marks)
		mark_rows_reset(state->marks);
}

static void
gpusort_end(CustomScanState *node)
{
	GpuSortState *state = (GpuSortState *) node;

	if (state->path)
		state->path->end(state);
	if (state->window)
		node_window_end(state->window);
	if (state->top_n)
		top_n_filter_end(state->top_n);
	MemoryContextDelete(state->store.cxt);
	big_array_release_kept();
	ExecEndNode(outerPlanState(node));
}

static void
gpusort_rescan(CustomScanState *node)
{
	GpuSortState *state = (GpuSortState *) node;
	PlanState  *outer = outerPlanState(node);

	if (state->window)
		node_window_rescan(state->window);	/* computed again */
	if (state->distinct)
		distinct_filter_reset(state->distinct);
	if (node_is_slices(state))
		state->slicing = SLICES_UNDECIDED;
	if (gpusort_window_mode((CustomScan *) node->ss.ps.plan) == WINDOW_OVER_SORTED)
	{
		/* the input is read again, in order */
		if (outer->chgParam == NULL)
			ExecReScan(outer);
		return;
	}
	if (state->path == NULL)
		return;					/* not read yet: the input rescans itself */
	ExecClearTuple(node->ss.ss_ScanTupleSlot);

	/*
	 * With new parameters the input must be read again; so must it where
	 * the path cannot go back to the first row.
	 */
	if (outer->chgParam != NULL || !state->path->rescan(state))
	{
		forget_rows(state);
		if (outer->chgParam == NULL)
			ExecReScan(outer);
	}
}

/*
 * A parallel query's shared memory, in the leader: whether its
 * participants share one input (shared_stage.c) depends on whether the
 * order lets the engine hold the rows (spill_stage.c).
 */
static void
gpusort_initialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuSortState *state = (GpuSortState *) node;

	node_share_init(state, pcxt, coordinate, node_stage_possible(state));
}

/* A rescan's new workers: the last scan's input, if unused, is let go. */
static void
gpusort_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuSortState *state = (GpuSortState *) node;

	node_share_reinit(state, pcxt, coordinate, node_stage_possible(state));
}

/*
 * The node shuts down, before the Gather above it, whose shared memory
 * goes: a worker says what it did at last (its tuple queue ends after
 * this, so the leader, which read all of them, sees it), and the leader
 * keeps its workers' statistics for EXPLAIN ANALYZE.
 */
static void
gpusort_shutdown(CustomScanState *node)
{
	GpuSortState *state = (GpuSortState *) node;

	if (IsParallelWorker())
		gpusort_publish_worker_stats(state);
	node_share_shutdown(state);
}

static void
gpusort_mark(CustomScanState *node)
{
	GpuSortState *state = (GpuSortState *) node;

	if (node_keeps_marks(state))
		mark_rows_mark(state->marks);
	else if (state->path)
		state->path->mark(state);
}

static void
gpusort_restore(CustomScanState *node)
{
	GpuSortState *state = (GpuSortState *) node;

	if (node_keeps_marks(state))
		mark_rows_restore(state->marks);
	else if (state->path)
		state->path->restore(state);
}
