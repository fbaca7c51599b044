/*-------------------------------------------------------------------------
 *
 * job_space.c
 *	  A backend's jobs in the GPU service (job_space.h): each is copied
 *	  into chunks of the service's buffer (or, where it has no room, an
 *	  object of the backend's own, shm_objects.h), queued in a slot, and
 *	  waited for on the backend's latch, which the GPU process sets with
 *	  SIGUSR1 and which keeps answering cancels and statement_timeout
 *	  (service_shared.h has the protocol).  Backends alone run this file.
 *
 * The backend remembers the slots it holds, so that an error, a cancel or
 * its exit gives them up.  The buffer's chunks are taken under an LWLock
 * (a scan of up to POOL_MAX_CHUNKS owners: too long for a spinlock).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef GPUSORT_WITH_CUDA

#include <sys/mman.h>

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"

#include "compat.h"
#include "service/job_space.h"
#include "util/timing.h"

/* How long queued jobs wait for a GPU process when none is ready. */
#define DOWN_WAIT_MS		2000

/* The latch's timeout, for the checks of jobs that wait. */
#define POLL_MS				100

/* The slots of this backend's jobs, for an error or its exit meanwhile. */
static ServiceSlot *held_slot[SERVICE_MAX_HELD];
static uint32 held_word[SERVICE_MAX_HELD];
static int	nheld = 0;
static bool exit_callback = false;

/* The service's buffer, mapped in this backend, or NULL. */
static char *pool_base = NULL;

void
service_count_fallback(ServiceFallback reason)
{
	pg_atomic_fetch_add_u64(&service->fallbacks[reason], 1);
}

/*
 * Gives up on a job: the slot is released now if no GPU process runs it,
 * else by whoever ends it (service_shared.h).
 */
static void
abandon(ServiceSlot *slot, uint32 word)
{
	slot->cancel = 1;
	pg_atomic_write_u32(&slot->abandoned, 1);
	pg_memory_barrier();
	if (service_slot_release(slot, SLOT_WORD(word, SLOT_FILLING)))
		return;
	if (service_slot_release(slot, SLOT_WORD(word, SLOT_QUEUED)))
	{
		pg_atomic_fetch_sub_u32(&service->queued_jobs, 1);
		pg_atomic_fetch_sub_u64(&service->queued_row_keys, slot->row_keys);
		return;
	}
	(void) service_slot_release(slot, SLOT_WORD(word, SLOT_DONE));
}

static void
give_up_all(void)
{
	for (int i = 0; i < nheld; i++)
		abandon(held_slot[i], held_word[i]);
	nheld = 0;
}

static void
give_up_at_exit(int code, Datum arg)
{
	give_up_all();
}

/* Forgets a slot that is no longer this backend's; false if it was not. */
static bool
forget_held(ServiceSlot *slot)
{
	for (int i = 0; i < nheld; i++)
		if (held_slot[i] == slot)
		{
			nheld--;
			held_slot[i] = held_slot[nheld];
			held_word[i] = held_word[nheld];
			return true;
		}
	return false;
}

/* A free slot, now this backend's (FILLING), or NULL if all are taken. */
static ServiceSlot *
claim_slot(uint32 *word, int *slotno)
{
	int			start = MyProcPid % SERVICE_SLOTS;

	for (int i = 0; i < SERVICE_SLOTS; i++)
	{
		ServiceSlot *slot = &service->slots[(start + i) % SERVICE_SLOTS];
		uint32		w = pg_atomic_read_u32(&slot->state);

		if (SLOT_STATE(w) == SLOT_FREE &&
			pg_atomic_compare_exchange_u32(&slot->state, &w, SLOT_WORD(w, SLOT_FILLING)))
		{
			*word = SLOT_WORD(w, SLOT_FILLING);
			*slotno = (start + i) % SERVICE_SLOTS;
			pg_atomic_write_u32(&slot->abandoned, 0);
			slot->cancel = 0;
			slot->pool_count = 0;
			slot->target_gpu = -1;
			slot->owner_pid = MyProcPid;
			slot->held_rows = 0;
			slot->held_need = 0;
			slot->ok = false;
			slot->lost = false;
			slot->payload_sorted = false;
			slot->keys_sorted = false;
			slot->wait_ms = 0;
			slot->run_ms = 0;
			slot->why[0] = '\0';
			return slot;
		}
	}
	return NULL;
}

