/*-------------------------------------------------------------------------
 *
 * held.h
 *	  The inputs that a GPU process of the service holds for backends
 *	  (held.c; CUDA builds only).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_HELD_H
#define GPUSORT_HELD_H

#include "postgres.h"

#include "service/service_shared.h"

/* Is this job one on held rows? */
static inline bool
held_job(ServiceJobKind kind)
{
	return kind >= SERVICE_JOB_HOLD_ADD;
}

/* Does it carry bytes in shared memory (not the sort, not the end)? */
static inline bool
held_job_has_memory(ServiceJobKind kind)
{
	return kind == SERVICE_JOB_HOLD_ADD || kind == SERVICE_JOB_HOLD_NEXT;
}

/*
 * Runs a job on held rows, whose bytes are at base (NULL for the sort and
 * the end): true, or false with the reason.
 */
extern bool held_run(ServiceSlot *slot, char *base, char **why);

/* Drops the inputs whose backend is gone. */
extern void held_drop_orphans(void);

#endif							/* GPUSORT_HELD_H */
