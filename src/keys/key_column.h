/*-------------------------------------------------------------------------
 *
 * key_column.h
 *	  A column of encoded keys: one word of one part of a sort key
 *	  (key_codec.h), for every row a GpuSort node collects, with its range,
 *	  its NULLs and what was learnt of its values while they came.
 *
 * The node's row keys (node/rows/row_keys.c) fill the columns as rows come;
 * xfrm_keys.c makes the keys of strxfrm() and ICU columns after the last.
 *
 *-------------------------------------------------------------------------
 */
#ifndef KEY_COLUMN_H
#define KEY_COLUMN_H

#include "postgres.h"

#include "keys/key_codec.h"

typedef struct KeyColumn
{
	AttrNumber	attno;			/* attribute in the input tuples */
	const KeyCodec *codec;		/* how its values become keys: part.codec */
	KeyPart		part;			/* the part of the sort key it holds */
	int			word;			/* which of the part's words */
	int			keyno;			/* the sort key it belongs to (0: the first) */
	const struct XfrmCollation *xfrm;	/* strxfrm() or ICU keys: their
										 * collation (keys hold references
										 * to the values until
										 * xfrm_make_keys) */
	bool		fixed;			/* keys of every store compare alike (an
								 * engine holds them all): never made past
								 * a shared start or given up */
	bool		dropped;		/* prefix keys given up: they did not tell
								 * the rows apart (keys are then 0) */
	uint32		abbrev_next;	/* rows at which to ask that next */
	char	   *first;			/* bytes and strxfrm() keys: the start of
								 * the first value, or NULL before it */
	uint32		shared;			/* bytes every value so far starts with,
								 * at most KEY_SHARED_MAX */
	uint32		skipped;		/* bytes of each value the keys were made
								 * past (those all values share) */
	struct BigArray *keyarray;	/* holds keys */
	uint64	   *keys;			/* encoded keys of the rows (0 for NULL) */
	uint8	   *nulls;			/* bitmap of NULL keys, or NULL if none yet */
	uint64		min;			/* range of the non-NULL keys */
	uint64		max;
	int			walk_from;		/* heap tuples without NULLs: 1 + the first
								 * attribute of variable width before the
								 * column, from which its value is found;
								 * -1: found by heap_getattr; 0: not known
								 * yet */
	uint32		walk_offset;	/* where that attribute starts (unaligned) */
} KeyColumn;

/*
 * Keys made after collection (strxfrm(), ICU): until then a key column
 * holds a reference to each value, a pointer into the stored tuple, or,
 * with KEY_REF_COPIED set, to a copy of the first KEY_REF_COPY_BYTES (for
 * ICU, of all) of a compressed or out-of-line value: strxfrm() keys are
 * checked after the sort, ICU's are not, so they are made from the whole
 * value.
 */
#define KEY_REF_COPY_BYTES	256
#define KEY_REF_COPIED		(UINT64CONST(1) << 63)

/* The most bytes of a shared start that keys are made past. */
#define KEY_SHARED_MAX	256

static inline bool
key_column_isnull(const KeyColumn *column, uint32 row)
{
	return column->nulls && (column->nulls[row / 8] & (1 << (row % 8)));
}

#endif							/* KEY_COLUMN_H */
