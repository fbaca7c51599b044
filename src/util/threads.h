/*-------------------------------------------------------------------------
 *
 * threads.h
 *	  Helper threads of a backend, and the signal mask around the calls
 *	  that start threads.
 *
 * A backend's helper threads (prefault.c, gpu_copier.c) run no PostgreSQL
 * code, and must never run PostgreSQL's signal handlers.  Threads inherit
 * the signal mask of the thread that creates them, so they are created with
 * every signal blocked; so are the calls into CUDA that start CUDA's own
 * threads.  Signals that arrive meanwhile are delivered afterwards.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_THREADS_H
#define GPUSORT_THREADS_H

#include "postgres.h"

#include <signal.h>

/* Blocks every signal in this thread; *saved gets the mask to restore. */
extern void signals_block_all(sigset_t *saved);

/* Restores the mask that signals_block_all() saved. */
extern void signals_restore(const sigset_t *saved);

/*
 * Starts up to count detached helper threads running body(arg), each on a
 * small stack and with every signal blocked.  Returns how many started;
 * *error gets pthread_create's error for the first that did not (0 when
 * all did).
 */
extern int	helper_threads_start(void *(*body) (void *), void *arg, int count,
								 int *error);

#endif							/* GPUSORT_THREADS_H */
