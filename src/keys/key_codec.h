/*-------------------------------------------------------------------------
 *
 * key_codec.h
 *	  The key codecs: for each SQL type gpusort sorts, how its values become
 *	  order-preserving 64-bit keys, and back.
 *
 * One table (key_codec.c) says, per type: the btree operator family whose
 * order the key follows, the layout of a value as C data (for the array
 * functions and the engines' value path), how many bits and 64-bit words a
 * key takes, whether the key orders the values completely (exact) or only by
 * a prefix whose ties PostgreSQL's comparator then settles, whether decoding
 * gives the value back bit for bit (the keys-only emit path and the value
 * path need that), and whether the GpuSort node takes it as a sort key.  The
 * plan check, the row store, the keys-only emit path and the array
 * functions all read it; a new key type is a new row of the table.
 *
 * The encoders themselves are in sort_keys.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef KEY_CODEC_H
#define KEY_CODEC_H

#include "postgres.h"

#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

#include "keys/sort_keys.h"
#include "utils/sortsupport.h"
#include "utils/uuid.h"

/* The most 64-bit words a key takes. */
#define MAX_KEY_WORDS	2

/* What makes a prefix codec's keys. */
typedef enum KeyPrefixSource
{
	KEY_PREFIX_ABBREV,			/* PostgreSQL's abbreviated keys */
	KEY_PREFIX_XFRM,			/* strxfrm() under a libc collation, their
								 * order checked after the sort
								 * (xfrm_keys.h) */
	KEY_PREFIX_BYTES,			/* the first 8 bytes, where the order is
								 * the bytes' (C collation, bytea) */
	KEY_PREFIX_NUMERIC,			/* numeric's sign, weight and first digits,
								 * read from the stored value
								 * (key_encode_numeric) */
	KEY_PREFIX_ICU				/* ICU's sort keys, as PostgreSQL
								 * abbreviates text under ICU, made on
								 * threads (xfrm_keys.h) */
} KeyPrefixSource;

/* Are a codec's keys made from the value's bytes, whose shared start
 * (URLs, paths) keys can be made past? */
#define KEY_CODEC_OF_BYTES(codec) \
	(!(codec)->exact && \
	 ((codec)->source == KEY_PREFIX_BYTES || (codec)->source == KEY_PREFIX_XFRM))

typedef struct KeyCodec
{
	Oid			type;			/* the SQL type (domains: their base type) */
	Oid			opfamily;		/* the btree family whose order keys follow */
	SortValueType layout;		/* a value as C data */
	int			bits;			/* keys stay below 2^bits */
	int			words;			/* 64-bit words of a key */
	bool		exact;			/* keys order the values completely; if
								 * not, they order a prefix, and the type's
								 * comparator orders rows whose keys tie */
	bool		roundtrip;		/* decoding gives the value back bit for bit */
	bool		node_key;		/* GpuSort takes it as a sort key */
	bool		array_elem;		/* the array functions sort arrays of it
								 * by its keys */
	bool		abbrev_reversed;	/* prefix keys: the abbreviated key orders
									 * as a signed integer, backwards (numeric);
									 * else as an unsigned one (text) */
	KeyPrefixSource source;		/* prefix keys: what makes them */
} KeyCodec;

/*
 * The codec of a sort key of the GpuSort node: the ordering operator sortop
 * on values of type (a domain is looked through) under collation, or NULL
 * when the node cannot sort by it.  *descending says whether sortop orders
 * downwards.  A prefix codec's keys are PostgreSQL's own abbreviated keys:
 * prefix (zeroed, ssup_cxt set; NULL to only ask) is prepared to make them.
 * Text under a libc collation other than C, which PostgreSQL does not
 * abbreviate, gets an xfrm codec instead (xfrm_keys.h); text under C and
 * bytea, whose order is their bytes', a bytes codec (key_encode_bytes);
 * numeric a numeric codec (key_encode_numeric), cheaper than its
 * abbreviation.
 */
extern const KeyCodec *key_codec_for_order(Oid sortop, Oid type, Oid collation,
										   bool *descending, SortSupport prefix);

/* The prefix key of a value (not NULL), through its prepared SortSupport. */
static inline uint64
key_encode_prefix(const KeyCodec *codec, SortSupport ssup, Datum value,
				  bool descending)
{
	uint64		key = (uint64) ssup->abbrev_converter(value, ssup);

	if (codec->abbrev_reversed)
		key = ~(key ^ (UINT64CONST(1) << 63));
	return descending ? ~key : key;
}

/*
 * The same for the array functions: the codec by which they sort elements
 * of type (array_elem, not node_key, admits it), sortop being the type's
 * default ordering operator.
 */
extern const KeyCodec *key_codec_for_array_order(Oid sortop, Oid type,
												 Oid collation, bool *descending,
												 SortSupport prefix);

