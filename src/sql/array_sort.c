/*-------------------------------------------------------------------------
 *
 * array_sort.c
 *	  The SQL functions that sort arrays:
 *
 *		gpusort(arr anyarray, descending, nulls_first)
 *		gpusort_permutation(arr anyarray, descending, nulls_first)
 *
 *	  for one-dimensional arrays of any type with a default btree operator
 *	  class (a domain's: its base type's).  gpusort returns the array
 *	  sorted, with the type, dimensions and lower bound of the input;
 *	  gpusort_permutation returns the 1-based positions, counted from the
 *	  first element whatever the lower bound, that sort it (an argsort), as
 *	  int4[].
 *
 * The defaults are those of PostgreSQL 18's array_sort: ascending, and NULLs
 * first exactly when descending (nulls_first NULL or left out).  A NULL
 * array or descending gives NULL.  Elements order as the type's default
 * btree operator class orders them under the call's collation (floats: -0
 * equals 0, NaN after every number), and the sort is stable: equal
 * elements keep their input order, in either direction.  Multidimensional
 * arrays are rejected, and element types without an ordering operator too.
 *
 * Only the non-null elements are sorted: NULLs are all equal, so they form
 * one block placed before or after the others.  How the others are sorted
 * depends on the element type:
 *
 *	- integers, floats, date, timestamp, timestamptz, time, money, bool, oid
 *	  and uuid (the exact codecs of key_codec.h) are turned into
 *	  order-preserving keys and sorted by the engine that gpusort.device
 *	  selects (engine.h).  When the keys give the elements back bit for bit
 *	  (integers always; floats unless one is -0 or an unusual NaN), gpusort()
 *	  sorts the values themselves (SortValues: on the GPU the elements go up
 *	  as they are and come back sorted); otherwise, for the other types, and
 *	  for gpusort_permutation, a permutation is sorted (a SortJob: uuid's key
 *	  takes two words) and applied.  Arrays of a few elements are sorted
 *	  here, by insertion.  These types are fixed-width and aligned to their
 *	  width, so the data area of an array is a plain C array of its non-null
 *	  elements: it is read directly, not through deconstruct_array (which
 *	  would cost a Datum and a bool per element), and the result is written
 *	  directly in sorted order.  Besides the input and the result, sorting n
 *	  elements then needs at most the keys and a permutation entry per
 *	  element and the engine's scratch memory, so arrays near the 1 GB limit
 *	  can be sorted;
 *	- the elements of any other type are deconstructed into Datums and
 *	  sorted by datum_sort.c: by prefix keys on the engine and the type's
 *	  comparator (text, varchar, bpchar, numeric, bytea), or by the
 *	  comparator alone.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/tupmacs.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "engine/engine.h"
#include "keys/key_codec.h"
#include "sql/datum_sort.h"
#include "util/prefault.h"
#include "settings.h"

/* A one-dimensional input array, checked and measured. */
typedef struct SortInput
{
	ArrayType  *arr;
	Oid			elemtype;		/* as the array says: maybe a domain */
	Oid			basetype;		/* domains looked through */
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Oid			sortop;			/* the type's "<" */
	Oid			collation;
	const KeyCodec *codec;		/* an exact codec whose keys sort the
								 * elements, read from the data area; NULL:
								 * datum_sort.c sorts them as Datums */
	uint32		nitems;			/* elements, NULLs included */
	uint32		nvalues;		/* non-null elements */
	bool		descending;
	bool		nulls_first;
	Datum	   *values;			/* without a codec: the non-null elements,
								 * once sort_input_sort deconstructed them */
} SortInput;

PG_FUNCTION_INFO_V1(gpusort_array);
PG_FUNCTION_INFO_V1(gpusort_array_permutation);

/*
 * Are the arguments that make the result NULL there: a NULL array or a NULL
 * descending?  (The functions are not strict, so that a NULL nulls_first
 * asks for the default.)
 */
