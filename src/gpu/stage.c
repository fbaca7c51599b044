/*-------------------------------------------------------------------------
 *
 * stage.c
 *	  The GPU engine's holding of rows in device memory, for inputs larger
 *	  than a GpuSort node's memory budget (RowStager, row_store.h).
 *
 * Each full store goes up as it is: its tuple blocks back to back into one
 * device arena, each row's place in it, its length and the words of its key.
 * Once the input ends, the keys are sorted with the row numbers (a key of
 * several words by LSD passes over them, the least significant first, each
 * a stable radix sort of the words in the order so far; a text key's tie
 * words, past HELD_KEY_WORDS, then order the groups of rows that the words
 * before leave tied, each group a segment of the order sorted by a warp or
 * a block: gs_segments.cu), the places and
 * lengths gathered in that order (under a Unique, those of the first row
 * of each group of equal leading words alone: gs_groups.cu), and the rows
 * come back a buffer at a time: their lengths come down, the host lays
 * them out, and a kernel copies them into that layout (gs_gather_rows),
 * which comes down whole.
 * The host then holds one buffer of rows, never the input.
 *
 * A backend's engine holds its own input (gpu_stager); a GPU process of the
 * service holds those of backends, which hand it each store laid out flat
 * (gpu_stage_add_flat) and take the rows back in their shared memory
 * (gpu_stage_next_into).  Device memory for all inputs held counts against
 * the one limit, and so does the room that each input is expected to take
 * (gpu_stage_room: the planner's estimate of its rows' bytes, times what
 * its keys, places and sort take beside them), kept for it from its start:
 * an input that would not fit beside the others is declined before it
 * brings its first rows, not once it has brought half of them; where it
 * would fit alone, it is declined as busy, and its backend may wait for the
 * others to end.  So is a store of an input that outgrows its room, where
 * the input would still fit alone.  The tuple blocks' arena doubles as it
 * fills, but not past the bytes expected while the rows stay within them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef GPUSORT_WITH_CUDA

#include "miscadmin.h"
#include "utils/memutils.h"

#include "gpu/gpu_state.h"

/* Rows whose places go up at a time. */
#define PLACE_BATCH		(64 * 1024)

/* The largest buffer of rows that comes back at a time. */
#define MAX_CHUNK_BYTES	((Size) 16 * 1024 * 1024)

/* Device bytes that every input held here takes. */
static Size held_bytes = 0;

/*
 * Did the last failure decline rows for want of room (within the memory
 * setting), rather than fail?  The service does not count such as failed.
 */
static bool declined = false;

/* And was it a new input that only the room kept for others left out? */
static bool declined_busy = false;

/*
 * And what they are kept room for: each input's larger of the bytes it
 * holds (with those its sort will take) and its room expected.
 */
static double committed_bytes = 0;

struct SortStage
{
	gs_context *ctx;			/* the context that holds the buffers */
	MemoryContextCallback cleanup;
	Size		held;			/* device bytes it holds */
	double		expected;		/* bytes its rows are expected to take */
	double		room;			/* device bytes it is expected to take
								 * (gpu_stage_room), kept for it */
	Size		keep;			/* until sorted: device bytes its sort will
								 * take, kept free as rows come */

	char	   *arena;			/* the tuple blocks */
	Size		arena_used;
	Size		arena_size;
	int			nwords;			/* words of each row's key (0: no rows yet),
								 * tie words included */
	uint64	   *keys[HELD_ROW_WORDS];	/* word w of each row's key, in the
										 * order they came */
	uint64	   *places;			/* offsets in the arena */
	uint32	   *lengths;
	uint64		nrows;			/* once sorted: those handed back (the
								 * first of each group, where asked) */
	uint64		row_capacity;

