/*-------------------------------------------------------------------------
 *
 * chooser.c
 *	  Runs each sort on the engine that gpusort.device and the cost model
 *	  (cost.c) select, falls back to the CPU engine when the GPU cannot run
 *	  it, tells the user so, and keeps the per-backend statistics of every
 *	  sort that gpusort_stats() returns.
 *
 * gpusort.device = cpu never uses the GPU; gpu sends every job to it; auto
 * sends a job to it only when the cost model says it pays.  Callers pass the
 * setting as they took it (a GpuSort node, when it began), so that a SET
 * in the middle of a query changes nothing in its sorts.  Each report says
 * why its engine was chosen (EXPLAIN's Engine Choice).  A job the chosen
 * GPU cannot run falls back to the CPU engine, with a WARNING (device =
 * gpu) or a NOTICE (auto) at most once per statement, however many jobs it
 * runs, and counts as a fallback once per sort.  In auto, a host without a
 * GPU is a choice, not a fallback: "no GPU" is said once per session and
 * then silently, since EXPLAIN ANALYZE shows the reason.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "portability/instr_time.h"

#include "engine/cost.h"
#include "engine/engine.h"
#include "settings.h"
#include "util/prefault.h"
#include "util/timing.h"

static EngineStats engine_stats[2];

/* Has "no GPU" been said in this backend (auto)? */
static bool no_gpu_reported = false;

/* The start of the last statement told that the GPU failed it. */
static TimestampTz fallback_reported = 0;

/* What a SortJobReport's statistics counted already (counted). */
#define COUNTED_SORT(engine)	(1 << (engine))
#define COUNTED_FALLBACK		(1 << 4)
#define COUNTED_GPU_FAILURE		(1 << 5)

/* The GPU engine, where one was built (sort_engine_register_gpu). */
static const SortEngine *gpu_engine = NULL;

void
sort_engine_register_gpu(const SortEngine *engine)
{
	gpu_engine = engine;
}

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

const EngineStats *
sort_engine_stats(SortEngineKind engine)
{
	return &engine_stats[engine == SORT_ENGINE_GPU ? 1 : 0];
}

void
sort_engine_stats_reset(void)
{
	memset(engine_stats, 0, sizeof(engine_stats));
}

/* Keeps a fallback's reason; counts it once per sort (flag: its kind). */
static void
remember_reason(EngineStats *stats, SortJobReport *report, uint8 flag,
				const char *reason)
{
	if (!(report->counted & flag))
		stats->fallbacks++;
	report->counted |= flag;
	strlcpy(stats->last_reason, reason, sizeof(stats->last_reason));
}

/* Why no GPU can be used here, or NULL while one may be. */
static const char *
no_gpu(void)
{
	const char *missing = NULL;

	if (gpu_engine == NULL)
		return "gpusort was built without CUDA";
	if (gpu_engine->unavailable(&missing))
		return missing;
	return NULL;
}

/*
 * Says once per session, in auto, that there is no GPU (never in a parallel
 * worker, a new process at every parallel query: the leader says it, and
 * EXPLAIN ANALYZE shows the workers' reasons).
 */
static void
report_no_gpu(const char *reason)
{
	if (no_gpu_reported || IsParallelWorker())
		return;
	if (strncmp(reason, "no GPU: ", 8) == 0)
		reason += 8;
	ereport(NOTICE,
			(errmsg("gpusort: no GPU, sorting on the CPU"),
			 errdetail("%s", reason),
			 errhint("This is said once per session; EXPLAIN ANALYZE shows the engine and why.")));
	no_gpu_reported = true;
}

/*
 * Says that the job runs on the CPU although the GPU was chosen and is
 * there: a WARNING when gpusort.device = gpu asked for it, a NOTICE in auto;
 * once per statement, however many jobs it runs.
 */
static void
report_fallback(int device, const char *reason)
{
	TimestampTz statement = GetCurrentStatementStartTimestamp();

	if (statement == fallback_reported)
		return;
	fallback_reported = statement;
	if (device == GPUSORT_DEVICE_GPU)
		ereport(WARNING,
				(errmsg("gpusort: sorting on the CPU: the GPU cannot be used"),
				 errdetail("%s", reason)));
	else
		ereport(NOTICE,
				(errmsg("gpusort: sorting on the CPU: the GPU failed"),
				 errdetail("%s", reason)));
}

