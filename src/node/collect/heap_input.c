/*-------------------------------------------------------------------------
 *
 * heap_input.c
 *	  The node's input read straight from a heap table.
 *
 * Where the node's input is a sequential scan of a heap table, the
 * node reads the scan's tuples itself, with heap_getnext(), and adds them
 * to the row store while they lie in the scan's pinned buffer: the rows are
 * the ones the scan node would return, in its order, those that pass its
 * filter where it has one, without the executor's work for each (storing it
 * in a slot, pinning its buffer again, the scan node's calls, its
 * projection).  The filter is tested as the scan node tests it, over the
 * tuple in the buffer, and counts the rows it removes.  Whole rows are
 * copied as they lie; where the scan returns some of the columns as they
 * are, beside constants, the columns up to the last one returned are
 * deformed and the ones returned stored with the constants, as the scan's
 * projection would return them; where it computes more (expressions, system
 * columns, the missing values of a column added with a default), its own
 * projection computes them over the tuple in the buffer, as the scan node
 * would.  A top N filter (top_n_filter.c) sees each row that passes the
 * scan's filter, as it would see the scan node's, before the store does.
 * The scan is the scan node's own, begun as it would begin it, so
 * that it ends, rescans and goes on reading with the node as always; its
 * EXPLAIN ANALYZE counts the rows read here.  A parallel scan is read the
 * same way: the Gather began it over the query's shared memory
 * (ExecSeqScanInitializeDSM) before any participant reads, and
 * heap_getnext() takes its pages in turn with the other participants, as a
 * parallel CREATE INDEX reads its table.  Where no Gather began it (no
 * parallel mode), the scan is begun here as SeqNext() would, over the whole
 * table.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "storage/bufmgr.h"

#include "node/collect/collect.h"
#include "node/collect/top_n_filter.h"
#include "node/node_state.h"

/* A scan whose rows the node reads itself (heap_input_begin). */
struct HeapInput
{
	SeqScanState *scan;
	int			ncolumns;		/* columns returned, where the scan projects */
	AttrNumber *attnos;			/* their table columns (0: a constant);
								 * NULL: whole rows */
	Datum	   *constants;		/* the constants' values */
	bool	   *constants_null;
	ProjectionInfo *computed;	/* the scan's projection, where it computes
								 * more than columns and constants */
	TupleTableSlot *tested;		/* the row the filter and it read */
	TupleDesc	deformed;		/* the table's columns up to the last of them */
	Datum	   *values;			/* those columns of a row */
	bool	   *isnull;
};

/*
 * The table column of each column that the scan returns, into the input's
 * attnos (as many as its targetlist has), where each is a plain column
 * reference that needs no missing value filled in (a column added with a
 * default after rows were stored) or a constant (as the planner makes of
 * a subquery's columns that nothing reads); the last of them, or 0 where
 * it returns anything else or no column (its projection then computes the
 * rows).
 */
static AttrNumber
projected_columns(SeqScanState *node, HeapInput *input)
{
	TupleDesc	desc = RelationGetDescr(node->ss.ss_currentRelation);
	Index		scanrelid = ((Scan *) node->ss.ps.plan)->scanrelid;
	AttrNumber	last = 0;
	int			i = 0;
	ListCell   *lc;

	foreach(lc, node->ss.ps.plan->targetlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Var		   *var = (Var *) tle->expr;

		/* (a junk column, as an ORDER BY column not selected, is returned too) */
		if (IsA(tle->expr, Const))
		{
			Const	   *constant = (Const *) tle->expr;

			input->attnos[i] = 0;
			input->constants[i] = constant->constvalue;
			input->constants_null[i++] = constant->constisnull;
			continue;
		}
		if (!IsA(var, Var) || var->varno != scanrelid ||
			var->varlevelsup != 0 || var->varattno <= 0 ||
			var->varattno > desc->natts ||
			TupleDescAttr(desc, var->varattno - 1)->atthasmissing)
			return 0;
		input->attnos[i++] = var->varattno;
		last = Max(last, var->varattno);
	}
	return last;
}

/*
 * The reading of outer's rows by the node, or NULL where outer is not a
 * sequential scan of a heap table whose rows the node can read so; filtered
 * where a top N filter will see them.
 */
