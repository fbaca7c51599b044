/*-------------------------------------------------------------------------
 *
 * window_plan.c
 *	  The plan rewrite that lets GpuSort compute window functions: a
 *	  WindowAgg over a GpuSort whose functions are all row_number(), rank(),
 *	  dense_rank(), percent_rank(), cume_dist(), ntile(n), lag(), lead(),
 *	  first_value(), last_value(), nth_value(), or aggregates of
 *	  PostgreSQL's own (count(*), sum(x), ...; with FILTER or not) over
 *	  the whole partition, over its rows up to the current one, or over
 *	  rows a constant number before or after it (ROWS offsets)
 *	  becomes one GpuSort node that sorts and returns each row with their
 *	  values (window_calc.c, window_aggregate.c).
 *
 * The rewrite runs after set_plan_references, so it builds the final form.
 * The node's scan tuple (custom_scan_tlist) is the sorted row followed by
 * one column per window function; its targetlist is the WindowAgg's, whose
 * Vars of the sorted row and whose window functions now read those columns
 * (INDEX_VAR).  Nodes above read the same columns as before.
 *
 * A run condition (PostgreSQL's top-N per group: "WHERE rn <= 3" over a
 * ranking in a subquery) is kept, its window functions read from the
 * node's columns: the node returns no more rows of a partition once a row
 * fails it, and none at all without PARTITION BY, as the top WindowAgg
 * does; so only the rows kept leave the node.  Its filter, where the
 * WindowAgg has one, becomes the node's.  In a parallel plan (a WindowAgg
 * over a Gather Merge of GpuSorts) the WindowAgg with a run condition over
 * ranks stays, and its participants' GpuSorts each return only the rows
 * that pass it among their own (gpusort_window_top_n_below).
 *
 * WindowAgg stays for other functions, frames with offsets but the
 * aggregates' ROWS frames with constant ones, a
 * WindowAgg over anything but a GpuSort ordered by its partition keys then
 * its order keys (over another WindowAgg, over a Gather Merge in parallel
 * plans), and a run condition of a WindowAgg below another (which must
 * still return the rows that fail it, for the one above).  WindowAgg
 * neither scans backward nor marks and restores, so the planner has put a
 * Material above it wherever a node wants that; the node that replaces it
 * declares neither, and a rescan computes the values again.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/transam.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_proc.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "node/plan/gpusort_node.h"
#include "node/plan/window.h"
#include "settings.h"

/* What the WindowAgg's targetlist becomes, and the functions it computes. */
typedef struct WindowRewrite
{
	WindowAgg  *wagg;
	List	   *below;			/* a clause over others: the targetlist of the
								 * node below, which its Vars read */
	int			nsorted;		/* columns of the sorted row (and of the
								 * values below) */
	List	   *tlist;			/* the node's targetlist, once rewritten */
	List	   *funcs;			/* the distinct window functions */
	bool		ok;				/* GpuSort computes them all */
} WindowRewrite;

WindowFuncKind
window_func_kind(WindowFunc *wfunc)
{
	switch (wfunc->winfnoid)
	{
		case F_ROW_NUMBER:
			return WINFUNC_ROW_NUMBER;
		case F_RANK_:
			return WINFUNC_RANK;
		case F_DENSE_RANK_:
			return WINFUNC_DENSE_RANK;
		case F_PERCENT_RANK_:
			return WINFUNC_PERCENT_RANK;
		case F_CUME_DIST_:
			return WINFUNC_CUME_DIST;
		case F_NTILE:
			return WINFUNC_NTILE;
		case F_COUNT_:
			return WINFUNC_COUNT;
		case F_LAG_ANYELEMENT:
		case F_LAG_ANYELEMENT_INT4:
		case F_LAG_ANYCOMPATIBLE_INT4_ANYCOMPATIBLE:
			return WINFUNC_LAG;
		case F_LEAD_ANYELEMENT:
		case F_LEAD_ANYELEMENT_INT4:
		case F_LEAD_ANYCOMPATIBLE_INT4_ANYCOMPATIBLE:
			return WINFUNC_LEAD;
		case F_FIRST_VALUE:
			return WINFUNC_FIRST_VALUE;
		case F_LAST_VALUE:
			return WINFUNC_LAST_VALUE;
		case F_NTH_VALUE:
			return WINFUNC_NTH_VALUE;
		default:
			return wfunc->winagg ? WINFUNC_AGGREGATE : WINFUNC_OTHER;
	}
}

