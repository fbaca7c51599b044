/*-------------------------------------------------------------------------
 *
 * row_store.c
 *	  Compact in-memory storage of the rows a GpuSort node collects: the
 *	  tuple blocks, the forming of tuples in them, the arrays of the rows
 *	  and their keys, and where a key column's value lies in a tuple.  The
 *	  keys themselves are row_keys.h's.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"

#include "node/rows/row_keys.h"
#include "node/rows/row_store.h"
#include "util/big_array.h"
#include "util/prefault.h"

/* Rows handed to the engine's early upload at a time. */
#define UPLOAD_ROWS			(256 * 1024)

#define FIRST_BLOCK_SIZE	(32 * 1024)
#define MAX_BLOCK_SIZE		(32 * 1024 * 1024)
#define AHEAD_BLOCK_SIZE	(4 * 1024 * 1024)	/* blocks allocated one ahead */
#define MIN_CAPACITY		1024
#define FIRST_CAPACITY		(64 * 1024) /* rows allocated at most before the
										 * input shows it has more */
#define DRAIN_BYTES			(1024 * 1024)	/* tuples or keys handed over
											 * between frees */
#define BLOCK_PREFETCH_BYTES 4096	/* how far ahead tuples are written */
#define TUPLE_AHEAD			4		/* a page's tuples read ahead */

void
row_store_init(RowStore *store, MemoryContext parent, int ncolumns,
			   const KeyColumn *columns, MemoryLedger *ledger, Size rowbytes,
			   double expected_rows, bool keys_only,
			   const RowStoreUploader *uploader)
{
	memset(store, 0, sizeof(RowStore));
	store->cxt = AllocSetContextCreate(parent, "GpuSort rows",
									   ALLOCSET_DEFAULT_SIZES);
	store->ncolumns = ncolumns;
	store->keys_only = keys_only;
	store->uploader = uploader;
	store->columns = MemoryContextAlloc(parent, sizeof(KeyColumn) * ncolumns);
	memcpy(store->columns, columns, sizeof(KeyColumn) * ncolumns);
	store->ledger = ledger;
	store->rowbytes = rowbytes;

	/*
	 * Start near the expected size, but no larger than FIRST_CAPACITY rows:
	 * the planner's estimate may be far off, and memory must follow the
	 * input that actually comes.  The arrays then double as rows arrive.
	 */
	store->capacity = (uint32) Max(MIN_CAPACITY,
								   Min(Min(expected_rows * 1.1, (double) FIRST_CAPACITY),
									   (double) (ledger->budget / rowbytes)));
	row_store_reset(store);
}

/* Memory of the store is being freed: stop mapping what is queued. */
static void
cancel_prefault(void *arg)
{
	prefault_cancel();
}

/* Charges bytes that the store takes to its ledger. */
static inline void
charge(RowStore *store, Size bytes)
{
	store->charged += bytes;
	memory_ledger_charge(store->ledger, bytes);
}

/*
 * Empties the store, keeping its settings.  The arrays are allocated again
 * by the first row added, so that a store given up for tuplesort holds no
 * memory while tuplesort runs.
 */
void
row_store_reset(RowStore *store)
{
	MemoryContextCallback *callback;

	MemoryContextReset(store->cxt);
	/* reset callbacks fire once: one for each generation of the store */
	callback = MemoryContextAlloc(store->cxt, sizeof(MemoryContextCallback));
	callback->func = cancel_prefault;
	callback->arg = NULL;
	MemoryContextRegisterResetCallback(store->cxt, callback);
	store->upload = NULL;		/* cancelled by the reset */
	store->rowarray = NULL;		/* unmapped by the reset */
	store->rows = NULL;
	store->nrows = 0;
	store->allocated = 0;
	store->nullrows = NULL;
	store->nnullrows = 0;
	store->nullcapacity = 0;
	for (int i = 0; i < store->ncolumns; i++)
		row_keys_reset(&store->columns[i]);
	store->blocks = NULL;
	store->nblocks = 0;
	store->maxblocks = 0;
	store->block = NULL;
	store->blockfree = 0;
	store->nextblock = NULL;
	store->blocksize = FIRST_BLOCK_SIZE;
	store->tupledata = 0;
	memory_ledger_release(store->ledger, store->charged);
	store->charged = 0;
}

