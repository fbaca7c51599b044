/*-------------------------------------------------------------------------
 *
 * engine_gpu.c
 *	  The GPU sort engine: runs sort jobs with the CUDA kernels of
 *	  cuda/gpusort_cuda.h, and owns this backend's GPU state.
 *
 * CUDA is started lazily, in the backend that first needs it (a job, the
 * SQL function gpusort_gpu_start(), or gpusort.gpu_prestart when the library
 * is loaded into a backend), never in the postmaster.  The context (device
 * gpusort.gpu_id, a stream, device memory bounded by gpusort.gpu_memory),
 * the device buffers and two pinned host staging buffers are then kept for
 * the next jobs of the backend, and released at its exit.  A change of
 * gpusort.gpu_id or gpusort.gpu_memory, or a CUDA error, releases them all;
 * the next job starts afresh.
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
 * of random reads.  Keys are sorted as 64-bit words; the dispatcher narrows
 * them to the bits in which they differ.  Host memory is copied through the
 * pinned staging buffers, in chunks: the CPU fills (or drains) one buffer
 * while the other is being transferred.
 *
 * The leading key column and the payload may be uploaded while the rows are
 * still being collected (sort_upload_rows): the copy thread of gpu_copier.c
 * moves each new chunk of them into BUF_LEAD and BUF_PAYLOAD while the
 * backend reads on, so that the job finds all but the last chunk on the
 * device.  One upload runs at a time in a backend, and owns those buffers
 * until its job runs; a job that needs them meanwhile (one of another node)
 * takes them back, and the upload's own job then uploads its rows itself.
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

#include "gpu/engine_gpu.h"
#include "gpu/gpu_copier.h"
#include "settings.h"
#include "engine/sort_engine.h"

#ifdef GPUSORT_WITH_CUDA

#include "access/parallel.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/ipc.h"
#include "utils/memutils.h"

#include "gpusort_cuda.h"
#include "util/threads.h"

/*
 * The cost model's GPU side (see engine.c for the CPU side), from the
 * engine's phase times on an H200 host (16 cores) at 1M and 10M rows:
 * CUDA starts in about 275 ms in a new backend.  Per key column, about
 * 1 ms of launches and synchronizations (the sort's passes) plus, per row,
 * 8 bytes moved to the device through the pinned staging buffers (~8 GB/s,
 * bound by the CPU's copy into them) and sorted (~0.2 ns): 1.2 ns.  Per
 * job, 0.5 ms plus, per row, 4 bytes of permutation back (~2.5 GB/s, bound
 * by the first touch of the caller's fresh memory): 1.6 ns.
 */
#define GPU_STARTUP_MS			275.0
#define GPU_JOB_MS				0.5
#define GPU_COLUMN_MS			1.0
#define GPU_NS_PER_ROW_KEY		1.2
#define GPU_NS_PER_ROW			1.6

/* Restarts of a GPU sort stopped by a cancel that raised no error. */
#define INTERRUPT_RETRIES		3

/* Each of the two pinned staging buffers. */
#define STAGING_BYTES			((Size) 16 * 1024 * 1024)

/* gpusort.gpu_memory = 0: this share of the device's free memory. */
#define DEFAULT_MEMORY_SHARE	0.8

/* Device memory for kernel scratch beyond the per-row estimate. */
#define SCRATCH_SLACK_BYTES		((Size) 32 * 1024 * 1024)

/* The device buffers of a job. */
typedef enum GpuBuffer
{
	BUF_LEAD,					/* the leading column, in row order */
	BUF_PAYLOAD,				/* the payload, in row order */
	BUF_KEYS,					/* the column being sorted, in perm order */
	BUF_RAW,					/* another earlier column, in row order */
	BUF_PERM,					/* the order so far */
	BUF_VALS,					/* positions sorted with the keys */
	BUF_SPARE,					/* the next order */
	NUM_BUFFERS
} GpuBuffer;

/* Rows of a job uploaded while they are collected (see the file's header). */
struct SortUpload
{
	uint32		queued;			/* rows queued for the copy thread */
	uint32		capacity;		/* rows that BUF_LEAD and BUF_PAYLOAD hold */
	bool		payload;		/* the payload is uploaded too */
};

/* The upload that owns BUF_LEAD and BUF_PAYLOAD, or NULL. */
static SortUpload *active_upload = NULL;

