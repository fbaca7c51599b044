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
 * An input's part is made on its GPU process before its first store goes
 * there (make_part).  Where the room that other inputs keep there leaves
 * none for the rows this one is expected to take, though alone they would
 * fit (the GPU process declines it as busy), the backend waits its turn
 * and tries again as the others end (wait_for_room): sorts that together
 * outgrow the GPU's memory then run one after another on it, rather than
 * the later ones in sorted runs on disk.  So does a store that the others'
 * room keeps out of an input that holds more than it was expected to.  A
 * participant of a parallel query that waits to make its part tries again
 * now and then: another participant may have made the input meanwhile,
 * which its job then finds (it must not wait for that input's own room).
 * A part that declines a store for want of room beside no other input, or
 * that waited for gpusort.service_wait while the GPU process ran no job,
 * takes no more.
 *
 * The participants of a parallel query may add to one input
 * (held_begin_shared, held_join): the leader's, which it sorts and reads
 * once they all have added theirs, and which lives as long as the leader
 * (the GPU process drops it when the leader is gone, not its workers).
 *
 * On a service of several GPU processes, an input that one of them has no
 * room for is held in parts, one on each of as many as have room for it
 * (gpusort.held_gpus may set how many): the stores are dealt to them in
 * turn, each part is sorted at once on its own GPU, and the node merges the
 * parts' rows as it returns them (RowStager.parts).  The parts share the
 * input's number, each on its own process, and are made with the input,
 * so that every part exists, empty or not, when the owner sorts.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef GPUSORT_WITH_CUDA

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "gpu/engine_gpu.h"
#include "service/job_space.h"
#include "service/stager.h"
#include "settings.h"
#include "util/parallel.h"

/* How often a part waiting for room looks again, in milliseconds. */
#define ROOM_POLL_MS		20

/*
 * How long a store of an input already held waits while the GPU process
 * runs no job (at most gpusort.service_wait): such inputs hold device
 * memory as they wait, and two of them may be waiting on each other.
 */
#define MIDWAY_IDLE_MS		1000

/*
 * How often a participant of a shared input waiting for room tries again
 * to make its part, in milliseconds: another participant may have made it.
 */
#define SHARED_RETRY_MS		100

/* Why a job on held rows did not run: failed, or declined for room. */
typedef enum HeldRefusal
{
	HELD_FAILED,
	HELD_NO_ROOM,				/* the GPU process has no room for them */
	HELD_BUSY					/* a new input: others keep the room */
} HeldRefusal;

/* One part of an input: the rows that one GPU process holds. */
typedef struct HeldPart
{
	int			gpu;			/* the GPU process that holds them */
	bool		made;			/* its input exists on the GPU process */
	bool		full;			/* it declined a store: add no more here */
	Size		room;			/* bytes the rows handed back may take */
	JobSpace	next[2];		/* those rows, in turn: the ones the node
								 * reads, and the next, while next_held */
	bool		next_held[2];
	int			reading;		/* which of next[] the node reads */
	bool		ahead;			/* the other's job is queued */
	int64		read_from;		/* the place of the first row the next job
								 * hands back */
	int64		rows;			/* once sorted: the rows it holds */
	double		sort_ms;		/* and what its sort took there */
} HeldPart;

typedef struct ServiceHeld
{
	uint32		id;				/* the input's number on each process */
	int			owner_pid;		/* the backend that sorts and reads them */
	bool		joined;			/* another's input: only adds to it */
	bool		shared;			/* the participants of a parallel query add
								 * to it */
	Size		budget;			/* the node's memory budget */
	double		expected;		/* bytes each part's rows are expected to
								 * take (expect_from_store) */
	double		expected_rows;	/* rows each part is expected to hold */
	int			nparts;
	uint32		deal;			/* the part that takes the next store, modulo
								 * nparts */
	HeldPart	parts[SERVICE_MAX_GPUS];
	bool		ended;
	MemoryContextCallback cleanup;
} ServiceHeld;

/*
 * The GPU processes that hold an input's parts, into gpus[], the roomiest
 * first; how many: max_parts of the ready ones, or where max_parts is 0, as
 * few as have room for the rows expected (expected_bytes, 0: not known),
 * each for its share; one where even all of them have not (it declines the
 * rows, or takes them until it has no more room, as one process always
 * did: they are sorted in runs).
 */
static int
holding_gpus(int max_parts, double expected_bytes, int *gpus)
{
	int			n = (int) pg_atomic_read_u32(&service->ngpus);
	double		free_bytes[SERVICE_MAX_GPUS];
	int			nready = 0;

	for (int g = 0; g < n; g++)
	{
		ServiceGpu *gpu = &service->gpus[g];
		/* the room that a new input gets there (gpu_stage_begin) */
		double		f = (double) gpu->mem_limit - (double) gpu->mem_committed;
		int			i;

		if (pg_atomic_read_u32(&gpu->state) != GPU_READY)
			continue;
		/* by that room, the most first */
		i = nready++;
		for (; i > 0 && free_bytes[i - 1] < f; i--)
		{
			free_bytes[i] = free_bytes[i - 1];
			gpus[i] = gpus[i - 1];
		}
		free_bytes[i] = f;
		gpus[i] = g;
	}
	if (max_parts > 0)
		return Min(nready, max_parts);
	for (int k = 1; k <= nready; k++)
		if (GPU_STAGE_DEVICE_FACTOR * expected_bytes / k <= free_bytes[k - 1])
			return k;
	return Min(nready, 1);
}

/* Lets the rows go, if that was not done: the node's memory goes. */
static void
let_go(void *arg)
{
	ServiceHeld *held = arg;

	if (held->ended)
		return;
	for (int p = 0; p < held->nparts; p++)
	{
		HeldPart   *part = &held->parts[p];

		for (int s = 0; s < 2; s++)
		{
			if (part->next_held[s])
				job_spaces_abandon(&part->next[s], 1);
			part->next_held[s] = false;
		}
		(void) service_send_detached(SERVICE_JOB_HOLD_END, part->gpu, held->id);
	}
	held->ended = true;
}

/*
 * An input numbered id, of owner_pid's, on the GPU processes gpus[], each
 * part expected to take part_bytes.
 */
static ServiceHeld *
held_make(const int *gpus, int nparts, uint32 id, int owner_pid, Size host_bytes,
		  double part_rows, double part_bytes)
{
	ServiceHeld *held = palloc0(sizeof(ServiceHeld));

	held->id = id;
	held->owner_pid = owner_pid;
	held->budget = host_bytes;
	held->expected_rows = part_rows;
	held->expected = part_bytes;
	held->nparts = nparts;
	for (int p = 0; p < nparts; p++)
	{
		held->parts[p].gpu = gpus[p];
		held->parts[p].room = gpu_stage_chunk_bytes(host_bytes);
	}
	/* the participants of a parallel query start their deals apart */
	held->deal = (uint32) MyProcPid;
	return held;
}

/* Fills a claimed slot with a job on a part of the held rows. */
static void
set_job(ServiceHeld *held, HeldPart *part, JobSpace *space, ServiceJobKind kind,
		uint32 nrows, int nwords, Size bytes)
{
	ServiceSlot *slot = space->slot;

	slot->kind = kind;
	slot->nkeys = nwords;
	slot->target_gpu = part->gpu;
	slot->held_id = held->id;
	slot->held_owner = held->owner_pid;
	slot->held_budget = held->budget;
	slot->held_expected = held->expected;
	slot->held_bytes = bytes;
	slot->held_from = part->read_from;
	slot->nrows = nrows;
	space->row_keys = nrows;
}

/*
 * Runs a prepared job on a part to its end: true, or false with why and
 * (where refusal is not NULL) why not.
 */
static bool
run_job(ServiceHeld *held, HeldPart *part, JobSpace *space, ServiceJobKind kind,
		uint32 nrows, int nwords, Size bytes, HeldRefusal *refusal, char **why)
{
	bool		ok;

	set_job(held, part, space, kind, nrows, nwords, bytes);
	ok = job_spaces_run(space, 1, why);
	if (refusal)
		*refusal = !space->slot->declined ? HELD_FAILED :
			space->slot->busy ? HELD_BUSY : HELD_NO_ROOM;
	job_space_end(space);
	return ok;
}

/*
 * Might the part's GPU process take a new input of the bytes expected,
 * beside the room it keeps for the others (as gpu_stage_begin judges)?
 */
static bool
room_for(ServiceHeld *held, HeldPart *part)
{
	ServiceGpu *gpu = &service->gpus[part->gpu];

	return (double) gpu->mem_committed + gpu_stage_room(held->expected, gpu->mem_limit) <=
		(double) gpu->mem_limit;
}

/*
 * A backend's wait for room on a part's GPU process, across its tries: the
 * GPU process's count of jobs on held rows when it last changed, and since
 * when it has not.
 */
typedef struct RoomWait
{
	uint64		held_jobs;
	TimestampTz idle_since;
	int			idle_ms;		/* how long it may stay unchanged */
} RoomWait;

static void
room_wait_start(RoomWait *wait, HeldPart *part)
{
	wait->held_jobs = pg_atomic_read_u64(&service->gpus[part->gpu].held_jobs);
	wait->idle_since = GetCurrentTimestamp();
	wait->idle_ms = part->made ? Min(gpusort_service_wait, MIDWAY_IDLE_MS) :
		gpusort_service_wait;
}

/*
 * Waits for room on the part's GPU process, where the room that other
 * inputs keep there left a job of this one out (it would fit alone): until
 * an input not yet made there might be (room_for), or, for one made, until
 * the room kept there falls; a participant of a shared input not made
 * here waits at most SHARED_RETRY_MS, since another may have made it
 * meanwhile (its job then finds the input there).  True then; false once
 * the GPU process has run no job on held rows for gpusort.service_wait
 * (for one made, MIDWAY_IDLE_MS) since room_wait_start.  So sorts that
 * together outgrow the GPU's memory take it one after another however long
 * the ones ahead take, while rows that no one sorts (a cursor left open)
 * keep a sort waiting no longer than the setting.
 */
static bool
wait_for_room(ServiceHeld *held, HeldPart *part, RoomWait *wait)
{
	ServiceGpu *gpu = &service->gpus[part->gpu];
	Size		committed = gpu->mem_committed;
	TimestampTz start = GetCurrentTimestamp();

	if (wait->idle_ms == 0)
		return false;
	for (;;)
	{
		uint64		now_held_jobs;
		TimestampTz now;

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 ROOM_POLL_MS, compat_service_wait_event());
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (part->made ? gpu->mem_committed < committed : room_for(held, part))
			return true;
		now = GetCurrentTimestamp();
		now_held_jobs = pg_atomic_read_u64(&gpu->held_jobs);
		if (now_held_jobs != wait->held_jobs)
		{
			wait->held_jobs = now_held_jobs;
			wait->idle_since = now;
		}
		else if (TimestampDifferenceExceeds(wait->idle_since, now, wait->idle_ms))
			return false;
		if (held->shared && !part->made &&
			TimestampDifferenceExceeds(start, now, SHARED_RETRY_MS))
			return true;
	}
}