static bool
sort_input_null(FunctionCallInfo fcinfo)
{
	return PG_ARGISNULL(0) || (PG_NARGS() >= 2 && PG_ARGISNULL(1));
}

/*
 * Reads the arguments arr [, descending [, nulls_first]] (not NULL, but for
 * nulls_first) into *in.  Returns false for an array without elements,
 * which needs no sorting.
 */
static bool
sort_input_init(FunctionCallInfo fcinfo, const char *funcname, SortInput *in)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	TypeCacheEntry *typentry;
	const KeyCodec *codec;
	int			nitems;

	memset(in, 0, sizeof(SortInput));
	in->arr = arr;
	in->descending = (PG_NARGS() >= 2) ? PG_GETARG_BOOL(1) : false;
	in->nulls_first = (PG_NARGS() >= 3 && !PG_ARGISNULL(2)) ?
		PG_GETARG_BOOL(2) : in->descending;

	/* the element type's order, as array_sort finds it */
	in->elemtype = ARR_ELEMTYPE(arr);
	in->basetype = getBaseType(in->elemtype);
	typentry = lookup_type_cache(in->basetype, TYPECACHE_LT_OPR);
	if (!OidIsValid(typentry->lt_opr))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("could not identify an ordering operator for type %s",
						format_type_be(in->elemtype))));
	in->sortop = typentry->lt_opr;
	in->typlen = typentry->typlen;
	in->typbyval = typentry->typbyval;
	in->typalign = typentry->typalign;
	in->collation = PG_GET_COLLATION();
	if (!OidIsValid(in->collation))
		in->collation = get_typcollation(in->elemtype);

	codec = key_codec_for_type(in->basetype);
	if (codec != NULL && codec->exact && codec->width == in->typlen)
		in->codec = codec;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support multidimensional arrays",
						funcname),
				 errdetail("The array has %d dimensions.", ARR_NDIM(arr)),
				 errhint("To sort all the elements, pass ARRAY(SELECT unnest(arr)).")));

	nitems = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	in->nitems = (uint32) nitems;
	in->nvalues = (uint32) nitems;

	if (ARR_HASNULL(arr) && nitems > 0)
	{
		const bits8 *bitmap = ARR_NULLBITMAP(arr);
		int			full = nitems / 8;
		int			rest = nitems % 8;
		uint64		present;

		/* a set bit is a non-null element; bits past the end are ignored */
		present = pg_popcount((const char *) bitmap, full);
		if (rest > 0)
			present += pg_popcount32(bitmap[full] & ((1 << rest) - 1));
		in->nvalues = (uint32) present;
	}

	return nitems > 0;
}

/*
 * The keys of the n non-null elements of a type whose layout is not on the
 * value path (bool, oid, uuid), a column per key word.
 */
static void
encode_words(const SortInput *in, const char *data, uint32 n, uint64 **keys)
{
	KeyPart		part = {.codec = in->codec, .descending = in->descending};

	for (uint32 start = 0; start < n; start += ARRAY_SORT_CHUNK)
	{
		uint32		end = Min(n, start + ARRAY_SORT_CHUNK);

		CHECK_FOR_INTERRUPTS();
		for (uint32 i = start; i < end; i++)
		{
			Datum		value = fetch_att(data + (Size) i * in->typlen,
										  in->typbyval, in->typlen);

			for (int w = 0; w < part.codec->words; w++)
				keys[w][i] = key_part_encode(&part, value, w);
		}
	}
}

/*
 * Sorts the non-null elements by an exact codec's keys: returns, palloc'd,
 * their ordinals among the non-null elements (0-based), in sorted order.
 */
