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

#endif							/* GPUSORT_PLANNER_H */
