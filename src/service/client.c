/*-------------------------------------------------------------------------
 *
 * client.c
 *	  The backends' side of the GPU service: the chooser's GPU engine
 *	  (sort_job.h) when the service runs.  A job is copied into shared
 *	  memory, run by a GPU process, and its result copied back
 *	  (job_space.c); a job larger than one GPU's share of device memory is
 *	  split into buckets that the GPU processes sort at once (buckets.c).
 *
 * A job goes to the service only when its queue leaves the GPU faster than
 * the CPU engine (admission, a choice that EXPLAIN shows), at the pace that
 * the GPUs and the backends' CPU sorts have lately shown.  A job the
 * service fails, or loses with its GPU process, is a fallback: the chooser
 * sorts it on the CPU.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef GPUSORT_WITH_CUDA

#include "utils/memutils.h"

#include "engine/cost.h"
#include "gpu/engine_gpu.h"
#include "keys/key_codec.h"
#include "service/buckets.h"
#include "service/job_space.h"
#include "service/stager.h"
#include "util/parallel.h"

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

/* Can the service sort it, on one GPU or in buckets on several? */
static bool
service_job_fits(uint32 nrows, int nkeys)
{
	Size		limit = service_mem_limit();

	return limit == 0 || service_buckets(nrows, nkeys, limit) <= SERVICE_MAX_HELD;
}

/*
 * What a job would take on a GPU of the service, which runs already
 * (backends start nothing); its queue is weighed in service_admits.
 */
static double
service_estimate_ms(uint32 nrows, int nkeys, const char **why)
{
	if (!service_job_fits(nrows, nkeys))
	{
		*why = "the sort needs more device memory than gpusort.service_memory allows, "
			"even in buckets on every GPU";
		return -1;
	}
	return gpu_estimate_ms(nrows, nkeys);
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
	int			ready = gpu_service_gpus_ready();
	double		wait_ms;

	/* no GPU at all: the job fails as it would in a backend's own engine */
	if (service_unavailable(NULL))
		return true;
	if (ready == 0)
	{
		*why = "the GPU service is not ready";
		service_count_fallback(SERVICE_FALLBACK_DOWN);
		return false;
	}
	wait_ms = queue_wait_ms(ready);
	if (wait_ms > 0 &&
		wait_ms + gpu_estimate_ms(nrows, nkeys) > cpu_now_ms(nrows, nkeys))
	{
		*why = psprintf("the GPU service is busy: about %.0f ms of jobs ahead", wait_ms);
		service_count_fallback(SERVICE_FALLBACK_BUSY);
		return false;
	}
	return true;
}

/* Is there a GPU for the service's jobs?  Else false with the reason. */
static bool
service_has_gpu(char **why)
{
	const char *missing;

	if (service_unavailable(&missing))
	{
		*why = (char *) missing;
		service_count_fallback(SERVICE_FALLBACK_NO_DEVICE);
		return false;
	}
	return true;
}

/* What EXPLAIN ANALYZE tells of a job that one GPU process ran. */
static char *
job_note(ServiceSlot *slot)
{
	return psprintf("GPU %d, queued %.1f ms, ran %.1f ms",
					slot->gpu, slot->wait_ms, slot->run_ms);
}

static bool
service_sort_job(SortJob *job, char **why)
{
	uint32		n = job->nrows;
	bool		payload = job->payload != NULL;
	Size		perm_offset = service_perm_offset(n, job->nkeys, payload);
	Size		bytes = perm_offset + (payload ? 0 : (Size) n * sizeof(uint32));
	Size		limit = service_mem_limit();
	JobSpace	space;
	bool		ok = false;

	if (!service_has_gpu(why))
		return false;
	if (limit > 0 && service_buckets(n, job->nkeys, limit) > 1)
		return service_sort_buckets(job, limit, why);
	if (!job_space_prepare(bytes, &space, why))
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
		space.row_keys = (uint64) n * job->nkeys;

		ok = job_spaces_run(&space, 1, why);
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
		if (ok)
		{
			job->engine_note = job_note(slot);
			strlcpy(job->kernel, slot->kernel, sizeof(job->kernel));
		}
		job_space_end(&space);
	}
	PG_CATCH();
	{
		job_spaces_abandon(&space, 1);
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

	if (!service_has_gpu(why))
		return false;
	if (service_mem_limit() > 0 &&
		gpu_values_device_bytes(values->n, key_value_width(values->type)) > service_mem_limit())
	{
		*why = psprintf("the sort needs about %zu MB of device memory, more than "
						"the %zu MB that gpusort.service_memory allows",
						gpu_values_device_bytes(values->n, key_value_width(values->type)) >> 20,
						service_mem_limit() >> 20);
		service_count_fallback(SERVICE_FALLBACK_TOO_LARGE);
		return false;
	}
	if (!job_space_prepare(2 * vbytes, &space, why))
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
		space.row_keys = values->n;
		ok = job_spaces_run(&space, 1, why);
		if (ok)
			parallel_copy(values->out, space.base + vbytes, vbytes);
		job_space_end(&space);
	}
	PG_CATCH();
	{
		job_spaces_abandon(&space, 1);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return ok;
}

const SortEngine service_sort_engine = {
	.name = "gpu",
	.title = "GPU",
	.note_name = "GPU Service",
	.sort_job = service_sort_job,
	.sort_values = service_sort_values,
	.estimate_ms = service_estimate_ms,
	.unavailable = service_unavailable,
	.admits = service_admits,
	.cpu_sorted = service_cpu_sorted,
	.uploader = NULL,
	.stager = &service_stager,
};

#endif							/* GPUSORT_WITH_CUDA */
