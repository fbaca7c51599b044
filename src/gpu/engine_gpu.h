/*-------------------------------------------------------------------------
 *
 * engine_gpu.h
 *	  The GPU engine (src/gpu/, see gpu_state.h for its files): its entry in
 *	  the engine interface (sort_job.h), starting the GPU, and the device
 *	  list.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ENGINE_GPU_H
#define ENGINE_GPU_H

#include "postgres.h"

#include "engine/sort_job.h"

/*
 * The GPU engine: _PG_init registers it (engine.h).  Without CUDA it is
 * there only to say that it cannot be used, as the functions below do.
 */
extern const SortEngine gpu_sort_engine;

#ifdef GPUSORT_WITH_CUDA
/* What a job is estimated to take on a GPU that runs (cost.c), in ms. */
extern double gpu_estimate_ms(uint32 nrows, int nkeys);
#endif

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

/* The GPUs this backend can see: a palloc'd array, *count entries. */
extern GpuDeviceInfo *gpu_list_devices(int *count);

#endif							/* ENGINE_GPU_H */
