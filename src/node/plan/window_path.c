/*-------------------------------------------------------------------------
 *
 * window_path.c
 *	  The parallel window: a path at PostgreSQL's window level that sorts
 *	  and computes ranking window functions below a Gather, in every
 *	  participant of a parallel plan, so that what reads their values (an
 *	  aggregate over a subquery, partial in each participant) runs there
 *	  too, and the rows leave the participants with their values, instead
 *	  of each going to the leader to be computed there.
 *
 * PostgreSQL marks window functions parallel-restricted, as the rows that
 * each process sorts differ; so it plans a WindowAgg above a Gather Merge
 * only, and the leader alone computes the values and all that reads them.
 * Here the participants' rows are one input held by the engine and sorted
 * once (shared_stage.c), and each participant returns the partitions that
 * start in the slices of it that it takes (window_calc.c): the values are
 * those that one process computing all of them would find.  So this path
 * may mark the window's relation parallel and offer a partial path there:
 * where the query level above aggregates in parts, the planner puts the
 * subquery's scan, partial aggregation and the Gather above it as it does
 * above a parallel scan; elsewhere a Gather over it is offered here too,
 * a path with no order (an ORDER BY sorts above it).
 *
 * It is offered for window clauses with PARTITION BY whose functions
 * GpuSort computes (window_plan.c), over one sort whose keys lead with
 * each clause's, with a run condition where there is one clause (top N
 * per group: the participant that computes a partition ends it), over
 * one table's parallel scan, where the sort keys are exact and few enough
 * for the engine to hold every row by them alone (keys_held_whole: a later
 * key that may be NULL, say, of a codec that leaves room for one), and
 * only where an engine that shares held inputs is there and ready (the GPU
 * service, with a GPU).  Where at run time the leader cannot share the
 * input, one participant computes the whole window alone and the others
 * return no row, which is still right.
 *
 * The path's plan is a marker made by the planner around the plan of
 * WindowAggs (one a clause) over a Sort over the partial scan (which
 * PostgreSQL builds and fixes up as for any plan); gpusort's planner hook
 * then makes it one GpuSort node of mode WINDOW_SLICES
 * (gpusort_window_slices_plan), as it makes the GpuSorts of other
 * WindowAggs.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_statistic.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planner.h"
#include "optimizer/tlist.h"
#include "parser/parsetree.h"
#include "utils/syscache.h"

#include "engine/engine.h"
#include "keys/key_codec.h"
#include "node/plan/gpusort_node.h"
#include "node/plan/planner.h"
#include "node/plan/window.h"
#include "settings.h"

static create_upper_paths_hook_type prev_upper_paths_hook = NULL;

static Plan *plan_window_marker(PlannerInfo *root, RelOptInfo *rel,
								CustomPath *best_path, List *tlist,
								List *clauses, List *custom_plans);
static Node *create_window_marker_state(CustomScan *cscan);

static const CustomPathMethods window_path_methods = {
	.CustomName = "GpuSort parallel window",
	.PlanCustomPath = plan_window_marker,
};

/* (never executed: gpusort's planner hook replaces the marker) */
static const CustomScanMethods window_marker_methods = {
	.CustomName = "GpuSort parallel window",
	.CreateCustomScanState = create_window_marker_state,
};

/*
 * Is the expression a column of the table that holds no NULL, as far as
 * the planner knows: declared NOT NULL, or with statistics (ANALYZE) whose
 * sample had none?  A NULL that comes all the same is still sorted right:
 * the engine refuses the store that has it, and the leader computes the
 * whole window over every row (shared_stage.c), as when the engine's
 * memory runs out midway.
 */
