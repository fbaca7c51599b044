/*-------------------------------------------------------------------------
 *
 * prefault.c
 *	  The helper threads that map fresh memory ahead of its first use (see
 *	  prefault.h).
 *
 * A backend starts its threads the first time it queues a range, up to
 * gpusort.prefault_threads, with every signal blocked so that they never
 * run PostgreSQL's handlers (util/threads.c); they live until the backend
 * exits.  They take
 * 2 MB pieces from a queue in the order they were queued, and only call
 * madvise() on them, or munmap() on mappings handed to them to unmap.  The
 * queue is bounded: ranges that do not fit are left to ordinary page
 * faults, and mappings to the caller to unmap.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "miscadmin.h"
#include "utils/memutils.h"

#include "settings.h"
#include "util/prefault.h"
#include "util/threads.h"

#if defined(__linux__)

#include <pthread.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14 */
#endif

#define MAP_PIECE_BYTES	((Size) 2 * 1024 * 1024)	/* mapped by one madvise() */
#define MIN_RANGE_BYTES	((Size) 4 * 1024 * 1024)
#define QUEUE_PIECES	4096	/* a power of two: 8 GB queued at most */
#define HUGE_PAGE_BYTES	((Size) 2 * 1024 * 1024)

/*
 * A piece of work: [start, start + len) to map, or to unmap (unmap), or,
 * when rows is not NULL, nrows tuples to gather into the area [start, start
 * + len), their places set in tuples (prefault_gather).
 */
typedef struct Piece
{
	char	   *start;
	Size		len;
	bool		unmap;
	MinimalTuple const *rows;
	MinimalTuple *tuples;
	uint32		nrows;
	volatile uint32 *state;
} Piece;

static struct
{
	pthread_mutex_t lock;
	pthread_cond_t queued;		/* signalled when pieces are queued */
	pthread_cond_t done;		/* signalled when no piece is being mapped */
	Piece		queue[QUEUE_PIECES];
	uint32		head;			/* next piece to take */
	uint32		tail;			/* next free slot; tail - head are queued */
	int			busy;			/* pieces being mapped or gathered */
	int			nthreads;		/* threads started */
	bool		checked;		/* the kernel's support was checked */
	bool		no_populate;	/* no MADV_POPULATE_WRITE */
	bool		no_threads;		/* no thread could be started */
}			pool = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.queued = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
};

/* Copies a gather piece's tuples into its area (see prefault.h). */
static void
gather_rows(const Piece *piece)
{
	Size		used = 0;

	for (uint32 i = 0; i < piece->nrows; i++)
	{
		MinimalTuple tuple = piece->rows[i];
		Size		len;

		if (i + GATHER_PREFETCH < piece->nrows)
			__builtin_prefetch(piece->rows[i + GATHER_PREFETCH]);
		len = tuple->t_len;
		if (used + len <= piece->len)
		{
			memcpy(piece->start + used, tuple, len);
			tuple = (MinimalTuple) (piece->start + used);
			used += MAXALIGN(len);
		}
		piece->tuples[i] = tuple;
	}
	__atomic_store_n(piece->state, GATHER_DONE, __ATOMIC_RELEASE);
}

/* A helper thread: works on queued pieces, forever.  No PostgreSQL code here. */
static void *
prefault_thread(void *arg)
{
	pthread_mutex_lock(&pool.lock);
	for (;;)
	{
		Piece		piece;

		while (pool.head == pool.tail)
			pthread_cond_wait(&pool.queued, &pool.lock);
		piece = pool.queue[pool.head % QUEUE_PIECES];
		pool.head++;
		if (!piece.unmap)
			pool.busy++;		/* what prefault_cancel() waits for */
		pthread_mutex_unlock(&pool.lock);

		if (piece.rows)
			gather_rows(&piece);
		else if (piece.unmap)
			(void) munmap(piece.start, piece.len);
		else
			/* fails harmlessly on memory unmapped meanwhile */
			(void) madvise(piece.start, piece.len, MADV_POPULATE_WRITE);

		pthread_mutex_lock(&pool.lock);
		if (!piece.unmap && --pool.busy == 0)
			pthread_cond_broadcast(&pool.done);
	}
	return NULL;
}

/* Can this kernel map pages for us?  Asked once, on a page of our own. */
static bool
kernel_can_populate(void)
{
	long		page = sysconf(_SC_PAGESIZE);
	void	   *probe;
	bool		ok;

	probe = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (probe == MAP_FAILED)
		return false;
	ok = madvise(probe, page, MADV_POPULATE_WRITE) == 0;
	munmap(probe, page);
	return ok;
}

/*
 * Starts threads up to gpusort.prefault_threads, and no more than the
 * cores; false if none can run.
 */
