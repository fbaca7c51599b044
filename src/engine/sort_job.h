/*-------------------------------------------------------------------------
 *
 * sort_job.h
 *	  The contract between gpusort's sort engines and the code that hands
 *	  them work: sort jobs, sorts of plain values, and the engine interface.
 *
 * A sort job is a set of rows numbered 0..nrows-1 and one or more columns of
 * order-preserving unsigned 64-bit keys (keys/key_codec.h), the most
 * significant column first.  An engine produces the permutation of row
 * numbers that orders the rows by the columns, lexicographically and stably
 * (rows whose keys are all equal keep their original order).  An engine
 * sorts whatever it is given: which engine runs a job is the chooser's
 * business (engine.h), as is a whole input that does not fit in memory,
 * which reaches an engine one part at a time.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SORT_JOB_H
#define SORT_JOB_H

#include "postgres.h"

#include "engine/row_seams.h"
#include "keys/sort_keys.h"

/*
 * The rows of a job that an engine received while they were being collected
 * (row_seams.h's RowStoreUploader).
 */
typedef struct SortUpload SortUpload;

/* Room for the name of the kernel that sorted a job (SortJob's kernel). */
#define SORT_KERNEL_LEN		48

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

	/*
	 * Optional, with a payload: an engine that sorts the payload may also
	 * hand back keys[0] in sorted order, in keys_sorted (allocated in
	 * CurrentMemoryContext, unless the caller set it to nrows words of its
	 * own), when want_sorted_keys asks; else NULL.  The caller then finds
	 * rows that tie on keys[0] without perm.
	 */
	bool		want_sorted_keys;
	uint64	   *keys_sorted;

	/* Optional: rows of keys[0] and payload that were uploaded already. */
	SortUpload *upload;

	/*
	 * Out: how the engine ran the job, where it has more to tell than its
	 * name (the GPU service: which GPU, how long the job was queued), for
	 * EXPLAIN ANALYZE (as the engine's note_name); else NULL.
	 */
	const char *engine_note;

	/*
	 * Out: the kernel that sorted the keys, and how, where the engine tells
	 * (the GPU's: "radix, 3 passes over 20 bits"), for EXPLAIN ANALYZE;
	 * else "".
	 */
	char		kernel[SORT_KERNEL_LEN];
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

/*
 * A registered engine's number (engine.h's registry), in the order of
 * registration; the CPU engine, which is always there, is number 0.
 */
typedef int SortEngineId;

#define SORT_ENGINE_CPU		0

/*
 * An engine.  Its functions return false, with the reason in *why (palloc'd
 * or static), when it cannot run the work: the chooser then falls back to
 * the CPU engine, which always succeeds.
 */
typedef struct SortEngine
{
	/*
	 * How gpusort.device selects it, and EXPLAIN and gpusort_stats() name
	 * it ("cpu", "gpu"); title is how messages name it ("the GPU").
	 */
	const char *name;
	const char *title;
	const char *note_name;		/* EXPLAIN's name for a SortJob's
								 * engine_note ("GPU Service"), or NULL:
								 * it gives none */
	bool		(*sort_job) (SortJob *job, char **why);
	bool		(*sort_values) (SortValues *values, char **why);

	/*
	 * The cost model (cost.c): what a job of nrows rows and nkeys key
	 * columns is estimated to take on this engine, its start included
	 * where it has not started in this backend; negative, with the reason
	 * in *why, when it cannot take the job (too large, no device).
	 */
	double		(*estimate_ms) (uint32 nrows, int nkeys, const char **why);

	/*
	 * An engine that may be missing here (a GPU) says so, with the reason;
	 * one that starts in the backend (the GPU) says whether it runs yet.
	 * NULL: always there; always running.
	 */
	bool		(*unavailable) (const char **why);
	bool		(*started) (void);

	/*
	 * An engine shared by all backends (the GPU service) may decline a job
	 * that the chooser sent it, when its queue would make it slower than
	 * the CPU engine, or it is down: false, with the reason.  NULL: it
	 * takes every job.
	 */
	bool		(*admits) (uint32 nrows, int nkeys, char **why);

	/*
	 * Such an engine also learns what jobs take on the CPU engine now
	 * (with the load of all backends), to weigh its queue against: the
	 * chooser tells it of each job the CPU engine ran.  NULL: not needed.
	 */
	void		(*cpu_sorted) (uint32 nrows, int nkeys, double ms);

	/*
	 * Its side of the early upload of rows being collected, or NULL (one
	 * engine at most has one).
	 */
	const RowStoreUploader *uploader;
	const RowStager *stager;	/* holds inputs larger than the budget, or
								 * NULL */
} SortEngine;

/* The CPU engine: LSD radix sort (engine_cpu.c). */
extern const SortEngine cpu_sort_engine;

/*
 * Bytes of scratch memory the CPU engine needs for a job of nrows rows, so
 * that callers can respect their memory budget before they start.
 */
extern Size cpu_sort_scratch_bytes(uint32 nrows);

/*
 * Sorts rows[0..n) stably by keys[row], by insertion: for the few rows where
 * a job costs more than the sort.
 */
extern void cpu_insertion_sort(const uint64 *keys, uint32 *rows, uint32 n);

#endif							/* SORT_JOB_H */