static bool
column_without_nulls(PlannerInfo *root, RelOptInfo *rel, Expr *expr)
{
	Var		   *var;
	RangeTblEntry *rte;
	HeapTuple	tuple;
	bool		none;

	while (expr && IsA(expr, RelabelType))
		expr = ((RelabelType *) expr)->arg;
	if (expr == NULL || !IsA(expr, Var))
		return false;
	var = (Var *) expr;
	if (var->varno != rel->relid || var->varattno <= 0 || var->varlevelsup != 0)
		return false;
	rte = planner_rt_fetch(var->varno, root);
	if (rte->rtekind != RTE_RELATION)
		return false;
	tuple = SearchSysCache2(ATTNUM, ObjectIdGetDatum(rte->relid),
							Int16GetDatum(var->varattno));
	if (!HeapTupleIsValid(tuple))
		return false;
	none = ((Form_pg_attribute) GETSTRUCT(tuple))->attnotnull;
	ReleaseSysCache(tuple);
	if (none)
		return true;
	tuple = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(rte->relid),
							Int16GetDatum(var->varattno), BoolGetDatum(rte->inh));
	if (!HeapTupleIsValid(tuple))
		return false;
	none = ((Form_pg_statistic) GETSTRUCT(tuple))->stanullfrac == 0;
	ReleaseSysCache(tuple);
	return none;
}

/* A window function as a NULL of its type; its arguments kept in *args. */
static Node *
window_funcs_as_nulls(Node *node, List **args)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, WindowFunc))
	{
		WindowFunc *wfunc = (WindowFunc *) node;

		*args = lappend(lappend(*args, wfunc->args), wfunc->aggfilter);
		return (Node *) makeNullConst(wfunc->wintype, -1, wfunc->wincollid);
	}
	return expression_tree_mutator(node, window_funcs_as_nulls, args);
}

/*
 * Is all that the window's output computes parallel safe, but the window
 * functions themselves (which the participants compute right)?
 */
static bool
parallel_safe_beside_window_funcs(PlannerInfo *root, List *exprs)
{
	List	   *args = NIL;
	Node	   *rest = window_funcs_as_nulls((Node *) exprs, &args);

	return is_parallel_safe(root, rest) && is_parallel_safe(root, (Node *) args);
}

/*
 * Do the window's keys, partition then order, let the engine hold every
 * row of the input by their key words alone, or keep it apart: an exact
 * codec each, all their words at most HELD_KEY_WORDS, and room for a NULL
 * in each later key that may have one, unless the column has none
 * (column_without_nulls).  The rows led by a NULL, partitions of their own,
 * the engine does not hold: the leader gathers them and computes them after
 * its slices.
 */
static bool
keys_held_whole(PlannerInfo *root, RelOptInfo *rel, WindowClause *wc)
{
	List	   *clauses = list_concat_copy(wc->partitionClause, wc->orderClause);
	int			words = 0;
	ListCell   *lc;

	foreach(lc, clauses)
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);
		Expr	   *expr = (Expr *) get_sortgroupclause_expr(sgc, root->processed_tlist);
		bool		descending;
		const KeyCodec *codec = key_codec_for_order(sgc->sortop, exprType((Node *) expr),
													exprTypmod((Node *) expr),
													exprCollation((Node *) expr),
													&descending, NULL);

		if (codec == NULL || !codec->exact)
			return false;
		if (foreach_current_index(lc) > 0 && codec->bits >= 64 &&
			!column_without_nulls(root, rel, expr))
			return false;
		words += codec->words;
	}
	return words <= HELD_KEY_WORDS;
}

/*
 * The run conditions of the clause's functions (top N per group), as the
 * WindowAgg's path carries them from PostgreSQL 17 on: "func op value" or
 * "value op func", as the planner makes them (before, the plan takes them
 * from the WindowClause).
 */
#if PG_VERSION_NUM >= 170000
static List *
run_conditions(List *funcs)
{
	List	   *conditions = NIL;
	ListCell   *lc;

	foreach(lc, funcs)
	{
		WindowFunc *wfunc = lfirst_node(WindowFunc, lc);
		ListCell   *lc2;

		foreach(lc2, wfunc->runCondition)
		{
			WindowFuncRunCondition *rc = lfirst_node(WindowFuncRunCondition, lc2);
			Expr	   *func = (Expr *) copyObject(wfunc);
			Expr	   *value = copyObject(rc->arg);

			conditions = lappend(conditions,
								 make_opclause(rc->opno, BOOLOID, false,
											   rc->wfunc_left ? func : value,
											   rc->wfunc_left ? value : func,
											   InvalidOid, rc->inputcollid));
		}
	}
	return conditions;
}
#endif

