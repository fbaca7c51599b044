/*-------------------------------------------------------------------------
 *
 * row_store.h
 *	  Compact in-memory storage of the rows a GpuSort node collects: the
 *	  tuples, and the arrays of their keys.
 *
 * Tuples are copied as MinimalTuples, back to back, into large blocks (no
 * per-tuple allocation header), a tuple that fits in a cache line never
 * straddling two; the store keeps a pointer to each.  Rows whose leading
 * sort key is NULL are kept apart from the others, which are the rows the
 * sort engines order.  For each leading encoded sort key, the store keeps a
 * column of encoded keys (keys/key_column.h) of the non-NULL-led rows,
 * which the row keys (row_keys.h) fill: this file stores the tuples and
 * grows the arrays; row_store_add takes a row, and has row_keys.h, which
 * knows nothing of the store, encode its keys.
 *
 * The leading column and the tuple pointers are handed to the sort engine
 * as they grow (engine/row_seams.h's RowStoreUploader), so that the GPU has
 * most of them before the last row arrives.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ROW_STORE_H
#define ROW_STORE_H

#include "postgres.h"

#include "access/htup_details.h"
#include "executor/tuptable.h"
#include "storage/bufpage.h"

#include "engine/row_seams.h"
#include "keys/key_column.h"
#include "node/rows/memory_ledger.h"
#include "util/big_array.h"
#include "util/cacheline.h"
#include "util/minimal_tuple.h"

/* A block of tuples, in the order the store filled them. */
typedef struct TupleBlock
{
	BigArray   *mapping;		/* its memory */
	char	   *start;			/* its tuples: the mapping's bytes, at hand */
	char	   *end;
} TupleBlock;

typedef struct RowStore
{
	MemoryContext cxt;			/* holds everything below */
	int			ncolumns;		/* key columns, the first leading */
	bool		keys_only;		/* keep the keys, not the tuples */
	KeyColumn  *columns;

	const RowStoreUploader *uploader;	/* or NULL */
	struct SortUpload *upload;	/* the engine's upload of these rows */
	struct BigArray *rowarray;	/* holds rows */
	MinimalTuple *rows;			/* rows whose leading key is not NULL */
	uint32		nrows;
	uint32		allocated;		/* length of rows and the key columns */
	uint32		capacity;		/* their length when first allocated */
	MinimalTuple *nullrows;		/* rows whose leading key is NULL */
	uint32		nnullrows;
	uint32		nullcapacity;

	TupleBlock *blocks;			/* the tuple blocks, in the order of use */
	int			nblocks;
	int			maxblocks;
	char	   *block;			/* free space of the current tuple block */
	Size		blockfree;
	BigArray   *nextblock;		/* the block after it, allocated ahead */
	Size		blocksize;		/* size of the next block */
	Size		tupledata;		/* bytes of the tuples in them */
	Size		rowbytes;		/* bytes each row costs beyond its tuple */
	Size		tail;			/* bytes kept after each tuple (from its
								 * MAXALIGNed end): its held key
								 * (spill_stage.c), or 0 */
	MemoryLedger *ledger;		/* the budget of the store and its sort,
								 * which it charges its rows and blocks */
	Size		charged;		/* what it charged there, released as it
								 * empties */
} RowStore;

extern void row_store_init(RowStore *store, MemoryContext parent,
						   int ncolumns, const KeyColumn *columns,
						   MemoryLedger *ledger, Size rowbytes, double expected_rows,
						   bool keys_only, const RowStoreUploader *uploader);
extern bool row_store_add(RowStore *store, TupleTableSlot *slot);

/*
 * The same whatever the budget: the one row that the engine holding the
 * rows takes from the store at once (spill.c).
 */
extern bool row_store_add_beyond_budget(RowStore *store, TupleTableSlot *slot);
extern bool row_store_add_heap(RowStore *store, TupleDesc desc, HeapTuple htup,
							   Page page);
extern Size row_store_memory(RowStore *store);

/*
 * The key column of the first word of attno's sort key where its keys are
 * exact and made as the rows come (not strxfrm() or ICU keys): equal words
 * are equal values in the sort's order; else NULL.
 */
extern const KeyColumn *row_store_exact_column(const RowStore *store, AttrNumber attno);

/*
 * The leading key columns that hold every word of the first nkeys sort
 * keys, each exact and made as the rows come (equal words are equal rows
 * by those keys): their number, or 0 where some word is not there.
 */
extern int	row_store_group_columns(const RowStore *store, int nkeys);

/*
 * The bytes that rows rows of width bytes (the planner's estimates) would
 * take in the store, to compare with its budget before any row comes.
 */
extern double row_store_expected_bytes(const RowStore *store, double rows,
									   int width);

/*
 * Hands every row to fn and empties the store, giving its memory back to
 * the kernel as it goes (a megabyte at a time, nothing kept for reuse), so
 * that the rows and whatever fn copies them into never both hold more than
 * that of the input: fn gets a tuple, or in a keys-only store the row's
 * number in the key column (-1 for a row led by a NULL).
 */
typedef void (*RowStoreDrainFn) (MinimalTuple tuple, int64 keyrow, void *arg);
extern void row_store_drain(RowStore *store, RowStoreDrainFn fn, void *arg);

/*
 * The bytes of tuple block b that hold tuples; and the store as an engine
 * that holds rows sees it (RowStager's add()), its arrays palloc'd, its
 * key columns (at most HELD_KEY_WORDS) the words of the rows' keys.
 */
extern Size row_store_block_used(const RowStore *store, int b);
extern void row_store_view(const RowStore *store, StoredRows *view);

extern void row_store_reset(RowStore *store);

/* Ends the engine's upload of the rows, if any: its job ran or never will. */
extern void row_store_end_upload(RowStore *store);

#endif							/* ROW_STORE_H */
