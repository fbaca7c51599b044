/*-------------------------------------------------------------------------
 *
 * row_keys.h
 *	  The keys of the rows a GpuSort node collects: its key columns, made
 *	  from the sort keys' codecs, and the encoding of their values in each
 *	  phase of the sort.
 *
 * Keys are encoded in three places, each one function here:
 *	- as each row comes (row_keys_add, from row_store_add): the key of each
 *	  column's value (key_column_encode, which the merge of sorted runs
 *	  also uses), the giving up of prefix keys that do not tell the rows
 *	  apart, the start that all the values of a bytes column share, and the
 *	  early upload of the leading column to the engine;
 *	- before the sort, the keys of a bytes column again, past that shared
 *	  start (row_keys_rekey_shared);
 *	- then NULLs of the columns after the first, given a key of their own
 *	  (row_keys_place_nulls).
 * strxfrm() and ICU keys are made after the last row by keys/xfrm_keys.c.
 *
 * The per-row work is inline, so that row_store_add takes no call for it
 * (but where a prefix key's type is asked, a value is referenced or a
 * shared start is followed).
 *
 *-------------------------------------------------------------------------
 */
#ifndef ROW_KEYS_H
#define ROW_KEYS_H

#include "postgres.h"

#include "keys/collation.h"
#include "keys/key_column.h"
#include "node/row_store.h"

/* Rows at which prefix keys are first judged. */
#define PREFIX_CHECK_ROWS	1024

/* Rows uploaded at a time. */
#define UPLOAD_ROWS			(256 * 1024)

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

/* row_keys_add's rarer steps (row_keys.c). */
extern void row_keys_judge_prefix(RowStore *store, KeyColumn *column);
extern void row_keys_track_shared(RowStore *store, KeyColumn *column, Datum value);
extern uint64 row_keys_value_ref(RowStore *store, TupleDesc desc, AttrNumber attno,
								 MinimalTuple tuple, const char *data, Datum value,
								 bool whole);
extern void row_keys_first_null(RowStore *store, KeyColumn *column);

/*
 * Encodes the keys of a row that row_store_add takes as the store's row
 * nrows (room made for it): value is the leading column's, tuple the stored
 * copy of the row (NULL in a keys-only store), data where not NULL the bytes
 * it was copied from.  The row is counted, and every UPLOAD_ROWS rows the
 * engine is handed those that came.
 *
 * A prefix key's type is asked, at doubling row counts, as tuplesort asks of
 * its abbreviated keys, whether the keys still tell the values apart; when
 * they do not (URLs sharing their first bytes), they are given up: the
 * column's keys are all 0 from then on, and the node orders the rows with
 * the comparators alone, as Sort would.
 */
static pg_attribute_always_inline void
row_keys_add(RowStore *store, TupleDesc desc, TupleTableSlot *slot,
			 HeapTuple htup, MinimalTuple tuple, const char *data,
			 Datum value, bool isnull)
{
	for (int i = 0; i < store->ncolumns; i++)
	{
		KeyColumn  *column = &store->columns[i];
		uint64		key = 0;

		if (i > 0)
			value = row_store_value(desc, slot, htup, column, &isnull);
		if (isnull)
		{
			if (column->nulls == NULL)
				row_keys_first_null(store, column);
			column->nulls[store->nrows / 8] |= 1 << (store->nrows % 8);
		}
		else
		{
			if (KEY_CODEC_OF_BYTES(column->codec) && column->word == 0 &&
				!(column->first && column->shared == 0))
				row_keys_track_shared(store, column, value);
			if (column->xfrm)
			{
				/*
				 * keys made later, by threads, from a reference to the value
				 * that the key's first column holds; no range yet
				 */
				column->keys[store->nrows] = column->word > 0 ? 0 :
					row_keys_value_ref(store, desc, column->attno, tuple, data,
									   value, column->xfrm->icu != NULL);
				continue;
			}
			if (!column->part.prefix)
				key = key_column_encode(column, value);
			else if (!column->dropped)
			{
				key = key_column_encode(column, value);
				if (store->nrows + 1 >= column->abbrev_next)
					row_keys_judge_prefix(store, column);
			}
			column->min = Min(column->min, key);
			column->max = Max(column->max, key);
		}
		column->keys[store->nrows] = key;
	}
	if (!store->keys_only)
		store->rows[store->nrows] = tuple;
	store->nrows++;
	if (store->uploader && store->nrows % UPLOAD_ROWS == 0)
		store->upload = store->uploader->rows(store->upload, store->ncolumns,
											  store->columns[0].keys,
											  (const uint64 *) store->rows,
											  store->nrows, store->allocated,
											  store->cxt);
}

/*
 * Makes the keys of a bytes column again, past the start that all its
 * values share (URLs, paths), where that start is long enough to have made
 * the first keys poor.  desc describes the stored tuples.
 */
extern void row_keys_rekey_shared(RowStore *store, KeyColumn *column,
								  TupleDesc desc);

/*
 * Gives the NULLs of the key columns after the first a key in the column's
 * order (nulls_first of its part), so that the engines can sort them, and
 * returns how many leading columns can be sorted so.  A column whose keys
 * leave no room for a NULL key ends the columns the engine sorts;
 * comparators sort the rest.
 */
extern int	row_keys_place_nulls(RowStore *store);

#endif							/* ROW_KEYS_H */
