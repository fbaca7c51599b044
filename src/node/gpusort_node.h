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

/* The GpuSort node that takes the place of a Sort. */
extern CustomScan *gpusort_make_node(Sort *sort);

#endif							/* GPUSORT_NODE_H */
