/*-------------------------------------------------------------------------
 *
 * row_keys.h
 *	  The keys of the rows a GpuSort node collects: its key columns, made
 *	  from the sort keys' codecs, and the encoding of their values in each
 *	  phase of the sort.
 *
 * Keys are encoded in three places, each one function here:
 *	- as each row comes (row_keys_add, from row_store_add): the key of each
 *	  column's value (found in the row by row_keys_value; key_column_encode,
 *	  which the merge of sorted runs also uses), the giving up of prefix
 *	  keys that do not tell the rows apart, and the start that all the
 *	  values of a bytes column share;
 *	- before the sort, the keys of a bytes column again, past that shared
 *	  start (row_keys_rekey_shared), or, for rows an engine holds, the
 *	  words past its key (its tie words: row_keys_tie_words);
 *	- then NULLs of the columns after the first, given a key of their own
 *	  (row_keys_place_nulls).
 * strxfrm() and ICU keys are made after the last row by keys/xfrm_keys.c.
 *
 * The per-row work is inline, so that row_store_add takes no call for it
 * (but where a prefix key's type is asked, a value is referenced or a
 * shared start is followed).  Nothing here knows the row store: it hands
 * each function the columns and what else it needs.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ROW_KEYS_H
#define ROW_KEYS_H

#include "postgres.h"

#include "keys/collation.h"
#include "keys/key_column.h"
#include "executor/tuptable.h"
#include "util/minimal_tuple.h"

/* Rows at which prefix keys are first judged. */
#define PREFIX_CHECK_ROWS	1024

/*
 * Makes the key columns of a part of the sort keys, sort key keyno on
 * attribute attno under collation: one per word of its codec, into columns.
 * Returns how many.
 */
extern int	row_keys_columns(KeyColumn *columns, const KeyPart *part,
							 AttrNumber attno, int keyno, Oid collation);

/* Forgets what a column learnt of the rows of an emptied store. */
extern void row_keys_reset(KeyColumn *column);

/*
 * The key of a value (not NULL) of a key column whose keys are made as the
 * rows come (not strxfrm() or ICU keys), from the value's first byte: what
 * the store keeps (row_keys_add, which also gives prefix keys up), and what
 * the merge of sorted runs makes again from the rows it reads back.
 */
static inline uint64
key_column_encode(const KeyColumn *column, Datum value)
{
	return key_part_encode(&column->part, value, column->word);
}

/* Finds where a key column's value lies in heap tuples (row_keys_value). */
extern void row_keys_locate_column(KeyColumn *column, TupleDesc desc);

/*
 * The value of a key column in a row being added: a heap tuple's (htup) is
 * read from the tuple itself, at the attribute's cached offset when the
 * tuple has no NULLs, which is cheaper than deforming the slot up to the
 * column, and past a column of variable width from the first such column
 * on, not from the tuple's start as heap_getattr would (the text after a
 * numeric); else the slot's.
 */
static inline Datum
row_keys_value(TupleDesc desc, TupleTableSlot *slot, HeapTuple htup,
				KeyColumn *column, bool *isnull)
{
	AttrNumber	attno = column->attno;

	if (!htup)
		return slot_getattr(slot, attno, isnull);
	if (column->walk_from == 0)
		row_keys_locate_column(column, desc);
	if (column->walk_from > 0 && HeapTupleNoNulls(htup) &&
		attno <= HeapTupleHeaderGetNatts(htup->t_data))
	{
		char	   *tp = (char *) htup->t_data + htup->t_data->t_hoff;
		uint32		offset = column->walk_offset;

		for (int i = column->walk_from - 1;; i++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, i);

			offset = att_align_pointer(offset, att->attalign, att->attlen, tp + offset);
			if (i == attno - 1)
			{
				*isnull = false;
				return fetchatt(att, tp + offset);
			}
			offset = att_addlength_pointer(offset, att->attlen, tp + offset);
		}
	}
	return heap_getattr(htup, attno, desc, isnull);
}

/*
 * Where row_keys_add writes the keys of a row: the key columns, the row's
 * number in them, their length, the context of what they keep, and the
 * bytes of values copied for references, charged to the store.
 */
