/*-------------------------------------------------------------------------
 *
 * key_codec.c
 *	  The key-codec table, and the encoding of plain values in bulk.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "catalog/pg_opfamily_d.h"
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "parser/parse_coerce.h"
#include "port/pg_bswap.h"
#include "utils/lsyscache.h"
#include "utils/sortsupport.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "keys/key_codec.h"
#include "keys/collation.h"

/* Operator families that pg_opfamily_d.h names only in later releases. */
#ifndef FLOAT_BTREE_FAM_OID
#define FLOAT_BTREE_FAM_OID		1970
#endif
#ifndef DATETIME_BTREE_FAM_OID
#define DATETIME_BTREE_FAM_OID	434
#endif
#ifndef TIME_BTREE_FAM_OID
#define TIME_BTREE_FAM_OID		1996
#endif
#ifndef CASH_BTREE_FAM_OID
#define CASH_BTREE_FAM_OID		2099
#endif
#ifndef UUID_BTREE_FAM_OID
#define UUID_BTREE_FAM_OID		2968
#endif
#ifndef BYTEA_BTREE_FAM_OID
#define BYTEA_BTREE_FAM_OID		428
#endif
#ifndef NUMERIC_BTREE_FAM_OID
#define NUMERIC_BTREE_FAM_OID	1988
#endif

/*
 * The codecs' callbacks.  The built-in layouts of fixed width are encoded
 * and decoded inline by key_part_encode and key_part_decode; their
 * callbacks are the same encoders, for callers that hold only a codec.
 */
static uint64
encode_fixed(const KeyPart *part, Datum value, int w)
{
	KeyPart		ascending = *part;

	ascending.descending = false;
	return key_part_encode(&ascending, value, w);
}

static Datum
decode_fixed(const KeyCodec *codec, uint64 key)
{
	KeyPart		part = {.codec = codec};

	return key_part_decode(&part, key);
}

static uint64
encode_abbrev(const KeyPart *part, Datum value, int w)
{
	return key_encode_abbrev(part, value);
}

static uint64
encode_bytes(const KeyPart *part, Datum value, int w)
{
	return key_encode_bytes(part->codec, value, false, 0);
}

static uint64
encode_numeric(const KeyPart *part, Datum value, int w)
{
	return key_encode_numeric(value, false);
}

#ifdef HAVE_INT128
static uint64
encode_numeric_exact(const KeyPart *part, Datum value, int w)
{
	return key_encode_numeric_exact(value, w);
}

/*
 * An interval's key: the span that interval_cmp orders by (months of 30
 * days, days of 24 hours, then microseconds; intervals of the same span are
 * equal), a 128-bit integer biased to be unsigned, in two words.
 */
static uint64
encode_interval(const KeyPart *part, Datum value, int w)
{
	const Interval *interval = DatumGetIntervalP(value);
	int128		span = (int128) interval->time +
		(int128) ((int64) interval->month * 30 + interval->day) * USECS_PER_DAY;
	uint128		key = (uint128) span ^ ((uint128) 1 << 127);

	return w == 0 ? (uint64) (key >> 64) : (uint64) key;
}
#endif

/* strxfrm() and ICU keys are made after collection, by xfrm_keys.c. */
static uint64
encode_later(const KeyPart *part, Datum value, int w)
{
	elog(ERROR, "keys of type %u are made after the rows are collected",
		 part->codec->type);
	return 0;
}

/*
 * Floats come back from their keys unless one is -0 or a NaN other than the
 * one keys decode to.
 */
static bool
float4_values_exact(const void *values, uint32 n)
{
	const uint32 *v = values;
	bool		inexact = false;

	for (uint32 i = 0; i < n; i++)
		inexact |= v[i] == 0x80000000 ||
			((v[i] & 0x7FFFFFFF) > 0x7F800000 && v[i] != SORT_KEY_FLOAT4_NAN);
	return !inexact;
}