	/* once sorted: places and lengths in order, the rows handed back */
	uint64		next_row;
	uint32	   *perm;
	uint32	   *heads;			/* while sorted under a Unique: the rows
								 * that start a group (gs_groups.cu) */
	char	   *chunk;			/* on the device: the rows of a buffer */
	uint64	   *chunk_places;	/* on the device: their places in it */
	Size		chunk_bytes;
	uint64		chunk_rows;		/* rows a buffer holds at most */
	char	   *host;			/* the buffer, on the host (a backend's) */
	Size		host_bytes;
	uint32	   *host_lengths;
	uint64	   *host_places;
};

/* Turns a failed call into false and a reason. */
static bool
stage_ok(gs_status st, char **why)
{
	if (st == GS_OK)
		return true;
	*why = psprintf("%s: %s", gs_status_name(st), gs_last_error(gpu.ctx));
	return false;
}

Size
gpu_stage_row_bytes(int nwords)
{
	return nwords * sizeof(uint64) + sizeof(uint64) + sizeof(uint32);
}

/* The words of a key that radix passes order by; the rest are tie words. */
static inline int
radix_words(int nwords)
{
	return Min(nwords, HELD_KEY_WORDS);
}

/*
 * Device bytes a row takes while the rows are sorted, beside what it holds:
 * the permutation, the radix sort's second buffers of keys and row numbers,
 * for keys of several words the row numbers of a pass and the permutation
 * after it; with tie words, the sorted last radix word (which keeps the
 * rows' own for the groups), the groups' heads and their exclusive sum,
 * the segments' bounds and what gs_sort_segments takes for its largest.
 */
static Size
sort_row_bytes(int nwords)
{
	Size		bytes = 2 * sizeof(uint32) + sizeof(uint64) +
		(nwords > 1 ? 2 * sizeof(uint32) : 0);

	if (nwords > HELD_KEY_WORDS)
		bytes += sizeof(uint64) + 3 * sizeof(uint32) + GS_SEGMENTS_ROW_BYTES;
	return bytes;
}

double
gpu_stage_room(double expected_bytes, Size mem_limit)
{
	return Min(GPU_STAGE_DEVICE_FACTOR * expected_bytes, (double) mem_limit);
}

/* The room kept for a stage that holds held bytes and keeps keep free. */
static inline double
stage_room(const SortStage *stage, double held, Size keep)
{
	return Max(held + (double) keep, stage->room);
}

/*
 * Counts bytes (a negative delta: freed) as held by the stage, which keeps
 * keep bytes free for its sort and room for room bytes, and the room kept
 * for it in committed_bytes.
 */
static void
stage_account(SortStage *stage, ssize_t delta, Size keep, double room)
{
	committed_bytes -= stage_room(stage, stage->held, stage->keep);
	stage->held += delta;
	stage->keep = keep;
	stage->room = room;
	held_bytes += delta;
	committed_bytes += stage_room(stage, stage->held, stage->keep);
}

/* The same, its room unchanged. */
static inline void
stage_count(SortStage *stage, ssize_t delta, Size keep)
{
	stage_account(stage, delta, keep, stage->room);
}

/*
 * Device memory for bytes more, with keep bytes kept free for the stage's
 * sort, within what the memory setting allows beside the room kept for the
 * other inputs (which is at least what they hold).
 */
static bool
stage_fits(SortStage *stage, Size bytes, Size keep, char **why)
{
	double		room = stage_room(stage, (double) (stage->held + bytes), keep);
	double		others = committed_bytes - stage_room(stage, stage->held, stage->keep);

	if (others + room > (double) gpu.mem_limit)
	{
		*why = psprintf("the rows need more than the %zu MB of device memory that "
						"%s allows", gpu.mem_limit >> 20, gpu.config.memory_setting);
		declined = true;
		/* where the room kept for other inputs alone keeps them out */
		declined_busy = (double) (stage->held + bytes + keep) <= (double) gpu.mem_limit;
		return false;
	}
	return true;
}

bool
gpu_stage_declined(void)
{
	return declined;
}

bool
gpu_stage_declined_busy(void)
{
	return declined && declined_busy;
}

double
gpu_stage_committed_bytes(void)
{
	return committed_bytes;
}