/*
 * Makes the part's input on its GPU process, empty, keeping room there for
 * the rows expected; where the room that other inputs keep leaves too
 * little, waits for it (wait_for_room).  False, with why and *refusal,
 * where it is not made.
 */
static bool
make_part(ServiceHeld *held, HeldPart *part, HeldRefusal *refusal, char **why)
{
	RoomWait	wait;

	room_wait_start(&wait, part);
	for (;;)
	{
		JobSpace	space;

		if (!job_space_prepare(0, &space, why))
		{
			*refusal = HELD_FAILED;
			return false;
		}
		if (run_job(held, part, &space, SERVICE_JOB_HOLD_ADD, 0, 1, 0, refusal, why))
		{
			part->made = true;
			return true;
		}
		if (*refusal != HELD_BUSY || !wait_for_room(held, part, &wait))
			return false;
	}
}

/*
 * Makes each part's input on its GPU process, empty, keeping room there for
 * its share of the rows expected: the parts that cannot are left out.
 */
static bool
make_parts(ServiceHeld *held, char **why)
{
	int			kept = 0;

	for (int p = 0; p < held->nparts; p++)
	{
		JobSpace	space;

		if (!job_space_prepare(0, &space, why))
			return false;
		if (run_job(held, &held->parts[p], &space, SERVICE_JOB_HOLD_ADD, 0, 1, 0,
					NULL, why))
		{
			held->parts[p].made = true;
			held->parts[kept++] = held->parts[p];
		}
	}
	if (kept == 0)
		return false;
	held->nparts = kept;
	return true;
}

