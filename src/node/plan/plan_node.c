/*-------------------------------------------------------------------------
 *
 * plan_node.c
 *	  The GpuSort custom scan node at plan time: which Sorts it can run, the
 *	  CustomScan that takes a Sort's place, and the executor state made from
 *	  it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"

#include "engine/engine.h"
#include "keys/key_codec.h"
#include "node/node_state.h"
#include "node/plan/gpusort_node.h"
#include "settings.h"

static Node *gpusort_create_state(CustomScan *cscan);

static CustomScanMethods gpusort_plan_methods = {
	.CustomName = "GpuSort",
	.CreateCustomScanState = gpusort_create_state,
};

void
gpusort_node_init(void)
{
	/* lets plans with GpuSort be copied to parallel workers */
	RegisterCustomScanMethods(&gpusort_plan_methods);
}

bool
gpusort_is_node(CustomScan *cscan)
{
	return cscan->methods == &gpusort_plan_methods;
}

/* The codec of a sort key, column resno of tlist, or NULL (key_codec_for_order). */
static const KeyCodec *
sort_key_codec(List *tlist, AttrNumber resno, Oid sortop, Oid collation)
{
	TargetEntry *tle = get_tle_by_resno(tlist, resno);
	bool		descending;

	if (tle == NULL)
		return NULL;
	return key_codec_for_order(sortop, exprType((Node *) tle->expr),
							   exprTypmod((Node *) tle->expr), collation,
							   &descending, NULL);
}

/* Can GpuSort run this Sort?  Its leading key must have a node codec. */
bool
gpusort_sort_supported(Sort *sort)
{
	if (sort->numCols < 1 || sort->plan.lefttree == NULL)
		return false;
	return sort_key_codec(sort->plan.lefttree->targetlist, sort->sortColIdx[0],
						  sort->sortOperators[0], sort->collations[0]) != NULL;
}

/*
 * Are the node's rows nothing but their one sort key, a one-word key that
 * decodes to the value (the executor's keys_only)?
 */
bool
gpusort_rows_are_key(CustomScan *cscan)
{
	List	   *cols = linitial(cscan->custom_private);
	const KeyCodec *codec;

	if (list_length(cols) != 1 || list_length(cscan->custom_scan_tlist) != 1)
		return false;
	codec = sort_key_codec(cscan->custom_scan_tlist, linitial_int(cols),
						   linitial_oid(lsecond(cscan->custom_private)),
						   linitial_oid(lthird(cscan->custom_private)));
	return codec != NULL && codec->roundtrip && codec->words == 1;
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
	cscan->custom_private = list_make5(cols, ops, colls, nullsfirst, makeInteger(NOT_SHARED));
	cscan->custom_scan_tlist = sort->plan.targetlist;
	cscan->methods = &gpusort_plan_methods;
	return cscan;
}

/* The expression under any relabeling (a COLLATE clause, after planning). */
static Expr *
strip_relabel(Expr *expr)
{
	while (expr && IsA(expr, RelabelType))
		expr = ((RelabelType *) expr)->arg;
	return expr;
}

/* The first nvisible columns of tlist: the one that is expr, or 0. */
static AttrNumber
visible_column(List *tlist, int nvisible, Expr *expr)
{
	for (int i = 0; i < nvisible; i++)
		if (equal(list_nth_node(TargetEntry, tlist, i)->expr, expr))
			return i + 1;
	return InvalidAttrNumber;
}

/*
 * The input of a Sort of "SELECT * ... ORDER BY x COLLATE c" computes
 * x COLLATE c as a junk column of every row, so that the scan projects and
 * each row grows by a copy of x that Sort then carries (the sort itself
 * reads x, under c).  Where the rows leave the plan as they come from
 * GpuSort, no node reads the junk column (the executor's junk filter drops
 * it unread), so the input may leave it out: the scan returns its tuples
 * as they are, and GpuSort's scan tuple keeps the junk column's type,
 * which reads as NULL.  Only for an input that is a scan, whose junk
 * columns all relabel one of its visible columns and are no sort key.
 */