/* Ends the engine's upload of the rows, if any: its job ran or never will. */
void
row_store_end_upload(RowStore *store)
{
	if (store->upload)
		store->uploader->end(store->upload);
	store->upload = NULL;
}

static inline bool
in_block(MinimalTuple tuple, const TupleBlock *block)
{
	return (char *) tuple >= block->start && (char *) tuple < block->end;
}

/*
 * Unmaps the key columns from the first'th on, and their bitmaps of NULLs:
 * nothing reads them once the rows are being handed over.
 */
static void
unmap_key_columns(RowStore *store, int first)
{
	for (int i = first; i < store->ncolumns; i++)
	{
		KeyColumn  *column = &store->columns[i];

		if (column->keyarray)
			big_array_unmap(column->keyarray);
		if (column->nulls)
			pfree(column->nulls);
		column->keys = NULL;
		column->nulls = NULL;
	}
}

/*
 * A keys-only store hands its keys over from the last, and shrinks the
 * column behind them, DRAIN_BYTES of keys at a time.
 */
static void
drain_keys(RowStore *store, RowStoreDrainFn fn, void *arg)
{
	KeyColumn  *column = &store->columns[0];
	const uint32 chunk = DRAIN_BYTES / sizeof(uint64);

	unmap_key_columns(store, 1);
	for (uint32 i = 0; i < store->nnullrows; i++)
		fn(NULL, -1, arg);
	for (uint32 r = store->nrows; r > 0; r--)
	{
		fn(NULL, r - 1, arg);
		if ((r - 1) % chunk == 0 && r > 1)
		{
			big_array_resize(column->keyarray, sizeof(uint64) * (r - 1));
			column->keys = (uint64 *) column->keyarray->data;
		}
	}
	unmap_key_columns(store, 0);
}

/*
 * Hands fn the rows and the rows led by NULLs of block that lie below limit,
 * from rows *r and *nullr on.
 */
static void
hand_rows_below(RowStore *store, const TupleBlock *block, const char *limit,
				uint32 *r, uint32 *nullr, RowStoreDrainFn fn, void *arg)
{
	for (; *r < store->nrows && in_block(store->rows[*r], block) &&
		 (char *) store->rows[*r] < limit; (*r)++)
		fn(store->rows[*r], *r, arg);
	for (; *nullr < store->nnullrows && in_block(store->nullrows[*nullr], block) &&
		 (char *) store->nullrows[*nullr] < limit; (*nullr)++)
		fn(store->nullrows[*nullr], -1, arg);
}

/*
 * The rows and the rows led by NULLs lie in the tuple blocks in input
 * order, so the rows of each block are the next ones of each array, in the
 * order of their addresses.  They are handed over DRAIN_BYTES of the block
 * at a time, and the pages behind them, of the block and of the array of
 * rows, go back to the kernel; a block is unmapped once its rows are gone.
 */
static void
drain_tuples(RowStore *store, RowStoreDrainFn fn, void *arg)
{
	uint32		r = 0;
	uint32		nullr = 0;

	unmap_key_columns(store, 0);
	if (store->nextblock)
		big_array_unmap(store->nextblock);
	store->nextblock = NULL;
	for (int b = 0; b < store->nblocks; b++)
	{
		const TupleBlock *block = &store->blocks[b];
		Size		done = 0;

		while (done < (Size) (block->end - block->start))
		{
			done = Min(done + DRAIN_BYTES, (Size) (block->end - block->start));
			hand_rows_below(store, block, block->start + done, &r, &nullr, fn, arg);
			big_array_discard(block->mapping, done);
			if (store->rowarray)
				big_array_discard(store->rowarray, sizeof(MinimalTuple) * r);
		}
		big_array_unmap(block->mapping);
	}
	Assert(r == store->nrows && nullr == store->nnullrows);
	if (store->rowarray)
		big_array_unmap(store->rowarray);
}