SortEngineKind
sort_engine_choose(int device, uint32 nrows, int nkeys, const char **choice)
{
	const char *declined = NULL;

	if (device == GPUSORT_DEVICE_CPU)
	{
		*choice = "gpusort.device = cpu";
		return SORT_ENGINE_CPU;
	}
	if (device == GPUSORT_DEVICE_GPU)
	{
		*choice = "gpusort.device = gpu";
		return SORT_ENGINE_GPU;
	}
	if (gpu_pays(gpu_engine, nrows, nkeys, &declined))
	{
		*choice = "auto: GPU estimated faster";
		return SORT_ENGINE_GPU;
	}
	*choice = declined ? psprintf("auto: %s", declined) :
		"auto: CPU engine estimated faster";
	return SORT_ENGINE_CPU;
}

/*
 * Sorts a job or values (one of them is not NULL) on the GPU if
 * gpusort.device and the cost model say so.  Returns false when the CPU
 * engine must sort it, with the choice in the report, and the reason of a
 * fallback when the GPU was chosen and could not sort it.  In auto, a GPU
 * found missing at this first attempt is a choice as it is for the jobs
 * after it, not a fallback.
 */
static bool
sorted_on_gpu(SortJob *job, SortValues *values, int device,
			  SortJobReport *report)
{
	uint32		nrows = job ? job->nrows : values->n;
	int			nkeys = job ? job->nkeys : 1;
	const char *missing = NULL;
	char	   *why = NULL;

	report->engine = SORT_ENGINE_CPU;
	report->fallback_reason = NULL;
	report->engine_note = NULL;
	if (sort_engine_choose(device, nrows, nkeys, &report->choice) == SORT_ENGINE_CPU)
	{
		if (device == GPUSORT_DEVICE_AUTO && (missing = no_gpu()) != NULL)
			report_no_gpu(missing);
		return false;
	}
	/* a GPU shared by all backends may be too busy, or down: a choice */
	if (gpu_engine && gpu_engine->admits && !gpu_engine->admits(nrows, nkeys, &why))
	{
		report->choice = psprintf("%s, but %s", report->choice, why);
		return false;
	}
	if (gpu_engine == NULL)
		why = "gpusort was built without CUDA";
	else if (job ? gpu_engine->sort_job(job, &why) :
			 gpu_engine->sort_values(values, &why))
	{
		report->engine = SORT_ENGINE_GPU;
		return true;
	}
	if (device == GPUSORT_DEVICE_AUTO && (missing = no_gpu()) != NULL)
	{
		/* found missing at this first attempt: a choice, as for later jobs */
		report_no_gpu(missing);
		report->choice = psprintf("auto: %s", missing);
		return false;
	}
	report_fallback(device, why);
	report->fallback_reason = why;
	remember_reason(&engine_stats[1], report, COUNTED_GPU_FAILURE, why);
	return false;
}

/* Counts a finished sort in the statistics of the engine that ran it. */
static void
count_sort(SortJobReport *report, uint32 nrows, int nkeys, instr_time start)
{
	EngineStats *stats = &engine_stats[report->engine == SORT_ENGINE_GPU ? 1 : 0];
	double		ms = ms_since(start);

	if (!(report->counted & COUNTED_SORT(report->engine)))
		stats->sorts++;
	report->counted |= COUNTED_SORT(report->engine);
	stats->rows += nrows;
	stats->total_ms += ms;
	if (report->engine == SORT_ENGINE_CPU && report->fallback_reason == NULL &&
		gpu_engine && gpu_engine->cpu_sorted)
		gpu_engine->cpu_sorted(nrows, nkeys, ms);
	if (report->fallback_reason)
		remember_reason(&engine_stats[0], report, COUNTED_FALLBACK,
						report->fallback_reason);
}

/* Runs a job on the CPU engine. */
static void
run_on_cpu(SortJob *job)
{
	char	   *why;

	if (job->perm == NULL)
		job->perm = prefault_alloc(CurrentMemoryContext,
								   sizeof(uint32) * Max(job->nrows, 1));
	(void) cpu_sort_engine.sort_job(job, &why);
}

