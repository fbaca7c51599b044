/*-------------------------------------------------------------------------
 *
 * engine_gpu.h
 *	  What the GPU engine (src/gpu/, see gpu_state.h for its files) and the
 *	  engine chooser (engine.c) offer besides the seam in sort_engine.h:
 *	  starting the GPU, the cost model's GPU side, the device list, and the
 *	  per-backend statistics that the SQL functions of gpu_info.c return.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ENGINE_GPU_H
#define ENGINE_GPU_H

#include "postgres.h"

#include "engine/sort_engine.h"

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

/*
 * Would a job of nrows rows go to the GPU (engine.c)?  Asked before the job
 * exists, to upload its rows early.
 */
extern bool gpu_job_expected(uint32 nrows, int nkeys);

/* The GPUs this backend can see: a palloc'd array, *count entries. */
extern GpuDeviceInfo *gpu_list_devices(int *count);

/* Per-backend statistics of sort_job_run, by engine (engine.c). */
typedef struct EngineStats
{
	int64		sorts;			/* jobs this engine produced */
	int64		rows;			/* rows of those jobs */
	double		total_ms;		/* time in sort_job_run for them */
	int64		fallbacks;		/* cpu: jobs with a fallback reason; gpu:
								 * GPU attempts that failed */
	char		last_reason[256];	/* the latest such reason, or "" */
} EngineStats;

extern const EngineStats *sort_engine_stats(SortEngineKind engine);
extern void sort_engine_stats_reset(void);

#endif							/* ENGINE_GPU_H */
