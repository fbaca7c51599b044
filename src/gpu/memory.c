/*-------------------------------------------------------------------------
 *
 * memory.c
 *	  The device memory a job needs, whether it fits the engine's limit
 *	  (gpusort.gpu_memory in a backend), and what the engine holds.  What a
 *	  job costs in time is the cost model's.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef GPUSORT_WITH_CUDA

#include "gpu/gpu_state.h"

/* Device memory for kernel scratch beyond the per-row estimate. */
#define SCRATCH_SLACK_BYTES		((Size) 32 * 1024 * 1024)

bool
gpu_job_fits(uint32 nrows, int nkeys)
{
	if (!gpu_engine_started())
		return true;			/* not known before the start */
	return gpu_job_device_bytes(nrows, nkeys) <= gpu.mem_limit;
}

/*
 * Device bytes a job of nrows rows and nkeys columns needs at most, a
 * payload included (one-column jobs always count its raw buffer).
 */
Size
gpu_job_device_bytes(uint32 nrows, int nkeys)
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

Size
gpu_engine_mem_limit(void)
{
	return gpu.mem_limit;
}

Size
gpu_engine_mem_used(void)
{
	return gpu.ctx ? gs_context_mem_used(gpu.ctx) : 0;
}

/* Device bytes a sort of n values of the given width needs at most. */
Size
gpu_values_device_bytes(uint32 n, int width)
{
	/* the values, their keys and vals as a one-column job's keys and perm */
	return gpu_job_device_bytes(n, 1) + (Size) ((double) n * width * 9.0 / 8.0);
}

#endif							/* GPUSORT_WITH_CUDA */
