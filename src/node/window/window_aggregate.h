/*-------------------------------------------------------------------------
 *
 * window_aggregate.h
 *	  An aggregate over a partition's rows (sum(x) OVER (PARTITION BY ...),
 *	  a running sum), computed by the GpuSort node as WindowAgg computes it
 *	  (window_aggregate.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_NODE_WINDOW_AGGREGATE_H
#define GPUSORT_NODE_WINDOW_AGGREGATE_H

#include "nodes/execnodes.h"
#include "nodes/primnodes.h"

typedef struct WindowAggregate WindowAggregate;

/*
 * Its state, its arguments evaluated in parent's expression context; moving:
 * the head of its frames moves (its inverse transition function, if it has
 * one that may be used, takes rows out).
 */
extern WindowAggregate *window_aggregate_begin(WindowFunc *wfunc, PlanState *parent,
											   bool moving);

/* A new partition: the state back to the aggregate's initial value. */
extern void window_aggregate_reset(WindowAggregate *agg);

/* Adds the row in econtext's scan tuple to the partition's state. */
extern void window_aggregate_advance(WindowAggregate *agg, ExprContext *econtext);

/*
 * Takes the row in econtext's scan tuple, added before, out of the state:
 * false where it cannot (no inverse, or the inverse declined), and the
 * caller adds the frame's rows again after a reset.
 */
extern bool window_aggregate_retreat(WindowAggregate *agg, ExprContext *econtext);

/* The value over the rows added since the reset (kept until one more is). */
extern Datum window_aggregate_value(WindowAggregate *agg, bool *isnull);

extern void window_aggregate_end(WindowAggregate *agg);

/*
 * A window function's argument as the node evaluates it: over the sorted
 * row, the node's scan tuple, rather than the WindowAgg's input.
 */
extern Node *window_expr_of_sorted_row(Node *expr);

#endif							/* GPUSORT_NODE_WINDOW_AGGREGATE_H */
