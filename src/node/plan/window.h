/*-------------------------------------------------------------------------
 *
 * window.h
 *	  Window functions computed by GpuSort as it returns its rows,
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
	WINFUNC_COUNT,				/* count(*): the partition's size, or running */
	WINFUNC_AGGREGATE,			/* another aggregate over it: sum(x), ... */
	WINFUNC_LAG,				/* lag(x [, offset [, default]]) */
	WINFUNC_LEAD,				/* lead(x [, offset [, default]]) */
	WINFUNC_FIRST_VALUE,		/* first_value(x), over the frame */
	WINFUNC_LAST_VALUE,			/* last_value(x) */
	WINFUNC_NTH_VALUE			/* nth_value(x, n) */
} WindowFuncKind;

extern WindowFuncKind window_func_kind(WindowFunc *wfunc);

/* What a GpuSort that computes window functions does with its rows. */
typedef enum WindowNodeMode
{
	WINDOW_SORTS,				/* sorts its input, returns each row with the
								 * values: in the WindowAgg's place */
	WINDOW_TOP_N_BELOW,			/* sorts its input, returns the rows that
								 * pass the run condition among its own:
								 * below the WindowAgg and a Gather Merge */
	WINDOW_OVER_SORTED,			/* reads rows that a Gather Merge below
								 * returns in order, returns each with the
								 * values: in the WindowAgg's place */
	WINDOW_SLICES				/* below a Gather: the participants sort
								 * their rows as one input, and each
								 * returns the rows of slices of it with
								 * the values (window_path.c) */
} WindowNodeMode;

/*
 * The GpuSort node that takes the place of a WindowAgg over the GpuSort
 * "sort", sorting and computing the window functions; NULL where GpuSort
 * cannot compute them all (WindowAgg then stays).
 */
extern CustomScan *gpusort_window_node(WindowAgg *wagg, CustomScan *sort);

/*
 * The same over a Gather Merge of a GpuSort in each participant (a parallel
 * plan): a GpuSort that computes the functions over the Gather Merge's
 * rows, which come in order (WINDOW_OVER_SORTED); NULL where it cannot, or
 * where the WindowAgg has a run condition (top N per group:
 * gpusort_window_top_n_below).
 */
extern CustomScan *gpusort_window_over_gather(WindowAgg *wagg, GatherMerge *gm);

/*
 * Top N per group in a parallel plan (a WindowAgg with a run condition over
 * row_number(), rank() or dense_rank(), over a Gather Merge of GpuSorts):
 * the WindowAgg stays, and each participant's GpuSort becomes one that
 * returns only the rows that pass the run condition among its own.
 */
extern void gpusort_window_top_n_below(WindowAgg *wagg, GatherMerge *gm);

/*
 * The node of a parallel window (WINDOW_SLICES, window_path.c) from its
 * WindowAgg and the GpuSort below it; NULL where it cannot be.
 */
extern CustomScan *gpusort_window_slices_node(WindowAgg *wagg, CustomScan *sort);

/*
 * Can GpuSort compute every one of funcs, the window functions of clause
 * wc (window_path.c asks, before any plan)?
 */
extern bool gpusort_window_funcs_supported(List *funcs, WindowClause *wc);

/* What a GpuSort that computes window functions does (WINDOW_SORTS: none). */
extern WindowNodeMode gpusort_window_mode(CustomScan *cscan);

/*
 * The window functions that a GpuSort computes (NIL: none), in column
 * order: its first clause's, then a second's.
 */
extern List *gpusort_window_funcs(CustomScan *cscan);

/* Its first clause's alone. */
extern List *gpusort_window_clause_funcs(CustomScan *cscan);

/*
 * The window clauses over the same sort (gpusort_window_stack), the first
 * first: how many, and the n-th's clause (as gpusort_window_clause gives
 * the first) and functions.
 */
extern int	gpusort_window_nclauses(CustomScan *cscan);
extern void gpusort_window_clause_at(CustomScan *cscan, int n, WindowAgg **clause,
									 List **funcs);

/*
 * A WindowAgg over a GpuSort that computes other clauses' functions: the
 * GpuSort, computing them all (else NULL).
 */
extern CustomScan *gpusort_window_stack(WindowAgg *wagg, CustomScan *node);

/*
 * The WindowAgg it replaced, with the partition and order columns (of the
 * sorted row) and their equality operators, and its run condition over the
 * node's columns; no input, no targetlist.
 */
extern WindowAgg *gpusort_window_clause(CustomScan *cscan);

/* window_calc.c, the executor's side, is declared in node_state.h. */

/* window_path.c: the parallel window's path (_PG_init), and its plan. */
extern void gpusort_window_path_init(void);
extern bool gpusort_is_window_slices_marker(Plan *plan);
extern Plan *gpusort_window_slices_plan(CustomScan *marker);

#endif							/* GPUSORT_WINDOW_H */
