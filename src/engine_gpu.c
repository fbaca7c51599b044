/*-------------------------------------------------------------------------
 *
 * engine_gpu.c
 *	  The GPU sort engine.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "sort_engine.h"

bool
gpu_sort_job(SortJob *job, char **why)
{
	*why = pstrdup("the GPU engine is not available yet");
	return false;
}
