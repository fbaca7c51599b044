/*-------------------------------------------------------------------------
 *
 * engine_gpu.h
 *	  The GPU engine: its entry in the engine interface (sort_job.h), its
 *	  side of the early upload, starting the GPU, the GPU's side of the cost
 *	  model, and the device list.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ENGINE_GPU_H
#define ENGINE_GPU_H

#include "postgres.h"

#include "engine/sort_job.h"

/* The GPU engine (built with CUDA; without, its functions fail). */
extern const SortEngine gpu_sort_engine;

/*
 * The GPU's side of the early upload (keys/row_store.h's RowStoreUploader;
 * the chooser decides which jobs use it).
 */
extern struct SortUpload *gpu_upload_rows(struct SortUpload *upload, int nkeys,
										  const uint64 *keys, const uint64 *payload,
										  uint32 nrows, uint32 capacity,
										  MemoryContext cxt);
extern void gpu_upload_pause(struct SortUpload *upload);
extern void gpu_upload_end(struct SortUpload *upload);

/* One GPU, as gpusort_devices() shows it. */
typedef struct GpuDeviceInfo
{
	int			id;
	char		name[256];
	int64		total_mb;
	int64		free_mb;
	int			multiprocessors;
	int			cc_major;
	int			cc_minor;
} GpuDeviceInfo;

/*
 * Starts the GPU in this backend (CUDA, the context on gpusort.gpu_id, the
 * pinned staging buffers) unless it runs already.  Returns false, with the
 * reason in *why, when it cannot; *ms gets the time this call took.
 */
extern bool gpu_engine_start(char **why, double *ms);

/* Starts the GPU at library load when gpusort.gpu_prestart asks for it. */
extern void gpu_engine_prestart(void);

/* Is the GPU running in this backend? */
extern bool gpu_engine_started(void);

/*
 * Is it known that this backend cannot use a GPU at all (no device, no
 * driver)?  Set by a failed start; the reason is in *why when not NULL.
 */
extern bool gpu_engine_unavailable(const char **why);

/*
 * The cost model's GPU side: the estimated milliseconds to sort a job on the
 * GPU once it runs, and to start it.  gpu_job_fits() says whether the job's
 * device memory fits gpusort.gpu_memory (true when that is not known yet).
 */
extern double gpu_estimate_ms(uint32 nrows, int nkeys);
extern double gpu_startup_estimate_ms(void);
extern bool gpu_job_fits(uint32 nrows, int nkeys);


/* The GPUs this backend can see: a palloc'd array, *count entries. */
extern GpuDeviceInfo *gpu_list_devices(int *count);


#endif							/* ENGINE_GPU_H */
