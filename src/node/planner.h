/*-------------------------------------------------------------------------
 *
 * planner.h
 *	  The planner hook that puts GpuSort in place of Sort.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_PLANNER_H
#define GPUSORT_PLANNER_H

/*
 * Installs the hook (_PG_init).  by_choice: the library was loaded by a
 * preload setting or LOAD, not by a call of one of its functions.
 */
extern void gpusort_planner_init(bool by_choice);

#endif							/* GPUSORT_PLANNER_H */