/* Allocates device memory within stage_fits. */
static bool
stage_alloc(SortStage *stage, Size bytes, void **ptr, char **why)
{
	if (!stage_fits(stage, bytes, stage->keep, why))
		return false;
	if (!stage_ok(gs_device_alloc(gpu.ctx, Max(bytes, 8), ptr), why))
		return false;
	stage_count(stage, (ssize_t) bytes, stage->keep);
	return true;
}

static void
stage_free(SortStage *stage, void **ptr, Size bytes)
{
	if (*ptr && gpu.ctx == stage->ctx)
		(void) gs_device_free(gpu.ctx, *ptr);
	*ptr = NULL;
	stage_count(stage, -(ssize_t) bytes, stage->keep);
}

/* The size a buffer of size bytes grows to, to hold at least need. */
static inline Size
grown_size(Size size, Size need)
{
	return Max(need, size * 2);
}

/*
 * The size the arena grows to, to hold at least need bytes: twice its size,
 * but not past the bytes expected where need is within them.
 */
static Size
arena_grown_size(SortStage *stage, Size need)
{
	Size		grown = grown_size(stage->arena_size, need);

	if ((double) need <= stage->expected && (double) grown > stage->expected)
		grown = (Size) stage->expected;
	return grown;
}

/*
 * Grows a buffer of used bytes to hold at least need, keeping its bytes:
 * to grown bytes (grown_size where 0).
 */
static bool
stage_grow(SortStage *stage, void **ptr, Size *size, Size used, Size need,
		   Size grown, char **why)
{
	void	   *fresh;

	if (need <= *size)
		return true;
	if (grown < need)
		grown = grown_size(*size, need);
	if (!stage_alloc(stage, grown, &fresh, why))
		return false;
	if (used > 0 && !stage_ok(gs_copy_device(gpu.ctx, fresh, *ptr, used), why))
	{
		stage_free(stage, &fresh, grown);
		return false;
	}
	stage_free(stage, ptr, *size);
	*ptr = fresh;
	*size = grown;
	return true;
}

static void
stage_free_all(SortStage *stage)
{
	Size		rows = stage->row_capacity;

	stage_free(stage, (void **) &stage->arena, stage->arena_size);
	for (int w = 0; w < stage->nwords; w++)
		stage_free(stage, (void **) &stage->keys[w], rows * sizeof(uint64));
	stage_free(stage, (void **) &stage->places, rows * sizeof(uint64));
	stage_free(stage, (void **) &stage->lengths, rows * sizeof(uint32));
	stage_free(stage, (void **) &stage->perm, stage->perm ? rows * sizeof(uint32) : 0);
	stage_free(stage, (void **) &stage->heads, stage->heads ? rows * sizeof(uint32) : 0);
	stage_free(stage, (void **) &stage->chunk, stage->chunk ? stage->chunk_bytes : 0);
	stage_free(stage, (void **) &stage->chunk_places,
			   stage->chunk_places ? stage->chunk_rows * sizeof(uint64) : 0);
	stage->arena_size = stage->row_capacity = 0;
	stage_account(stage, 0, 0, 0);	/* and the room kept for it */
}

/* The memory context of the stage goes away: so does its device memory. */
static void
stage_cleanup(void *arg)
{
	stage_free_all((SortStage *) arg);
}

Size
gpu_stage_held_bytes(void)
{
	return held_bytes;
}

Size
gpu_stage_chunk_bytes(Size host_bytes)
{
	return Max(Min(host_bytes / 4, MAX_CHUNK_BYTES), BLCKSZ);
}

