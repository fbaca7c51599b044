/*-------------------------------------------------------------------------
 *
 * node_state.h
 *	  The GpuSort node's executor state, and what the node's files call in
 *	  one another.
 *
 * plan_node.c builds the node at plan time; executor.c runs it: it collects
 * the input and sorts it by one of the paths of path.h (in memory, sorted
 * runs, tuplesort), through which the rows are then read; explain.c shows
 * it, asking the path for its lines.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_NODE_STATE_H
#define GPUSORT_NODE_STATE_H

#include "postgres.h"

#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "portability/instr_time.h"
#include "utils/sortsupport.h"
#include "utils/tuplesort.h"

#include "utils/tuplestore.h"

#include "compat.h"
#include "engine/engine.h"
#include "node/parallel/worker_stats.h"
#include "node/rows/row_store.h"
#include "node/rows/sorted_runs.h"
#include "node/rows/tie_order.h"
#include "util/timing.h"

/* A way of returning the sorted rows (paths/path.h). */
typedef struct NodePath NodePath;

/* The sorted rows gathered ahead of the emit phase (emit_ring.h). */
typedef struct GatherRing GatherRing;

/*
 * How a parallel window's participant reads its rows (WINDOW_SLICES,
 * window_calc.c), decided before its first row (executor.c).
 */
typedef enum SliceReading
{
	SLICES_NONE,				/* not a parallel window: all sorted rows */
	SLICES_UNDECIDED,			/* a parallel window, before its first row */
	SLICES_READ,				/* slices of the shared input */
	SLICES_ALONE,				/* all rows, read by this participant alone */
	SLICES_NO_ROWS,				/* another participant reads them all */
	SLICES_LATE					/* none: it came after they were sorted */
} SliceReading;

/*
 * The settings a node depends on, taken once as it begins, as tuplesort
 * takes its budget: a SET in the middle of the query, even one that a
 * function of the query makes, changes nothing in a sort under way.
 */
typedef struct NodeSettings
{
	bool		enabled;		/* gpusort.enabled */
	bool		spill;			/* gpusort.spill */
	int			budget_kb;		/* gpusort.work_mem, or work_mem */
	int			min_rows;		/* gpusort.min_rows */
	int			min_run_rows;	/* gpusort.min_run_rows */
	int			device;			/* gpusort.device: an engine's number, or
								 * GPUSORT_DEVICE_AUTO */
	int			held_gpus;		/* gpusort.held_gpus */
} NodeSettings;