/*
 * Does every row's frame start at its partition's first row and end at the
 * partition's last, at the row (ROWS) or at its last peer (RANGE, GROUPS)?
 * (The frames of the aggregates and the first, last and nth values that
 * the node computes: window_calc.c.)
 */
static bool
frame_from_start(WindowAgg *wagg)
{
	int			options = wagg->frameOptions;

	return (options & FRAMEOPTION_START_UNBOUNDED_PRECEDING) &&
		(options & (FRAMEOPTION_END_CURRENT_ROW | FRAMEOPTION_END_UNBOUNDED_FOLLOWING)) &&
		!(options & FRAMEOPTION_EXCLUSION);
}

/* A frame offset that the node reads once: a constant, not NULL nor negative. */
static bool
offset_constant(Node *offset)
{
	return offset != NULL && IsA(offset, Const) && !((Const *) offset)->constisnull &&
		((Const *) offset)->consttype == INT8OID &&
		DatumGetInt64(((Const *) offset)->constvalue) >= 0;
}

/* Has the frame an offset at either end (n PRECEDING, n FOLLOWING)? */
static bool
frame_offsets(WindowAgg *wagg)
{
	return (wagg->frameOptions & (FRAMEOPTION_START_OFFSET | FRAMEOPTION_END_OFFSET)) != 0;
}

/*
 * Is the frame ROWS with a constant offset at one end or both (ROWS BETWEEN
 * 6 PRECEDING AND CURRENT ROW), excluding no row?  The aggregates' frames
 * whose head may move (window_calc.c).
 */
static bool
frame_rows_offsets(WindowAgg *wagg)
{
	int			options = wagg->frameOptions;

	return (options & FRAMEOPTION_ROWS) && !(options & FRAMEOPTION_EXCLUSION) &&
		frame_offsets(wagg) &&
		(!(options & FRAMEOPTION_START_OFFSET) || offset_constant(wagg->startOffset)) &&
		(!(options & FRAMEOPTION_END_OFFSET) || offset_constant(wagg->endOffset));
}

/* Offsets the node reads, if any (others keep WindowAgg, whatever its functions). */
static bool
offsets_supported(WindowAgg *wagg)
{
	return !frame_offsets(wagg) || frame_rows_offsets(wagg);
}

/*
 * An aggregate that the node computes over a partition as WindowAgg does
 * (window_aggregate.c): one of PostgreSQL's own, a plain one, safe in a
 * parallel worker, whose final function leaves its state as it was (else
 * WindowAgg stays, and says it cannot be a window function).
 */
static bool
aggregate_supported(WindowFunc *wfunc)
{
	HeapTuple	tuple;
	Form_pg_aggregate form;
	bool		ok;

	if (wfunc->winfnoid >= FirstNormalObjectId ||
		list_length(wfunc->args) > FUNC_MAX_ARGS - 1 ||
		func_parallel(wfunc->winfnoid) != PROPARALLEL_SAFE)
		return false;
	tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(wfunc->winfnoid));
	if (!HeapTupleIsValid(tuple))
		return false;
	form = (Form_pg_aggregate) GETSTRUCT(tuple);
	ok = form->aggkind == AGGKIND_NORMAL && form->aggnumdirectargs == 0 &&
		form->aggfinalmodify == AGGMODIFY_READ_ONLY;
	ReleaseSysCache(tuple);
	return ok;
}

static List *window_private(CustomScan *cscan);

