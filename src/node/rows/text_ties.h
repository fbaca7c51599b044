/*-------------------------------------------------------------------------
 *
 * text_ties.h
 *	  Rows that an engine's held keys leave tied on text under a libc
 *	  collation, ordered by strcoll() on the backend and helper threads
 *	  together, as PostgreSQL's comparator orders them (held_order.c).
 *
 * Where the tied key is the order's last and is text under a libc
 * collation other than C, comparing two rows is comparing their values as
 * varstr_cmp() does (equal bytes are equal; else strcoll(), its ties broken
 * by strcmp(); bpchar without its trailing spaces; NULLs and the direction
 * as the sort key says), which threads may do.  The backend finds each
 * row's value (detoasted, copied with a NUL), then the threads sort each
 * group of tied rows and compare the pairs of neighbours across groups that
 * the held keys alone put in order (strxfrm() keys, which PostgreSQL does
 * not trust: xfrm_keys.h).
 *
 *-------------------------------------------------------------------------
 */
#ifndef TEXT_TIES_H
#define TEXT_TIES_H

#include "postgres.h"

#include "keys/key_column.h"
#include "node/rows/tie_order.h"

typedef struct TextTies
{
	const KeyColumn *column;	/* the tied key's first column */
	TupleDesc	desc;
	bool		bpchar;
	bool		descending;
	bool		nulls_first;
} TextTies;

/*
 * Can rows tied on the held words of columns (nwords of them), from sort
 * key tie_key on, be ordered by text_ties_order?  Sets up *text if so.
 */
extern bool text_ties_init(TextTies *text, const TieOrder *ties,
						   const KeyColumn *columns, int nwords, int tie_key);

/*
 * Orders rows[0..n-1], made of groups of rows tied on their held words
 * (group g from starts[g] to starts[g + 1] - 1, starts[ngroups] = n), each
 * group by the text; then compares each pair of neighbours across groups
 * whose check[] (of the group after the pair) is set.  Returns the first
 * position i of a pair rows[i - 1], rows[i] out of order, or 0.  Scratch
 * memory comes from cxt.
 */
extern uint32 text_ties_order(const TextTies *text, MinimalTuple *rows, uint32 n,
							  const uint32 *starts, const bool *check,
							  uint32 ngroups, MemoryContext cxt);

#endif							/* TEXT_TIES_H */
