/*-------------------------------------------------------------------------
 *
 * path.h
 *	  The ways a GpuSort node returns the rows it sorted, each behind one
 *	  table of callbacks, as tuplesort's variants are.
 *
 * The node collects its input (executor.c), then sorts it by one of three
 * paths, chosen as the input ends or outgrows the memory budget; each is a
 * folder of its own, with its table and its state:
 *
 *	memory/		all rows in the row store, sorted by an engine and the
 *				comparators (sort_rows.c, here), read by their place
 *				(memory_path.c, emit_ring.c);
 *	runs/		rows over the budget held by the engine that holds rows, or
 *				sorted in runs written to temporary files, read back in
 *				order or merged (runs_path.c, spill.c, spill_stage.c,
 *				held_order.c; shared_stage.c: one input for a parallel
 *				query's participants); RunsState, ShareState;
 *	tuplesort/	PostgreSQL's own sort, where it pays better or the engines
 *				cannot take the input (fallback.c); TuplesortPathState.
 *
 * From the sort on, every call of the node that depends on where its rows
 * are (the next row, mark and restore, rescan, EXPLAIN ANALYZE, the end)
 * goes through the path's table: a new path is a folder and an entry here.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_NODE_PATH_H
#define GPUSORT_NODE_PATH_H

#include "commands/explain.h"
#include "executor/tuptable.h"
#include "portability/instr_time.h"

#include "node/node_state.h"

struct NodePath
{
	const char *name;			/* for debugging: "in memory", ... */

	/* The next (or previous) row in order, in slot (cleared past the end). */
	TupleTableSlot *(*next) (GpuSortState *state, bool forward,
							 TupleTableSlot *slot);

	/* A merge join's mark, and going back to it. */
	void		(*mark) (GpuSortState *state);
	void		(*restore) (GpuSortState *state);

	/*
	 * Back to the first row, where the sorted rows allow it (the plan asked
	 * for random access, or they are in memory); false where the input must
	 * be read and sorted again.
	 */
	bool		(*rescan) (GpuSortState *state);

	/* Forgets the sorted rows (a rescan that reads the input again, the end). */
	void		(*end) (GpuSortState *state);

	/*
	 * EXPLAIN ANALYZE: the engine and the method, as the leader's worker
	 * lines name them too; the path's own properties; and its times after
	 * the sort's.
	 */
	const char *(*engine_shown) (GpuSortState *state);
	const char *(*method_shown) (GpuSortState *state);
	void		(*explain) (GpuSortState *state, ExplainState *es);
	void		(*explain_times) (GpuSortState *state, ExplainState *es);
};

extern const NodePath node_memory_path;	/* memory_path.c */
extern const NodePath node_runs_path;	/* spill.c */
extern const NodePath node_tuplesort_path;	/* fallback.c */

/*
 * Does the node keep a merge join's rows since its mark (mark_rows.c)?  Rows
 * sorted in memory are gone back to by their place instead.
 */
static inline bool
node_keeps_marks(const GpuSortState *state)
{
	return state->marks != NULL && state->path != &node_memory_path;
}

/*
 * What the engine paths (in memory, sorted runs) show alike in EXPLAIN
 * ANALYZE: the engine, why (the fallback reason where the CPU engine sorted:
 * fallback_shown), the kernel it ran (kernel_shown: not for rows it held,
 * which their path tells of), the keys' kinds and the rows the comparators
 * ordered, compared_nulls of them led by a NULL (path_explain.c).
 */
extern void node_path_explain_engine(GpuSortState *state, ExplainState *es,
									 bool fallback_shown, bool kernel_shown,
									 int64 compared_nulls);

/*
 * Sorts the collected rows in memory, with an engine and the comparators
 * (sort_rows.c): the in-memory path's sort, or a sorted run's (run: the
 * run is written with its keys, found through perm); small: below
 * gpusort.min_rows, on the CPU engine.
 */
extern void node_sort_rows(GpuSortState *state, bool small, bool run);

/*
 * The in-memory path (memory_path.c): sorts the rows the store collected,
 * all of the input, read since start, and reads them from the first.
 */
extern void node_sort_in_memory(GpuSortState *state, instr_time start);

/*
 * The tuplesort path (fallback.c): sorts with tuplesort the rows collected
 * so far, the pending slot (if not NULL) and the rest of the input, for a
 * choice or a fallback reason (the other NULL) given by EXPLAIN ANALYZE.
 */
extern void node_sort_with_tuplesort(GpuSortState *state,
									 TupleTableSlot *pending,
									 const char *choice,
									 const char *fallback_reason,
									 instr_time start);

#endif							/* GPUSORT_NODE_PATH_H */
