/*-------------------------------------------------------------------------
 *
 * chooser.c
 *	  Runs each sort on the engine that gpusort.device and the cost model
 *	  (cost.c) select, falls back to the CPU engine when the GPU cannot run
 *	  it, tells the user so, and keeps the per-backend statistics of every
 *	  sort that gpusort_stats() returns.
 *
 * gpusort.device = cpu never uses the GPU; gpu sends every job to it; auto
 * sends a job to it only when the cost model says it pays.  Each report
 * says why its engine was chosen (EXPLAIN's Engine Choice).  A job the
 * chosen GPU cannot run falls back to the CPU engine with one WARNING
 * (device = gpu) or NOTICE (auto), and counts as a fallback.  In auto, a
 * host without a GPU is a choice, not a fallback: "no GPU" is said once per
 * session and then silently, since EXPLAIN ANALYZE shows the reason.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
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

static void
remember_reason(EngineStats *stats, const char *reason)
{
	stats->fallbacks++;
	strlcpy(stats->last_reason, reason, sizeof(stats->last_reason));
}

/*
 * Says that the job runs on the CPU although the GPU was chosen: a WARNING
 * each time when gpusort.device = gpu asked for it, a NOTICE when the GPU
 * failed in auto, and in auto "no GPU" once per session, never in a
 * parallel worker (a new process at every parallel query: the leader says
 * it, and EXPLAIN ANALYZE shows the workers' reasons).
 */
static void
report_fallback(const char *reason, bool no_gpu)
{
	if (gpusort_device == GPUSORT_DEVICE_GPU)
		ereport(WARNING,
				(errmsg("gpusort: sorting on the CPU: the GPU cannot be used"),
				 errdetail("%s", reason)));
	else if (!no_gpu)
		ereport(NOTICE,
				(errmsg("gpusort: sorting on the CPU: the GPU failed"),
				 errdetail("%s", reason)));
	else if (!no_gpu_reported && !IsParallelWorker())
	{
		ereport(NOTICE,
				(errmsg("gpusort: no GPU, sorting on the CPU"),
				 errdetail("%s", reason),
				 errhint("This is said once per session; EXPLAIN ANALYZE shows the engine and why.")));
		no_gpu_reported = true;
	}
}

SortEngineKind
sort_engine_choose(uint32 nrows, int nkeys, const char **choice)
{
	const char *declined = NULL;

	if (gpusort_device == GPUSORT_DEVICE_CPU)
	{
		*choice = "gpusort.device = cpu";
		return SORT_ENGINE_CPU;
	}
	if (gpusort_device == GPUSORT_DEVICE_GPU)
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
sorted_on_gpu(SortJob *job, SortValues *values, SortJobReport *report)
{
	uint32		nrows = job ? job->nrows : values->n;
	int			nkeys = job ? job->nkeys : 1;
	const char *missing = NULL;
	char	   *why = NULL;
	bool		no_gpu;

	report->engine = SORT_ENGINE_CPU;
	report->fallback_reason = NULL;
	report->engine_note = NULL;
	if (sort_engine_choose(nrows, nkeys, &report->choice) == SORT_ENGINE_CPU)
		return false;
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
	no_gpu = gpu_engine == NULL || gpu_engine->unavailable(&missing);
	report_fallback(why, no_gpu);
	if (no_gpu && gpusort_device == GPUSORT_DEVICE_AUTO)
	{
		report->choice = psprintf("auto: %s", missing ? missing : why);
		return false;
	}
	report->fallback_reason = why;
	remember_reason(&engine_stats[1], why);
	return false;
}

/* Counts a finished sort in the statistics of the engine that ran it. */
static void
count_sort(SortJobReport *report, uint32 nrows, int nkeys, instr_time start)
{
	EngineStats *stats = &engine_stats[report->engine == SORT_ENGINE_GPU ? 1 : 0];
	double		ms = ms_since(start);

	stats->sorts++;
	stats->rows += nrows;
	stats->total_ms += ms;
	if (report->engine == SORT_ENGINE_CPU && report->fallback_reason == NULL &&
		gpu_engine && gpu_engine->cpu_sorted)
		gpu_engine->cpu_sorted(nrows, nkeys, ms);
	if (report->fallback_reason)
		remember_reason(&engine_stats[0], report->fallback_reason);
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
sort_job_run(SortJob *job, SortJobReport *report)
{
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	job->payload_sorted = false;
	job->keys_sorted = NULL;
	job->engine_note = NULL;
	if (!sorted_on_gpu(job, NULL, report))
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
sort_values_run(SortValues *values, SortJobReport *report)
{
	instr_time	start;
	char	   *why;

	INSTR_TIME_SET_CURRENT(start);
	if (!sorted_on_gpu(NULL, values, report))
		(void) cpu_sort_engine.sort_values(values, &why);
	count_sort(report, values->n, 1, start);
}

/*
 * The early upload: only for a job bound for the GPU, as far as can be told
 * when its first rows are there.
 */
static SortUpload *
upload_rows(SortUpload *upload, int nkeys, const uint64 *keys,
			const uint64 *payload, uint32 nrows, uint32 capacity,
			MemoryContext cxt)
{
	/* the GPU service has no upload: its jobs are copied when complete */
	if (upload == NULL && (!gpu_job_expected(gpu_engine, nrows, nkeys) ||
						   gpu_engine->uploader == NULL))
		return NULL;
	return gpu_engine->uploader->rows(upload, nkeys, keys, payload, nrows,
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

const RowStoreUploader sort_engine_uploader = {
	.rows = upload_rows,
	.pause = upload_pause,
	.end = upload_end,
};

const RowStager *
sort_engine_stager(char **why)
{
	const char *missing = NULL;

	if (gpusort_device == GPUSORT_DEVICE_CPU)
		*why = "gpusort.device = cpu";
	else if (gpu_engine == NULL)
		*why = "gpusort was built without CUDA";
	else if (gpu_engine->stager == NULL)
		*why = "the GPU engine does not hold rows";
	else if (gpu_engine->unavailable(&missing))
		*why = psprintf("no GPU: %s", missing);
	else
		return gpu_engine->stager;
	return NULL;
}