static bool
float8_values_exact(const void *values, uint32 n)
{
	const uint64 *v = values;
	bool		inexact = false;

	for (uint32 i = 0; i < n; i++)
		inexact |= v[i] == (UINT64CONST(1) << 63) ||
			((v[i] & ~(UINT64CONST(1) << 63)) > UINT64CONST(0x7FF0000000000000) &&
			 v[i] != SORT_KEY_FLOAT8_NAN);
	return !inexact;
}

/* What the codecs of a layout share. */
#define FIXED(layout_, width_, bits_) \
	.layout = (layout_), .width = (width_), .bits = (bits_), .words = 1, \
	.exact = true, .encode = encode_fixed, .decode = decode_fixed
#define INT16_KEYS		FIXED(SORT_VALUES_INT16, 2, 16), .roundtrip = true, .value_path = true
#define INT32_KEYS		FIXED(SORT_VALUES_INT32, 4, 32), .roundtrip = true, .value_path = true
#define INT64_KEYS		FIXED(SORT_VALUES_INT64, 8, 64), .roundtrip = true, .value_path = true
/* -0 and NaNs other than PostgreSQL's come back changed */
#define FLOAT32_KEYS	FIXED(SORT_VALUES_FLOAT32, 4, 32), .value_path = true, \
	.values_exact = float4_values_exact
#define FLOAT64_KEYS	FIXED(SORT_VALUES_FLOAT64, 8, 64), .value_path = true, \
	.values_exact = float8_values_exact
/* prefix keys: rows whose keys tie are ordered by the type's comparator */
#define PREFIX_KEYS_OF(source_, encode_, words_) \
	.layout = SORT_VALUES_PREFIX, .width = 0, .bits = 64, .words = (words_), \
	.source = (source_), .encode = (encode_)
#define PREFIX_KEYS(source_, encode_) PREFIX_KEYS_OF(source_, encode_, 1)
/* the node's, every release */
#define NODE_KEY		.node_key = true
#define BOTH_KEYS		.node_key = true, .array_elem = true

/*
 * The codecs.  Exact keys, each the value's bits mapped to an unsigned order
 * (sort_keys.h); a uuid takes two words, and so does an interval's span (or
 * a numeric's digits under a typmod that bounds them).  A type joins the
 * GpuSort node by its node_key, the array functions' key paths by
 * array_elem (other element types are sorted by their comparator alone).  A
 * prefix key (text, bpchar,
 * numeric, bytea: varchar sorts as text) is PostgreSQL's own abbreviated key
 * of the value, mapped to an unsigned order; rows whose prefix keys tie are
 * ordered by the type's comparator, so the order is PostgreSQL's by
 * construction.  Text under a libc collation other than C has no
 * abbreviated keys: its xfrm codecs make keys with strxfrm(), and the node
 * checks the order they give (xfrm_keys.h).
 */
