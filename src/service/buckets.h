/*-------------------------------------------------------------------------
 *
 * buckets.h
 *	  A sort larger than one GPU's share of the service's device memory,
 *	  split into ranges of its whole key (buckets) that the GPU processes
 *	  sort at once (CUDA builds only).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_BUCKETS_H
#define GPUSORT_BUCKETS_H

#include "postgres.h"

#include "engine/sort_job.h"

/*
 * Buckets that a job of nrows rows and nkeys key columns needs, with
 * mem_limit bytes of device memory on each GPU process: 1 if it fits one,
 * above SERVICE_MAX_HELD if it is too large for them.
 */
extern int	service_buckets(uint32 nrows, int nkeys, Size mem_limit);

/*
 * Sorts a job through the service in buckets whose device memory is below
 * mem_limit, as service_sort_job does a job that fits; false, with the
 * reason, when it cannot (more buckets than a backend may hold, no shared
 * memory, a bucket's job failed).  No bucket has more than
 * ceil(nrows / service_buckets()) rows, whatever the keys (buckets.c).
 */
extern bool service_sort_buckets(SortJob *job, Size mem_limit, char **why);

#endif							/* GPUSORT_BUCKETS_H */
