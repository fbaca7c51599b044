/*-------------------------------------------------------------------------
 *
 * gpu_info.c
 *	  The SQL functions that show and start the GPU and report what the
 *	  engines did in this backend:
 *
 *		gpusort_devices()      the GPU service's GPUs, or those this backend
 *							   sees without the service (none: no rows)
 *		gpusort_gpu_start()    starts the GPU now; the milliseconds it took
 *							   (0 with the service, which runs it; NULL
 *							   where no GPU can be used)
 *		gpusort_stats()        sorts, rows and time by engine, and fallbacks
 *		gpusort_stats_reset()  zeroes those counters
 *
 *	  None of them fails for want of a GPU.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "engine/engine.h"
#include "gpu/engine_gpu.h"
#include "service/service.h"

PG_FUNCTION_INFO_V1(gpusort_devices);
PG_FUNCTION_INFO_V1(gpusort_gpu_start);
PG_FUNCTION_INFO_V1(gpusort_stats);
PG_FUNCTION_INFO_V1(gpusort_stats_reset);

/*
 * gpusort_devices() RETURNS TABLE (id int4, name text, total_memory_mb int8,
 *   free_memory_mb int8, multiprocessors int4, compute_capability text)
 */
Datum
gpusort_devices(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GpuDeviceInfo *devices;
	int			count;

	InitMaterializedSRF(fcinfo, 0);
	/* the service's GPUs, else those this backend sees */
	if (gpu_service_enabled())
		devices = gpu_service_devices(&count);
	else
		devices = gpu_list_devices(&count);
	for (int i = 0; i < count; i++)
	{
		Datum		values[6];
		bool		nulls[6] = {0};

		values[0] = Int32GetDatum(devices[i].id);
		values[1] = CStringGetTextDatum(devices[i].name);
		values[2] = Int64GetDatum(devices[i].total_mb);
		values[3] = Int64GetDatum(devices[i].free_mb);
		values[4] = Int32GetDatum(devices[i].multiprocessors);
		values[5] = CStringGetTextDatum(psprintf("%d.%d", devices[i].cc_major,
												 devices[i].cc_minor));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * gpusort_gpu_start() RETURNS float8: starts the GPU in this backend and
 * returns the milliseconds that took (0 when it ran already, or where the
 * GPU service runs it), or NULL with a WARNING when no GPU can be used (with
 * the service: none of its GPUs is ready).
 */
Datum
gpusort_gpu_start(PG_FUNCTION_ARGS)
{
	char	   *why = NULL;
	double		ms;

	if (gpu_service_enabled())
	{
		if (gpu_service_gpus_ready() > 0)
		{
			ereport(NOTICE,
					(errmsg("gpusort: the GPU service runs the GPU; backends do not start it")));
			PG_RETURN_FLOAT8(0);
		}
		why = "No GPU of the GPU service is ready (see the gpusort_service view).";
	}
	else if (gpu_engine_start(&why, &ms))
		PG_RETURN_FLOAT8(ms);
	ereport(WARNING,
			(errmsg("gpusort: the GPU cannot be used"),
			 errdetail("%s", why)));
	PG_RETURN_NULL();
}

/*
 * gpusort_stats() RETURNS TABLE (engine text, sorts int8, rows int8,
 *   total_ms float8, fallbacks int8, last_fallback_reason text)
 *
 * One row per registered engine, in their order, in this backend since its start or the last
 * gpusort_stats_reset().  See EngineStats for the fallbacks.
 */
Datum
gpusort_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	for (SortEngineId engine = 0; engine < sort_engine_count(); engine++)
	{
		const EngineStats *stats = sort_engine_stats(engine);
		Datum		values[6];
		bool		nulls[6] = {0};

		values[0] = CStringGetTextDatum(sort_engine_name(engine));
		values[1] = Int64GetDatum(stats->sorts);
		values[2] = Int64GetDatum(stats->rows);
		values[3] = Float8GetDatum(stats->total_ms);
		values[4] = Int64GetDatum(stats->fallbacks);
		if (stats->last_reason[0] != '\0')
			values[5] = CStringGetTextDatum(stats->last_reason);
		else
			nulls[5] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* gpusort_stats_reset() RETURNS void */
Datum
gpusort_stats_reset(PG_FUNCTION_ARGS)
{
	sort_engine_stats_reset();
	PG_RETURN_VOID();
}
