/*-------------------------------------------------------------------------
 *
 * sort_keys.h
 *	  Order-preserving unsigned keys for the sort engines.
 *
 * Each encoder maps a value to an unsigned integer whose unsigned order is
 * the value's order under the type's default btree operator class: signed
 * integers have their sign bit flipped, floats are mapped so that -0 equals
 * 0 and NaN sorts after everything, as PostgreSQL orders them.  A key of a
 * w-bit type stays below 2^w, so that narrow keys leave room above them
 * (the GpuSort node uses it to place NULLs).  Descending order complements
 * the key within its width.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SORT_KEYS_H
#define SORT_KEYS_H

#include "postgres.h"

#include <math.h>

/*
 * The layouts of plain values that keys are made of: what the array
 * functions sort by keys, the first five also what the engines' value path
 * takes.
 */
typedef enum SortValueType
{
	SORT_VALUES_INT16,
	SORT_VALUES_INT32,			/* also date */
	SORT_VALUES_INT64,			/* also timestamp, timestamptz, time, money */
	SORT_VALUES_FLOAT32,
	SORT_VALUES_FLOAT64,
	/* not on the value path: */
	SORT_VALUES_BOOL,
	SORT_VALUES_UINT32,			/* oid */
	SORT_VALUES_UUID,			/* 16 bytes, compared as unsigned bytes */
	SORT_VALUES_PREFIX,			/* varlena: a prefix key, from SortSupport's
								 * abbreviated key */
	SORT_VALUES_CODEC			/* fixed width, known only to its codec's
								 * callbacks (key_codec.h) */
} SortValueType;

static inline uint64
sort_key_int2(int16 v)
{
	return (uint16) v ^ UINT64CONST(0x8000);
}

static inline uint64
sort_key_int4(int32 v)
{
	return (uint32) v ^ UINT64CONST(0x80000000);
}

static inline uint64
sort_key_int8(int64 v)
{
	return (uint64) v ^ (UINT64CONST(1) << 63);
}

static inline uint64
sort_key_bool(bool v)
{
	return v ? 1 : 0;
}

/* Word w (0: the most significant) of 16 bytes compared as unsigned bytes. */
static inline uint64
sort_key_bytes16(const unsigned char *bytes, int w)
{
	uint64		key = 0;

	for (int i = 0; i < 8; i++)
		key = (key << 8) | bytes[w * 8 + i];
	return key;
}

static inline uint64
sort_key_float4(float4 v)
{
	union
	{
		float4		f;
		uint32		u;
	}			x;

	if (isnan(v))
		return PG_UINT32_MAX;
	x.f = (v == 0.0f) ? 0.0f : v;	/* -0 sorts as 0 */
	return (x.u & 0x80000000) ? (uint32) ~x.u : (x.u | 0x80000000);
}

static inline uint64
sort_key_float8(float8 v)
{
	union
	{
		float8		f;
		uint64		u;
	}			x;

	if (isnan(v))
		return PG_UINT64_MAX;
	x.f = (v == 0.0) ? 0.0 : v;		/* -0 sorts as 0 */
	return (x.u >> 63) ? ~x.u : (x.u | (UINT64CONST(1) << 63));
}

/*
 * The NaN that float keys decode to: PostgreSQL's (get_float4_nan() and
 * get_float8_nan() on x86-64), as GS_FLOAT32_NAN and GS_FLOAT64_NAN of the
 * CUDA library.  -0 decodes as 0.
 */
#define SORT_KEY_FLOAT4_NAN		UINT64CONST(0x7FC00000)
#define SORT_KEY_FLOAT8_NAN		UINT64CONST(0x7FF8000000000000)

static inline float4
sort_key_decode_float4(uint64 key)
{
	union
	{
		float4		f;
		uint32		u;
	}			x;

	if (key == PG_UINT32_MAX)
		x.u = (uint32) SORT_KEY_FLOAT4_NAN;
	else
		x.u = (key & 0x80000000) ? (uint32) (key & 0x7FFFFFFF) : (uint32) ~key;
	return x.f;
}

static inline float8
sort_key_decode_float8(uint64 key)
{
	union
	{
		float8		f;
		uint64		u;
	}			x;

	if (key == PG_UINT64_MAX)
		x.u = SORT_KEY_FLOAT8_NAN;
	else
		x.u = (key >> 63) ? (key & ~(UINT64CONST(1) << 63)) : ~key;
	return x.f;
}

/* Reverses the order of keys that are below 2^bits (bits in 1..64). */
static inline uint64
sort_key_descending(uint64 key, int bits)
{
	uint64		mask = (bits >= 64) ? PG_UINT64_MAX : ((UINT64CONST(1) << bits) - 1);

	return mask - key;
}

/* The integer (as a Datum) of a key made by sort_key_int2/4/8. */
static inline Datum
sort_key_decode_int(uint64 key, int bits, bool descending)
{
	if (descending)
		key = sort_key_descending(key, bits);
	switch (bits)
	{
		case 16:
			return Int16GetDatum((int16) (uint16) (key ^ 0x8000));
		case 32:
			return Int32GetDatum((int32) (uint32) (key ^ 0x80000000));
		default:
			return Int64GetDatum((int64) (key ^ (UINT64CONST(1) << 63)));
	}
}

#endif							/* SORT_KEYS_H */
