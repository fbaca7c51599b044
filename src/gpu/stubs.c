/*-------------------------------------------------------------------------
 *
 * stubs.c
 *	  The GPU engine's API in a build without CUDA (GPUSORT_CUDA=no): there
 *	  is no GPU, every sort fails with the reason, and every estimate is 0.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifndef GPUSORT_WITH_CUDA

#include "miscadmin.h"

#include "engine/sort_engine.h"
#include "gpu/engine_gpu.h"
#include "settings.h"

#define NO_CUDA "gpusort was built without CUDA"

SortUpload *
sort_upload_rows(SortUpload *upload, int nkeys, const uint64 *keys,
				 const uint64 *payload, uint32 nrows, uint32 capacity,
				 MemoryContext cxt)
{
	return NULL;
}

void
sort_upload_pause(SortUpload *upload)
{
}

void
sort_upload_end(SortUpload *upload)
{
}

bool
gpu_sort_job(SortJob *job, char **why)
{
	*why = pstrdup(NO_CUDA);
	return false;
}

bool
gpu_sort_values(SortValues *job, char **why)
{
	*why = pstrdup(NO_CUDA);
	return false;
}

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

bool
gpu_engine_started(void)
{
	return false;
}

bool
gpu_engine_unavailable(const char **why)
{
	if (why)
		*why = NO_CUDA;
	return true;
}

double
gpu_estimate_ms(uint32 nrows, int nkeys)
{
	return 0;
}

double
gpu_startup_estimate_ms(void)
{
	return 0;
}

bool
gpu_job_fits(uint32 nrows, int nkeys)
{
	return false;
}

GpuDeviceInfo *
gpu_list_devices(int *count)
{
	*count = 0;
	return NULL;
}

#endif							/* !GPUSORT_WITH_CUDA */
