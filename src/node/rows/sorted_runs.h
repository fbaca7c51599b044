/*-------------------------------------------------------------------------
 *
 * sorted_runs.h
 *	  Sorted runs of rows on temporary tapes, and their merge: the spill of
 *	  a GpuSort node whose input outgrows its memory budget.
 *
 * A run is written in sorted order, each row marked with whether it has a
 * merge key: the first word of its leading engine key where that word
 * orders rows as the comparators do in every run (an exact key, a byte
 * prefix or an abbreviated key made the same way in each run), else none;
 * where the leading key is exact, followed by the words of the sort keys
 * after it that are exact (up to MERGE_KEY_WORDS, as far as the row has no
 * NULL in them; a key of two words may leave its second out), so that a
 * composite order such as (date, int8, int4) or (int4, numeric(15,2)) is
 * merged on its keys alone.  The key itself is not written:
 * the merge makes it again from the row it reads back (the key columns'
 * values, key_column_encode).  The merge compares the words that both rows
 * have, and PostgreSQL's comparators from the first sort key that they do
 * not both have a word of, so its order is Sort's whatever the keys were.
 *
 * The runs live in one LogicalTapeSet (PostgreSQL's own temporary files:
 * temp_tablespaces, temp_file_limit, log_temp_files, removal on error), each
 * row in the bytes tuplesort writes for it, and each run's tape ending
 * within a row of a full block (the rows after are held in memory), so that
 * the runs need no more disk than Sort's tapes.  Runs are merged in one pass
 * on the way out; when there are more on tape than the memory budget can
 * hold read buffers for, the smallest are first merged into one.  The last
 * run may stay in memory and join the merge from there.
 *
 * Rows that are their one sort key, exact and of one word (a keys-only
 * store), are runs of keys: each run's tape holds its keys alone, 8 bytes
 * a row against the 12 of tuplesort's datum sort, written a block at a
 * time; its rows of NULL, which are all alike, are only counted, and come
 * first or last.  Rows of equal keys are equal, so the merge is a heap of
 * keys, with no comparator, and hands back each row as its key.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SORTED_RUNS_H
#define SORTED_RUNS_H

#include "postgres.h"

#include "access/htup_details.h"
#include "utils/logtape.h"

#include "node/rows/row_keys.h"
#include "node/rows/tie_order.h"

typedef struct RunCursor RunCursor;

/* The most words of a merge key. */
#define MERGE_KEY_WORDS		4

/* A row's merge key: nwords words (0: it has none). */
typedef struct MergeKey
{
	int			nwords;
	uint64		words[MERGE_KEY_WORDS];
} MergeKey;

/*
 * The last run, left in memory where it is merged with runs on tapes: its
 * rows in order; the rows at keyed_first .. keyed_first + nkeyed - 1 have
 * merge keys, keys[perm[pos - keyed_first]] (keys NULL: none has).
 */
typedef struct SortedMemoryRun
{
	/* rows NULL: a run of keys, its keyed rows' keys[perm[0 .. nkeyed - 1]] */
	MinimalTuple *rows;
	int64		nrows;
	const uint64 *keys;
	const uint32 *perm;
	int64		keyed_first;
	int64		nkeyed;
} SortedMemoryRun;

/*
 * A run whose rows come in order from elsewhere (the parts of an input that
 * an engine held): next(arg) returns its next row, valid until the next
 * call, or NULL after the last; keyed: every row has a merge key (none is
 * led by a NULL).  Such runs join only a merge of runs none of which is on
 * tape.
 */
typedef struct SortedRunSource
{
	MinimalTuple (*next) (void *arg);
	void	   *arg;
	bool		keyed;
} SortedRunSource;