SortStage *
gpu_stage_begin(Size host_bytes, double expected_bytes, char **why)
{
	SortStage  *stage;
	double		start_ms;
	double		room;

	declined = false;
	declined_busy = false;
	if (!gpu_engine_start(why, &start_ms))
		return NULL;
	if (expected_bytes > (double) gpu.mem_limit)
	{
		declined = true;
		*why = psprintf("the %.0f MB that the rows are expected to take are more than "
						"the %zu MB of device memory that %s allows",
						expected_bytes / (1 << 20), gpu.mem_limit >> 20, gpu.config.memory_setting);
		return NULL;
	}
	room = gpu_stage_room(expected_bytes, gpu.mem_limit);
	if (committed_bytes + room > (double) gpu.mem_limit)
	{
		declined = true;
		declined_busy = true;
		*why = psprintf("the %.0f MB of device memory that the rows are expected to "
						"take do not fit beside the %.0f MB kept for other sorts, "
						"within the %zu MB that %s allows",
						room / (1 << 20), committed_bytes / (1 << 20),
						gpu.mem_limit >> 20, gpu.config.memory_setting);
		return NULL;
	}
	/* the sorts' buffers are not needed while the rows are here */
	gpu_buffers_release();
	stage = palloc0(sizeof(SortStage));
	stage->ctx = gpu.ctx;
	stage->chunk_bytes = gpu_stage_chunk_bytes(host_bytes);
	stage->chunk_rows = Max(stage->chunk_bytes / 32, 1);
	stage->expected = expected_bytes;
	stage_account(stage, 0, 0, room);
	stage->cleanup.func = stage_cleanup;
	stage->cleanup.arg = stage;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &stage->cleanup);
	return stage;
}

/* Uploads the places and lengths of rows[first .. first + n - 1]. */
static bool
add_places(SortStage *stage, const StoredRows *rows, const Size *block_places,
		   uint32 first, uint32 n, int *block, uint64 *places, uint32 *lengths,
		   char **why)
{
	stored_rows_places(rows, block_places, first, n, block, places, lengths);
	return stage_ok(gpu_staged_upload(stage->places + stage->nrows + first, places,
									  sizeof(uint64) * n), why) &&
		stage_ok(gpu_staged_upload(stage->lengths + stage->nrows + first, lengths,
								   sizeof(uint32) * n), why);
}

/*
 * Room on the device for rows more rows whose blocks take bytes in all (the
 * arena up to bytes) and whose keys have nwords words: false with the
 * reason if there is none.
 */
static bool
stage_reserve(SortStage *stage, Size bytes, uint64 rows, int nwords, char **why)
{
	Size		row_capacity = stage->row_capacity;
	Size		keep;
	Size		arena_size = bytes > stage->arena_size ?
		arena_grown_size(stage, bytes) : stage->arena_size;

	rows += stage->nrows;
	if (rows > GS_MAX_PAIRS)
	{
		*why = psprintf("more than %llu rows", (unsigned long long) GS_MAX_PAIRS);
		return false;
	}
	if (stage->nwords == 0)
		stage->nwords = nwords;
	else if (nwords != stage->nwords)
	{
		*why = psprintf("keys of %d words after keys of %d", nwords, stage->nwords);
		return false;
	}

	/*
	 * The sort stays possible: what it takes for each row (of the rows'
	 * capacity, which may double now), and the buffers of rows coming back.
	 */
	keep = Max(rows, row_capacity * 2) * sort_row_bytes(nwords) +
		stage->chunk_bytes + stage->chunk_rows * sizeof(uint64);

	/*
	 * All arrays grow or none (a failed growth would leave them of unequal
	 * lengths): room for the new ones beside all the old.
	 */
	if (!stage_fits(stage, (arena_size > stage->arena_size ? arena_size : 0) +
					(rows > row_capacity ?
					 Max(rows, row_capacity * 2) *
					 gpu_stage_row_bytes(nwords) : 0),
					keep, why))
		return false;
	stage_count(stage, 0, keep);
	if (!stage_grow(stage, (void **) &stage->arena, &stage->arena_size,
					stage->arena_used, bytes, arena_size, why))
		return false;
	if (rows > row_capacity)
	{
		Size		size;
		Size		grown = Max(rows, row_capacity * 2);

		for (int w = 0; w < nwords; w++)
		{
			size = row_capacity * sizeof(uint64);
			if (!stage_grow(stage, (void **) &stage->keys[w], &size,
							stage->nrows * sizeof(uint64), grown * sizeof(uint64), 0, why))
				return false;
		}
		size = row_capacity * sizeof(uint64);
		if (!stage_grow(stage, (void **) &stage->places, &size, stage->nrows * sizeof(uint64),
						grown * sizeof(uint64), 0, why))
			return false;
		size = row_capacity * sizeof(uint32);
		if (!stage_grow(stage, (void **) &stage->lengths, &size, stage->nrows * sizeof(uint32),
						grown * sizeof(uint32), 0, why))
			return false;
		stage->row_capacity = grown;
	}
	return true;
}

