/*-------------------------------------------------------------------------
 *
 * planner.h
 *	  The planner hook that puts GpuSort in place of Sort.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_PLANNER_H
#define GPUSORT_PLANNER_H

#include "nodes/plannodes.h"

/* Installs the hook (_PG_init); it acts where gpusort_planner_acts(). */
extern void gpusort_planner_init(void);

/* window_path.c: the parallel window's path (_PG_init), and its plan. */
extern void gpusort_window_path_init(void);
extern bool gpusort_is_window_slices_marker(Plan *plan);
extern Plan *gpusort_window_slices_plan(CustomScan *marker);

#endif							/* GPUSORT_PLANNER_H */