static bool
func_supported(WindowFunc *wfunc, WindowAgg *wagg)
{
	Node	   *arg;

	if (wfunc->winref != wagg->winref)
		return false;
	switch (window_func_kind(wfunc))
	{
		case WINFUNC_OTHER:
			return false;
		case WINFUNC_NTILE:
			/* a value that stays for the scan, read once per partition */
			arg = linitial(wfunc->args);
			return IsA(arg, Const) || IsA(arg, Param);
		case WINFUNC_COUNT:		/* an aggregate too (window_calc.c) */
		case WINFUNC_AGGREGATE:
			return (frame_from_start(wagg) || frame_rows_offsets(wagg)) &&
				aggregate_supported(wfunc);
		case WINFUNC_LAG:
		case WINFUNC_LEAD:
			/* an offset that stays for the scan (as PostgreSQL's may not) */
			if (list_length(wfunc->args) < 2)
				return true;
			arg = lsecond(wfunc->args);
			return IsA(arg, Const) && !((Const *) arg)->constisnull;
		case WINFUNC_FIRST_VALUE:
		case WINFUNC_LAST_VALUE:
			return frame_from_start(wagg);
		case WINFUNC_NTH_VALUE:
			/* an n that stays for the scan, and that WindowAgg takes */
			arg = lsecond(wfunc->args);
			return frame_from_start(wagg) &&
				IsA(arg, Const) && !((Const *) arg)->constisnull &&
				DatumGetInt32(((Const *) arg)->constvalue) > 0;
		default:
			return true;
	}
}

/*
 * The WindowAgg's targetlist expression as the node's: its Vars (of the
 * sorted row, OUTER_VAR) read the scan tuple, its window functions the
 * columns after the sorted row.
 */
static Node *
rewrite_tlist_expr(Node *node, WindowRewrite *rw)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var))
	{
		Var		   *var = (Var *) copyObject(node);

		if (var->varno != OUTER_VAR)
			rw->ok = false;
		else if (rw->below != NIL)
			return (Node *) copyObject(list_nth_node(TargetEntry, rw->below,
													 var->varattno - 1)->expr);
		var->varno = INDEX_VAR;
		return (Node *) var;
	}
	if (IsA(node, WindowFunc))
	{
		WindowFunc *wfunc = (WindowFunc *) node;
		int			col = 0;
		ListCell   *lc;

		if (!func_supported(wfunc, rw->wagg))
		{
			rw->ok = false;
			return node;
		}
		if (rw->below != NIL)
		{
			/* (its arguments read the node's scan tuple, as below) */
			wfunc = (WindowFunc *) copyObject(wfunc);
			wfunc->args = (List *) rewrite_tlist_expr((Node *) wfunc->args, rw);
		}
		foreach(lc, rw->funcs)
		{
			if (equal(lfirst(lc), wfunc))
				break;
			col++;
		}
		if (lc == NULL)
			rw->funcs = lappend(rw->funcs, wfunc);
		return (Node *) makeVar(INDEX_VAR, rw->nsorted + col + 1, wfunc->wintype,
								-1, wfunc->wincollid, 0);
	}
	return expression_tree_mutator(node, rewrite_tlist_expr, rw);
}

/*
 * Does the GpuSort order the rows by the window's partition keys, then its
 * order keys (a key may come twice: PARTITION BY a ORDER BY a), by the same
 * equality?  Later sort keys only order peers among themselves.
 */
static bool
sorted_for_window(WindowAgg *wagg, CustomScan *sort)
{
	List	   *cols = linitial(sort->custom_private);
	List	   *ops = lsecond(sort->custom_private);
	List	   *colls = lthird(sort->custom_private);
	int			matched = 0;

	for (int i = 0; i < wagg->partNumCols + wagg->ordNumCols; i++)
	{
		bool		part = i < wagg->partNumCols;
		int			j = part ? i : i - wagg->partNumCols;
		AttrNumber	col = part ? wagg->partColIdx[j] : wagg->ordColIdx[j];
		Oid			eqop = part ? wagg->partOperators[j] : wagg->ordOperators[j];
		Oid			coll = part ? wagg->partCollations[j] : wagg->ordCollations[j];
		int			k;

		for (k = 0; k < matched; k++)
			if (list_nth_int(cols, k) == col)
				break;
		if (k == matched)
		{
			if (matched == list_length(cols))
				return false;
			matched++;
		}
		if (list_nth_int(cols, k) != col || list_nth_oid(colls, k) != coll ||
			get_equality_op_for_ordering_op(list_nth_oid(ops, k), NULL) != eqop)
			return false;
	}
	return true;
}