static const KeyCodec key_codecs[] = {
	{.type = INT2OID, .opfamily = INTEGER_BTREE_FAM_OID, INT16_KEYS, BOTH_KEYS},
	{.type = INT4OID, .opfamily = INTEGER_BTREE_FAM_OID, INT32_KEYS, BOTH_KEYS},
	{.type = INT8OID, .opfamily = INTEGER_BTREE_FAM_OID, INT64_KEYS, BOTH_KEYS},
	{.type = DATEOID, .opfamily = DATETIME_BTREE_FAM_OID, INT32_KEYS, BOTH_KEYS},
	{.type = TIMESTAMPOID, .opfamily = DATETIME_BTREE_FAM_OID, INT64_KEYS, BOTH_KEYS},
	{.type = TIMESTAMPTZOID, .opfamily = DATETIME_BTREE_FAM_OID, INT64_KEYS, BOTH_KEYS},
	{.type = TIMEOID, .opfamily = TIME_BTREE_FAM_OID, INT64_KEYS, BOTH_KEYS},
	{.type = CASHOID, .opfamily = CASH_BTREE_FAM_OID, INT64_KEYS, BOTH_KEYS},
	{.type = FLOAT4OID, .opfamily = FLOAT_BTREE_FAM_OID, FLOAT32_KEYS, BOTH_KEYS},
	{.type = FLOAT8OID, .opfamily = FLOAT_BTREE_FAM_OID, FLOAT64_KEYS, BOTH_KEYS},
	{.type = BOOLOID, .opfamily = BOOL_BTREE_FAM_OID, FIXED(SORT_VALUES_BOOL, 1, 1),
	.roundtrip = true, BOTH_KEYS},
	{.type = OIDOID, .opfamily = OID_BTREE_FAM_OID, FIXED(SORT_VALUES_UINT32, 4, 32),
	.roundtrip = true, BOTH_KEYS},
	{.type = UUIDOID, .opfamily = UUID_BTREE_FAM_OID, .layout = SORT_VALUES_UUID,
		.width = 16, .bits = 64, .words = 2, .exact = true, .encode = encode_fixed,
	BOTH_KEYS},
#ifdef HAVE_INT128
	/* the node's only: an interval's span, exact in two words */
	{.type = INTERVALOID, .opfamily = INTERVAL_BTREE_FAM_OID, .layout = SORT_VALUES_CODEC,
		.width = sizeof(Interval), .bits = 64, .words = 2, .exact = true,
	.encode = encode_interval, NODE_KEY},
#endif
	{.type = TEXTOID, .opfamily = TEXT_BTREE_FAM_OID,
	PREFIX_KEYS(KEY_PREFIX_ABBREV, encode_abbrev), BOTH_KEYS},
	{.type = BPCHAROID, .opfamily = BPCHAR_BTREE_FAM_OID,
	PREFIX_KEYS(KEY_PREFIX_ABBREV, encode_abbrev), BOTH_KEYS},
	{.type = NUMERICOID, .opfamily = NUMERIC_BTREE_FAM_OID,
		PREFIX_KEYS(KEY_PREFIX_ABBREV, encode_abbrev), BOTH_KEYS,
	.abbrev_reversed = true},
	/* where the release abbreviates bytea (18 on) */
	{.type = BYTEAOID, .opfamily = BYTEA_BTREE_FAM_OID,
	PREFIX_KEYS(KEY_PREFIX_ABBREV, encode_abbrev), BOTH_KEYS},
	/* the node's only: strxfrm() keys, checked after the sort ... */
	{.type = TEXTOID, .opfamily = TEXT_BTREE_FAM_OID,
	PREFIX_KEYS_OF(KEY_PREFIX_XFRM, encode_later, COLLATION_KEY_WORDS), NODE_KEY},
	{.type = BPCHAROID, .opfamily = BPCHAR_BTREE_FAM_OID,
	PREFIX_KEYS_OF(KEY_PREFIX_XFRM, encode_later, COLLATION_KEY_WORDS), NODE_KEY},
	/* ... and bytes, where they order the values (C collation, bytea) */
	{.type = TEXTOID, .opfamily = TEXT_BTREE_FAM_OID,
	PREFIX_KEYS(KEY_PREFIX_BYTES, encode_bytes), NODE_KEY},
	{.type = BPCHAROID, .opfamily = BPCHAR_BTREE_FAM_OID,
	PREFIX_KEYS(KEY_PREFIX_BYTES, encode_bytes), NODE_KEY},
	{.type = BYTEAOID, .opfamily = BYTEA_BTREE_FAM_OID,
	PREFIX_KEYS(KEY_PREFIX_BYTES, encode_bytes), NODE_KEY},
	/* ... ICU's sort keys, made on threads ... */
	{.type = TEXTOID, .opfamily = TEXT_BTREE_FAM_OID,
	PREFIX_KEYS_OF(KEY_PREFIX_ICU, encode_later, COLLATION_KEY_WORDS), NODE_KEY},
	{.type = BPCHAROID, .opfamily = BPCHAR_BTREE_FAM_OID,
	PREFIX_KEYS_OF(KEY_PREFIX_ICU, encode_later, COLLATION_KEY_WORDS), NODE_KEY},
	/* ... and numeric, by sign, weight and first digits ... */
	{.type = NUMERICOID, .opfamily = NUMERIC_BTREE_FAM_OID,
	PREFIX_KEYS(KEY_PREFIX_NUMERIC, encode_numeric), NODE_KEY},
#ifdef HAVE_INT128
	/* ... and numeric's every digit, under a typmod whose values have few */
	{.type = NUMERICOID, .opfamily = NUMERIC_BTREE_FAM_OID,
		.layout = SORT_VALUES_PREFIX, .width = 0, .bits = 64, .words = 2,
		.exact = true, .source = KEY_NUMERIC_EXACT, .encode = encode_numeric_exact,
	NODE_KEY},
#endif
};

