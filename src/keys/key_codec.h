/*-------------------------------------------------------------------------
 *
 * key_codec.h
 *	  The key codecs: for each SQL type gpusort sorts, how its values become
 *	  order-preserving 64-bit keys, and back; and the description of a key
 *	  made of parts, each a codec's.
 *
 * One table (key_codec.c) says, per type: the btree operator family whose
 * order the key follows, the layout of a value as C data and its width (for
 * the array functions and the engines' value path), how many bits and
 * 64-bit words a key takes, whether the key orders the values completely
 * (exact) or only by a prefix whose ties PostgreSQL's comparator then
 * settles, whether decoding gives the value back bit for bit (the keys-only
 * emit path and the value path need that), and whether the GpuSort node
 * takes it as a sort key; and the codec's own callbacks: encode, decode, and
 * whether plain values come back from their keys exactly.  The plan check,
 * the node's row keys, the keys-only emit path and the array functions all
 * read it; a new key type is a new row of the table, with its callbacks.
 *
 * The encoders of the built-in layouts are in sort_keys.h.
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
#define MAX_KEY_WORDS	4

/*
 * Words of a collation key: the first 32 bytes of strxfrm() of a value, or
 * of ICU's sort key, so that text whose first words repeat (as in TPC-H's
 * comments) is still told apart by its keys rather than by the comparator.
 * (glibc writes two bytes a character: 24 bytes left 87% of TPC-H's
 * o_comment at scale 1 tied on their keys, 32 bytes 65%, which sorted them
 * 20% faster in memory; of the same column ICU's 8 bytes, PostgreSQL's
 * abbreviation, left 45% tied, 32 bytes 2%.)
 */
#define COLLATION_KEY_WORDS	4

/*
 * And words past them, made for rows an engine holds alone (their tie
 * words: engine/row_seams.h), by which it orders the rows that the others
 * leave tied: at scale 1, 32 letters of o_comment leave 7% of its rows
 * tied, 16 letters 80%.
 */
#define COLLATION_TIE_WORDS	4

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
	KEY_PREFIX_ICU,				/* ICU's sort keys, as PostgreSQL
								 * abbreviates text under ICU, made on
								 * threads (xfrm_keys.h) */
	KEY_NUMERIC_EXACT			/* not a prefix: numeric's every digit, two
								 * words, under a typmod that bounds them
								 * (key_encode_numeric_exact) */
} KeyPrefixSource;

/* Are a codec's keys made from the value's bytes, whose shared start
 * (URLs, paths) keys can be made past? */
#define KEY_CODEC_OF_BYTES(codec) \
	(!(codec)->exact && \
	 ((codec)->source == KEY_PREFIX_BYTES || (codec)->source == KEY_PREFIX_XFRM))

typedef struct KeyCodec KeyCodec;

/*
 * One part of a sort key: a codec's keys in a direction.  A key of one
 * column (what the GpuSort node and the array functions sort by today) is
 * one part at offset 0; a key made of several columns lays its parts out
 * one after the other, the most significant first, offset and width saying
 * where each part's bytes lie in the whole key.
 */
typedef struct KeyPart
{
	const KeyCodec *codec;
	bool		descending;
	bool		nulls_first;	/* where NULLs go, for the key's user */
	uint32		offset;			/* bytes before the part in the key */
	uint32		width;			/* its bytes: the codec's words * 8 */
	SortSupport prefix;			/* abbreviated keys: the SortSupport that
								 * makes them (key_codec_for_order); else
								 * NULL */
} KeyPart;

/* A key: its parts, the most significant first. */
typedef struct KeyDesc
{
	int			nparts;
	int			maxparts;		/* room for parts */
	uint32		width;			/* bytes of the whole key */
	KeyPart		parts[FLEXIBLE_ARRAY_MEMBER];
} KeyDesc;

/* A key of no parts yet, with room for maxparts (palloc'd). */
extern KeyDesc *key_desc_create(int maxparts);

struct KeyCodec
{
	Oid			type;			/* the SQL type (domains: their base type) */
	Oid			opfamily;		/* the btree family whose order keys follow */
	SortValueType layout;		/* a value as C data */
	int			width;			/* bytes of such a value: 1 to 16, or 0
								 * for a varlena */
	int			bits;			/* keys stay below 2^bits */
	int			words;			/* 64-bit words of a key */
	bool		exact;			/* keys order the values completely; if
								 * not, they order a prefix, and the type's
								 * comparator orders rows whose keys tie */
	bool		roundtrip;		/* decoding gives the value back bit for bit */
	bool		node_key;		/* GpuSort takes it as a sort key */
	bool		array_elem;		/* the array functions sort arrays of it
								 * by its keys */
	bool		value_path;		/* the engines' value path (SortValues)
								 * takes values of its layout */
	bool		abbrev_reversed;	/* prefix keys: the abbreviated key orders
									 * as a signed integer, backwards (numeric);
									 * else as an unsigned one (text) */
	KeyPrefixSource source;		/* prefix keys: what makes them */

