/*-------------------------------------------------------------------------
 *
 * host_stager.c
 *	  For tests: the CPU engine holding the rows of an input larger than a
 *	  GpuSort node's memory budget in the backend's own memory, as the GPU
 *	  engine holds them in device memory (row_seams.h's RowStager), so that
 *	  the node's paths for held inputs run on machines without a GPU.
 *
 * Only gpusort.debug_hold_rows turns it on: it takes whatever the input
 * brings, beyond any budget, but where gpusort.debug_hold_stores says how
 * many stores each process may add: it declines the later ones, as a GPU
 * short of device memory would.  It lays each store out as the GPU engine
 * does (the blocks back to back, each row's place and length, tail
 * included: stored_rows_places), orders the rows by their key words and
 * then by arrival (under a Unique, keeping the first of each group alone),
 * and hands them back a buffer at a time, MAXALIGNed back to back.
 *
 * The participants of a parallel query share one input as they share one
 * that the GPU service holds (begin_shared, join): each store a process
 * adds is written to a file of a file set in shared memory that the
 * leader made, and the leader reads them all back when it sorts.  Another
 * participant that seeks in it reads them back and sorts them too, the
 * same files in the same order, so that its order is the leader's.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "lib/sort_template.h"
#include "miscadmin.h"
#include "storage/buffile.h"
#include "storage/dsm.h"
#include "storage/sharedfileset.h"
#include "utils/memutils.h"

#include "engine/engine.h"
#include "settings.h"

typedef struct SortStage SortStage;

/* The bytes of rows handed back at a time (or one row, if larger). */
#define HOST_CHUNK_BYTES	(64 * 1024)

typedef struct HostRow
{
	uint64		key[HELD_ROW_WORDS];
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
	bool		sorted;
	uint64		next;			/* once sorted: the next row to hand back */
	char	   *chunk;
	Size		chunk_size;

	/* one input of a parallel query's participants (NULL: this one's own) */
	dsm_segment *seg;			/* its file set's, mapped for the session */
	SharedFileSet *fileset;
	int			participant;	/* 0: the leader, else its worker's number
								 * plus one */
	int			nfiles;			/* the stores this process wrote */
	int			nstores;		/* the stores this process added */
	MemoryContextCallback detach;
};

static SortStage *
host_begin(Size host_bytes, double expected_rows, double expected_bytes, int nparts,
		   char **why)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "GpuSort rows held on the host",
											  ALLOCSET_DEFAULT_SIZES);
	SortStage  *stage = MemoryContextAllocZero(cxt, sizeof(SortStage));

	stage->cxt = cxt;
	return stage;
}

/* A store's file in the shared file set: its participant, its number. */
static void
store_file_name(char *name, int participant, int number)
{
	snprintf(name, MAXPGPATH, "held.%d.%d", participant, number);
}

/* The key words of the stores held: as many in each, at most HELD_ROW_WORDS. */
static void
take_key_words(SortStage *stage, int nwords)
{
	if ((stage->nwords != 0 && stage->nwords != nwords) || nwords > HELD_ROW_WORDS)
		elog(ERROR, "GpuSort held stores of %d and %d key words", stage->nwords,
			 nwords);
	stage->nwords = nwords;
}

/*
 * Appends a row to the rows held (arrival: as they come), its key words,
 * its bytes where they lie.
 */
static void
append_row(SortStage *stage, const uint64 *key, char *bytes, uint32 length)
{
	HostRow    *row;

	if (stage->nrows == stage->capacity)
	{
		stage->capacity = Max(1024, 2 * stage->capacity);
		stage->rows = stage->rows ?
			repalloc_huge(stage->rows, sizeof(HostRow) * stage->capacity) :
			MemoryContextAllocHuge(stage->cxt, sizeof(HostRow) * stage->capacity);
	}
	row = &stage->rows[stage->nrows];
	memcpy(row->key, key, sizeof(uint64) * stage->nwords);
	row->arrival = stage->nrows++;
	row->bytes = bytes;
	row->length = length;
}

/*
 * A new file of the shared set for a store's rows: how many and their key
 * words, then each row's key, length and bytes (write_row).
 */
