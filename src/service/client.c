/*-------------------------------------------------------------------------
 *
 * client.c
 *	  The backends' side of the GPU service: the chooser's GPU engine
 *	  (sort_job.h) when the service runs.  A job is copied into a dynamic
 *	  shared memory segment, queued in a slot, and waited for on the
 *	  backend's latch, which keeps answering cancels and statement_timeout;
 *	  the result is copied back (service_shared.h).
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

/* What a slot said of its job's result, read before it is freed. */
typedef struct JobResult
{
	bool		payload_sorted;
	bool		keys_sorted;
} JobResult;

/* The slot of this backend's job, for its exit while it waits. */
static ServiceSlot *waiting_slot = NULL;
static bool exit_callback = false;

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
	double		row_keys = (double) nrows * nkeys;
	double		ns;
	double		old = service->cpu_ns_per_row_key;

	if (row_keys < TIMED_ROW_KEYS)
		return;
	ns = ms * 1e6 / row_keys;
	service->cpu_ns_per_row_key = old > 0 ? 0.8 * old + 0.2 * ns : ns;
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
 * Gives up on a job: the slot is freed now if no GPU process runs it, else
 * by whoever ends it (service_shared.h).
 */
static void
abandon(ServiceSlot *slot)
{
	uint32		state = SLOT_QUEUED;

	slot->cancel = 1;
	pg_atomic_write_u32(&slot->abandoned, 1);
	pg_memory_barrier();
	if (pg_atomic_compare_exchange_u32(&slot->state, &state, SLOT_FREE))
	{
		pg_atomic_fetch_sub_u32(&service->queued_jobs, 1);
		pg_atomic_fetch_sub_u64(&service->queued_row_keys, slot->row_keys);
		return;
	}
	state = SLOT_DONE;
	(void) pg_atomic_compare_exchange_u32(&slot->state, &state, SLOT_FREE);
}

static void
abandon_at_exit(int code, Datum arg)
{
	if (waiting_slot)
		abandon(waiting_slot);
	waiting_slot = NULL;
}

