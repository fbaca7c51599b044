/*-------------------------------------------------------------------------
 *
 * planner.c
 *	  The planner hook that puts GpuSort in place of Sort.
 *
 * After the standard planner has built the plan, every Sort node that
 * GpuSort can run is replaced by a GpuSort custom scan over the same input:
 * ORDER BY, and the Sorts that feed merge joins, grouping, DISTINCT and
 * window functions.  The plan is otherwise left as the planner made it, so
 * its shape and costs stay those of the Sort plan.
 *
 * A Sort that a LIMIT bounds (top-N) is left to PostgreSQL's bounded sort.
 * A WindowAgg over a GpuSort whose ranking functions GpuSort can compute
 * gives way to one GpuSort node that sorts and computes them
 * (window_plan.c); a parallel window's path (window_path.c) becomes one
 * below the Gather.
 *
 * The hook acts while gpusort.enabled is on, where the library was loaded
 * by choice (a preload setting or LOAD); where a call of one of gpusort's
 * functions loaded it, only once gpusort.enabled is set explicitly, so that
 * sorting an array does not change how the session's queries run.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/nodeFuncs.h"
#include "optimizer/planner.h"

#include "node/plan/gpusort_node.h"
#include "node/plan/planner.h"
#include "node/plan/window.h"
#include "settings.h"

static planner_hook_type prev_planner_hook = NULL;

static Plan *replace_sorts(Plan *plan, bool bounded, bool parallel);

static List *
replace_sorts_in_list(List *plans, bool bounded, bool parallel)
{
	ListCell   *lc;

	foreach(lc, plans)
		lfirst(lc) = replace_sorts((Plan *) lfirst(lc), bounded, parallel);
	return plans;
}

/*
 * Would this Sort be worth running as GpuSort, by the planner's estimate?
 * The memory budget is not judged here: an input that outgrows it goes to
 * tuplesort at run time, and EXPLAIN ANALYZE says so.
 */
static bool
worth_replacing(Sort *sort)
{
	return sort->plan.plan_rows >= gpusort_min_rows &&
		gpusort_sort_supported(sort);
}

/*
 * Returns the plan with its eligible Sorts replaced.  "bounded" says that a
 * LIMIT above may pass a tuple bound down to this node (as
 * ExecSetTupleBound does through these node types), "parallel" that a
 * Gather or a Gather Merge is above it.
 */
