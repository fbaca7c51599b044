/*-------------------------------------------------------------------------
 *
 * client.c
 *	  The backends' side of the GPU service: the chooser's GPU engine
 *	  (sort_job.h) when the service runs.  A job is copied into chunks of
 *	  the service's buffer (or, where it has no room, a dynamic shared memory
 *	  segment), queued in a slot, and waited for on the backend's latch,
 *	  which keeps answering cancels and statement_timeout; the result is
 *	  copied back (service_shared.h).
 *
 * A job goes to the service only when its queue leaves the GPU faster than
 * the CPU engine (admission, a choice that EXPLAIN shows), at the pace that
 * the GPUs and the backends' CPU sorts have lately shown, and it fits the
 * service's device memory.  A job the service fails, or loses with its GPU
 * process, is a fallback: the chooser sorts it on the CPU.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef GPUSORT_WITH_CUDA

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "storage/dsm_impl.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/memutils.h"

#include "compat.h"
#include "engine/cost.h"
#include "gpu/gpu_state.h"
#include "keys/key_codec.h"
#include "service/service_shared.h"
#include "util/parallel.h"
#include "util/timing.h"

/* How long a queued job waits for a GPU process when none is ready. */
#define DOWN_WAIT_MS		2000

/* The latch's timeout, for the checks of a job that waits. */
#define POLL_MS				100

static void
count_fallback(ServiceFallback reason)
{
	pg_atomic_fetch_add_u64(&service->fallbacks[reason], 1);
}

/* GPUs whose process takes jobs now. */
static int
gpus_ready(void)
{
	int			n = (int) pg_atomic_read_u32(&service->ngpus);
	int			ready = 0;

	for (int g = 0; g < n; g++)
		if (pg_atomic_read_u32(&service->gpus[g].state) == GPU_READY)
			ready++;
	return ready;
}

/* The fewest device bytes a GPU of the service may use, or 0: none known. */
static Size
service_mem_limit(void)
{
	int			n = (int) pg_atomic_read_u32(&service->ngpus);
	Size		limit = 0;

	for (int g = 0; g < n; g++)
	{
		Size		l = service->gpus[g].mem_limit;

		if (l > 0 && (limit == 0 || l < limit))
			limit = l;
	}
	return limit;
}

static bool
service_unavailable(const char **why)
{
	if (pg_atomic_read_u32(&service->probed) &&
		pg_atomic_read_u32(&service->ngpus) == 0)
	{
		if (why)
			*why = psprintf("no GPU: %s", service->gpus[0].reason);
		return true;
	}
	return false;
}

/* Backends start nothing: the service runs already. */
static bool
service_started(void)
{
	return true;
}

static double
service_startup_ms(void)
{
	return 0;
}

static bool
service_job_fits(uint32 nrows, int nkeys)
{
	Size		limit = service_mem_limit();

	return limit == 0 || gpu_job_device_bytes(nrows, nkeys) <= limit;
}

/*
 * Milliseconds of work ahead of a new job: what is queued and running,
 * shared by the GPUs that are ready, at the pace of their recent jobs.
 */
static double
queue_wait_ms(int ready)
{
	int			n = (int) pg_atomic_read_u32(&service->ngpus);
	double		row_keys = (double) pg_atomic_read_u64(&service->queued_row_keys);
	double		ns = 0;

	for (int g = 0; g < n; g++)
	{
		row_keys += (double) pg_atomic_read_u64(&service->gpus[g].running_row_keys);
		ns = Max(ns, service->gpus[g].ns_per_row_key);
	}
	return row_keys * ns / Max(ready, 1) / 1e6;
}

/*
 * A job the CPU engine ran, timed with the load of the moment: the pace
 * that the queue's wait is weighed against (a lost update of the average
 * costs nothing).
 */
static void
service_cpu_sorted(uint32 nrows, int nkeys, double ms)
{
	uint64		row_keys = (uint64) nrows * nkeys;

	if (row_keys >= TIMED_ROW_KEYS)
		service->cpu_ns_per_row_key =
			service_pace(service->cpu_ns_per_row_key, ms, row_keys);
}

