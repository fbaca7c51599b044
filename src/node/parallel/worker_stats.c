/*-------------------------------------------------------------------------
 *
 * worker_stats.c
 *	  Parallel workers' GpuSort statistics in the query's shared memory
 *	  (worker_stats.h): the area of one entry per worker, its filling and
 *	  the leader's copy.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"

#include "node/parallel/worker_stats.h"

Size
worker_stats_size(int nworkers)
{
	return add_size(offsetof(SharedWorkerStats, workers),
					mul_size(sizeof(WorkerSortStats), Max(nworkers, 0)));
}

void
worker_stats_init(SharedWorkerStats *area, int nworkers)
{
	SpinLockInit(&area->mutex);
	area->nworkers = nworkers;
	memset(area->workers, 0, sizeof(WorkerSortStats) * Max(nworkers, 0));
}

void
worker_stats_publish(SharedWorkerStats *area, const WorkerSortStats *stats)
{
	Assert(IsParallelWorker());
	if (ParallelWorkerNumber < 0 || ParallelWorkerNumber >= area->nworkers)
		return;
	SpinLockAcquire(&area->mutex);
	area->workers[ParallelWorkerNumber] = *stats;
	area->workers[ParallelWorkerNumber].worker = ParallelWorkerNumber;
	area->workers[ParallelWorkerNumber].done = true;
	SpinLockRelease(&area->mutex);
}

int
worker_stats_copy(SharedWorkerStats *area, WorkerSortStats **workers)
{
	WorkerSortStats *copy = palloc(sizeof(WorkerSortStats) * Max(area->nworkers, 1));
	int			n = 0;

	/* those that sorted, in worker order (an entry at a time) */
	for (int i = 0; i < area->nworkers; i++)
	{
		SpinLockAcquire(&area->mutex);
		copy[n] = area->workers[i];
		SpinLockRelease(&area->mutex);
		if (copy[n].done)
			n++;
	}
	*workers = copy;
	return n;
}