static bool
start_threads(void)
{
	int			failed;
	int			wanted;

	if (!pool.checked)
	{
		pool.checked = true;
		if (!kernel_can_populate())
		{
			pool.no_populate = true;
			elog(DEBUG1, "gpusort: the kernel cannot map pages ahead (MADV_POPULATE_WRITE): %m");
		}
	}
	if (!IsUnderPostmaster && IsPostmasterEnvironment)
		return false;			/* no threads in the postmaster */
	wanted = (int) Min((long) gpusort_prefault_threads, sysconf(_SC_NPROCESSORS_ONLN));
	if (pool.no_threads || pool.nthreads >= wanted)
		return pool.nthreads > 0;

	pool.nthreads += helper_threads_start(prefault_thread, NULL,
										  wanted - pool.nthreads, &failed);
	if (failed != 0)
	{
		errno = failed;
		elog(DEBUG1, "gpusort: could not start a prefault thread: %m");
		if (pool.nthreads == 0)
			pool.no_threads = true;
	}
	return pool.nthreads > 0;
}

void
prefault_range(void *start, Size len)
{
	Size		page = (Size) sysconf(_SC_PAGESIZE);
	uintptr_t	from = TYPEALIGN(page, (uintptr_t) start);
	uintptr_t	to = TYPEALIGN_DOWN(page, (uintptr_t) start + len);
	bool		queued = false;

	if (gpusort_prefault_threads <= 0 || len < MIN_RANGE_BYTES)
		return;
	if (!start_threads() || pool.no_populate)
		return;

	pthread_mutex_lock(&pool.lock);
	while (from < to && pool.tail - pool.head < QUEUE_PIECES)
	{
		Size		piece_len = Min(MAP_PIECE_BYTES, to - from);

		pool.queue[pool.tail % QUEUE_PIECES] = (Piece) {.start = (char *) from, .len = piece_len};
		from += piece_len;
		pool.tail++;
		queued = true;
	}
	if (queued)
		pthread_cond_broadcast(&pool.queued);
	pthread_mutex_unlock(&pool.lock);
}

void
prefault_huge_pages(void *start, Size len)
{
	uintptr_t	from = TYPEALIGN(HUGE_PAGE_BYTES, (uintptr_t) start);
	uintptr_t	to = TYPEALIGN_DOWN(HUGE_PAGE_BYTES, (uintptr_t) start + len);

	if (gpusort_huge_pages && from < to)
		(void) madvise((void *) from, to - from, MADV_HUGEPAGE);
}

/* Queues one piece for a thread; false if the queue is full. */
static bool
queue_piece(const Piece *piece)
{
	bool		queued = false;

	pthread_mutex_lock(&pool.lock);
	if (pool.tail - pool.head < QUEUE_PIECES)
	{
		pool.queue[pool.tail % QUEUE_PIECES] = *piece;
		pool.tail++;
		queued = true;
		pthread_cond_signal(&pool.queued);
	}
	pthread_mutex_unlock(&pool.lock);
	return queued;
}

void
prefault_gather(MinimalTuple const *rows, uint32 nrows,
				char *area, Size area_bytes, MinimalTuple *tuples,
				volatile uint32 *state)
{
	Piece		piece = {
		.start = area,
		.len = area_bytes,
		.rows = rows,
		.tuples = tuples,
		.nrows = nrows,
		.state = state
	};

	if (gpusort_prefault_threads <= 0 || !start_threads())
	{
		*state = GATHER_DROPPED;
		return;
	}
	*state = GATHER_QUEUED;
	if (!queue_piece(&piece))
		*state = GATHER_DROPPED;
}

bool
prefault_unmap(void *start, Size len)
{
	Piece		piece = {.start = start, .len = len, .unmap = true};

	if (pool.nthreads == 0 || len < MIN_RANGE_BYTES)
		return false;
	return queue_piece(&piece);
}

void
prefault_cancel(void)
{
	uint32		kept;

	if (pool.nthreads == 0)
		return;
	pthread_mutex_lock(&pool.lock);

	/*
	 * The mappings to unmap stay queued, moved behind the others (each slot
	 * is read before it is written over); the waiters of gathers dropped
	 * here read their rows themselves.
	 */
	kept = pool.tail;
	for (uint32 i = pool.head; i != pool.tail; i++)
	{
		Piece	   *piece = &pool.queue[i % QUEUE_PIECES];

		if (piece->rows)
			__atomic_store_n(piece->state, GATHER_DROPPED, __ATOMIC_RELEASE);
		else if (piece->unmap)
			pool.queue[kept++ % QUEUE_PIECES] = *piece;
	}
	pool.head = pool.tail;
	pool.tail = kept;
	if (pool.head != pool.tail)
		pthread_cond_broadcast(&pool.queued);
	while (pool.busy > 0)
		pthread_cond_wait(&pool.done, &pool.lock);
	pthread_mutex_unlock(&pool.lock);
}

#else							/* !__linux__ */

void
prefault_range(void *start, Size len)
{
}

void
prefault_huge_pages(void *start, Size len)
{
}

void
prefault_gather(MinimalTuple const *rows, uint32 nrows,
				char *area, Size area_bytes, MinimalTuple *tuples,
				volatile uint32 *state)
{
	*state = GATHER_DROPPED;
}

bool
prefault_unmap(void *start, Size len)
{
	return false;
}

void
prefault_cancel(void)
{
}

#endif

void *
prefault_alloc(MemoryContext cxt, Size size)
{
	void	   *chunk = MemoryContextAllocHuge(cxt, size);

	prefault_range(chunk, size);
	return chunk;
}
