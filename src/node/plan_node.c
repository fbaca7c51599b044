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

#include "keys/key_codec.h"
#include "node/gpusort_node.h"
#include "node/node_state.h"

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

/* Can GpuSort run this Sort?  Its leading key must have a node codec. */
bool
gpusort_sort_supported(Sort *sort)
{
	TargetEntry *tle;
	bool		descending;

	if (sort->numCols < 1 || sort->plan.lefttree == NULL)
		return false;
	tle = get_tle_by_resno(sort->plan.lefttree->targetlist, sort->sortColIdx[0]);
	if (tle == NULL)
		return false;
	return key_codec_for_order(sort->sortOperators[0], exprType((Node *) tle->expr),
							   sort->collations[0], &descending, NULL) != NULL;
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
	cscan->custom_private = list_make4(cols, ops, colls, nullsfirst);
	cscan->custom_scan_tlist = sort->plan.targetlist;
	cscan->methods = &gpusort_plan_methods;
	return cscan;
}

static Node *
gpusort_create_state(CustomScan *cscan)
{
	GpuSortState *state = palloc0(sizeof(GpuSortState));

	NodeSetTag(state, T_CustomScanState);
	state->css.methods = &gpusort_exec_methods;
	return (Node *) state;
}
