/*-------------------------------------------------------------------------
 *
 * gpu_copier.h
 *	  A helper thread of the GPU engine that copies host memory to the
 *	  device in the background, so that a sort's keys travel while its rows
 *	  are still being read.
 *
 * The backend queues copies and goes on; it waits for them before the host
 * memory they read moves or is sorted, and cancels them before that memory
 * is freed.  The thread runs no PostgreSQL code and takes no signals (it is
 * started with every signal blocked); it copies on a CUDA stream of its own.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPU_COPIER_H
#define GPU_COPIER_H

#include "postgres.h"

#include "gpusort_cuda.h"

/*
 * Starts the thread, once per backend, and gives it a stream on device;
 * call with every signal blocked.  False, with the reason in why (of
 * whylen bytes), if it cannot run.
 */
extern bool copier_start(int device, char *why, Size whylen);

/* Stops using the device: cancels the queue and drops the stream. */
extern void copier_stop(void);

/* Queues a copy of bytes from host src to device dst. */
extern void copier_queue(void *dst, const void *src, Size bytes);

/*
 * Waits until every queued copy is done.  Returns GS_OK, or the status of
 * the first copy that failed since the last wait (copies queued after it
 * were dropped), with its message in copier_error().
 */
extern gs_status copier_wait(void);

/* Drops the queued copies and waits for the one in flight. */
extern void copier_cancel(void);

extern const char *copier_error(void);

#endif							/* GPU_COPIER_H */