HeapInput *
heap_input_begin(PlanState *outer, bool filtered)
{
	SeqScanState *node = (SeqScanState *) outer;
	HeapInput  *input;
	TupleDesc	desc;
	AttrNumber	last;

	if (!IsA(outer, SeqScanState) || outer->state->es_epq_active != NULL ||
		node->ss.ss_currentRelation->rd_tableam != GetHeapamTableAmRoutine() ||
		TransactionIdIsValid(CheckXidAlive))	/* heap_getnext() refuses */
		return NULL;

	input = palloc0(sizeof(HeapInput));
	input->scan = node;
	desc = RelationGetDescr(node->ss.ss_currentRelation);
	if (outer->ps_ProjInfo == NULL)
		last = 0;				/* whole rows */
	else
	{
		input->ncolumns = list_length(outer->plan->targetlist);
		input->attnos = palloc(sizeof(AttrNumber) * Max(input->ncolumns, 1));
		input->constants = palloc(sizeof(Datum) * Max(input->ncolumns, 1));
		input->constants_null = palloc(sizeof(bool) * Max(input->ncolumns, 1));
		if ((last = projected_columns(node, input)) == 0)
		{
			/* expressions, system columns, missing values: its projection */
			pfree(input->attnos);
			pfree(input->constants);
			pfree(input->constants_null);
			input->attnos = NULL;
			input->computed = outer->ps_ProjInfo;
		}
	}
	if (outer->qual != NULL || input->computed != NULL || filtered)
		input->tested = ExecAllocTableSlot(&outer->state->es_tupleTable, desc,
										   &TTSOpsHeapTuple);
	if (last == 0)
		return input;
	input->deformed = CreateTemplateTupleDesc(last);
	for (AttrNumber a = 1; a <= last; a++)
		TupleDescCopyEntry(input->deformed, a, desc, a);
	input->values = palloc(sizeof(Datum) * last);
	input->isnull = palloc(sizeof(bool) * last);
	return input;
}

/*
 * The columns of a heap tuple that the scan returns, in its projection's
 * slot (the values may point into the tuple's buffer).
 */
static TupleTableSlot *
project_row(HeapInput *input, HeapTuple tuple)
{
	TupleTableSlot *slot = input->scan->ss.ps.ps_ResultTupleSlot;

	heap_deform_tuple(tuple, input->deformed, input->values, input->isnull);
	ExecClearTuple(slot);
	for (int i = 0; i < input->ncolumns; i++)
	{
		AttrNumber	attno = input->attnos[i];

		slot->tts_values[i] = attno ? input->values[attno - 1] : input->constants[i];
		slot->tts_isnull[i] = attno ? input->isnull[attno - 1] : input->constants_null[i];
	}
	return ExecStoreVirtualTuple(slot);
}

/*
 * Does the row pass the scan's filter (none: it does)?  The tuple is put
 * where the filter and the projection read it, as ExecScan() puts it: the
 * scan tuple of the scan's expression context, reset for it, in a slot
 * over the tuple in the buffer that the scan holds pinned (no pin of the
 * slot's own).  A row that fails counts as one the scan's filter removed.
 */
static bool
row_passes(HeapInput *input, HeapTuple tuple)
{
	ExprContext *econtext = input->scan->ss.ps.ps_ExprContext;
	ExprState  *qual = input->scan->ss.ps.qual;

	if (input->tested == NULL)
		return true;
	ResetExprContext(econtext);
	econtext->ecxt_scantuple = ExecStoreHeapTuple(tuple, input->tested, false);
	if (qual == NULL || ExecQual(qual, econtext))
		return true;
	InstrCountFiltered1(input->scan, 1);
	return false;
}

/*
 * Adds the rows of the scan outer that the filter keeps (without one, all)
 * to the store until the store refuses one, which is returned in the scan's
 * slot; returns NULL once every row is in.  The next rows come from here
 * again, or from the scan node.
 */
TupleTableSlot *
heap_input_fill(HeapInput *input, RowStore *store, struct TopNFilter *filter)
{
	SeqScanState *node = input->scan;
	PlanState  *outer = &node->ss.ps;
	TableScanDesc scan = node->ss.ss_currentScanDesc;
	TupleDesc	desc = RelationGetDescr(node->ss.ss_currentRelation);
	TupleTableSlot *refused = NULL;
	double		rows = 0;
	HeapTuple	tuple;

	/* a parameter of the filter changed: rescanned as ExecProcNode() would */
	if (outer->chgParam != NULL)
	{
		ExecReScan(outer);
		scan = node->ss.ss_currentScanDesc;
	}
	if (scan == NULL)
	{
		/* as SeqNext() begins it */
		scan = table_beginscan(node->ss.ss_currentRelation,
							   outer->state->es_snapshot, 0, NULL);
		node->ss.ss_currentScanDesc = scan;
	}
	if (outer->instrument)
		InstrStartNode(outer->instrument);
	while ((tuple = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Buffer		buffer = ((HeapScanDesc) scan)->rs_cbuf;

		CHECK_FOR_INTERRUPTS();
		if (!row_passes(input, tuple))
			continue;
		rows++;
		if (input->attnos != NULL || input->computed != NULL)
		{
			TupleTableSlot *slot = input->computed ?
				ExecProject(input->computed) : project_row(input, tuple);

			if (filter && !top_n_filter_keeps(filter, slot))
				continue;
			if (!row_store_add(store, slot))
			{
				/* (its values leave the buffer with it) */
				ExecMaterializeSlot(slot);
				refused = slot;
				break;
			}
		}
		else if (filter && !top_n_filter_keeps(filter, input->tested))
			continue;
		else if (!row_store_add_heap(store, desc, tuple, BufferGetPage(buffer)))
		{
			refused = ExecStoreBufferHeapTuple(tuple, node->ss.ss_ScanTupleSlot,
											   buffer);
			break;
		}
	}
	if (input->tested != NULL)
		ExecClearTuple(input->tested);
	if (outer->instrument)
		InstrStopNode(outer->instrument, rows);
	return refused;
}
