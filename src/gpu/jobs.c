/*-------------------------------------------------------------------------
 *
 * jobs.c
 *	  The GPU engine's sorts: jobs of key columns (gpu_sort_job) and arrays
 *	  of values (gpu_sort_values), run with the CUDA kernels of
 *	  cuda/gpusort_cuda.h, watched for cancels, and their failures.
 *
 * A job's key columns are sorted least significant first (LSD), each by a
 * stable sort of (key, position) pairs whose positions start as 0..n-1, so
 * that every algorithm of the dispatcher is stable:
 *
 *	  last column:   keys -> device, perm = iota, sort (keys, perm)
 *	  each earlier:  raw -> device, keys = raw[perm], vals = iota,
 *					 sort (keys, vals), perm = perm[vals]
 *
 * Only the keys go to the device, and the permutation comes back; a job's
 * payload (the node's tuple pointers) goes up too and comes back gathered
 * in sorted order instead of the permutation, which spares the host a pass
 * of random reads (and, where the caller asks, the sorted leading keys, by
 * which it finds the rows they leave tied).  Keys are sorted as 64-bit
 * words; the dispatcher narrows them to the bits in which they differ.  The
 * leading column and the payload may be on the device already (upload.c).
 *
 * Every failure returns false with a reason (the caller sorts on the CPU).
 * A cancel or statement_timeout stops a GPU sort between kernel launches:
 * the kernels watch QueryCancelPending.  Other interrupts (barriers, requests
 * to log memory contexts, termination) wait for the sort, which takes
 * milliseconds to seconds, and are handled at the next CHECK_FOR_INTERRUPTS.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef GPUSORT_WITH_CUDA

#include "lib/stringinfo.h"
#include "miscadmin.h"

#include "gpu/gpu_state.h"
#include "keys/key_codec.h"

/* Restarts of a GPU sort stopped by a cancel that raised no error. */
#define INTERRUPT_RETRIES		3

/* Phase times of a job, for the DEBUG1 report. */
typedef struct JobTimes
{
	double		upload_ms;
	double		sort_ms;
	double		download_ms;
	uint32		uploaded_early; /* rows uploaded during collection */
	double		wait_ms;		/* waiting for their last copies */
	gs_sort_info info;			/* of the last sort (the first key column) */
	uint32		algorithms;		/* a bit for each gs_algorithm that ran */
	int			radix_passes;	/* their passes over all key columns */
	int			radix_bits;		/* the bits those passes sorted */
} JobTimes;

/* Counts the kernel that a sort of one key column ran (times->info). */
static void
count_kernel(JobTimes *times)
{
	times->algorithms |= UINT32_C(1) << times->info.algorithm;
	times->radix_passes += times->info.radix_passes;
	times->radix_bits += times->info.key_bits;
}

/*
 * The kernels that sorted a job, as EXPLAIN ANALYZE shows them (SortJob's
 * kernel): "radix, 3 passes over 20 bits", "counting+radix, ...",
 * "bitonic".
 */
static void
name_kernels(const JobTimes *times, char *kernel, Size size)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int a = GS_ALGO_AUTO + 1; a < GS_ALGO_COUNT_; a++)
		if (times->algorithms & (UINT32_C(1) << a))
			appendStringInfo(&buf, "%s%s", buf.len > 0 ? "+" : "",
							 gs_algorithm_name((gs_algorithm) a));
	if (times->radix_passes > 0)
		appendStringInfo(&buf, ", %d pass%s over %d bits", times->radix_passes,
						 times->radix_passes == 1 ? "" : "es", times->radix_bits);
	strlcpy(kernel, buf.data, size);
	pfree(buf.data);
}