static struct SortStage *
held_begin(Size host_bytes, double expected_rows, double expected_bytes, int max_parts,
		   char **why)
{
	ServiceHeld *held;
	int			gpus[SERVICE_MAX_GPUS];
	int			nparts = holding_gpus(max_parts, expected_bytes, gpus);
	uint32		id;

	if (nparts == 0)
	{
		*why = "the GPU service is not ready";
		return NULL;
	}
	do
		id = pg_atomic_add_fetch_u32(&service->next_held_id, 1);
	while (id == 0);
	held = held_make(gpus, nparts, id, MyProcPid, host_bytes, expected_rows / nparts,
					 expected_bytes / nparts);
	held->cleanup.func = let_go;
	held->cleanup.arg = held;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &held->cleanup);
	if (nparts > 1 && !make_parts(held, why))
	{
		let_go(held);
		return NULL;
	}
	return (struct SortStage *) held;
}

/*
 * The share: the GPU processes of the parts (a bit each), the input's
 * number, its owner, each part's expected size and rows.
 */
static struct SortStage *
held_begin_shared(Size host_bytes, double expected_rows, double expected_bytes,
				  int max_parts, StageShare *share, char **why)
{
	ServiceHeld *held = (ServiceHeld *) held_begin(host_bytes, expected_rows,
												   expected_bytes, max_parts, why);

	if (held == NULL)
		return NULL;
	held->shared = true;
	StaticAssertStmt(SERVICE_MAX_GPUS <= 64, "a bit a GPU process");
	memset(share, 0, sizeof(StageShare));
	for (int p = 0; p < held->nparts; p++)
		share->words[0] |= UINT64CONST(1) << held->parts[p].gpu;
	share->words[1] = held->id;
	share->words[2] = held->owner_pid;
	memcpy(&share->words[3], &held->expected, sizeof(double));
	memcpy(&share->words[4], &held->expected_rows, sizeof(double));
	return (struct SortStage *) held;
}

