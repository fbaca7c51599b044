/*-------------------------------------------------------------------------
 *
 * row_store.h
 *	  Compact in-memory storage of the rows a GpuSort node collects.
 *
 * Tuples are copied as MinimalTuples, back to back, into large blocks (no
 * per-tuple allocation header), a tuple that fits in a cache line never
 * straddling two; the store keeps a pointer to each.  Rows
 * whose leading sort key is NULL are kept apart from the others, which are
 * the rows the sort engines order.  For each leading encoded sort key, the
 * store keeps a column of encoded keys (sort_keys.h) of the non-NULL-led
 * rows, with the column's range and its NULLs.
 *
 * The leading column and the tuple pointers are handed to the sort engine
 * as they grow (RowStoreUploader), so that the GPU has most of them before
 * the last row arrives.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ROW_STORE_H
#define ROW_STORE_H

#include "postgres.h"

#include "access/htup_details.h"
#include "executor/tuptable.h"
#include "storage/bufpage.h"

#include "keys/key_codec.h"
#include "util/big_array.h"
#include "util/cacheline.h"

/* One leading sort key of the rows that the engines sort. */
typedef struct KeyColumn
{
	AttrNumber	attno;			/* attribute in the input tuples */
	const KeyCodec *codec;		/* how its values become keys */
	int			word;			/* which of the key's words this column holds */
	int			keyno;			/* the sort key it belongs to (0: the first) */
	SortSupport prefix;			/* a prefix key's abbreviation, else NULL */
	const struct XfrmCollation *xfrm;	/* strxfrm() or ICU keys: their
										 * collation (keys hold references
										 * to the values until
										 * xfrm_make_keys) */
	bool		dropped;		/* prefix keys given up: they did not tell
								 * the rows apart (keys are then 0) */
	uint32		abbrev_next;	/* rows at which to ask that next */
	char	   *first;			/* bytes and strxfrm() keys: the start of
								 * the first value, or NULL before it */
	uint32		shared;			/* bytes every value so far starts with,
								 * at most KEY_SHARED_MAX */
	uint32		skipped;		/* bytes of each value the keys were made
								 * past (those all values share) */
	struct BigArray *keyarray;	/* holds keys */
	bool		descending;
	uint64	   *keys;			/* encoded keys of the rows (0 for NULL) */
	uint8	   *nulls;			/* bitmap of NULL keys, or NULL if none yet */
	uint64		min;			/* range of the non-NULL keys */
	uint64		max;
	int			walk_from;		/* heap tuples without NULLs: 1 + the first
								 * attribute of variable width before the
								 * column, from which its value is found;
								 * -1: found by heap_getattr; 0: not known
								 * yet */
	uint32		walk_offset;	/* where that attribute starts (unaligned) */
} KeyColumn;

/* A block of tuples, in the order the store filled them. */
typedef struct TupleBlock
{
	BigArray   *mapping;		/* its memory */
	char	   *start;			/* its tuples: the mapping's bytes, at hand */
	char	   *end;
} TupleBlock;

/*
 * Hands the rows to an engine while they are collected (engine.h installs
 * one): rows() is called as rows 0..nrows-1 have come (capacity: the length
 * of the arrays), and queues those it did not have, to be copied while the
 * store goes on; it returns the upload to pass to the next call, or NULL
 * when nothing is being uploaded.  Until pause() returns, the arrays must
 * not move; end() ends an upload that its job ran, or never will.  An upload
 * is cancelled when the store's memory context is reset.
 */
struct SortUpload;
typedef struct RowStoreUploader
{
	struct SortUpload *(*rows) (struct SortUpload *upload, int nkeys,
								const uint64 *keys, const uint64 *payload,
								uint32 nrows, uint32 capacity,
								MemoryContext cxt);
	void		(*pause) (struct SortUpload *upload);
	void		(*end) (struct SortUpload *upload);
} RowStoreUploader;

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
	Size		tuplebytes;		/* all blocks allocated so far */
	Size		tupledata;		/* bytes of the tuples in them */
	Size		rowbytes;		/* bytes each row costs beyond its tuple */
	Size		budget;			/* bytes the store and its sort may use */
} RowStore;

/*
 * Holds the rows of an input larger than the node's memory budget away from
 * the host (the GPU engine's holds them in device memory), a full store at a
 * time, orders them by the leading key column, and hands them back in
 * order.  Only for stores of one key column whose keys order the rows
 * completely; rows led by a NULL are not its.  begin() returns NULL with the
 * reason when it cannot start (host_bytes: what it may use of host memory),
 * or when the rows that the input is expected to bring in all
 * (expected_bytes, the planner's estimate; 0 if not known) would not fit
 * beside what it holds for other sorts, which it then keeps room for;
 * add() takes the non-NULL-led rows of a store; sort() orders all it holds;
 * next() points *rows at the next rows in order, MAXALIGNed MinimalTuples
 * back to back in a buffer of its own valid until the next call, and returns
 * how many (0 after the last).  They return false (next(): -1) with the
 * reason when they fail; end() frees everything, and so does a reset of the
 * memory context that was current at begin().
 */
