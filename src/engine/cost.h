/*-------------------------------------------------------------------------
 *
 * cost.h
 *	  The cost model that chooses between the engines in gpusort.device =
 *	  auto.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_COST_H
#define GPUSORT_COST_H

#include "postgres.h"

#include "engine/sort_job.h"

/* What a job is estimated to take on each engine, in milliseconds. */
extern double cpu_estimate_ms(uint32 nrows, int nkeys);
extern double gpu_estimate_ms(uint32 nrows, int nkeys);

/*
 * Should a sort of nrows rows and nkeys key columns go to the GPU engine
 * gpu (NULL: none was built)?  If not, *why says why, unless the CPU is
 * simply estimated faster (NULL).
 */
extern bool gpu_pays(const SortEngine *gpu, uint32 nrows, int nkeys,
					 const char **why);

/*
 * Is a job of nrows rows and nkeys key columns bound for the GPU, as far as
 * can be told before it runs?  With gpusort.device = auto, only when the GPU
 * runs already: its rows are then uploaded while they are collected.
 */
extern bool gpu_job_expected(const SortEngine *gpu, int device, uint32 nrows,
							 int nkeys);

#endif							/* GPUSORT_COST_H */
