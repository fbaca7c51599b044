/*-------------------------------------------------------------------------
 *
 * memory_ledger.h
 *	  A GpuSort node's memory budget and what is charged against it, as
 *	  tuplesort keeps its availMem (USEMEM, FREEMEM, LACKMEM): the one
 *	  account that says whether more fits.
 *
 * A GpuSort node keeps one (GpuSortState.memory, its budget taken once as
 * it begins); its row store charges each row and block it takes and
 * releases them as it empties (row_store.c), and asks the ledger whether
 * the next row fits.  What works beside or after the store is given a part
 * of the same budget (node/collect/memory.h).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_MEMORY_LEDGER_H
#define GPUSORT_MEMORY_LEDGER_H

#include "postgres.h"

typedef struct MemoryLedger
{
	Size		budget;			/* bytes that may be charged */
	Size		charged;		/* bytes charged now */
} MemoryLedger;

static inline void
memory_ledger_init(MemoryLedger *ledger, Size budget)
{
	ledger->budget = budget;
	ledger->charged = 0;
}

/* Would bytes more take the ledger over its budget? */
static inline bool
memory_ledger_lacks(const MemoryLedger *ledger, Size bytes)
{
	return ledger->charged + bytes > ledger->budget;
}

static inline void
memory_ledger_charge(MemoryLedger *ledger, Size bytes)
{
	ledger->charged += bytes;
}

static inline void
memory_ledger_release(MemoryLedger *ledger, Size bytes)
{
	Assert(bytes <= ledger->charged);
	ledger->charged -= bytes;
}

#endif							/* GPUSORT_MEMORY_LEDGER_H */
