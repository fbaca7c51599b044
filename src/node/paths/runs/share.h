/*-------------------------------------------------------------------------
 *
 * share.h
 *	  A parallel query's GpuSort: its workers' statistics, and the one input
 *	  that its participants may share (shared_stage.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_NODE_SHARE_H
#define GPUSORT_NODE_SHARE_H

#include "access/parallel.h"
#include "storage/shm_toc.h"

#include "node/node_state.h"

/*
 * Rows of one kind that a parallel window's workers hand to the leader: a
 * file of each worker's in the share's file set.
 */
typedef struct HandedRows
{
	const char *kind;			/* the files' names: "<kind>.<worker>" */
	struct BufFile *file;		/* a worker's, open for writing */
	struct BufFile *read;		/* the leader's: a worker's, being read */
	int			next_worker;	/* and the worker whose file it reads next */
} HandedRows;

/*
 * A parallel query's state in each participant: its workers' statistics,
 * and the one input that its participants may share.
 */
typedef struct ShareState
{
	struct NodeShare *share;	/* in the query's shared memory, or NULL */
	SharedWorkerStats *worker_stats;	/* likewise, after it */
	WorkerSortStats *workers_kept;	/* the leader's copy of them */
	int			nworkers_kept;	/* its entries; -1: not copied yet */
	struct ParallelContext *pcxt;	/* the leader's */
	const RowStager *shared_stager;
	struct SortStage *shared_stage; /* begun or joined, no row added yet */
	bool		share_attached; /* this participant joined the input */
	bool		share_done;		/* this participant said it adds no more */
	bool		sharing;		/* share->shared: says when it adds no more */
	bool		held_shared;	/* its stage is the shared input (kept for
								 * EXPLAIN) */
	struct dsm_segment *rest_seg;	/* a parallel window's file set for the
									 * rows workers hand the leader, or NULL */
	MemoryContextCallback rest_detach;
	HandedRows	rest;			/* rows the engine refused */
	bool		rest_handed;	/* a worker's rows went to the leader */
	HandedRows	nulls;			/* rows led by a NULL */
} ShareState;

/* Makes the node's ShareState (as it begins). */
extern void node_share_create(GpuSortState *state);

/*
 * Do the participants of this parallel query share one input (each says
 * when it adds no more to it)?
 */
static inline bool
node_share_sharing(const GpuSortState *state)
{
	return state->parallel->sharing;
}


/* shared_stage.c */
extern Size node_share_estimate(CustomScanState *node, struct ParallelContext *pcxt);
extern void node_share_init(GpuSortState *state, struct ParallelContext *pcxt,
							void *coordinate, bool can_hold);
extern void node_share_reinit(GpuSortState *state, struct ParallelContext *pcxt,
							  void *coordinate, bool can_hold);
extern void node_share_join(CustomScanState *node, struct shm_toc *toc,
							void *coordinate);
extern bool node_share_active(GpuSortState *state);
extern bool node_share_attach(GpuSortState *state);
extern SliceReading node_share_late_slices(GpuSortState *state);
extern void node_share_shutdown(GpuSortState *state);
extern int	node_share_worker_stats(GpuSortState *state, WorkerSortStats **workers);
extern void node_share_publish_stats(GpuSortState *state,
									 const WorkerSortStats *stats);
extern void node_share_done(GpuSortState *state, int64 stores, int64 rows,
							bool all_held);
extern int64 node_share_wait(GpuSortState *state, int64 *rows);
extern bool node_share_solo(GpuSortState *state);
extern void node_share_sorted(GpuSortState *state, int64 held_rows);
extern void node_share_wait_sorted(GpuSortState *state);
extern bool node_share_next_slice(GpuSortState *state, int64 *first, int64 *end);
extern SliceReading node_share_slice_reading(GpuSortState *state);
extern bool node_share_alone(GpuSortState *state);
extern bool node_share_can_hand_rest(GpuSortState *state);
extern void node_share_put_rest(GpuSortState *state, TupleTableSlot *row);
extern void node_share_rest_done(GpuSortState *state);
extern TupleTableSlot *node_share_next_rest(GpuSortState *state);
extern void node_share_put_null(GpuSortState *state, MinimalTuple tuple);
extern void node_share_nulls_done(GpuSortState *state);
extern TupleTableSlot *node_share_next_null(GpuSortState *state, TupleTableSlot *slot);

#endif							/* GPUSORT_NODE_SHARE_H */
