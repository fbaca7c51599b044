/*-------------------------------------------------------------------------
 *
 * row_seams.h
 *	  Where a sort engine meets the rows a GpuSort node collects: the early
 *	  upload of the rows as they come (RowStoreUploader), and the holding of
 *	  an input larger than the node's memory budget (RowStager).
 *
 * The row store itself is the node's (node/rows/row_store.h); an engine that
 * holds rows sees a full store through StoredRows, a flat view that the
 * node makes of it, and lays its tuples out with the functions below.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ROW_SEAMS_H
#define ROW_SEAMS_H

#include "postgres.h"

#include "access/htup_details.h"

/* The most 64-bit words of the key of a row that an engine holds. */
#define HELD_KEY_WORDS	4

/*
 * And the most words past them that finish a text key's order (its
 * strxfrm() or ICU key's next bytes, made for the stores held alone: the
 * tie words), which an engine orders the rows the others leave tied by.
 */
#define HELD_TIE_WORDS	4
#define HELD_ROW_WORDS	(HELD_KEY_WORDS + HELD_TIE_WORDS)

/*
 * A full store of rows as an engine that holds them sees it: the rows the
 * engines order (those led by a NULL are not here), the words of their keys
 * (the most significant first; the keys order the rows completely, word by
 * word as unsigned integers), and the blocks of tuples that hold them, in
 * the order the store filled them.
 */
typedef struct StoredRows
{
	uint32		nrows;
	const MinimalTuple *rows;	/* the rows, in row order */
	int			nwords;			/* words of each row's key: of the key
								 * columns, then any tie words */
	const uint64 *keys[HELD_ROW_WORDS]; /* word w of each row's key, in row
										 * order */
	Size		tail;			/* bytes that follow each tuple's MAXALIGNed
								 * end and go with it (its key, for the
								 * node's order of the rows that tie), or
								 * 0 */
	int			nblocks;
	char	   *const *block_start; /* each block's first tuple */
	const Size *block_used;		/* the bytes of each that hold tuples */
} StoredRows;

/*
 * The place of each block of rows when the blocks are laid back to back
 * from offset from, each from a multiple of 8 (into block_places[], nblocks
 * of them); returns the offset past the last.
 */
extern Size stored_rows_block_places(const StoredRows *rows, Size from,
									 Size *block_places);

/*
 * For rows first..first+n-1, each one's place (block_places[] of its block
 * plus its offset there) and length (with its tail).  *block is where the
 * walk through the blocks is (0 at the first row).
 */
extern void stored_rows_places(const StoredRows *rows, const Size *block_places,
							   uint32 first, uint32 n, int *block,
							   uint64 *places, uint32 *lengths);

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

/*
 * Holds the rows of an input larger than the node's memory budget away from
 * the host (the GPU engine's holds them in device memory), a full store at a
 * time, orders them by their keys, and hands them back in order.  Only for
 * keys that order the rows completely, of as many words in every store;
 * rows led by a NULL are not its.  begin() returns NULL with the
 * reason when it cannot start (host_bytes: what it may use of host memory),
 * or when the rows that the input is expected to bring in all
 * (expected_rows of expected_bytes on the host, the planner's estimate; 0
 * if not known) would not fit beside what it holds for other sorts, which
 * it then keeps room for (an engine may judge the bytes anew from the
 * first store's rows);
 * add() takes the rows of a full store; sort() orders all it holds, and
 * says in *rows how many it hands back (with group_words > 0, the node is
 * under a Unique of the keys of those leading words, fewer than all the
 * words of a key of several: the engine may hand back only the first row
 * of each group of rows whose first group_words words are equal, or all of
 * them);
 * next() points *rows at the next rows in order, MAXALIGNed MinimalTuples
 * back to back in a buffer of its own valid until the next call, and returns
 * how many (0 after the last).  They return false (next(): -1) with the
 * reason when they fail; end() frees everything, and so does a reset of the
 * memory context that was current at begin().
 *
 * An engine may hold an input in parts (the GPU service: one on each of
 * several GPU processes, each store going to one of them; begin()'s
 * nparts: how many, 0 for as many as the rows expected need): parts(),
 * where set, says how many once sort() has ordered each part on its own
 * (and where note is not NULL, *note: what EXPLAIN ANALYZE tells of them,
 * or NULL), and next() reads the rows of one part (0 .. parts - 1) in
 * order, its buffer valid until the next call for that part; the node
 * merges the parts.  Without parts(), the input is one part, 0.
 */
struct SortStage;

/*
 * What the processes of a parallel query need to add rows to one input
 * held for them all: the engine's own handle, in the query's shared memory.
 */
typedef struct StageShare
{
	uint64		words[5];
} StageShare;

typedef struct RowStager
{
	struct SortStage *(*begin) (Size host_bytes, double expected_rows,
								double expected_bytes, int nparts, char **why);
	bool		(*add) (struct SortStage *stage, const StoredRows *rows, char **why);
	bool		(*sort) (struct SortStage *stage, int group_words, int64 *rows,
						 char **why);
	int64		(*next) (struct SortStage *stage, int part, char **rows,
							 char **why);
	int			(*parts) (struct SortStage *stage, char **note);
	void		(*end) (struct SortStage *stage);

	/*
	 * Optional: one input held for several processes (a parallel query's
	 * participants).  begin_shared() is begin() in the process that will
	 * sort and read the rows (the leader), writing into *share what the
	 * others need to join(): a stage that only adds, whose end() lets go
	 * of nothing.  The owner sorts once every process has added its rows.
	 */
	struct SortStage *(*begin_shared) (Size host_bytes, double expected_rows,
									   double expected_bytes, int nparts,
									   StageShare *share, char **why);
	struct SortStage *(*join) (Size host_bytes, const StageShare *share,
							   char **why);

	/*
	 * Optional, with begin_shared: the rows of part p that next() hands back
	 * are from the row-th in order (from 0) on.  Once the owner has sorted
	 * a shared input, every process that joined it may seek and read it too,
	 * each from where it sought (a parallel window's slices: window_calc.c).
	 */
	bool		(*seek) (struct SortStage *stage, int part, int64 row, char **why);
} RowStager;

#endif							/* ROW_SEAMS_H */