/*
 * Maps the service's buffer into this backend, once it is ready, for the
 * backend's life.
 */
static char *
map_pool(void)
{
	char		name[SHM_OBJECT_NAME_LEN];
	void	   *p;

	if (pool_base || !pg_atomic_read_u32(&service->pool_ready))
		return pool_base;
	pg_read_barrier();
	shm_object_name(name, "buffer");
	p = shm_object_map(name, (Size) service->pool_chunks * POOL_CHUNK, false);
	if (p == MAP_FAILED)
		return NULL;
	pool_base = p;
	return pool_base;
}

/* The first of need free chunks in a row, now owner's, or -1. */
static int
pool_alloc(uint32 owner, int need)
{
	int			run = 0;
	int			first = -1;

	LWLockAcquire(service_pool_lock, LW_EXCLUSIVE);
	for (int c = 0; c < service->pool_chunks; c++)
	{
		if (pg_atomic_read_u32(&service->chunk_owner[c]) != 0)
			run = 0;
		else if (++run == need)
		{
			first = c - need + 1;
			break;
		}
	}
	for (int c = 0; first >= 0 && c < need; c++)
		pg_atomic_write_u32(&service->chunk_owner[first + c], owner);
	LWLockRelease(service_pool_lock);
	return first;
}

/*
 * job_space_prepare, or with optional, only a slot and chunks of the buffer
 * that are free now: no segment of its own, and no fallback counted.
 */
static bool
prepare_space(Size bytes, JobSpace *space, bool optional, char **why)
{
	int			need = (int) ((bytes + POOL_CHUNK - 1) / POOL_CHUNK);
	ServiceSlot *slot;
	int			slotno;
	int			first;
	int			err = 0;

	Assert(!service_in_gpu_process);
	if (!exit_callback)
	{
		before_shmem_exit(give_up_at_exit, (Datum) 0);
		exit_callback = true;
	}
	if (nheld == SERVICE_MAX_HELD)
	{
		if (optional)
		{
			*why = "this backend holds as many jobs as it may";
			return false;
		}
		elog(ERROR, "gpusort: a backend holds at most %d jobs of the GPU service",
			 SERVICE_MAX_HELD);
	}
	space->slot = slot = claim_slot(&space->word, &slotno);
	if (slot == NULL)
	{
		*why = "every job slot of the GPU service is taken";
		if (!optional)
			service_count_fallback(SERVICE_FALLBACK_QUEUE_FULL);
		return false;
	}
	held_slot[nheld] = slot;
	held_word[nheld] = space->word;
	nheld++;

	space->seg = NULL;
	space->row_keys = 0;
	if (need <= service->pool_chunks && map_pool() &&
		(first = pool_alloc(slotno + 1, Max(need, 1))) >= 0)
	{
		slot->pool_first = first;
		slot->pool_count = Max(need, 1);
		space->base = pool_base + (Size) first * POOL_CHUNK;
		return true;
	}
	if (optional)
	{
		job_space_end(space);
		*why = "no free chunks of the GPU service's buffer";
		return false;
	}
	/* a sort must not fail for want of a GPU */
	if (service_room_for_segment(bytes) &&
		(space->seg = job_segment_create(Max(bytes, 1))) == NULL)
		err = errno;
	if (space->seg == NULL)
	{
		*why = psprintf("no room for %zu MB of shared memory for the GPU service%s%s",
						bytes >> 20, err ? ": " : "", err ? strerror(err) : "");
		job_space_end(space);
		service_count_fallback(SERVICE_FALLBACK_NO_SEGMENT);
		return false;
	}
	strlcpy(slot->segment, space->seg->name, sizeof(slot->segment));
	slot->segment_bytes = space->seg->bytes;
	space->base = space->seg->base;
	return true;
}

bool
job_space_prepare(Size bytes, JobSpace *space, char **why)
{
	return prepare_space(bytes, space, false, why);
}

bool
job_space_prepare_pooled(Size bytes, JobSpace *space)
{
	char	   *why_not;

	return prepare_space(bytes, space, true, &why_not);
}

