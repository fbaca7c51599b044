/*-------------------------------------------------------------------------
 *
 * heap_input.c
 *	  The node's input read straight from a heap table.
 *
 * Where the node's input is a plain sequential scan of a heap table (no
 * filter, no projection), the node reads the scan's tuples
 * itself, with heap_getnext(), and adds them to the row store while they
 * lie in the scan's pinned buffer: the rows are the ones the scan node would
 * return, in its order, without the executor's work for each (storing it in
 * a slot, pinning its buffer again, the scan node's calls).  The scan is the
 * scan node's own, begun as it would begin it, so that it ends, rescans and
 * goes on reading with the node as always; its EXPLAIN ANALYZE counts the
 * rows read here.  A parallel scan is read the same way: the Gather began it
 * over the query's shared memory (ExecSeqScanInitializeDSM) before any
 * participant reads, and heap_getnext() takes its pages in turn with the
 * other participants, as a parallel CREATE INDEX reads its table.  Where
 * no Gather began it (no parallel mode), the scan is begun here as SeqNext()
 * would, over the whole table.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "storage/bufmgr.h"

#include "node/node_state.h"

/* Whether outer is a scan whose rows heap_input_fill can read. */
bool
heap_input_usable(PlanState *outer)
{
	Relation	rel;

	if (!IsA(outer, SeqScanState))
		return false;
	rel = ((SeqScanState *) outer)->ss.ss_currentRelation;
	return outer->qual == NULL && outer->ps_ProjInfo == NULL &&
		outer->state->es_epq_active == NULL &&
		rel->rd_tableam == GetHeapamTableAmRoutine() &&
		!TransactionIdIsValid(CheckXidAlive);	/* heap_getnext() refuses */
}

/*
 * Adds the rows of the scan outer to the store until the store refuses one,
 * which is returned in the scan's slot; returns NULL once every row is in.
 * The next rows come from here again, or from the scan node.
 */
TupleTableSlot *
heap_input_fill(PlanState *outer, RowStore *store)
{
	SeqScanState *node = (SeqScanState *) outer;
	TableScanDesc scan = node->ss.ss_currentScanDesc;
	TupleDesc	desc = RelationGetDescr(node->ss.ss_currentRelation);
	TupleTableSlot *refused = NULL;
	double		rows = 0;
	HeapTuple	tuple;

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
		rows++;
		if (!row_store_add_heap(store, desc, tuple, BufferGetPage(buffer)))
		{
			refused = ExecStoreBufferHeapTuple(tuple, node->ss.ss_ScanTupleSlot,
											   buffer);
			break;
		}
	}
	if (outer->instrument)
		InstrStopNode(outer->instrument, rows);
	return refused;
}
