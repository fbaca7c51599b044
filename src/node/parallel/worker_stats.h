/*-------------------------------------------------------------------------
 *
 * worker_stats.h
 *	  What the GpuSort of each parallel worker did, handed to the leader's
 *	  EXPLAIN ANALYZE through the query's own shared memory, as Sort shows
 *	  "Worker N:" lines (SharedSortInfo).
 *
 * Every GpuSort below a Gather is parallel-aware (planner.c), so that the
 * executor gives it a part of the query's shared memory (shared_stage.c),
 * which ends with an area of one entry per worker the query planned: each
 * worker fills its own as its sort ends and as it shuts down, and the
 * leader copies them all as it shuts down, before the Gather lets that
 * memory go.  On a rescan of the Gather the area starts empty again: the
 * entries are those of its last run, as Sort's are.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WORKER_STATS_H
#define WORKER_STATS_H

#include "postgres.h"

#include "storage/spin.h"

typedef struct WorkerSortStats
{
	bool		done;			/* the worker sorted: the entry is filled */
	int			worker;			/* its ParallelWorkerNumber */
	char		engine[16];		/* "cpu", "gpu" or "tuplesort" */
	char		method[64];		/* "in memory", or how it spilled */
	int64		rows;			/* -1: not counted (tuplesort) */
	int64		memory_kb;
	double		collect_ms;		/* reading its share of the input */
	int64		top_n_dropped;	/* rows its top N filter dropped */
	int64		distinct_dropped;	/* rows its distinct filter dropped */
} WorkerSortStats;

/* The area in the query's shared memory, one entry per worker. */
typedef struct SharedWorkerStats
{
	slock_t		mutex;
	int			nworkers;
	WorkerSortStats workers[FLEXIBLE_ARRAY_MEMBER];
} SharedWorkerStats;

/* The bytes of an area for nworkers workers. */
extern Size worker_stats_size(int nworkers);

/* In the leader, before the workers start (again): an empty area. */
extern void worker_stats_init(SharedWorkerStats *area, int nworkers);

/* In a parallel worker: fills its entry. */
extern void worker_stats_publish(SharedWorkerStats *area, const WorkerSortStats *stats);

/*
 * In the leader: the filled entries (palloc'd, in worker order) into
 * *workers, and how many.
 */
extern int	worker_stats_copy(SharedWorkerStats *area, WorkerSortStats **workers);

#endif							/* WORKER_STATS_H */
