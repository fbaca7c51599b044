/*-------------------------------------------------------------------------
 *
 * cost.c
 *	  The cost model's GPU side (engine/cost.c): what a job is estimated to
 *	  take on the GPU, and the GPU engine's estimate_ms, which adds its
 *	  start where it has not started in this backend.
 *
 * The estimate comes from the phase times on an H200 host (16 cores) at 1M
 * and 10M rows: CUDA starts in about 275 ms in a new backend.  Per key
 * column, about 1 ms of launches and synchronizations (the sort's passes)
 * plus, per row, 8 bytes moved to the device through the pinned staging
 * buffers (~8 GB/s, bound by the CPU's copy into them) and sorted (~0.2
 * ns): 1.2 ns.  Per job, 0.5 ms plus, per row, 4 bytes of permutation back
 * (~2.5 GB/s, bound by the first touch of the caller's fresh memory): 1.6
 * ns.  Against the CPU engine's 30 ns per row and key column, once the GPU
 * runs, jobs of more than about 50 000 rows go to it; before, only jobs of
 * more than about 10 million row-keys, which pay for its start-up (a
 * backend that wants the GPU from its first query can start it ahead, with
 * gpusort.gpu_prestart or gpusort_gpu_start()).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef GPUSORT_WITH_CUDA

#include "gpu/gpu_state.h"

#define GPU_STARTUP_MS			275.0
#define GPU_JOB_MS				0.5
#define GPU_COLUMN_MS			1.0
#define GPU_NS_PER_ROW_KEY		1.2
#define GPU_NS_PER_ROW			1.6

double
gpu_estimate_ms(uint32 nrows, int nkeys)
{
	return GPU_JOB_MS + nkeys * GPU_COLUMN_MS +
		((double) nrows * (nkeys * GPU_NS_PER_ROW_KEY + GPU_NS_PER_ROW)) / 1e6;
}

double
gpu_engine_estimate_ms(uint32 nrows, int nkeys, const char **why)
{
	double		ms = gpu_estimate_ms(nrows, nkeys);

	if (!gpu_job_fits(nrows, nkeys))
	{
		*why = "the sort needs more device memory than gpusort.gpu_memory allows";
		return -1;
	}
	if (!gpu_engine_started())
	{
		/* a backend that started the GPU before knows what it costs */
		double		measured = gpu_engine_startup_ms();

		ms += measured > 0 ? measured : GPU_STARTUP_MS;
	}
	return ms;
}

#endif							/* GPUSORT_WITH_CUDA */
