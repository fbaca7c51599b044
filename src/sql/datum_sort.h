/*-------------------------------------------------------------------------
 *
 * datum_sort.h
 *	  What array_sort.c (which reads the arguments and the arrays and writes
 *	  the results) calls in datum_sort.c: the sort of elements that are not
 *	  sorted by exact keys, and the sort job of a permutation that both run.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DATUM_SORT_H
#define DATUM_SORT_H

#include "postgres.h"

#include "engine/engine.h"

/*
 * Arrays with at most this many non-null elements are sorted without a sort
 * job: below it a job costs more than the sort.
 */
#define ARRAY_SORT_SMALL	32

/* Elements processed between interrupt checks. */
#define ARRAY_SORT_CHUNK	(1 << 20)

/*
 * Sorts rows 0..n-1 by nkeys columns of keys into perm (n entries) with the
 * engine that gpusort.device selects, and says at DEBUG1 which engine it
 * was, and why not the GPU.
 */
extern void array_sort_permutation(const uint64 *const *keys, int nkeys,
								   uint32 n, uint32 *perm);

/* Says at DEBUG1 which engine sorted n elements, and why not the GPU. */
extern void array_sort_report(uint32 n, const SortJobReport *report);

/*
 * Sorts the n non-null elements values[] of type (a base type, not a
 * domain) as its default btree operator class orders them under collation,
 * sortop being its "<" operator: returns, palloc'd, their indexes in sorted
 * order.  The sort is stable in either direction.  Where the type has
 * prefix keys (text, varchar, bpchar, numeric, bytea, where PostgreSQL gives
 * abbreviated keys for them) they are sorted by the engine first and only
 * the elements whose prefix keys tie are compared; otherwise the type's
 * comparator sorts them all.  Checks for interrupts throughout.
 */
extern uint32 *datum_sort(const Datum *values, uint32 n, Oid type, Oid sortop,
						  Oid collation, bool descending);

#endif							/* DATUM_SORT_H */