static Plan *
replace_sorts(Plan *plan, bool bounded, bool parallel)
{
	bool		child_bounded = false;
	bool		child_parallel;
	Plan	   *result = plan;

	if (plan == NULL)
		return NULL;
	check_stack_depth();
	child_parallel = parallel || IsA(plan, Gather) || IsA(plan, GatherMerge);

	/* a parallel window's path, planned whole (window_path.c) */
	if (gpusort_is_window_slices_marker(plan))
		return gpusort_window_slices_plan((CustomScan *) plan);

	switch (nodeTag(plan))
	{
		case T_Limit:
			child_bounded = ((Limit *) plan)->limitCount != NULL;
			break;
		case T_Result:
		case T_SubqueryScan:
		case T_Gather:
		case T_GatherMerge:
		case T_Append:
		case T_MergeAppend:
			child_bounded = bounded;
			break;
		default:
			break;
	}

	plan->lefttree = replace_sorts(plan->lefttree, child_bounded, child_parallel);
	plan->righttree = replace_sorts(plan->righttree, child_bounded, child_parallel);

	switch (nodeTag(plan))
	{
		case T_Append:
			replace_sorts_in_list(((Append *) plan)->appendplans, child_bounded,
								  child_parallel);
			break;
		case T_MergeAppend:
			replace_sorts_in_list(((MergeAppend *) plan)->mergeplans, child_bounded,
								  child_parallel);
			break;
		case T_BitmapAnd:
			replace_sorts_in_list(((BitmapAnd *) plan)->bitmapplans, false, false);
			break;
		case T_BitmapOr:
			replace_sorts_in_list(((BitmapOr *) plan)->bitmapplans, false, false);
			break;
		case T_SubqueryScan:
			((SubqueryScan *) plan)->subplan =
				replace_sorts(((SubqueryScan *) plan)->subplan, child_bounded,
							  child_parallel);
			break;
		case T_CustomScan:
			replace_sorts_in_list(((CustomScan *) plan)->custom_plans, false,
								  child_parallel);
			break;
		case T_GatherMerge:
			if (IsA(plan->lefttree, CustomScan) &&
				gpusort_is_node((CustomScan *) plan->lefttree))
				gpusort_mark_shared((CustomScan *) plan->lefttree);
			break;
		case T_MergeJoin:

			/*
			 * The planner puts a Material above an inner Sort expected to
			 * spill, so that the sort merges its runs on the fly; a GpuSort
			 * whose rows are their one key keeps the rows since the merge
			 * join's mark itself (mark_rows.c) and needs no copy of them all.
			 */
			if (IsA(plan->righttree, Material) &&
				IsA(plan->righttree->lefttree, CustomScan) &&
				gpusort_is_node((CustomScan *) plan->righttree->lefttree) &&
				gpusort_rows_are_key((CustomScan *) plan->righttree->lefttree))
				plan->righttree = plan->righttree->lefttree;
			break;
		case T_Unique:
			{
				Plan	   *gather;

				gpusort_mark_distinct((Unique *) plan);
				gather = gpusort_distinct_gather((Unique *) plan);
				if (gather != NULL)
					result = gather;
			}
			break;
		case T_Sort:
			if (!bounded && worth_replacing((Sort *) plan))
				result = (Plan *) gpusort_make_node((Sort *) plan);
			break;
		case T_WindowAgg:
			{
				CustomScan *window = NULL;

				if (IsA(plan->lefttree, CustomScan))
				{
					window = gpusort_window_node((WindowAgg *) plan,
												 (CustomScan *) plan->lefttree);
					if (window == NULL && gpusort_is_node((CustomScan *) plan->lefttree))
						window = gpusort_window_stack((WindowAgg *) plan,
													  (CustomScan *) plan->lefttree);
				}
				else if (IsA(plan->lefttree, GatherMerge))
				{
					window = gpusort_window_over_gather((WindowAgg *) plan,
														(GatherMerge *) plan->lefttree);
					if (window == NULL)
						gpusort_window_top_n_below((WindowAgg *) plan,
												   (GatherMerge *) plan->lefttree);
				}
				if (window != NULL)
					result = (Plan *) window;
			}
			break;
		default:
			break;
	}

	/*
	 * A GpuSort below a Gather runs in every participant: parallel-aware,
	 * it gets the query's shared memory from the executor, where its
	 * workers leave their statistics for EXPLAIN ANALYZE and its
	 * participants may share one input (worker_stats.c, shared_stage.c),
	 * and EXPLAIN calls it Parallel.
	 */
	if (parallel && IsA(result, CustomScan) && gpusort_is_node((CustomScan *) result))
		result->parallel_aware = true;
	return result;
}

static PlannedStmt *
gpusort_planner(Query *parse, const char *query_string, int cursorOptions,
				ParamListInfo boundParams)
{
	PlannedStmt *stmt;
	ListCell   *lc;

	if (prev_planner_hook)
		stmt = prev_planner_hook(parse, query_string, cursorOptions, boundParams);
	else
		stmt = standard_planner(parse, query_string, cursorOptions, boundParams);

	if (!gpusort_planner_acts())
		return stmt;

	stmt->planTree = replace_sorts(stmt->planTree, false, false);
	foreach(lc, stmt->subplans)
		lfirst(lc) = replace_sorts((Plan *) lfirst(lc), false, false);

	/* a GpuSort whose rows are the result's, bar a LIMIT */
	if (stmt->commandType == CMD_SELECT && stmt->rowMarks == NIL)
	{
		Plan	   *top = stmt->planTree;

		if (IsA(top, Limit))
			top = top->lefttree;
		if (IsA(top, CustomScan) && gpusort_is_node((CustomScan *) top) &&
			gpusort_window_funcs((CustomScan *) top) == NIL)
			gpusort_unproject_keys((CustomScan *) top);
	}
	return stmt;
}

void
gpusort_planner_init(void)
{
	prev_planner_hook = planner_hook;
	planner_hook = gpusort_planner;
}
