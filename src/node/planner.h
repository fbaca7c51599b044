/*-------------------------------------------------------------------------
 *
 * planner.h
 *	  The planner hook that puts GpuSort in place of Sort.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_PLANNER_H
#define GPUSORT_PLANNER_H

extern void gpusort_planner_init(void);

#endif							/* GPUSORT_PLANNER_H */