/*
 * The bytes of an inline text or bytea value as its order sees them: bpchar
 * (bpchar true) without its trailing spaces.
 */
static inline const char *
key_value_bytes(const struct varlena *v, bool bpchar, int *len)
{
	const char *s = VARDATA_ANY(v);
	int			n = VARSIZE_ANY_EXHDR(v);

	if (bpchar)
		while (n > 0 && s[n - 1] == ' ')
			n--;
	*len = n;
	return s;
}

/*
 * The key of a bytes codec: 8 bytes of a value (not NULL) from skip on,
 * big-endian, zero-padded; bpchar without its trailing spaces.  Detoasts
 * no more than those bytes where it can.  Where all values share their
 * first skip bytes, the keys order them as well as from 0.
 */
extern uint64 key_encode_bytes(const KeyCodec *codec, Datum value,
							   bool descending, uint32 skip);

/*
 * The key of a numeric value (not NULL): its sign, its weight and its first
 * three base-10000 digits, ordered as numeric orders them (NaN above
 * +Infinity), without detoasting an inline value or any palloc.  Values
 * equal in those keys are ordered by numeric's comparator.
 */
extern uint64 key_encode_numeric(Datum value, bool descending);

/*
 * The codec of array elements of a type (not a domain), exact or prefix, or
 * NULL (see array_elem).  A prefix codec's keys need the SortSupport that
 * key_codec_for_array_order prepares.
 */
extern const KeyCodec *key_codec_for_type(Oid type);

/*
 * Word w (0: the most significant) of the key of a value (not NULL), in the
 * given direction.
 */
static inline uint64
key_encode_word(const KeyCodec *codec, Datum value, int w, bool descending)
{
	uint64		key;

	switch (codec->layout)
	{
		case SORT_VALUES_INT16:
			key = sort_key_int2(DatumGetInt16(value));
			break;
		case SORT_VALUES_INT32:
			key = sort_key_int4(DatumGetInt32(value));
			break;
		case SORT_VALUES_INT64:
			key = sort_key_int8(DatumGetInt64(value));
			break;
		case SORT_VALUES_FLOAT32:
			key = sort_key_float4(DatumGetFloat4(value));
			break;
		case SORT_VALUES_FLOAT64:
			key = sort_key_float8(DatumGetFloat8(value));
			break;
		case SORT_VALUES_BOOL:
			key = sort_key_bool(DatumGetBool(value));
			break;
		case SORT_VALUES_UINT32:
			key = DatumGetObjectId(value);
			break;
		default:
			key = sort_key_bytes16(DatumGetUUIDP(value)->data, w);
			break;
	}
	return descending ? sort_key_descending(key, codec->bits) : key;
}

/*
 * The value of a key that key_encode made, for one-word codecs (exact for
 * roundtrip codecs).
 */
static inline Datum
key_decode(const KeyCodec *codec, uint64 key, bool descending)
{
	if (descending)
		key = sort_key_descending(key, codec->bits);
	switch (codec->layout)
	{
		case SORT_VALUES_INT16:
		case SORT_VALUES_INT32:
		case SORT_VALUES_INT64:
			return sort_key_decode_int(key, codec->bits, false);
		case SORT_VALUES_FLOAT32:
			return Float4GetDatum(sort_key_decode_float4(key));
		case SORT_VALUES_FLOAT64:
			return Float8GetDatum(sort_key_decode_float8(key));
		case SORT_VALUES_BOOL:
			return BoolGetDatum(key != 0);
		case SORT_VALUES_UINT32:
			return ObjectIdGetDatum((Oid) key);
		default:
			elog(ERROR, "a key of %d words cannot be decoded", codec->words);
	}
	return (Datum) 0;
}

/*
 * Plain values of a layout, for the array functions and the engines' value
 * path.
 */

/*
 * Does the engines' value path (SortValues, key_encode_values) take values
 * of a layout?  The integers and floats.
 */
extern bool key_values_path(SortValueType layout);

/* Bytes per value: 1 to 16 (0 for a varlena). */
extern int	key_value_width(SortValueType layout);

/*
 * Turns n values into their keys, in order, and gives the keys' range.
 * Checks for interrupts.
 */
extern void key_encode_values(SortValueType layout, bool descending,
							  const void *values, uint32 n, uint64 *keys,
							  uint64 *min, uint64 *max);

/* Turns n keys, each less min, back into values. */
extern void key_decode_values(SortValueType layout, bool descending,
							  const uint64 *keys, uint64 min, uint32 n,
							  void *values);

/* Do the values come back from their keys bit for bit? */
extern bool key_values_exact(SortValueType layout, const void *values, uint32 n);

#endif							/* KEY_CODEC_H */
