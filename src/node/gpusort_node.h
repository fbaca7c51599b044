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
 * Where a GpuSort's rows go to a Gather Merge, marks it parallel-aware if
 * its participants may add their rows to one input that the engine holds
 * (a registered engine shares held inputs, and the order's keys can be
 * held): the executor then gives it the query's shared memory
 * (shared_stage.c), and EXPLAIN calls it Parallel.
 */
extern void gpusort_mark_shared(CustomScan *cscan);

#endif							/* GPUSORT_NODE_H */
