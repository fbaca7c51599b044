/*-------------------------------------------------------------------------
 *
 * datum_sort.c
 *	  Ordering the elements of an array that exact keys do not order: by
 *	  prefix keys on the engine and the type's comparator for their ties, or
 *	  by the comparator alone.
 *
 * The array functions sort the elements of integer, float, date and time,
 * bool, oid, money and uuid arrays by exact keys (array_sort.c).  Elements
 * of other types come here as Datums (the non-null elements of the array,
 * deconstructed):
 *
 *	- text, varchar, bpchar, numeric and bytea, where PostgreSQL gives
 *	  abbreviated keys for them (text and varchar under the C collation or
 *	  ICU; bytea from PostgreSQL 18 on), are turned into their prefix keys
 *	  (key_codec.h), which the engine sorts as a permutation; each run of
 *	  equal prefix keys is then ordered by the type's full comparator.  As in
 *	  tuplesort, prefix keys that do not tell the elements apart (the type's
 *	  abbrev_abort) are given up, and the comparator sorts them all;
 *	- any other type with a default btree operator class (interval, inet,
 *	  composites, text under a libc collation other than C, ...) is sorted
 *	  by its comparator alone.
 *
 * Comparisons are made on the Datums with the type's SortSupport, as
 * tuplesort makes them, so the order is PostgreSQL's.  Elements that compare
 * equal are ordered by their index, which makes the sort stable; descending
 * order reverses the comparator, not the index order.  Every comparison
 * checks for interrupts.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/sortsupport.h"

#include "keys/key_codec.h"
#include "sql/datum_sort.h"
#include "settings.h"

/* Elements whose prefix keys are made before abbrev_abort is first asked. */
#define ABBREV_FIRST_CHECK	10

/*
 * An element being sorted by the comparator: its value beside its index, so
 * that a comparison reads the value without a second indirection.
 */
typedef struct DatumEntry
{
	Datum		value;
	uint32		index;
} DatumEntry;

/* What the comparator of qsort_arg needs. */
typedef struct DatumCompare
{
	SortSupport ssup;
	bool		full;			/* ssup is abbreviated: use its full
								 * comparator */
} DatumCompare;

/* Compares elements by value, then by index. */
static int
datum_compare(const void *a, const void *b, void *arg)
{
	const DatumEntry *ea = (const DatumEntry *) a;
	const DatumEntry *eb = (const DatumEntry *) b;
	const DatumCompare *cmp = (const DatumCompare *) arg;
	int			result;

	CHECK_FOR_INTERRUPTS();
	if (cmp->full)
		result = ApplySortAbbrevFullComparator(ea->value, false,
											   eb->value, false, cmp->ssup);
	else
		result = ApplySortComparator(ea->value, false,
									 eb->value, false, cmp->ssup);
	if (result != 0)
		return result;
	return (ea->index > eb->index) - (ea->index < eb->index);
}

/*
 * Sorts the indexes idx[0..n) by the elements they point at, through
 * entries (room for n).
 */
static void
sort_by_comparator(const Datum *values, uint32 *idx, uint32 n,
				   SortSupport ssup, bool full, DatumEntry *entries)
{
	DatumCompare cmp;

	if (n < 2)
		return;
	for (uint32 i = 0; i < n; i++)
	{
		entries[i].value = values[idx[i]];
		entries[i].index = idx[i];
	}
	cmp.ssup = ssup;
	cmp.full = full;
	qsort_arg(entries, n, sizeof(DatumEntry), datum_compare, &cmp);
	for (uint32 i = 0; i < n; i++)
		idx[i] = entries[i].index;
}

/*
 * Sorts by prefix keys, then the comparator within each run of equal keys,
 * into perm (n > ARRAY_SORT_SMALL).  ssup is prepared for the keys.  False,
 * with perm unset, when the type says that its prefix keys do not pay.
 */