typedef struct SortedRuns
{
	MemoryContext cxt;			/* holds everything below */
	LogicalTapeSet *tapes;
	TieOrder   *ties;			/* the comparators of all sort keys */
	int			key_firstkey;	/* the sort key that rows of equal merge
								 * keys of all columns are compared from */
	const KeyColumn *columns;	/* the key columns whose keys, made again
								 * from the rows, are merge keys' words */
	int			ncolumns;
	bool		keys_only;		/* runs of keys, rows that are their key */
	bool		nulls_first;	/* keys only: where the rows of NULL go */
	int64		null_rows;		/* keys only: the rows of NULL, not on tape */

	/* the runs, in the order written */
	struct SortedRun *runs;
	int			nruns;
	int			maxruns;
	SortedMemoryRun memory;		/* the run in memory, if rows is set */
	LogicalTape *writing;		/* the run being written, or NULL */
	int64		writing_rows;	/* rows on its tape */
	int64		written;		/* bytes on its tape */
	int64		to_come;		/* its rows not put yet */
	struct RunWindow *window;	/* its rows not on the tape yet */
	Size		held_bytes;		/* memory of the held runs */
	Size		held_limit;		/* beyond which they are merged to tape */
	bool		flushing;		/* they are being merged */

	/* the merge */
	RunCursor  *cursors;		/* one per run being merged */
	int		   *tree;			/* rows: a tree of losers over the cursors
								 * (tree[0] the winner), -1 for none */
	int			nleaves;		/* its leaves: the cursors */
	struct KeyEntry *key_heap;	/* keys only: their next keys, so */
	int64		nulls_left;		/* keys only: rows of NULL not returned */
	int			nheap;			/* keys only: the heap's entries */
	int			last;			/* cursor whose row was returned last */
	int64		merged;			/* rows returned */

	/* EXPLAIN ANALYZE */
	int			runs_written;	/* runs, those that merges made not
								 * counted */
	int			early_merges;	/* runs made by merging others */
	int64		disk_blocks;	/* most blocks the tapes held */
	Size		merge_memory;	/* read buffers and rows of the merge */
	bool		memory_run;		/* the last run stayed in memory */
} SortedRuns;

/*
 * Starts the runs of rows that ties describes; columns (the store's first
 * ncolumns key columns, at most MERGE_KEY_WORDS, which must outlive the
 * runs: the leading one, then exact keys of one word of the sort keys after
 * it) make their merge keys; held_limit: the bytes of a run's rows held
 * back before they are written (the run's window).  keys_only:
 * the rows are their one exact key of a word (columns[0]'s), runs of keys
 * whose rows of NULL come first where nulls_first.
 */
extern void sorted_runs_begin(SortedRuns *runs, MemoryContext parent,
							  TieOrder *ties, int key_firstkey,
							  const KeyColumn *columns, int ncolumns,
							  Size held_limit, bool keys_only, bool nulls_first);
/* Starts a run of nrows rows. */
extern void sorted_runs_start_run(SortedRuns *runs, int64 nrows);

/*
 * Writes the next row of the run; haskey: its leading value is not NULL and
 * its key, key_column_encode's, is comparable with those of other runs (and
 * so are those of the other merge columns, which are exact).
 */
extern void sorted_runs_put(SortedRuns *runs, MinimalTuple tuple, bool haskey);
extern void sorted_runs_end_run(SortedRuns *runs);

/*
 * Runs of keys: writes a run of nkeyed rows, keys[perm[0 .. nkeyed - 1]] in
 * order (ascending), and nnulls rows of NULL.
 */
extern void sorted_runs_put_keys(SortedRuns *runs, const uint64 *keys,
								 const uint32 *perm, int64 nkeyed, int64 nnulls);

/* Adds the last run, which stays in memory until the merge ends. */
extern void sorted_runs_add_memory_run(SortedRuns *runs,
									   const SortedMemoryRun *run);

/*
 * Readies the runs for the merge, first merging the smallest into one while
 * there are more runs than buffers bytes hold read buffers (a block each)
 * for.
 */
extern void sorted_runs_add_source_run(SortedRuns *runs,
									   const SortedRunSource *source);
extern void sorted_runs_merge_begin(SortedRuns *runs, Size buffers);

/* The next row in order, or NULL; valid until the next call. */
extern MinimalTuple sorted_runs_merge_next(SortedRuns *runs);

/*
 * Runs of keys: the next row in order, its key (or *isnull); false at the
 * end.
 */
extern bool sorted_runs_merge_next_key(SortedRuns *runs, uint64 *key, bool *isnull);

/* Closes the tapes and frees everything (also on rescans). */
extern void sorted_runs_end(SortedRuns *runs);

#endif							/* SORTED_RUNS_H */
