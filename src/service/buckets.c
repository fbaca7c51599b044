/*-------------------------------------------------------------------------
 *
 * buckets.c
 *	  A sort too large for one GPU of the service (buckets.h): its rows are
 *	  split into ranges of the whole key, each range's rows copied into a
 *	  job of its own, in row order, and the jobs queued together, so that
 *	  every GPU process takes some.  Sorted, the buckets follow each other
 *	  in key order.
 *
 * The rows are first split into many narrow ranges of the whole key (every
 * key column, then the row number, so that no two rows are equal), whose
 * bounds (splitters) come from a sample of rows taken at regular places;
 * the ranges are then grouped, in order, into buckets of about equal rows,
 * within a GPU's memory, as many as the GPU processes can share evenly.  A
 * run of rows of equal keys is split between ranges like any other, by row
 * number: the rows of one key in a later bucket all come after those in an
 * earlier one, and a bucket keeps the rows' order, so the sort stays stable
 * (and the tie pass after it finds runs of equal keys across buckets as in
 * one sort).  So skewed keys (90% of rows of one value) are split as evenly
 * as any.  The rows are split in two passes over fixed chunks of rows, on
 * the backend and its helper threads: the first finds each row's range and
 * counts each chunk's rows per range, which gives every chunk its place in
 * each bucket; the second copies the rows there.
 *
 * The bound: no bucket has more than target = min(ceil(n / nbuckets), the
 * rows a GPU's share holds) rows, whatever the keys and their order.  The
 * sample alone bounds nothing (the rows at the sampled places may all be of
 * one key, the others all above it), so a range that the first pass finds
 * with more than target / 4 rows is cut exactly, at its own rows sorted
 * (on the backend; only inputs that defeat the sample pay for it), and the
 * rows' ranges are counted again.  Ranges grouped in order then close a
 * bucket before it passes target, each bucket but the last with more than
 * 3/4 of target: at most 4/3 nbuckets + 1 buckets.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef GPUSORT_WITH_CUDA

#include "lib/stringinfo.h"
#include "utils/memutils.h"

#include "gpu/engine_gpu.h"
#include "service/buckets.h"
#include "service/job_space.h"
#include "util/parallel.h"

/* Rows of a chunk of the split. */
#define SPLIT_CHUNK_ROWS	(1 << 16)

/* Narrow key ranges, grouped into buckets, and keys sampled per range. */
#define RANGES				1024
#define SAMPLES_PER_RANGE	8

/* Of a GPU's device memory, what a bucket is meant to need. */
#define BUCKET_FILL			0.7

typedef struct Split
{
	const SortJob *job;
	uint64		nchunks;
	int			nsplitters;		/* ranges - 1 */
	int			width;			/* words of a splitter: the key columns,
								 * then a row number */
	uint64	   *splitters;		/* range r: rows from splitter r - 1 up to
								 * splitter r, not included, each width
								 * words from splitters + r * width */
	uint16	   *range_of;		/* each row's range */
	uint32	   *counts;			/* [chunk][range]: the chunk's rows */
	int			nbuckets;
	int		   *bucket_of;		/* each range's bucket */
	uint32	   *place;			/* [chunk][bucket]: rows before the chunk's
								 * in the bucket */
	uint64	   *start;			/* each bucket's first row in the order */
	uint64	   *rows;			/* each bucket's rows */
	uint64	  **to;				/* [bucket][column]: where its keys go, then
								 * its payload */
	uint32	   *origin;			/* without a payload: row numbers, in the
								 * buckets' row order */
	int			ncut;			/* ranges of the sample cut at their rows */
	const uint32 *bucket_perm;	/* the bucket whose order is made into perm */
	uint64		perm_start;
} Split;

/* Orders two splitters (or samples) of *(int *) arg words. */
static int
compare_splitters(const void *a, const void *b, void *arg)
{
	const uint64 *x = a;
	const uint64 *y = b;
	int			width = *(int *) arg;

	for (int w = 0; w < width; w++)
		if (x[w] != y[w])
			return x[w] < y[w] ? -1 : 1;
	return 0;
}