/*
 * The scan tuple's column of a window function, for EXPLAIN VERBOSE.
 * PostgreSQL 18 names a WindowFunc's window after the WindowAgg that
 * computes it, which is gone: there, a call of the function stands for it,
 * an aggregate's as an Aggref (count(*), FILTER shown).
 */
static Expr *
window_column_expr(WindowFunc *wfunc)
{
#if PG_VERSION_NUM >= 180000
	if (wfunc->winagg)
	{
		Aggref	   *aggref = makeNode(Aggref);
		ListCell   *lc;

		aggref->aggfnoid = wfunc->winfnoid;
		aggref->aggtype = wfunc->wintype;
		aggref->aggcollid = wfunc->wincollid;
		aggref->inputcollid = wfunc->inputcollid;
		foreach(lc, wfunc->args)
		{
			aggref->aggargtypes = lappend_oid(aggref->aggargtypes, exprType(lfirst(lc)));
			aggref->args = lappend(aggref->args,
								   makeTargetEntry(lfirst(lc), foreach_current_index(lc) + 1,
												   NULL, false));
		}
		aggref->aggfilter = wfunc->aggfilter;
		aggref->aggstar = wfunc->winstar;
		aggref->aggkind = AGGKIND_NORMAL;
		aggref->aggsplit = AGGSPLIT_SIMPLE;
		aggref->location = wfunc->location;
		return (Expr *) aggref;
	}
	return (Expr *) makeFuncExpr(wfunc->winfnoid, wfunc->wintype, wfunc->args,
								 wfunc->wincollid, wfunc->inputcollid,
								 COERCE_EXPLICIT_CALL);
#else
	return (Expr *) copyObject(wfunc);
#endif
}

/*
 * The window clause the node keeps: its keys and equality (and its run
 * condition, set by the caller).
 */
static WindowAgg *
window_clause_copy(WindowAgg *wagg)
{
	WindowAgg  *clause = makeNode(WindowAgg);

	clause->winref = wagg->winref;
	clause->frameOptions = wagg->frameOptions;
	clause->startOffset = wagg->startOffset;
	clause->endOffset = wagg->endOffset;
	clause->partNumCols = wagg->partNumCols;
	clause->partColIdx = wagg->partColIdx;
	clause->partOperators = wagg->partOperators;
	clause->partCollations = wagg->partCollations;
	clause->ordNumCols = wagg->ordNumCols;
	clause->ordColIdx = wagg->ordColIdx;
	clause->ordOperators = wagg->ordOperators;
	clause->ordCollations = wagg->ordCollations;
	return clause;
}

/*
 * The run condition as the node evaluates it: where set_plan_references
 * made its window functions Vars of the WindowAgg's result (by their place
 * in its targetlist), the node's targetlist expressions for them (tlist).
 */
static Node *
rewrite_run_condition(Node *node, WindowRewrite *rw)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var))
	{
		Var		   *var = (Var *) node;

		/* (any other Var: a form this rewrite does not know) */
		if (IS_SPECIAL_VARNO(var->varno) || var->varattno < 1 ||
			var->varattno > list_length(rw->tlist))
		{
			rw->ok = false;
			return node;
		}
		return (Node *) copyObject(list_nth_node(TargetEntry, rw->tlist,
												 var->varattno - 1)->expr);
	}
	return expression_tree_mutator(node, rewrite_run_condition, rw);
}

