/*-------------------------------------------------------------------------
 *
 * job_space.h
 *	  A backend's jobs in the GPU service (CUDA builds only): the shared
 *	  memory and the slot of each, their run, and their end.  client.c sends
 *	  one job at a time through it, buckets.c the buckets of one sort at
 *	  once.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_JOB_SPACE_H
#define GPUSORT_JOB_SPACE_H

#include "postgres.h"

#include "service/service_shared.h"

/* The most jobs one backend holds at once (the buckets of one sort). */
#define SERVICE_MAX_HELD	64

/*
 * A job's shared memory and its slot, while the job is this backend's:
 * chunks of the service's buffer, or an object of its own.
 */
typedef struct JobSpace
{
	ServiceSlot *slot;
	uint32		word;			/* its state word when claimed (FILLING) */
	JobSegment *seg;			/* NULL: chunks of the buffer */
	char	   *base;			/* bytes of the job (service_shared.h) */
	uint64		row_keys;		/* rows times key columns, for the queue */
} JobSpace;

/*
 * A slot and bytes of shared memory for a job, now this backend's (the
 * caller fills the slot's job), or false with the reason.
 */
extern bool job_space_prepare(Size bytes, JobSpace *space, char **why);

/*
 * The same for work that may do without: only where a slot and chunks of
 * the service's buffer are free now (no segment of its own; nothing counted
 * as a fallback when not).
 */
extern bool job_space_prepare_pooled(Size bytes, JobSpace *space);

/*
 * Queues the jobs of spaces[0..n) and waits for them all on the latch,
 * which keeps answering cancels: true when each holds its result, false
 * with the reason of the first that does not (a failure, its GPU process
 * lost, or no GPU process ready for a while).  A cancel gives the jobs up
 * and raises its error.
 */
extern bool job_spaces_run(JobSpace *spaces, int n, char **why);

/*
 * job_spaces_run in two steps, for work done between them: queues the jobs
 * of spaces[0..n); then waits for them, as job_spaces_run.
 */
extern void job_spaces_queue(JobSpace *spaces, int n);
extern bool job_spaces_finish(JobSpace *spaces, int n, char **why);

/* Ends a job, run or not: its slot and its object go. */
extern void job_space_end(JobSpace *space);

/*
 * Gives the jobs of spaces[0..n) up, those this backend still holds,
 * without their objects, which go with the resource owner: for errors.
 * Only the jobs of the work that failed: another node's may be in use.
 */
extern void job_spaces_abandon(JobSpace *spaces, int n);

/*
 * Queues a job that needs no memory and no answer (the end of held rows)
 * for a GPU process; false if no slot is free.
 */
extern bool service_send_detached(ServiceJobKind kind, int gpu, uint32 held_id);

/* Counts a fallback of this backend in the service's totals. */
extern void service_count_fallback(ServiceFallback reason);

#endif							/* GPUSORT_JOB_SPACE_H */