/*
 * The window clauses whose functions the query computes, in the order of
 * the query's clauses, and beside them those functions (a list each).
 */
static List *
window_clauses(PlannerInfo *root, List **funcs)
{
	Query	   *parse = root->parse;
	WindowFuncLists *wflists;
	List	   *clauses = NIL;
	ListCell   *lc;

	wflists = find_window_functions((Node *) root->processed_tlist,
									list_length(parse->windowClause));
	*funcs = NIL;
	foreach(lc, parse->windowClause)
	{
		WindowClause *wc = lfirst_node(WindowClause, lc);

		if (wflists->windowFuncs[wc->winref] == NIL)
			continue;
		clauses = lappend(clauses, wc);
		*funcs = lappend(*funcs, wflists->windowFuncs[wc->winref]);
	}
	return clauses;
}

/* Has the clause a run condition (top N per group)? */
static bool
has_run_condition(WindowClause *wc, List *funcs)
{
#if PG_VERSION_NUM >= 170000
	ListCell   *lc;

	foreach(lc, funcs)
		if (lfirst_node(WindowFunc, lc)->runCondition != NIL)
			return true;
	return false;
#else
	return wc->runCondition != NIL;
#endif
}

/*
 * The clause's keys, partition then order, as pathkeys: NIL where one of
 * them is redundant (the GpuSort orders by every key it is given).
 */
static List *
clause_pathkeys(PlannerInfo *root, WindowClause *wc)
{
	List	   *keys = list_concat_copy(wc->partitionClause, wc->orderClause);
	List	   *pathkeys = make_pathkeys_for_sortclauses(root, keys, root->processed_tlist);

	return list_length(pathkeys) == list_length(keys) ? pathkeys : NIL;
}

/*
 * The WindowAgg's path over sort, made here rather than by
 * create_windowagg_path, whose arguments differ between releases: only its
 * plan is used, inside the marker's, so its costs are its input's.
 */
static Path *
windowagg_path(RelOptInfo *rel, Path *sort, PathTarget *target, WindowClause *wc,
			   List *funcs, bool top)
{
	WindowAggPath *path = makeNode(WindowAggPath);

	path->path.pathtype = T_WindowAgg;
	path->path.parent = rel;
	path->path.pathtarget = target;
	path->path.parallel_safe = sort->parallel_safe;
	path->path.parallel_workers = sort->parallel_workers;
	path->path.rows = sort->rows;
	path->path.startup_cost = sort->startup_cost;
	path->path.total_cost = sort->total_cost;
	path->path.pathkeys = sort->pathkeys;
	path->subpath = sort;
	path->winclause = wc;
	path->qual = NIL;
#if PG_VERSION_NUM >= 170000
	path->runCondition = run_conditions(funcs);
#endif
	path->topwindow = top;
	return (Path *) path;
}

/*
 * Does the query level above aggregate, every aggregate of it in parts (so
 * that each participant aggregates the rows it computes, and only a row of
 * each reaches the leader)?  Elsewhere the rows leave the participants
 * through a Gather of this level.
 */
static bool
aggregated_above(PlannerInfo *root)
{
	PlannerInfo *parent = root->parent_root;

	return parent != NULL && parent->parse->hasAggs &&
		parent->parse->groupingSets == NIL &&
		!parent->hasNonPartialAggs && !parent->hasNonSerialAggs;
}

/*
 * The partial path of the parallel window over the input's cheapest partial
 * path, where it may be offered (the file's header); else NULL.
 */
