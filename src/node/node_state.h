/*-------------------------------------------------------------------------
 *
 * node_state.h
 *	  The GpuSort node's executor state: what every path shares.
 *
 * plan/plan_node.c builds the node at plan time; executor.c runs it: it
 * collects the input (collect/) and sorts it by one of the paths of
 * paths/path.h (in memory, sorted runs, tuplesort), through which the rows
 * are then read; explain/explain.c shows it, asking the path for its lines.
 * Each path keeps its own state behind a pointer (RunsState in
 * paths/runs/runs.h, ShareState in paths/runs/share.h, tuplesort's in
 * paths/tuplesort/fallback.c); this header includes only rows/ and the
 * layers below node/.
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


#include "compat.h"
#include "engine/engine.h"
#include "node/parallel/worker_stats.h"
#include "node/rows/row_store.h"
#include "node/rows/tie_order.h"
#include "util/timing.h"

/* A way of returning the sorted rows (paths/path.h). */
typedef struct NodePath NodePath;

/* The sorted rows gathered ahead of the emit phase (emit_ring.h). */
typedef struct GatherRing GatherRing;

/*
 * How a parallel window's participant reads its rows (WINDOW_SLICES,
 * window_calc.c), or one of a node whose leader returns every row
 * (gpusort_leader_returns_all), decided before its first row (executor.c).
 */
typedef enum SliceReading
{
	SLICES_NONE,				/* neither: all sorted rows */
	SLICES_UNDECIDED,			/* before its first row */
	SLICES_READ,				/* slices of the shared input */
	SLICES_ALONE,				/* all rows, read by this participant alone */
	/* (from here on, none) */
	SLICES_NO_ROWS,				/* another participant reads them all */
	SLICES_LATE					/* none: it came after they were sorted */
} SliceReading;

/*
 * The settings a node depends on, taken once as it begins, as tuplesort
 * takes its budget: a SET in the middle of the query, even one that a
 * function of the query makes, changes nothing in a sort under way.  (The
 * memory budget is taken into the node's ledger, GpuSortState.memory.)
 */
typedef struct NodeSettings
{
	bool		enabled;		/* gpusort.enabled */
	bool		spill;			/* gpusort.spill */
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

	MemoryLedger memory;		/* the budget (gpusort.work_mem, or
								 * work_mem, taken as the node begins),
								 * which the row store charges
								 * (collect/memory.h) */
	const NodePath *path;		/* the path that collects the input, then
								 * returns its rows (path.h); NULL before
								 * the input is read */
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
	struct TopNFilter *top_n;	/* the top N rows of each partition kept as
								 * the input is read (top_n_filter.c), or
								 * NULL */
	struct WindowCalc *window;	/* window functions computed as the rows
								 * are returned (window_calc.c), or NULL */
	struct DistinctFilter *distinct;	/* the first row of each group that
										 * a Unique above keeps returned, no
										 * other (distinct_filter.c), or
										 * NULL */
	int			distinct_keys;	/* the leading sort keys that are the
								 * Unique's columns (0: not so) */
	bool		group_first;	/* the row a path just returned is the
								 * first of its group of the Unique's:
								 * the engine that held it kept no other
								 * (node_stage_next); reset for each row */
	struct MarkRows *marks;		/* a merge join's rows since its mark, kept
								 * for rows that are their one key
								 * (mark_rows.c), or NULL */

	/* each path's own state, and a parallel query's */
	struct RunsState *spill;	/* sorted runs, held rows (paths/runs/runs.h) */
	struct ShareState *parallel;	/* workers' statistics, a shared input
									 * (paths/runs/share.h) */
	struct TuplesortPathState *fallback;	/* tuplesort's (fallback.c), or
											 * NULL before it ran */
	SliceReading slicing;		/* a parallel window's, or where the
								 * leader returns every row (else
								 * SLICES_NONE) */

	/* EXPLAIN ANALYZE */
	const NodePath *ran;		/* the path that sorted the last input, or
								 * NULL */
	SortJobReport report;		/* its words kept in report_cxt */
	MemoryContext report_cxt;
	int			radix_keys;		/* key columns the engine sorted */
	int			engine_keys;	/* sort keys they order completely */
	int64		tied_rows;		/* rows the comparators then ordered */
	uint64		xfrm_inversions;	/* pairs the strxfrm() keys put out of
									 * order, found by the check */
	Size		memory_used;
	instr_time	collect_start;	/* when the last collect began */
	double		collect_ms;
	double		sort_ms;
	double		emit_ms;
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

/*
 * Is the node a parallel window's (its participants read slices), or one
 * whose leader returns every row?  Either way its participants add their
 * rows to one input and hand the leader those the engine does not hold
 * (shared_stage.c).
 */
static inline bool
node_is_slices(const GpuSortState *state)
{
	return state->slicing != SLICES_NONE;
}

/* Does the leader return every row (no window, no slices)? */
static inline bool
node_leader_returns_all(const GpuSortState *state)
{
	return state->slicing != SLICES_NONE && state->window == NULL;
}

/* executor.c */
extern CustomExecMethods gpusort_exec_methods;
extern TupleTableSlot *node_sorted_next(GpuSortState *state);
extern void node_collect(GpuSortState *state);

#endif							/* GPUSORT_NODE_STATE_H */