/* Sorts the job on the device (see the file's header). */
static gs_status
run_job(void *arg, JobTimes *times)
{
	SortJob    *job = arg;
	uint32		n = job->nrows;
	int			last = job->nkeys - 1;
	Size		kbytes = (Size) n * sizeof(uint64);
	Size		pbytes = (Size) n * sizeof(uint32);
	uint32		uploaded = 0;
	uint64	   *lead;
	uint64	   *keys;
	uint32	   *perm;
	instr_time	t;

	/*
	 * the rows uploaded while they were collected, if that went well (else
	 * this job takes the buffers back from whichever upload holds them)
	 */
	INSTR_TIME_SET_CURRENT(t);
	if (gpu_early_upload_claim(job->upload))
	{
		uploaded = job->upload->queued;
		times->uploaded_early = uploaded;
		times->wait_ms = ms_since(t);
	}

	TRY(gpu_upload_column(BUF_LEAD, job->keys[0], n, uploaded));
	TRY(gpu_buffer_ensure(BUF_PERM, pbytes));
	if (job->nkeys > 1)
	{
		TRY(gpu_buffer_ensure(BUF_KEYS, kbytes));
		TRY(gpu_buffer_ensure(BUF_VALS, pbytes));
		TRY(gpu_buffer_ensure(BUF_SPARE, pbytes));
	}
	lead = gpu.buf[BUF_LEAD];
	keys = (job->nkeys == 1) ? lead : gpu.buf[BUF_KEYS];
	perm = gpu.buf[BUF_PERM];

	/* the least significant column, from the rows' order */
	if (last > 0)
		TRY(gpu_staged_upload(keys, job->keys[last], kbytes));
	times->upload_ms += ms_since(t);
	INSTR_TIME_SET_CURRENT(t);
	TRY(gs_fill_iota(gpu.ctx, perm, n));
	TRY(gs_sort_pairs(gpu.ctx, 64, keys, perm, keys, perm, n, GS_ALGO_AUTO,
					  &times->info));
	count_kernel(times);
	times->sort_ms += ms_since(t);

	/* each earlier column, from the order so far */
	for (int c = last - 1; c >= 0; c--)
	{
		uint64	   *raw = lead;
		uint32	   *vals = gpu.buf[BUF_VALS];
		uint32	   *next = (perm == gpu.buf[BUF_PERM]) ? gpu.buf[BUF_SPARE] : gpu.buf[BUF_PERM];

		if (c > 0)
		{
			INSTR_TIME_SET_CURRENT(t);
			TRY(gpu_buffer_ensure(BUF_RAW, kbytes));
			raw = gpu.buf[BUF_RAW];
			TRY(gpu_staged_upload(raw, job->keys[c], kbytes));
			times->upload_ms += ms_since(t);
		}
		INSTR_TIME_SET_CURRENT(t);
		TRY(gpu_sort_by_column(keys, raw, perm, vals, next, n, &times->info));
		count_kernel(times);
		TRY(gs_synchronize(gpu.ctx));
		times->sort_ms += ms_since(t);
		perm = next;
	}

	/*
	 * The payload, put in order here (the host would read it at random),
	 * comes back instead of the permutation; the keys are free for it.
	 */
	if (job->payload)
	{
		INSTR_TIME_SET_CURRENT(t);
		TRY(gpu_upload_column(BUF_PAYLOAD, job->payload, n,
							  job->upload && job->upload->payload ? uploaded : 0));
		times->upload_ms += ms_since(t);
		INSTR_TIME_SET_CURRENT(t);
		if (job->keys_sorted)
			TRY(gpu_staged_download(job->keys_sorted, keys, kbytes));
		TRY(gs_gather_u64(gpu.ctx, keys, gpu.buf[BUF_PAYLOAD], perm, n));
		TRY(gpu_staged_download(job->payload_out, keys, kbytes));
		times->download_ms += ms_since(t);
		job->payload_sorted = true;
		return GS_OK;
	}

	INSTR_TIME_SET_CURRENT(t);
	TRY(gpu_staged_download(job->perm, perm, pbytes));
	times->download_ms += ms_since(t);
	return GS_OK;
}

/*
 * Cancels and timeouts stop a sort: the kernels watch QueryCancelPending,
 * after anything pending now is handled, unless interrupts are held off
 * (then ProcessInterrupts would leave the flag set).  Only that flag: other
 * interrupts, which raise no error, must not cost the sort.
 */
static void
watch_interrupts(void)
{
	CHECK_FOR_INTERRUPTS();
	if (gpu.cancel_source)
		gpu.interrupt_flag = gpu.cancel_source;
	else
		gpu.interrupt_flag = INTERRUPTS_CAN_BE_PROCESSED() ?
			(const volatile int *) &QueryCancelPending : NULL;
	gs_context_set_interrupt(gpu.ctx, gpu.interrupt_flag);
}