static struct SortStage *
held_join(Size host_bytes, const StageShare *share, char **why)
{
	ServiceHeld *held;
	int			gpus[SERVICE_MAX_GPUS];
	int			nparts = 0;
	double		expected;
	double		expected_rows;

	for (int g = 0; g < SERVICE_MAX_GPUS; g++)
		if (share->words[0] & (UINT64CONST(1) << g))
			gpus[nparts++] = g;
	memcpy(&expected, &share->words[3], sizeof(double));
	memcpy(&expected_rows, &share->words[4], sizeof(double));
	held = held_make(gpus, nparts, (uint32) share->words[1], (int) share->words[2],
					 host_bytes, expected_rows, expected);
	held->joined = true;
	held->shared = true;
	return (struct SortStage *) held;
}

/*
 * The bytes that a part's rows are expected to take on its GPU process,
 * judged anew from a first store's: their tuples, keys, places and lengths
 * per row, times the rows expected.  The planner's bytes are for the host,
 * where a row takes more, and from its estimate of the rows' width, which
 * may be far from theirs (whole rows of TPC-H's lineitem under a count:
 * 382 bytes planned).  Kept where the rows expected are not known.
 */
static void
expect_from_store(ServiceHeld *held, const StoredRows *rows)
{
	Size		tuples = 0;

	if (held->expected_rows <= 0 || rows->nrows == 0)
		return;
	for (int b = 0; b < rows->nblocks; b++)
		tuples += rows->block_used[b];
	held->expected = held->expected_rows *
		((double) tuples / rows->nrows + gpu_stage_row_bytes(rows->nwords));
}

