/*-------------------------------------------------------------------------
 *
 * engine_gpu.h
 *	  The GPU engine (src/gpu/, see gpu_state.h for its files): its entry in
 *	  the engine interface (sort_job.h), starting the GPU, the device list,
 *	  and what a GPU process of the service runs of it.
 *
 * A process runs one GPU engine.  A backend's engine runs on the device
 * and within the device memory that gpusort.gpu_id and gpusort.gpu_memory
 * say, and starts again when they change; a GPU process of the service
 * starts its engine with a device and memory limit of its own
 * (gpu_engine_start_with), pins its host buffer and sets its cancel flag
 * through the functions below.
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
	char		unsupported[256];	/* why gpusort's kernels cannot run on
									 * it (too old a GPU, no code for it), or
									 * "" */
} GpuDeviceInfo;

/*
 * Starts the GPU in this process (CUDA, the context, the pinned staging
 * buffers) unless it runs already: on the device and within the memory
 * that gpu_engine_start_with() gave it, else, in a backend, that
 * gpusort.gpu_id and gpusort.gpu_memory say now.  Returns false, with the
 * reason in *why, when it cannot; *ms gets the time this call took.
 */
extern bool gpu_engine_start(char **why, double *ms);

/* Starts the GPU at library load when gpusort.gpu_prestart asks for it. */
extern void gpu_engine_prestart(void);

/* The GPUs this backend can see: a palloc'd array, *count entries. */
extern GpuDeviceInfo *gpu_list_devices(int *count);

#ifdef GPUSORT_WITH_CUDA

/*
 * What a GPU process of the service runs of the engine (the service exists
 * in CUDA builds only).
 */

/* The device and the device memory that an engine runs with. */
typedef struct GpuEngineConfig
{
	int			device;			/* the CUDA device */
	int			memory_mb;		/* device memory it may hold, in MB; 0: 80%
								 * of what the device has free at its start */
	const char *memory_setting; /* the setting that limits it, for messages
								 * (a string that lives as long as the
								 * process) */
} GpuEngineConfig;

/*
 * Starts the GPU as gpu_engine_start() does, with config instead of the
 * backend's settings, for as long as the process runs: the engine of a GPU
 * process of the service.
 */
extern bool gpu_engine_start_with(const GpuEngineConfig *config, char **why,
								  double *ms);

/* Why gpu_list_devices() found no GPU: the driver's word (no driver, ...). */
extern const char *gpu_no_devices_reason(void);

/*
 * Pins bytes of host memory at base for the started GPU, which then copies
 * jobs from and into them directly, with no staging of its own (a GPU
 * process: the service's buffer).  False, with the reason in *why, where
 * CUDA cannot pin them.
 */
extern bool gpu_engine_pin_host(void *base, Size bytes, char **why);

/*
 * What the engine's jobs watch for a cancel instead of QueryCancelPending
 * (a GPU process: the flag of the job's slot), or NULL: that again.
 */
extern void gpu_engine_set_cancel_flag(const volatile int *flag);

/* The device memory the started engine may hold, and holds now (0: none). */
extern Size gpu_engine_mem_limit(void);
extern Size gpu_engine_mem_used(void);

/* Device bytes a job, or a sort of values, needs at most. */
extern Size gpu_job_device_bytes(uint32 nrows, int nkeys);
extern Size gpu_values_device_bytes(uint32 n, int width);

/*
 * Rows of inputs larger than a node's memory budget, held by a GPU process
 * of the service for a backend (stage.c; a backend's own engine holds its
 * rows through the engine's RowStager): each store comes laid out flat
 * (its tuple blocks back to back, bytes in all, then the nwords words of
 * the rows' keys, word 0 of every row first, and each row's place in the
 * blocks and length; the places are changed), and the rows go back into
 * the backend's shared memory, at most gpu_stage_chunk_bytes() of an input
 * whose budget is host_bytes at a time.
 */
typedef struct SortStage SortStage;
extern Size gpu_stage_chunk_bytes(Size host_bytes);

/*
 * The device memory that an input held takes, as a multiple of the bytes
 * its rows take on the host: its keys, their places and lengths, and its
 * sort's room beside the rows take about as much again (10M rows of 114
 * bytes expected did not fit two parts of 1 GB each, on an H200 pair).
 * gpu_stage_room: the room kept for an input whose rows are expected to
 * take expected_bytes, on a GPU process that may hold mem_limit bytes (an
 * input whose room is all of it is held alone).
 */
#define GPU_STAGE_DEVICE_FACTOR	2.0
extern double gpu_stage_room(double expected_bytes, Size mem_limit);

/* Device bytes of a row held beside its tuple: its key words, place, length. */
extern Size gpu_stage_row_bytes(int nwords);

extern SortStage *gpu_stage_begin(Size host_bytes, double expected_bytes,
								  char **why);
extern bool gpu_stage_add_flat(SortStage *stage, const char *arena, Size bytes,
							   const uint64 *keys, int nwords, uint64 *places,
							   const uint32 *lengths, uint32 n, char **why);
extern bool gpu_stage_sort(SortStage *stage, int group_words, char **why);
extern uint64 gpu_stage_rows(SortStage *stage);
extern int64 gpu_stage_next_into(SortStage *stage, uint64 first, char *dest,
								 Size dest_bytes, Size *need, char **why);
extern void gpu_stage_end(SortStage *stage);

/*
 * Was the last failure of gpu_stage_begin or gpu_stage_add_flat a decline
 * for want of room within the memory setting (not an error)?
 */
extern bool gpu_stage_declined(void);

/*
 * And was that (a new input, or a store of one held) declined only for the
 * room kept for the inputs held beside it (alone, it would fit)?
 */
extern bool gpu_stage_declined_busy(void);

/*
 * Device bytes kept for the inputs held here (each one's larger of what it
 * holds and what it is expected to take): what a new input must fit beside,
 * where the sorts' buffers and scratch, given back when an input begins,
 * do not count.
 */
extern double gpu_stage_committed_bytes(void);

#endif							/* GPUSORT_WITH_CUDA */

#endif							/* ENGINE_GPU_H */