typedef struct GpuEngine
{
	gs_context *ctx;			/* NULL: not started */
	int			device;			/* gpusort.gpu_id when started */
	int			memory_setting; /* gpusort.gpu_memory when started */
	Size		mem_limit;		/* device bytes the context may hold */
	double		startup_ms;		/* what the last start took */
	void	   *staging[2];		/* pinned host buffers of STAGING_BYTES */
	void	   *buf[NUM_BUFFERS];
	Size		buf_bytes[NUM_BUFFERS];
	bool		exit_callback;	/* registered with on_proc_exit */
	bool		unavailable;	/* no GPU in this backend, ever */
	char		unavailable_reason[512];
} GpuEngine;

static GpuEngine gpu;

/* The interrupt flag the current job watches, or NULL. */
static const volatile int *interrupt_flag = NULL;

/* Phase times of a job, for the DEBUG1 report. */
typedef struct JobTimes
{
	double		upload_ms;
	double		sort_ms;
	double		download_ms;
	uint32		uploaded_early; /* rows uploaded during collection */
	double		wait_ms;		/* waiting for their last copies */
	gs_sort_info info;
} JobTimes;

static double
ms_since(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

/*
 * Device bytes a job of nrows rows and nkeys columns needs at most, a
 * payload included (one-column jobs always count its raw buffer).
 */
static Size
job_device_bytes(uint32 nrows, int nkeys)
{
	/*
	 * Own buffers: lead 8, payload 8 and perm 4 bytes a row, plus keys 8,
	 * raw 8, vals 4 and spare 4 with several columns; the sort's scratch: a
	 * second key and value buffer (12) and the radix look-back status (1/3).
	 * Buffers grow with 1/8 headroom.
	 */
	double		per_row = (nkeys > 1 ? 44.0 : 20.0) + 12.0 + 1.0 / 3.0;

	return (Size) ((double) nrows * per_row * 9.0 / 8.0) + SCRATCH_SLACK_BYTES;
}

/* Device bytes a sort of n values of the given width needs at most. */
static Size
values_device_bytes(uint32 n, int width)
{
	/* the values, their keys and vals as a one-column job's keys and perm */
	return job_device_bytes(n, 1) + (Size) ((double) n * width * 9.0 / 8.0);
}

/* Stops the active upload, if any: its job will upload its rows itself. */
static void
drop_upload(void)
{
	if (active_upload == NULL)
		return;
	copier_cancel();
	active_upload = NULL;
}

/*
 * Waits for the active upload's copies: true if they all succeeded, else
 * the upload ends.
 */
static bool
upload_settled(void)
{
	if (copier_wait() == GS_OK)
		return true;
	elog(DEBUG1, "gpusort: an upload during collection failed: %s", copier_error());
	active_upload = NULL;
	return false;
}

/* Frees the device buffers and the kernels' scratch, keeping the context. */
static void
release_device_memory(void)
{
	drop_upload();
	for (int i = 0; i < NUM_BUFFERS; i++)
	{
		if (gpu.buf[i])
			(void) gs_device_free(gpu.ctx, gpu.buf[i]);
		gpu.buf[i] = NULL;
		gpu.buf_bytes[i] = 0;
	}
	(void) gs_context_release_scratch(gpu.ctx);
}

/* Releases everything: the next job starts the GPU again. */
static void
gpu_engine_reset(void)
{
	if (gpu.ctx == NULL)
		return;
	drop_upload();
	copier_stop();
	(void) gs_synchronize(gpu.ctx);
	for (int i = 0; i < 2; i++)
	{
		(void) gs_host_free_pinned(gpu.staging[i]);
		gpu.staging[i] = NULL;
	}
	/* the context frees the buffers allocated through it */
	gs_context_destroy(gpu.ctx);
	gpu.ctx = NULL;
	for (int i = 0; i < NUM_BUFFERS; i++)
	{
		gpu.buf[i] = NULL;
		gpu.buf_bytes[i] = 0;
	}
}

static void
gpu_engine_exit(int code, Datum arg)
{
	gpu_engine_reset();
}

static void
mark_unavailable(const char *reason)
{
	gpu.unavailable = true;
	snprintf(gpu.unavailable_reason, sizeof(gpu.unavailable_reason),
			 "no GPU: %s", reason);
}

bool
gpu_engine_unavailable(const char **why)
{
	if (gpu.unavailable && why)
		*why = gpu.unavailable_reason;
	return gpu.unavailable;
}

bool
gpu_engine_started(void)
{
	return gpu.ctx != NULL &&
		gpu.device == gpusort_gpu_id &&
		gpu.memory_setting == gpusort_gpu_memory;
}

/*
 * Starts CUDA and the context.  CUDA starts threads of its own, which must
 * not run PostgreSQL's signal handlers: call with every signal blocked
 * (util/threads.h).
 */
static bool
start_context(char **why)
{
	gs_device_info info;
	int			count = 0;
	Size		limit;
	gs_status	st;
	char		reason[256];

	st = gs_device_count(&count);
	if (st != GS_OK)
	{
		*why = psprintf("%s", gs_last_error(NULL));
		if (st == GS_ERR_NO_DEVICE)
			mark_unavailable(*why);
		return false;
	}
	if (count == 0)
	{
		/* ask again for the details: no driver, an old driver, ... */
		if (gs_device_get_info(0, &info) != GS_OK)
			mark_unavailable(gs_last_error(NULL));
		else
			mark_unavailable("no CUDA device");
		*why = pstrdup(gpu.unavailable_reason);
		return false;
	}
	if (gpusort_gpu_id >= count)
	{
		*why = psprintf("gpusort.gpu_id is %d, but this host has %d GPU%s",
						gpusort_gpu_id, count, count == 1 ? "" : "s");
		return false;
	}
	st = gs_device_get_info(gpusort_gpu_id, &info);
	if (st != GS_OK)
	{
		*why = psprintf("%s", gs_last_error(NULL));
		if (st == GS_ERR_NO_DEVICE)
			mark_unavailable(*why);
		return false;
	}
	if (gpusort_gpu_memory > 0)
		limit = (Size) gpusort_gpu_memory * 1024 * 1024;
	else
		limit = (Size) (info.free_mem * DEFAULT_MEMORY_SHARE);

	st = gs_context_create(gpusort_gpu_id, limit, &gpu.ctx);
	if (st != GS_OK)
	{
		*why = psprintf("%s", gs_last_error(NULL));
		if (st == GS_ERR_NO_DEVICE)
			mark_unavailable(*why);
		gpu.ctx = NULL;
		return false;
	}
	for (int i = 0; i < 2; i++)
	{
		if (gs_host_alloc_pinned(STAGING_BYTES, &gpu.staging[i]) != GS_OK)
		{
			*why = psprintf("pinned host memory: %s", gs_last_error(NULL));
			gpu_engine_reset();
			return false;
		}
	}
	if (!copier_start(gpusort_gpu_id, reason, sizeof(reason)))
	{
		*why = pstrdup(reason);
		gpu_engine_reset();
		return false;
	}
	gpu.device = gpusort_gpu_id;
	gpu.memory_setting = gpusort_gpu_memory;
	gpu.mem_limit = limit;
	return true;
}

bool
gpu_engine_start(char **why, double *ms)
{
	instr_time	start;
	sigset_t	saved;
	bool		ok;

	*ms = 0;
	if (gpu_engine_started())
		return true;
	/* settings changed since the start: begin anew */
	gpu_engine_reset();
	if (gpu.unavailable)
	{
		*why = pstrdup(gpu.unavailable_reason);
		return false;
	}
	if (!IsUnderPostmaster && IsPostmasterEnvironment)
	{
		/* CUDA does not survive fork(): never in the postmaster */
		*why = pstrdup("the GPU is not started in the postmaster");
		return false;
	}

	INSTR_TIME_SET_CURRENT(start);
	signals_block_all(&saved);
	ok = start_context(why);
	signals_restore(&saved);
	*ms = ms_since(start);
	if (!ok)
		return false;

	gpu.startup_ms = *ms;
	if (!gpu.exit_callback)
	{
		on_proc_exit(gpu_engine_exit, (Datum) 0);
		gpu.exit_callback = true;
	}
	elog(DEBUG1, "gpusort: GPU %d started in %.1f ms, device memory limit %zu MB",
		 gpu.device, *ms, gpu.mem_limit >> 20);
	return true;
}

void
gpu_engine_prestart(void)
{
	char	   *why = NULL;
	double		ms;

	/* only in a regular backend, never in the postmaster or a worker */
	if (!gpusort_gpu_prestart || !IsUnderPostmaster || IsParallelWorker() ||
		MyBackendType != B_BACKEND)
		return;
	if (gpu_engine_start(&why, &ms))
		elog(DEBUG1, "gpusort: gpusort.gpu_prestart started the GPU in %.1f ms", ms);
	else
		elog(LOG, "gpusort: gpusort.gpu_prestart: the GPU cannot be used: %s", why);
}

double
gpu_startup_estimate_ms(void)
{
	/* a backend that started the GPU before knows what it costs */
	return gpu.startup_ms > 0 ? gpu.startup_ms : GPU_STARTUP_MS;
}

double
gpu_estimate_ms(uint32 nrows, int nkeys)
{
	return GPU_JOB_MS + nkeys * GPU_COLUMN_MS +
		((double) nrows * (nkeys * GPU_NS_PER_ROW_KEY + GPU_NS_PER_ROW)) / 1e6;
}

bool
gpu_job_fits(uint32 nrows, int nkeys)
{
	if (!gpu_engine_started())
		return true;			/* not known before the start */
	return job_device_bytes(nrows, nkeys) <= gpu.mem_limit;
}

#define TRY(call) \
	do { \
		gs_status	st_ = (call); \
		if (st_ != GS_OK) \
			return st_; \
	} while (0)

/* Makes buffer b at least bytes large (with headroom when it grows). */
static gs_status
ensure_buffer(GpuBuffer b, Size bytes)
{
	gs_status	st;

	if (gpu.buf[b] && gpu.buf_bytes[b] >= bytes)
		return GS_OK;
	if (gpu.buf[b])
	{
		st = gs_device_free(gpu.ctx, gpu.buf[b]);
		gpu.buf[b] = NULL;
		gpu.buf_bytes[b] = 0;
		if (st != GS_OK)
			return st;
	}
	bytes += bytes / 8;
	st = gs_device_alloc(gpu.ctx, bytes, &gpu.buf[b]);
	if (st != GS_OK)
	{
		gpu.buf[b] = NULL;
		return st;
	}
	gpu.buf_bytes[b] = bytes;
	return GS_OK;
}

/*
 * Makes buffer b at least bytes large (with headroom when it grows), keeping
 * its first keep bytes.
 */
static gs_status
grow_buffer(GpuBuffer b, Size bytes, Size keep)
{
	void	   *grown;
	gs_status	st;

	if (keep == 0 || gpu.buf[b] == NULL || gpu.buf_bytes[b] >= bytes)
		return ensure_buffer(b, bytes);
	bytes += bytes / 8;
	TRY(gs_device_alloc(gpu.ctx, bytes, &grown));
	st = gs_copy_device(gpu.ctx, grown, gpu.buf[b], keep);
	if (st == GS_OK)
		st = gs_device_free(gpu.ctx, gpu.buf[b]);	/* after the copy */
	if (st != GS_OK)
	{
		(void) gs_device_free(gpu.ctx, grown);
		return st;
	}
	gpu.buf[b] = grown;
	gpu.buf_bytes[b] = bytes;
	return GS_OK;
}

static inline bool
interrupted(void)
{
	return interrupt_flag != NULL && *interrupt_flag;
}

/*
 * Copies host memory to the device through the staging buffers: while one
 * chunk is being transferred the CPU fills the other buffer.
 */
static gs_status
upload(void *dst, const void *src, Size bytes)
{
	const char *from = src;
	char	   *to = dst;
	int			b = 0;
	bool		pending = false;
	gs_status	st;

	for (Size off = 0; off < bytes; off += STAGING_BYTES, b ^= 1)
	{
		Size		len = Min(STAGING_BYTES, bytes - off);

		/* this buffer's last transfer ended at the previous synchronize */
		memcpy(gpu.staging[b], from + off, len);
		if (pending && (st = gs_synchronize(gpu.ctx)) != GS_OK)
			return st;
		if (interrupted())
			return GS_INTERRUPTED;
		if ((st = gs_copy_to_device(gpu.ctx, to + off, gpu.staging[b], len)) != GS_OK)
			return st;
		pending = true;
	}
	return pending ? gs_synchronize(gpu.ctx) : GS_OK;
}

/* Copies device memory to the host through the staging buffers. */
static gs_status
download(void *dst, const void *src, Size bytes)
{
	const char *from = src;
	char	   *to = dst;
	gs_status	st;
	int			b = 0;

	if (bytes == 0)
		return GS_OK;
	st = gs_copy_to_host(gpu.ctx, gpu.staging[0], from, Min(STAGING_BYTES, bytes));
	if (st != GS_OK)
		return st;
	for (Size off = 0; off < bytes; off += STAGING_BYTES, b ^= 1)
	{
		Size		len = Min(STAGING_BYTES, bytes - off);
		Size		next = off + STAGING_BYTES;

		if ((st = gs_synchronize(gpu.ctx)) != GS_OK)
			return st;
		/* the other buffer was drained in the previous round */
		if (next < bytes &&
			(st = gs_copy_to_host(gpu.ctx, gpu.staging[b ^ 1], from + next,
								  Min(STAGING_BYTES, bytes - next))) != GS_OK)
			return st;
		memcpy(to + off, gpu.staging[b], len);
	}
	return GS_OK;
}

/*
 * Puts rows 0..n-1 of host array src (8-byte words) into device buffer b:
 * the upload's rows are there already, the others are uploaded now.
 */
static gs_status
upload_column(GpuBuffer b, const uint64 *src, uint32 n, uint32 uploaded)
{
	TRY(grow_buffer(b, (Size) n * sizeof(uint64), (Size) uploaded * sizeof(uint64)));
	return upload((uint64 *) gpu.buf[b] + uploaded, src + uploaded,
				  (Size) (n - uploaded) * sizeof(uint64));
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

	/* the rows uploaded while they were collected, if that went well */
	INSTR_TIME_SET_CURRENT(t);
	if (job->upload != NULL && job->upload == active_upload && upload_settled())
	{
		uploaded = job->upload->queued;
		times->uploaded_early = uploaded;
		times->wait_ms = ms_since(t);
		active_upload = NULL;	/* this job owns the buffers now */
	}
	else
		drop_upload();			/* this job needs the buffers */

	TRY(upload_column(BUF_LEAD, job->keys[0], n, uploaded));
	TRY(ensure_buffer(BUF_PERM, pbytes));
	if (job->nkeys > 1)
	{
		TRY(ensure_buffer(BUF_KEYS, kbytes));
		TRY(ensure_buffer(BUF_VALS, pbytes));
		TRY(ensure_buffer(BUF_SPARE, pbytes));
	}
	lead = gpu.buf[BUF_LEAD];
	keys = (job->nkeys == 1) ? lead : gpu.buf[BUF_KEYS];
	perm = gpu.buf[BUF_PERM];

	/* the least significant column, from the rows' order */
	if (last > 0)
		TRY(upload(keys, job->keys[last], kbytes));
	times->upload_ms += ms_since(t);
	INSTR_TIME_SET_CURRENT(t);
	TRY(gs_fill_iota(gpu.ctx, perm, n));
	TRY(gs_sort_pairs(gpu.ctx, 64, keys, perm, keys, perm, n, GS_ALGO_AUTO,
					  &times->info));
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
			TRY(ensure_buffer(BUF_RAW, kbytes));
			raw = gpu.buf[BUF_RAW];
			TRY(upload(raw, job->keys[c], kbytes));
			times->upload_ms += ms_since(t);
		}
		INSTR_TIME_SET_CURRENT(t);
		TRY(gs_gather_u64(gpu.ctx, keys, raw, perm, n));
		TRY(gs_fill_iota(gpu.ctx, vals, n));
		TRY(gs_sort_pairs(gpu.ctx, 64, keys, vals, keys, vals, n, GS_ALGO_AUTO,
						  &times->info));
		TRY(gs_gather_u32(gpu.ctx, next, perm, vals, n));
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
		TRY(upload_column(BUF_PAYLOAD, job->payload, n,
						  job->upload && job->upload->payload ? uploaded : 0));
		times->upload_ms += ms_since(t);
		INSTR_TIME_SET_CURRENT(t);
		TRY(gs_gather_u64(gpu.ctx, keys, gpu.buf[BUF_PAYLOAD], perm, n));
		TRY(download(job->payload_out, keys, kbytes));
		times->download_ms += ms_since(t);
		job->payload_sorted = true;
		return GS_OK;
	}

	INSTR_TIME_SET_CURRENT(t);
	TRY(download(job->perm, perm, pbytes));
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
	interrupt_flag = INTERRUPTS_CAN_BE_PROCESSED() ?
		(const volatile int *) &QueryCancelPending : NULL;
	gs_context_set_interrupt(gpu.ctx, interrupt_flag);
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
	interrupt_flag = NULL;

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
			release_device_memory();
			return false;
		default:
			/* a CUDA error may leave the context unusable: start anew */
			*why = psprintf("%s: %s", gs_status_name(st), gs_last_error(gpu.ctx));
			gpu_engine_reset();
			return false;
	}
}

