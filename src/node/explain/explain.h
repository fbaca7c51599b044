/*-------------------------------------------------------------------------
 *
 * explain.h
 *	  EXPLAIN of the GpuSort node (explain.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_NODE_EXPLAIN_H
#define GPUSORT_NODE_EXPLAIN_H

#include "commands/explain.h"

#include "node/node_state.h"

/* explain.c */
extern void gpusort_explain(CustomScanState *node, List *ancestors,
							ExplainState *es);

/*
 * In a parallel worker, once it sorted and as the node shuts down: what it
 * did, for the leader's EXPLAIN ANALYZE.
 */
extern void gpusort_publish_worker_stats(GpuSortState *state);

#endif							/* GPUSORT_NODE_EXPLAIN_H */
