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

#include "storage/dsm.h"

#include "service/service_shared.h"

/* The most jobs one backend holds at once (the buckets of one sort). */
#define SERVICE_MAX_HELD	64

/*
 * A job's shared memory and its slot, while the job is this backend's:
 * chunks of the service's buffer, or a segment of its own.
 */
typedef struct JobSpace
{
	ServiceSlot *slot;
	uint32		word;			/* its state word when claimed (FILLING) */
	dsm_segment *seg;			/* NULL: chunks of the buffer */
	char	   *base;			/* bytes of the job (service_shared.h) */
	uint64		row_keys;		/* rows times key columns, for the queue */
} JobSpace;

/*
 * A slot and bytes of shared memory for a job, now this backend's (the
 * caller fills the slot's job), or false with the reason.
 */
extern bool job_space_prepare(Size bytes, JobSpace *space, char **why);

/*
 * Queues the jobs of spaces[0..n) and waits for them all on the latch,
 * which keeps answering cancels: true when each holds its result, false
 * with the reason of the first that does not (a failure, its GPU process
 * lost, or no GPU process ready for a while).  A cancel raises its error:
 * the caller gives its jobs up (job_spaces_give_up).
 */
extern bool job_spaces_run(JobSpace *spaces, int n, char **why);

/* Ends a job, run or not: its slot and its segment go. */
extern void job_space_end(JobSpace *space);

/*
 * Gives up every job this backend holds: their slots are released now
 * where no GPU process runs them, else by whoever ends them.  For errors;
 * their segments go with the transaction.
 */
extern void job_spaces_give_up(void);

/* GPU processes that take jobs now. */
extern int	service_gpus_ready(void);

/* Counts a fallback of this backend in the service's totals. */
extern void service_count_fallback(ServiceFallback reason);

#endif							/* GPUSORT_JOB_SPACE_H */
