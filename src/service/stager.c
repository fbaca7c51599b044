/*-------------------------------------------------------------------------
 *
 * stager.c
 *	  The backends' side of the rows that the GPU service holds (RowStager,
 *	  row_store.h), for GpuSort nodes whose input outgrew their memory
 *	  budget: one GPU process keeps them in its device memory (held.c).
 *
 * Each full store goes to that process as a job, laid out flat: its tuple
 * blocks back to back, then the words of the rows' keys, each row's place
 * and length (service_held_layout).  Once the input ends, a job has the rows sorted,
 * and each further job brings the next rows in order into the job's
 * shared memory, where the node reads them until it asks for more; the
 * same slot carries them all.  The input is let go by a job that needs no
 * answer, at the end or, after an error, when the node's memory goes.
 *
 * The participants of a parallel query may add to one input
 * (held_begin_shared, held_join): the leader's, which it sorts and reads
 * once they all have added theirs, and which lives as long as the leader
 * (the GPU process drops it when the leader is gone, not its workers).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef GPUSORT_WITH_CUDA

#include "miscadmin.h"
#include "utils/memutils.h"

#include "gpu/engine_gpu.h"
#include "service/job_space.h"
#include "service/stager.h"
#include "util/parallel.h"

typedef struct ServiceHeld
{
	int			gpu;			/* the GPU process that holds the rows */
	uint32		id;				/* their number there */
	int			owner_pid;		/* the backend that sorts and reads them */
	bool		joined;			/* another's input: only adds to it */
	Size		budget;			/* the node's memory budget */
	double		expected;		/* bytes the input is expected to take */
	Size		room;			/* bytes the rows handed back may take */
	JobSpace	next;			/* those rows, while next_held */
	bool		next_held;
	bool		ended;
	MemoryContextCallback cleanup;
} ServiceHeld;

/* The ready GPU process with the most device memory free, or -1. */
static int
roomiest_gpu(void)
{
	int			n = (int) pg_atomic_read_u32(&service->ngpus);
	int			best = -1;
	double		best_free = -1;

	for (int g = 0; g < n; g++)
	{
		ServiceGpu *gpu = &service->gpus[g];
		double		free_bytes = (double) gpu->mem_limit - (double) gpu->mem_used;

		if (pg_atomic_read_u32(&gpu->state) == GPU_READY && free_bytes > best_free)
		{
			best = g;
			best_free = free_bytes;
		}
	}
	return best;
}

/* Lets the rows go, if that was not done: the node's memory goes. */
static void
let_go(void *arg)
{
	ServiceHeld *held = arg;

	if (held->ended)
		return;
	if (held->next_held)
		job_spaces_abandon(&held->next, 1);
	held->next_held = false;
	(void) service_send_detached(SERVICE_JOB_HOLD_END, held->gpu, held->id);
	held->ended = true;
}

/* An input on GPU process gpu, numbered id, of owner_pid's. */
static ServiceHeld *
held_make(int gpu, uint32 id, int owner_pid, Size host_bytes, double expected_bytes)
{
	ServiceHeld *held = palloc0(sizeof(ServiceHeld));

	held->gpu = gpu;
	held->id = id;
	held->owner_pid = owner_pid;
	held->budget = host_bytes;
	held->expected = expected_bytes;
	held->room = gpu_stage_chunk_bytes(host_bytes);
	return held;
}

static struct SortStage *
held_begin(Size host_bytes, double expected_bytes, char **why)
{
	ServiceHeld *held;
	int			gpu = roomiest_gpu();
	uint32		id;

	if (gpu < 0)
	{
		*why = "the GPU service is not ready";
		return NULL;
	}
	do
		id = pg_atomic_add_fetch_u32(&service->next_held_id, 1);
	while (id == 0);
	held = held_make(gpu, id, MyProcPid, host_bytes, expected_bytes);
	held->cleanup.func = let_go;
	held->cleanup.arg = held;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &held->cleanup);
	return (struct SortStage *) held;
}

/* The share: the GPU process, the input's number, its owner, its size. */
static struct SortStage *
held_begin_shared(Size host_bytes, double expected_bytes, StageShare *share,
				  char **why)
{
	ServiceHeld *held = (ServiceHeld *) held_begin(host_bytes, expected_bytes, why);

	if (held == NULL)
		return NULL;
	memset(share, 0, sizeof(StageShare));
	share->words[0] = held->gpu;
	share->words[1] = held->id;
	share->words[2] = held->owner_pid;
	memcpy(&share->words[3], &expected_bytes, sizeof(double));
	return (struct SortStage *) held;
}

