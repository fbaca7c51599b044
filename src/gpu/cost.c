/*-------------------------------------------------------------------------
 *
 * cost.c
 *	  The cost model's GPU side (engine.c has the CPU side and chooses):
 *	  what a job costs on the GPU, what starting the GPU costs, and the
 *	  device memory a job needs.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef GPUSORT_WITH_CUDA

#include "gpu/gpu_state.h"

/*
 * The estimates, from the engine's phase times on an H200 host (16 cores)
 * at 1M and 10M rows:
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

/* Device memory for kernel scratch beyond the per-row estimate. */
#define SCRATCH_SLACK_BYTES		((Size) 32 * 1024 * 1024)

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

/* Device bytes a sort of n values of the given width needs at most. */
Size
gpu_values_device_bytes(uint32 n, int width)
{
	/* the values, their keys and vals as a one-column job's keys and perm */
	return gpu_job_device_bytes(n, 1) + (Size) ((double) n * width * 9.0 / 8.0);
}

#endif							/* GPUSORT_WITH_CUDA */