/*
 * Starts the GPU if needed and checks that a sort of device_bytes fits
 * gpusort.gpu_memory; false with the reason otherwise.
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
						"the %zu MB that gpusort.gpu_memory allows",
						device_bytes >> 20, gpu.mem_limit >> 20);
		return false;
	}
	return true;
}

bool
gpu_sort_job(SortJob *job, char **why)
{
	JobTimes	times;

	if (!prepare_sort(job->nrows, job_device_bytes(job->nrows, job->nkeys), why))
		return false;
	if (job->nrows < 2 || job->nkeys == 0)
	{
		if (job->payload)
		{
			memcpy(job->payload_out, job->payload, sizeof(uint64) * job->nrows);
			job->payload_sorted = true;
		}
		else
			for (uint32 i = 0; i < job->nrows; i++)
				job->perm[i] = i;
		return true;
	}

	if (!end_sort(run_watched(run_job, job, &times), why))
		return false;

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
	Size		vbytes = (Size) job->n * sort_value_width(job->type);
	Size		kbytes = (Size) job->n * (sort_value_width(job->type) == 8 ? 8 : 4);
	static const gs_value_type types[] = {
		[SORT_VALUES_INT16] = GS_VALUES_INT16,
		[SORT_VALUES_INT32] = GS_VALUES_INT32,
		[SORT_VALUES_INT64] = GS_VALUES_INT64,
		[SORT_VALUES_FLOAT32] = GS_VALUES_FLOAT32,
		[SORT_VALUES_FLOAT64] = GS_VALUES_FLOAT64,
	};
	instr_time	t;

	TRY(ensure_buffer(BUF_RAW, vbytes));
	TRY(ensure_buffer(BUF_KEYS, kbytes));
	TRY(ensure_buffer(BUF_PERM, (Size) job->n * sizeof(uint32)));

	INSTR_TIME_SET_CURRENT(t);
	TRY(upload(gpu.buf[BUF_RAW], job->in, vbytes));
	times->upload_ms += ms_since(t);
	INSTR_TIME_SET_CURRENT(t);
	TRY(gs_sort_values(gpu.ctx, types[job->type], job->descending, gpu.buf[BUF_RAW],
					   gpu.buf[BUF_KEYS], gpu.buf[BUF_PERM], job->n, &times->info));
	times->sort_ms += ms_since(t);
	INSTR_TIME_SET_CURRENT(t);
	TRY(download(job->out, gpu.buf[BUF_RAW], vbytes));
	times->download_ms += ms_since(t);
	return GS_OK;
}

bool
gpu_sort_values(SortValues *job, char **why)
{
	JobTimes	times;

	if (!prepare_sort(job->n, values_device_bytes(job->n, sort_value_width(job->type)), why))
		return false;
	if (job->n < 2)
	{
		memcpy(job->out, job->in, (Size) job->n * sort_value_width(job->type));
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

static void
upload_context_reset(void *arg)
{
	if (active_upload == arg)
		drop_upload();
}

SortUpload *
sort_upload_rows(SortUpload *upload, int nkeys, const uint64 *keys,
				 const uint64 *payload, uint32 nrows, uint32 capacity,
				 MemoryContext cxt)
{
	if (upload != NULL && upload != active_upload)
		return NULL;			/* its buffers were taken back */
	if (upload == NULL)
	{
		MemoryContextCallback *callback;
		char	   *why;
		double		ms;

		if (active_upload != NULL || !gpu_job_expected(nrows, nkeys) ||
			!gpu_engine_start(&why, &ms) || !gpu_job_fits(capacity, nkeys))
			return NULL;
		upload = MemoryContextAllocZero(cxt, sizeof(SortUpload));
		upload->payload = (payload != NULL);
		callback = MemoryContextAlloc(cxt, sizeof(MemoryContextCallback));
		callback->func = upload_context_reset;
		callback->arg = upload;
		MemoryContextRegisterResetCallback(cxt, callback);
		active_upload = upload;
	}
	if (capacity > upload->capacity)
	{
		Size		keep = (Size) upload->queued * sizeof(uint64);
		Size		bytes = (Size) capacity * sizeof(uint64);

		if (!upload_settled() ||
			grow_buffer(BUF_LEAD, bytes, keep) != GS_OK ||
			(payload && grow_buffer(BUF_PAYLOAD, bytes, keep) != GS_OK))
		{
			drop_upload();
			return NULL;
		}
		upload->capacity = capacity;
	}
	copier_queue((uint64 *) gpu.buf[BUF_LEAD] + upload->queued, keys + upload->queued,
				 (Size) (nrows - upload->queued) * sizeof(uint64));
	if (payload)
		copier_queue((uint64 *) gpu.buf[BUF_PAYLOAD] + upload->queued,
					 payload + upload->queued,
					 (Size) (nrows - upload->queued) * sizeof(uint64));
	upload->queued = nrows;
	return upload;
}