void
gpu_engine_set_cancel_flag(const volatile int *flag)
{
	gpu.cancel_source = flag;
}

/*
 * Runs a sort, watching for cancels.  A cancel stops it and raises its
 * error when the sort is run again; should processing it raise none (the
 * cancel came too late to count), the sort starts again, a few times.
 */
typedef gs_status (*SortRunner) (void *arg, JobTimes *times);

static gs_status
run_watched(SortRunner runner, void *arg, JobTimes *times)
{
	gs_status	st;

	for (int attempt = 0;; attempt++)
	{
		memset(times, 0, sizeof(JobTimes));
		watch_interrupts();
		st = runner(arg, times);
		if (st != GS_INTERRUPTED || attempt == INTERRUPT_RETRIES)
			return st;
		/* the stream is idle */
		(void) gs_synchronize(gpu.ctx);
	}
}

/*
 * Ends a sort that returned st: true if it succeeded, else false with the
 * reason in *why, after releasing what the failure leaves unusable.  A
 * cancel raises its error here.
 */
static bool
end_sort(gs_status st, char **why)
{
	gs_context_set_interrupt(gpu.ctx, NULL);
	gpu.interrupt_flag = NULL;

	switch (st)
	{
		case GS_OK:
			return true;
		case GS_INTERRUPTED:
			/* the stream is idle */
			(void) gs_synchronize(gpu.ctx);
			CHECK_FOR_INTERRUPTS();
			*why = pstrdup("the GPU sort was interrupted");
			return false;
		case GS_ERR_NO_MEMORY:
			*why = psprintf("out of device memory: %s", gs_last_error(gpu.ctx));
			gpu_buffers_release();
			return false;
		default:
			/* a CUDA error may leave the context unusable: start anew */
			*why = psprintf("%s: %s", gs_status_name(st), gs_last_error(gpu.ctx));
			gpu_engine_reset();
			return false;
	}
}

/*
 * Starts the GPU if needed and checks that a sort of device_bytes fits its
 * memory limit; false with the reason otherwise.
 */
static bool
prepare_sort(uint32 nrows, Size device_bytes, char **why)
{
	double		start_ms;

	if ((uint64) nrows > GS_MAX_PAIRS)
	{
		*why = psprintf("%u rows are more than the GPU sorts at once", nrows);
		return false;
	}
	if (!gpu_engine_start(why, &start_ms))
		return false;
	if (device_bytes > gpu.mem_limit)
	{
		*why = psprintf("the sort needs about %zu MB of device memory, more than "
						"the %zu MB that %s allows",
						device_bytes >> 20, gpu.mem_limit >> 20, gpu.config.memory_setting);
		return false;
	}
	/* the rows of larger inputs held here count against the same limit */
	if (device_bytes + gpu_stage_held_bytes() > gpu.mem_limit)
	{
		*why = psprintf("the sort needs about %zu MB of device memory, and %zu MB "
						"of the %zu MB allowed hold the rows of inputs over the "
						"memory budget", device_bytes >> 20,
						gpu_stage_held_bytes() >> 20, gpu.mem_limit >> 20);
		return false;
	}
	return true;
}