struct SortStage;
typedef struct RowStager
{
	struct SortStage *(*begin) (Size host_bytes, double expected_bytes,
								char **why);
	bool		(*add) (struct SortStage *stage, const RowStore *store, char **why);
	bool		(*sort) (struct SortStage *stage, char **why);
	int64		(*next) (struct SortStage *stage, char **rows, char **why);
	void		(*end) (struct SortStage *stage);
} RowStager;

/*
 * Keys made after collection (strxfrm(), ICU): until then a key column
 * holds a reference to each value, a pointer into the stored tuple, or,
 * with KEY_REF_COPIED set, to a copy of the first KEY_REF_COPY_BYTES (for
 * ICU, of all) of a compressed or out-of-line value: strxfrm() keys are
 * checked after the sort, ICU's are not, so they are made from the whole
 * value.
 */
#define KEY_REF_COPY_BYTES	256
#define KEY_REF_COPIED		(UINT64CONST(1) << 63)

/* The most bytes of a shared start that keys are made past. */
#define KEY_SHARED_MAX	256

extern void row_store_init(RowStore *store, MemoryContext parent,
						   int ncolumns, const KeyColumn *columns,
						   Size budget, Size rowbytes, double expected_rows,
						   bool keys_only, const RowStoreUploader *uploader);
extern bool row_store_add(RowStore *store, TupleTableSlot *slot);
extern bool row_store_add_heap(RowStore *store, TupleDesc desc, HeapTuple htup,
							   Page page);
extern Size row_store_memory(RowStore *store);

/*
 * The bytes that rows rows of width bytes (the planner's estimates) would
 * take in the store, to compare with its budget before any row comes.
 */
extern double row_store_expected_bytes(const RowStore *store, double rows,
									   int width);

/*
 * Makes the keys of a bytes column again, past the start that all its
 * values share (URLs, paths), where that start is long enough to have made
 * the first keys poor.  desc describes the stored tuples.
 */
extern void row_store_rekey_shared(RowStore *store, KeyColumn *column,
								   TupleDesc desc);
extern void row_store_end_upload(RowStore *store);

/*
 * Hands every row to fn and empties the store, freeing its memory as it
 * goes, so that the rows and whatever fn copies them into never both hold
 * the whole input: fn gets a tuple, or in a keys-only store the row's
 * number in the key column (-1 for a row led by a NULL).
 */
typedef void (*RowStoreDrainFn) (MinimalTuple tuple, int64 keyrow, void *arg);
extern void row_store_drain(RowStore *store, RowStoreDrainFn fn, void *arg);

/*
 * For an engine that holds the rows (RowStager): the bytes of tuple block
 * b that hold tuples; the place of each block when they are laid back to
 * back from offset from, each from a multiple of 8 (into block_places[],
 * nblocks of them), and the offset past the last; and, for rows
 * first..first+n-1, each one's place (block_places[] of its block plus its
 * offset there) and length.  *block is where the walk through the blocks
 * is (0 at the first row).
 */
extern Size row_store_block_used(const RowStore *store, int b);
extern Size row_store_block_places(const RowStore *store, Size from, Size *block_places);
extern void row_store_places(const RowStore *store, const Size *block_places,
							 uint32 first, uint32 n, int *block,
							 uint64 *places, uint32 *lengths);
extern void row_store_reset(RowStore *store);

static inline bool
key_column_isnull(const KeyColumn *column, uint32 row)
{
	return column->nulls && (column->nulls[row / 8] & (1 << (row % 8)));
}

/*
 * The key of a value (not NULL) of a key column whose keys are made as the
 * rows come (not strxfrm() or ICU keys), from the value's first byte: what
 * the store keeps (add_row, which also gives prefix keys up), and what the
 * merge of sorted runs makes again from the rows it reads back.
 */
static inline uint64
key_column_encode(const KeyColumn *column, Datum value)
{
	if (column->prefix)
		return key_encode_prefix(column->codec, column->prefix, value,
								 column->descending);
	if (column->codec->source == KEY_PREFIX_NUMERIC)
		return key_encode_numeric(value, column->descending);
	if (!column->codec->exact)
		return key_encode_bytes(column->codec, value, column->descending, 0);
	return key_encode_word(column->codec, value, column->word, column->descending);
}

/* Fetches an attribute of a stored tuple, as heap_getattr does. */
static inline Datum
minimal_tuple_getattr(MinimalTuple tuple, int attno, TupleDesc desc,
					  bool *isnull)
{
	HeapTupleData htup;

	htup.t_len = tuple->t_len + MINIMAL_TUPLE_OFFSET;
	htup.t_data = (HeapTupleHeader) ((char *) tuple - MINIMAL_TUPLE_OFFSET);
	return heap_getattr(&htup, attno, desc, isnull);
}

#endif							/* ROW_STORE_H */