void
sort_upload_pause(SortUpload *upload)
{
	if (upload != NULL && upload == active_upload)
		(void) upload_settled();
}

void
sort_upload_end(SortUpload *upload)
{
	if (upload != NULL && upload == active_upload)
		drop_upload();
}

GpuDeviceInfo *
gpu_list_devices(int *count)
{
	GpuDeviceInfo *devices;
	sigset_t	saved;
	int			n = 0;
	int			found = 0;

	*count = 0;
	if (!IsUnderPostmaster && IsPostmasterEnvironment)
		return NULL;
	signals_block_all(&saved);
	if (gs_device_count(&n) != GS_OK)
		n = 0;
	devices = palloc0(sizeof(GpuDeviceInfo) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		gs_device_info info;

		if (gs_device_get_info(i, &info) != GS_OK)
			continue;
		devices[found].id = i;
		strlcpy(devices[found].name, info.name, sizeof(devices[found].name));
		devices[found].total_mb = (int64) (info.total_mem >> 20);
		devices[found].free_mb = (int64) (info.free_mem >> 20);
		devices[found].multiprocessors = info.multiprocessors;
		devices[found].cc_major = info.cc_major;
		devices[found].cc_minor = info.cc_minor;
		found++;
	}
	signals_restore(&saved);
	*count = found;
	return devices;
}

