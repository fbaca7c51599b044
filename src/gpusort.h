/*-------------------------------------------------------------------------
 *
 * gpusort.h
 *	  Settings and entry points shared by the parts of gpusort.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_H
#define GPUSORT_H

#include "postgres.h"

#include "miscadmin.h"
#include "nodes/plannodes.h"

/* Where sort jobs run: gpusort.device. */
typedef enum GpuSortDevice
{
	GPUSORT_DEVICE_AUTO,
	GPUSORT_DEVICE_GPU,
	GPUSORT_DEVICE_CPU
} GpuSortDevice;

/* GUC variables (gpusort.c) */
extern bool gpusort_enabled;
extern int	gpusort_min_rows;
extern int	gpusort_device;
extern int	gpusort_work_mem;
extern int	gpusort_gpu_id;
extern int	gpusort_gpu_memory;
extern bool gpusort_gpu_prestart;
extern int	gpusort_prefault_threads;
extern bool gpusort_huge_pages;

/* Memory budget of one GpuSort node, in kilobytes. */
static inline int
gpusort_memory_budget_kb(void)
{
	return gpusort_work_mem >= 0 ? gpusort_work_mem : work_mem;
}

/* planner.c */
extern void gpusort_planner_init(void);

/* sort_node.c */
extern void gpusort_node_init(void);
extern CustomScan *gpusort_make_node(Sort *sort);
extern bool gpusort_sort_supported(Sort *sort);

#endif							/* GPUSORT_H */