static uint32 *
sort_input_keys(const SortInput *in)
{
	const KeyCodec *codec = in->codec;
	const char *data = ARR_DATA_PTR(in->arr);
	uint32		n = in->nvalues;
	int			nkeys = codec->words;
	uint64	   *keys[MAX_KEY_WORDS];
	uint64		min;
	uint64		max;
	uint32	   *perm;

	perm = palloc_extended(Max((Size) n * sizeof(uint32), 1), MCXT_ALLOC_HUGE);
	if (n < 2)
	{
		if (n == 1)
			perm[0] = 0;
		return perm;
	}

	for (int w = 0; w < nkeys; w++)
		keys[w] = palloc_extended((Size) n * sizeof(uint64), MCXT_ALLOC_HUGE);
	if (codec->value_path)
		key_encode_values(codec->layout, in->descending, data, n, keys[0],
						  &min, &max);
	else
		encode_words(in, data, n, keys);

	if (n <= ARRAY_SORT_SMALL)
	{
		/* a job would cost more than the sort; each pass is stable */
		for (uint32 i = 0; i < n; i++)
			perm[i] = i;
		for (int w = nkeys - 1; w >= 0; w--)
			cpu_insertion_sort(keys[w], perm, n);
	}
	else
		array_sort_permutation((const uint64 *const *) keys, nkeys, n, perm);

	for (int w = 0; w < nkeys; w++)
		pfree(keys[w]);
	return perm;
}

/*
 * Sorts the non-null elements without a codec: deconstructs them into
 * in->values and has datum_sort.c sort them.  Returns what sort_input_keys
 * returns.
 */
static uint32 *
sort_input_datums(SortInput *in)
{
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	uint32		n = 0;

	deconstruct_array(in->arr, in->elemtype, in->typlen, in->typbyval,
					  in->typalign, &elems, &nulls, &nelems);
	for (int i = 0; i < nelems; i++)
	{
		if (!nulls[i])
			elems[n++] = elems[i];
	}
	pfree(nulls);
	Assert(n == in->nvalues);
	in->values = elems;
	return datum_sort(elems, n, in->basetype, in->sortop, in->collation,
					  in->descending);
}

/* Sorts the non-null elements, as sort_input_keys says. */
static uint32 *
sort_input_sort(SortInput *in)
{
	return in->codec ? sort_input_keys(in) : sort_input_datums(in);
}

/* Sets bits [from, to) of a zeroed bitmap. */
static void
bitmap_set_range(bits8 *bitmap, uint32 from, uint32 to)
{
	while (from < to && from % 8 != 0)
	{
		bitmap[from / 8] |= 1 << (from % 8);
		from++;
	}
	if (to - from >= 8)
	{
		memset(bitmap + from / 8, 0xFF, (to - from) / 8);
		from += (to - from) / 8 * 8;
	}
	while (from < to)
	{
		bitmap[from / 8] |= 1 << (from % 8);
		from++;
	}
}

/* An element of 16 bytes (uuid), copied as a whole. */
typedef struct Bytes16
{
	char		bytes[16];
} Bytes16;

/* Copies the elements src[perm[i]] to dst[i], i < n. */
#define GATHER(ctype) \
	do { \
		const ctype *s = (const ctype *) src; \
		ctype	   *d = (ctype *) dst; \
		\
		for (uint32 start = 0; start < n; start += ARRAY_SORT_CHUNK) \
		{ \
			uint32		end = Min(n, start + ARRAY_SORT_CHUNK); \
			\
			CHECK_FOR_INTERRUPTS(); \
			for (uint32 i = start; i < end; i++) \
				d[i] = s[perm[i]]; \
		} \
	} while (0)

/* Sorts the non-null elements of a codec's type into the data area dst. */
static void
sort_into(SortInput *in, char *dst)
{
	const char *src = ARR_DATA_PTR(in->arr);
	uint32		n = in->nvalues;

	if (n > ARRAY_SORT_SMALL && in->codec->value_path &&
		key_values_exact(in->codec->layout, src, n))
	{
		/* the values themselves are sorted: no permutation to apply */
		SortValues	values;
		SortJobReport report = {0};

		values.type = in->codec->layout;
		values.descending = in->descending;
		values.n = n;
		values.in = src;
		values.out = dst;
		sort_values_run(&values, gpusort_device, &report);
		array_sort_report(n, &report);
	}
	else
	{
		uint32	   *perm = sort_input_keys(in);

		switch (in->typlen)
		{
			case 1:
				GATHER(uint8);
				break;
			case 2:
				GATHER(int16);
				break;
			case 4:
				GATHER(int32);
				break;
			case 8:
				GATHER(int64);
				break;
			case 16:
				GATHER(Bytes16);
				break;
			default:
				elog(ERROR, "unexpected element width %d", in->typlen);
		}
		pfree(perm);
	}
}