static bool
stage_add(SortStage *stage, const StoredRows *rows, char **why)
{
	Size	   *block_places = palloc(sizeof(Size) * Max(rows->nblocks, 1));
	Size		bytes;
	uint64	   *places;
	uint32	   *lengths;
	int			block = 0;
	bool		ok = true;

	if (rows->nrows == 0)
		return true;

	bytes = stored_rows_block_places(rows, stage->arena_used, block_places);
	if (!stage_reserve(stage, bytes, rows->nrows, rows->nwords, why))
		return false;
	for (int b = 0; b < rows->nblocks; b++)
		if (!stage_ok(gpu_staged_upload(stage->arena + block_places[b],
										rows->block_start[b],
										rows->block_used[b]), why))
			return false;

	/* the rows' keys, places and lengths */
	for (int w = 0; w < rows->nwords; w++)
		if (!stage_ok(gpu_staged_upload(stage->keys[w] + stage->nrows, rows->keys[w],
										sizeof(uint64) * rows->nrows), why))
			return false;
	places = palloc(sizeof(uint64) * Min(rows->nrows, PLACE_BATCH));
	lengths = palloc(sizeof(uint32) * Min(rows->nrows, PLACE_BATCH));
	for (uint32 first = 0; ok && first < rows->nrows; first += PLACE_BATCH)
	{
		CHECK_FOR_INTERRUPTS();
		ok = add_places(stage, rows, block_places, first,
						Min(PLACE_BATCH, rows->nrows - first), &block,
						places, lengths, why);
	}
	pfree(places);
	pfree(lengths);
	pfree(block_places);
	if (!ok)
		return false;
	stage->arena_used = bytes;
	stage->nrows += rows->nrows;
	return true;
}

bool
gpu_stage_add_flat(SortStage *stage, const char *arena, Size bytes,
				   const uint64 *keys, int nwords, uint64 *places,
				   const uint32 *lengths, uint32 n, char **why)
{
	Size		from = stage->arena_used;

	declined = false;
	declined_busy = false;
	if (n == 0)
		return true;
	if (nwords < 1 || nwords > HELD_ROW_WORDS)
	{
		*why = psprintf("keys of %d words", nwords);
		return false;
	}
	if (!stage_reserve(stage, from + TYPEALIGN(8, bytes), n, nwords, why))
		return false;
	for (uint32 i = 0; i < n; i++)
		places[i] += from;
	for (int w = 0; w < nwords; w++)
		if (!stage_ok(gpu_staged_upload(stage->keys[w] + stage->nrows, keys + (Size) w * n,
										sizeof(uint64) * n), why))
			return false;
	if (!stage_ok(gpu_staged_upload(stage->arena + from, arena, bytes), why) ||
		!stage_ok(gpu_staged_upload(stage->places + stage->nrows, places,
									sizeof(uint64) * n), why) ||
		!stage_ok(gpu_staged_upload(stage->lengths + stage->nrows, lengths,
									sizeof(uint32) * n), why))
		return false;
	stage->arena_used = from + TYPEALIGN(8, bytes);
	stage->nrows += n;
	return true;
}

/*
 * After the last radix word's sort, which left the permutation in
 * stage->perm, each earlier word's: the word of the rows in the order so
 * far (in words, the room of the last word's sorted keys, no longer
 * needed), sorted stably with their positions, which then reorder the
 * permutation.
 */
