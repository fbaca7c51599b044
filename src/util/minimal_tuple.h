/*-------------------------------------------------------------------------
 *
 * minimal_tuple.h
 *	  Reading an attribute of a MinimalTuple, as heap_getattr reads a heap
 *	  tuple's.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MINIMAL_TUPLE_H
#define MINIMAL_TUPLE_H

#include "postgres.h"

#include "access/htup_details.h"

/* Fetches an attribute of a stored tuple, as heap_getattr does. */
static inline Datum
minimal_tuple_getattr(MinimalTuple tuple, int attno, TupleDesc desc,
					  bool *isnull)
{
	HeapTupleData htup;

	htup.t_len = tuple->t_len + MINIMAL_TUPLE_OFFSET;
	htup.t_data = (HeapTupleHeader) ((char *) tuple - MINIMAL_TUPLE_OFFSET);
	return heap_getattr(&htup, attno, desc, isnull);
}

#endif							/* MINIMAL_TUPLE_H */