/*
 * The array of a codec's type sorted, written directly: the header, the
 * NULLs' bitmap, and the non-null elements in sorted order.
 */
static ArrayType *
sorted_array_direct(SortInput *in)
{
	uint32		n = in->nvalues;
	uint32		nnulls = in->nitems - in->nvalues;
	int			width = in->typlen;
	int			dataoffset;
	Size		nbytes;
	ArrayType  *result;
	char	   *dst;

	dataoffset = (nnulls > 0) ? ARR_OVERHEAD_WITHNULLS(1, in->nitems) : 0;
	nbytes = (nnulls > 0 ? dataoffset : ARR_OVERHEAD_NONULLS(1)) +
		(Size) n * width;
	result = palloc_extended(nbytes, MCXT_ALLOC_HUGE);
	memset(result, 0, nbytes - (Size) n * width);	/* header, bitmap */
	SET_VARSIZE(result, nbytes);
	result->ndim = 1;
	result->dataoffset = dataoffset;
	result->elemtype = in->elemtype;
	ARR_DIMS(result)[0] = (int) in->nitems;
	ARR_LBOUND(result)[0] = ARR_LBOUND(in->arr)[0];

	if (nnulls > 0)
	{
		bits8	   *bitmap = ARR_NULLBITMAP(result);

		if (in->nulls_first)
			bitmap_set_range(bitmap, nnulls, in->nitems);
		else
			bitmap_set_range(bitmap, 0, n);
	}

	dst = ARR_DATA_PTR(result);
	prefault_range(dst, (Size) n * width);
	sort_into(in, dst);
	return result;
}

/* The array of any other type sorted, built from its sorted elements. */
static ArrayType *
sorted_array_datums(SortInput *in)
{
	uint32		n = in->nvalues;
	uint32		nnulls = in->nitems - in->nvalues;
	uint32	   *perm = sort_input_datums(in);
	Datum	   *elems;
	bool	   *nulls = NULL;
	Datum	   *out;
	int			dims[1];
	int			lbs[1];

	elems = palloc_extended((Size) in->nitems * sizeof(Datum), MCXT_ALLOC_HUGE);
	out = elems;
	if (nnulls > 0)
	{
		/* the NULLs' block first or last, its Datums zeroed */
		nulls = palloc_extended(in->nitems, MCXT_ALLOC_HUGE);
		if (in->nulls_first)
		{
			memset(nulls, true, nnulls);
			memset(nulls + nnulls, false, n);
			memset(elems, 0, (Size) nnulls * sizeof(Datum));
			out += nnulls;
		}
		else
		{
			memset(nulls, false, n);
			memset(nulls + n, true, nnulls);
			memset(elems + n, 0, (Size) nnulls * sizeof(Datum));
		}
	}
	for (uint32 start = 0; start < n; start += ARRAY_SORT_CHUNK)
	{
		uint32		end = Min(n, start + ARRAY_SORT_CHUNK);

		CHECK_FOR_INTERRUPTS();
		for (uint32 i = start; i < end; i++)
			out[i] = in->values[perm[i]];
	}
	pfree(perm);

	dims[0] = (int) in->nitems;
	lbs[0] = ARR_LBOUND(in->arr)[0];
	return construct_md_array(elems, nulls, 1, dims, lbs, in->elemtype,
							  in->typlen, in->typbyval, in->typalign);
}

/*
 * gpusort(arr [, descending [, nulls_first]]): the array sorted, with the
 * type, dimension and lower bound of arr.
 */