#ifdef USE_ASSERT_CHECKING
/*
 * A codec the table gives out must say how its keys are made, and how they
 * decode where it claims so: a development build stops on a row that does
 * not, rather than sort by keys that mean nothing.
 */
static const KeyCodec *
codec_checked(const KeyCodec *codec)
{
	if (codec != NULL &&
		(codec->encode == NULL || codec->words < 1 || codec->words > MAX_KEY_WORDS ||
		 codec->bits < 1 || codec->bits > 64 ||
		 (codec->roundtrip && (codec->decode == NULL || codec->words != 1)) ||
		 (codec->value_path && codec->width == 0)))
		elog(ERROR, "the key codec of type %u is incomplete", codec->type);
	return codec;
}
#else
#define codec_checked(codec)	(codec)
#endif

static const KeyCodec *
codec_of(Oid type, KeyPrefixSource source)
{
	for (int i = 0; i < lengthof(key_codecs); i++)
		if (key_codecs[i].type == type && key_codecs[i].source == source)
			return codec_checked(&key_codecs[i]);
	return NULL;
}

const KeyCodec *
key_codec_for_layout(SortValueType layout)
{
	for (int i = 0; i < lengthof(key_codecs); i++)
		if (key_codecs[i].layout == layout)
			return codec_checked(&key_codecs[i]);
	elog(ERROR, "no key codec has values of layout %d", layout);
	return NULL;
}

KeyDesc *
key_desc_create(int maxparts)
{
	KeyDesc    *desc = palloc0(offsetof(KeyDesc, parts) + sizeof(KeyPart) * Max(maxparts, 1));

	desc->maxparts = maxparts;
	return desc;
}

KeyPart *
key_desc_add(KeyDesc *desc, const KeyCodec *codec, bool descending,
			 bool nulls_first, SortSupport prefix)
{
	KeyPart    *part;

	if (desc->nparts >= desc->maxparts)
		elog(ERROR, "a key has room for %d parts", desc->maxparts);
	part = &desc->parts[desc->nparts++];
	part->codec = codec;
	part->descending = descending;
	part->nulls_first = nulls_first;
	part->offset = desc->width;
	part->width = codec->words * sizeof(uint64);
	part->prefix = (!codec->exact && codec->source == KEY_PREFIX_ABBREV) ? prefix : NULL;
	desc->width += part->width;
	return part;
}

/* The node's codec of a type from a source, where it follows opfamily. */
static const KeyCodec *
node_codec_of(Oid type, Oid opfamily, KeyPrefixSource source)
{
	const KeyCodec *codec = codec_of(type, source);

	return (codec && codec->opfamily == opfamily) ? codec : NULL;
}

const KeyCodec *
key_codec_for_type(Oid type)
{
	const KeyCodec *codec = codec_of(type, KEY_PREFIX_ABBREV);

	return (codec && codec->array_elem) ? codec : NULL;
}

/*
 * Prepares ssup (zeroed, ssup_cxt set) to make a prefix codec's keys:
 * PostgreSQL's own abbreviated keys for sortop under collation.  False when
 * the type gives none there (a libc collation other than C, for text).
 */
static bool
prefix_prepare(const KeyCodec *codec, Oid sortop, Oid collation, SortSupport ssup)
{
	ssup->ssup_collation = collation;
	ssup->abbreviate = true;
	PrepareSortSupportFromOrderingOp(sortop, ssup);
	if (ssup->abbrev_converter == NULL)
		return false;
	/* keys that order as unsigned words, or numeric's, whose order is known */
	return codec->abbrev_reversed || ssup->comparator == ssup_datum_unsigned_cmp;
}