static BufFile *
store_file(SortStage *stage, const StoredRows *rows)
{
	char		name[MAXPGPATH];
	BufFile    *file;
	uint32		header[2] = {rows->nrows, (uint32) rows->nwords};

	store_file_name(name, stage->participant, stage->nfiles++);
	file = BufFileCreateFileSet(&stage->fileset->fs, name);
	BufFileWrite(file, header, sizeof(header));
	return file;
}

static void
write_row(BufFile *file, uint64 *key, int nwords, char *bytes, uint32 length)
{
	BufFileWrite(file, key, sizeof(uint64) * nwords);
	BufFileWrite(file, &length, sizeof(uint32));
	BufFileWrite(file, bytes, length);
}

static void
read_exactly(BufFile *file, void *into, size_t size)
{
	if (BufFileRead(file, into, size) != size)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("GpuSort could not read a held store back from its temporary file")));
}

/* The leader: every store that the participants wrote, as rows held. */
static void
read_stores(SortStage *stage)
{
	char		name[MAXPGPATH];

	/* the leader is 0, each worker its number plus one */
	for (int participant = 0; participant <= max_worker_processes; participant++)
	{
		for (int number = 0;; number++)
		{
			BufFile    *file;
			uint32		header[2];

			store_file_name(name, participant, number);
			file = BufFileOpenFileSet(&stage->fileset->fs, name, O_RDONLY, true);
			if (file == NULL)
				break;
			read_exactly(file, header, sizeof(header));
			take_key_words(stage, (int) header[1]);
			for (uint32 i = 0; i < header[0]; i++)
			{
				uint64		key[HELD_ROW_WORDS];
				uint32		length;
				char	   *bytes;

				CHECK_FOR_INTERRUPTS();
				read_exactly(file, key, sizeof(uint64) * stage->nwords);
				read_exactly(file, &length, sizeof(uint32));
				bytes = MemoryContextAllocHuge(stage->cxt, Max(length, 1));
				read_exactly(file, bytes, length);
				append_row(stage, key, bytes, length);
			}
			BufFileClose(file);
		}
	}
}

static bool
host_add(SortStage *stage, const StoredRows *rows, char **why)
{
	Size	   *block_places;
	uint64	   *places;
	uint32	   *lengths;
	Size		bytes;
	char	   *arena;
	int			block = 0;
	BufFile    *file;

	if (gpusort_debug_hold_stores > 0 && stage->nstores >= gpusort_debug_hold_stores)
	{
		*why = psprintf("it holds %d stores of this process, as many as "
						"gpusort.debug_hold_stores allows", stage->nstores);
		return false;
	}
	stage->nstores++;
	block_places = palloc(sizeof(Size) * Max(rows->nblocks, 1));
	places = palloc(sizeof(uint64) * Max(rows->nrows, 1));
	lengths = palloc(sizeof(uint32) * Max(rows->nrows, 1));
	bytes = stored_rows_block_places(rows, 0, block_places);
	arena = MemoryContextAllocHuge(stage->cxt, Max(bytes, 1));
	take_key_words(stage, rows->nwords);
	for (int b = 0; b < rows->nblocks; b++)
		memcpy(arena + block_places[b], rows->block_start[b], rows->block_used[b]);
	stored_rows_places(rows, block_places, 0, rows->nrows, &block, places, lengths);
	/* shared: to a file, which the leader reads back; else kept here */
	file = stage->fileset ? store_file(stage, rows) : NULL;
	for (uint32 i = 0; i < rows->nrows; i++)
	{
		uint64		key[HELD_ROW_WORDS];

		CHECK_FOR_INTERRUPTS();
		if (places[i] + lengths[i] > bytes)
			elog(ERROR, "GpuSort held row %u lies outside its store's blocks", i);
		for (int w = 0; w < rows->nwords; w++)
			key[w] = rows->keys[w][i];
		if (file)
			write_row(file, key, rows->nwords, arena + places[i], lengths[i]);
		else
			append_row(stage, key, arena + places[i], lengths[i]);
	}
	if (file)
	{
		BufFileClose(file);
		pfree(arena);
	}
	pfree(block_places);
	pfree(places);
	pfree(lengths);
	return true;
}