/*
 * Nothing freed here is kept for reuse, nor left to a helper thread to
 * unmap (big_array_unmap): what fn copies the rows into takes the memory
 * at once.  The mappings that earlier arrays left for reuse go first.
 */
void
row_store_drain(RowStore *store, RowStoreDrainFn fn, void *arg)
{
	/* nothing may read the arrays behind our back */
	prefault_cancel();
	row_store_end_upload(store);
	big_array_release_kept();

	if (store->keys_only)
		drain_keys(store, fn, arg);
	else
		drain_tuples(store, fn, arg);
	row_store_reset(store);
}

/* Memory the store holds now, in bytes. */
Size
row_store_memory(RowStore *store)
{
	Size		bytes = MemoryContextMemAllocated(store->cxt, true);

	if (store->rowarray)
		bytes += store->rowarray->bytes;
	for (int b = 0; b < store->nblocks; b++)
		bytes += store->blocks[b].mapping->bytes;
	if (store->nextblock)
		bytes += store->nextblock->bytes;
	for (int i = 0; i < store->ncolumns; i++)
		if (store->columns[i].keyarray)
			bytes += store->columns[i].keyarray->bytes;
	return bytes;
}

double
row_store_expected_bytes(const RowStore *store, double rows, int width)
{
	Size		tuple = store->keys_only ? 0 :
		MAXALIGN(SizeofMinimalTupleHeader + (Size) width) + store->tail;

	return rows * (double) (tuple + store->rowbytes);
}

/*
 * Allocates or enlarges an array of the store from old to capacity elements,
 * queueing its new part to be mapped ahead of the rows that will fill it.
 */
static void *
grow_array(RowStore *store, BigArray **array, Size width, uint32 old, uint32 capacity)
{
	if (*array == NULL)
		*array = big_array_create(store->cxt, width * capacity);
	else
		big_array_resize(*array, width * capacity);
	prefault_range((*array)->data + width * old, width * (capacity - old));
	return (*array)->data;
}

/* Makes room for more rows: the initial capacity first, then twice as many. */
static void
grow_rows(RowStore *store)
{
	uint32		old = store->allocated;
	uint32		capacity;

	if (old == 0)
		capacity = store->capacity;
	else
	{
		capacity = (uint32) Min((uint64) old * 2, (uint64) PG_UINT32_MAX);
		capacity = Max(Min(capacity, store->ledger->budget / store->rowbytes), old + 1);
	}
	/* the arrays may move: nothing queued may point into them */
	if (old > 0)
	{
		prefault_cancel();
		if (store->upload)
			store->uploader->pause(store->upload);
	}
	if (!store->keys_only)
		store->rows = grow_array(store, &store->rowarray, sizeof(MinimalTuple), old, capacity);
	for (int i = 0; i < store->ncolumns; i++)
	{
		KeyColumn  *column = &store->columns[i];

		column->keys = grow_array(store, &column->keyarray, sizeof(uint64), old, capacity);
		if (column->nulls)
		{
			column->nulls = repalloc_huge(column->nulls, capacity / 8 + 1);
			memset(column->nulls + old / 8 + 1, 0, capacity / 8 - old / 8);
		}
	}
	store->allocated = capacity;
}

/*
 * A new tuple block of size bytes, its pages queued to be mapped ahead of
 * its use.  It is a mapping of its own, which a helper thread can unmap
 * after the sort while the backend goes on (big_array_free).
 */
static BigArray *
new_block(RowStore *store, Size size)
{
	BigArray   *mapping = big_array_create(store->cxt, size);

	prefault_huge_pages(mapping->data, mapping->bytes);
	prefault_range(mapping->data, mapping->bytes);
	charge(store, mapping->bytes);
	return mapping;
}

/*
 * Makes a block the one tuples go into, noting it in the order of use.  Its
 * tuples start on a page, hence on a cache line.
 */
static void
use_block(RowStore *store, BigArray *mapping)
{
	char	   *start = mapping->data;

	if (store->nblocks == store->maxblocks)
	{
		store->maxblocks = Max(16, store->maxblocks * 2);
		store->blocks = store->blocks ?
			repalloc(store->blocks, sizeof(TupleBlock) * store->maxblocks) :
			MemoryContextAlloc(store->cxt, sizeof(TupleBlock) * store->maxblocks);
	}
	store->blocks[store->nblocks].mapping = mapping;
	store->blocks[store->nblocks].start = start;
	store->blocks[store->nblocks].end = start + mapping->bytes;
	store->nblocks++;
	store->block = start;
	store->blockfree = mapping->bytes;
}