/*
 * The exact numeric key: two words, 128 bits.  0, -Infinity's; below
 * 2^126, negative numbers; 2^126, zero; above, positive numbers; at the
 * top +Infinity's and NaN's.  A number's magnitude is its weight (14 bits, biased) and then
 * NUMERIC_EXACT_DIGITS digits of 14 bits, all it has under a typmod that
 * numeric_typmod_exact admits.
 */
#define NUMERIC_EXACT_DIGITS		8
#define NUMERIC_EXACT_WEIGHT_BIAS	8192

/*
 * Do the values of a numeric typmod have at most NUMERIC_EXACT_DIGITS
 * base-10000 digits?  numeric(p, s), 0 <= s <= p: at most p - s digits
 * before the point and s after, in groups of four aligned at the point.
 */
static bool
numeric_typmod_exact(int32 typmod)
{
#ifdef HAVE_INT128
	int			precision;
	int			scale;

	if (typmod < (int32) VARHDRSZ)
		return false;
	precision = ((typmod - VARHDRSZ) >> 16) & 0xFFFF;
	scale = ((((typmod - VARHDRSZ) & 0x7FF) ^ 1024) - 1024);
	return scale >= 0 && scale <= precision &&
		(precision - scale + 3) / 4 + (scale + 3) / 4 <= NUMERIC_EXACT_DIGITS;
#else
	return false;
#endif
}

/*
 * key_codec_for_order and key_codec_for_array_order: for_node says which of
 * the two asks, node_key or array_elem the flag that admits a codec.
 */
static const KeyCodec *
codec_for_order(Oid sortop, Oid type, int32 typmod, Oid collation,
				bool *descending, SortSupport prefix, bool for_node)
{
	Oid			opfamily;
	Oid			opcintype;
	const KeyCodec *codec;
	SortSupportData probe;

	/* varchar sorts as text: binary-coercible types share their keys */
	if (!compat_ordering_op_properties(sortop, &opfamily, &opcintype, descending) ||
		!IsBinaryCoercible(getBaseType(type), opcintype))
		return NULL;
	/*
	 * The node keys text under C and bytea by their bytes, text under ICU by
	 * ICU's sort keys, numeric by its stored form: all of it where its
	 * typmod bounds its digits.
	 */
	if (for_node)
	{
		if (opcintype == NUMERICOID && numeric_typmod_exact(typmod) &&
			(codec = node_codec_of(opcintype, opfamily, KEY_NUMERIC_EXACT)) != NULL)
			return codec;
		if ((opcintype == BYTEAOID || key_collation_is_c(collation)) &&
			(codec = node_codec_of(opcintype, opfamily, KEY_PREFIX_BYTES)) != NULL)
			return codec;
		if ((codec = node_codec_of(opcintype, opfamily, KEY_PREFIX_ICU)) != NULL &&
			icu_collation(collation) != NULL)
			return codec;
		if ((codec = node_codec_of(opcintype, opfamily, KEY_PREFIX_NUMERIC)) != NULL)
			return codec;
	}
	codec = codec_of(opcintype, KEY_PREFIX_ABBREV);
	if (codec == NULL || !(for_node ? codec->node_key : codec->array_elem) ||
		codec->opfamily != opfamily)
		return NULL;
	if (!codec->exact)
	{
		if (prefix == NULL)
		{
			memset(&probe, 0, sizeof(probe));
			probe.ssup_cxt = CurrentMemoryContext;
			prefix = &probe;
		}
		if (!prefix_prepare(codec, sortop, collation, prefix))
		{
			/* text that PostgreSQL compares with strcoll(): the node's */
			codec = for_node ? codec_of(opcintype, KEY_PREFIX_XFRM) : NULL;
			if (codec == NULL || xfrm_collation(collation) == NULL)
				return NULL;
		}
	}
	return codec;
}

