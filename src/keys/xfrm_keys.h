/*-------------------------------------------------------------------------
 *
 * xfrm_keys.h
 *	  Prefix keys of text under libc collations other than C, made with
 *	  strxfrm(), and the check that makes their order sound.
 *
 * PostgreSQL compares such text with strcoll() and does not abbreviate it:
 * some C libraries' strxfrm() has disagreed with their strcoll().  gpusort
 * uses strxfrm() anyway, but never trusts it:
 *
 *	1. while the rows are collected, the key column holds a reference to
 *	   each row's value (xfrm_value_ref);
 *	2. before the sort, the backend and helper threads turn the references
 *	   into keys, the first 8 bytes of strxfrm() of each value
 *	   (xfrm_make_keys);
 *	3. the engine sorts the keys; rows whose keys tie are ordered by
 *	   PostgreSQL's comparator, as for every prefix key;
 *	4. then every pair of adjacent rows whose keys differ is compared with
 *	   strcoll(), as PostgreSQL compares them, on the threads again
 *	   (xfrm_suspect_pairs): a pair strcoll() does not find in order is
 *	   handed back, compared by PostgreSQL's own comparator, and if it is an
 *	   inversion indeed, the rows are ordered by the comparator alone
 *	   (sort_rows.c).  Adjacent pairs in order imply the whole is, so the
 *	   result is PostgreSQL's order whatever strxfrm() did.
 *
 *-------------------------------------------------------------------------
 */
#ifndef XFRM_KEYS_H
#define XFRM_KEYS_H

#include "postgres.h"

#include <locale.h>

#include "keys/row_store.h"

/* A libc collation whose text gpusort keys with strxfrm(). */
typedef struct XfrmCollation
{
	Oid			collation;
	locale_t	locale;
	int			encoding;		/* of the database */
	bool		is_c;			/* "C" or "POSIX" of libc: bytes order text */
} XfrmCollation;

/*
 * The strxfrm() collation of a collation, or NULL where PostgreSQL does not
 * compare text with strcoll(): C and POSIX, ICU, the builtin provider.
 */
extern const XfrmCollation *xfrm_collation(Oid collation);

/*
 * Does text under the collation order as its bytes (libc's C and POSIX)?
 * Its keys are then its first bytes (key_codec.h's bytes codecs).
 */
extern bool key_collation_is_c(Oid collation);

/*
 * The reference that a key column holds for a value (not NULL) until
 * xfrm_make_keys: the value inside the stored tuple, or a copy of its first
 * bytes where it is compressed or out of line (charged to the store).
 * tuple is the stored copy of the row; data, where not NULL, the bytes it
 * was copied from, which value points into.
 */
extern uint64 xfrm_value_ref(RowStore *store, TupleTableSlot *slot,
							 AttrNumber attno, MinimalTuple tuple,
							 const char *data, Datum value);

/*
 * Turns the references of column into keys, keeping them in refs (nrows
 * entries), and sets the column's range.
 */
extern void xfrm_make_keys(KeyColumn *column, uint32 nrows, uint64 *refs);

/*
 * Positions i (1..n-1) of perm where the rows perm[i-1] and perm[i], equal
 * in the columns before column, differ in its keys but are not found in
 * order by strcoll() (or hold values too long to compare here).  Returns
 * how many there are, and stores *nfound of them (at most maxfound) in
 * found.
 */
extern uint64 xfrm_suspect_pairs(const KeyColumn *columns, int column,
								 const uint64 *refs, const uint32 *perm,
								 uint32 n, uint32 *found, uint32 maxfound,
								 uint32 *nfound);

#endif							/* XFRM_KEYS_H */