/* Lays a full store out flat in a job's memory (service_held_layout). */
static bool
store_job(const StoredRows *rows, JobSpace *space, Size *bytes, char **why)
{
	uint32		n = rows->nrows;
	Size	   *block_places = palloc(sizeof(Size) * Max(rows->nblocks, 1));
	Size		keys;
	Size		places;
	Size		lengths;
	int			block = 0;

	*bytes = stored_rows_block_places(rows, 0, block_places);
	if (!job_space_prepare(service_held_layout(n, rows->nwords, *bytes, &keys,
											   &places, &lengths),
						   space, why))
		return false;
	PG_TRY();
	{
		for (int b = 0; b < rows->nblocks; b++)
			memcpy(space->base + block_places[b], rows->block_start[b],
				   rows->block_used[b]);
		if (n > 0)
		{
			for (int w = 0; w < rows->nwords; w++)
				parallel_copy(space->base + keys + (Size) w * n * sizeof(uint64),
							  rows->keys[w], sizeof(uint64) * n);
			stored_rows_places(rows, block_places, 0, n, &block,
							   (uint64 *) (space->base + places),
							   (uint32 *) (space->base + lengths));
		}
	}
	PG_CATCH();
	{
		job_spaces_abandon(space, 1);
		PG_RE_THROW();
	}
	PG_END_TRY();
	pfree(block_places);
	return true;
}

/*
 * Hands the store to the next part in turn; a part that declines it for
 * want of room takes no more, and the next tries.
 */
static bool
held_add(struct SortStage *stage, const StoredRows *rows, char **why)
{
	ServiceHeld *held = (ServiceHeld *) stage;

	for (int tries = 0; tries < held->nparts; tries++)
	{
		HeldPart   *part = &held->parts[held->deal++ % held->nparts];
		JobSpace	space;
		Size		bytes;
		HeldRefusal refusal;

		if (part->full)
			continue;
		if (!part->made)
			expect_from_store(held, rows);
		if (part->made || make_part(held, part, &refusal, why))
		{
			RoomWait	wait;

			room_wait_start(&wait, part);
			for (;;)
			{
				if (!store_job(rows, &space, &bytes, why))
					return false;
				if (run_job(held, part, &space, SERVICE_JOB_HOLD_ADD, rows->nrows,
							rows->nwords, bytes, &refusal, why))
					return true;

				/*
				 * Kept out by the room of other inputs alone: one part waits
				 * for them to end (parts on several GPUs hand the store on)
				 */
				if (refusal != HELD_BUSY || held->nparts > 1 ||
					!wait_for_room(held, part, &wait))
					break;
			}
		}
		if (refusal == HELD_FAILED)
			return false;
		part->full = true;
		service_count_fallback(SERVICE_FALLBACK_NO_ROOM);
	}
	return false;
}

/*
 * Sorts every part at once, each on its GPU process (under a Unique, each
 * keeps the first row of its own groups: the node's filter drops the
 * others of a group that parts share).
 */
static bool
held_sort(struct SortStage *stage, int group_words, int64 *rows, char **why)
{
	ServiceHeld *held = (ServiceHeld *) stage;
	JobSpace	spaces[SERVICE_MAX_GPUS];
	int			nspaces = 0;
	bool		ok;

	Assert(!held->joined);
	for (; nspaces < held->nparts; nspaces++)
	{
		if (!job_space_prepare(0, &spaces[nspaces], why))
		{
			for (int i = 0; i < nspaces; i++)
				job_space_end(&spaces[i]);
			return false;
		}
		set_job(held, &held->parts[nspaces], &spaces[nspaces],
				SERVICE_JOB_HOLD_SORT, 0, 0, 0);
		spaces[nspaces].slot->held_group_words = group_words;
	}
	ok = job_spaces_run(spaces, nspaces, why);
	*rows = 0;
	for (int i = 0; i < nspaces; i++)
	{
		held->parts[i].rows = spaces[i].slot->held_rows;
		held->parts[i].sort_ms = spaces[i].slot->run_ms;
		*rows += held->parts[i].rows;
		job_space_end(&spaces[i]);
	}
	return ok;
}

/* Ends the spaces of a part's rows handed back, and its job queued ahead. */
static void
end_next(HeldPart *part)
{
	for (int s = 0; s < 2; s++)
	{
		if (part->next_held[s])
			job_space_end(&part->next[s]);
		part->next_held[s] = false;
	}
	part->ahead = false;
}

/*
 * Readies next[s] with the job that hands the part's next rows back, made
 * first where it is not (only in the service's buffer, if pooled): false,
 * with why unless pooled, where it cannot be.
 */