const KeyCodec *
key_codec_for_order(Oid sortop, Oid type, int32 typmod, Oid collation,
					bool *descending, SortSupport prefix)
{
	return codec_for_order(sortop, type, typmod, collation, descending, prefix, true);
}

const KeyCodec *
key_codec_for_array_order(Oid sortop, Oid type, Oid collation,
						  bool *descending, SortSupport prefix)
{
	return codec_for_order(sortop, type, -1, collation, descending, prefix, false);
}

/*
 * nwords words of a value's bytes from skip on (key_encode_bytes): inlined
 * into each caller, so that the one-word key of every row collected keeps
 * no loop or call.
 */
static pg_attribute_always_inline void
encode_bytes_words(const KeyCodec *codec, Datum value, bool descending,
				   uint32 skip, int nwords, uint64 *keys)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(value);
	struct varlena *copy = NULL;
	const char *s;
	int			len;

	/* bpchar's trailing spaces do not count: it needs the whole value */
	if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
		v = copy = (codec->type == BPCHAROID) ? detoast_attr(v) :
			detoast_attr_slice(v, 0, skip + 8 * nwords);
	s = key_value_bytes(v, codec->type == BPCHAROID, &len);
	for (int w = 0; w < nwords; w++, skip += 8)
	{
		uint64		key = 0;

		if ((int64) len >= (int64) skip + 8)
		{
			/* 8 bytes there: one load, big-endian */
			memcpy(&key, s + skip, sizeof(key));
			key = pg_ntoh64(key);
		}
		else
			for (uint32 i = skip; i < skip + 8; i++)
				key = (key << 8) | ((int) i < len ? (uint8) s[i] : 0);
		keys[w] = descending ? ~key : key;
	}
	if (copy)
		pfree(copy);
}

uint64
key_encode_bytes(const KeyCodec *codec, Datum value, bool descending,
				 uint32 skip)
{
	uint64		key;

	encode_bytes_words(codec, value, descending, skip, 1, &key);
	return key;
}

void
key_encode_bytes_words(const KeyCodec *codec, Datum value, bool descending,
					   uint32 skip, int nwords, uint64 *keys)
{
	encode_bytes_words(codec, value, descending, skip, nwords, keys);
}

/*
 * numeric's stored form (numeric.c, unchanged since PostgreSQL 14): after
 * the varlena header, a 16-bit header word, in the long form a 16-bit
 * weight, then base-10000 digits with no leading or trailing zeros.  The
 * header's top two bits: 00 positive, 01 negative, 10 the short form (sign,
 * display scale and a 7-bit weight in the word), 11 special (NaN,
 * +Infinity, -Infinity in the next two bits).
 */
#define NUMERIC_FORM_MASK		0xC000
#define NUMERIC_FORM_NEG		0x4000
#define NUMERIC_FORM_SHORT		0x8000
#define NUMERIC_FORM_SPECIAL	0xC000
#define NUMERIC_SPECIAL_MASK	0xF000
#define NUMERIC_SPECIAL_NAN		0xC000
#define NUMERIC_SPECIAL_PINF	0xD000
#define NUMERIC_SHORT_NEG		0x2000
#define NUMERIC_SHORT_WEIGHT_NEG 0x0040
#define NUMERIC_SHORT_WEIGHT	0x003F

/* Digits of a numeric key, and the bits of each (a digit is below 10000). */
#define NUMERIC_KEY_DIGITS		3
#define NUMERIC_DIGIT_BITS		14

/* A numeric value as its stored form tells it (numeric_read). */
typedef struct NumericRead
{
	uint16		special;		/* NUMERIC_SPECIAL_* bits, or 0: a number */
	bool		negative;
	int			weight;			/* of the first digit */
	int			ndigits;		/* base-10000 digits, none leading zero */
	const char *digits;			/* int16 each, unaligned */
	struct varlena *copy;		/* a detoasted copy to free, or NULL */
} NumericRead;