/* Does a splitter come at or before row (its keys, then its number)? */
static inline bool
splitter_not_after(const Split *split, const uint64 *splitter, uint32 row)
{
	const SortJob *job = split->job;

	for (int c = 0; c < job->nkeys; c++)
		if (splitter[c] != job->keys[c][row])
			return splitter[c] < job->keys[c][row];
	return splitter[job->nkeys] <= row;
}

/* The range of a row: how many splitters come at or before it. */
static inline int
range_of_row(const Split *split, uint32 row)
{
	int			lo = 0;
	int			hi = split->nsplitters;

	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (splitter_not_after(split, split->splitters + (Size) mid * split->width, row))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Splitters for RANGES ranges of about equal rows, from the whole keys of
 * rows sampled at regular places (fewer where the rows are few).
 */
static void
choose_splitters(Split *split)
{
	const SortJob *job = split->job;
	uint32		n = job->nrows;
	int			width = job->nkeys + 1;
	int			nsamples = RANGES * SAMPLES_PER_RANGE;
	uint64	   *sample = palloc(sizeof(uint64) * nsamples * width);

	for (int i = 0; i < nsamples; i++)
	{
		uint32		row = (uint32) (((uint64) i * n) / nsamples);
		uint64	   *s = sample + (Size) i * width;

		for (int c = 0; c < job->nkeys; c++)
			s[c] = job->keys[c][row];
		s[job->nkeys] = row;
	}
	qsort_arg(sample, nsamples, sizeof(uint64) * width, compare_splitters, &width);

	split->width = width;
	split->splitters = palloc(sizeof(uint64) * RANGES * width);
	split->nsplitters = 0;
	for (int r = 1; r < RANGES; r++)
	{
		uint64	   *s = sample + (Size) r * SAMPLES_PER_RANGE * width;
		uint64	   *last = split->splitters + (Size) (split->nsplitters - 1) * width;

		if (split->nsplitters == 0 || compare_splitters(s, last, &width) > 0)
			memcpy(split->splitters + (Size) split->nsplitters++ * width, s,
				   sizeof(uint64) * width);
	}
	pfree(sample);
}

/* First pass: each row's range, and each chunk's rows per range. */
static void
count_chunks(void *arg, int part, uint64 first, uint64 last)
{
	Split	   *split = arg;
	int			nranges = split->nsplitters + 1;

	for (uint64 chunk = first; chunk < last; chunk++)
	{
		uint32	   *count = split->counts + chunk * nranges;
		uint64		end = Min((chunk + 1) * SPLIT_CHUNK_ROWS, split->job->nrows);

		for (uint64 row = chunk * SPLIT_CHUNK_ROWS; row < end; row++)
		{
			int			r = range_of_row(split, (uint32) row);

			split->range_of[row] = (uint16) r;
			count[r]++;
		}
	}
}

/* Second pass: each chunk's rows copied to their places in the buckets. */
static void
copy_chunks(void *arg, int part, uint64 first, uint64 last)
{
	Split	   *split = arg;
	const SortJob *job = split->job;
	int			ncols = job->nkeys + 1;
	uint32		next[SERVICE_MAX_HELD];

	for (uint64 chunk = first; chunk < last; chunk++)
	{
		uint64		end = Min((chunk + 1) * SPLIT_CHUNK_ROWS, job->nrows);

		memcpy(next, split->place + chunk * split->nbuckets,
			   sizeof(uint32) * split->nbuckets);
		for (uint64 row = chunk * SPLIT_CHUNK_ROWS; row < end; row++)
		{
			int			b = split->bucket_of[split->range_of[row]];
			uint32		at = next[b]++;
			uint64	  **to = split->to + b * ncols;

			for (int c = 0; c < job->nkeys; c++)
				to[c][at] = job->keys[c][row];
			if (job->payload)
				to[job->nkeys][at] = job->payload[row];
			else
				split->origin[split->start[b] + at] = (uint32) row;
		}
	}
}

/* A bucket's order, as the job's row numbers, into the job's perm. */
static void
map_perm(void *arg, int part, uint64 first, uint64 last)
{
	Split	   *split = arg;
	const uint32 *origin = split->origin + split->perm_start;
	uint32	   *perm = split->job->perm + split->perm_start;

	for (uint64 i = first; i < last; i++)
		perm[i] = origin[split->bucket_perm[i]];
}

/* First pass: each chunk's rows per range. */
static void
count_ranges(Split *split)
{
	uint32		n = split->job->nrows;

	split->nchunks = (n + SPLIT_CHUNK_ROWS - 1) / SPLIT_CHUNK_ROWS;
	split->range_of = MemoryContextAllocHuge(CurrentMemoryContext,
											 sizeof(uint16) * Max(n, 1));
	split->counts = MemoryContextAllocHuge(CurrentMemoryContext,
										   sizeof(uint32) * split->nchunks *
										   (split->nsplitters + 1));
	memset(split->counts, 0,
		   sizeof(uint32) * split->nchunks * (split->nsplitters + 1));
	parallel_for(split->nchunks, 1, parallel_workers(), count_chunks, split);
}

/* The rows of each range, over all chunks (palloc'd). */
static uint64 *
range_totals(const Split *split)
{
	int			nranges = split->nsplitters + 1;
	uint64	   *range_rows = palloc0(sizeof(uint64) * nranges);

	for (uint64 chunk = 0; chunk < split->nchunks; chunk++)
		for (int r = 0; r < nranges; r++)
			range_rows[r] += split->counts[chunk * nranges + r];
	return range_rows;
}

/*
 * Cuts every range of more than max_range rows into pieces of max_range
 * rows at most: its rows' whole keys (with their numbers), sorted, give the
 * splitters between its bounds.  Then counts the rows' ranges again.
 * Returns the rows of each range (range_totals), after the cuts.
 */
static uint64 *
cut_large_ranges(Split *split, uint64 max_range)
{
	const SortJob *job = split->job;
	int			width = split->width;
	int			nranges = split->nsplitters + 1;
	uint64	   *range_rows = range_totals(split);
	uint64		ncuts = 0;
	uint64	   *splitters;
	int			nsplitters = split->nsplitters;

	for (int r = 0; r < nranges; r++)
		if (range_rows[r] > max_range)
			ncuts += (range_rows[r] - 1) / max_range;
	if (ncuts == 0)
		return range_rows;
	/* (ranges stay below 2^16: range_of is uint16) */
	ncuts = Min(ncuts, PG_UINT16_MAX - 1 - (uint64) nsplitters);
	splitters = MemoryContextAllocHuge(CurrentMemoryContext,
									   sizeof(uint64) * (nsplitters + ncuts) * width);
	memcpy(splitters, split->splitters, sizeof(uint64) * nsplitters * width);
	for (int r = 0; r < nranges; r++)
	{
		uint64	   *rows;
		uint64		m = 0;

		if (range_rows[r] <= max_range)
			continue;
		split->ncut++;
		rows = MemoryContextAllocHuge(CurrentMemoryContext,
									  sizeof(uint64) * range_rows[r] * width);
		for (uint32 row = 0; row < job->nrows; row++)
		{
			uint64	   *t;

			if (split->range_of[row] != r)
				continue;
			t = rows + m++ * width;
			for (int c = 0; c < job->nkeys; c++)
				t[c] = job->keys[c][row];
			t[job->nkeys] = row;
		}
		qsort_arg(rows, m, sizeof(uint64) * width, compare_splitters, &width);
		for (uint64 at = max_range; at < m && nsplitters < PG_UINT16_MAX - 1; at += max_range)
			memcpy(splitters + (Size) nsplitters++ * width, rows + at * width,
				   sizeof(uint64) * width);
		pfree(rows);
	}
	qsort_arg(splitters, nsplitters, sizeof(uint64) * width, compare_splitters, &width);
	pfree(split->splitters);
	split->splitters = splitters;
	split->nsplitters = nsplitters;
	pfree(range_rows);
	pfree(split->range_of);
	pfree(split->counts);
	count_ranges(split);
	return range_totals(split);
}

/*
 * The ranges (of range_rows rows each) grouped in order into buckets of at
 * most target rows, where no range has more, none over max_rows and none
 * empty (a bucket starts at a range with rows), and each chunk's place in
 * each bucket; false if a range alone has more than max_rows, or the
 * buckets are more than a backend may hold.  range_rows is the caller's to
 * give: it is reused, then freed.
 */
static bool
group_ranges(Split *split, uint64 *range_rows, uint64 target, uint64 max_rows)
{
	int			nranges = split->nsplitters + 1;
	uint64		rows = 0;
	int			b = 0;

	split->bucket_of = palloc(sizeof(int) * nranges);
	split->rows = palloc0(sizeof(uint64) * SERVICE_MAX_HELD);
	split->start = palloc0(sizeof(uint64) * SERVICE_MAX_HELD);
	for (int r = 0; r < nranges; r++)
	{
		if (range_rows[r] > max_rows)
		{
			split->nbuckets = 0;
			split->rows[0] = range_rows[r];
			return false;
		}
		if (range_rows[r] > 0 && split->rows[b] > 0 &&
			split->rows[b] + range_rows[r] > target)
		{
			if (++b == SERVICE_MAX_HELD)
			{
				split->nbuckets = SERVICE_MAX_HELD + 1;
				return false;
			}
			split->start[b] = rows;
		}
		split->bucket_of[r] = b;
		split->rows[b] += range_rows[r];
		rows += range_rows[r];
	}
	split->nbuckets = b + 1;

	/* a chunk's place in a bucket: the bucket's rows in the chunks before */
	split->place = palloc(sizeof(uint32) * split->nchunks * split->nbuckets);
	memset(range_rows, 0, sizeof(uint64) * split->nbuckets);
	for (uint64 chunk = 0; chunk < split->nchunks; chunk++)
	{
		for (int bucket = 0; bucket < split->nbuckets; bucket++)
			split->place[chunk * split->nbuckets + bucket] = (uint32) range_rows[bucket];
		for (int r = 0; r < nranges; r++)
			range_rows[split->bucket_of[r]] += split->counts[chunk * nranges + r];
	}
	pfree(range_rows);
	return true;
}

/*
 * What EXPLAIN ANALYZE tells of the buckets' jobs, and of the largest
 * bucket against the bound (target).
 */
static char *
buckets_note(const Split *split, JobSpace *spaces, int njobs, uint64 target)
{
	StringInfoData note;
	int			jobs[SERVICE_MAX_GPUS] = {0};
	uint64		rows[SERVICE_MAX_GPUS] = {0};
	double		gpu_ms[SERVICE_MAX_GPUS] = {0};
	int			nused = 0;
	double		wait_ms = 0;
	double		run_ms = 0;
	uint64		largest = 0;

	for (int i = 0; i < njobs; i++)
	{
		const ServiceSlot *slot = spaces[i].slot;

		nused += jobs[slot->gpu] ? 0 : 1;
		jobs[slot->gpu]++;
		rows[slot->gpu] += slot->nrows;
		gpu_ms[slot->gpu] += slot->run_ms;
		wait_ms = Max(wait_ms, slot->wait_ms);
		run_ms = Max(run_ms, slot->run_ms);
		largest = Max(largest, slot->nrows);
	}
	initStringInfo(&note);
	appendStringInfo(&note, "%d buckets on GPU%s", njobs, nused > 1 ? "s" : "");
	for (int g = 0, i = 0; g < SERVICE_MAX_GPUS; g++)
		if (jobs[g])
			appendStringInfo(&note, "%s%d", i++ ? ", " : " ", g);
	appendStringInfo(&note, ", queued up to %.1f ms, ran up to %.1f ms each",
					 wait_ms, run_ms);
	/* each GPU's share: its buckets, their rows and its time running them */
	for (int g = 0; g < SERVICE_MAX_GPUS && nused > 1; g++)
		if (jobs[g])
			appendStringInfo(&note, "; GPU %d: %d buckets, %llu rows, %.1f ms",
							 g, jobs[g], (unsigned long long) rows[g], gpu_ms[g]);
	if (split->ncut > 0)
		appendStringInfo(&note, "; key ranges of the sample cut at their rows: %d",
						 split->ncut);
	appendStringInfo(&note, "; largest bucket: %llu rows, bound %llu",
					 (unsigned long long) largest, (unsigned long long) target);
	return note.data;
}

/*
 * The buckets' jobs, spaces[b] bucket b's: memory for each, the rows copied
 * in, run; false with the reason where one of them cannot be.
 */
static bool
run_buckets(Split *split, JobSpace *spaces, int *njobs, char **why)
{
	const SortJob *job = split->job;
	int			ncols = job->nkeys + 1;
	bool		payload = job->payload != NULL;

	split->to = palloc0(sizeof(uint64 *) * split->nbuckets * ncols);
	for (int b = 0; b < split->nbuckets; b++)
	{
		uint32		rows = (uint32) split->rows[b];
		Size		perm_offset = service_perm_offset(rows, job->nkeys, payload);
		JobSpace   *space = &spaces[b];
		ServiceSlot *slot;

		if (!job_space_prepare(perm_offset + (payload ? 0 : (Size) rows * sizeof(uint32)),
							   space, why))
			return false;
		(*njobs)++;
		for (int c = 0; c <= job->nkeys; c++)
			split->to[b * ncols + c] =
				(uint64 *) (space->base + service_keys_bytes(rows, c));
		slot = space->slot;
		slot->kind = SERVICE_JOB_KEYS;
		slot->nrows = rows;
		slot->nkeys = job->nkeys;
		slot->payload = payload;
		slot->want_sorted_keys = payload && job->want_sorted_keys;
		space->row_keys = (uint64) rows * job->nkeys;
	}
	if (!payload)
		split->origin = MemoryContextAllocHuge(CurrentMemoryContext,
											   sizeof(uint32) * Max(job->nrows, 1));
	parallel_for((job->nrows + SPLIT_CHUNK_ROWS - 1) / SPLIT_CHUNK_ROWS, 1,
				 parallel_workers(), copy_chunks, split);
	return job_spaces_run(spaces, *njobs, why);
}

/* The buckets' results, in order, into the job's. */
static void
gather_buckets(Split *split, SortJob *job, JobSpace *spaces)
{
	bool		keys_sorted = job->payload && job->want_sorted_keys;

	for (int b = 0; b < split->nbuckets && keys_sorted; b++)
		keys_sorted = spaces[b].slot->keys_sorted;
	if (keys_sorted)
		job->keys_sorted = MemoryContextAllocHuge(CurrentMemoryContext,
												  sizeof(uint64) * Max(job->nrows, 1));
	if (!job->payload && job->perm == NULL)
		job->perm = MemoryContextAllocHuge(CurrentMemoryContext,
										   sizeof(uint32) * Max(job->nrows, 1));

	for (int b = 0; b < split->nbuckets; b++)
	{
		uint32		rows = (uint32) split->rows[b];
		char	   *base = spaces[b].base;

		if (job->payload)
		{
			parallel_copy(job->payload_out + split->start[b],
						  base + service_keys_bytes(rows, job->nkeys),
						  sizeof(uint64) * rows);
			if (keys_sorted)
				parallel_copy(job->keys_sorted + split->start[b], base,
							  sizeof(uint64) * rows);
		}
		else
		{
			split->bucket_perm = (const uint32 *)
				(base + service_perm_offset(rows, job->nkeys, false));
			split->perm_start = split->start[b];
			parallel_for(rows, SPLIT_CHUNK_ROWS, parallel_workers(), map_perm, split);
		}
	}
	job->payload_sorted = job->payload != NULL;
}

/* The most rows of a bucket within mem_limit bytes of device memory. */
static uint64
max_bucket_rows(int nkeys, Size mem_limit)
{
	uint64		lo = 0;
	uint64		hi = PG_UINT32_MAX;

	while (lo < hi)
	{
		uint64		mid = (lo + hi + 1) / 2;

		if (gpu_job_device_bytes((uint32) mid, nkeys) <= mem_limit)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

int
service_buckets(uint32 nrows, int nkeys, Size mem_limit)
{
	Size		need = gpu_job_device_bytes(nrows, nkeys);
	int			ready = Max(gpu_service_gpus_ready(), 1);
	double		nbuckets;

	if (need <= mem_limit)
		return 1;
	if (nkeys == 0)
		return SERVICE_MAX_HELD + 1;
	/* as many buckets for each GPU process */
	nbuckets = ceil(ceil((double) need / (mem_limit * BUCKET_FILL)) / ready) * ready;
	return (int) Min(nbuckets, SERVICE_MAX_HELD + 1);
}

bool
service_sort_buckets(SortJob *job, Size mem_limit, char **why)
{
	int			nbuckets = service_buckets(job->nrows, job->nkeys, mem_limit);
	uint64		max_rows = max_bucket_rows(job->nkeys, mem_limit);
	uint64		target;			/* the bound of a bucket's rows */
	JobSpace	spaces[SERVICE_MAX_HELD];
	int			njobs = 0;
	bool		ok = false;
	Split		split;

	if (max_rows == 0)
	{
		*why = psprintf("the %zu MB of device memory that gpusort.service_memory "
						"allows are too few for any sort", mem_limit >> 20);
		service_count_fallback(SERVICE_FALLBACK_TOO_LARGE);
		return false;
	}
	if (nbuckets > SERVICE_MAX_HELD)
	{
		*why = psprintf("the sort needs about %zu MB of device memory, more than "
						"%d buckets of the %zu MB that gpusort.service_memory allows",
						gpu_job_device_bytes(job->nrows, job->nkeys) >> 20,
						SERVICE_MAX_HELD, mem_limit >> 20);
		service_count_fallback(SERVICE_FALLBACK_TOO_LARGE);
		return false;
	}

	memset(&split, 0, sizeof(split));
	split.job = job;
	choose_splitters(&split);
	count_ranges(&split);
	target = Max(Min((job->nrows + nbuckets - 1) / nbuckets, max_rows), 1);
	if (!group_ranges(&split, cut_large_ranges(&split, Max(target / 4, 1)), target,
					  max_rows))
	{
		if (split.nbuckets == 0)
			*why = psprintf("%lu rows of one narrow range of keys need more than the "
							"%zu MB of device memory that gpusort.service_memory allows",
							(unsigned long) split.rows[0], mem_limit >> 20);
		else
			*why = psprintf("the sort's keys need more than %d buckets of the %zu MB "
							"of device memory that gpusort.service_memory allows",
							SERVICE_MAX_HELD, mem_limit >> 20);
		service_count_fallback(SERVICE_FALLBACK_TOO_LARGE);
		return false;
	}

	PG_TRY();
	{
		ok = run_buckets(&split, spaces, &njobs, why);
		if (ok)
		{
			gather_buckets(&split, job, spaces);
			job->engine_note = buckets_note(&split, spaces, njobs, target);
			strlcpy(job->kernel, spaces[0].slot->kernel, sizeof(job->kernel));
		}
		for (int i = 0; i < njobs; i++)
			job_space_end(&spaces[i]);
		pfree(split.range_of);
		pfree(split.counts);
		if (split.origin)
			pfree(split.origin);
	}
	PG_CATCH();
	{
		job_spaces_abandon(spaces, njobs);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return ok;
}

#endif							/* GPUSORT_WITH_CUDA */
