/*-------------------------------------------------------------------------
 *
 * gpu_copier.c
 *	  The GPU engine's copy thread: host-to-device copies in the background
 *	  (see gpu_copier.h).
 *
 * The copies are taken from a queue in order and issued from pageable
 * memory, each one in pieces of at most COPY_PIECE_BYTES, on the thread's
 * own gs_context (a second CUDA stream on the engine's device); the thread
 * waits for each piece, so that when it takes the next one nothing reads
 * the previous piece's host memory any more.  A cancel therefore waits for
 * one piece at most.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef GPUSORT_WITH_CUDA

#include <pthread.h>

#include "gpu/gpu_copier.h"
#include "util/threads.h"

#define QUEUE_COPIES	256		/* a power of two */
#define COPY_PIECE_BYTES	((Size) 4 * 1024 * 1024)	/* copied, then waited for */

typedef struct Copy
{
	char	   *dst;
	const char *src;
	Size		bytes;
} Copy;

static struct
{
	pthread_mutex_t lock;
	pthread_cond_t queued;		/* signalled when copies are queued */
	pthread_cond_t idle;		/* signalled when the queue empties */
	Copy		queue[QUEUE_COPIES];
	uint32		head;			/* the copy in flight, or the next one */
	uint32		tail;			/* next free slot */
	volatile bool cancel;		/* stop the copy in flight */
	gs_status	status;			/* first failure since the last wait */
	char		error[256];
	gs_context *ctx;			/* the thread's stream; NULL: stopped */
	bool		started;
}			copier = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.queued = PTHREAD_COND_INITIALIZER,
	.idle = PTHREAD_COND_INITIALIZER,
};

/* Copies one queued copy, piece by piece.  No PostgreSQL code here. */
static gs_status
copy_pieces(gs_context *ctx, const Copy *copy)
{
	for (Size off = 0; off < copy->bytes && !copier.cancel; off += COPY_PIECE_BYTES)
	{
		Size		len = Min(COPY_PIECE_BYTES, copy->bytes - off);
		gs_status	st;

		if ((st = gs_copy_to_device(ctx, copy->dst + off, copy->src + off, len)) != GS_OK ||
			(st = gs_synchronize(ctx)) != GS_OK)
			return st;
	}
	return GS_OK;
}

static void *
copier_thread(void *arg)
{
	pthread_mutex_lock(&copier.lock);
	for (;;)
	{
		Copy		copy;
		gs_context *ctx;
		gs_status	st;

		while (copier.head == copier.tail)
			pthread_cond_wait(&copier.queued, &copier.lock);
		copy = copier.queue[copier.head % QUEUE_COPIES];
		ctx = copier.ctx;
		pthread_mutex_unlock(&copier.lock);

		st = copy_pieces(ctx, &copy);

		pthread_mutex_lock(&copier.lock);
		copier.head++;
		if (st != GS_OK)
		{
			if (copier.status == GS_OK)
			{
				copier.status = st;
				strlcpy(copier.error, gs_last_error(ctx), sizeof(copier.error));
			}
			copier.head = copier.tail;	/* drop the rest */
		}
		if (copier.head == copier.tail)
			pthread_cond_broadcast(&copier.idle);
	}
	return NULL;
}

bool
copier_start(int device, char *why, Size whylen)
{
	gs_status	st;

	if (copier.ctx == NULL)
	{
		st = gs_context_create(device, 0, &copier.ctx);
		if (st != GS_OK)
		{
			snprintf(why, whylen, "copy stream: %s", gs_last_error(NULL));
			copier.ctx = NULL;
			return false;
		}
	}
	if (!copier.started)
	{
		int			rc;

		if (helper_threads_start(copier_thread, NULL, 1, &rc) == 0)
		{
			snprintf(why, whylen, "could not start the copy thread: %s", strerror(rc));
			copier_stop();
			return false;
		}
		copier.started = true;
	}
	return true;
}

void
copier_stop(void)
{
	copier_cancel();
	if (copier.ctx)
		gs_context_destroy(copier.ctx);
	copier.ctx = NULL;
	copier.status = GS_OK;
}

void
copier_queue(void *dst, const void *src, Size bytes)
{
	Assert(copier.ctx != NULL);
	if (bytes == 0)
		return;
	pthread_mutex_lock(&copier.lock);
	while (copier.tail - copier.head == QUEUE_COPIES)
		pthread_cond_wait(&copier.idle, &copier.lock);
	copier.queue[copier.tail % QUEUE_COPIES] = (Copy)
	{
		dst, src, bytes
	};
	copier.tail++;
	pthread_cond_signal(&copier.queued);
	pthread_mutex_unlock(&copier.lock);
}

gs_status
copier_wait(void)
{
	gs_status	st;

	pthread_mutex_lock(&copier.lock);
	while (copier.head != copier.tail)
		pthread_cond_wait(&copier.idle, &copier.lock);
	st = copier.status;
	copier.status = GS_OK;
	pthread_mutex_unlock(&copier.lock);
	return st;
}

void
copier_cancel(void)
{
	if (!copier.started)
		return;
	pthread_mutex_lock(&copier.lock);
	/* keep the copy in flight, if any: the thread ends it */
	if (copier.head != copier.tail)
		copier.tail = copier.head + 1;
	copier.cancel = true;
	while (copier.head != copier.tail)
		pthread_cond_wait(&copier.idle, &copier.lock);
	copier.cancel = false;
	copier.status = GS_OK;
	pthread_mutex_unlock(&copier.lock);
}

const char *
copier_error(void)
{
	return copier.error;
}

#endif							/* GPUSORT_WITH_CUDA */
