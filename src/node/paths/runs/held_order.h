/*-------------------------------------------------------------------------
 *
 * held_order.h
 *	  The rows that an engine holding a GpuSort node's input hands back in
 *	  the order of their held keys, put in the order of the sort keys: the
 *	  rows whose held keys tie ordered by PostgreSQL's comparators.
 *
 * An engine holds keys of at most HELD_KEY_WORDS words (row_seams.h), and
 * a text key's tie words past them (spill_stage.c).  Where
 * they order the rows completely, its order is the sort's.  Where they do
 * not (a prefix key: text, numeric; keys of more words; a later key that no
 * codec encodes), each held tuple carries its key words after its
 * MAXALIGNed end (the store's tail), and the reader groups the rows the
 * engine hands back by those words, up to the tie key's (a later key's
 * NULL its words leave no room for moves the tie key down to that key:
 * store_holdable in spill_stage.c): a group of one is returned as it is; a
 * larger one is copied, ordered by the comparators from the first sort key
 * the words leave tied, and returned (a group larger than the memory budget
 * is ordered by tuplesort instead); where the tied key is the last and is
 * text under a libc collation, whole groups are read in batches and
 * ordered on threads (text_ties.h).  Between groups whose words differ
 * first in a strxfrm() key, the comparator checks the order (xfrm_keys.h):
 * a pair strxfrm() got backwards stops the query with an error before
 * either row is returned, as rows already returned cannot be taken back.
 *
 *-------------------------------------------------------------------------
 */
#ifndef HELD_ORDER_H
#define HELD_ORDER_H

#include "postgres.h"

#include "engine/row_seams.h"
#include "keys/key_column.h"
#include "node/rows/text_ties.h"
#include "node/rows/tie_order.h"
#include "utils/tuplesort.h"

/*
 * The next rows the engine hands back (MAXALIGNed MinimalTuples back to
 * back, each followed by its tail), valid until the next call; how many,
 * 0 after the last.
 */
typedef int64 (*HeldRowsFn) (void *arg, char **rows);

typedef struct HeldOrder
{
	HeldRowsFn	next_rows;
	void	   *arg;
	char	   *row;			/* the next of the rows handed back */
	int64		left;			/* rows handed back not yet read */

	/* where the held keys leave ties: tail > 0 */
	Size		tail;			/* bytes after each tuple: its key words */
	int			nwords;
	const KeyColumn *columns;	/* the store's: what each word is */
	int			tie_key;		/* the first sort key the words leave tied */
	TieOrder   *ties;
	Size		budget;			/* bytes a group may take in memory */
	Size		batch_bytes;	/* and a batch of groups, ordered at once */
	MemoryContext home;			/* the reader's own memory */
	MemoryContext cxt;			/* the current group's rows */
	MinimalTuple ahead;			/* read: the first row of the next group */
	char	   *spare;			/* a copy of ahead's, before a read that
								 * may replace the buffer it lies in */
	Size		spare_size;
	uint64		key[HELD_ROW_WORDS];	/* the words of the group's rows */
	MinimalTuple *group;		/* its rows, ordered */
	uint32		ngroup;
	uint32		capacity;
	uint32		next;			/* the next of them to return */
	Size		group_bytes;
	Tuplesortstate *big;		/* a group over the budget */
	TupleTableSlot *big_slot;
	char	   *big_last;		/* a copy of its last row returned, with the
								 * key */
	Size		big_last_size;
	int64	   *tied_rows;		/* counts the rows in groups of two or more */
	int64	   *disk_kb;		/* adds what the groups over the budget wrote */

	/*
	 * Where the tied key is the last and is text under a libc collation
	 * (text_ties.h): the rows come in batches of whole groups, their groups
	 * ordered on threads; the batch's rows are group[], its groups start
	 * at starts[].
	 */
	bool		batched;
	TextTies	text;
	uint32	   *starts;
	bool	   *check;			/* per group: is the pair before it checked? */
	uint32		ngroups;
	uint32		groups_capacity;
	char	   *prev_last;		/* a copy of the last batch's last row */
	Size		prev_last_size;
} HeldOrder;

/*
 * Starts reading rows through next_rows.  With tail 0, the engine's order
 * is the sort's; else tie_key is the first sort key that the nwords words
 * of columns leave ties in, and the rest as in HeldOrder.
 */
extern void held_order_begin(HeldOrder *order, HeldRowsFn next_rows, void *arg,
							 Size tail, int nwords, const KeyColumn *columns,
							 int tie_key, TieOrder *ties, Size budget,
							 Size batch_bytes,
							 int64 *tied_rows, int64 *disk_kb);

/* The next row in the sort's order, valid until the next call; or NULL. */
extern MinimalTuple held_order_next(HeldOrder *order);

/* Frees what the reader holds. */
extern void held_order_end(HeldOrder *order);

#endif							/* HELD_ORDER_H */
