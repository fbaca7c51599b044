/*-------------------------------------------------------------------------
 *
 * engine.h
 *	  What the GpuSort node and the array functions call to have keys sorted:
 *	  the registry of engines; the chooser, which runs each job on the
 *	  engine that gpusort.device and the cost model select and falls back to
 *	  the CPU engine when that one cannot run it; the early upload of rows
 *	  being collected; and the statistics of every sort, small ones too.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_ENGINE_H
#define GPUSORT_ENGINE_H

#include "postgres.h"

#include "engine/sort_job.h"
#include "settings.h"

/*
 * The registry (registry.c): the CPU engine is number 0; _PG_init registers
 * the others, one line each, in the order gpusort_stats() lists them, and
 * then defines gpusort.device, whose values are their names.  Their names
 * differ.
 */
extern void sort_engine_register(const SortEngine *engine);
extern int	sort_engine_count(void);
extern const SortEngine *sort_engine_get(SortEngineId id);
extern const char *sort_engine_name(SortEngineId id);

/* The engine of that name, or -1. */
extern SortEngineId sort_engine_named(const char *name);

/* Why an engine cannot be used here, or NULL while it may be. */
extern const char *sort_engine_missing(const SortEngine *engine);

/* The engine whose RowStager that is. */
extern SortEngineId sort_engine_holding(const RowStager *stager);

/*
 * What happened to one job, for EXPLAIN ANALYZE and the statistics.  The
 * choice is the normal course of things (gpusort.device, the cost model, a
 * small input); a fallback reason is given only when the engine that was
 * chosen could not do the job (a GPU failure) or the keys could not order
 * the rows, and only such jobs count as fallbacks in gpusort_stats().
 */
typedef struct SortJobReport
{
	SortEngineId engine;		/* the engine that produced the result */
	const char *choice;			/* why that engine was chosen */
	const char *fallback_reason;	/* why the chosen one did not run it, or
									 * NULL */
	const char *engine_note;	/* the engine's note (SortJob), or NULL */
	char		kernel[SORT_KERNEL_LEN];	/* the engine's kernel (SortJob), or
											 * "" */

	/*
	 * What the statistics already counted of the sort this report follows
	 * (zero it for each new sort): a sort whose rows reach the engines in
	 * several jobs (sorted runs) counts once, per engine, as does its
	 * fallback.
	 */
	uint8		counted;
} SortJobReport;

/*
 * Runs a job on the engine that device (gpusort.device as the caller took
 * it: an engine's number, or GPUSORT_DEVICE_AUTO) selects, falling back to
 * the CPU engine when that one cannot do it.  Never fails but for out-of-memory and interrupts, which are
 * raised as errors in the usual way.
 */
extern void sort_job_run(SortJob *job, int device, SortJobReport *report);

/*
 * Runs a job on the CPU engine, for the reason given: a choice (choice), or
 * a fallback (fallback_reason, NULL if none), reported as such.
 */
extern void sort_job_run_on_cpu(SortJob *job, const char *choice,
								const char *fallback_reason,
								SortJobReport *report);

/*
 * The engine that device and the cost model choose for a job of nrows rows
 * and nkeys key columns, as far as can be told before it runs, with the
 * reason in *choice; what EXPLAIN without ANALYZE shows.
 */
extern SortEngineId sort_engine_choose(int device, uint32 nrows, int nkeys,
									   const char **choice);

/*
 * The engine other than the CPU's that ran jobs of the sort a report
 * follows (some of its sorted runs), or the CPU engine.
 */
extern SortEngineId sort_report_offload(const SortJobReport *report);

/* Sorts values, as sort_job_run sorts jobs. */
extern void sort_values_run(SortValues *values, int device,
							SortJobReport *report);

/*
 * The early upload of rows being collected (row_seams.h) for device: the
 * engine that has one (the GPU) gets the leading key column while the
 * input is still read, when the job is expected to go there; NULL where it
 * never will.
 */
extern const RowStoreUploader *sort_engine_uploader(int device);

/*
 * The engine that may hold the rows of an input larger than the memory
 * budget (row_seams.h's RowStager): the first registered with a stager,
 * else the first beside the CPU's; NULL where the CPU engine is alone.
 * With gpusort.debug_hold_rows, the CPU engine (host_stager, for tests).
 * *why is NULL where device lets it hold them and it works here, else says
 * why it cannot.
 */
extern const SortEngine *sort_engine_holder(int device, char **why);

/*
 * That engine's stager where it can hold one input for all the processes of
 * a parallel query (begin_shared and join), else NULL; whether the device
 * setting lets it hold rows is not asked.
 */
extern const RowStager *sort_engine_sharing_stager(void);

/* The CPU engine's stager, for tests alone (host_stager.c). */
extern const RowStager host_stager;

/* Per-backend statistics of the sorts, by registered engine. */
typedef struct EngineStats
{
	int64		sorts;			/* jobs this engine produced */
	int64		rows;			/* rows of those jobs */
	double		total_ms;		/* time their sorts took */
	int64		fallbacks;		/* the CPU engine: jobs with a fallback
								 * reason (not those that the choice sent
								 * there); the others: their attempts that
								 * failed */
	char		last_reason[256];	/* the latest such reason, or "" */
} EngineStats;

extern const EngineStats *sort_engine_stats(SortEngineId engine);
/*
 * Counts a sort of nrows that took ms in report's engine's statistics, once
 * for the sort that report follows however many jobs it takes (sort_job_run
 * counts its own; a node counts the rows an engine held, RowStager).
 */
extern void sort_engine_count_sort(SortJobReport *report, int64 nrows, double ms);
extern void sort_engine_stats_reset(void);

#endif							/* GPUSORT_ENGINE_H */