/* What a job would take on the CPU engine now, by the model or as measured. */
static double
cpu_now_ms(uint32 nrows, int nkeys)
{
	double		measured = (double) nrows * nkeys * service->cpu_ns_per_row_key / 1e6;

	return Max(cpu_estimate_ms(nrows, nkeys), measured);
}

static bool
service_admits(uint32 nrows, int nkeys, char **why)
{
	int			ready = gpus_ready();
	double		wait_ms;

	/* no GPU at all: the job fails as it would in a backend's own engine */
	if (service_unavailable(NULL))
		return true;
	if (dynamic_shared_memory_type != DSM_IMPL_POSIX)
	{
		*why = "the GPU service needs dynamic_shared_memory_type = posix";
		count_fallback(SERVICE_FALLBACK_NO_SEGMENT);
		return false;
	}
	if (ready == 0)
	{
		*why = "the GPU service is not ready";
		count_fallback(SERVICE_FALLBACK_DOWN);
		return false;
	}
	wait_ms = queue_wait_ms(ready);
	if (wait_ms > 0 &&
		wait_ms + gpu_estimate_ms(nrows, nkeys) > cpu_now_ms(nrows, nkeys))
	{
		*why = psprintf("the GPU service is busy: about %.0f ms of jobs ahead", wait_ms);
		count_fallback(SERVICE_FALLBACK_BUSY);
		return false;
	}
	return true;
}

/*
 * A job's shared memory and its slot, while the job is this backend's:
 * chunks of the service's buffer, or a segment of its own.
 */
typedef struct JobSpace
{
	ServiceSlot *slot;
	uint32		word;			/* its state word when claimed (FILLING) */
	dsm_segment *seg;			/* NULL: chunks of the buffer */
	char	   *base;
} JobSpace;

/* The slot of this backend's job, for an error or its exit meanwhile. */
static ServiceSlot *held_slot = NULL;
static uint32 held_word;
static bool exit_callback = false;

/* The service's buffer, mapped in this backend, or NULL. */
static char *pool_base = NULL;

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

/* Gives up the job this backend holds, if any. */
static void
give_up_held(void)
{
	if (held_slot)
		abandon(held_slot, held_word);
	held_slot = NULL;
}

static void
give_up_at_exit(int code, Datum arg)
{
	give_up_held();
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
			slot->latch = MyLatch;
			slot->pool_count = 0;
			slot->ok = false;
			slot->lost = false;
			slot->payload_sorted = false;
			slot->keys_sorted = false;
			slot->why[0] = '\0';
			return slot;
		}
	}
	return NULL;
}

/* Maps the service's buffer into this backend, once it is ready. */
static char *
map_pool(void)
{
	Size		bytes = (Size) service->pool_chunks * POOL_CHUNK;
	void	   *p;
	int			fd;

	if (pool_base || !pg_atomic_read_u32(&service->pool_ready))
		return pool_base;
	fd = shm_open(service->pool_name, O_RDWR, 0);
	if (fd < 0)
		return NULL;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p != MAP_FAILED)
		pool_base = p;
	return pool_base;
}

/* The first of need free chunks in a row, now owner's, or -1. */
static int
pool_alloc(uint32 owner, int need)
{
	int			run = 0;
	int			first = -1;

	SpinLockAcquire(&service->pool_lock);
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
	SpinLockRelease(&service->pool_lock);
	return first;
}

/*
 * Is there room for a segment of bytes where PostgreSQL's posix segments
 * live?  dsm_create() raises an error where there is not, and a sort must
 * not fail for want of a GPU.
 */
static bool
room_for_segment(Size bytes)
{
	struct statvfs fs;

	if (statvfs("/dev/shm", &fs) != 0)
		return true;			/* not known: let dsm_create() tell */
	return (double) fs.f_bavail * fs.f_frsize > (double) bytes * 1.25;
}

/*
 * A slot and bytes of shared memory for a job, or false with the reason:
 * chunks of the buffer where it has room, else a segment.
 */