Datum
gpusort_array(PG_FUNCTION_ARGS)
{
	SortInput	in;

	if (sort_input_null(fcinfo))
		PG_RETURN_NULL();
	if (!sort_input_init(fcinfo, "gpusort", &in) || in.nitems == 1)
		PG_RETURN_ARRAYTYPE_P(in.arr);
	if (in.codec)
		PG_RETURN_ARRAYTYPE_P(sorted_array_direct(&in));
	PG_RETURN_ARRAYTYPE_P(sorted_array_datums(&in));
}

/*
 * gpusort_permutation(arr [, descending [, nulls_first]]): the positions of
 * the elements of arr in sorted order, as an int4[] with lower bound 1.  A
 * position is the element's 1-based offset from the start of arr, whatever
 * arr's lower bound, so that arr[lower + p - 1] is the element at p.  Equal
 * elements, and NULLs, appear in their input order.
 */
Datum
gpusort_array_permutation(PG_FUNCTION_ARGS)
{
	SortInput	in;
	uint32	   *perm;
	uint32		n;
	uint32		nnulls;
	Size		nbytes;
	ArrayType  *result;
	int32	   *out;

	if (sort_input_null(fcinfo))
		PG_RETURN_NULL();
	if (!sort_input_init(fcinfo, "gpusort_permutation", &in))
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(INT4OID));

	perm = sort_input_sort(&in);
	n = in.nvalues;
	nnulls = in.nitems - in.nvalues;

	nbytes = ARR_OVERHEAD_NONULLS(1) + (Size) in.nitems * sizeof(int32);
	result = palloc_extended(nbytes, MCXT_ALLOC_HUGE);
	memset(result, 0, ARR_OVERHEAD_NONULLS(1));
	SET_VARSIZE(result, nbytes);
	result->ndim = 1;
	result->dataoffset = 0;
	result->elemtype = INT4OID;
	ARR_DIMS(result)[0] = (int) in.nitems;
	ARR_LBOUND(result)[0] = 1;
	out = (int32 *) ARR_DATA_PTR(result);

	if (nnulls == 0)
	{
		for (uint32 start = 0; start < n; start += ARRAY_SORT_CHUNK)
		{
			uint32		end = Min(n, start + ARRAY_SORT_CHUNK);

			CHECK_FOR_INTERRUPTS();
			for (uint32 i = start; i < end; i++)
				out[i] = (int32) perm[i] + 1;
		}
	}
	else
	{
		const bits8 *bitmap = ARR_NULLBITMAP(in.arr);
		int32	   *nullpos = out + (in.nulls_first ? 0 : n);
		int32	   *valpos = out + (in.nulls_first ? nnulls : 0);
		uint32		nv = 0;
		uint32		nn = 0;

		/*
		 * Write the positions of the NULLs in their block, and those of the
		 * non-null elements, in element order, in theirs: valpos maps a
		 * non-null ordinal to its position.  Then map the sorted ordinals
		 * through it (in perm, which valpos must not overlap) and copy them
		 * into place.
		 */
		for (uint32 start = 0; start < in.nitems; start += ARRAY_SORT_CHUNK)
		{
			uint32		end = Min(in.nitems, start + ARRAY_SORT_CHUNK);

			CHECK_FOR_INTERRUPTS();
			for (uint32 i = start; i < end; i++)
			{
				if (bitmap[i / 8] & (1 << (i % 8)))
					valpos[nv++] = (int32) i + 1;
				else
					nullpos[nn++] = (int32) i + 1;
			}
		}
		Assert(nv == n && nn == nnulls);

		for (uint32 start = 0; start < n; start += ARRAY_SORT_CHUNK)
		{
			uint32		end = Min(n, start + ARRAY_SORT_CHUNK);

			CHECK_FOR_INTERRUPTS();
			for (uint32 i = start; i < end; i++)
				perm[i] = (uint32) valpos[perm[i]];
		}
		memcpy(valpos, perm, (Size) n * sizeof(int32));
	}

	pfree(perm);
	PG_RETURN_ARRAYTYPE_P(result);
}