/* What the comparator needs: the key words, and its calls, to answer cancels. */
typedef struct HostSortArg
{
	int			nwords;
	uint32		calls;
} HostSortArg;

static int
host_row_cmp(const HostRow *a, const HostRow *b, HostSortArg *arg)
{
	if ((++arg->calls & 0xFFFF) == 0)
		CHECK_FOR_INTERRUPTS();
	for (int w = 0; w < arg->nwords; w++)
		if (a->key[w] != b->key[w])
			return a->key[w] < b->key[w] ? -1 : 1;
	return a->arrival < b->arrival ? -1 : a->arrival > b->arrival;
}

#define ST_SORT host_sort_rows
#define ST_ELEMENT_TYPE HostRow
#define ST_COMPARE_ARG_TYPE HostSortArg
#define ST_COMPARE(a, b, arg) host_row_cmp(a, b, arg)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/*
 * Keeps the first row of each group of equal first group_words key words
 * alone, as the GPU engine does.
 */
static void
keep_group_heads(SortStage *stage, int group_words)
{
	uint64		kept = 0;

	for (uint64 i = 0; i < stage->nrows; i++)
		if (i == 0 || memcmp(stage->rows[i].key, stage->rows[kept - 1].key,
							 sizeof(uint64) * group_words) != 0)
			stage->rows[kept++] = stage->rows[i];
	stage->nrows = kept;
}

static bool
host_sort(SortStage *stage, int group_words, int64 *rows, char **why)
{
	HostSortArg arg = {0};

	if (stage->fileset)
		read_stores(stage);
	arg.nwords = stage->nwords;
	host_sort_rows(stage->rows, stage->nrows, &arg);
	if (group_words > 0)
		keep_group_heads(stage, group_words);
	stage->next = 0;
	stage->sorted = true;
	*rows = (int64) stage->nrows;
	return true;
}

/* A participant of a shared input sorts it as the leader did, once. */
static bool
host_seek(SortStage *stage, int part, int64 row, char **why)
{
	int64		rows;

	if (!stage->sorted && !host_sort(stage, 0, &rows, why))
		return false;
	stage->next = (uint64) row;
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

/*
 * The shared file set's segment goes with the stage's memory, on error
 * too (it is mapped for the session, not the resource owner); the files
 * go once every participant has let go of it.
 */
static void
detach_share(void *arg)
{
	SortStage  *stage = arg;

	if (stage->seg)
		dsm_detach(stage->seg);
	stage->seg = NULL;
}

/* A stage on the shared file set of segment seg, mapped for the session. */
static SortStage *
share_stage(dsm_segment *seg, Size host_bytes)
{
	SortStage  *stage = host_begin(host_bytes, 0, 0, 0, NULL);

	dsm_pin_mapping(seg);
	stage->seg = seg;
	stage->fileset = dsm_segment_address(seg);
	stage->participant = IsParallelWorker() ? ParallelWorkerNumber + 1 : 0;
	stage->detach.func = detach_share;
	stage->detach.arg = stage;
	MemoryContextRegisterResetCallback(stage->cxt, &stage->detach);
	return stage;
}

static SortStage *
host_begin_shared(Size host_bytes, double expected_rows, double expected_bytes, int nparts,
				  StageShare *share, char **why)
{
	dsm_segment *seg = dsm_create(sizeof(SharedFileSet), 0);
	SortStage  *stage;

	SharedFileSetInit(dsm_segment_address(seg), seg);
	stage = share_stage(seg, host_bytes);
	memset(share, 0, sizeof(StageShare));
	share->words[0] = dsm_segment_handle(seg);
	return stage;
}

static SortStage *
host_join(Size host_bytes, const StageShare *share, char **why)
{
	dsm_segment *seg = dsm_attach((dsm_handle) share->words[0]);
	SortStage  *stage;

	if (seg == NULL)
	{
		*why = "the leader's held input is gone";
		return NULL;
	}
	stage = share_stage(seg, host_bytes);
	SharedFileSetAttach(stage->fileset, seg);
	return stage;
}

const RowStager host_stager = {
	.begin = host_begin,
	.add = host_add,
	.sort = host_sort,
	.next = host_next,
	.end = host_end,
	.begin_shared = host_begin_shared,
	.join = host_join,
	.seek = host_seek,
};