static void
numeric_read(Datum value, NumericRead *n)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(value);
	const char *data;
	int			len;
	uint16		header;

	n->copy = NULL;
	if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
		v = n->copy = detoast_attr(v);
	data = VARDATA_ANY(v);
	len = VARSIZE_ANY_EXHDR(v);
	memcpy(&header, data, sizeof(uint16));

	n->special = 0;
	n->ndigits = 0;
	if ((header & NUMERIC_FORM_MASK) == NUMERIC_FORM_SPECIAL)
	{
		n->special = header & NUMERIC_SPECIAL_MASK;
		return;
	}
	if ((header & NUMERIC_FORM_MASK) == NUMERIC_FORM_SHORT)
	{
		n->negative = (header & NUMERIC_SHORT_NEG) != 0;
		n->weight = (header & NUMERIC_SHORT_WEIGHT) |
			((header & NUMERIC_SHORT_WEIGHT_NEG) ? ~NUMERIC_SHORT_WEIGHT : 0);
		n->digits = data + sizeof(uint16);
	}
	else
	{
		int16		w;

		n->negative = (header & NUMERIC_FORM_MASK) == NUMERIC_FORM_NEG;
		memcpy(&w, data + sizeof(uint16), sizeof(int16));
		n->weight = w;
		n->digits = data + 2 * sizeof(uint16);
	}
	n->ndigits = (len - (n->digits - data)) / (int) sizeof(int16);

	/* no leading zero digits, should a value have any */
	while (n->ndigits > 0 && n->digits[0] == 0 && n->digits[1] == 0)
	{
		n->digits += sizeof(int16);
		n->ndigits--;
		n->weight--;
	}
}

/* Digit i of a value read, 0 past its last. */
static inline uint64
numeric_digit(const NumericRead *n, int i)
{
	int16		digit = 0;

	if (i < n->ndigits)
		memcpy(&digit, n->digits + i * sizeof(int16), sizeof(int16));
	return (uint64) digit;
}

uint64
key_encode_numeric(Datum value, bool descending)
{
	NumericRead n;
	uint64		key;
	const uint64 zero = UINT64CONST(1) << 63;

	numeric_read(value, &n);
	/* -Infinity < every number < +Infinity < NaN */
	if (n.special == NUMERIC_SPECIAL_NAN)
		key = PG_UINT64_MAX;
	else if (n.special == NUMERIC_SPECIAL_PINF)
		key = PG_UINT64_MAX - 1;
	else if (n.special != 0)
		key = 0;
	else if (n.ndigits == 0)
		key = zero;
	else
	{
		/* the weight, biased to be unsigned, then the first digits */
		uint64		magnitude = (uint64) (n.weight + 32768) & 0xFFFF;

		for (int i = 0; i < NUMERIC_KEY_DIGITS; i++)
			magnitude = (magnitude << NUMERIC_DIGIT_BITS) | numeric_digit(&n, i);
		key = n.negative ? zero - 1 - magnitude : zero + 1 + magnitude;
	}
	if (n.copy)
		pfree(n.copy);
	return descending ? ~key : key;
}

#ifdef HAVE_INT128
/*
 * The key of the value whose first word was made last: its callers ask for
 * a value's words in order, the second right after the first (row_keys.h),
 * so the second comes from here rather than from reading the value again.
 */
static Datum numeric_exact_value = (Datum) 0;
static uint128 numeric_exact_key;

uint64
key_encode_numeric_exact(Datum value, int w)
{
	NumericRead n;
	uint128		key;
	const uint128 zero = (uint128) 1 << 126;

	if (w > 0 && value == numeric_exact_value)
		return (uint64) numeric_exact_key;
	numeric_read(value, &n);
	if (n.special == NUMERIC_SPECIAL_NAN)
		key = ~(uint128) 0;
	else if (n.special == NUMERIC_SPECIAL_PINF)
		key = ~(uint128) 0 - 1;
	else if (n.special != 0)
		key = 0;
	else if (n.ndigits == 0)
		key = zero;
	else
	{
		uint128		magnitude;

		/* the type's precision keeps values within these bounds */
		if (n.ndigits > NUMERIC_EXACT_DIGITS ||
			n.weight <= -NUMERIC_EXACT_WEIGHT_BIAS || n.weight >= NUMERIC_EXACT_WEIGHT_BIAS - 1)
			elog(ERROR, "a numeric value has more digits than its type's precision allows");
		magnitude = (uint128) (n.weight + NUMERIC_EXACT_WEIGHT_BIAS);
		for (int i = 0; i < NUMERIC_EXACT_DIGITS; i++)
			magnitude = (magnitude << NUMERIC_DIGIT_BITS) | numeric_digit(&n, i);
		key = n.negative ? zero - 1 - magnitude : zero + 1 + magnitude;
	}
	if (n.copy)
		pfree(n.copy);
	numeric_exact_value = value;
	numeric_exact_key = key;
	return w == 0 ? (uint64) (key >> 64) : (uint64) key;
}
#endif