static bool
sort_earlier_words(SortStage *stage, uint64 *words, char **why)
{
	uint64		n = stage->nrows;
	Size		bytes = stage->row_capacity * sizeof(uint32);
	uint32	   *positions = NULL;
	uint32	   *next = NULL;
	bool		ok = true;

	if (radix_words(stage->nwords) == 1)
		return true;
	if (!stage_alloc(stage, bytes, (void **) &positions, why) ||
		!stage_alloc(stage, bytes, (void **) &next, why))
		ok = false;
	for (int w = radix_words(stage->nwords) - 2; ok && w >= 0; w--)
	{
		uint32	   *sorted = next;

		ok = stage_ok(gpu_sort_by_column(words, stage->keys[w], stage->perm, positions,
										 next, n, NULL), why);
		next = stage->perm;
		stage->perm = sorted;
	}
	stage_free(stage, (void **) &positions, positions ? bytes : 0);
	stage_free(stage, (void **) &next, next ? bytes : 0);
	return ok;
}

/*
 * Marks the rows of the sorted order that start a group of their first
 * group_words key words (heads: a word a row).  The words are read through
 * the permutation, where they still lie in the order the rows came; the
 * last radix word's, sorted in place, only where it is the only one and has
 * no tie words after it (sort_earlier_words takes its room, sort_words
 * keeps it).
 */
static bool
mark_heads(SortStage *stage, int group_words, char **why)
{
	bool		in_place = stage->nwords == 1;

	for (int w = 0; w < group_words; w++)
		if (!stage_ok(gs_mark_group_heads(gpu.ctx, stage->heads, stage->keys[w],
										  in_place ? NULL : stage->perm,
										  stage->nrows, w == 0), why))
			return false;
	return true;
}

/* mark_heads under a Unique, where there is room for the heads. */
static bool
mark_group_heads(SortStage *stage, int group_words, char **why)
{
	char	   *no_room;

	/* no room for them is no failure: every row then comes back */
	if (!stage_alloc(stage, stage->row_capacity * sizeof(uint32), (void **) &stage->heads,
					 &no_room))
	{
		declined = declined_busy = false;
		return true;
	}
	return mark_heads(stage, group_words, why);
}

/*
 * The tie words' passes: the groups of two rows or more that the words
 * before leave tied (their heads: mark_heads) are segments of the
 * permutation, each ordered by the next words (up to GS_SEGMENTS_MAX_WORDS)
 * and the row numbers (gs_sort_segments), until no group is tied or no
 * word is left.  The scratch memory they take is let go after them.
 */
static bool
sort_tied_groups(SortStage *stage, char **why)
{
	Size		bytes = stage->row_capacity * sizeof(uint32);
	Size		bound_bytes = (stage->row_capacity / 2 + 1) * sizeof(uint32);
	uint32	   *begins = NULL;
	uint32	   *ends = NULL;
	uint32		nsegs = 1;
	bool		ok;

	ok = stage_alloc(stage, bytes, (void **) &stage->heads, why) &&
		stage_alloc(stage, bound_bytes, (void **) &begins, why) &&
		stage_alloc(stage, bound_bytes, (void **) &ends, why);
	for (int from = radix_words(stage->nwords); ok && nsegs > 0 && from < stage->nwords;
		 from += GS_SEGMENTS_MAX_WORDS)
		ok = mark_heads(stage, from, why) &&
			stage_ok(gs_tied_segments(gpu.ctx, begins, ends, stage->heads, stage->nrows,
									  &nsegs), why) &&
			stage_ok(gs_sort_segments(gpu.ctx, Min(stage->nwords - from, GS_SEGMENTS_MAX_WORDS),
									  (const uint64_t *const *) &stage->keys[from],
									  stage->perm, stage->nrows, begins, ends, nsegs), why);
	ok = ok && stage_ok(gs_synchronize(gpu.ctx), why);
	stage_free(stage, (void **) &stage->heads, stage->heads ? bytes : 0);
	stage_free(stage, (void **) &begins, begins ? bound_bytes : 0);
	stage_free(stage, (void **) &ends, ends ? bound_bytes : 0);
	(void) gs_context_release_scratch(gpu.ctx);
	return ok;
}

