/*-------------------------------------------------------------------------
 *
 * row_keys.c
 *	  The key columns of a GpuSort node's rows, and the rarer steps of their
 *	  encoding (row_keys.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "node/rows/row_keys.h"

int
row_keys_columns(KeyColumn *columns, const KeyPart *part, AttrNumber attno,
				 int keyno, Oid collation)
{
	const KeyCodec *codec = part->codec;

	/* a key of several words is as many columns, the first leading */
	for (int w = 0; w < codec->words; w++)
	{
		KeyColumn  *column = &columns[w];

		memset(column, 0, sizeof(KeyColumn));
		column->attno = attno;
		column->codec = codec;
		column->part = *part;
		column->word = w;
		column->keyno = keyno;
		column->xfrm = codec->exact ? NULL :
			codec->source == KEY_PREFIX_XFRM ? xfrm_collation(collation) :
			codec->source == KEY_PREFIX_ICU ? icu_collation(collation) : NULL;
	}
	return codec->words;
}

void
row_keys_reset(KeyColumn *column)
{
	column->keyarray = NULL;
	column->keys = NULL;
	column->nulls = NULL;
	column->dropped = false;
	column->abbrev_next = PREFIX_CHECK_ROWS;
	column->first = NULL;
	column->shared = 0;
	column->skipped = 0;
	column->min = PG_UINT64_MAX;
	column->max = 0;
}

/* Asks a prefix key's type whether its keys still tell the rows apart. */
void
row_keys_judge_prefix(KeyColumn *column, uint32 nrows)
{
	SortSupport prefix = column->part.prefix;

	column->abbrev_next = Min((uint64) column->abbrev_next * 2, PG_UINT32_MAX);
	if (prefix->abbrev_abort && prefix->abbrev_abort(nrows, prefix))
		column->dropped = true;
}

/* The first NULL of a column: its bitmap, as long as the arrays. */
void
row_keys_first_null(KeyColumn *column, uint32 allocated, MemoryContext cxt)
{
	column->nulls = MemoryContextAllocExtended(cxt, allocated / 8 + 1,
											   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
}

/*
 * The reference that a key column whose keys are made later holds for a
 * value (not NULL): the value inside the stored tuple, or a copy of its
 * first bytes (all of it: whole) where it is compressed or out of line
 * (charged to the store).  tuple is the stored copy of the row; data, where
 * not NULL, the bytes it was copied from, which value points into.
 */
uint64
row_keys_value_ref(RowKeysTarget *target, TupleDesc desc, AttrNumber attno,
				   MinimalTuple tuple, const char *data, Datum value, bool whole)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(value);
	MemoryContext oldcxt;
	bool		isnull;

	if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
	{
		/* the first bytes (or all), decompressed, for the threads to read */
		oldcxt = MemoryContextSwitchTo(target->cxt);
		v = whole ? detoast_attr(v) : detoast_attr_slice(v, 0, KEY_REF_COPY_BYTES);
		MemoryContextSwitchTo(oldcxt);
		target->copied += VARSIZE(v);
		return (uint64) (uintptr_t) v | KEY_REF_COPIED;
	}
	if (data && (char *) v >= data && (char *) v < data + tuple->t_len)
		return (uint64) (uintptr_t) ((char *) tuple + ((char *) v - data));
	return (uint64) (uintptr_t)
		DatumGetPointer(minimal_tuple_getattr(tuple, attno, desc, &isnull));
}

/*
 * Follows how many bytes all values of a bytes or strxfrm() column start
 * with (text under C or a libc collation, bytea), so that keys that would
 * not tell URLs or paths apart can be made past that start.  A compressed
 * or out-of-line value ends the search, as does a value that shares
 * nothing (row_keys_add then stops asking).
 */
