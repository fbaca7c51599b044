/*-------------------------------------------------------------------------
 *
 * host_stager.c
 *	  For tests: the CPU engine holding the rows of an input larger than a
 *	  GpuSort node's memory budget in the backend's own memory, as the GPU
 *	  engine holds them in device memory (row_seams.h's RowStager), so that
 *	  the node's paths for held inputs run on machines without a GPU.
 *
 * Only gpusort.debug_hold_rows turns it on: it takes whatever the input
 * brings, beyond any budget.  It lays each store out as the GPU engine
 * does (the blocks back to back, each row's place and length, tail
 * included: stored_rows_places), orders the rows by their key words and
 * then by arrival, and hands them back a buffer at a time, MAXALIGNed
 * back to back.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/sort_template.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "engine/engine.h"

typedef struct SortStage SortStage;

/* The bytes of rows handed back at a time (or one row, if larger). */
#define HOST_CHUNK_BYTES	(64 * 1024)

typedef struct HostRow
{
	uint64		key[HELD_KEY_WORDS];
	uint64		arrival;
	char	   *bytes;
	uint32		length;
} HostRow;

struct SortStage
{
	MemoryContext cxt;
	int			nwords;
	HostRow    *rows;
	uint64		nrows;
	uint64		capacity;
	uint64		next;			/* once sorted: the next row to hand back */
	char	   *chunk;
	Size		chunk_size;
};

static SortStage *
host_begin(Size host_bytes, double expected_bytes, int nparts, char **why)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "GpuSort rows held on the host",
											  ALLOCSET_DEFAULT_SIZES);
	SortStage  *stage = MemoryContextAllocZero(cxt, sizeof(SortStage));

	stage->cxt = cxt;
	return stage;
}

static bool
host_add(SortStage *stage, const StoredRows *rows, char **why)
{
	Size	   *block_places = palloc(sizeof(Size) * Max(rows->nblocks, 1));
	uint64	   *places = palloc(sizeof(uint64) * Max(rows->nrows, 1));
	uint32	   *lengths = palloc(sizeof(uint32) * Max(rows->nrows, 1));
	Size		bytes = stored_rows_block_places(rows, 0, block_places);
	char	   *arena = MemoryContextAllocHuge(stage->cxt, Max(bytes, 1));
	int			block = 0;

	if (stage->nwords != 0 && stage->nwords != rows->nwords)
		elog(ERROR, "GpuSort held stores of %d and %d key words", stage->nwords,
			 rows->nwords);
	stage->nwords = rows->nwords;
	for (int b = 0; b < rows->nblocks; b++)
		memcpy(arena + block_places[b], rows->block_start[b], rows->block_used[b]);
	stored_rows_places(rows, block_places, 0, rows->nrows, &block, places, lengths);
	if (stage->nrows + rows->nrows > stage->capacity)
	{
		stage->capacity = Max(stage->nrows + rows->nrows, 2 * stage->capacity);
		stage->rows = stage->rows ?
			repalloc_huge(stage->rows, sizeof(HostRow) * stage->capacity) :
			MemoryContextAllocHuge(stage->cxt, sizeof(HostRow) * stage->capacity);
	}
	for (uint32 i = 0; i < rows->nrows; i++)
	{
		HostRow    *row = &stage->rows[stage->nrows];

		CHECK_FOR_INTERRUPTS();
		if (places[i] + lengths[i] > bytes)
			elog(ERROR, "GpuSort held row %u lies outside its store's blocks", i);
		for (int w = 0; w < rows->nwords; w++)
			row->key[w] = rows->keys[w][i];
		row->arrival = stage->nrows++;
		row->bytes = arena + places[i];
		row->length = lengths[i];
	}
	pfree(block_places);
	pfree(places);
	pfree(lengths);
	return true;
}

static int
host_row_cmp(const HostRow *a, const HostRow *b, int *nwords)
{
	for (int w = 0; w < *nwords; w++)
		if (a->key[w] != b->key[w])
			return a->key[w] < b->key[w] ? -1 : 1;
	return a->arrival < b->arrival ? -1 : a->arrival > b->arrival;
}

#define ST_SORT host_sort_rows
#define ST_ELEMENT_TYPE HostRow
#define ST_COMPARE_ARG_TYPE int
#define ST_COMPARE(a, b, arg) host_row_cmp(a, b, arg)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

static bool
host_sort(SortStage *stage, char **why)
{
	host_sort_rows(stage->rows, stage->nrows, &stage->nwords);
	stage->next = 0;
	return true;
}

static int64
host_next(SortStage *stage, int part, char **rows, char **why)
{
	Size		used = 0;
	int64		n = 0;

	while (stage->next < stage->nrows)
	{
		HostRow    *row = &stage->rows[stage->next];
		Size		size = MAXALIGN(row->length);

		if (n > 0 && used + size > HOST_CHUNK_BYTES)
			break;
		if (used + size > stage->chunk_size)
		{
			Size		grown = Max(Max(HOST_CHUNK_BYTES, used + size), 2 * stage->chunk_size);

			stage->chunk = stage->chunk ? repalloc(stage->chunk, grown) :
				MemoryContextAlloc(stage->cxt, grown);
			stage->chunk_size = grown;
		}
		memcpy(stage->chunk + used, row->bytes, row->length);
		used += size;
		stage->next++;
		n++;
	}
	*rows = stage->chunk;
	return n;
}

static void
host_end(SortStage *stage)
{
	MemoryContextDelete(stage->cxt);
}

const RowStager host_stager = {
	.begin = host_begin,
	.add = host_add,
	.sort = host_sort,
	.next = host_next,
	.end = host_end,
};
