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
 *	   each row's value (key_column.h);
 *	2. before the sort, the backend and helper threads turn the references
 *	   into keys, the first 32 bytes of strxfrm() of each value, a column
 *	   for each 8 of them (COLLATION_KEY_WORDS; xfrm_make_keys);
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

#include "keys/collation.h"
#include "keys/key_column.h"

/*
 * Turns the references of column (a key's first column) into keys, keeping
 * them in refs (nrows entries), and sets the column's range; a key of
 * several words fills the columns after it too, a word each, and where
 * ties is not NULL (a column whose keys are fixed), the COLLATION_TIE_WORDS
 * words that follow them go to ties[0 ..], nrows each.
 */
extern void xfrm_make_keys(KeyColumn *column, uint32 nrows, uint64 *refs,
						   uint64 *const *ties);

/*
 * Does the first word of a strxfrm() key of several words (column, whose
 * keys are made) leave many of the nrows rows tied?  From a sample of them.
 */
extern bool xfrm_first_word_ties(const KeyColumn *column, uint32 nrows);

/*
 * Compares two values (NUL-terminated, of alen and blen bytes) as
 * PostgreSQL's varstr_cmp() compares text under a libc collation: equal
 * bytes are equal; otherwise strcoll_l(), and strcmp() where that finds
 * them equal.  Threads may call it.
 */
extern int	xfrm_varstr_cmp(const char *a, int alen, const char *b, int blen,
							locale_t locale);

/*
 * Positions i (1..n-1) of perm where the rows perm[i-1] and perm[i], equal
 * in the columns before column, differ in its key (any of its words: column
 * and those after it) but are not found in
 * order by strcoll() (or hold values too long to compare here).  Returns
 * how many there are, and stores *nfound of them (at most maxfound) in
 * found.
 */
extern uint64 xfrm_suspect_pairs(const KeyColumn *columns, int column,
								 const uint64 *refs, const uint32 *perm,
								 uint32 n, uint32 *found, uint32 maxfound,
								 uint32 *nfound);

#endif							/* XFRM_KEYS_H */
