/*-------------------------------------------------------------------------
 *
 * window.h
 *	  Ranking window functions computed by GpuSort as it returns its rows,
 *	  in place of a WindowAgg over it: the plan rewrite (window_plan.c) and
 *	  the values (window_calc.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_WINDOW_H
#define GPUSORT_WINDOW_H

#include "postgres.h"

#include "nodes/plannodes.h"
#include "nodes/primnodes.h"

/* The window functions that GpuSort computes. */
typedef enum WindowFuncKind
{
	WINFUNC_OTHER,				/* none of these: WindowAgg computes it */
	WINFUNC_ROW_NUMBER,
	WINFUNC_RANK,
	WINFUNC_DENSE_RANK,
	WINFUNC_PERCENT_RANK,
	WINFUNC_CUME_DIST,
	WINFUNC_NTILE,
	WINFUNC_COUNT				/* count(*) over the whole partition */
} WindowFuncKind;

extern WindowFuncKind window_func_kind(WindowFunc *wfunc);

/*
 * The GpuSort node that takes the place of a WindowAgg over the GpuSort
 * "sort", sorting and computing the window functions; NULL where GpuSort
 * cannot compute them all (WindowAgg then stays).
 */
extern CustomScan *gpusort_window_node(WindowAgg *wagg, CustomScan *sort);

/*
 * The same over a Gather Merge of a GpuSort in each participant (a parallel
 * plan): one GpuSort that sorts every row, computes the functions and
 * returns the rows, over a Gather of what the participants ran below their
 * GpuSort; NULL where it cannot, or where the WindowAgg has a run
 * condition (top N per group), which is cheaper left over the shared sort.
 */
extern CustomScan *gpusort_window_over_gather(WindowAgg *wagg, GatherMerge *gm);

/*
 * Top N per group in a parallel plan (a WindowAgg with a run condition over
 * row_number(), rank() or dense_rank(), over a Gather Merge of GpuSorts):
 * the WindowAgg stays, and each participant's GpuSort becomes one that
 * returns only the rows that pass the run condition among its own.
 */
extern void gpusort_window_top_n_below(WindowAgg *wagg, GatherMerge *gm);

/* Does the GpuSort return its sorted rows alone, those its run condition keeps? */
extern bool gpusort_window_top_n_only(CustomScan *cscan);

/* The window functions that a GpuSort computes (NIL: none), in column order. */
extern List *gpusort_window_funcs(CustomScan *cscan);

/*
 * The WindowAgg it replaced, with the partition and order columns (of the
 * sorted row) and their equality operators, and its run condition over the
 * node's columns; no input, no targetlist.
 */
extern WindowAgg *gpusort_window_clause(CustomScan *cscan);

/* window_calc.c, the executor's side, is declared in node_state.h. */

#endif							/* GPUSORT_WINDOW_H */