/*
 * Sorts the keys with the row numbers into stage->perm: the last radix
 * word first, in place (in a copy, where tie words follow: their groups are
 * found by every radix word as the rows came), then the earlier ones, then
 * the tie words' pass.
 */
static bool
sort_words(SortStage *stage, char **why)
{
	int			lead = radix_words(stage->nwords);
	uint64	   *sorted = stage->keys[lead - 1];
	uint64	   *copy = NULL;
	Size		bytes = stage->row_capacity * sizeof(uint64);
	bool		ok = true;

	if (stage->nwords > lead)
	{
		ok = stage_alloc(stage, bytes, (void **) &copy, why) &&
			stage_ok(gs_copy_device(gpu.ctx, copy, sorted,
									stage->nrows * sizeof(uint64)), why);
		sorted = copy;
	}
	ok = ok &&
		stage_ok(gs_sort_pairs(gpu.ctx, 64, sorted, stage->perm, sorted, stage->perm,
							   stage->nrows, GS_ALGO_AUTO, NULL), why) &&
		sort_earlier_words(stage, sorted, why);
	if (copy)
		stage_free(stage, (void **) &copy, bytes);
	return ok && (stage->nwords == lead || sort_tied_groups(stage, why));
}

/*
 * Keeps the places and lengths, sorted, of the rows that start a group
 * alone, in the rooms that the sort left free (the first word's and the
 * permutation's): the rows handed back are those.
 */
static bool
keep_group_heads(SortStage *stage, char **why)
{
	uint64	   *places = stage->keys[0];
	uint32	   *lengths = stage->perm;
	uint64		kept;
	bool		ok;

	ok = stage_ok(gs_keep_group_heads(gpu.ctx, places, lengths, stage->places,
									  stage->lengths, stage->heads, stage->nrows, &kept), why);
	stage_free(stage, (void **) &stage->heads, stage->row_capacity * sizeof(uint32));
	if (!ok)
		return false;
	stage->keys[0] = stage->places;
	stage->places = places;
	stage->perm = stage->lengths;
	stage->lengths = lengths;
	stage->nrows = kept;
	return true;
}

bool
gpu_stage_sort(SortStage *stage, int group_words, char **why)
{
	uint64		n = stage->nrows;
	uint64	   *sorted_places;
	uint32	   *sorted_lengths;

	if (n == 0)
		return true;
	/* the last word's room is taken as earlier ones are sorted */
	if (group_words >= stage->nwords && stage->nwords > 1)
		group_words = 0;		/* (row_seams.h: not asked) */
	stage_count(stage, 0, 0);	/* what was kept free is taken now */
	if (!stage_alloc(stage, stage->row_capacity * sizeof(uint32), (void **) &stage->perm, why) ||
		!stage_ok(gs_fill_iota(gpu.ctx, stage->perm, n), why) ||
		!sort_words(stage, why) ||
		(group_words > 0 && !mark_group_heads(stage, group_words, why)))
		return false;

	/* places and lengths in sorted order, in the first word's room */
	sorted_places = stage->keys[0];
	if (!stage_ok(gs_gather_u64(gpu.ctx, sorted_places, stage->places, stage->perm, n), why))
		return false;
	stage->keys[0] = stage->places;
	stage->places = sorted_places;
	sorted_lengths = stage->perm;
	if (!stage_ok(gs_gather_u32(gpu.ctx, sorted_lengths, stage->lengths, stage->perm, n), why))
		return false;
	stage->perm = stage->lengths;
	stage->lengths = sorted_lengths;
	if (stage->heads != NULL && !keep_group_heads(stage, why))
		return false;

	/* the buffers of rows coming back */
	if (!stage_alloc(stage, stage->chunk_bytes, (void **) &stage->chunk, why) ||
		!stage_alloc(stage, stage->chunk_rows * sizeof(uint64),
					 (void **) &stage->chunk_places, why))
		return false;
	stage->host_lengths = palloc(sizeof(uint32) * stage->chunk_rows);
	stage->host_places = palloc(sizeof(uint64) * stage->chunk_rows);
	return stage_ok(gs_synchronize(gpu.ctx), why);
}