/* A free slot, now this backend's (FILLING), or NULL if all are taken. */
static ServiceSlot *
claim_slot(void)
{
	int			start = MyProcPid % SERVICE_SLOTS;

	for (int i = 0; i < SERVICE_SLOTS; i++)
	{
		ServiceSlot *slot = &service->slots[(start + i) % SERVICE_SLOTS];
		uint32		state = SLOT_FREE;

		if (pg_atomic_read_u32(&slot->state) == SLOT_FREE &&
			pg_atomic_compare_exchange_u32(&slot->state, &state, SLOT_FILLING))
		{
			pg_atomic_write_u32(&slot->abandoned, 0);
			slot->cancel = 0;
			slot->latch = MyLatch;
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

/* Queues a filled slot and wakes a GPU process. */
static void
queue_slot(ServiceSlot *slot, dsm_segment *seg, uint64 row_keys)
{
	slot->segment = dsm_segment_handle(seg);
	slot->segment_bytes = dsm_segment_map_length(seg);
	slot->row_keys = row_keys;
	slot->ticket = pg_atomic_fetch_add_u64(&service->next_ticket, 1);
	pg_atomic_fetch_add_u32(&service->queued_jobs, 1);
	pg_atomic_fetch_add_u64(&service->queued_row_keys, row_keys);
	pg_write_barrier();
	pg_atomic_write_u32(&slot->state, SLOT_QUEUED);
	(void) sem_post(&service->wake);
}

/*
 * Waits for the job of a queued slot: true when it is DONE, false when no
 * GPU process was ready for DOWN_WAIT_MS (the job is abandoned).  A cancel
 * abandons it and raises its error.
 */
static bool
wait_for_job(ServiceSlot *slot)
{
	instr_time	down_since;
	bool		down = false;
	bool		done = false;

	if (!exit_callback)
	{
		before_shmem_exit(abandon_at_exit, (Datum) 0);
		exit_callback = true;
	}
	waiting_slot = slot;
	PG_TRY();
	{
		for (;;)
		{
			if (pg_atomic_read_u32(&slot->state) == SLOT_DONE)
			{
				pg_read_barrier();
				done = true;
				break;
			}
			if (gpus_ready() > 0)
				down = false;
			else if (!down)
			{
				down = true;
				INSTR_TIME_SET_CURRENT(down_since);
			}
			else if (ms_since(down_since) > DOWN_WAIT_MS &&
					 pg_atomic_read_u32(&slot->state) == SLOT_QUEUED)
			{
				abandon(slot);
				break;
			}
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 POLL_MS, compat_service_wait_event());
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
	}
	PG_CATCH();
	{
		abandon(slot);
		waiting_slot = NULL;
		PG_RE_THROW();
	}
	PG_END_TRY();
	waiting_slot = NULL;
	return done;
}

/*
 * Runs the job that a slot and its segment hold: true when the segment
 * holds the result (what the slot said of it in *result), false with the
 * reason.  The slot is free again either way.
 */
static bool
run_in_service(ServiceSlot *slot, dsm_segment *seg, uint64 row_keys,
			   JobResult *result, char **why)
{
	queue_slot(slot, seg, row_keys);
	if (!wait_for_job(slot))
	{
		*why = "the GPU service went down while the job waited";
		count_fallback(SERVICE_FALLBACK_DOWN);
		return false;
	}
	if (!slot->ok)
	{
		*why = pstrdup(slot->why);
		count_fallback(slot->lost ? SERVICE_FALLBACK_LOST : SERVICE_FALLBACK_FAILED);
		pg_atomic_write_u32(&slot->state, SLOT_FREE);
		return false;
	}
	result->payload_sorted = slot->payload_sorted;
	result->keys_sorted = slot->keys_sorted;
	pg_atomic_write_u32(&slot->state, SLOT_FREE);
	return true;
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

/* A segment of bytes and a slot for a job, or false with the reason. */
static bool
prepare_job(Size bytes, dsm_segment **seg, ServiceSlot **slot, char **why)
{
	*seg = room_for_segment(bytes) ?
		dsm_create(Max(bytes, 1), DSM_CREATE_NULL_IF_MAXSEGMENTS) : NULL;
	if (*seg == NULL)
	{
		*why = psprintf("no room for a dynamic shared memory segment of %zu MB for the GPU service",
						bytes >> 20);
		count_fallback(SERVICE_FALLBACK_NO_SEGMENT);
		return false;
	}
	*slot = claim_slot();
	if (*slot == NULL)
	{
		dsm_detach(*seg);
		*why = "every job slot of the GPU service is taken";
		count_fallback(SERVICE_FALLBACK_QUEUE_FULL);
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
	dsm_segment *seg;
	ServiceSlot *slot;
	JobResult	result;
	char	   *base;
	const char *missing;

	if (service_unavailable(&missing))
	{
		*why = (char *) missing;
		count_fallback(SERVICE_FALLBACK_NO_DEVICE);
		return false;
	}
	if (!service_job_fits(n, job->nkeys))
	{
		*why = psprintf("the sort needs about %zu MB of device memory, more than "
						"the %zu MB that gpusort.service_memory allows",
						gpu_job_device_bytes(n, job->nkeys) >> 20,
						service_mem_limit() >> 20);
		count_fallback(SERVICE_FALLBACK_TOO_LARGE);
		return false;
	}
	if (!prepare_job(bytes, &seg, &slot, why))
		return false;
	base = dsm_segment_address(seg);
	for (int c = 0; c < job->nkeys; c++)
		parallel_copy(base + service_keys_bytes(n, c), job->keys[c], (Size) n * sizeof(uint64));
	if (payload)
		parallel_copy(base + service_keys_bytes(n, job->nkeys), job->payload,
					  (Size) n * sizeof(uint64));
	slot->kind = SERVICE_JOB_KEYS;
	slot->nrows = n;
	slot->nkeys = job->nkeys;
	slot->payload = payload;
	slot->want_sorted_keys = payload && job->want_sorted_keys;

	if (!run_in_service(slot, seg, (uint64) n * job->nkeys, &result, why))
	{
		dsm_detach(seg);
		return false;
	}
	if (result.payload_sorted)
	{
		parallel_copy(job->payload_out, base + service_keys_bytes(n, job->nkeys),
					  (Size) n * sizeof(uint64));
		job->payload_sorted = true;
		if (result.keys_sorted)
		{
			job->keys_sorted = MemoryContextAllocHuge(CurrentMemoryContext,
													  (Size) n * sizeof(uint64));
			parallel_copy(job->keys_sorted, base, (Size) n * sizeof(uint64));
		}
	}
	else
	{
		if (job->perm == NULL)
			job->perm = MemoryContextAllocHuge(CurrentMemoryContext,
											   (Size) Max(n, 1) * sizeof(uint32));
		parallel_copy(job->perm, base + perm_offset, (Size) n * sizeof(uint32));
	}
	dsm_detach(seg);
	return true;
}

static bool
service_sort_values(SortValues *values, char **why)
{
	Size		vbytes = (Size) values->n * key_value_width(values->type);
	dsm_segment *seg;
	ServiceSlot *slot;
	JobResult	result;
	char	   *base;
	const char *missing;

	if (service_unavailable(&missing))
	{
		*why = (char *) missing;
		count_fallback(SERVICE_FALLBACK_NO_DEVICE);
		return false;
	}
	if (!service_job_fits(values->n, 1))
	{
		*why = "the sort needs more device memory than gpusort.service_memory allows";
		count_fallback(SERVICE_FALLBACK_TOO_LARGE);
		return false;
	}
	if (!prepare_job(2 * vbytes, &seg, &slot, why))
		return false;
	base = dsm_segment_address(seg);
	parallel_copy(base, values->in, vbytes);
	slot->kind = SERVICE_JOB_VALUES;
	slot->nrows = values->n;
	slot->nkeys = 1;
	slot->value_type = values->type;
	slot->descending = values->descending;
	if (!run_in_service(slot, seg, values->n, &result, why))
	{
		dsm_detach(seg);
		return false;
	}
	parallel_copy(values->out, base + vbytes, vbytes);
	dsm_detach(seg);
	return true;
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