void
row_keys_track_shared(KeyColumn *column, Datum value, MemoryContext cxt)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(value);
	const char *s;
	int			len;
	uint32		n;
	uint32		i = 0;

	if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
	{
		static char nothing[1];

		column->first = column->first ? column->first : nothing;
		column->shared = 0;
		return;
	}
	s = key_value_bytes(v, column->codec->type == BPCHAROID, &len);
	if (column->first == NULL)
	{
		column->shared = Min((uint32) len, KEY_SHARED_MAX);
		column->first = MemoryContextAlloc(cxt, column->shared + 1);
		memcpy(column->first, s, column->shared);
		return;
	}
	n = Min(column->shared, (uint32) len);
	while (i < n && s[i] == column->first[i])
		i++;
	column->shared = i;
}

/* Starts shorter than this leave keys good enough: no second pass. */
#define REKEY_MIN_SHARED	4

void
row_keys_rekey_shared(KeyColumn *column, MinimalTuple *rows, uint32 nrows,
					  TupleDesc desc)
{
	column->skipped = 0;
	if (column->shared < REKEY_MIN_SHARED)
		return;
	column->skipped = column->shared;
	column->min = PG_UINT64_MAX;
	column->max = 0;
	for (uint32 row = 0; row < nrows; row++)
	{
		bool		isnull;
		Datum		value;
		uint64		key;

		if (row % (64 * 1024) == 0)
			CHECK_FOR_INTERRUPTS();
		if (key_column_isnull(column, row))
			continue;
		value = minimal_tuple_getattr(rows[row], column->attno, desc, &isnull);
		key = key_encode_bytes(column->codec, value, column->part.descending,
							   column->skipped);
		column->keys[row] = key;
		column->min = Min(column->min, key);
		column->max = Max(column->max, key);
	}
}

void
row_keys_tie_words(const KeyColumn *column, MinimalTuple *rows, uint32 nrows,
				   TupleDesc desc, int ntie, uint64 *const *ties)
{
	uint32		skip = column->skipped + 8 * column->codec->words;

	Assert(ntie <= COLLATION_TIE_WORDS);
	for (uint32 row = 0; row < nrows; row++)
	{
		bool		isnull;
		Datum		value;
		uint64		words[COLLATION_TIE_WORDS];

		if (row % (64 * 1024) == 0)
			CHECK_FOR_INTERRUPTS();
		if (key_column_isnull(column, row))
			continue;
		value = minimal_tuple_getattr(rows[row], column->attno, desc, &isnull);
		key_encode_bytes_words(column->codec, value, column->part.descending, skip,
							   ntie, words);
		for (int t = 0; t < ntie; t++)
			ties[t][row] = words[t];
	}
}

int
row_keys_place_nulls(KeyColumn *columns, int ncolumns, uint32 nrows)
{
	for (int i = 1; i < ncolumns; i++)
	{
		KeyColumn  *column = &columns[i];
		bool		first = column->part.nulls_first;
		uint64		nullkey;

		if (column->nulls == NULL)
			continue;
		if (column->min > column->max)
			nullkey = 0;		/* all NULL */
		else if (first ? column->min == 0 : column->max == PG_UINT64_MAX)
			return i;
		else
			nullkey = first ? column->min - 1 : column->max + 1;
		for (uint32 row = 0; row < nrows; row++)
			if (key_column_isnull(column, row))
				column->keys[row] = nullkey;
	}
	return ncolumns;
}

/*
 * Where a key column's value lies in heap tuples without NULLs: past the
 * attributes of fixed width at the start, which lie at the same offsets in
 * every such tuple, from the first of variable width on (walk_from).  A
 * column whose own offset is fixed, or that follows a C string, is left to
 * heap_getattr (-1).
 */
void
row_keys_locate_column(KeyColumn *column, TupleDesc desc)
{
	uint32		offset = 0;

	column->walk_from = -1;
	for (int i = 0; i < column->attno - 1; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attlen == -2)
		{
			column->walk_from = -1;
			return;
		}
		if (att->attlen == -1)
		{
			if (column->walk_from < 0)
			{
				column->walk_from = i + 1;
				column->walk_offset = offset;
			}
		}
		else if (column->walk_from < 0)
			offset = att_align_nominal(offset, att->attalign) + att->attlen;
	}
}