void
sort_job_run(SortJob *job, int device, SortJobReport *report)
{
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	job->payload_sorted = false;
	job->keys_sorted = NULL;
	job->engine_note = NULL;
	if (!sorted_on_gpu(job, NULL, device, report))
		run_on_cpu(job);
	else
		report->engine_note = job->engine_note;
	count_sort(report, job->nrows, job->nkeys, start);
}

void
sort_job_run_on_cpu(SortJob *job, const char *choice,
					const char *fallback_reason, SortJobReport *report)
{
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	job->payload_sorted = false;
	job->keys_sorted = NULL;
	report->engine = SORT_ENGINE_CPU;
	report->choice = choice;
	report->fallback_reason = fallback_reason;
	report->engine_note = NULL;
	run_on_cpu(job);
	count_sort(report, job->nrows, job->nkeys, start);
}

void
sort_values_run(SortValues *values, int device, SortJobReport *report)
{
	instr_time	start;
	char	   *why;

	INSTR_TIME_SET_CURRENT(start);
	if (!sorted_on_gpu(NULL, values, device, report))
		(void) cpu_sort_engine.sort_values(values, &why);
	count_sort(report, values->n, 1, start);
}

/*
 * The early upload: only for a job bound for the GPU, as far as can be told
 * when its first rows are there.
 */
static SortUpload *
upload_rows(int device, SortUpload *upload, int nkeys, const uint64 *keys,
			const uint64 *payload, uint32 nrows, uint32 capacity,
			MemoryContext cxt)
{
	/* the GPU service has no upload: its jobs are copied when complete */
	if (upload == NULL && (!gpu_job_expected(gpu_engine, device, nrows, nkeys) ||
						   gpu_engine->uploader == NULL))
		return NULL;
	return gpu_engine->uploader->rows(upload, nkeys, keys, payload, nrows,
									  capacity, cxt);
}

static SortUpload *
upload_rows_gpu(SortUpload *upload, int nkeys, const uint64 *keys,
				const uint64 *payload, uint32 nrows, uint32 capacity,
				MemoryContext cxt)
{
	return upload_rows(GPUSORT_DEVICE_GPU, upload, nkeys, keys, payload, nrows,
					   capacity, cxt);
}

static SortUpload *
upload_rows_auto(SortUpload *upload, int nkeys, const uint64 *keys,
				 const uint64 *payload, uint32 nrows, uint32 capacity,
				 MemoryContext cxt)
{
	return upload_rows(GPUSORT_DEVICE_AUTO, upload, nkeys, keys, payload, nrows,
					   capacity, cxt);
}

static void
upload_pause(SortUpload *upload)
{
	gpu_engine->uploader->pause(upload);
}

static void
upload_end(SortUpload *upload)
{
	gpu_engine->uploader->end(upload);
}

static const RowStoreUploader uploader_gpu = {
	.rows = upload_rows_gpu,
	.pause = upload_pause,
	.end = upload_end,
};

static const RowStoreUploader uploader_auto = {
	.rows = upload_rows_auto,
	.pause = upload_pause,
	.end = upload_end,
};

const RowStoreUploader *
sort_engine_uploader(int device)
{
	if (gpu_engine == NULL || gpu_engine->uploader == NULL)
		return NULL;
	return device == GPUSORT_DEVICE_GPU ? &uploader_gpu :
		device == GPUSORT_DEVICE_AUTO ? &uploader_auto : NULL;
}

const RowStager *
sort_engine_stager(int device, char **why)
{
	const char *missing = NULL;

	if (device == GPUSORT_DEVICE_CPU)
		*why = "gpusort.device = cpu";
	else if (gpu_engine == NULL)
		*why = "gpusort was built without CUDA";
	else if (gpu_engine->stager == NULL)
		*why = "the GPU engine does not hold rows";
	else if (gpu_engine->unavailable(&missing))
		*why = (char *) missing;	/* "no GPU: ..." */
	else
		return gpu_engine->stager;
	return NULL;
}
