/*-------------------------------------------------------------------------
 *
 * shm_objects.h
 *	  The GPU service's own shared memory objects (CUDA builds only): POSIX
 *	  shared memory that gpusort names, makes and removes itself, never one
 *	  of PostgreSQL's segments, so that the GPU processes, which map none of
 *	  PostgreSQL's shared memory (gpu_process.c), map them too, whatever
 *	  dynamic_shared_memory_type is.  Their names, in /dev/shm, begin with
 *	  the postmaster's pid:
 *
 *	  gpusort.<pm>.control		the service's state (ServiceShared), made by
 *								the postmaster as it starts and unlinked once
 *								mapped: every process of the server inherits
 *								the mapping, which goes with the last of them
 *	  gpusort.<pm>.buffer		the service's buffer, made by the supervisor
 *								once a GPU is found
 *	  gpusort.<pm>.<pid>.<n>	a job of backend <pid> that found no room in
 *								the buffer
 *
 * None outlives its server: a backend removes the objects of its jobs with
 * the job, with the resource owner that was current when it made them (an
 * error), and as it exits; the postmaster removes those of its server as it
 * exits or restarts after a crash, and at its start those of servers whose
 * postmaster is gone (killed outright).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_SHM_OBJECTS_H
#define GPUSORT_SHM_OBJECTS_H

#include "postgres.h"

#include "lib/ilist.h"
#include "utils/resowner.h"

#define SHM_OBJECT_NAME_LEN	64

/* This server's object what ("buffer", ...): "/gpusort.<pm>.<what>". */
extern void shm_object_name(char *name, const char *what);

/*
 * Makes object name of bytes, its pages reserved, in place of a stale one
 * of that name: 0, or an errno (ENOSPC where /dev/shm has no room).
 */
extern int	shm_object_create(const char *name, Size bytes);

/*
 * Maps object name, of bytes, to read and write, its pages at once where
 * populate: the address, or MAP_FAILED with errno.
 */
extern void *shm_object_map(const char *name, Size bytes, bool populate);

/*
 * In the postmaster: removes this server's objects, and at its start also
 * those of servers whose postmaster is gone.
 */
extern void shm_objects_sweep(bool at_start);

/* A backend's job in an object of its own (job_space.c). */
typedef struct JobSegment
{
	char		name[SHM_OBJECT_NAME_LEN];
	char	   *base;
	Size		bytes;
	ResourceOwner owner;		/* current when it was made */
	dlist_node	node;			/* in the backend's list */
} JobSegment;

/* A job's object of bytes, made and mapped; NULL, with errno, if not. */
extern JobSegment *job_segment_create(Size bytes);

/* Unmaps and removes a job's object. */
extern void job_segment_destroy(JobSegment *seg);

#endif							/* GPUSORT_SHM_OBJECTS_H */
