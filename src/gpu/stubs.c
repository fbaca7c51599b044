/*-------------------------------------------------------------------------
 *
 * stubs.c
 *	  The GPU's API in a build without CUDA (GPUSORT_CUDA=no): there is no
 *	  GPU engine to register, no GPU starts and none is listed.
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

#endif							/* !GPUSORT_WITH_CUDA */