/*
 * The WindowAgg's targetlist as the node's (returned), its filter (*qual)
 * and its run condition (into clause), its window functions read from the
 * scan tuple's columns after its first ncolumns (rw->funcs, in order); and
 * its Vars, from the sorted row, or, for a clause over others, from below, the
 * node's targetlist under it.  rw->ok false: GpuSort cannot compute them.
 */
static List *
rewrite_window_agg(WindowRewrite *rw, WindowAgg *wagg, List *below, int ncolumns,
				   WindowAgg *clause, List **qual)
{
	List	   *tlist = NIL;
	ListCell   *lc;

	rw->wagg = wagg;
	rw->below = below;
	rw->nsorted = ncolumns;
	rw->funcs = NIL;
	rw->tlist = NIL;
	rw->ok = true;
	foreach(lc, wagg->plan.targetlist)
	{
		TargetEntry *tle = flatCopyTargetEntry(lfirst_node(TargetEntry, lc));

		tle->expr = (Expr *) rewrite_tlist_expr((Node *) tle->expr, rw);
		tlist = lappend(tlist, tle);
	}
	*qual = (List *) rewrite_tlist_expr((Node *) wagg->plan.qual, rw);
	rw->tlist = tlist;
	clause->runCondition = (List *) rewrite_run_condition((Node *) wagg->runCondition, rw);
	return tlist;
}

/*
 * The node that sorts as "sort" does and computes the WindowAgg's functions
 * in its place (WINDOW_SORTS, gpusort_window_node), or that computes them
 * over the rows of the Gather Merge above "sort" (WINDOW_OVER_SORTED: the
 * caller makes the Gather Merge its input); or, WINDOW_TOP_N_BELOW, the node
 * that takes the place of "sort" itself below the WindowAgg and a Gather
 * Merge (gpusort_window_top_n_below): the same computation, but it returns
 * the sorted rows alone, those that pass the run condition, with the sort's
 * place, costs and parallel share, and no filter.
 */
static CustomScan *
window_node(WindowAgg *wagg, CustomScan *sort, WindowNodeMode mode)
{
	bool		top_n_below = (mode == WINDOW_TOP_N_BELOW);

	WindowRewrite rw;
	CustomScan *cscan;
	Plan	   *plan;
	List	   *tlist = NIL;
	List	   *qual;
	List	   *scan_tlist;
	WindowAgg  *clause;
	ListCell   *lc;

	if (!gpusort_window_functions || !gpusort_is_node(sort) ||
		gpusort_window_funcs(sort) != NIL ||
		(gpusort_shares_input(sort) && mode == WINDOW_SORTS) ||
		sort->scan.plan.initPlan != NIL ||
		(wagg->runCondition != NIL && !wagg->topWindow) ||
		!offsets_supported(wagg) || !sorted_for_window(wagg, sort))
		return NULL;

	clause = window_clause_copy(wagg);
	tlist = rewrite_window_agg(&rw, wagg, NIL, list_length(sort->custom_scan_tlist),
							   clause, &qual);
	if (!rw.ok || rw.funcs == NIL)
		return NULL;

	scan_tlist = list_copy(sort->custom_scan_tlist);
	foreach(lc, rw.funcs)
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry(window_column_expr(lfirst(lc)),
											 list_length(scan_tlist) + 1, NULL, false));

	/*
	 * The WindowAgg's place, costs and parameters, or below it the sort's
	 * (its columns: Vars of the sorted row); the GpuSort's input
	 */
	cscan = makeNode(CustomScan);
	plan = &cscan->scan.plan;
	memcpy(plan, top_n_below ? &sort->scan.plan : &wagg->plan, sizeof(Plan));
	plan->type = T_CustomScan;
	plan->targetlist = top_n_below ? list_copy(sort->scan.plan.targetlist) : tlist;
	plan->qual = top_n_below ? NIL : qual;
	plan->lefttree = sort->scan.plan.lefttree;
	plan->righttree = NULL;
	plan->parallel_aware = top_n_below && sort->scan.plan.parallel_aware;
	cscan->scan.scanrelid = 0;
	cscan->flags = 0;			/* no backward scan, no mark and restore */
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_private = lappend(list_copy(sort->custom_private),
									list_make3(clause, rw.funcs,
											   makeInteger(mode)));
	/* (a parallel window's participants always offer their rows) */
	if (mode == WINDOW_SLICES)
		gpusort_set_shares_input(cscan);
	cscan->methods = sort->methods;
	return cscan;
}