/*
 * Bytes to skip at at, so that a tuple of size bytes that fits in a cache
 * line does not straddle two: reading it in sorted order then costs one
 * cache miss, not two.
 */
static inline Size
line_padding(const char *at, Size size)
{
	Size		offset = (uintptr_t) at % GPUSORT_CACHE_LINE;

	return (size <= GPUSORT_CACHE_LINE && offset + size > GPUSORT_CACHE_LINE) ?
		GPUSORT_CACHE_LINE - offset : 0;
}

/* The bytes of new blocks that allocate_tuple(store, len) would allocate. */
static Size
block_bytes_needed(RowStore *store, uint32 len)
{
	Size		size = MAXALIGN(len);
	Size		next;
	Size		ahead;

	if (line_padding(store->block, size) + size <= store->blockfree)
		return 0;				/* nearly always: a row's cost stops here */
	next = Min(store->blocksize * 2, MAX_BLOCK_SIZE);
	ahead = (next >= AHEAD_BLOCK_SIZE) ? big_array_bytes(next) : 0;
	if (store->nextblock && store->nextblock->bytes >= size)
		return ahead;
	return big_array_bytes(Max(store->blocksize, size)) + ahead;
}

/*
 * Allocates space for a tuple in the current block, starting a new one if
 * full.  Large blocks are allocated one ahead, so that the prefault threads
 * map the next block while the current one fills.
 */
static MinimalTuple
allocate_tuple(RowStore *store, uint32 len)
{
	Size		size = MAXALIGN(len);
	Size		pad = line_padding(store->block, size);
	MinimalTuple tuple;

	if (pad + size > store->blockfree)
	{
		Size		blocksize = Max(store->blocksize, size);

		if (store->nextblock && store->nextblock->bytes >= size)
			use_block(store, store->nextblock);
		else
			use_block(store, new_block(store, blocksize));
		store->blocksize = Min(store->blocksize * 2, MAX_BLOCK_SIZE);
		store->nextblock = NULL;
		if (store->blocksize >= AHEAD_BLOCK_SIZE)
			store->nextblock = new_block(store, store->blocksize);
		pad = 0;				/* blocks start on a line */
	}
	tuple = (MinimalTuple) (store->block + pad);
	store->block += pad + size;
	store->blockfree -= pad + size;
	store->tupledata += size;
	return tuple;
}

/*
 * The size of the MinimalTuple that heap_form_minimal_tuple would make of a
 * slot's values, and the offset of its data.
 */
static uint32
minimal_tuple_size(TupleTableSlot *slot, bool *hasnull, Size *hoff, Size *datalen)
{
	int			natts = slot->tts_tupleDescriptor->natts;

	slot_getallattrs(slot);
	*hasnull = false;
	for (int i = 0; i < natts; i++)
		*hasnull |= slot->tts_isnull[i];
	*hoff = MAXALIGN(SizeofMinimalTupleHeader + (*hasnull ? BITMAPLEN(natts) : 0));
	*datalen = heap_compute_data_size(slot->tts_tupleDescriptor, slot->tts_values,
									  slot->tts_isnull);
	return (uint32) (*hoff + *datalen);
}

/* Forms a MinimalTuple of the slot's values in place, as heap_form_minimal_tuple. */
static void
form_minimal_tuple(TupleTableSlot *slot, MinimalTuple tuple, uint32 len,
				   bool hasnull, Size hoff, Size datalen)
{
	memset(tuple, 0, len);
	tuple->t_len = len;
	HeapTupleHeaderSetNatts(tuple, slot->tts_tupleDescriptor->natts);
	tuple->t_hoff = hoff + MINIMAL_TUPLE_OFFSET;
	heap_fill_tuple(slot->tts_tupleDescriptor, slot->tts_values, slot->tts_isnull,
					(char *) tuple + hoff, datalen, &tuple->t_infomask,
					hasnull ? tuple->t_bits : NULL);
}

