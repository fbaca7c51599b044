/*-------------------------------------------------------------------------
 *
 * node_state.h
 *	  The GpuSort node's executor state, and what the node's files call in
 *	  one another.
 *
 * plan_node.c builds the node at plan time; executor.c runs it, sorting the
 * rows with an engine (sort_rows.c) or with tuplesort (fallback.c) and
 * reading them through the gather ring (emit_ring.h, emit_ring.c); explain.c
 * shows it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_NODE_STATE_H
#define GPUSORT_NODE_STATE_H

#include "postgres.h"

#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "portability/instr_time.h"
#include "utils/sortsupport.h"
#include "utils/tuplesort.h"

#include "compat.h"
#include "engine/engine.h"
#include "keys/row_store.h"
#include "util/timing.h"
#include "keys/sort_keys.h"
#include "node/tie_order.h"

/* The sorted rows gathered ahead of the emit phase (emit_ring.h). */
typedef struct GatherRing GatherRing;

typedef enum NodePhase
{
	PHASE_START,				/* nothing read yet */
	PHASE_SORTED,				/* rows sorted in the row store */
	PHASE_TUPLESORT				/* rows sorted by tuplesort */
} NodePhase;

/* What ran, for EXPLAIN ANALYZE. */
typedef enum RunKind
{
	RUN_NONE,
	RUN_ENGINE,
	RUN_TUPLESORT
} RunKind;

typedef struct GpuSortState
{
	CustomScanState css;

	/* sort keys, from the plan */
	int			nkeys;
	AttrNumber *attnos;
	Oid		   *sortops;
	Oid		   *collations;
	bool	   *nullsfirst;
	SortSupport ssups;			/* comparators for all keys */
	TieOrder	ties;			/* orders rows the engine leaves tied */
	int			codec_keys;		/* leading keys that have codecs */
	TupleDesc	indesc;			/* the input's tuple descriptor */
	bool		random_access;	/* backward scan, mark or rewind wanted */
	bool		keys_only;		/* the row is its one sort key */

	NodePhase	phase;
	RowStore	store;
	uint32	   *perm;			/* keys_only: the order of the keys */
	MinimalTuple *sorted;		/* otherwise: all rows, in order */
	GatherRing *ring;			/* sorted's rows gathered ahead, or NULL */
	bool		wide_rows;		/* tuples average more than a cache line */
	TupleTableSlot *sort_slot;	/* keys_only: tuplesort's MinimalTuples */
	int64		ntotal;			/* rows to return */
	int64		current;		/* last row returned: -1 before the first,
								 * ntotal after the last */
	int64		marked;
	Tuplesortstate *tuplesort;

	/* EXPLAIN ANALYZE */
	RunKind		ran;
	SortJobReport report;
	const char *tuplesort_choice;	/* why tuplesort ran: chosen, */
	const char *tuplesort_reason;	/* or fallen back to */
	int			radix_keys;		/* key columns the engine sorted */
	int			engine_keys;	/* sort keys they order completely */
	int64		tied_rows;		/* rows the comparators then ordered */
	uint64		xfrm_inversions;	/* pairs the strxfrm() keys put out of
									 * order, found by the check */
	Size		memory_used;
	double		collect_ms;
	double		sort_ms;
	double		emit_ms;
} GpuSortState;

/* Stores the row of a keys-only store (row -1: the NULL) in a virtual slot. */
static inline TupleTableSlot *
store_key_row(GpuSortState *state, TupleTableSlot *slot, int64 row)
{
	KeyColumn  *column = &state->store.columns[0];

	ExecClearTuple(slot);
	slot->tts_isnull[0] = (row < 0);
	slot->tts_values[0] = (row < 0) ? (Datum) 0 :
		key_decode(column->codec, column->keys[row], column->descending);
	return ExecStoreVirtualTuple(slot);
}

/* executor.c */
extern CustomExecMethods gpusort_exec_methods;

/* sort_rows.c */
extern void node_sort_rows(GpuSortState *state, bool small);

/* fallback.c */
extern void node_sort_with_tuplesort(GpuSortState *state,
									 TupleTableSlot *pending,
									 const char *choice,
									 const char *fallback_reason,
									 instr_time start);

/* explain.c */
extern void gpusort_explain(CustomScanState *node, List *ancestors,
							ExplainState *es);

#endif							/* GPUSORT_NODE_STATE_H */
