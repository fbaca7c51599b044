/*-------------------------------------------------------------------------
 *
 * service_info.c
 *	  The SQL functions behind the gpusort_service views: what the GPU
 *	  service publishes in shared memory.
 *
 *		gpusort_service_status()     one row per GPU of the service
 *		gpusort_service_fallbacks()  sorts that went to the CPU instead, by
 *									 reason, for all backends
 *
 *	  Without the service (not preloaded, gpusort.service off, no CUDA in
 *	  this build) they return no rows.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "service/service.h"

PG_FUNCTION_INFO_V1(gpusort_service_status);
PG_FUNCTION_INFO_V1(gpusort_service_fallbacks);

/*
 * gpusort_service_status() RETURNS TABLE (gpu int4, device int4, name text,
 *   state text, pid int4, jobs int8, rows int8, busy_ms float8,
 *   failures int8, restarts int8, queued_jobs int4, memory_limit_mb int8,
 *   memory_used_mb int8, reason text)
 */
Datum
gpusort_service_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ServiceGpuStatus *gpus = palloc(sizeof(ServiceGpuStatus) * SERVICE_MAX_GPUS);
	int			queued;
	int			n;

	InitMaterializedSRF(fcinfo, 0);
	n = gpu_service_status(gpus, SERVICE_MAX_GPUS, &queued);
	for (int i = 0; i < n; i++)
	{
		ServiceGpuStatus *g = &gpus[i];
		Datum		values[14];
		bool		nulls[14] = {0};
		bool		has_device = g->info.name[0] != '\0';

		values[0] = Int32GetDatum(g->gpu);
		values[1] = Int32GetDatum(g->info.id);
		nulls[1] = !has_device;
		values[2] = CStringGetTextDatum(g->info.name);
		nulls[2] = !has_device;
		values[3] = CStringGetTextDatum(g->state);
		values[4] = Int32GetDatum(g->pid);
		nulls[4] = g->pid == 0;
		values[5] = Int64GetDatum(g->jobs);
		values[6] = Int64GetDatum(g->rows);
		values[7] = Float8GetDatum(g->busy_ms);
		values[8] = Int64GetDatum(g->failures);
		values[9] = Int64GetDatum(g->restarts);
		values[10] = Int32GetDatum(queued);
		values[11] = Int64GetDatum(g->memory_limit_mb);
		values[12] = Int64GetDatum(g->memory_used_mb);
		values[13] = CStringGetTextDatum(g->reason);
		nulls[13] = g->reason[0] == '\0';
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* gpusort_service_fallbacks() RETURNS TABLE (reason text, sorts int8) */
Datum
gpusort_service_fallbacks(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		counts[SERVICE_NUM_FALLBACKS];

	InitMaterializedSRF(fcinfo, 0);
	if (!gpu_service_enabled())
		return (Datum) 0;
	gpu_service_fallbacks(counts);
	for (int i = 0; i < SERVICE_NUM_FALLBACKS; i++)
	{
		Datum		values[2];
		bool		nulls[2] = {0};

		values[0] = CStringGetTextDatum(service_fallback_names[i]);
		values[1] = Int64GetDatum(counts[i]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