/* Makes the device's buffer of rows coming back hold a row of len bytes. */
static bool
fit_row(SortStage *stage, Size len, char **why)
{
	Size		size = stage->chunk_bytes;

	if (len <= size)
		return true;
	if (!stage_grow(stage, (void **) &stage->chunk, &size, 0, len, 0, why))
		return false;
	stage->chunk_bytes = size;
	return true;
}

/*
 * The rows in order from the first-th (from 0), laid out back to back into
 * dest (of dest_bytes), their number; 0 after the last, or, with *need
 * set, when the first row alone needs more than dest_bytes; -1 on failure.
 * The rows after them are the next to read (stage->next_row).
 */
int64
gpu_stage_next_into(SortStage *stage, uint64 first, char *dest, Size dest_bytes,
					Size *need, char **why)
{
	uint64		n = first < stage->nrows ? Min(stage->nrows - first, stage->chunk_rows) : 0;
	Size		bytes = 0;
	uint64		m;

	*need = 0;
	if (n == 0)
		return 0;
	if (!stage_ok(gpu_staged_download(stage->host_lengths, stage->lengths + first,
									  sizeof(uint32) * n), why))
		return -1;
	if (MAXALIGN(stage->host_lengths[0]) > dest_bytes)
	{
		*need = MAXALIGN(stage->host_lengths[0]);
		return 0;
	}
	if (!fit_row(stage, MAXALIGN(stage->host_lengths[0]), why))
		return -1;
	for (m = 0; m < n; m++)
	{
		Size		len = MAXALIGN(stage->host_lengths[m]);

		if (bytes + len > Min(stage->chunk_bytes, dest_bytes))
			break;
		stage->host_places[m] = bytes;
		bytes += len;
	}
	if (!stage_ok(gpu_staged_upload(stage->chunk_places, stage->host_places,
									sizeof(uint64) * m), why) ||
		!stage_ok(gs_gather_rows(gpu.ctx, stage->chunk, stage->arena, stage->places + first,
								 stage->chunk_places, stage->lengths + first, m), why) ||
		!stage_ok(gpu_staged_download(dest, stage->chunk, bytes), why))
		return -1;
	stage->next_row = first + m;
	return (int64) m;
}

static int64
stage_next(SortStage *stage, int part, char **rows, char **why)
{
	Size		need;
	int64		n;

	Assert(part == 0);			/* a backend's engine holds one part */
	for (;;)
	{
		if (stage->host_bytes < stage->chunk_bytes)
		{
			if (stage->host)
				pfree(stage->host);
			stage->host = palloc_extended(stage->chunk_bytes, MCXT_ALLOC_HUGE);
			stage->host_bytes = stage->chunk_bytes;
		}
		n = gpu_stage_next_into(stage, stage->next_row, stage->host, stage->host_bytes,
								&need, why);
		if (n != 0 || need == 0)
			break;
		/* a row larger than the buffers: they grow to hold it */
		if (!fit_row(stage, need, why))
			return -1;
	}
	*rows = stage->host;
	return n;
}

static bool
stage_sort(SortStage *stage, int group_words, int64 *rows, char **why)
{
	if (!gpu_stage_sort(stage, group_words, why))
		return false;
	*rows = (int64) stage->nrows;
	return true;
}

/* A backend's engine holds one part, whatever it may. */
static SortStage *
stage_begin(Size host_bytes, double expected_rows, double expected_bytes, int nparts,
			char **why)
{
	return gpu_stage_begin(host_bytes, expected_bytes, why);
}

uint64
gpu_stage_rows(SortStage *stage)
{
	return stage->nrows;
}

/* (The reset callback then finds nothing left to free.) */
void
gpu_stage_end(SortStage *stage)
{
	stage_free_all(stage);
}

const RowStager gpu_stager = {
	.begin = stage_begin,
	.add = stage_add,
	.sort = stage_sort,
	.next = stage_next,
	.end = gpu_stage_end,
};

#endif							/* GPUSORT_WITH_CUDA */
