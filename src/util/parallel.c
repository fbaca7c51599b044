/*-------------------------------------------------------------------------
 *
 * parallel.c
 *	  Running a loop over many items on the backend and helper threads
 *	  together, interruptibly (see parallel.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <pthread.h>
#include <unistd.h>

#include "miscadmin.h"
#include "port/atomics.h"

#include "settings.h"
#include "util/parallel.h"
#include "util/threads.h"

/* A helper thread's stack: loop bodies need little. */
#define LOOP_THREAD_STACK	((Size) 256 * 1024)

#define MAX_WORKERS			64

typedef struct ParallelLoop
{
	ParallelBody body;
	void	   *arg;
	uint64		n;
	uint64		chunk;
	pg_atomic_uint64 next;		/* the first item not handed out yet */
	pg_atomic_uint32 stop;		/* set: hand out no more chunks */
} ParallelLoop;

typedef struct LoopWorker
{
	ParallelLoop *loop;
	int			part;
} LoopWorker;

/* Takes the next chunk; false when there is none, or the loop stopped. */
static bool
next_chunk(ParallelLoop *loop, uint64 *start, uint64 *end)
{
	if (pg_atomic_read_u32(&loop->stop))
		return false;
	*start = pg_atomic_fetch_add_u64(&loop->next, loop->chunk);
	if (*start >= loop->n)
		return false;
	*end = Min(loop->n, *start + loop->chunk);
	return true;
}

static void *
loop_thread(void *arg)
{
	LoopWorker *worker = arg;
	uint64		start;
	uint64		end;

	while (next_chunk(worker->loop, &start, &end))
		worker->loop->body(worker->loop->arg, worker->part, start, end);
	return NULL;
}

/* Starts helper threads 1..nworkers-1 of a loop; returns how many started. */
static int
start_threads(ParallelLoop *loop, LoopWorker *workers, pthread_t *threads,
			  int nworkers)
{
	sigset_t	saved;
	pthread_attr_t attr;
	int			nthreads = 0;

	if (nworkers < 2)
		return 0;
	/* threads inherit the signal mask of their creator */
	signals_block_all(&saved);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, LOOP_THREAD_STACK);
	for (int i = 1; i < nworkers; i++)
	{
		workers[nthreads].loop = loop;
		workers[nthreads].part = i;
		if (pthread_create(&threads[nthreads], &attr, loop_thread,
						   &workers[nthreads]) != 0)
			break;
		nthreads++;
	}
	pthread_attr_destroy(&attr);
	signals_restore(&saved);
	return nthreads;
}

int
parallel_workers(void)
{
	long		cores = sysconf(_SC_NPROCESSORS_ONLN);

	return (int) Max(1, Min(Min((long) gpusort_key_threads + 1, cores), MAX_WORKERS));
}

void
parallel_for(uint64 n, uint64 chunk, int nworkers, ParallelBody body, void *arg)
{
	ParallelLoop loop;
	LoopWorker	workers[MAX_WORKERS];
	pthread_t	threads[MAX_WORKERS];
	uint64		start;
	uint64		end;

	if (n == 0)
		return;
	loop.body = body;
	loop.arg = arg;
	loop.n = n;
	loop.chunk = Max(chunk, 1);
	pg_atomic_init_u64(&loop.next, 0);
	pg_atomic_init_u32(&loop.stop, 0);
	nworkers = Max(1, Min(nworkers, MAX_WORKERS));
	nworkers = (int) Min((uint64) nworkers, (n + loop.chunk - 1) / loop.chunk);

	/* rounds: an interrupt that does not end the loop starts the next */
	while (pg_atomic_read_u64(&loop.next) < n)
	{
		int			nthreads;

		pg_atomic_write_u32(&loop.stop, 0);
		nthreads = start_threads(&loop, workers, threads, nworkers);
		while (next_chunk(&loop, &start, &end))
		{
			body(arg, 0, start, end);
			if (INTERRUPTS_PENDING_CONDITION() && INTERRUPTS_CAN_BE_PROCESSED())
				pg_atomic_write_u32(&loop.stop, 1);
		}
		for (int i = 0; i < nthreads; i++)
			pthread_join(threads[i], NULL);
		CHECK_FOR_INTERRUPTS();
	}
}

/* Copies below this stay on the backend alone. */
#define PARALLEL_COPY_MIN	((Size) 4 * 1024 * 1024)
#define COPY_CHUNK			((Size) 1024 * 1024)

typedef struct CopyJob
{
	char	   *dst;
	const char *src;
	Size		bytes;
} CopyJob;

static void
copy_body(void *arg, int part, uint64 start, uint64 end)
{
	CopyJob    *job = arg;
	Size		from = (Size) start * COPY_CHUNK;
	Size		to = Min((Size) end * COPY_CHUNK, job->bytes);

	memcpy(job->dst + from, job->src + from, to - from);
}

void
parallel_copy(void *dst, const void *src, Size bytes)
{
	CopyJob		job = {dst, src, bytes};

	if (bytes < PARALLEL_COPY_MIN)
	{
		memcpy(dst, src, bytes);
		return;
	}
	parallel_for((bytes + COPY_CHUNK - 1) / COPY_CHUNK, 4, parallel_workers(),
				 copy_body, &job);
}
