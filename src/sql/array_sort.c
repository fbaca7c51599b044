/*-------------------------------------------------------------------------
 *
 * array_sort.c
 *	  The SQL functions that sort arrays:
 *
 *		gpusort(arr [, descending [, nulls_first]])
 *		gpusort_permutation(arr [, descending [, nulls_first]])
 *
 *	  for one-dimensional arrays of int2, int4, int8, float4, float8, date,
 *	  timestamp and timestamptz.  gpusort returns the array sorted, with the
 *	  dimensions and lower bound of the input; gpusort_permutation returns
 *	  the 1-based positions, counted from the first element whatever the
 *	  lower bound, that sort it (an argsort), as int4[].
 *
 * The defaults are those of PostgreSQL 18's array_sort: ascending, and NULLs
 * first exactly when descending.  Elements order as the type's default btree
 * operator class orders them (floats: -0 equals 0, NaN after every number),
 * and the sort is stable: equal elements keep their input order, in either
 * direction.  Multidimensional arrays are rejected.
 *
 * The elements are turned into order-preserving keys (key_codec.h) and
 * sorted by the engine that gpusort.device selects (engine.h).  Only
 * the non-null elements are sorted: NULLs are all equal, so they form one
 * block placed before or after the others.  When the keys give the elements
 * back bit for bit (integers always; floats unless one is -0 or an unusual
 * NaN), gpusort() sorts the values themselves (SortValues: on the GPU the
 * elements go up as they are and come back sorted); otherwise, and for
 * gpusort_permutation, a permutation is sorted (a SortJob) and applied.
 * Arrays of a few elements are sorted here, by insertion.
 *
 * The element types are fixed-width and aligned to their width, so the data
 * area of an array is a plain C array of its non-null elements.  It is read
 * directly, not through deconstruct_array (which would cost a Datum and a
 * bool per element), and the result is written directly in sorted order.
 * Besides the input and the result, sorting n elements needs at most a key
 * and a permutation entry per element (12 bytes) and the engine's scratch
 * memory, so arrays near the 1 GB limit can be sorted.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "engine/engine.h"
#include "keys/key_codec.h"
#include "util/prefault.h"

/*
 * Arrays with at most this many non-null elements are sorted here, by
 * insertion, without a sort job: below it a job costs more than the sort.
 */
#define ARRAY_SORT_SMALL	32

/* Elements processed between interrupt checks. */
#define ARRAY_SORT_CHUNK	(1 << 20)

/* A one-dimensional input array, checked and measured. */
typedef struct SortInput
{
	ArrayType  *arr;
	SortValueType kind;
	uint32		nitems;			/* elements, NULLs included */
	uint32		nvalues;		/* non-null elements */
	bool		descending;
	bool		nulls_first;
} SortInput;

PG_FUNCTION_INFO_V1(gpusort_array);
PG_FUNCTION_INFO_V1(gpusort_array_permutation);

/*
 * Reads the arguments arr [, descending [, nulls_first]] into *in.  Returns
 * false for an array without elements, which needs no sorting.
 */
static bool
sort_input_init(FunctionCallInfo fcinfo, const char *funcname, SortInput *in)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	const KeyCodec *codec;
	int			nitems;

	in->arr = arr;
	in->descending = (PG_NARGS() >= 2) ? PG_GETARG_BOOL(1) : false;
	in->nulls_first = (PG_NARGS() >= 3) ? PG_GETARG_BOOL(2) : in->descending;

	codec = key_codec_for_type(getBaseType(ARR_ELEMTYPE(arr)));
	if (codec == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s cannot sort arrays of type %s",
						funcname, format_type_be(ARR_ELEMTYPE(arr)))));
	in->kind = codec->layout;

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

/* Says at DEBUG1 which engine sorted n elements, and why not the GPU. */
static void
report_engine(uint32 n, SortJobReport *report)
{
	elog(DEBUG1, "gpusort: sorted %u array elements on the %s engine%s%s",
		 n, sort_engine_name(report->engine),
		 report->fallback_reason ? ": " : "",
		 report->fallback_reason ? report->fallback_reason : "");
}

