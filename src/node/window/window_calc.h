/*-------------------------------------------------------------------------
 *
 * window_calc.h
 *	  Window functions computed by the GpuSort node as it returns its rows
 *	  (window_calc.c); what the planner decides of them is in window.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_NODE_WINDOW_CALC_H
#define GPUSORT_NODE_WINDOW_CALC_H

#include "node/node_state.h"

/*
 * window_calc.c: the window functions' values of the rows that sorted_next
 * returns in order (the executor's node_sorted_next), into window_slot
 * with the sorted row: of the node's window clause, or of its two.
 */
typedef TupleTableSlot *(*NodeRowSource) (GpuSortState *state);
extern struct WindowCalc *node_window_begin(GpuSortState *state,
											TupleTableSlot *window_slot,
											NodeRowSource sorted_next);
extern TupleTableSlot *node_window_next(GpuSortState *state);
extern void node_window_rescan(struct WindowCalc *window);
extern void node_window_end(struct WindowCalc *window);

#endif							/* GPUSORT_NODE_WINDOW_CALC_H */