static struct SortStage *
held_join(Size host_bytes, const StageShare *share, char **why)
{
	ServiceHeld *held;
	double		expected;

	memcpy(&expected, &share->words[3], sizeof(double));
	held = held_make((int) share->words[0], (uint32) share->words[1],
					 (int) share->words[2], host_bytes, expected);
	held->joined = true;
	return (struct SortStage *) held;
}

/* Fills a claimed slot with a job on the held rows. */
static void
set_job(ServiceHeld *held, JobSpace *space, ServiceJobKind kind, uint32 nrows,
		int nwords, Size bytes)
{
	ServiceSlot *slot = space->slot;

	slot->kind = kind;
	slot->nkeys = nwords;
	slot->target_gpu = held->gpu;
	slot->held_id = held->id;
	slot->held_owner = held->owner_pid;
	slot->held_budget = held->budget;
	slot->held_expected = held->expected;
	slot->held_bytes = bytes;
	slot->nrows = nrows;
	space->row_keys = nrows;
}

/* Runs a prepared job on the held rows to its end: true, or false with why. */
static bool
run_job(ServiceHeld *held, JobSpace *space, ServiceJobKind kind, uint32 nrows,
		int nwords, Size bytes, char **why)
{
	bool		ok;

	set_job(held, space, kind, nrows, nwords, bytes);
	ok = job_spaces_run(space, 1, why);
	job_space_end(space);
	return ok;
}

static bool
held_add(struct SortStage *stage, const StoredRows *rows, char **why)
{
	ServiceHeld *held = (ServiceHeld *) stage;
	uint32		n = rows->nrows;
	Size	   *block_places = palloc(sizeof(Size) * Max(rows->nblocks, 1));
	Size		bytes = stored_rows_block_places(rows, 0, block_places);
	Size		keys;
	Size		places;
	Size		lengths;
	JobSpace	space;
	int			block = 0;

	if (!job_space_prepare(service_held_layout(n, rows->nwords, bytes, &keys,
											   &places, &lengths),
						   &space, why))
		return false;
	PG_TRY();
	{
		for (int b = 0; b < rows->nblocks; b++)
			memcpy(space.base + block_places[b], rows->block_start[b],
				   rows->block_used[b]);
		if (n > 0)
		{
			for (int w = 0; w < rows->nwords; w++)
				parallel_copy(space.base + keys + (Size) w * n * sizeof(uint64),
							  rows->keys[w], sizeof(uint64) * n);
			stored_rows_places(rows, block_places, 0, n, &block,
							 (uint64 *) (space.base + places),
							 (uint32 *) (space.base + lengths));
		}
	}
	PG_CATCH();
	{
		job_spaces_abandon(&space, 1);
		PG_RE_THROW();
	}
	PG_END_TRY();
	pfree(block_places);
	return run_job(held, &space, SERVICE_JOB_HOLD_ADD, n, rows->nwords, bytes, why);
}

static bool
held_sort(struct SortStage *stage, char **why)
{
	JobSpace	space;

	Assert(!((ServiceHeld *) stage)->joined);

	if (!job_space_prepare(0, &space, why))
		return false;
	return run_job((ServiceHeld *) stage, &space, SERVICE_JOB_HOLD_SORT, 0, 0, 0, why);
}

static int64
held_next(struct SortStage *stage, char **rows, char **why)
{
	ServiceHeld *held = (ServiceHeld *) stage;

	Assert(!held->joined);
	for (;;)
	{
		ServiceSlot *slot;

		if (!held->next_held)
		{
			if (!job_space_prepare(held->room, &held->next, why))
				return -1;
			held->next_held = true;
		}
		slot = held->next.slot;
		set_job(held, &held->next, SERVICE_JOB_HOLD_NEXT, 0, 0, held->room);
		if (!job_spaces_run(&held->next, 1, why))
			break;
		if (slot->held_rows > 0)
		{
			*rows = held->next.base;
			return slot->held_rows;
		}
		job_space_end(&held->next);
		held->next_held = false;
		if (slot->held_need == 0)
			return 0;
		/* a row larger than the room: more room */
		held->room = slot->held_need;
	}
	job_space_end(&held->next);
	held->next_held = false;
	return -1;
}

static void
held_end(struct SortStage *stage)
{
	ServiceHeld *held = (ServiceHeld *) stage;

	if (held->next_held)
		job_space_end(&held->next);
	held->next_held = false;
	if (!held->joined)
		let_go(held);
}

const RowStager service_stager = {
	.begin = held_begin,
	.add = held_add,
	.sort = held_sort,
	.next = held_next,
	.end = held_end,
	.begin_shared = held_begin_shared,
	.join = held_join,
};

#endif							/* GPUSORT_WITH_CUDA */