static CustomPath *
window_slices_path(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *window_rel)
{
	PathTarget *target = root->upper_targets[UPPERREL_WINDOW];
	List	   *funcs_lists;
	List	   *clauses;
	List	   *pathkeys_lists = NIL;
	int			sort_index = 0;
	List	   *sort_pathkeys = NIL;
	WindowClause *sort_clause;
	List	   *sort_funcs;
	PathTarget *below_target;
	int			nfuncs = 0;
	Path	   *input;
	Path	   *path;
	CustomPath *cpath;
	ListCell   *lc;
	ListCell   *lc2;

	if (input_rel->reloptkind != RELOPT_BASEREL || input_rel->partial_pathlist == NIL ||
		root->parse->hasTargetSRFs ||
		!gpusort_sharing_engine_ready() ||
		(clauses = window_clauses(root, &funcs_lists)) == NIL ||
		!parallel_safe_beside_window_funcs(root, target->exprs))
		return NULL;

	/*
	 * Each clause partitioned, computed by GpuSort, its keys held whole and
	 * a pathkey each; the one of the most keys is the sort, which the others'
	 * keys must lead (so every partition is whole in one slice, the
	 * clause's of the fewest keys, window_calc.c); a run condition (top N
	 * per group) only where the clause is the only one
	 */
	forboth(lc, clauses, lc2, funcs_lists)
	{
		WindowClause *wc = lfirst_node(WindowClause, lc);
		List	   *funcs = lfirst(lc2);
		List	   *pathkeys;

		if (wc->partitionClause == NIL || wc->startOffset != NULL || wc->endOffset != NULL ||
			!gpusort_window_funcs_supported(funcs, wc) ||
			!keys_held_whole(root, input_rel, wc) ||
			(pathkeys = clause_pathkeys(root, wc)) == NIL ||
			(list_length(clauses) > 1 && has_run_condition(wc, funcs)))
			return NULL;
		if (list_length(pathkeys) > list_length(sort_pathkeys))
		{
			sort_index = foreach_current_index(lc);
			sort_pathkeys = pathkeys;
		}
		pathkeys_lists = lappend(pathkeys_lists, pathkeys);
		nfuncs += list_length(funcs);
	}
	foreach(lc, pathkeys_lists)
		if (!pathkeys_contained_in(lfirst(lc), sort_pathkeys))
			return NULL;

	/*
	 * The WindowAggs over the sort, the sort's clause first, then the others
	 * in the query's order, each but the top one returning its input's
	 * columns and the values of those below, as PostgreSQL stacks them; the
	 * planner hook makes them one GpuSort
	 */
	sort_clause = list_nth(clauses, sort_index);
	sort_funcs = list_nth(funcs_lists, sort_index);
	clauses = lcons(sort_clause, list_delete_nth_cell(clauses, sort_index));
	funcs_lists = lcons(sort_funcs, list_delete_nth_cell(funcs_lists, sort_index));
	input = linitial(input_rel->partial_pathlist);
	path = (Path *) create_sort_path(root, window_rel, input, sort_pathkeys, -1.0);
	below_target = input->pathtarget;
	forboth(lc, clauses, lc2, funcs_lists)
	{
		List	   *funcs = lfirst(lc2);
		bool		top = lnext(clauses, lc) == NULL;
		PathTarget *wtarget = target;

		if (!top)
		{
			ListCell   *lc3;

			wtarget = below_target = copy_pathtarget(below_target);
			foreach(lc3, funcs)
				add_column_to_pathtarget(wtarget, lfirst(lc3), 0);
		}
		path = windowagg_path(window_rel, path, wtarget, lfirst(lc), funcs, top);
	}

	/*
	 * Each participant reads its share of the input and returns its share
	 * of the rows; the sort itself is the engine's, over all of them at
	 * once, and each row's values a comparison or two.
	 */
	cpath = makeNode(CustomPath);
	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = window_rel;
	cpath->path.pathtarget = target;
	cpath->path.parallel_aware = true;
	cpath->path.parallel_safe = true;
	cpath->path.parallel_workers = input->parallel_workers;
	cpath->path.rows = input->rows;
	cpath->path.startup_cost = input->total_cost +
		2.0 * cpu_operator_cost * input->rows;
	cpath->path.total_cost = cpath->path.startup_cost +
		(cpu_tuple_cost + cpu_operator_cost * nfuncs) * input->rows;
	cpath->path.pathkeys = NIL;
	cpath->flags = 0;
	cpath->custom_paths = list_make1(path);
	cpath->methods = &window_path_methods;
	return cpath;
}