/*
 * Adds a row to the store: a heap tuple (htup, on page where it lies in a
 * buffer), or else the slot's row; desc describes either.  Returns false,
 * storing nothing, when the row would take the store over its budget
 * (unless beyond_budget) or over 2^32 - 1 rows.  Inlined into its callers,
 * so that each reads its kind of row without asking.
 */
static pg_attribute_always_inline bool
add_row(RowStore *store, TupleDesc desc, TupleTableSlot *slot, HeapTuple htup,
		Page page, bool beyond_budget)
{
	const char *data = NULL;
	uint32		len;
	uint32		room;
	bool		isnull;
	Datum		value;
	MinimalTuple tuple;
	bool		hasnull = false;
	Size		hoff = 0;
	Size		datalen = 0;
	Size		newblock;
	RowKeysTarget target;

	/*
	 * A scan returns a page's tuples in the order of their line pointers,
	 * and the first read of each misses the caches: ask for the one
	 * TUPLE_AHEAD line pointers on now, so that the misses overlap.  (A
	 * wrong guess costs nothing but the prefetch.  This stays here: GCC
	 * drops calls to a function whose only effect is a prefetch.)
	 */
	if (page)
	{
		OffsetNumber ahead = ItemPointerGetOffsetNumberNoCheck(&htup->t_self) + TUPLE_AHEAD;

		if (ahead <= PageGetMaxOffsetNumber(page))
			__builtin_prefetch(page + ItemIdGetOffset(PageGetItemId(page, ahead)));
	}
	value = row_keys_value(desc, slot, htup, &store->columns[0], &isnull);

	/*
	 * Tuples go straight into the store: heap and minimal tuples are copied,
	 * others are formed there, with no palloc in between.
	 */
	if (store->keys_only)
		len = 0;
	else if (htup)
	{
		data = (char *) htup->t_data + MINIMAL_TUPLE_OFFSET;
		len = htup->t_len - MINIMAL_TUPLE_OFFSET;
	}
	else if (TTS_IS_MINIMALTUPLE(slot))
	{
		MinimalTuple mtup = ExecFetchSlotMinimalTuple(slot, NULL);

		data = (char *) mtup;
		len = mtup->t_len;
	}
	else
		len = minimal_tuple_size(slot, &hasnull, &hoff, &datalen);

	/* (a tail, where kept, follows the tuple's MAXALIGNed end) */
	room = MAXALIGN(len) + store->tail;
	newblock = store->keys_only ? 0 : block_bytes_needed(store, room);
	if ((!beyond_budget &&
		 memory_ledger_lacks(store->ledger, newblock + store->rowbytes)) ||
		store->nrows + store->nnullrows >= PG_UINT32_MAX)
		return false;

	if (store->keys_only)
		tuple = NULL;			/* the key is the row */
	else
	{
		tuple = allocate_tuple(store, room);
		/* the hardware prefetcher stops at page boundaries: ask a page ahead */
		__builtin_prefetch(store->block + BLOCK_PREFETCH_BYTES, 1);
		if (data)
		{
			memcpy(tuple, data, len);
			tuple->t_len = len;
		}
		else
			form_minimal_tuple(slot, tuple, len, hasnull, hoff, datalen);
	}

	target.copied = 0;
	if (isnull)
	{
		/* rows led by a NULL are kept apart; with keys only, just counted */
		if (!store->keys_only)
		{
			if (store->nnullrows == store->nullcapacity)
			{
				store->nullcapacity = Max(MIN_CAPACITY, store->nullcapacity * 2);
				store->nullrows = store->nullrows ?
					repalloc_huge(store->nullrows, sizeof(MinimalTuple) * store->nullcapacity) :
					MemoryContextAllocHuge(store->cxt, sizeof(MinimalTuple) * store->nullcapacity);
			}
			store->nullrows[store->nnullrows] = tuple;
		}
		store->nnullrows++;
	}
	else
	{
		if (store->nrows == store->allocated)
			grow_rows(store);
		target.columns = store->columns;
		target.ncolumns = store->ncolumns;
		target.row = store->nrows;
		target.allocated = store->allocated;
		target.cxt = store->cxt;
		row_keys_add(&target, desc, slot, htup, tuple, data, value, isnull);
		if (!store->keys_only)
			store->rows[store->nrows] = tuple;
		store->nrows++;
		/* every UPLOAD_ROWS rows, the engine is handed those that came */
		if (store->uploader && store->nrows % UPLOAD_ROWS == 0)
			store->upload = store->uploader->rows(store->upload, store->ncolumns,
												  store->columns[0].keys,
												  (const uint64 *) store->rows,
												  store->nrows, store->allocated,
												  store->cxt);
	}
	/* what the row costs beyond its tuple, and the values copied for its keys */
	charge(store, store->rowbytes + target.copied);
	return true;
}