/* Values encoded between interrupt checks. */
#define ENCODE_CHUNK	(1 << 20)

/* Encodes n values of ctype into keys, noting their range. */
#define ENCODE_VALUES(ctype, encode, bits) \
	do { \
		const ctype *v = (const ctype *) values; \
		\
		for (uint32 start = 0; start < n; start += ENCODE_CHUNK) \
		{ \
			uint32		end = Min(n, start + ENCODE_CHUNK); \
			\
			CHECK_FOR_INTERRUPTS(); \
			for (uint32 i = start; i < end; i++) \
			{ \
				uint64		key = encode(v[i]); \
				\
				if (descending) \
					key = sort_key_descending(key, (bits)); \
				keys[i] = key; \
				lo = Min(lo, key); \
				hi = Max(hi, key); \
			} \
		} \
	} while (0)

void
key_encode_values(SortValueType layout, bool descending, const void *values,
				  uint32 n, uint64 *keys, uint64 *min, uint64 *max)
{
	uint64		lo = PG_UINT64_MAX;
	uint64		hi = 0;

	switch (layout)
	{
		case SORT_VALUES_INT16:
			ENCODE_VALUES(int16, sort_key_int2, 16);
			break;
		case SORT_VALUES_INT32:
			ENCODE_VALUES(int32, sort_key_int4, 32);
			break;
		case SORT_VALUES_INT64:
			ENCODE_VALUES(int64, sort_key_int8, 64);
			break;
		case SORT_VALUES_FLOAT32:
			ENCODE_VALUES(float4, sort_key_float4, 32);
			break;
		case SORT_VALUES_FLOAT64:
			ENCODE_VALUES(float8, sort_key_float8, 64);
			break;
		default:
			elog(ERROR, "values of layout %d are not sorted as plain values", layout);
	}
	*min = lo;
	*max = hi;
}

/* Decodes the n sorted keys, less min, into values of ctype. */
#define DECODE_VALUES(ctype, decode, bits) \
	do { \
		ctype	   *v = (ctype *) values; \
		\
		for (uint32 i = 0; i < n; i++) \
		{ \
			uint64		key = keys[i] + min; \
			\
			if (descending) \
				key = sort_key_descending(key, (bits)); \
			v[i] = decode; \
		} \
	} while (0)

void
key_decode_values(SortValueType layout, bool descending, const uint64 *keys,
				  uint64 min, uint32 n, void *values)
{
	switch (layout)
	{
		case SORT_VALUES_INT16:
			DECODE_VALUES(int16, DatumGetInt16(sort_key_decode_int(key, 16, false)), 16);
			break;
		case SORT_VALUES_INT32:
			DECODE_VALUES(int32, DatumGetInt32(sort_key_decode_int(key, 32, false)), 32);
			break;
		case SORT_VALUES_INT64:
			DECODE_VALUES(int64, DatumGetInt64(sort_key_decode_int(key, 64, false)), 64);
			break;
		case SORT_VALUES_FLOAT32:
			DECODE_VALUES(float4, sort_key_decode_float4(key), 32);
			break;
		case SORT_VALUES_FLOAT64:
			DECODE_VALUES(float8, sort_key_decode_float8(key), 64);
			break;
		default:
			elog(ERROR, "values of layout %d are not sorted as plain values", layout);
	}
}