static bool
next_job(ServiceHeld *held, HeldPart *part, int s, bool pooled, char **why)
{
	if (!part->next_held[s])
	{
		if (pooled ? !job_space_prepare_pooled(part->room, &part->next[s]) :
			!job_space_prepare(part->room, &part->next[s], why))
			return false;
		part->next_held[s] = true;
	}
	set_job(held, part, &part->next[s], SERVICE_JOB_HOLD_NEXT, 0, 0, part->room);
	return true;
}

/*
 * While the node reads the rows of next[reading], the GPU process hands
 * the next ones back into the other space: queued here, waited for by the
 * next held_next.  Where no slot or chunks of the service's buffer are
 * free for a second space (many sessions at once), the next rows come when
 * asked, as with one, rather than in a segment of their own.
 */
static void
queue_ahead(ServiceHeld *held, HeldPart *part)
{
	int			s = 1 - part->reading;

	if (!next_job(held, part, s, true, NULL))
		return;
	job_spaces_queue(&part->next[s], 1);
	part->ahead = true;
}

/*
 * The next rows of part p in order, at *rows: their number, 0 after the
 * last, -1 with why.  One job at a time is on each part's rows, so that
 * they come back in order.  Any participant of a shared input may read it,
 * once the owner has sorted it, from where it sought (held_seek).
 */
static int64
held_next(struct SortStage *stage, int p, char **rows, char **why)
{
	ServiceHeld *held = (ServiceHeld *) stage;
	HeldPart   *part = &held->parts[p];

	Assert(p < held->nparts);
	for (;;)
	{
		ServiceSlot *slot;
		int			s = part->ahead ? 1 - part->reading : part->reading;
		bool		ok;
		Size		need;

		if (part->ahead)
		{
			part->ahead = false;
			ok = job_spaces_finish(&part->next[s], 1, why);
		}
		else
		{
			if (!next_job(held, part, s, false, why))
				return -1;
			ok = job_spaces_run(&part->next[s], 1, why);
		}
		if (!ok)
			break;
		slot = part->next[s].slot;
		if (slot->held_rows > 0)
		{
			part->read_from += slot->held_rows;
			part->reading = s;
			queue_ahead(held, part);
			*rows = part->next[s].base;
			return slot->held_rows;
		}
		need = slot->held_need;	/* read before the slot goes */
		end_next(part);
		if (need == 0)
			return 0;
		/* a row larger than the room: more room, both spaces made anew */
		part->room = need;
	}
	end_next(part);
	return -1;
}

/*
 * The next rows of part p handed back are those from the row-th in order
 * (from 0); a job queued ahead is let finish and its rows dropped.
 */
static bool
held_seek(struct SortStage *stage, int p, int64 row, char **why)
{
	ServiceHeld *held = (ServiceHeld *) stage;
	HeldPart   *part = &held->parts[p];
	char	   *ignored = NULL;

	Assert(p < held->nparts);
	if (part->ahead)
		(void) job_spaces_finish(&part->next[1 - part->reading], 1, &ignored);
	end_next(part);
	part->read_from = row;
	return true;
}

/* Several parts: each one's GPU process, rows and sort time. */
static int
held_parts(struct SortStage *stage, char **note)
{
	ServiceHeld *held = (ServiceHeld *) stage;
	StringInfoData buf;

	if (note)
		*note = NULL;
	if (held->nparts == 1 || note == NULL)
		return held->nparts;
	initStringInfo(&buf);
	appendStringInfo(&buf, "rows held on %d GPU processes, merged", held->nparts);
	for (int p = 0; p < held->nparts; p++)
		appendStringInfo(&buf, "; GPU %d: %lld rows, sorted in %.1f ms",
						 held->parts[p].gpu, (long long) held->parts[p].rows,
						 held->parts[p].sort_ms);
	*note = buf.data;
	return held->nparts;
}

static void
held_end(struct SortStage *stage)
{
	ServiceHeld *held = (ServiceHeld *) stage;

	for (int p = 0; p < held->nparts; p++)
		end_next(&held->parts[p]);
	if (!held->joined)
		let_go(held);
}

const RowStager service_stager = {
	.begin = held_begin,
	.add = held_add,
	.sort = held_sort,
	.next = held_next,
	.seek = held_seek,
	.parts = held_parts,
	.end = held_end,
	.begin_shared = held_begin_shared,
	.join = held_join,
};

#endif							/* GPUSORT_WITH_CUDA */