	/*
	 * Word w (0: the most significant) of the ascending key of a value (not
	 * NULL) of part, whose codec this is.  Codecs whose keys are made after
	 * collection (strxfrm(), ICU) raise an error.
	 */
	uint64		(*encode) (const KeyPart *part, Datum value, int w);

	/* The value of an ascending one-word key; NULL: keys do not decode. */
	Datum		(*decode) (const KeyCodec *codec, uint64 key);

	/*
	 * Do n plain values of the layout come back from their keys bit for
	 * bit?  NULL: always.
	 */
	bool		(*values_exact) (const void *values, uint32 n);
};

/*
 * Appends a part to a key after those it has, and returns it; prefix as in
 * KeyPart (kept only for abbreviated keys).
 */
extern KeyPart *key_desc_add(KeyDesc *desc, const KeyCodec *codec,
							 bool descending, bool nulls_first,
							 SortSupport prefix);

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
 * abbreviation, or, where its typmod (-1: none) bounds its digits, an exact
 * one (key_encode_numeric_exact).
 */
extern const KeyCodec *key_codec_for_order(Oid sortop, Oid type, int32 typmod,
										   Oid collation, bool *descending,
										   SortSupport prefix);

/*
 * The ascending key of a value (not NULL) of a part whose keys are
 * PostgreSQL's abbreviated keys (KEY_PREFIX_ABBREV), through its prepared
 * SortSupport.
 */
static inline uint64
key_encode_abbrev(const KeyPart *part, Datum value)
{
	uint64		key = (uint64) part->prefix->abbrev_converter(value, part->prefix);

	return part->codec->abbrev_reversed ? ~(key ^ (UINT64CONST(1) << 63)) : key;
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

/* The same for nwords words, into keys[]: the value's bytes from skip on. */
extern void key_encode_bytes_words(const KeyCodec *codec, Datum value,
								   bool descending, uint32 skip, int nwords,
								   uint64 *keys);

/*
 * The key of a numeric value (not NULL): its sign, its weight and its first
 * three base-10000 digits, ordered as numeric orders them (NaN above
 * +Infinity), without detoasting an inline value or any palloc.  Values
 * equal in those keys are ordered by numeric's comparator.
 */
extern uint64 key_encode_numeric(Datum value, bool descending);

/*
 * Word w of the exact two-word key of a numeric whose typmod bounds its
 * digits (builds with a 128-bit integer type).
 */
extern uint64 key_encode_numeric_exact(Datum value, int w);

/*
 * The codec of array elements of a type (not a domain), exact or prefix, or
 * NULL (see array_elem).  A prefix codec's keys need the SortSupport that
 * key_codec_for_array_order prepares.
 */
extern const KeyCodec *key_codec_for_type(Oid type);

/*
 * Word w (0: the most significant) of the key of a value (not NULL) of a
 * part, in the part's direction.  The codec's encode callback makes it; the
 * built-in layouts of fixed width and the prefix keys made as rows come,
 * which the rows' loops meet most, are encoded here, with no indirect call
 * per value.
 */
static inline uint64
key_part_encode(const KeyPart *part, Datum value, int w)
{
	const KeyCodec *codec = part->codec;
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
		case SORT_VALUES_UUID:
			key = sort_key_bytes16(DatumGetUUIDP(value)->data, w);
			break;
		case SORT_VALUES_PREFIX:
			/* the prefix keys made as rows come, by their makers directly */
			if (codec->source == KEY_PREFIX_ABBREV)
				key = key_encode_abbrev(part, value);
			else if (codec->source == KEY_PREFIX_BYTES)
				key = key_encode_bytes(codec, value, false, 0);
			else if (codec->source == KEY_PREFIX_NUMERIC)
				key = key_encode_numeric(value, false);
			else
				key = codec->encode(part, value, w);
			break;
		default:
			key = codec->encode(part, value, w);
			break;
	}
	return part->descending ? sort_key_descending(key, codec->bits) : key;
}

/*
 * The value of a one-word key of a part (exact for roundtrip codecs); the
 * built-in layouts inline, as in key_part_encode, others by the codec's
 * callback.  An error for a codec whose keys do not decode.
 */
static inline Datum
key_part_decode(const KeyPart *part, uint64 key)
{
	const KeyCodec *codec = part->codec;

	if (part->descending)
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
			if (codec->decode == NULL || codec->words != 1)
				elog(ERROR, "keys of type %u cannot be decoded", codec->type);
			return codec->decode(codec, key);
	}
}

/*
 * Plain values of a layout, for the array functions and the engines' value
 * path.
 */

/*
 * The codec (the table's first) of values of a layout, for callers that
 * know only the layout; an error for a layout that no codec has.
 */
extern const KeyCodec *key_codec_for_layout(SortValueType layout);

/* Bytes per value: 1 to 16 (0 for a varlena). */
static inline int
key_value_width(SortValueType layout)
{
	return key_codec_for_layout(layout)->width;
}

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
static inline bool
key_values_exact(SortValueType layout, const void *values, uint32 n)
{
	const KeyCodec *codec = key_codec_for_layout(layout);

	return codec->values_exact == NULL || codec->values_exact(values, n);
}

#endif							/* KEY_CODEC_H */