CustomScan *
gpusort_window_node(WindowAgg *wagg, CustomScan *sort)
{
	return window_node(wagg, sort, WINDOW_SORTS);
}

CustomScan *
gpusort_window_slices_node(WindowAgg *wagg, CustomScan *sort)
{
	return window_node(wagg, sort, WINDOW_SLICES);
}

/*
 * The sorted row's column that the node's targetlist entry attno returns
 * as it is, or 0.
 */
static AttrNumber
sorted_column(CustomScan *node, int nsorted, AttrNumber attno)
{
	Expr	   *expr = list_nth_node(TargetEntry, node->scan.plan.targetlist, attno - 1)->expr;

	if (IsA(expr, Var) && ((Var *) expr)->varno == INDEX_VAR &&
		((Var *) expr)->varattno <= nsorted)
		return ((Var *) expr)->varattno;
	return 0;
}

/* cols (n of them) as the sorted row's columns, or NULL. */
static AttrNumber *
sorted_columns(CustomScan *node, int nsorted, const AttrNumber *cols, int n)
{
	AttrNumber *mapped = palloc(sizeof(AttrNumber) * Max(n, 1));

	for (int i = 0; i < n; i++)
		if ((mapped[i] = sorted_column(node, nsorted, cols[i])) == 0)
			return NULL;
	return mapped;
}

/*
 * Another window clause over the same sort: a WindowAgg over a GpuSort
 * that computes other clauses' functions in their place (as it sorts, over
 * a Gather Merge's rows, or over the slices of a parallel window; no
 * filter).  The GpuSort computes them all, each clause's over the rows and
 * values of the one before as they come (window_calc.c), where the new
 * clause's keys are columns of the sorted row, partition keys then order
 * keys leading the sort's, and GpuSort computes its functions; else NULL.
 * Its functions' columns follow the others' in the scan tuple, and its
 * targetlist, filter and run condition become the node's.
 */
CustomScan *
gpusort_window_stack(WindowAgg *wagg, CustomScan *node)
{
	List	   *below = window_private(node);
	int			nsorted = list_length(node->custom_scan_tlist);
	WindowRewrite rw;
	WindowAgg  *clause;
	List	   *tlist = NIL;
	List	   *qual;
	ListCell   *lc;

	if (!gpusort_window_functions || below == NIL ||
		gpusort_window_mode(node) == WINDOW_TOP_N_BELOW || node->scan.plan.qual != NIL ||
		(wagg->runCondition != NIL && !wagg->topWindow) ||
		!offsets_supported(wagg))
		return NULL;
	nsorted -= list_length(gpusort_window_funcs(node));
	clause = window_clause_copy(wagg);
	clause->partColIdx = sorted_columns(node, nsorted, wagg->partColIdx, wagg->partNumCols);
	clause->ordColIdx = sorted_columns(node, nsorted, wagg->ordColIdx, wagg->ordNumCols);
	if (clause->partColIdx == NULL || clause->ordColIdx == NULL ||
		!sorted_for_window(clause, node))
		return NULL;

	tlist = rewrite_window_agg(&rw, wagg, node->scan.plan.targetlist,
							   list_length(node->custom_scan_tlist), clause, &qual);
	if (!rw.ok || rw.funcs == NIL)
		return NULL;

	foreach(lc, rw.funcs)
		node->custom_scan_tlist = lappend(node->custom_scan_tlist,
										  makeTargetEntry(window_column_expr(lfirst(lc)),
														  list_length(node->custom_scan_tlist) + 1,
														  NULL, false));
	lfirst(list_nth_cell(node->custom_private, GPUSORT_PRIVATE_WINDOW)) =
		lappend(lappend(below, clause), rw.funcs);
	node->scan.plan.targetlist = tlist;
	node->scan.plan.qual = qual;
	node->scan.plan.startup_cost = wagg->plan.startup_cost;
	node->scan.plan.total_cost = wagg->plan.total_cost;
	node->scan.plan.plan_width = wagg->plan.plan_width;
	return node;
}