/* Adds the slot's row to the store (add_row). */
static pg_attribute_always_inline bool
add_slot(RowStore *store, TupleTableSlot *slot, bool beyond_budget)
{
	HeapTuple	htup = NULL;
	Page		page = NULL;

	if (TTS_IS_BUFFERTUPLE(slot))
	{
		Buffer		buffer = ((BufferHeapTupleTableSlot *) slot)->buffer;

		htup = ExecFetchSlotHeapTuple(slot, false, NULL);
		if (BufferIsValid(buffer))
			page = BufferGetPage(buffer);
	}
	else if (TTS_IS_HEAPTUPLE(slot))
		htup = ExecFetchSlotHeapTuple(slot, false, NULL);
	return add_row(store, slot->tts_tupleDescriptor, slot, htup, page, beyond_budget);
}

bool
row_store_add(RowStore *store, TupleTableSlot *slot)
{
	return add_slot(store, slot, false);
}

bool
row_store_add_beyond_budget(RowStore *store, TupleTableSlot *slot)
{
	return add_slot(store, slot, true);
}

/*
 * Adds a heap tuple that lies on page, in a buffer its caller holds pinned
 * (add_row): the rows of a scan read without a slot.
 */
bool
row_store_add_heap(RowStore *store, TupleDesc desc, HeapTuple htup, Page page)
{
	return add_row(store, desc, NULL, htup, page, false);
}

const KeyColumn *
row_store_exact_column(const RowStore *store, AttrNumber attno)
{
	for (int c = 0; c < store->ncolumns; c++)
	{
		const KeyColumn *column = &store->columns[c];

		if (column->attno == attno && column->word == 0)
			return column->codec->exact && column->xfrm == NULL ? column : NULL;
	}
	return NULL;
}

int
row_store_group_columns(const RowStore *store, int nkeys)
{
	int			c = 0;
	const KeyColumn *last;

	for (; c < store->ncolumns && store->columns[c].keyno < nkeys; c++)
		if (!store->columns[c].codec->exact || store->columns[c].xfrm != NULL)
			return 0;
	if (c == 0)
		return 0;
	last = &store->columns[c - 1];
	return last->keyno == nkeys - 1 && last->word == last->codec->words - 1 ? c : 0;
}

Size
row_store_block_used(const RowStore *store, int b)
{
	const TupleBlock *tb = &store->blocks[b];

	if (b == store->nblocks - 1 && store->block >= tb->start && store->block <= tb->end)
		return store->block - tb->start;
	return tb->end - tb->start;
}

void
row_store_view(const RowStore *store, StoredRows *view)
{
	char	  **starts = palloc(sizeof(char *) * Max(store->nblocks, 1));
	Size	   *used = palloc(sizeof(Size) * Max(store->nblocks, 1));

	for (int b = 0; b < store->nblocks; b++)
	{
		starts[b] = store->blocks[b].start;
		used[b] = row_store_block_used(store, b);
	}
	view->nrows = store->nrows;
	view->rows = store->rows;
	view->nwords = Min(store->ncolumns, HELD_KEY_WORDS);
	for (int w = 0; w < view->nwords; w++)
		view->keys[w] = store->columns[w].keys;
	view->tail = store->tail;
	view->nblocks = store->nblocks;
	view->block_start = starts;
	view->block_used = used;
}
