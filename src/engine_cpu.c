/*-------------------------------------------------------------------------
 *
 * engine_cpu.c
 *	  The CPU sort engine: LSD radix sort of (key, row) pairs.
 *
 * Key columns are sorted least significant first, each by a stable radix
 * sort, which makes the result lexicographic over the columns.  For each
 * column only the bits in which its keys differ are sorted: the minimum is
 * subtracted, and digits that all keys share are skipped (radix_template.h),
 * so narrow-range keys (serial ids, dates, small codes) need few passes.
 *
 * When the significant key bits and the bits of a row position fit in 64,
 * key and position are packed into one word and sorted together (8 bytes a
 * pair); otherwise pairs of a 64-bit key and a position are sorted (16 bytes).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"

#include "sort_engine.h"

typedef struct KeyRow
{
	uint64		key;
	uint64		row;
} KeyRow;

#define RT_NAME radix_sort_words
#define RT_ELEMENT uint64
#define RT_KEY(e) (e)
#include "radix_template.h"

#define RT_NAME radix_sort_pairs
#define RT_ELEMENT KeyRow
#define RT_KEY(e) ((e).key)
#include "radix_template.h"

Size
cpu_sort_scratch_bytes(uint32 nrows)
{
	/* two KeyRow arrays and a second permutation */
	return (Size) nrows * (2 * sizeof(KeyRow) + sizeof(uint32));
}

static void *
alloc_huge(Size size)
{
	return MemoryContextAllocHuge(CurrentMemoryContext, Max(size, 1));
}

/*
 * Sorts the rows by one key column, stably, starting from the order in
 * perm (NULL: row order) and writing the new order to out.
 */
static void
sort_column(const uint64 *keys, const uint32 *perm, uint32 *out, uint32 n,
			void *buf1, void *buf2)
{
	uint64		min = PG_UINT64_MAX;
	uint64		max = 0;
	int			keybits;
	int			posbits = pg_leftmost_one_pos32(n - 1) + 1;

	/* The range does not depend on the order: scan keys as they lie. */
	for (uint32 i = 0; i < n; i++)
	{
		min = Min(min, keys[i]);
		max = Max(max, keys[i]);
	}
	if (min == max)
	{
		/* all keys equal: the order stays */
		for (uint32 i = 0; i < n; i++)
			out[i] = perm ? perm[i] : i;
		return;
	}
	keybits = pg_leftmost_one_pos64(max - min) + 1;

	if (keybits + posbits <= 64)
	{
		uint64	   *words = buf1;
		uint64	   *sorted;
		uint64		posmask = (UINT64CONST(1) << posbits) - 1;

		for (uint32 i = 0; i < n; i++)
			words[i] = ((keys[perm ? perm[i] : i] - min) << posbits) | i;
		sorted = radix_sort_words(words, buf2, n, posbits, keybits);
		for (uint32 i = 0; i < n; i++)
		{
			uint32		pos = (uint32) (sorted[i] & posmask);

			out[i] = perm ? perm[pos] : pos;
		}
	}
	else
	{
		KeyRow	   *pairs = buf1;
		KeyRow	   *sorted;

		for (uint32 i = 0; i < n; i++)
		{
			pairs[i].key = keys[perm ? perm[i] : i] - min;
			pairs[i].row = perm ? perm[i] : i;
		}
		sorted = radix_sort_pairs(pairs, buf2, n, 0, keybits);
		for (uint32 i = 0; i < n; i++)
			out[i] = (uint32) sorted[i].row;
	}
}

void
cpu_sort_job(SortJob *job)
{
	uint32		n = job->nrows;
	void	   *buf1;
	void	   *buf2;
	uint32	   *spare;
	uint32	   *cur = NULL;		/* order so far; NULL: row order */

	if (n < 2 || job->nkeys == 0)
	{
		for (uint32 i = 0; i < n; i++)
			job->perm[i] = i;
		return;
	}

	buf1 = alloc_huge((Size) n * sizeof(KeyRow));
	buf2 = alloc_huge((Size) n * sizeof(KeyRow));
	spare = alloc_huge((Size) n * sizeof(uint32));

	/* Least significant column first; each pass is stable. */
	for (int k = job->nkeys - 1; k >= 0; k--)
	{
		uint32	   *out = (cur == job->perm) ? spare : job->perm;

		sort_column(job->keys[k], cur, out, n, buf1, buf2);
		cur = out;
	}
	if (cur != job->perm)
		memcpy(job->perm, cur, (Size) n * sizeof(uint32));

	pfree(buf1);
	pfree(buf2);
	pfree(spare);
}