typedef struct GpuSortState
{
	CustomScanState css;
	NodeSettings settings;

	/* sort keys, from the plan */
	int			nkeys;
	AttrNumber *attnos;
	Oid		   *sortops;
	Oid		   *collations;
	bool	   *nullsfirst;
	SortSupport ssups;			/* comparators for all keys */
	TieOrder	ties;			/* orders rows the engine leaves tied */
	int			codec_keys;		/* leading keys that have codecs */
	TupleDesc	indesc;			/* the input's tuple descriptor */
	bool		random_access;	/* backward scan, mark or rewind wanted */
	bool		keys_only;		/* the row is its one sort key */
	struct HeapInput *heap_input;	/* the input's rows readable by the
									 * node from the heap (heap_input.c),
									 * or NULL */
	bool		heap_read;		/* and read so, by the last collect */

	const NodePath *path;		/* where the sorted rows are read from
								 * (path.h); NULL before the input is read */
	RowStore	store;
	uint32	   *perm;			/* keys_only: the order of the keys */
	MinimalTuple *sorted;		/* otherwise: all rows, in order */
	GatherRing *ring;			/* sorted's rows gathered ahead, or NULL */
	bool		wide_rows;		/* tuples average more than a cache line */
	TupleTableSlot *sort_slot;	/* keys_only: tuplesort's MinimalTuples */
	int64		ntotal;			/* rows to return */
	int64		current;		/* last row returned: -1 before the first,
								 * ntotal after the last */
	int64		marked;
	Tuplesortstate *tuplesort;
	bool		tuplesort_datums;	/* it sorts Datums, as Sort would */
	struct TopNFilter *top_n;	/* the top N rows of each partition kept as
								 * the input is read (top_n_filter.c), or
								 * NULL */
	struct WindowCalc *window;	/* window functions computed as the rows
								 * are returned (window_calc.c), or NULL */
	struct MarkRows *marks;		/* a merge join's rows since its mark, kept
								 * for rows that are their one key
								 * (mark_rows.c), or NULL */

	/* inputs larger than the memory budget (spill.c) */
	bool		spilling;		/* rows go to sorted runs */
	SortedRuns	runs;
	Tuplestorestate *merged;	/* the merged rows, where the plan goes back */
	int64		spilled_rows;
	int64		spilled_tied_rows;

	/* or are held by the engine (spill_stage.c) */
	const RowStager *stager;
	struct SortStage *stage;
	Tuplesortstate *stage_nulls;	/* the rows led by a NULL */
	int			held_tie_key;	/* the first sort key the held keys leave
								 * ties in (nkeys: none); the store then
								 * keeps their words after each tuple */
	struct StagePart *held_main;	/* the rows held, read in order */
	int			stage_parts;	/* the parts the engine sorted the rows in;
								 * several are merged as runs are */
	struct StagePart *stage_part_runs;	/* they, as runs */
	bool		nulls_done;
	int64		staged_batches; /* stores the engine took */
	int64		staged_rows;	/* their rows */
	const char *stage_why;		/* why the engine holds none */
	struct SortStage *closed_stage; /* a leader's shared input, added to
									 * no more (a run once all have added:
									 * node_stage_closed_to_run) */
	bool		held_empty;		/* none of the rows held are to be read
								 * here (a worker's, or none held) */

	/*
	 * a parallel query (shared_stage.c): its workers' statistics, and the
	 * one input that its participants may share
	 */
	struct NodeShare *share;	/* in the query's shared memory, or NULL */
	SharedWorkerStats *worker_stats;	/* likewise, after it */
	WorkerSortStats *workers_kept;	/* the leader's copy of them */
	int			nworkers_kept;	/* its entries; -1: not copied yet */
	struct ParallelContext *pcxt;	/* the leader's */
	const RowStager *shared_stager;
	struct SortStage *shared_stage; /* begun or joined, no row added yet */
	bool		share_attached; /* this participant joined the input */
	bool		share_done;		/* this participant said it adds no more */
	bool		sharing;		/* share->shared: says when it adds no more */
	bool		held_shared;	/* its stage is the shared input (kept for
								 * EXPLAIN) */
	SliceReading slicing;		/* a parallel window's (else SLICES_NONE) */
	struct dsm_segment *rest_seg;	/* its file set for rows the engine
									 * refused (shared_stage.c), or NULL */
	MemoryContextCallback rest_detach;
	struct BufFile *rest_file;	/* a worker's, open: its rows refused */
	bool		rest_handed;	/* a worker's rows went to the leader */
	struct BufFile *rest_read;	/* the leader's: a worker's, being read */
	int			rest_worker;	/* and the worker's file to read next */

	/* EXPLAIN ANALYZE */
	const NodePath *ran;		/* the path that sorted the last input, or
								 * NULL */
	SortJobReport report;		/* its words kept in report_cxt */
	MemoryContext report_cxt;
	const char *tuplesort_choice;	/* why tuplesort ran: chosen, */
	const char *tuplesort_reason;	/* or fallen back to */
	int			radix_keys;		/* key columns the engine sorted */
	int			engine_keys;	/* sort keys they order completely */
	int64		tied_rows;		/* rows the comparators then ordered */
	int64		held_disk_kb;	/* what the tuplesorts of held rows wrote to
								 * disk: tied groups over the budget, rows
								 * led by a NULL */
	uint64		xfrm_inversions;	/* pairs the strxfrm() keys put out of
									 * order, found by the check */
	Size		memory_used;
	double		collect_ms;
	double		sort_ms;
	double		emit_ms;
	int			offloaded_runs; /* sorted runs another engine than the CPU's
								 * sorted */
	double		spill_ms;		/* writing the runs */
	double		merge_ms;		/* merging them before the first row */
	double		hold_ms;		/* handing stores to the engine that holds
								 * them (part of collect_ms) */
	double		read_back_ms;	/* waiting for its rows back (part of
								 * emit_ms) */
} GpuSortState;

/* Stores a keys-only row, its key decoded (or the NULL), in a virtual slot. */
static inline TupleTableSlot *
store_key_value(GpuSortState *state, TupleTableSlot *slot, uint64 key, bool isnull)
{
	ExecClearTuple(slot);
	slot->tts_isnull[0] = isnull;
	slot->tts_values[0] = isnull ? (Datum) 0 :
		key_part_decode(&state->store.columns[0].part, key);
	return ExecStoreVirtualTuple(slot);
}

/* The same of a row of the keys-only store (row -1: the NULL). */
static inline TupleTableSlot *
store_key_row(GpuSortState *state, TupleTableSlot *slot, int64 row)
{
	return store_key_value(state, slot,
						   row < 0 ? 0 : state->store.columns[0].keys[row], row < 0);
}

/*
 * The row at position pos of the sorted output: its row number in the store,
 * or -(i + 1) for the i-th row led by a NULL.
 */
static inline int64
sorted_row(GpuSortState *state, int64 pos)
{
	RowStore   *store = &state->store;

	if (state->nullsfirst[0])
		return pos < store->nnullrows ? -pos - 1 :
			(int64) state->perm[pos - store->nnullrows];
	return pos < store->nrows ? (int64) state->perm[pos] :
		-(pos - store->nrows) - 1;
}

/* Is the node a parallel window's (its participants read slices)? */
static inline bool
node_is_slices(const GpuSortState *state)
{
	return state->slicing != SLICES_NONE;
}

/* executor.c */
extern CustomExecMethods gpusort_exec_methods;
extern TupleTableSlot *node_sorted_next(GpuSortState *state);
extern void node_collect(GpuSortState *state);

#endif							/* GPUSORT_NODE_STATE_H */
