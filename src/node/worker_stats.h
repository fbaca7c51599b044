/*-------------------------------------------------------------------------
 *
 * worker_stats.h
 *	  What the GpuSort of each parallel worker did, handed to the leader's
 *	  EXPLAIN ANALYZE through shared memory, as Sort shows "Worker N:" lines.
 *
 * PostgreSQL gives a custom scan shared memory of its query only when the
 * node is parallel-aware, which GpuSort is not (each worker sorts its own
 * part).  So the library, when preloaded, keeps a small array of slots in
 * the server's shared memory: a worker's GpuSort writes one as it ends,
 * keyed by its leader's pid and the plan node; the leader reads them for
 * EXPLAIN, and forgets its old ones when the node starts again.  Without
 * preloading there are no slots, and no such lines.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WORKER_STATS_H
#define WORKER_STATS_H

#include "postgres.h"

typedef struct WorkerSortStats
{
	int			leader_pid;		/* 0: a free slot */
	int			plan_node_id;
	int			worker;			/* the worker's ParallelWorkerNumber */
	char		engine[16];		/* "cpu", "gpu" or "tuplesort" */
	char		method[48];		/* "in memory", or how it spilled */
	int64		rows;
	int64		memory_kb;
	double		collect_ms;		/* reading its share of the input */
} WorkerSortStats;

/* Asks for the slots (_PG_init, while shared_preload_libraries loads). */
extern void worker_stats_init(void);

/* In a parallel worker: stores what its GpuSort did. */
extern void worker_stats_publish(const WorkerSortStats *stats);

/*
 * In the leader: copies the slots of this leader's workers for the node
 * into out (at most max), in worker order, and returns how many.
 */
extern int	worker_stats_read(int plan_node_id, WorkerSortStats *out, int max);

/* In the leader, as the node starts: frees its slots of earlier runs. */
extern void worker_stats_forget(int plan_node_id);

#endif							/* WORKER_STATS_H */
