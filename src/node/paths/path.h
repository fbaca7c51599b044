/*-------------------------------------------------------------------------
 *
 * path.h
 *	  The ways a GpuSort node returns the rows it sorted, each behind one
 *	  table of callbacks, as tuplesort's variants are.
 *
 * The node reads its input (executor.c) into the path it begins with, the
 * in-memory path (or tuplesort, where that is chosen before any row); a
 * path whose row store outgrows the memory budget hands the input on to
 * another, as tuplesort's status goes from in memory to tapes, and the
 * path that has the input at its end sorts it.  Each is a folder of its
 * own, with its table and its state:
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
 * Every call of the node that depends on where its rows are (a row of the
 * input, the input's end, the next row, mark and restore, rescan, EXPLAIN
 * ANALYZE, the end) goes through the path's table: a new path is a folder
 * and an entry here.
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

	/*
	 * Collecting: the path the node begins with (in memory) begins, and may
	 * hand the input on before any row (begin: NULL for the paths that only
	 * take it over from another); a row of the input (add); for the paths that collect into
	 * the row store, the row that the store refused for want of room (full:
	 * node_store_add calls it; NULL for tuplesort).  Either may hand the
	 * input on to another path (state->path changes), which then takes the
	 * row.  At the input's end the path sorts what it holds (finish), and
	 * is the one that ran (state->ran).
	 */
	void		(*begin) (GpuSortState *state);
	void		(*add) (GpuSortState *state, TupleTableSlot *slot);
	void		(*full) (GpuSortState *state, TupleTableSlot *slot);
	void		(*finish) (GpuSortState *state);

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
extern const NodePath node_runs_path;	/* runs_path.c */
extern const NodePath node_tuplesort_path;	/* fallback.c */

/* A row of the input into the row store, or to the path where it is full. */
static inline void
node_store_add(GpuSortState *state, TupleTableSlot *slot)
{
	if (!row_store_add(&state->store, slot))
		state->path->full(state, slot);
}

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
 * The runs path takes the input over from the in-memory path, whose store
 * is full for the first time (spill.c): the engine that holds rows takes
 * them where it can, else sorted runs begin; or, beginning nothing, it
 * says why tuplesort's method pays better here.
 */
extern const char *node_runs_begin(GpuSortState *state);

/*
 * Before any row: where tuplesort's method pays better than the runs path's
 * for the input the planner expects, why (spill.c); else NULL.
 */
extern const char *node_tuplesort_planned(GpuSortState *state);

/*
 * Before any row: why the input goes to tuplesort (gpusort.enabled off, or
 * node_tuplesort_planned), else NULL (memory_path.c).
 */
extern const char *node_tuplesort_first(GpuSortState *state);

/*
 * At the input's end, the rows that fit the store: where a parallel query's
 * participants share one input, the runs path takes them too (true).
 */
extern bool node_runs_take_shared(GpuSortState *state);

/*
 * The tuplesort path takes the input over (fallback.c): the rows collected
 * so far and the pending slot (if not NULL) go to a tuplesort, which takes
 * the rest; for a choice or a fallback reason (the other NULL) given by
 * EXPLAIN ANALYZE.
 */
extern void node_tuplesort_begin(GpuSortState *state, TupleTableSlot *pending,
								 const char *choice,
								 const char *fallback_reason);

#endif							/* GPUSORT_NODE_PATH_H */