bool
gpusort_window_funcs_supported(List *funcs, WindowClause *wc)
{
	WindowAgg  *wagg = makeNode(WindowAgg);
	ListCell   *lc;

	wagg->winref = wc->winref;
	wagg->frameOptions = wc->frameOptions;
	wagg->ordNumCols = list_length(wc->orderClause);
	foreach(lc, funcs)
		if (!func_supported(lfirst_node(WindowFunc, lc), wagg))
			return false;
	return funcs != NIL;
}

/*
 * The participants sort their rows as before (on the GPU, adding them to one
 * input that the leader sorts: shared_stage.c), and one node over the
 * Gather Merge computes the functions from its rows, which come in order:
 * the rows of a partition are all there, whatever each participant sorted.
 * That pays where the WindowAgg would compute a value for every row: TPC-H
 * scale 10 on an H200, rank() by supplier and price, 61 s with WindowAgg
 * over the shared sort; 17.8 to 27.4 s with one GpuSort over a Gather,
 * which collected and sorted every row in the leader; 20.1 and 23.8 s with
 * this node, against 27.4 s for the Gather in the same run (on two cores,
 * CPU engine: 3.76 s against 3.88 s).  Not where a run condition ends its
 * partitions after a few rows and it passes the rest through: a WindowAgg
 * with a run condition stays (gpusort_window_top_n_below).
 */
CustomScan *
gpusort_window_over_gather(WindowAgg *wagg, GatherMerge *gm)
{
	CustomScan *sort;
	CustomScan *window;

	if (wagg->runCondition != NIL ||
		!IsA(gm->plan.lefttree, CustomScan) ||
		!gpusort_is_node((CustomScan *) gm->plan.lefttree) ||
		gm->plan.qual != NIL || !gpusort_gather_passes_columns(gm) ||
		!gpusort_outer_columns_in_order(((CustomScan *) gm->plan.lefttree)->custom_scan_tlist))
		return NULL;
	sort = (CustomScan *) gm->plan.lefttree;
	window = window_node(wagg, sort, WINDOW_OVER_SORTED);
	if (window != NULL)
		window->scan.plan.lefttree = (Plan *) gm;
	return window;
}

/* Is expr row_number(), rank() or dense_rank()? */
static bool
is_rank(Expr *expr)
{
	if (!IsA(expr, WindowFunc))
		return false;
	switch (window_func_kind((WindowFunc *) expr))
	{
		case WINFUNC_ROW_NUMBER:
		case WINFUNC_RANK:
		case WINFUNC_DENSE_RANK:
			return true;
		default:
			return false;
	}
}

static bool run_condition_other(Node *node, void *context);

/*
 * Does the run condition read only ranks of the WindowAgg (Vars of its
 * targetlist, as set_plan_references leaves them)?  Each of them, over some
 * of a partition's rows in their order, is at most its value over all of
 * them.
 */
static bool
run_condition_ranks(Node *node, WindowAgg *wagg)
{
	if (node == NULL)
		return true;
	if (IsA(node, Var))
	{
		Var		   *var = (Var *) node;

		return !IS_SPECIAL_VARNO(var->varno) && var->varattno >= 1 &&
			var->varattno <= list_length(wagg->plan.targetlist) &&
			is_rank(list_nth_node(TargetEntry, wagg->plan.targetlist,
								  var->varattno - 1)->expr);
	}
	return !expression_tree_walker(node, run_condition_other, wagg);
}