typedef struct RowKeysTarget
{
	KeyColumn  *columns;
	int			ncolumns;
	uint32		row;
	uint32		allocated;
	MemoryContext cxt;
	Size		copied;
} RowKeysTarget;

/* row_keys_add's rarer steps (row_keys.c). */
extern void row_keys_judge_prefix(KeyColumn *column, uint32 nrows);
extern void row_keys_track_shared(KeyColumn *column, Datum value, MemoryContext cxt);
extern uint64 row_keys_value_ref(RowKeysTarget *target, TupleDesc desc,
								 AttrNumber attno, MinimalTuple tuple,
								 const char *data, Datum value, bool whole);
extern void row_keys_first_null(KeyColumn *column, uint32 allocated, MemoryContext cxt);

/*
 * Encodes the keys of a row that row_store_add takes, as target's row (room
 * made for it): value is the leading column's, tuple the stored copy of the
 * row (NULL in a keys-only store), data where not NULL the bytes it was
 * copied from.
 *
 * A prefix key's type is asked, at doubling row counts, as tuplesort asks of
 * its abbreviated keys, whether the keys still tell the values apart; when
 * they do not (URLs sharing their first bytes), they are given up: the
 * column's keys are all 0 from then on, and the node orders the rows with
 * the comparators alone, as Sort would.
 */
static pg_attribute_always_inline void
row_keys_add(RowKeysTarget *target, TupleDesc desc, TupleTableSlot *slot,
			 HeapTuple htup, MinimalTuple tuple, const char *data,
			 Datum value, bool isnull)
{
	uint32		row = target->row;

	for (int i = 0; i < target->ncolumns; i++)
	{
		KeyColumn  *column = &target->columns[i];
		uint64		key = 0;

		/* a key's later words are of the value its first word had */
		if (i > 0 && column->word == 0)
			value = row_keys_value(desc, slot, htup, column, &isnull);
		if (isnull)
		{
			if (column->nulls == NULL)
				row_keys_first_null(column, target->allocated, target->cxt);
			column->nulls[row / 8] |= 1 << (row % 8);
		}
		else
		{
			if (KEY_CODEC_OF_BYTES(column->codec) && column->word == 0 &&
				!(column->first && column->shared == 0))
				row_keys_track_shared(column, value, target->cxt);
			if (column->xfrm)
			{
				/*
				 * keys made later, by threads, from a reference to the value
				 * that the key's first column holds; no range yet
				 */
				column->keys[row] = column->word > 0 ? 0 :
					row_keys_value_ref(target, desc, column->attno, tuple, data,
									   value, column->xfrm->icu != NULL);
				continue;
			}
			if (!column->part.prefix)
				key = key_column_encode(column, value);
			else if (!column->dropped)
			{
				key = key_column_encode(column, value);
				if (row + 1 >= column->abbrev_next)
					row_keys_judge_prefix(column, row + 1);
			}
			column->min = Min(column->min, key);
			column->max = Max(column->max, key);
		}
		column->keys[row] = key;
	}
}

/*
 * Makes the keys of a bytes column again, past the start that all its
 * values share (URLs, paths), where that start is long enough to have made
 * the first keys poor.  desc describes the stored tuples.
 */
extern void row_keys_rekey_shared(KeyColumn *column, MinimalTuple *rows,
								  uint32 nrows, TupleDesc desc);

/*
 * The tie words of a bytes column (engine/row_seams.h): the ntie words of
 * each value's bytes past those of its key, into ties[t][row] (NULLs left
 * as they are).  desc describes the stored tuples.
 */
extern void row_keys_tie_words(const KeyColumn *column, MinimalTuple *rows,
							   uint32 nrows, TupleDesc desc, int ntie,
							   uint64 *const *ties);

/*
 * Gives the NULLs of the key columns after the first a key in the column's
 * order (nulls_first of its part), so that the engines can sort them, and
 * returns how many leading columns can be sorted so.  A column whose keys
 * leave no room for a NULL key ends the columns the engine sorts;
 * comparators sort the rest.
 */
extern int	row_keys_place_nulls(KeyColumn *columns, int ncolumns, uint32 nrows);

#endif							/* ROW_KEYS_H */
