/*-------------------------------------------------------------------------
 *
 * key_statistics.c
 *	  What the planner's statistics say of a GpuSort node's leading sort
 *	  keys, where they are columns of tables that its input returns as
 *	  they are (through joins, subqueries, partitions and the like): how
 *	  many rows a group of rows equal in them is expected to hold, by the
 *	  distinct values ANALYZE counted (pg_statistic's stadistinct, as the
 *	  planner reads it for its estimates of groups).  The node asks before
 *	  it holds an input over the budget by prefix keys (spill_stage.c),
 *	  whose tied groups are ordered one at a time in one process.
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
 * The distinct values of an output column of a plan that returns a table's
 * column as it is, followed down through the plans that pass their input's
 * columns on (joins, Gather, Material, Hash, a subquery's scan, ...) to the
 * scan of the table; of an Append's (a partitioned table's), the most that
 * any of its plans returns, the fewest the whole can have.  -1 where the
 * column is computed, or no statistics tell.
 */
static double
output_distinct(Plan *plan, AttrNumber attno, EState *estate)
{
	while (plan != NULL)
	{
		Var		   *var = entry_column(plan->targetlist, attno);

		if (var == NULL)
			return -1;
		if (IsA(plan, IndexOnlyScan) && var->varno == INDEX_VAR)
			var = entry_column(((IndexOnlyScan *) plan)->indextlist, var->varattno);
		if (var == NULL)
			return -1;
		attno = var->varattno;
		if (var->varno == OUTER_VAR && (IsA(plan, Append) || IsA(plan, MergeAppend)))
		{
			List	   *plans = IsA(plan, Append) ? ((Append *) plan)->appendplans :
				((MergeAppend *) plan)->mergeplans;
			double		most = -1;
			ListCell   *lc;

			foreach(lc, plans)
			{
				double		distinct = output_distinct(lfirst(lc), attno, estate);

				if (distinct < 0)
					return -1;
				most = Max(most, distinct);
			}
			return most;
		}
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
				return -1;
			return column_distinct(rte->relid, attno);
		}
		else
			return -1;
	}
	return -1;
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
		double		distinct = output_distinct(input->plan, state->attnos[k],
											   state->css.ss.ps.state);

		if (distinct < 0)
			return -1;
		groups *= distinct;
	}
	groups = Min(groups, plan->plan_rows);
	return plan->plan_rows / Max(groups, 1);
}
