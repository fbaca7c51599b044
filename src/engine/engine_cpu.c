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
 * Key and position are packed into one 64-bit word and sorted together, 8
 * bytes a pair.  When the significant key bits and the position bits do not
 * fit in 64, the low key bits are left out of the word; the runs of rows that
 * tie on the bits sorted are then sorted again by their full keys, whose range
 * is now narrow enough to fit.
 *
 * Plain values (SortValues) are sorted as their keys alone, which are then
 * turned back into values.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"

#include "engine/engine.h"
#include "engine/cost.h"
#include "engine/sort_job.h"
#include "keys/key_codec.h"
#include "util/prefault.h"

#define RT_NAME radix_sort_words
#define RT_ELEMENT uint64
#define RT_KEY(e) (e)
#include "engine/radix_template.h"

/* Runs shorter than this are sorted by insertion. */
#define SHORT_RUN	16

typedef struct Scratch
{
	uint64	   *words;			/* packed (key, position) words */
	uint64	   *spare;			/* the radix sort's second buffer */
	uint32	   *rows;			/* rows in their new order */
} Scratch;

Size
cpu_sort_scratch_bytes(uint32 nrows)
{
	return (Size) nrows * (2 * sizeof(uint64) + sizeof(uint32));
}

/* A run of rows that tie on the key bits sorted so far. */
typedef struct Run
{
	uint32		start;
	uint32		length;
} Run;

void
cpu_insertion_sort(const uint64 *keys, uint32 *rows, uint32 n)
{
	for (uint32 i = 1; i < n; i++)
	{
		uint32		row = rows[i];
		uint64		key = keys[row];
		uint32		j = i;

		for (; j > 0 && keys[rows[j - 1]] > key; j--)
			rows[j] = rows[j - 1];
		rows[j] = row;
	}
}

/*
 * Sorts rows[0..n) stably by keys[row], where keys is indexed by row number.
 */
static void
sort_rows_by_key(const uint64 *keys, uint32 *rows, uint32 n, Scratch *scratch)
{
	uint64		min = PG_UINT64_MAX;
	uint64		max = 0;
	int			keybits;
	int			posbits;
	int			shift;
	uint64		posmask;
	uint64	   *sorted;
	Run		   *runs = NULL;
	uint32		nruns = 0;
	uint32		maxruns = 0;

	if (n < SHORT_RUN)
	{
		cpu_insertion_sort(keys, rows, n);
		return;
	}
	for (uint32 i = 0; i < n; i++)
	{
		uint64		key = keys[rows[i]];

		min = Min(min, key);
		max = Max(max, key);
	}
	if (min == max)
		return;					/* all keys equal: the order stays */

	keybits = pg_leftmost_one_pos64(max - min) + 1;
	posbits = pg_leftmost_one_pos32(n - 1) + 1;
	shift = Max(0, keybits + posbits - 64);
	posmask = (UINT64CONST(1) << posbits) - 1;

	for (uint32 i = 0; i < n; i++)
		scratch->words[i] = (((keys[rows[i]] - min) >> shift) << posbits) | i;
	sorted = radix_sort_words(scratch->words, scratch->spare, n, posbits, keybits - shift);

	for (uint32 i = 0; i < n; i++)
		scratch->rows[i] = rows[sorted[i] & posmask];

	/* Note the runs that tie on the key bits sorted, if any were left out. */
	for (uint32 start = 0, i = 1; shift > 0 && i <= n; i++)
	{
		if (i < n && (sorted[i] >> posbits) == (sorted[start] >> posbits))
			continue;
		if (i - start > 1)
		{
			if (nruns == maxruns)
			{
				maxruns = Max(64, maxruns * 2);
				runs = runs ? repalloc_huge(runs, sizeof(Run) * maxruns) :
					palloc(sizeof(Run) * maxruns);
			}
			runs[nruns].start = start;
			runs[nruns].length = i - start;
			nruns++;
		}
		start = i;
	}
	memcpy(rows, scratch->rows, sizeof(uint32) * n);

	/* Within a run the keys span fewer bits: sort it by the full keys. */
	for (uint32 r = 0; r < nruns; r++)
		sort_rows_by_key(keys, rows + runs[r].start, runs[r].length, scratch);
	if (runs)
		pfree(runs);
}

static bool
cpu_sort_job(SortJob *job, char **why)
{
	uint32		n = job->nrows;
	Scratch		scratch;

	for (uint32 i = 0; i < n; i++)
		job->perm[i] = i;
	if (n < 2 || job->nkeys == 0)
		return true;

	scratch.words = prefault_alloc(CurrentMemoryContext, sizeof(uint64) * n);
	scratch.spare = prefault_alloc(CurrentMemoryContext, sizeof(uint64) * n);
	scratch.rows = prefault_alloc(CurrentMemoryContext, sizeof(uint32) * n);

	/* Least significant column first; each sort is stable. */
	for (int k = job->nkeys - 1; k >= 0; k--)
		sort_rows_by_key(job->keys[k], job->perm, n, &scratch);

	prefault_cancel();
	pfree(scratch.words);
	pfree(scratch.spare);
	pfree(scratch.rows);
	return true;
}

static bool
cpu_sort_values(SortValues *job, char **why)
{
	uint32		n = job->n;
	uint64	   *keys;
	uint64	   *spare;
	uint64	   *sorted;
	uint64		min;
	uint64		max;

	if (n < 2)
	{
		memcpy(job->out, job->in, (Size) n * key_value_width(job->type));
		return true;
	}
	keys = prefault_alloc(CurrentMemoryContext, sizeof(uint64) * n);
	spare = prefault_alloc(CurrentMemoryContext, sizeof(uint64) * n);

	key_encode_values(job->type, job->descending, job->in, n, keys, &min, &max);

	for (uint32 i = 0; i < n; i++)
		keys[i] -= min;
	sorted = (min == max) ? keys :
		radix_sort_words(keys, spare, n, 0, pg_leftmost_one_pos64(max - min) + 1);

	key_decode_values(job->type, job->descending, sorted, min, n, job->out);

	prefault_cancel();
	pfree(keys);
	pfree(spare);
	return true;
}

/* The cost model's reference (cost.c): it takes every job. */
static double
cpu_sort_estimate_ms(uint32 nrows, int nkeys, const char **why)
{
	return cpu_estimate_ms(nrows, nkeys);
}

const SortEngine cpu_sort_engine = {
	.name = "cpu",
	.title = "CPU",
	.sort_job = cpu_sort_job,
	.sort_values = cpu_sort_values,
	.estimate_ms = cpu_sort_estimate_ms,
	.stager = &host_stager,		/* for tests alone: sort_engine_holder */
};
