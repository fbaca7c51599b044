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
 * gpu_estimate_ms() (the GPU engine, which documents its constants).  The
 * CPU engine's LSD radix sort costs 10-45 ns per row and key column: fewer
 * for narrow key ranges and inputs that fit the caches; on the H200 host
 * it took 29-46 ns at 1M-10M rows (EXPLAIN ANALYZE's Sort Time less the
 * reordering of the rows).  So, once the GPU runs, jobs of more than about
 * 50 000 rows go to it; before, only jobs of more than about 10 million
 * row-keys, which pay for its start-up (~275 ms there: a backend that wants
 * the GPU from its first query can start it ahead, with
 * gpusort.gpu_prestart or gpusort_gpu_start()).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "engine/cost.h"
#include "gpu/engine_gpu.h"
#include "settings.h"

/* The CPU engine's cost per row and key column, in nanoseconds. */
#define CPU_NS_PER_ROW_KEY	30.0

bool
gpu_pays(uint32 nrows, int nkeys, const char **why)
{
#ifdef GPUSORT_WITH_CUDA
	double		cpu_ms;
	double		gpu_ms;

	*why = NULL;
	if (gpu_engine_unavailable(why))
		return false;
	if (!gpu_job_fits(nrows, nkeys))
	{
		*why = "the sort needs more device memory than gpusort.gpu_memory allows";
		return false;
	}
	cpu_ms = (double) nrows * nkeys * CPU_NS_PER_ROW_KEY / 1e6;
	gpu_ms = gpu_estimate_ms(nrows, nkeys);
	if (!gpu_engine_started())
		gpu_ms += gpu_startup_estimate_ms();
	return cpu_ms > gpu_ms;
#else
	*why = "gpusort was built without CUDA";
	return false;
#endif
}

bool
gpu_job_expected(uint32 nrows, int nkeys)
{
	const char *why;

	if (gpusort_device == GPUSORT_DEVICE_GPU)
		return true;
	return gpusort_device == GPUSORT_DEVICE_AUTO && gpu_engine_started() &&
		gpu_pays(nrows, nkeys, &why);
}