/* (expression_tree_walker's form: true where a node is not a rank) */
static bool
run_condition_other(Node *node, void *context)
{
	return !run_condition_ranks(node, (WindowAgg *) context);
}

/*
 * Is every window function of the WindowAgg a rank?  (Others would need
 * their partition read ahead, for values that the node above computes
 * again.)
 */
static bool
only_ranks(WindowAgg *wagg)
{
	ListCell   *lc;

	foreach(lc, wagg->plan.targetlist)
	{
		Expr	   *expr = lfirst_node(TargetEntry, lc)->expr;

		if (!IsA(expr, Var) && !IsA(expr, Const) && !is_rank(expr))
			return false;
	}
	return true;
}

/*
 * Over a rank that only grows through a partition's rows (row_number(),
 * rank(), dense_rank()), whatever rows a participant sorts, a row whose
 * rank among them fails the run condition ("rn <= 3") fails it among all
 * rows, where its rank is no lower; and a row that passes among all rows
 * has every row before it in its partition passing too.  So each
 * participant's GpuSort may drop the rows that fail among its own, and the
 * WindowAgg above, over the Gather Merge of what they keep, ranks the rest
 * as it would have ranked them all.  Where the participants share one
 * input (shared_stage.c), the leader's rows are all rows, and only the top
 * N of each partition leave it.
 */
void
gpusort_window_top_n_below(WindowAgg *wagg, GatherMerge *gm)
{
	CustomScan *top_n;

	if (wagg->runCondition == NIL || !IsA(gm->plan.lefttree, CustomScan) ||
		gm->plan.qual != NIL || !gpusort_gather_passes_columns(gm) ||
		!only_ranks(wagg) || !run_condition_ranks((Node *) wagg->runCondition, wagg))
		return;
	top_n = window_node(wagg, (CustomScan *) gm->plan.lefttree, WINDOW_TOP_N_BELOW);
	if (top_n != NULL)
		gm->plan.lefttree = (Plan *) top_n;
}

/* What window_plan.c keeps of the node's window functions, or NIL. */
static List *
window_private(CustomScan *cscan)
{
	if (list_length(cscan->custom_private) <= GPUSORT_PRIVATE_WINDOW)
		return NIL;
	return list_nth(cscan->custom_private, GPUSORT_PRIVATE_WINDOW);
}

WindowNodeMode
gpusort_window_mode(CustomScan *cscan)
{
	List	   *window = window_private(cscan);

	return window == NIL ? WINDOW_SORTS : (WindowNodeMode) intVal(lthird(window));
}

/*
 * (window_private: the first clause, its functions, the mode, then each
 * further clause and its functions)
 */
int
gpusort_window_nclauses(CustomScan *cscan)
{
	List	   *window = window_private(cscan);

	return window == NIL ? 0 : 1 + (list_length(window) - 3) / 2;
}

void
gpusort_window_clause_at(CustomScan *cscan, int n, WindowAgg **clause, List **funcs)
{
	List	   *window = window_private(cscan);
	int			at = n == 0 ? 0 : 1 + 2 * n;

	*clause = list_nth(window, at);
	*funcs = list_nth(window, at + 1);
}

List *
gpusort_window_funcs(CustomScan *cscan)
{
	List	   *funcs = NIL;

	for (int n = 0; n < gpusort_window_nclauses(cscan); n++)
	{
		WindowAgg  *clause;
		List	   *clause_funcs;

		gpusort_window_clause_at(cscan, n, &clause, &clause_funcs);
		funcs = list_concat(funcs, clause_funcs);
	}
	return funcs;
}

List *
gpusort_window_clause_funcs(CustomScan *cscan)
{
	List	   *window = window_private(cscan);

	return window == NIL ? NIL : lsecond(window);
}

WindowAgg *
gpusort_window_clause(CustomScan *cscan)
{
	List	   *window = window_private(cscan);

	return window == NIL ? NULL : linitial(window);
}