static bool
sort_by_prefix(const KeyCodec *codec, SortSupport ssup, const Datum *values,
			   uint32 n, bool descending, uint32 *perm)
{
	uint64	   *keys;
	uint32		next_check = ABBREV_FIRST_CHECK;
	DatumEntry *entries = NULL;
	uint32		capacity = 0;
	const uint64 *columns[1];
	KeyPart		part = {.codec = codec, .descending = descending, .prefix = ssup};

	keys = palloc_extended((Size) n * sizeof(uint64), MCXT_ALLOC_HUGE);
	for (uint32 start = 0; start < n; start += ARRAY_SORT_CHUNK)
	{
		uint32		end = Min(n, start + ARRAY_SORT_CHUNK);

		CHECK_FOR_INTERRUPTS();
		for (uint32 i = start; i < end; i++)
		{
			/* the abbreviated key inline: no indirect call of the codec's */
			keys[i] = key_encode_abbrev(&part, values[i]);
			if (descending)
				keys[i] = sort_key_descending(keys[i], codec->bits);
			if (i + 1 == next_check && ssup->abbrev_abort != NULL)
			{
				if (ssup->abbrev_abort((int) next_check, ssup))
				{
					pfree(keys);
					return false;
				}
				next_check = (next_check > PG_UINT32_MAX / 2) ?
					PG_UINT32_MAX : next_check * 2;
			}
		}
	}

	columns[0] = keys;
	array_sort_permutation(columns, 1, n, perm);

	/* each run of equal prefix keys, by the full comparator */
	ssup->ssup_reverse = descending;
	for (uint32 start = 0; start < n;)
	{
		uint64		key = keys[perm[start]];
		uint32		end = start + 1;

		while (end < n && keys[perm[end]] == key)
			end++;
		if (end - start > 1)
		{
			if (end - start > capacity)
			{
				capacity = Max(end - start, Min(n, 2 * capacity));
				if (entries)
					pfree(entries);
				entries = palloc_extended((Size) capacity * sizeof(DatumEntry),
										  MCXT_ALLOC_HUGE);
			}
			sort_by_comparator(values, perm + start, end - start, ssup, true,
							   entries);
		}
		start = end;
	}

	if (entries)
		pfree(entries);
	pfree(keys);
	return true;
}

uint32 *
datum_sort(const Datum *values, uint32 n, Oid type, Oid sortop,
		   Oid collation, bool descending)
{
	uint32	   *perm;
	SortSupportData ssup;
	const KeyCodec *codec;
	bool		sortop_desc;
	DatumEntry *entries;

	perm = palloc_extended(Max((Size) n * sizeof(uint32), 1), MCXT_ALLOC_HUGE);
	for (uint32 i = 0; i < n; i++)
		perm[i] = i;
	if (n < 2)
		return perm;

	if (n > ARRAY_SORT_SMALL)
	{
		memset(&ssup, 0, sizeof(ssup));
		ssup.ssup_cxt = CurrentMemoryContext;
		codec = key_codec_for_array_order(sortop, type, collation,
										  &sortop_desc, &ssup);
		Assert(codec == NULL || !sortop_desc);
		if (codec != NULL && !codec->exact &&
			sort_by_prefix(codec, &ssup, values, n, descending, perm))
			return perm;
	}

	/* the comparator alone */
	memset(&ssup, 0, sizeof(ssup));
	ssup.ssup_cxt = CurrentMemoryContext;
	ssup.ssup_collation = collation;
	ssup.abbreviate = false;
	PrepareSortSupportFromOrderingOp(sortop, &ssup);
	ssup.ssup_reverse = descending;
	entries = palloc_extended((Size) n * sizeof(DatumEntry), MCXT_ALLOC_HUGE);
	sort_by_comparator(values, perm, n, &ssup, false, entries);
	pfree(entries);
	return perm;
}

void
array_sort_permutation(const uint64 *const *keys, int nkeys, uint32 n,
					   uint32 *perm)
{
	SortJob		job;
	SortJobReport report = {0};

	job.nrows = n;
	job.nkeys = nkeys;
	job.keys = keys;
	job.perm = perm;
	job.payload = NULL;
	job.payload_sorted = false;
	job.upload = NULL;
	sort_job_run(&job, gpusort_device, &report);
	array_sort_report(n, &report);
}

void
array_sort_report(uint32 n, const SortJobReport *report)
{
	elog(DEBUG1, "gpusort: sorted %u array elements on the %s engine (%s)%s%s",
		 n, sort_engine_name(report->engine),
		 report->choice ? report->choice : "",
		 report->fallback_reason ? ", fallback: " : "",
		 report->fallback_reason ? report->fallback_reason : "");
}