static bool
prepare_job(Size bytes, JobSpace *space, char **why)
{
	int			need = (int) ((bytes + POOL_CHUNK - 1) / POOL_CHUNK);
	ServiceSlot *slot;
	int			slotno;
	int			first;

	if (!exit_callback)
	{
		before_shmem_exit(give_up_at_exit, (Datum) 0);
		exit_callback = true;
	}
	space->slot = slot = claim_slot(&space->word, &slotno);
	if (slot == NULL)
	{
		*why = "every job slot of the GPU service is taken";
		count_fallback(SERVICE_FALLBACK_QUEUE_FULL);
		return false;
	}
	held_slot = slot;
	held_word = space->word;

	space->seg = NULL;
	if (need <= service->pool_chunks && map_pool() &&
		(first = pool_alloc(slotno + 1, Max(need, 1))) >= 0)
	{
		slot->pool_first = first;
		slot->pool_count = Max(need, 1);
		space->base = pool_base + (Size) first * POOL_CHUNK;
		return true;
	}
	if (room_for_segment(bytes))
		space->seg = dsm_create(Max(bytes, 1), DSM_CREATE_NULL_IF_MAXSEGMENTS);
	if (space->seg == NULL)
	{
		(void) service_slot_release(slot, space->word);
		held_slot = NULL;
		*why = psprintf("no room for %zu MB of shared memory for the GPU service",
						bytes >> 20);
		count_fallback(SERVICE_FALLBACK_NO_SEGMENT);
		return false;
	}
	slot->segment = dsm_segment_handle(space->seg);
	slot->segment_bytes = dsm_segment_map_length(space->seg);
	space->base = dsm_segment_address(space->seg);
	return true;
}

/*
 * Queues the job that a slot holds, and waits for it on the latch: true
 * when it is DONE, false when no GPU process was ready for DOWN_WAIT_MS
 * (the job is given up).  A cancel raises its error (the caller gives the
 * job up).
 */