void
gpusort_unproject_keys(CustomScan *cscan)
{
	Plan	   *input = cscan->scan.plan.lefttree;
	List	   *tlist;
	int			nvisible = 0;
	int			njunk;
	AttrNumber *relabeled;		/* per junk column, the column it relabels */
	ListCell   *lc;

	if (input == NULL ||
		!(IsA(input, SeqScan) || IsA(input, IndexScan) || IsA(input, BitmapHeapScan)))
		return;
	tlist = input->targetlist;

	/* the visible columns first, then only junk ones that relabel them */
	foreach(lc, tlist)
	{
		if (lfirst_node(TargetEntry, lc)->resjunk)
			break;
		nvisible++;
	}
	njunk = list_length(tlist) - nvisible;
	if (njunk == 0)
		return;
	relabeled = palloc(sizeof(AttrNumber) * njunk);
	for (int j = 0; j < njunk; j++)
	{
		TargetEntry *tle = list_nth_node(TargetEntry, tlist, nvisible + j);
		Expr	   *inner = strip_relabel(tle->expr);

		if (!tle->resjunk || !IsA(tle->expr, RelabelType) || !IsA(inner, Var) ||
			(relabeled[j] = visible_column(tlist, nvisible, inner)) == InvalidAttrNumber)
			return;
	}

	/* the sort reads visible columns only (under its own collations) */
	foreach(lc, (List *) linitial(cscan->custom_private))
		if (lfirst_int(lc) > nvisible)
			return;

	/*
	 * The scan tuple keeps every column; a junk one is now the relabeled
	 * visible column (as EXPLAIN VERBOSE shows it).
	 */
	foreach(lc, cscan->custom_scan_tlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		RelabelType *innermost;
		Var		   *var;

		if (tle->resno <= nvisible)
			continue;
		tle = flatCopyTargetEntry(tle);
		lfirst(lc) = tle;
		tle->expr = copyObject(list_nth_node(TargetEntry, tlist, tle->resno - 1)->expr);
		innermost = (RelabelType *) tle->expr;
		while (IsA(innermost->arg, RelabelType))
			innermost = (RelabelType *) innermost->arg;
		var = (Var *) innermost->arg;
		innermost->arg = (Expr *) makeVar(OUTER_VAR, relabeled[tle->resno - nvisible - 1],
										  var->vartype, var->vartypmod, var->varcollid, 0);
	}
	input->targetlist = list_truncate(list_copy(tlist), nvisible);
}

void
gpusort_mark_shared(CustomScan *cscan)
{
	List	   *cols = linitial(cscan->custom_private);
	List	   *ops = lsecond(cscan->custom_private);
	List	   *colls = lthird(cscan->custom_private);
	int			words = 0;

	/* the engines registered, whatever gpusort.device says at run time */
	if (sort_engine_sharing_stager() == NULL)
		return;
	/* rows that are their one key have no tuples to hold */
	if (list_length(cols) == 1 && list_length(cscan->custom_scan_tlist) == 1)
		return;
	for (int i = 0; i < list_length(cols); i++)
	{
		const KeyCodec *codec = sort_key_codec(cscan->custom_scan_tlist,
											   list_nth_int(cols, i),
											   list_nth_oid(ops, i),
											   list_nth_oid(colls, i));

		/*
		 * The engine holds the words of the keys up to a prefix key, a key
		 * without a codec or HELD_KEY_WORDS words; the comparators order
		 * the rows those leave tied (spill_stage.c).
		 */
		if (codec == NULL && i == 0)
			return;
		if (codec == NULL)
			break;
		if (!codec->exact && codec->source == KEY_PREFIX_ABBREV)
			return;

		/*
		 * One input pays where the held words leave few ties, as text's
		 * with their tie words do (spill_stage.c): those tied on strxfrm()
		 * keys are ordered on threads (text_ties.h), those tied on ICU or
		 * bytes keys by the comparator as they are returned.  TPC-H's
		 * o_comment at scale 10 at the defaults took 25.2 s on an H200,
		 * against 44.1 s with each participant's rows held apart and
		 * merged by strcoll() in the Gather Merge
		 * (test/results/ab-keys-held-xfrm-shared-h200-16core-2026-11-28-d43d3c1.txt).
		 */
		words += codec->words;
		if (!codec->exact || words >= HELD_KEY_WORDS)
			break;
	}
	gpusort_set_shares_input(cscan);
}

void
gpusort_set_shares_input(CustomScan *cscan)
{
	list_nth_cell(cscan->custom_private, GPUSORT_PRIVATE_SHARED)->ptr_value =
		makeInteger(SHARED_INPUT);
}

bool
gpusort_shares_input(CustomScan *cscan)
{
	return intVal(list_nth(cscan->custom_private, GPUSORT_PRIVATE_SHARED)) != 0;
}

bool
gpusort_leader_returns_all(CustomScan *cscan)
{
	return intVal(list_nth(cscan->custom_private, GPUSORT_PRIVATE_SHARED)) ==
		SHARED_INPUT_LEADER_RETURNS;
}

bool
gpusort_sharing_engine_ready(void)
{
	char	   *why;

	/* gpusort.device = cpu plans for no GPU, as it runs with none */
	(void) sort_engine_holder(gpusort_device, &why);
	return why == NULL && sort_engine_sharing_stager() != NULL;
}

/*
 * Can the engine hold every row by its sort keys' words alone, with no
 * room kept after each for the comparators (exact keys, HELD_KEY_WORDS
 * words at most)?  A NULL in a later key that leaves it no room makes the
 * engine refuse the store that has it, at run time.
 */
