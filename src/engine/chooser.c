/*-------------------------------------------------------------------------
 *
 * chooser.c
 *	  Runs each sort on the registered engine that gpusort.device and the
 *	  cost model (cost.c) select, falls back to the CPU engine when that one
 *	  cannot run it, tells the user so, and keeps the per-backend
 *	  statistics of every sort that gpusort_stats() returns.
 *
 * gpusort.device names the engine that every job goes to (cpu, gpu); auto
 * sends a job to another engine than the CPU's only when the cost model
 * says it pays.  Callers pass the setting as they took it (a GpuSort node,
 * when it began), so that a SET in the middle of a query changes nothing in
 * its sorts.  Each report says why its engine was chosen (EXPLAIN's Engine
 * Choice).  A job the chosen engine cannot run falls back to the CPU
 * engine, with a WARNING (the engine was named) or a NOTICE (auto) at most
 * once per statement, however many jobs it runs, and counts as a fallback
 * once per sort.  In auto, an engine missing here (a host without a GPU) is
 * a choice, not a fallback: that it is missing is said once per session
 * and then silently, since EXPLAIN ANALYZE shows the reason.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "portability/instr_time.h"

#include "engine/cost.h"
#include "engine/engine.h"
#include "settings.h"
#include "util/prefault.h"
#include "util/timing.h"

static EngineStats engine_stats[GPUSORT_MAX_ENGINES];

/* The engines found missing and said so in this backend (auto), by bit. */
static uint32 missing_reported = 0;

/* The start of the last statement told that an engine failed it. */
static TimestampTz fallback_reported = 0;

/* What a SortJobReport's statistics counted already (counted). */
#define COUNTED_SORT(engine)	(1 << (engine))
#define COUNTED_FALLBACK		(1 << 4)
#define COUNTED_ENGINE_FAILURE	(1 << 5)

StaticAssertDecl((1 << GPUSORT_MAX_ENGINES) <= COUNTED_FALLBACK,
				 "an engine's bit in counted");

