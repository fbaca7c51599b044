/*-------------------------------------------------------------------------
 *
 * gpu_state.h
 *	  The GPU engine's internal state and the prototypes its files share
 *	  (CUDA builds only; the API is engine_gpu.h, and sort_job.h's interface).
 *
 * The engine is split by concern:
 *
 *	  context.c   the process's CUDA lifecycle: start (with its device
 *				  and memory limit), reset, exit
 *	  cost.c	  the cost model's GPU side
 *	  memory.c	  a job's device memory, and the engine's
 *	  buffers.c   the device buffers, copies through the pinned staging
 *				  buffers, and host memory that the caller pinned
 *	  jobs.c	  running sort jobs and value sorts, cancels, failures
 *	  upload.c	  uploading a job's rows while they are collected
 *	  gpu_copier.c the copy thread of those uploads
 *	  stage.c	  holding the rows of inputs over a node's memory budget
 *	  devices.c   the device list
 *	  stubs.c	  the API of both builds, in builds without CUDA
 *
 * All of them share one GpuEngine, gpu, which holds a process's context,
 * its buffers and its staging buffers while the GPU runs: a process (a
 * backend, or a GPU process of the service) runs one engine.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPU_STATE_H
#define GPU_STATE_H

#include "postgres.h"

#include "engine/sort_job.h"
#include "gpu/engine_gpu.h"
#include "gpu/gpu_copier.h"
#include "gpusort_cuda.h"
#include "util/timing.h"

/* Each of the two pinned staging buffers. */
#define STAGING_BYTES			((Size) 16 * 1024 * 1024)

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

/* Rows of a job uploaded while they are collected (upload.c). */
struct SortUpload
{
	uint32		queued;			/* rows queued for the copy thread */
	uint32		capacity;		/* rows that BUF_LEAD and BUF_PAYLOAD hold */
	bool		payload;		/* the payload is uploaded too */
};

typedef struct GpuEngine
{
	gs_context *ctx;			/* NULL: not started */
	GpuEngineConfig config;		/* what it was last started with (its
								 * memory_setting names the setting that
								 * limits mem_limit, in messages) */
	Size		mem_limit;		/* device bytes the context may hold */
	double		startup_ms;		/* what the last start took */
	void	   *staging[2];		/* pinned host buffers of STAGING_BYTES */
	void	   *buf[NUM_BUFFERS];
	Size		buf_bytes[NUM_BUFFERS];
	bool		exit_callback;	/* registered with on_proc_exit */
	bool		unavailable;	/* no GPU in this backend, ever ... */
	int			unavailable_device; /* ... or not this device (-1: none) */
	char		unavailable_reason[512];
	SortUpload *active_upload;	/* the upload that owns BUF_LEAD and
								 * BUF_PAYLOAD, or NULL (upload.c) */
	const volatile int *interrupt_flag; /* what the current job watches, or
										 * NULL (jobs.c) */
	const char *pinned_base;	/* host memory pinned by the caller (the
								 * service's buffer), copied without the
								 * staging buffers, or NULL
								 * (gpu_engine_pin_host) */
	Size		pinned_bytes;
	const volatile int *cancel_source;	/* what jobs watch instead of
										 * QueryCancelPending (a GPU process
										 * of the service), or NULL
										 * (gpu_engine_set_cancel_flag) */
} GpuEngine;

extern GpuEngine gpu;

/* Returns from the calling function the status of call if it failed. */
#define TRY(call) \
	do { \
		gs_status	st_ = (call); \
		if (st_ != GS_OK) \
			return st_; \
	} while (0)

/* Has the current job been interrupted (a cancel, a timeout)? */
static inline bool
gpu_interrupted(void)
{
	return gpu.interrupt_flag != NULL && *gpu.interrupt_flag;
}

/* context.c: releases everything; the next job starts the GPU again. */
extern void gpu_engine_reset(void);

/* stage.c: rows of inputs larger than a node's memory budget */
extern const RowStager gpu_stager;
extern Size gpu_stage_held_bytes(void);	/* device bytes of all inputs held */

/* buffers.c: the device buffers. */
extern gs_status gpu_buffer_ensure(GpuBuffer b, Size bytes);
extern gs_status gpu_buffer_grow(GpuBuffer b, Size bytes, Size keep);
extern void gpu_buffers_release(void);

/* buffers.c: copies through the staging buffers. */
extern gs_status gpu_staged_upload(void *dst, const void *src, Size bytes);
extern gs_status gpu_staged_download(void *dst, const void *src, Size bytes);
extern gs_status gpu_upload_column(GpuBuffer b, const uint64 *src, uint32 n,
								   uint32 uploaded);

/*
 * upload.c: the upload during collection that owns BUF_LEAD and
 * BUF_PAYLOAD.  gpu_early_upload_claim() hands them to upload's job (true,
 * its copies all done) or takes them back from whichever upload holds them
 * (false).
 */
extern bool gpu_early_upload_claim(SortUpload *upload);

/*
 * Stops the active upload, if any (its job will upload its rows itself):
 * before the buffers it fills are freed or taken.
 */
static inline void
gpu_early_upload_drop(void)
{
	if (gpu.active_upload == NULL)
		return;
	copier_cancel();
	gpu.active_upload = NULL;
}

/*
 * A pass of a sort by several key columns, the least significant first: the
 * column's keys in the order so far (perm) gathered into scratch, sorted
 * stably with their positions (vals), which make next the order after the
 * pass.  info (may be NULL) says what the sort ran.  Jobs (jobs.c) and the
 * rows held (stage.c) sort their key columns so.
 */
static inline gs_status
gpu_sort_by_column(uint64 *scratch, const uint64 *column, const uint32 *perm,
				   uint32 *vals, uint32 *next, uint64 n, gs_sort_info *info)
{
	TRY(gs_gather_u64(gpu.ctx, scratch, column, perm, n));
	TRY(gs_fill_iota(gpu.ctx, vals, n));
	TRY(gs_sort_pairs(gpu.ctx, 64, scratch, vals, scratch, vals, n, GS_ALGO_AUTO, info));
	return gs_gather_u32(gpu.ctx, next, perm, vals, n);
}

/* The GPU's SortEngine callbacks, and what gpu/cost.c asks of it. */
extern bool gpu_engine_started(void);
extern bool gpu_engine_unavailable(const char **why);
extern double gpu_engine_startup_ms(void);
extern bool gpu_job_fits(uint32 nrows, int nkeys);
extern double gpu_engine_estimate_ms(uint32 nrows, int nkeys, const char **why);

/* The GPU's side of the early upload (upload.c). */
extern const RowStoreUploader gpu_uploader;

#endif							/* GPU_STATE_H */