#else							/* !GPUSORT_WITH_CUDA */

#define NO_CUDA "gpusort was built without CUDA"

SortUpload *
sort_upload_rows(SortUpload *upload, int nkeys, const uint64 *keys,
				 const uint64 *payload, uint32 nrows, uint32 capacity,
				 MemoryContext cxt)
{
	return NULL;
}

void
sort_upload_pause(SortUpload *upload)
{
}

void
sort_upload_end(SortUpload *upload)
{
}

bool
gpu_sort_job(SortJob *job, char **why)
{
	*why = pstrdup(NO_CUDA);
	return false;
}

bool
gpu_sort_values(SortValues *job, char **why)
{
	*why = pstrdup(NO_CUDA);
	return false;
}

bool
gpu_engine_start(char **why, double *ms)
{
	*ms = 0;
	*why = pstrdup(NO_CUDA);
	return false;
}

void
gpu_engine_prestart(void)
{
	if (gpusort_gpu_prestart && IsUnderPostmaster)
		elog(LOG, "gpusort: gpusort.gpu_prestart: %s", NO_CUDA);
}

bool
gpu_engine_started(void)
{
	return false;
}

bool
gpu_engine_unavailable(const char **why)
{
	if (why)
		*why = NO_CUDA;
	return true;
}

double
gpu_estimate_ms(uint32 nrows, int nkeys)
{
	return 0;
}

double
gpu_startup_estimate_ms(void)
{
	return 0;
}

bool
gpu_job_fits(uint32 nrows, int nkeys)
{
	return false;
}

GpuDeviceInfo *
gpu_list_devices(int *count)
{
	*count = 0;
	return NULL;
}

#endif							/* GPUSORT_WITH_CUDA */
