/*-------------------------------------------------------------------------
 *
 * sort_engine.h
 *	  The seam between the code that builds sort keys (the GpuSort node, the
 *	  array functions) and the engines that sort them: the CPU radix sort and
 *	  the GPU.
 *
 * A sort job is a set of rows numbered 0..nrows-1 and one or more columns of
 * order-preserving unsigned 64-bit keys (see sort_keys.h), the most
 * significant column first.  An engine produces the permutation of row
 * numbers that orders the rows by the columns, lexicographically and stably
 * (rows whose keys are all equal keep their original order).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SORT_ENGINE_H
#define SORT_ENGINE_H

#include "postgres.h"

#include "keys/sort_keys.h"

/*
 * The rows of a job that an engine received while they were being collected
 * (sort_upload_rows below).
 */
typedef struct SortUpload SortUpload;

typedef struct SortJob
{
	uint32		nrows;			/* rows to sort */
	int			nkeys;			/* key columns */
	const uint64 *const *keys;	/* nkeys arrays of nrows keys, in row order;
								 * engines must not modify them */
	uint32	   *perm;			/* out: nrows row numbers in sorted order,
								 * unless payload_sorted; with a payload it
								 * may be NULL, and is then allocated (in
								 * CurrentMemoryContext) if needed */

	/*
	 * Optional: nrows words in row order (the GpuSort node's tuple
	 * pointers) that an engine may put in sorted order, into payload_out,
	 * saying so in payload_sorted (perm is then left unset); otherwise the
	 * caller applies perm to them itself.
	 */
	const uint64 *payload;
	uint64	   *payload_out;
	bool		payload_sorted;

	/* Optional: rows of keys[0] and payload that were uploaded already. */
	SortUpload *upload;
} SortJob;

/*
 * A sort of plain values, for the array functions: the values are turned
 * into keys, the keys sorted and turned back, with no permutation.  Floats
 * come back with -0 as 0 and every NaN as one NaN, so a caller whose values
 * hold others (key_values_exact() says) sorts a SortJob instead.
 */
typedef struct SortValues
{
	SortValueType type;
	bool		descending;
	uint32		n;
	const void *in;				/* n values */
	void	   *out;			/* out: the n values in order (not in) */
} SortValues;

/* The engines that can run a job; what EXPLAIN ANALYZE reports. */
typedef enum SortEngineKind
{
	SORT_ENGINE_CPU,
	SORT_ENGINE_GPU
} SortEngineKind;

/* What happened to one job, for EXPLAIN ANALYZE and the statistics. */
typedef struct SortJobReport
{
	SortEngineKind engine;		/* the engine that produced the result */
	const char *fallback_reason;	/* why the GPU was not used, or NULL */
} SortJobReport;

/*
 * Runs a job on the engine that gpusort.device selects, falling back to the
 * CPU engine when the GPU cannot do it.  Never fails but for out-of-memory and
 * interrupts, which are raised as errors in the usual way.
 */
extern void sort_job_run(SortJob *job, SortJobReport *report);

/* The CPU engine: LSD radix sort.  Always succeeds. */
extern void cpu_sort_job(SortJob *job);

/*
 * Bytes of scratch memory the CPU engine needs for a job of nrows rows, so
 * that callers can respect their memory budget before they start.
 */
extern Size cpu_sort_scratch_bytes(uint32 nrows);

/*
 * The GPU engine (engine_gpu.c, built with CUDA).  Returns false, with the
 * reason in *why, when it cannot run the job; the caller then uses the CPU.
 */
extern bool gpu_sort_job(SortJob *job, char **why);

/*
 * Uploads a job's leading key column (and its payload, if not NULL) while
 * its rows are still being collected, when the job is going to the GPU:
 * called as rows 0..nrows-1 are collected (capacity is the length of the
 * arrays), it queues those not uploaded before, to be copied while the
 * caller goes on.  Returns the upload to pass to the next call and to the
 * job, or NULL when nothing is being uploaded.  Until sort_upload_pause()
 * returns, the arrays must not move; the upload is cancelled when the
 * memory context cxt is reset, so that the arrays must live in it.
 */
extern SortUpload *sort_upload_rows(SortUpload *upload, int nkeys,
									const uint64 *keys, const uint64 *payload,
									uint32 nrows, uint32 capacity,
									MemoryContext cxt);
extern void sort_upload_pause(SortUpload *upload);
/* Ends an upload (its job ran, or will not): the engine may start others. */
extern void sort_upload_end(SortUpload *upload);

/* Sorts values, as sort_job_run sorts jobs. */
extern void sort_values_run(SortValues *job, SortJobReport *report);




extern void cpu_sort_values(SortValues *job);
extern bool gpu_sort_values(SortValues *job, char **why);

extern const char *sort_engine_name(SortEngineKind engine);

#endif							/* SORT_ENGINE_H */