const EngineStats *
sort_engine_stats(SortEngineId engine)
{
	return &engine_stats[engine];
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

/*
 * Says once per session, in auto, that an engine is missing (never in a
 * parallel worker, a new process at every parallel query: the leader says
 * it, and EXPLAIN ANALYZE shows the workers' reasons).
 */
static void
report_missing(SortEngineId id, const char *reason)
{
	const char *title = sort_engine_get(id)->title;
	char		prefix[64];

	if ((missing_reported & (1 << id)) || IsParallelWorker())
		return;
	snprintf(prefix, sizeof(prefix), "no %s: ", title);
	if (strncmp(reason, prefix, strlen(prefix)) == 0)
		reason += strlen(prefix);
	ereport(NOTICE,
			(errmsg("gpusort: no %s, sorting on the CPU", title),
			 errdetail("%s", reason),
			 errhint("This is said once per session; EXPLAIN ANALYZE shows the engine and why.")));
	missing_reported |= 1 << id;
}

/* Says, in auto, which engines are missing, as report_missing does. */
static void
report_missing_engines(void)
{
	const char *missing;

	if (IsParallelWorker())
		return;
	for (SortEngineId id = SORT_ENGINE_CPU + 1; id < sort_engine_count(); id++)
		if (!(missing_reported & (1 << id)) &&
			(missing = sort_engine_missing(sort_engine_get(id))) != NULL)
			report_missing(id, missing);
}

/*
 * Says that the job runs on the CPU although another engine was chosen and
 * is there: a WARNING when gpusort.device named it, a NOTICE in auto; once
 * per statement, however many jobs it runs, and in a parallel query by one
 * participant: the leader, or the first worker where the leader reads no
 * rows of its own.
 */
static void
report_fallback(const SortEngine *engine, int device, const char *reason)
{
	TimestampTz statement = GetCurrentStatementStartTimestamp();

	if (statement == fallback_reported)
		return;
	if (IsParallelWorker() &&
		(parallel_leader_participation || ParallelWorkerNumber != 0))
		return;
	fallback_reported = statement;
	if (device != GPUSORT_DEVICE_AUTO)
		ereport(WARNING,
				(errmsg("gpusort: sorting on the CPU: the %s cannot be used",
						engine->title),
				 errdetail("%s", reason)));
	else
		ereport(NOTICE,
				(errmsg("gpusort: sorting on the CPU: the %s failed", engine->title),
				 errdetail("%s", reason)));
}

/*
 * An engine's choices, "gpusort.device = gpu" (named) or "auto: GPU
 * estimated faster", built once.
 */
static const char *
engine_choice(SortEngineId id, bool named)
{
	static char texts[2][GPUSORT_MAX_ENGINES][80];
	const SortEngine *engine = sort_engine_get(id);
	char	   *text = texts[named][id];

	if (text[0] == '\0')
		snprintf(text, sizeof(texts[0][0]), named ? "gpusort.device = %s" :
				 "auto: %s estimated faster", named ? engine->name : engine->title);
	return text;
}

SortEngineId
sort_engine_choose(int device, uint32 nrows, int nkeys, const char **choice)
{
	SortEngineId fastest;
	const char *declined;

	if (device != GPUSORT_DEVICE_AUTO)
	{
		*choice = engine_choice(device, true);
		return device;
	}
	fastest = sort_engine_fastest(nrows, nkeys, &declined);
	if (fastest != SORT_ENGINE_CPU)
		*choice = engine_choice(fastest, false);
	else
		*choice = declined ? psprintf("auto: %s", declined) :
			"auto: CPU engine estimated faster";
	return fastest;
}

SortEngineId
sort_report_offload(const SortJobReport *report)
{
	for (SortEngineId id = SORT_ENGINE_CPU + 1; id < sort_engine_count(); id++)
		if (report->counted & COUNTED_SORT(id))
			return id;
	return SORT_ENGINE_CPU;
}

/*
 * Sorts a job or values (one of them is not NULL) on another engine than
 * the CPU's if gpusort.device and the cost model say so.  Returns false
 * when the CPU engine must sort it, with the choice in the report, and the
 * reason of a fallback when the engine chosen could not sort it.  In auto,
 * an engine found missing at this first attempt is a choice as it is for
 * the jobs after it, not a fallback.
 */
static bool
sorted_elsewhere(SortJob *job, SortValues *values, int device,
				 SortJobReport *report)
{
	uint32		nrows = job ? job->nrows : values->n;
	int			nkeys = job ? job->nkeys : 1;
	SortEngineId id;
	const SortEngine *engine;
	const char *missing;
	char	   *why = NULL;

	report->engine = SORT_ENGINE_CPU;
	report->fallback_reason = NULL;
	report->engine_note = NULL;
	report->kernel[0] = '\0';
	id = sort_engine_choose(device, nrows, nkeys, &report->choice);
	if (id == SORT_ENGINE_CPU)
	{
		if (device == GPUSORT_DEVICE_AUTO)
			report_missing_engines();
		return false;
	}
	engine = sort_engine_get(id);
	/* an engine shared by all backends may be too busy, or down: a choice */
	if (engine->admits && !engine->admits(nrows, nkeys, &why))
	{
		report->choice = psprintf("%s, but %s", report->choice, why);
		return false;
	}
	if (job ? engine->sort_job(job, &why) : engine->sort_values(values, &why))
	{
		report->engine = id;
		return true;
	}
	if (device == GPUSORT_DEVICE_AUTO && (missing = sort_engine_missing(engine)) != NULL)
	{
		/* found missing at this first attempt: a choice, as for later jobs */
		report_missing(id, missing);
		report->choice = psprintf("auto: %s", missing);
		return false;
	}
	report_fallback(engine, device, why);
	report->fallback_reason = why;
	remember_reason(&engine_stats[id], report, COUNTED_ENGINE_FAILURE, why);
	return false;
}

void
sort_engine_count_sort(SortJobReport *report, int64 nrows, double ms)
{
	EngineStats *stats = &engine_stats[report->engine];

	if (!(report->counted & COUNTED_SORT(report->engine)))
		stats->sorts++;
	report->counted |= COUNTED_SORT(report->engine);
	stats->rows += nrows;
	stats->total_ms += ms;
}

/* Counts a finished job in the statistics of the engine that ran it. */
static void
count_sort(SortJobReport *report, uint32 nrows, int nkeys, instr_time start)
{
	double		ms = ms_since(start);

	sort_engine_count_sort(report, nrows, ms);
	if (report->engine == SORT_ENGINE_CPU && report->fallback_reason == NULL)
	{
		for (SortEngineId id = SORT_ENGINE_CPU + 1; id < sort_engine_count(); id++)
			if (sort_engine_get(id)->cpu_sorted)
				sort_engine_get(id)->cpu_sorted(nrows, nkeys, ms);
	}
	if (report->fallback_reason)
		remember_reason(&engine_stats[SORT_ENGINE_CPU], report, COUNTED_FALLBACK,
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
	job->kernel[0] = '\0';
	if (!sorted_elsewhere(job, NULL, device, report))
		run_on_cpu(job);
	else
	{
		report->engine_note = job->engine_note;
		strlcpy(report->kernel, job->kernel, sizeof(report->kernel));
	}
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
	report->kernel[0] = '\0';
	run_on_cpu(job);
	count_sort(report, job->nrows, job->nkeys, start);
}

void
sort_values_run(SortValues *values, int device, SortJobReport *report)
{
	instr_time	start;
	char	   *why;

	INSTR_TIME_SET_CURRENT(start);
	if (!sorted_elsewhere(NULL, values, device, report))
		(void) cpu_sort_engine.sort_values(values, &why);
	count_sort(report, values->n, 1, start);
}

/* The engine that uploads rows while they are collected, or NULL. */
static const SortEngine *
uploading_engine(void)
{
	for (SortEngineId id = SORT_ENGINE_CPU + 1; id < sort_engine_count(); id++)
		if (sort_engine_get(id)->uploader)
			return sort_engine_get(id);
	return NULL;
}

/*
 * The early upload: for a device that names the uploading engine, always;
 * in auto, only for a job bound for it as far as can be told when its
 * first rows are there, where it runs already.
 */
static SortUpload *
upload_rows(bool named, SortUpload *upload, int nkeys, const uint64 *keys,
			const uint64 *payload, uint32 nrows, uint32 capacity,
			MemoryContext cxt)
{
	const SortEngine *engine = uploading_engine();
	const char *why;

	if (upload == NULL && !named &&
		!((engine->started == NULL || engine->started()) &&
		  sort_engine_get(sort_engine_fastest(nrows, nkeys, &why)) == engine))
		return NULL;
	return engine->uploader->rows(upload, nkeys, keys, payload, nrows,
								  capacity, cxt);
}

static SortUpload *
upload_rows_named(SortUpload *upload, int nkeys, const uint64 *keys,
				  const uint64 *payload, uint32 nrows, uint32 capacity,
				  MemoryContext cxt)
{
	return upload_rows(true, upload, nkeys, keys, payload, nrows, capacity, cxt);
}

static SortUpload *
upload_rows_auto(SortUpload *upload, int nkeys, const uint64 *keys,
				 const uint64 *payload, uint32 nrows, uint32 capacity,
				 MemoryContext cxt)
{
	return upload_rows(false, upload, nkeys, keys, payload, nrows, capacity, cxt);
}

static void
upload_pause(SortUpload *upload)
{
	uploading_engine()->uploader->pause(upload);
}

static void
upload_end(SortUpload *upload)
{
	uploading_engine()->uploader->end(upload);
}

static const RowStoreUploader uploader_named = {
	.rows = upload_rows_named,
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
	const SortEngine *engine = uploading_engine();

	if (engine == NULL)
		return NULL;
	if (device == GPUSORT_DEVICE_AUTO)
		return &uploader_auto;
	return sort_engine_get(device) == engine ? &uploader_named : NULL;
}

const SortEngine *
sort_engine_holder(int device, char **why)
{
	const SortEngine *holder = NULL;
	const char *missing;

	/* for tests: the CPU engine holds rows in the backend's memory */
	if (gpusort_debug_hold_rows)
	{
		*why = NULL;
		return sort_engine_get(SORT_ENGINE_CPU);
	}
	for (SortEngineId id = SORT_ENGINE_CPU + 1; id < sort_engine_count(); id++)
	{
		const SortEngine *engine = sort_engine_get(id);

		if (holder == NULL || (holder->stager == NULL && engine->stager != NULL))
			holder = engine;
	}
	*why = NULL;
	if (holder == NULL)
		*why = "no engine holds rows";
	else if (device != GPUSORT_DEVICE_AUTO && sort_engine_get(device) != holder)
		*why = (char *) engine_choice(device, true);	/* "gpusort.device = cpu" */
	else if ((missing = sort_engine_missing(holder)) != NULL)
		*why = (char *) missing;	/* "no GPU: ..." */
	else if (holder->stager == NULL)
		*why = psprintf("the %s engine does not hold rows", holder->title);
	return holder;
}

const RowStager *
sort_engine_sharing_stager(void)
{
	char	   *why;
	const SortEngine *holder = sort_engine_holder(GPUSORT_DEVICE_AUTO, &why);

	if (holder == NULL || holder->stager == NULL ||
		holder->stager->begin_shared == NULL || holder->stager->join == NULL)
		return NULL;
	return holder->stager;
}
