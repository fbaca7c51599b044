/*-------------------------------------------------------------------------
 *
 * engine.c
 *	  Chooses the engine that runs a sort job (gpusort.device), falls back
 *	  to the CPU engine when the GPU cannot run it, tells the user so, and
 *	  keeps the per-backend statistics that gpusort_stats() returns.
 *
 * gpusort.device = cpu never uses the GPU; gpu sends every job to it; auto
 * sends a job to it only when that is estimated to pay:
 *
 *	  cpu_ms > (GPU not started yet ? start-up time : 0) + gpu_ms
 *
 * with cpu_ms = rows * key columns * CPU_NS_PER_ROW_KEY and gpu_ms from
 * gpu_estimate_ms() (engine_gpu.c, which documents its constants).  The
 * CPU engine's LSD radix sort costs 10-45 ns per row and key column: fewer
 * for narrow key ranges and inputs that fit the caches; on the H200 host
 * it took 29-46 ns at 1M-10M rows (EXPLAIN ANALYZE's Sort Time less the
 * reordering of the rows).  So, once the GPU runs, jobs of more than about
 * 50 000 rows go to it; before, only jobs of more than about 10 million
 * row-keys, which pay for its start-up (~275 ms there: a backend that wants
 * the GPU from its first query can start it ahead, with
 * gpusort.gpu_prestart or gpusort_gpu_start()).
 *
 * A job the GPU cannot run falls back to the CPU engine with one WARNING
 * (device = gpu) or NOTICE (auto).  In auto, "no GPU" is said once per
 * backend and then silently, since EXPLAIN ANALYZE shows the reason.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "portability/instr_time.h"

#include "gpu/engine_gpu.h"
#include "settings.h"
#include "util/prefault.h"
#include "engine/sort_engine.h"
#include "keys/sort_keys.h"

/* The CPU engine's cost per row and key column, in nanoseconds. */
#define CPU_NS_PER_ROW_KEY	30.0

static EngineStats engine_stats[2];

/* Has "no GPU" been said in this backend (auto)? */
static bool no_gpu_reported = false;

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

/* Says, once, that the job runs on the CPU although the GPU was wanted. */
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
	else if (!no_gpu_reported)
	{
		ereport(NOTICE,
				(errmsg("gpusort: no GPU, sorting on the CPU"),
				 errdetail("%s", reason),
				 errhint("This is said once per session; EXPLAIN ANALYZE shows the reason.")));
		no_gpu_reported = true;
	}
}

#ifdef GPUSORT_WITH_CUDA
/*
 * In auto: should a sort of nrows rows and nkeys key columns go to the GPU?
 * If not, *why says why, unless the CPU is simply estimated faster.
 */
static bool
gpu_pays(uint32 nrows, int nkeys, const char **why)
{
	double		cpu_ms;
	double		gpu_ms;

	*why = NULL;
	if (gpu_engine_unavailable(why))
		return false;
	if (!gpu_job_fits(nrows, nkeys))
	{
		*why = "the sort needs more device memory than gpusort.gpu_memory allows";
		return false;
	}
	cpu_ms = (double) nrows * nkeys * CPU_NS_PER_ROW_KEY / 1e6;
	gpu_ms = gpu_estimate_ms(nrows, nkeys);
	if (!gpu_engine_started())
		gpu_ms += gpu_startup_estimate_ms();
	return cpu_ms > gpu_ms;
}
#endif

/*
 * Is a job of nrows rows and nkeys key columns bound for the GPU, as far as
 * can be told before it runs?  With gpusort.device = auto, only when the GPU
 * runs already: its rows are then uploaded while they are collected.
 */
bool
gpu_job_expected(uint32 nrows, int nkeys)
{
#ifdef GPUSORT_WITH_CUDA
	const char *why;

	if (gpusort_device == GPUSORT_DEVICE_GPU)
		return true;
	return gpusort_device == GPUSORT_DEVICE_AUTO && gpu_engine_started() &&
		gpu_pays(nrows, nkeys, &why);
#else
	return false;
#endif
}

/*
 * Sorts a job or values (one of them is not NULL) on the GPU if
 * gpusort.device and the cost model say so.  Returns false when the CPU
 * engine must sort it, with the reason in the report (none if the CPU was
 * chosen in the first place).
 */
static bool
sorted_on_gpu(SortJob *job, SortValues *values, SortJobReport *report)
{
	report->engine = SORT_ENGINE_CPU;
	report->fallback_reason = NULL;
	if (gpusort_device == GPUSORT_DEVICE_CPU)
		return false;
#ifdef GPUSORT_WITH_CUDA
	{
		uint32		nrows = job ? job->nrows : values->n;
		int			nkeys = job ? job->nkeys : 1;
		const char *declined = NULL;
		char	   *why = NULL;

		if (gpusort_device != GPUSORT_DEVICE_GPU && !gpu_pays(nrows, nkeys, &declined))
		{
			report->fallback_reason = declined ? declined :
				"gpusort.device = auto: the CPU engine is estimated faster";
			return false;
		}
		if (job ? gpu_sort_job(job, &why) : gpu_sort_values(values, &why))
		{
			report->engine = SORT_ENGINE_GPU;
			return true;
		}
		report->fallback_reason = why;
		remember_reason(&engine_stats[1], why);
		report_fallback(why, gpu_engine_unavailable(NULL));
	}
#else
	report->fallback_reason = "gpusort was built without CUDA";
	if (gpusort_device == GPUSORT_DEVICE_GPU)
	{
		remember_reason(&engine_stats[1], report->fallback_reason);
		report_fallback(report->fallback_reason, true);
	}
#endif
	return false;
}

/* Counts a finished sort in the statistics of the engine that ran it. */
static void
count_sort(SortJobReport *report, uint32 nrows, instr_time start)
{
	instr_time	end;
	EngineStats *stats;

	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	stats = &engine_stats[report->engine == SORT_ENGINE_GPU ? 1 : 0];
	stats->sorts++;
	stats->rows += nrows;
	stats->total_ms += INSTR_TIME_GET_MILLISEC(end);
	if (report->fallback_reason)
		remember_reason(&engine_stats[0], report->fallback_reason);
}

void
sort_job_run(SortJob *job, SortJobReport *report)
{
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	job->payload_sorted = false;
	if (!sorted_on_gpu(job, NULL, report))
	{
		if (job->perm == NULL)
			job->perm = prefault_alloc(CurrentMemoryContext,
									   sizeof(uint32) * Max(job->nrows, 1));
		cpu_sort_job(job);
	}
	count_sort(report, job->nrows, start);
}

void
sort_values_run(SortValues *values, SortJobReport *report)
{
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	if (!sorted_on_gpu(NULL, values, report))
		cpu_sort_values(values);
	count_sort(report, values->n, start);
}