static void
gpusort_upper_paths(PlannerInfo *root, UpperRelationKind stage,
					RelOptInfo *input_rel, RelOptInfo *output_rel, void *extra)
{
	CustomPath *cpath;

	if (prev_upper_paths_hook)
		prev_upper_paths_hook(root, stage, input_rel, output_rel, extra);
	if (stage != UPPERREL_WINDOW || !gpusort_planner_acts() ||
		!gpusort_window_functions || !gpusort_parallel_window ||
		!root->glob->parallelModeOK)
		return;
	if ((cpath = window_slices_path(root, input_rel, output_rel)) == NULL)
		return;
	/* one sort of all rows makes the values the same in every process */
	output_rel->consider_parallel = true;
	add_partial_path(output_rel, (Path *) cpath);

	/*
	 * Where no partial aggregation above takes them, the rows leave the
	 * participants through a Gather, in no order (what the query orders,
	 * it sorts above), rather than each to the leader's WindowAgg through
	 * a Gather Merge
	 */
	if (!aggregated_above(root))
		add_path(output_rel, (Path *) create_gather_path(root, output_rel, (Path *) cpath,
														 cpath->path.pathtarget, NULL,
														 &input_rel->rows));
}

/*
 * The path's plan: a marker around the WindowAgg's plan, with the
 * WindowAgg's targetlist as its scan tuple, so that set_plan_references
 * makes its own targetlist read that (INDEX_VAR).
 */
static Plan *
plan_window_marker(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
				   List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	Plan	   *wagg = linitial(custom_plans);

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = NIL;
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = custom_plans;
	cscan->custom_scan_tlist = copyObject(wagg->targetlist);
	cscan->methods = &window_marker_methods;
	return (Plan *) cscan;
}

static Node *
create_window_marker_state(CustomScan *cscan)
{
	elog(ERROR, "GpuSort's parallel window was left unplanned");
	return NULL;
}

bool
gpusort_is_window_slices_marker(Plan *plan)
{
	return IsA(plan, CustomScan) &&
		((CustomScan *) plan)->methods == &window_marker_methods;
}

/* The marker's targetlist, reading the window node's (INDEX_VAR). */
static Node *
read_window_tlist(Node *node, List *window_tlist)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varno == INDEX_VAR)
		return (Node *) copyObject(list_nth_node(TargetEntry, window_tlist,
												 ((Var *) node)->varattno - 1)->expr);
	return expression_tree_mutator(node, read_window_tlist, window_tlist);
}

/*
 * After set_plan_references: the marker becomes one GpuSort node that sorts
 * the Sort's input, as the participants' one input, and computes the
 * WindowAggs' functions over its slices, with the marker's place, costs
 * and targetlist.  The path was offered only where this is possible.
 */
Plan *
gpusort_window_slices_plan(CustomScan *marker)
{
	List	   *waggs = NIL;
	Plan	   *below = linitial(marker->custom_plans);
	CustomScan *window = NULL;
	Plan	   *plan;
	Plan		place;
	ListCell   *lc;

	/* the WindowAggs from the lowest up, over the Sort */
	for (; IsA(below, WindowAgg); below = below->lefttree)
		waggs = lcons(below, waggs);
	if (waggs != NIL && IsA(below, Sort) && gpusort_sort_supported((Sort *) below))
		window = gpusort_window_slices_node(linitial(waggs),
											gpusort_make_node((Sort *) below));
	for_each_from(lc, waggs, 1)
		if (window != NULL)
			window = gpusort_window_stack(lfirst(lc), window);
	if (window == NULL)
		elog(ERROR, "GpuSort could not plan its parallel window");

	plan = &window->scan.plan;
	place = marker->scan.plan;
	place.type = T_CustomScan;
	place.targetlist = (List *) read_window_tlist((Node *) marker->scan.plan.targetlist,
												  plan->targetlist);
	place.qual = plan->qual;
	place.lefttree = plan->lefttree;
	place.righttree = NULL;
	place.parallel_aware = true;
	place.parallel_safe = true;
	*plan = place;
	return (Plan *) window;
}

void
gpusort_window_path_init(void)
{
	RegisterCustomScanMethods(&window_marker_methods);
	prev_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = gpusort_upper_paths;
}