/* Hands a filled job to the GPU processes. */
static void
queue_job(JobSpace *space)
{
	ServiceSlot *slot = space->slot;

	slot->row_keys = space->row_keys;
	slot->ticket = pg_atomic_fetch_add_u64(&service->next_ticket, 1);
	INSTR_TIME_SET_CURRENT(slot->queued_at);
	pg_atomic_fetch_add_u32(&service->queued_jobs, 1);
	pg_atomic_fetch_add_u64(&service->queued_row_keys, space->row_keys);
	pg_write_barrier();
	pg_atomic_write_u32(&slot->state, SLOT_WORD(space->word, SLOT_QUEUED));
	/*
	 * a job for one GPU process wakes that one; any other job wakes them
	 * all, and the first free one takes it
	 */
	if (slot->target_gpu >= 0)
		(void) sem_post(&service->gpus[slot->target_gpu].wake);
	else
		for (int g = (int) pg_atomic_read_u32(&service->ngpus) - 1; g >= 0; g--)
			(void) sem_post(&service->gpus[g].wake);
}

/* Jobs of spaces[0..n) that are not DONE yet; *queued: whether one waits. */
static int
jobs_running(JobSpace *spaces, int n, bool *queued)
{
	int			left = 0;

	*queued = false;
	for (int i = 0; i < n; i++)
	{
		uint32		w = pg_atomic_read_u32(&spaces[i].slot->state);

		if (w != SLOT_WORD(spaces[i].word, SLOT_DONE))
			left++;
		if (w == SLOT_WORD(spaces[i].word, SLOT_QUEUED))
			*queued = true;
	}
	return left;
}

/* Waits for the jobs of spaces[0..n): false, with the reason, if down. */
static bool
wait_for_jobs(JobSpace *spaces, int n, char **why)
{
	instr_time	down_since;
	bool		down = false;
	bool		queued;

	while (jobs_running(spaces, n, &queued) > 0)
	{
		if (gpu_service_gpus_ready() > 0)
			down = false;
		else if (!down)
		{
			down = true;
			INSTR_TIME_SET_CURRENT(down_since);
		}
		else if (queued && ms_since(down_since) > DOWN_WAIT_MS)
		{
			*why = "the GPU service went down while the job waited";
			service_count_fallback(SERVICE_FALLBACK_DOWN);
			return false;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 POLL_MS, compat_service_wait_event());
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	pg_read_barrier();
	return true;
}

void
job_spaces_queue(JobSpace *spaces, int n)
{
	for (int i = 0; i < n; i++)
		queue_job(&spaces[i]);
}

bool
job_spaces_finish(JobSpace *spaces, int n, char **why)
{
	bool		done;

	PG_TRY();
	{
		done = wait_for_jobs(spaces, n, why);
	}
	PG_CATCH();
	{
		job_spaces_abandon(spaces, n);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (!done)
		return false;

	for (int i = 0; i < n; i++)
	{
		ServiceSlot *slot = spaces[i].slot;

		if (!slot->ok)
		{
			/* (rows declined for room are the caller's to count) */
			*why = pstrdup(slot->why);
			if (!slot->declined)
				service_count_fallback(slot->lost ? SERVICE_FALLBACK_LOST :
									   SERVICE_FALLBACK_FAILED);
			return false;
		}
	}
	return true;
}

bool
job_spaces_run(JobSpace *spaces, int n, char **why)
{
	job_spaces_queue(spaces, n);
	return job_spaces_finish(spaces, n, why);
}

void
job_spaces_abandon(JobSpace *spaces, int n)
{
	for (int i = 0; i < n; i++)
		if (forget_held(spaces[i].slot))
			abandon(spaces[i].slot, spaces[i].word);
}

bool
service_send_detached(ServiceJobKind kind, int gpu, uint32 held_id)
{
	JobSpace	space;
	int			slotno;

	space.slot = claim_slot(&space.word, &slotno);
	if (space.slot == NULL)
		return false;
	space.slot->kind = kind;
	space.slot->target_gpu = gpu;
	space.slot->held_id = held_id;
	space.slot->nrows = 0;
	space.row_keys = 0;
	/* whoever ends it frees the slot */
	pg_atomic_write_u32(&space.slot->abandoned, 1);
	queue_job(&space);
	return true;
}

void
job_space_end(JobSpace *space)
{
	job_spaces_abandon(space, 1);
	if (space->seg)
		job_segment_destroy(space->seg);
	space->seg = NULL;
}

#endif							/* GPUSORT_WITH_CUDA */