static bool
sort_keys_held_whole(CustomScan *cscan)
{
	List	   *cols = linitial(cscan->custom_private);
	List	   *ops = lsecond(cscan->custom_private);
	List	   *colls = lthird(cscan->custom_private);
	int			words = 0;

	for (int i = 0; i < list_length(cols); i++)
	{
		const KeyCodec *codec = sort_key_codec(cscan->custom_scan_tlist,
											   list_nth_int(cols, i),
											   list_nth_oid(ops, i),
											   list_nth_oid(colls, i));

		if (codec == NULL || !codec->exact)
			return false;
		words += codec->words;
	}
	return words <= HELD_KEY_WORDS;
}

Plan *
gpusort_distinct_gather(Unique *unique)
{
	GatherMerge *gm = (GatherMerge *) unique->plan.lefttree;
	CustomScan *cscan;
	Gather	   *gather;

	if (!gpusort_parallel_window || gm == NULL || !IsA(gm, GatherMerge) ||
		unique->plan.initPlan != NIL || unique->plan.qual != NIL ||
		!IsA(gm->plan.lefttree, CustomScan))
		return NULL;
	cscan = (CustomScan *) gm->plan.lefttree;
	/* (marked distinct: window_plan.c's place is there, NIL for no window) */
	if (!gpusort_is_node(cscan) || gpusort_distinct_columns(cscan) == NIL ||
		list_nth(cscan->custom_private, GPUSORT_PRIVATE_WINDOW) != NIL ||
		!gpusort_shares_input(cscan) ||
		!sort_keys_held_whole(cscan) || !gpusort_sharing_engine_ready())
		return NULL;
	list_nth_cell(cscan->custom_private, GPUSORT_PRIVATE_SHARED)->ptr_value =
		makeInteger(SHARED_INPUT_LEADER_RETURNS);

	/* the Gather Merge's place, and the Unique's rows, costs and columns */
	gather = makeNode(Gather);
	gather->plan = unique->plan;
	gather->plan.type = T_Gather;
	gather->plan.lefttree = (Plan *) cscan;
	gather->plan.plan_node_id = gm->plan.plan_node_id;
	gather->plan.parallel_aware = false;
	gather->plan.extParam = gm->plan.extParam;
	gather->plan.allParam = gm->plan.allParam;
	gather->plan.initPlan = gm->plan.initPlan;
	gather->num_workers = gm->num_workers;
	gather->rescan_param = gm->rescan_param;
	gather->single_copy = false;
	gather->invisible = false;
	gather->initParam = gm->initParam;
	return (Plan *) gather;
}

bool
gpusort_outer_columns_in_order(List *tlist)
{
	ListCell   *lc;

	foreach(lc, tlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Var		   *var = (Var *) tle->expr;

		if (!IsA(var, Var) || var->varno != OUTER_VAR || var->varattno != tle->resno)
			return false;
	}
	return true;
}

bool
gpusort_gather_passes_columns(GatherMerge *gm)
{
	return gpusort_outer_columns_in_order(gm->plan.targetlist) &&
		list_length(gm->plan.targetlist) == list_length(gm->plan.lefttree->targetlist);
}

void
gpusort_mark_distinct(Unique *unique)
{
	Plan	   *below = unique->plan.lefttree;
	List	   *cols = NIL;
	List	   *ops = NIL;
	List	   *colls = NIL;
	CustomScan *cscan;

	if (below && IsA(below, GatherMerge))
	{
		if (below->qual != NIL || !gpusort_gather_passes_columns((GatherMerge *) below))
			return;
		below = below->lefttree;
	}
	if (below == NULL || !IsA(below, CustomScan) ||
		!gpusort_is_node((CustomScan *) below))
		return;
	cscan = (CustomScan *) below;
	for (int i = 0; i < unique->numCols; i++)
	{
		cols = lappend_int(cols, unique->uniqColIdx[i]);
		ops = lappend_oid(ops, unique->uniqOperators[i]);
		colls = lappend_oid(colls, unique->uniqCollations[i]);
	}
	/* (window_plan.c's place, where it kept nothing) */
	if (list_length(cscan->custom_private) == GPUSORT_PRIVATE_WINDOW)
		cscan->custom_private = lappend(cscan->custom_private, NIL);
	Assert(list_length(cscan->custom_private) == GPUSORT_PRIVATE_DISTINCT);
	cscan->custom_private = lappend(cscan->custom_private,
									list_make3(cols, ops, colls));
}

List *
gpusort_distinct_columns(CustomScan *cscan)
{
	if (list_length(cscan->custom_private) <= GPUSORT_PRIVATE_DISTINCT)
		return NIL;
	return list_nth(cscan->custom_private, GPUSORT_PRIVATE_DISTINCT);
}

static Node *
gpusort_create_state(CustomScan *cscan)
{
	GpuSortState *state = palloc0(sizeof(GpuSortState));

	NodeSetTag(state, T_CustomScanState);
	state->css.methods = &gpusort_exec_methods;
	return (Node *) state;
}
