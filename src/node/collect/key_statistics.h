/*-------------------------------------------------------------------------
 *
 * key_statistics.h
 *	  What the planner's statistics say of a GpuSort node's leading sort
 *	  keys (key_statistics.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_NODE_KEY_STATISTICS_H
#define GPUSORT_NODE_KEY_STATISTICS_H

#include "node/node_state.h"

/*
 * The rows of the node's input (the planner's, one participant's in a
 * parallel query) that a group equal in the first nkeys sort keys is
 * expected to hold, by the distinct values that ANALYZE counted of the
 * table columns they are; -1 where a key is not a table's column as it
 * is, or no statistics count its values.
 */
extern double node_expected_group_rows(GpuSortState *state, int nkeys);

#endif							/* GPUSORT_NODE_KEY_STATISTICS_H */
