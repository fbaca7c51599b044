/*-------------------------------------------------------------------------
 *
 * engine.c
 *	  Chooses the engine that runs a sort job (gpusort.device) and falls
 *	  back to the CPU engine when the GPU cannot run it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "gpusort.h"
#include "sort_engine.h"

const char *
sort_engine_name(SortEngineKind engine)
{
	switch (engine)
	{
		case SORT_ENGINE_CPU:
			return "cpu";
		case SORT_ENGINE_GPU:
			return "gpu";
	}
	return "unknown";
}

void
sort_job_run(SortJob *job, SortJobReport *report)
{
	report->engine = SORT_ENGINE_CPU;
	report->fallback_reason = NULL;

	if (gpusort_device != GPUSORT_DEVICE_CPU)
	{
#ifdef GPUSORT_WITH_CUDA
		if (gpu_sort_job(job, &report->fallback_reason))
		{
			report->engine = SORT_ENGINE_GPU;
			return;
		}
#else
		report->fallback_reason = pstrdup("gpusort was built without CUDA");
#endif
	}
	cpu_sort_job(job);
}
