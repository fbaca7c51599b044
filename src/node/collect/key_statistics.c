/*-------------------------------------------------------------------------
 *
 * key_statistics.c
 *	  What the planner's statistics say of a GpuSort node's leading sort
 *	  keys, where they are columns of tables that its input returns as
 *	  they are (through joins, subqueries and the like): how many rows a
 *	  group of rows equal in them is expected to hold, by the distinct
 *	  values ANALYZE counted (pg_statistic's stadistinct, as the planner
 *	  reads it for its estimates of groups).  The node asks before it
 *	  holds an input over the budget by prefix keys (spill_stage.c), whose
 *	  tied groups are ordered one at a time in one process.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "catalog/pg_statistic.h"
#include "executor/executor.h"
#include "nodes/plannodes.h"
#include "utils/syscache.h"

#include "node/collect/key_statistics.h"

/*
 * The distinct values of a table's column that ANALYZE counted, or -1
 * where it has not: a count, or (negative) a fraction of the table's rows.
 */
static double
column_distinct(Oid relid, AttrNumber attno)
{
	HeapTuple	tuple;
	double		distinct;
	double		reltuples;

	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tuple))
		return -1;
	reltuples = ((Form_pg_class) GETSTRUCT(tuple))->reltuples;
	ReleaseSysCache(tuple);
	if (reltuples <= 0)
		return -1;
	tuple = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid),
							Int16GetDatum(attno), BoolGetDatum(false));
	if (!HeapTupleIsValid(tuple))
		return -1;
	distinct = ((Form_pg_statistic) GETSTRUCT(tuple))->stadistinct;
	ReleaseSysCache(tuple);
	if (distinct < 0)
		distinct = -distinct * reltuples;
	return distinct > 0 ? distinct : -1;
}

/* Does the plan read a table's own rows, scanrelid its range table entry? */
static bool
table_scan(Plan *plan)
{
	return IsA(plan, SeqScan) || IsA(plan, SampleScan) || IsA(plan, IndexScan) ||
		IsA(plan, IndexOnlyScan) || IsA(plan, BitmapHeapScan) || IsA(plan, TidScan) ||
		IsA(plan, TidRangeScan);
}

/* A target entry's expression, a column as it is, or NULL. */
static Var *
entry_column(List *targetlist, AttrNumber attno)
{
	Expr	   *expr;

	if (attno <= 0 || attno > list_length(targetlist))
		return NULL;
	expr = list_nth_node(TargetEntry, targetlist, attno - 1)->expr;
	while (expr != NULL && IsA(expr, RelabelType))
		expr = ((RelabelType *) expr)->arg;
	if (expr == NULL || !IsA(expr, Var) || ((Var *) expr)->varlevelsup != 0)
		return NULL;
	return (Var *) expr;
}

/*
 * The table column that an output column of a plan returns as it is,
 * followed down through the plans that pass their input's columns on
 * (joins, Gather, Material, Hash, a subquery's scan, ...) to the scan of a
 * table: false where the column is computed, or comes from several plans
 * (an Append) or none.
 */
static bool
table_column(Plan *plan, AttrNumber attno, EState *estate, Oid *relid, AttrNumber *column)
{
	while (plan != NULL)
	{
		Var		   *var = entry_column(plan->targetlist, attno);

		if (var == NULL)
			return false;
		if (IsA(plan, IndexOnlyScan) && var->varno == INDEX_VAR)
			var = entry_column(((IndexOnlyScan *) plan)->indextlist, var->varattno);
		if (var == NULL)
			return false;
		attno = var->varattno;
		if (var->varno == OUTER_VAR)
			plan = outerPlan(plan);
		else if (var->varno == INNER_VAR)
			plan = innerPlan(plan);
		else if (IsA(plan, SubqueryScan) && var->varno == ((Scan *) plan)->scanrelid)
			plan = ((SubqueryScan *) plan)->subplan;
		else if (table_scan(plan) && var->varno == ((Scan *) plan)->scanrelid)
		{
			RangeTblEntry *rte = exec_rt_fetch(var->varno, estate);

			if (rte->rtekind != RTE_RELATION || attno <= 0)
				return false;
			*relid = rte->relid;
			*column = attno;
			return true;
		}
		else
			return false;
	}
	return false;
}

double
node_expected_group_rows(GpuSortState *state, int nkeys)
{
	PlanState  *input = outerPlanState(&state->css.ss.ps);
	Plan	   *plan = state->css.ss.ps.plan;
	double		groups = 1;

	if (input == NULL)
		return -1;
	for (int k = 0; k < nkeys; k++)
	{
		Oid			relid;
		AttrNumber	column;
		double		distinct;

		if (!table_column(input->plan, state->attnos[k], state->css.ss.ps.state,
						  &relid, &column) ||
			(distinct = column_distinct(relid, column)) < 0)
			return -1;
		groups *= distinct;
	}
	groups = Min(groups, plan->plan_rows);
	return plan->plan_rows / Max(groups, 1);
}
