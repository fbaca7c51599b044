/*-------------------------------------------------------------------------
 *
 * cost.c
 *	  The cost model that chooses between the engines in gpusort.device =
 *	  auto.
 *
 * A job goes to the GPU only when that is estimated to pay:
 *
 *	  cpu_ms > (GPU not started yet ? start-up time : 0) + gpu_ms
 *
 * with cpu_ms = rows * key columns * CPU_NS_PER_ROW_KEY and gpu_ms from
 * gpu_estimate_ms() below.  The CPU engine's LSD radix sort costs 10-45 ns
 * per row and key column: fewer for narrow key ranges and inputs that fit
 * the caches; on the H200 host it took 29-46 ns at 1M-10M rows (EXPLAIN
 * ANALYZE's Sort Time less the reordering of the rows).  So, once the GPU runs, jobs of more than about
 * 50 000 rows go to it; before, only jobs of more than about 10 million
 * row-keys, which pay for its start-up (~275 ms there: a backend that wants
 * the GPU from its first query can start it ahead, with
 * gpusort.gpu_prestart or gpusort_gpu_start()).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "engine/cost.h"
#include "settings.h"

/* The CPU engine's cost per row and key column, in nanoseconds. */
#define CPU_NS_PER_ROW_KEY	30.0

/*
 * The GPU engine's, from its phase times on an H200 host (16 cores) at 1M
 * and 10M rows: CUDA starts in about 275 ms in a new backend.  Per key
 * column, about 1 ms of launches and synchronizations (the sort's passes)
 * plus, per row, 8 bytes moved to the device through the pinned staging
 * buffers (~8 GB/s, bound by the CPU's copy into them) and sorted (~0.2
 * ns): 1.2 ns.  Per job, 0.5 ms plus, per row, 4 bytes of permutation back
 * (~2.5 GB/s, bound by the first touch of the caller's fresh memory): 1.6 ns.
 */
#define GPU_STARTUP_MS			275.0
#define GPU_JOB_MS				0.5
#define GPU_COLUMN_MS			1.0
#define GPU_NS_PER_ROW_KEY		1.2
#define GPU_NS_PER_ROW			1.6

double
cpu_estimate_ms(uint32 nrows, int nkeys)
{
	return (double) nrows * nkeys * CPU_NS_PER_ROW_KEY / 1e6;
}

double
gpu_estimate_ms(uint32 nrows, int nkeys)
{
	return GPU_JOB_MS + nkeys * GPU_COLUMN_MS +
		((double) nrows * (nkeys * GPU_NS_PER_ROW_KEY + GPU_NS_PER_ROW)) / 1e6;
}

static double
gpu_startup_estimate_ms(const SortEngine *gpu)
{
	/* a backend that started the GPU before knows what it costs */
	double		measured = gpu->startup_ms();

	return measured > 0 ? measured : GPU_STARTUP_MS;
}

bool
gpu_pays(const SortEngine *gpu, uint32 nrows, int nkeys, const char **why)
{
	double		cpu_ms;
	double		gpu_ms;

	*why = NULL;
	if (gpu == NULL)
	{
		*why = "gpusort was built without CUDA";
		return false;
	}
	if (gpu->unavailable(why))
		return false;
	if (!gpu->job_fits(nrows, nkeys))
	{
		*why = gpu->too_large;
		return false;
	}
	cpu_ms = cpu_estimate_ms(nrows, nkeys);
	gpu_ms = gpu_estimate_ms(nrows, nkeys);
	if (!gpu->started())
		gpu_ms += gpu_startup_estimate_ms(gpu);
	return cpu_ms > gpu_ms;
}

bool
gpu_job_expected(const SortEngine *gpu, int device, uint32 nrows, int nkeys)
{
	const char *why;

	if (gpu == NULL || device == GPUSORT_DEVICE_CPU)
		return false;
	if (device == GPUSORT_DEVICE_GPU)
		return true;
	return gpu->started() && gpu_pays(gpu, nrows, nkeys, &why);
}