/*
 * Sorts the non-null elements: returns, palloc'd, their ordinals among the
 * non-null elements (0-based), in sorted order.
 */
static uint32 *
sort_input_values(const SortInput *in)
{
	const char *data = ARR_DATA_PTR(in->arr);
	uint32		n = in->nvalues;
	uint64	   *keys;
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

	keys = palloc_extended((Size) n * sizeof(uint64), MCXT_ALLOC_HUGE);
	key_encode_values(in->kind, in->descending, data, n, keys, &min, &max);

	if (n <= ARRAY_SORT_SMALL)
	{
		/* a job would cost more than the sort */
		for (uint32 i = 0; i < n; i++)
			perm[i] = i;
		cpu_insertion_sort(keys, perm, n);
	}
	else
	{
		const uint64 *columns[1];
		SortJob		job;
		SortJobReport report;

		columns[0] = keys;
		job.nrows = n;
		job.nkeys = 1;
		job.keys = columns;
		job.perm = perm;
		job.payload = NULL;
		job.payload_sorted = false;
		job.upload = NULL;
		sort_job_run(&job, &report);
		report_engine(n, &report);
	}

	pfree(keys);
	return perm;
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

/*
 * gpusort(arr [, descending [, nulls_first]]): the array sorted, with the
 * type, dimension and lower bound of arr.
 */
Datum
gpusort_array(PG_FUNCTION_ARGS)
{
	SortInput	in;
	uint32		n;
	uint32		nnulls;
	int			width;
	int			dataoffset;
	Size		nbytes;
	ArrayType  *result;
	const char *src;
	char	   *dst;

	if (!sort_input_init(fcinfo, "gpusort", &in) || in.nitems == 1)
		PG_RETURN_ARRAYTYPE_P(in.arr);
	n = in.nvalues;
	nnulls = in.nitems - in.nvalues;
	width = key_value_width(in.kind);

	dataoffset = (nnulls > 0) ? ARR_OVERHEAD_WITHNULLS(1, in.nitems) : 0;
	nbytes = (nnulls > 0 ? dataoffset : ARR_OVERHEAD_NONULLS(1)) +
		(Size) n * width;
	result = palloc_extended(nbytes, MCXT_ALLOC_HUGE);
	memset(result, 0, nbytes - (Size) n * width);	/* header, bitmap */
	SET_VARSIZE(result, nbytes);
	result->ndim = 1;
	result->dataoffset = dataoffset;
	result->elemtype = ARR_ELEMTYPE(in.arr);
	ARR_DIMS(result)[0] = (int) in.nitems;
	ARR_LBOUND(result)[0] = ARR_LBOUND(in.arr)[0];

	if (nnulls > 0)
	{
		bits8	   *bitmap = ARR_NULLBITMAP(result);

		if (in.nulls_first)
			bitmap_set_range(bitmap, nnulls, in.nitems);
		else
			bitmap_set_range(bitmap, 0, n);
	}

	src = ARR_DATA_PTR(in.arr);
	dst = ARR_DATA_PTR(result);
	prefault_range(dst, (Size) n * width);

	if (n > ARRAY_SORT_SMALL && key_values_exact(in.kind, src, n))
	{
		/* the values themselves are sorted: no permutation to apply */
		SortValues	values;
		SortJobReport report;

		values.type = in.kind;
		values.descending = in.descending;
		values.n = n;
		values.in = src;
		values.out = dst;
		sort_values_run(&values, &report);
		report_engine(n, &report);
	}
	else
	{
		uint32	   *perm = sort_input_values(&in);

		switch (width)
		{
			case 2:
				GATHER(int16);
				break;
			case 4:
				GATHER(int32);
				break;
			case 8:
				GATHER(int64);
				break;
		}
		pfree(perm);
	}

	PG_RETURN_ARRAYTYPE_P(result);
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

	if (!sort_input_init(fcinfo, "gpusort_permutation", &in))
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(INT4OID));

	perm = sort_input_values(&in);
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
