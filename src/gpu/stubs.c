/*-------------------------------------------------------------------------
 *
 * stubs.c
 *	  The GPU's API in a build without CUDA (GPUSORT_CUDA=no): the GPU
 *	  engine is never available, no GPU starts and none is listed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifndef GPUSORT_WITH_CUDA

#include "miscadmin.h"

#include "gpu/engine_gpu.h"
#include "settings.h"

#define NO_CUDA "gpusort was built without CUDA"

bool
gpu_engine_start(char **why, double *ms)
{
	*ms = 0;
	*why = pstrdup(NO_CUDA);
	return false;
}

void
gpu_engine_prestart(void)
{
	if (gpusort_gpu_prestart && IsUnderPostmaster)
		elog(LOG, "gpusort: gpusort.gpu_prestart: %s", NO_CUDA);
}

GpuDeviceInfo *
gpu_list_devices(int *count)
{
	*count = 0;
	return NULL;
}

static bool
no_cuda(const char **why)
{
	if (why)
		*why = NO_CUDA;
	return true;
}

static bool
no_cuda_sort_job(SortJob *job, char **why)
{
	*why = NO_CUDA;
	return false;
}

static bool
no_cuda_sort_values(SortValues *values, char **why)
{
	*why = NO_CUDA;
	return false;
}

const SortEngine gpu_sort_engine = {
	.name = "gpu",
	.title = "GPU",
	.sort_job = no_cuda_sort_job,
	.sort_values = no_cuda_sort_values,
	.unavailable = no_cuda,
};

#endif							/* !GPUSORT_WITH_CUDA */