static bool
gpu_sort_job(SortJob *job, char **why)
{
	JobTimes	times;
	bool		own_keys = false;

	if (!prepare_sort(job->nrows, gpu_job_device_bytes(job->nrows, job->nkeys), why))
		return false;
	if (job->nrows < 2 || job->nkeys == 0)
	{
		if (job->payload)
		{
			memmove(job->payload_out, job->payload, sizeof(uint64) * job->nrows);
			job->payload_sorted = true;
			if (job->want_sorted_keys && job->nkeys > 0)
			{
				if (job->keys_sorted == NULL)
					job->keys_sorted = palloc(sizeof(uint64) * Max(job->nrows, 1));
				memmove(job->keys_sorted, job->keys[0], sizeof(uint64) * job->nrows);
			}
		}
		else
			for (uint32 i = 0; i < job->nrows; i++)
				job->perm[i] = i;
		return true;
	}

	/*
	 * the keys come back sorted where the caller asks (sort_job.h), into
	 * its buffer if it has one (the service's, in place of the keys)
	 */
	if (job->payload && job->want_sorted_keys && job->keys_sorted == NULL)
	{
		job->keys_sorted = MemoryContextAllocHuge(CurrentMemoryContext,
												  sizeof(uint64) * job->nrows);
		own_keys = true;
	}
	if (!end_sort(run_watched(run_job, job, &times), why))
	{
		if (own_keys)
			pfree(job->keys_sorted);
		job->keys_sorted = NULL;
		return false;
	}
	name_kernels(&times, job->kernel, sizeof(job->kernel));

	elog(DEBUG1, "gpusort: GPU sort of %u rows, %d key column%s: "
		 "upload %.3f ms (%u rows uploaded before, %.3f ms waiting for them), "
		 "sort %.3f ms, download %.3f ms (first key column: %s, %d passes over %d bits)",
		 job->nrows, job->nkeys, job->nkeys == 1 ? "" : "s",
		 times.upload_ms, times.uploaded_early, times.wait_ms, times.sort_ms, times.download_ms,
		 gs_algorithm_name(times.info.algorithm),
		 times.info.radix_passes, times.info.key_bits);
	return true;
}

/* Sorts values on the device: up, into keys and back, down (gs_values.cu). */
static gs_status
run_values(void *arg, JobTimes *times)
{
	SortValues *job = arg;
	Size		vbytes = (Size) job->n * key_value_width(job->type);
	Size		kbytes = (Size) job->n * (key_value_width(job->type) == 8 ? 8 : 4);
	static const gs_value_type types[] = {
		[SORT_VALUES_INT16] = GS_VALUES_INT16,
		[SORT_VALUES_INT32] = GS_VALUES_INT32,
		[SORT_VALUES_INT64] = GS_VALUES_INT64,
		[SORT_VALUES_FLOAT32] = GS_VALUES_FLOAT32,
		[SORT_VALUES_FLOAT64] = GS_VALUES_FLOAT64,
	};
	instr_time	t;

	TRY(gpu_buffer_ensure(BUF_RAW, vbytes));
	TRY(gpu_buffer_ensure(BUF_KEYS, kbytes));
	TRY(gpu_buffer_ensure(BUF_PERM, (Size) job->n * sizeof(uint32)));

	INSTR_TIME_SET_CURRENT(t);
	TRY(gpu_staged_upload(gpu.buf[BUF_RAW], job->in, vbytes));
	times->upload_ms += ms_since(t);
	INSTR_TIME_SET_CURRENT(t);
	TRY(gs_sort_values(gpu.ctx, types[job->type], job->descending, gpu.buf[BUF_RAW],
					   gpu.buf[BUF_KEYS], gpu.buf[BUF_PERM], job->n, &times->info));
	times->sort_ms += ms_since(t);
	INSTR_TIME_SET_CURRENT(t);
	TRY(gpu_staged_download(job->out, gpu.buf[BUF_RAW], vbytes));
	times->download_ms += ms_since(t);
	return GS_OK;
}

static bool
gpu_sort_values(SortValues *job, char **why)
{
	JobTimes	times;

	if (!prepare_sort(job->n, gpu_values_device_bytes(job->n, key_value_width(job->type)), why))
		return false;
	if (job->n < 2)
	{
		memcpy(job->out, job->in, (Size) job->n * key_value_width(job->type));
		return true;
	}

	if (!end_sort(run_watched(run_values, job, &times), why))
		return false;

	elog(DEBUG1, "gpusort: GPU sort of %u values: upload %.3f ms, sort %.3f ms, "
		 "download %.3f ms (%s, %d passes over %d bits)",
		 job->n, times.upload_ms, times.sort_ms, times.download_ms,
		 gs_algorithm_name(times.info.algorithm),
		 times.info.radix_passes, times.info.key_bits);
	return true;
}

const SortEngine gpu_sort_engine = {
	.name = "gpu",
	.title = "GPU",
	.sort_job = gpu_sort_job,
	.sort_values = gpu_sort_values,
	.estimate_ms = gpu_engine_estimate_ms,
	.unavailable = gpu_engine_unavailable,
	.started = gpu_engine_started,
	.uploader = &gpu_uploader,
	.stager = &gpu_stager,
};

#endif							/* GPUSORT_WITH_CUDA */
