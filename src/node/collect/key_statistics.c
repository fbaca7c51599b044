/*-------------------------------------------------------------------------
 *
 * key_statistics.c
 *	  What the planner's statistics say of a GpuSort node's leading sort
 *	  keys, where its input is a scan of a table and those keys are the
 *	  table's columns: how many rows a group of rows equal in them is
 *	  expected to hold (ANALYZE's distinct values, pg_statistic's
 *	  stadistinct, read as the planner reads them for its estimates of
 *	  groups).  The node asks before it holds an input over the budget by
 *	  prefix keys (spill_stage.c), whose tied groups are ordered one at a
 *	  time in one process.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_statistic.h"
#include "nodes/plannodes.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "node/collect/key_statistics.h"

/*
 * The distinct values of a table's column that ANALYZE counted, or -1
 * where it has not: a count, or (negative) a fraction of the table's rows.
 */
static double
column_distinct(Relation rel, AttrNumber attno)
{
	HeapTuple	tuple;
	double		distinct;
	double		reltuples = rel->rd_rel->reltuples;

	if (attno <= 0 || reltuples <= 0)
		return -1;
	tuple = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(RelationGetRelid(rel)),
							Int16GetDatum(attno), BoolGetDatum(false));
	if (!HeapTupleIsValid(tuple))
		return -1;
	distinct = ((Form_pg_statistic) GETSTRUCT(tuple))->stadistinct;
	ReleaseSysCache(tuple);
	if (distinct < 0)
		distinct = -distinct * reltuples;
	return distinct > 0 ? distinct : -1;
}

/*
 * The table column that an output column of a scan returns as it is, or
 * InvalidAttrNumber.
 */
static AttrNumber
scanned_column(Scan *scan, AttrNumber attno)
{
	TargetEntry *entry;
	Expr	   *expr;

	if (attno <= 0 || attno > list_length(scan->plan.targetlist))
		return InvalidAttrNumber;
	entry = list_nth_node(TargetEntry, scan->plan.targetlist, attno - 1);
	expr = entry->expr;
	while (IsA(expr, RelabelType))
		expr = ((RelabelType *) expr)->arg;
	if (!IsA(expr, Var) || ((Var *) expr)->varno != scan->scanrelid ||
		((Var *) expr)->varlevelsup != 0)
		return InvalidAttrNumber;
	return ((Var *) expr)->varattno;
}

double
node_expected_group_rows(GpuSortState *state, int nkeys)
{
	PlanState  *input = outerPlanState(&state->css.ss.ps);
	Plan	   *plan = state->css.ss.ps.plan;
	Relation	rel;
	double		groups = 1;

	/* a scan of a table's own rows, whose output columns are its columns */
	if (input == NULL ||
		!(IsA(input->plan, SeqScan) || IsA(input->plan, IndexScan) ||
		  IsA(input->plan, BitmapHeapScan)) ||
		(rel = ((ScanState *) input)->ss_currentRelation) == NULL)
		return -1;
	for (int k = 0; k < nkeys; k++)
	{
		AttrNumber	column = scanned_column((Scan *) input->plan, state->attnos[k]);
		double		distinct = column_distinct(rel, column);

		if (distinct < 0)
			return -1;
		groups *= distinct;
	}
	groups = Min(groups, plan->plan_rows);
	return plan->plan_rows / Max(groups, 1);
}