static bool
queue_and_wait(JobSpace *space, uint64 row_keys)
{
	ServiceSlot *slot = space->slot;
	uint32		queued = SLOT_WORD(space->word, SLOT_QUEUED);
	uint32		done = SLOT_WORD(space->word, SLOT_DONE);
	instr_time	down_since;
	bool		down = false;

	slot->row_keys = row_keys;
	slot->ticket = pg_atomic_fetch_add_u64(&service->next_ticket, 1);
	pg_atomic_fetch_add_u32(&service->queued_jobs, 1);
	pg_atomic_fetch_add_u64(&service->queued_row_keys, row_keys);
	pg_write_barrier();
	pg_atomic_write_u32(&slot->state, queued);
	(void) sem_post(&service->wake);

	for (;;)
	{
		if (pg_atomic_read_u32(&slot->state) == done)
		{
			pg_read_barrier();
			return true;
		}
		if (gpus_ready() > 0)
			down = false;
		else if (!down)
		{
			down = true;
			INSTR_TIME_SET_CURRENT(down_since);
		}
		else if (ms_since(down_since) > DOWN_WAIT_MS &&
				 pg_atomic_read_u32(&slot->state) == queued)
			return false;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 POLL_MS, compat_service_wait_event());
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Runs the job that a prepared space holds: true when the space holds its
 * result (the slot still this backend's, DONE), false with the reason (the
 * slot released).
 */
static bool
run_in_service(JobSpace *space, uint64 row_keys, char **why)
{
	ServiceSlot *slot = space->slot;

	if (!queue_and_wait(space, row_keys))
	{
		give_up_held();
		*why = "the GPU service went down while the job waited";
		count_fallback(SERVICE_FALLBACK_DOWN);
		return false;
	}
	if (!slot->ok)
	{
		*why = pstrdup(slot->why);
		count_fallback(slot->lost ? SERVICE_FALLBACK_LOST : SERVICE_FALLBACK_FAILED);
		(void) service_slot_release(slot, SLOT_WORD(space->word, SLOT_DONE));
		held_slot = NULL;
		return false;
	}
	return true;
}

/* Ends a job, run or not: its slot (if still held) and its segment go. */
static void
end_job(JobSpace *space)
{
	if (held_slot)
		(void) service_slot_release(space->slot, SLOT_WORD(space->word, SLOT_DONE));
	held_slot = NULL;
	if (space->seg)
		dsm_detach(space->seg);
}

/*
 * Can the service take a job of nrows rows and nkeys key columns at all?
 * Else false with the reason: no GPU, or too little device memory.
 */
static bool
service_takes(uint32 nrows, int nkeys, char **why)
{
	const char *missing;

	if (service_unavailable(&missing))
	{
		*why = (char *) missing;
		count_fallback(SERVICE_FALLBACK_NO_DEVICE);
		return false;
	}
	if (!service_job_fits(nrows, nkeys))
	{
		*why = psprintf("the sort needs about %zu MB of device memory, more than "
						"the %zu MB that gpusort.service_memory allows",
						gpu_job_device_bytes(nrows, nkeys) >> 20,
						service_mem_limit() >> 20);
		count_fallback(SERVICE_FALLBACK_TOO_LARGE);
		return false;
	}
	return true;
}

static bool
service_sort_job(SortJob *job, char **why)
{
	uint32		n = job->nrows;
	bool		payload = job->payload != NULL;
	Size		perm_offset = service_perm_offset(n, job->nkeys, payload);
	Size		bytes = perm_offset + (payload ? 0 : (Size) n * sizeof(uint32));
	JobSpace	space;
	bool		ok = false;

	if (!service_takes(n, job->nkeys, why) || !prepare_job(bytes, &space, why))
		return false;
	PG_TRY();
	{
		ServiceSlot *slot = space.slot;
		char	   *base = space.base;

		for (int c = 0; c < job->nkeys; c++)
			parallel_copy(base + service_keys_bytes(n, c), job->keys[c],
						  (Size) n * sizeof(uint64));
		if (payload)
			parallel_copy(base + service_keys_bytes(n, job->nkeys), job->payload,
						  (Size) n * sizeof(uint64));
		slot->kind = SERVICE_JOB_KEYS;
		slot->nrows = n;
		slot->nkeys = job->nkeys;
		slot->payload = payload;
		slot->want_sorted_keys = payload && job->want_sorted_keys;

		ok = run_in_service(&space, (uint64) n * job->nkeys, why);
		if (ok && slot->payload_sorted)
		{
			parallel_copy(job->payload_out, base + service_keys_bytes(n, job->nkeys),
						  (Size) n * sizeof(uint64));
			job->payload_sorted = true;
			if (slot->keys_sorted)
			{
				job->keys_sorted = MemoryContextAllocHuge(CurrentMemoryContext,
														  (Size) n * sizeof(uint64));
				parallel_copy(job->keys_sorted, base, (Size) n * sizeof(uint64));
			}
		}
		else if (ok)
		{
			if (job->perm == NULL)
				job->perm = MemoryContextAllocHuge(CurrentMemoryContext,
												   (Size) Max(n, 1) * sizeof(uint32));
			parallel_copy(job->perm, base + perm_offset, (Size) n * sizeof(uint32));
		}
		end_job(&space);
	}
	PG_CATCH();
	{
		/* the job is given up; a segment goes with the transaction */
		give_up_held();
		PG_RE_THROW();
	}
	PG_END_TRY();
	return ok;
}

static bool
service_sort_values(SortValues *values, char **why)
{
	Size		vbytes = (Size) values->n * key_value_width(values->type);
	JobSpace	space;
	bool		ok = false;

	if (!service_takes(values->n, 1, why) || !prepare_job(2 * vbytes, &space, why))
		return false;
	PG_TRY();
	{
		ServiceSlot *slot = space.slot;

		parallel_copy(space.base, values->in, vbytes);
		slot->kind = SERVICE_JOB_VALUES;
		slot->nrows = values->n;
		slot->nkeys = 1;
		slot->value_type = values->type;
		slot->descending = values->descending;
		ok = run_in_service(&space, values->n, why);
		if (ok)
			parallel_copy(values->out, space.base + vbytes, vbytes);
		end_job(&space);
	}
	PG_CATCH();
	{
		/* the job is given up; a segment goes with the transaction */
		give_up_held();
		PG_RE_THROW();
	}
	PG_END_TRY();
	return ok;
}

const SortEngine service_sort_engine = {
	.kind = SORT_ENGINE_GPU,
	.sort_job = service_sort_job,
	.sort_values = service_sort_values,
	.unavailable = service_unavailable,
	.started = service_started,
	.startup_ms = service_startup_ms,
	.job_fits = service_job_fits,
	.admits = service_admits,
	.cpu_sorted = service_cpu_sorted,
	.uploader = NULL,
	.stager = NULL,
};

#endif							/* GPUSORT_WITH_CUDA */
