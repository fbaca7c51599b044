/*-------------------------------------------------------------------------
 *
 * gpusort_node.h
 *	  The GpuSort custom scan node: what the planner hook and the module's
 *	  entry point need of it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_NODE_H
#define GPUSORT_NODE_H

#include "postgres.h"

#include "nodes/plannodes.h"

/* Registers the node's methods (_PG_init). */
extern void gpusort_node_init(void);

/* Can GpuSort run this Sort?  Its leading key must be one the engines sort. */
extern bool gpusort_sort_supported(Sort *sort);

/* Are a GpuSort's rows nothing but their one sort key (keys_only)? */
extern bool gpusort_rows_are_key(CustomScan *cscan);

/* Is this custom scan a GpuSort? */
extern bool gpusort_is_node(CustomScan *cscan);

/* The GpuSort node that takes the place of a Sort. */
extern CustomScan *gpusort_make_node(Sort *sort);

/*
 * Where a GpuSort returns the query's result rows (nothing above it reads
 * its columns, bar a LIMIT), lets its input stop adding the junk columns
 * that only relabel a column of it (ORDER BY x COLLATE "C": the sort reads
 * x under "C", and nothing reads the junk copy).
 */
extern void gpusort_unproject_keys(CustomScan *cscan);

/*
 * A GpuSort's custom_private: the columns of its sort keys, their ordering
 * operators, collations and NULLS FIRST flags (four lists); whether its
 * participants may add their rows to one input, and whether the leader
 * then returns all of them (an Integer: SharedInput); for a node
 * that computes window functions, what window_plan.c keeps of them (NIL
 * for none); for a node under a Unique, the Unique's columns (as
 * gpusort_mark_distinct keeps them).
 */
#define GPUSORT_PRIVATE_SHARED	4
#define GPUSORT_PRIVATE_WINDOW	5
#define GPUSORT_PRIVATE_DISTINCT 6

typedef enum SharedInput
{
	NOT_SHARED,
	SHARED_INPUT,				/* under a Gather Merge: each participant
								 * returns its rows, the leader those held */
	SHARED_INPUT_LEADER_RETURNS /* under a Gather: the leader returns every
								 * row, in order (gpusort_distinct_gather) */
} SharedInput;

/* Is tlist Vars of the outer plan's columns 1, 2, ..., in order? */
extern bool gpusort_outer_columns_in_order(List *tlist);

/*
 * Is the Gather Merge's targetlist its input's columns, in their order (as
 * set_plan_references leaves it): a node above reads the GpuSort's?
 */
extern bool gpusort_gather_passes_columns(GatherMerge *gm);

/*
 * Where a Unique (DISTINCT, DISTINCT ON) reads a GpuSort's rows, or a
 * Gather Merge of them, has the GpuSort return only the first row of each
 * group of the Unique's columns (window/distinct_filter.c): the Unique
 * above, which stays, then sees no row it would drop within one
 * participant's rows.
 */
extern void gpusort_mark_distinct(Unique *unique);

/*
 * The Unique's columns of a GpuSort that gpusort_mark_distinct marked
 * (their numbers in its rows, equality operators and collations: three
 * lists), or NIL.
 */
extern List *gpusort_distinct_columns(CustomScan *cscan);

/*
 * Where a GpuSort's rows go to a Gather Merge, says that its participants
 * may add their rows to one input that the engine holds, where a
 * registered engine shares held inputs and the order's keys can be held
 * (shared_stage.c decides at run time).
 */
extern void gpusort_mark_shared(CustomScan *cscan);

/*
 * Says that its participants may add their rows to one input (where no
 * check is needed: a parallel window's always offer theirs); and may they?
 */
extern void gpusort_set_shares_input(CustomScan *cscan);
extern bool gpusort_shares_input(CustomScan *cscan);

/*
 * Is an engine there that shares the inputs it holds, and able to now (the
 * GPU service, with a GPU, gpusort.device not cpu)?  Without, a node whose
 * leader returns every row would read them all in one participant.
 */
extern bool gpusort_sharing_engine_ready(void);

/*
 * Where a Unique (DISTINCT ON, DISTINCT) reads a Gather Merge of a GpuSort
 * marked by gpusort_mark_distinct and gpusort_mark_shared, whose keys the
 * engine holds whole (exact, HELD_KEY_WORDS words at most), with an engine
 * ready that shares held inputs, and gpusort.parallel_window on: a Gather
 * in the place of both, over the GpuSort, which then returns the Unique's
 * rows itself: every participant adds its rows to one input, and the
 * leader alone returns them, in order, the first of each group only
 * (shared_stage.c); the workers return none.  NULL where not so.
 */
extern Plan *gpusort_distinct_gather(Unique *unique);

/* Is it such a node (the leader returns every row)? */
extern bool gpusort_leader_returns_all(CustomScan *cscan);

#endif							/* GPUSORT_NODE_H */
