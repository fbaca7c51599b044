/*-------------------------------------------------------------------------
 *
 * runs.h
 *	  The sorted runs path's entry points: an input over the memory budget
 *	  sorted in runs on temporary files (spill.c) or held by the engine that
 *	  holds rows (spill_stage.c); the path's table is in path.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_NODE_RUNS_H
#define GPUSORT_NODE_RUNS_H

#include "utils/tuplestore.h"

#include "node/node_state.h"
#include "node/rows/sorted_runs.h"

/*
 * The sorted runs path's state: an input larger than the memory budget,
 * sorted in runs on temporary files (spill.c) or held by the engine that
 * holds rows (spill_stage.c).
 */
typedef struct RunsState
{
	bool		spilling;		/* rows go to sorted runs, or are held */
	SortedRuns	runs;
	Tuplestorestate *merged;	/* the merged rows, where the plan goes back */
	int64		spilled_rows;
	int64		spilled_tied_rows;
	int			offloaded_runs; /* sorted runs another engine than the CPU's
								 * sorted */

	/* or held by the engine (spill_stage.c) */
	const RowStager *stager;
	struct SortStage *stage;
	Tuplesortstate *stage_nulls;	/* the rows led by a NULL */
	int64		null_rows;		/* and how many */
	int			held_tie_key;	/* the first sort key the held keys leave
								 * ties in (nkeys: none); the store then
								 * keeps their words after each tuple */
	int			held_words;		/* the words of each row's key held: of the
								 * store's key columns, then any tie words
								 * (row_seams.h) of a collation key */
	KeyColumn  *held_columns;	/* what each of those is (tie words: a
								 * collation key's later words) */
	struct StagePart *held_main;	/* the rows held, read in order */
	int			stage_parts;	/* the parts the engine sorted the rows in;
								 * several are merged as runs are */
	struct StagePart *stage_part_runs;	/* they, as runs */
	bool		nulls_done;
	int64		staged_batches; /* stores the engine took */
	int64		staged_rows;	/* their rows */
	int			group_words;	/* under a Unique: the key words of its
								 * groups, whose first rows alone the
								 * engine may keep (0: every row) */
	int64		held_kept;		/* the rows it hands back, once sorted */
	int64		run_dropped;	/* under a Unique: rows after the first of
								 * their group in a sorted run, not written */
	const char *stage_why;		/* why the engine holds none */
	char	   *groups_why;		/* why the engine may hold none: the tied
								 * groups expected (spill_stage.c) */
	bool		groups_estimated;	/* by the keys' statistics */
	struct SortStage *closed_stage; /* a leader's shared input, added to
									 * no more (a run once all have added:
									 * node_stage_closed_to_run) */
	bool		held_empty;		/* none of the rows held are to be read
								 * here (a worker's, or none held) */
	int64		held_disk_kb;	/* what the tuplesorts of held rows wrote to
								 * disk: tied groups over the budget, rows
								 * led by a NULL */

	/* EXPLAIN ANALYZE */
	double		spill_ms;		/* writing the runs */
	double		merge_ms;		/* merging them before the first row */
	double		hold_ms;		/* handing stores to the engine that holds
								 * them (part of collect_ms) */
	double		read_back_ms;	/* waiting for its rows back (part of
								 * emit_ms) */
} RunsState;

/* The time the runs path took writing and merging runs, beside the sort's. */
static inline double
node_spill_ms(const GpuSortState *state)
{
	return state->spill->spill_ms + state->spill->merge_ms;
}

/* Makes the node's RunsState (as it begins). */
extern void node_spill_create(GpuSortState *state);

/* Do the input's rows go to sorted runs, or to the engine that holds them? */
static inline bool
node_spilling(const GpuSortState *state)
{
	return state->spill->spilling;
}


/* spill.c */
#define NODE_TUPLESORT_HOLDS \
	"the input is expected to fit in tuplesort's memory, not in the engine's"
#define NODE_TUPLESORT_XFRM_RUNS \
	"the input exceeds the memory budget, and runs of collation keys would merge by comparisons as tuplesort does"
#define NODE_TUPLESORT_BACKWARD \
	"the input exceeds the memory budget and the plan reads it backward"
extern void node_spill_run(GpuSortState *state);
extern void node_spill_row(GpuSortState *state, TupleTableSlot *slot);
extern void node_spill_refused(GpuSortState *state, TupleTableSlot *slot);
extern void node_spill_finish(GpuSortState *state);
extern bool node_spill_next_in_order(GpuSortState *state, TupleTableSlot *into,
									 bool *group_first);

/* spill_stage.c */
extern bool node_stage_possible(GpuSortState *state);
extern void node_stage_plan_tails(GpuSortState *state);
extern bool node_stage_begin(GpuSortState *state);
extern bool node_stage_store(GpuSortState *state);
extern void node_stage_to_run(GpuSortState *state);
extern void node_stage_held_to_run(GpuSortState *state);
extern void node_stage_closed_to_run(GpuSortState *state);
extern void node_stage_finish(GpuSortState *state);
extern bool node_stage_next(GpuSortState *state, TupleTableSlot *into,
							bool *group_first);
extern bool node_stage_next_null(GpuSortState *state, TupleTableSlot *into);
extern bool node_stage_hand_nulls(GpuSortState *state);
extern void node_stage_add_part_runs(GpuSortState *state);
extern void node_stage_seek(GpuSortState *state, int64 row);
extern void node_stage_end(GpuSortState *state);

#endif							/* GPUSORT_NODE_RUNS_H */
