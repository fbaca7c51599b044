/*-------------------------------------------------------------------------
 *
 * sorted_runs.c
 *	  Sorted runs of rows on temporary tapes, and their merge (sorted_runs.h).
 *
 * On a tape, each row is what tuplesort writes for it (writetup_heap, with
 * no trailing length): a 32-bit word, the length of the tuple's body, then
 * the body, the MinimalTuple less its first MINIMAL_TUPLE_DATA_OFFSET bytes
 * (its length and padding).  The word's top bit says whether the row has a
 * merge key, which is made again from the row as it is read back.  The
 * rows of a run are counted, so no word marks its end.
 *
 * A tape's last block takes a whole block of the file however little of it
 * the run fills.  tuplesort puts many runs on each of a few tapes, and loses
 * little there; a run here has a tape of its own, and would lose half a
 * block a run.  So the last rows of a run (its length is known at its
 * start) go to its tape through a window that holds back the last block's
 * worth of them: when the run ends, the rows that fit in the block being
 * filled are written, and the rest are held in memory as a run of their
 * own, each row with its merge key.  Held runs join the
 * merge from memory, and early merges take them in (they need no read
 * buffer); when they take more than a sixteenth of the budget (at least 8
 * blocks) while runs are written, they are merged into a run on tape,
 * whose own last rows are held again.
 *
 * The merge keeps one cursor per run, each holding the run's next row, in a
 * tree of losers ordered by merge key and then by the comparators.  A run may
 * also come from a source (SortedRunSource: a part of an input that an
 * engine held and sorted), whose rows are read as the merge needs them.
 *
 * A run of keys (sorted_runs.h) is its keys on a tape, back to back, with
 * no length word, and no window: the half block its last block loses on
 * average is far less than the 4 bytes a row more that tuplesort writes
 * for a datum.  Its cursor reads its keys a batch at a time, and the heap
 * holds the cursors' next keys themselves.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "commands/tablespace.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "node/rows/sorted_runs.h"

/* Rows between interrupt checks while runs are merged. */
#define MERGE_CHECK_ROWS	4096

/* A row's word on tape: the length of its body, and this if it has a key. */
#define RUN_ROW_KEYED		((uint32) 1 << 31)

/* The bytes of a row on tape. */
#define TAPE_ROW_BYTES(tuple) \
	(sizeof(uint32) + (tuple)->t_len - MINIMAL_TUPLE_DATA_OFFSET)

/*
 * The bytes of data a tape block holds: logtape.c's TapeBlockPayloadSize, a
 * block less its trailer of two block numbers.  Only how full the runs' last
 * blocks are depends on it.
 */
#define TAPE_BLOCK_DATA		((Size) (BLCKSZ - 2 * sizeof(int64)))

/*
 * The rows at the end of a run that go through the window: enough to fill a
 * block, as a row takes at least 8 bytes on tape.  The rows before them go
 * straight to the tape.
 */
#define WINDOW_ROWS			((int64) (TAPE_BLOCK_DATA / 8 + 1))

/* Keys a cursor of a run of keys on tape reads at once. */
#define KEY_BATCH			128

/* Keys written to a tape at once: a block's worth. */
#define KEY_WRITE_BATCH		((int) (TAPE_BLOCK_DATA / sizeof(uint64)))

/* An entry of the heap of a merge of runs of keys: a cursor's next key. */
typedef struct KeyEntry
{
	uint64		key;
	int			cursor;
} KeyEntry;

/* A row held in memory, with the first word of its merge key. */
typedef struct HeldRow
{
	MinimalTuple tuple;
	bool		haskey;
	uint64		key;
} HeldRow;

typedef struct SortedRun
{
	LogicalTape *tape;			/* NULL: the rows are in memory, or come
								 * from a source */
	const SortedRunSource *source;	/* where they come from, or NULL */
	HeldRow    *held;			/* rows held back from a tape's last block
								 * (one allocation with their tuples), or
								 * NULL: the store's run or a tape */
	Size		held_size;		/* bytes of that allocation */
	int64		rows;
} SortedRun;

/* A row of the window: its copy in the window's buffer. */
typedef struct WindowRow
{
	Size		offset;
	bool		haskey;
} WindowRow;

/*
 * The rows of the run being written that are not on its tape yet, copied,
 * in order: rows[first .. first + nrows - 1], at offsets in buf below used.
 */
typedef struct RunWindow
{
	char	   *buf;
	Size		size;			/* of buf */
	Size		used;
	WindowRow  *rows;
	int			first;
	int			nrows;
	int			maxrows;
	Size		bytes;			/* that the rows take on tape */
} RunWindow;

struct RunCursor
{
	LogicalTape *tape;			/* NULL: a run in memory, or a source's */
	const SortedRunSource *source;	/* a source's run: it */
	const HeldRow *held;		/* a held run: its rows */
	int64		pos;			/* a run in memory: its next row */
	int64		left;			/* rows not read yet */
	MergeKey	key;
	MinimalTuple tuple;			/* the run's current row */
	Size		space;			/* allocated for tuple */
	bool		ended;			/* no row left: the current one is none */
	uint64	   *keys;			/* a run of keys on tape: keys read */
	int			nkeys;
	int			keypos;			/* the next of them */
};

void
sorted_runs_begin(SortedRuns *runs, MemoryContext parent, TieOrder *ties,
				  int key_firstkey, const KeyColumn *columns, int ncolumns,
				  Size held_limit, bool keys_only, bool nulls_first)
{
	MemoryContext oldcxt;

	memset(runs, 0, sizeof(SortedRuns));
	runs->cxt = AllocSetContextCreate(parent, "GpuSort sorted runs",
									  ALLOCSET_DEFAULT_SIZES);
	runs->ties = ties;
	runs->key_firstkey = key_firstkey;
	Assert(ncolumns >= 1 && ncolumns <= MERGE_KEY_WORDS);
	runs->columns = columns;
	runs->ncolumns = ncolumns;
	runs->keys_only = keys_only;
	runs->nulls_first = nulls_first;
	runs->held_limit = held_limit;
	runs->window = MemoryContextAllocZero(runs->cxt, sizeof(RunWindow));
	runs->maxruns = 16;
	runs->runs = MemoryContextAlloc(runs->cxt, sizeof(SortedRun) * runs->maxruns);
	runs->last = -1;

	/* temp_tablespaces, as tuplesort does before it makes its tapes */
	PrepareTempTablespaces();
	oldcxt = MemoryContextSwitchTo(runs->cxt);
	runs->tapes = LogicalTapeSetCreate(false, NULL, -1);
	MemoryContextSwitchTo(oldcxt);
}

/*
 * The merge key of a row read back or held, that has one: its key columns'
 * keys, as the run's, from word from on (the first may be at hand) up to
 * word to or the first NULL.
 */
static inline void
merge_key(SortedRuns *runs, MinimalTuple tuple, int from, int to, MergeKey *key)
{
	for (int c = from; c < to; c++)
	{
		bool		isnull;
		Datum		value = minimal_tuple_getattr(tuple, runs->columns[c].attno,
												  runs->ties->desc, &isnull);

		if (isnull)
		{
			Assert(c > 0);
			key->nwords = c;
			return;
		}
		key->words[c] = key_column_encode(&runs->columns[c], value);
	}
	key->nwords = to;
}

void
sorted_runs_start_run(SortedRuns *runs, int64 nrows)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(runs->cxt);

	Assert(runs->writing == NULL && runs->window->nrows == 0);
	runs->writing = LogicalTapeCreate(runs->tapes);
	runs->writing_rows = 0;
	runs->written = 0;
	runs->to_come = nrows;
	MemoryContextSwitchTo(oldcxt);
}

/* Writes a row to the tape of the run being written. */
static void
tape_write(SortedRuns *runs, MinimalTuple tuple, bool haskey)
{
	uint32		bodylen = tuple->t_len - MINIMAL_TUPLE_DATA_OFFSET;
	uint32		word = bodylen | (haskey ? RUN_ROW_KEYED : 0);
	MemoryContext oldcxt = MemoryContextSwitchTo(runs->cxt);	/* for the
																 * tape's buffer */

	if (bodylen & RUN_ROW_KEYED)
		elog(ERROR, "GpuSort row of %u bytes too large for a run", tuple->t_len);
	LogicalTapeWrite(runs->writing, (void *) &word, sizeof(word));
	LogicalTapeWrite(runs->writing, (char *) tuple + MINIMAL_TUPLE_DATA_OFFSET, bodylen);
	runs->writing_rows++;
	runs->written += sizeof(word) + bodylen;
	MemoryContextSwitchTo(oldcxt);
}

static inline MinimalTuple
window_front(RunWindow *window)
{
	return (MinimalTuple) (window->buf + window->rows[window->first].offset);
}

/* Writes the window's oldest row to the tape. */
static void
window_write_front(SortedRuns *runs)
{
	RunWindow  *window = runs->window;
	MinimalTuple tuple = window_front(window);

	tape_write(runs, tuple, window->rows[window->first].haskey);
	window->bytes -= TAPE_ROW_BYTES(tuple);
	window->first++;
	if (--window->nrows == 0)
		window->first = window->used = 0;
}

/*
 * Moves the window's rows to the start of its arrays, with room for one more
 * of len bytes.
 */
static void
window_make_room(SortedRuns *runs, Size len)
{
	RunWindow  *window = runs->window;
	Size		base = window->nrows > 0 ? window->rows[window->first].offset : window->used;

	if (base > 0)
		memmove(window->buf, window->buf + base, window->used - base);
	window->used -= base;
	for (int i = 0; i < window->nrows; i++)
	{
		window->rows[i] = window->rows[window->first + i];
		window->rows[i].offset -= base;
	}
	window->first = 0;
	if (window->used + len > window->size)
	{
		window->size = Max(2 * window->size, Max(window->used + len, 4 * BLCKSZ));
		window->buf = window->buf ? repalloc(window->buf, window->size) :
			MemoryContextAlloc(runs->cxt, window->size);
	}
	if (window->nrows == window->maxrows)
	{
		window->maxrows = Max(2 * window->maxrows, 256);
		window->rows = window->rows ?
			repalloc(window->rows, sizeof(WindowRow) * window->maxrows) :
			MemoryContextAlloc(runs->cxt, sizeof(WindowRow) * window->maxrows);
	}
}

void
sorted_runs_put(SortedRuns *runs, MinimalTuple tuple, bool haskey)
{
	RunWindow  *window = runs->window;
	Size		len = MAXALIGN(tuple->t_len);

	if (runs->to_come-- > WINDOW_ROWS)
	{
		/* not one of the last rows: straight to the tape */
		tape_write(runs, tuple, haskey);
		return;
	}
	if (TAPE_ROW_BYTES(tuple) > TAPE_BLOCK_DATA)
	{
		/* a row larger than a block ends none: it and the rows before go */
		while (window->nrows > 0)
			window_write_front(runs);
		tape_write(runs, tuple, haskey);
		return;
	}
	if (window->used + len > window->size ||
		window->first + window->nrows == window->maxrows)
		window_make_room(runs, len);
	memcpy(window->buf + window->used, tuple, tuple->t_len);
	window->rows[window->first + window->nrows].offset = window->used;
	window->rows[window->first + window->nrows].haskey = haskey;
	window->nrows++;
	window->used += len;
	window->bytes += TAPE_ROW_BYTES(tuple);

	/* rows that a block's worth of later rows follow are not the last block's */
	while (window->bytes - TAPE_ROW_BYTES(window_front(window)) >= TAPE_BLOCK_DATA)
		window_write_front(runs);
}

/* Adds a run, of the rows on a tape or in memory. */
static void
add_run(SortedRuns *runs, LogicalTape *tape, HeldRow *held, Size held_size,
		int64 rows)
{
	SortedRun  *run;

	if (runs->nruns == runs->maxruns)
	{
		runs->maxruns *= 2;
		runs->runs = repalloc(runs->runs, sizeof(SortedRun) * runs->maxruns);
	}
	run = &runs->runs[runs->nruns++];
	run->tape = tape;
	run->source = NULL;
	run->held = held;
	run->held_size = held_size;
	run->rows = rows;
}

void
sorted_runs_add_memory_run(SortedRuns *runs, const SortedMemoryRun *run)
{
	Assert(!runs->memory_run && (run->rows == NULL) == runs->keys_only);
	runs->memory = *run;
	runs->memory_run = true;
	if (runs->keys_only)
	{
		/* its keyed rows, from the first; those of NULL are counted */
		add_run(runs, NULL, NULL, 0, run->nkeyed);
		runs->null_rows += run->nrows - run->nkeyed;
	}
	else
		add_run(runs, NULL, NULL, 0, run->nrows);
	runs->runs_written++;
}

void
sorted_runs_add_source_run(SortedRuns *runs, const SortedRunSource *source)
{
	Assert(!runs->keys_only);
	add_run(runs, NULL, NULL, 0, -1);
	runs->runs[runs->nruns - 1].source = source;
	runs->runs_written++;
}

/* Makes the rows left in the window a held run, with their merge keys. */
static void
hold_window(SortedRuns *runs)
{
	RunWindow  *window = runs->window;
	Size		size = sizeof(HeldRow) * window->nrows;
	HeldRow    *held;
	char	   *tuples;

	for (int i = 0; i < window->nrows; i++)
		size += MAXALIGN(((MinimalTuple) (window->buf +
										  window->rows[window->first + i].offset))->t_len);
	held = MemoryContextAlloc(runs->cxt, size);
	tuples = (char *) held + sizeof(HeldRow) * window->nrows;
	for (int i = 0; i < window->nrows; i++)
	{
		WindowRow  *row = &window->rows[window->first + i];
		MinimalTuple tuple = (MinimalTuple) (window->buf + row->offset);

		held[i].tuple = (MinimalTuple) tuples;
		held[i].haskey = row->haskey;
		held[i].key = 0;
		if (row->haskey)
		{
			MergeKey	key = {0};

			merge_key(runs, tuple, 0, 1, &key);
			held[i].key = key.words[0];
		}
		memcpy(tuples, tuple, tuple->t_len);
		tuples += MAXALIGN(tuple->t_len);
	}
	add_run(runs, NULL, held, size, window->nrows);
	runs->held_bytes += size;
	window->first = window->nrows = 0;
	window->used = 0;
	window->bytes = 0;
}

static void flush_held(SortedRuns *runs);

/*
 * Ends the run being written: its tape's last block is filled with the rows
 * that fit in it, and the rows after them are held.
 */
static void
finish_run(SortedRuns *runs)
{
	RunWindow  *window = runs->window;
	Size		filled = runs->written % TAPE_BLOCK_DATA;
	Size		space = (runs->written > 0 && filled == 0) ? 0 : TAPE_BLOCK_DATA - filled;

	/* rows that would not fill the block are all held */
	if (window->bytes >= space)
		while (window->nrows > 0 && TAPE_ROW_BYTES(window_front(window)) <= space)
		{
			space -= TAPE_ROW_BYTES(window_front(window));
			window_write_front(runs);
		}
	if (window->nrows > 0)
		hold_window(runs);

	if (runs->writing_rows > 0)
	{
		/*
		 * Flush the run and give back its write buffer now: a buffer of one
		 * block is read from it, allocated only when the merge reads it, so
		 * that runs waiting for the merge hold no memory.
		 */
		LogicalTapeRewindForRead(runs->writing, BLCKSZ);
		add_run(runs, runs->writing, NULL, 0, runs->writing_rows);
	}
	else
		LogicalTapeClose(runs->writing);
	runs->writing = NULL;
	runs->disk_blocks = Max(runs->disk_blocks, LogicalTapeSetBlocks(runs->tapes));
	if (runs->held_bytes > runs->held_limit && !runs->flushing)
		flush_held(runs);
}

void
sorted_runs_end_run(SortedRuns *runs)
{
	runs->runs_written++;
	finish_run(runs);
}

/* Writes n keys to the tape of the run being written. */
static void
write_keys(SortedRuns *runs, const uint64 *keys, int n)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(runs->cxt);	/* for the
																 * tape's buffer */

	LogicalTapeWrite(runs->writing, (void *) keys, n * sizeof(uint64));
	runs->writing_rows += n;
	runs->written += n * sizeof(uint64);
	MemoryContextSwitchTo(oldcxt);
	CHECK_FOR_INTERRUPTS();
}

/*
 * Adds a key to the batch of *n keys being written, which goes to the tape
 * when it is a block's worth (the caller writes the last, partial batch).
 */
static inline void
batch_key(SortedRuns *runs, uint64 *batch, int *n, uint64 key)
{
	batch[(*n)++] = key;
	if (*n == KEY_WRITE_BATCH)
	{
		write_keys(runs, batch, *n);
		*n = 0;
	}
}

void
sorted_runs_put_keys(SortedRuns *runs, const uint64 *keys, const uint32 *perm,
					 int64 nkeyed, int64 nnulls)
{
	uint64		batch[KEY_WRITE_BATCH];
	int			n = 0;

	Assert(runs->keys_only);
	runs->null_rows += nnulls;
	sorted_runs_start_run(runs, nkeyed);
	for (int64 i = 0; i < nkeyed; i++)
		batch_key(runs, batch, &n, keys[perm[i]]);
	if (n > 0)
		write_keys(runs, batch, n);
	sorted_runs_end_run(runs);
}

/* A run of keys: its next key; false at its end. */
static inline bool
key_cursor_read(SortedRuns *runs, RunCursor *cursor, uint64 *key)
{
	if (cursor->left == 0)
		return false;
	cursor->left--;
	if (cursor->tape == NULL)
	{
		*key = runs->memory.keys[runs->memory.perm[cursor->pos++]];
		return true;
	}
	if (cursor->keypos == cursor->nkeys)
	{
		int			n = (int) Min(cursor->left + 1, KEY_BATCH);

		if (LogicalTapeRead(cursor->tape, cursor->keys, n * sizeof(uint64)) !=
			n * sizeof(uint64))
			elog(ERROR, "unexpected end of a GpuSort run");
		cursor->nkeys = n;
		cursor->keypos = 0;
	}
	*key = cursor->keys[cursor->keypos++];
	return true;
}

/* Moves the entry at i of the heap of keys down to its place. */
static void
key_sift_down(KeyEntry *heap, int n, int i)
{
	KeyEntry	entry = heap[i];

	for (;;)
	{
		int			child = 2 * i + 1;

		if (child >= n)
			break;
		if (child + 1 < n && heap[child + 1].key < heap[child].key)
			child++;
		if (entry.key <= heap[child].key)
			break;
		heap[i] = heap[child];
		i = child;
	}
	heap[i] = entry;
}

/* The merge of runs of keys: its next key; false at the end. */
static inline bool
key_merge_pop(SortedRuns *runs, uint64 *key)
{
	KeyEntry   *top = &runs->key_heap[0];

	if (runs->nheap == 0)
		return false;
	*key = top->key;
	if (!key_cursor_read(runs, &runs->cursors[top->cursor], &top->key))
		*top = runs->key_heap[--runs->nheap];
	key_sift_down(runs->key_heap, runs->nheap, 0);
	if (++runs->merged % MERGE_CHECK_ROWS == 0)
		CHECK_FOR_INTERRUPTS();
	return true;
}

/* A run in memory: its next row. */
static bool
memory_read(SortedRuns *runs, RunCursor *cursor)
{
	const SortedMemoryRun *mem = &runs->memory;
	int64		pos = cursor->pos;
	bool		haskey;

	if (cursor->left == 0)
		return false;
	cursor->pos++;
	if (cursor->held)
	{
		cursor->tuple = cursor->held[pos].tuple;
		haskey = cursor->held[pos].haskey;
		if (haskey)
			cursor->key.words[0] = cursor->held[pos].key;
	}
	else
	{
		cursor->tuple = mem->rows[pos];
		haskey = mem->keys && pos >= mem->keyed_first &&
			pos < mem->keyed_first + mem->nkeyed;
		if (haskey)
			cursor->key.words[0] = mem->keys[mem->perm[pos - mem->keyed_first]];
	}
	/* the words after the first, from the row */
	cursor->key.nwords = 0;
	if (haskey)
		merge_key(runs, cursor->tuple, 1, runs->ncolumns, &cursor->key);
	cursor->left--;
	return true;
}

/* A source's run: its next row. */
static bool
source_read(SortedRuns *runs, RunCursor *cursor)
{
	const SortedRunSource *source = cursor->source;

	cursor->tuple = source->next(source->arg);
	if (cursor->tuple == NULL)
		return false;
	cursor->key.nwords = 0;
	if (source->keyed)
		merge_key(runs, cursor->tuple, 0, runs->ncolumns, &cursor->key);
	return true;
}

/* Reads a cursor's next row; false at the end of its run. */
static bool
cursor_read(SortedRuns *runs, RunCursor *cursor)
{
	uint32		word;
	uint32		bodylen;
	Size		len;

	if (cursor->source)
		return source_read(runs, cursor);
	if (cursor->tape == NULL)
		return memory_read(runs, cursor);
	if (cursor->left == 0)
		return false;
	if (LogicalTapeRead(cursor->tape, &word, sizeof(word)) != sizeof(word))
		elog(ERROR, "unexpected end of a GpuSort run");
	bodylen = word & ~RUN_ROW_KEYED;
	len = (Size) bodylen + MINIMAL_TUPLE_DATA_OFFSET;
	if (len > cursor->space)
	{
		if (cursor->tuple)
			pfree(cursor->tuple);
		cursor->space = Max(len, 2 * cursor->space);
		cursor->tuple = MemoryContextAllocHuge(runs->cxt, cursor->space);
	}
	if (LogicalTapeRead(cursor->tape, (char *) cursor->tuple + MINIMAL_TUPLE_DATA_OFFSET,
						bodylen) != bodylen)
		elog(ERROR, "unexpected end of a GpuSort run");
	cursor->tuple->t_len = len;
	cursor->key.nwords = 0;
	if (word & RUN_ROW_KEYED)
		merge_key(runs, cursor->tuple, 0, runs->ncolumns, &cursor->key);
	cursor->left--;
	return true;
}

/* Compares the rows of two cursors, as Sort orders them. */
static inline int
compare_cursors(SortedRuns *runs, int a, int b)
{
	RunCursor  *ca = &runs->cursors[a];
	RunCursor  *cb = &runs->cursors[b];

	int			n = Min(ca->key.nwords, cb->key.nwords);

	for (int w = 0; w < n; w++)
		if (ca->key.words[w] != cb->key.words[w])
			return ca->key.words[w] < cb->key.words[w] ? -1 : 1;
	/* equal so far: the comparators, from the first key not compared */
	if (n == runs->ncolumns)
		return tie_order_compare(runs->ties, ca->tuple, cb->tuple, runs->key_firstkey);
	return tie_order_compare(runs->ties, ca->tuple, cb->tuple,
							 n == 0 ? 0 : runs->columns[n].keyno);
}

/*
 * Does cursor a's row come before cursor b's?  One at the end of its run
 * comes after all.
 */
static inline bool
cursor_before(SortedRuns *runs, int a, int b)
{
	if (runs->cursors[a].ended)
		return false;
	if (runs->cursors[b].ended)
		return true;
	return compare_cursors(runs, a, b) < 0;
}

/*
 * The merge is a tree of losers (Knuth, 5.4.1): each inner node 1 ..
 * nleaves - 1 keeps the cursor that lost the match played there, node j
 * over nodes 2j and 2j + 1, the cursors the leaves nleaves .. 2 nleaves - 1
 * below; tree[0] keeps the winner, the cursor of the smallest row.  A new
 * row of the winner is played up its leaf's path alone, one comparison a
 * node: half of what a binary heap's sifting makes.  (PostgreSQL's
 * lib/binaryheap.h, which calls its comparator through a pointer, made the
 * merge of 2M rows at a 1 MB budget 10% slower than an inlined heap: 575
 * against 636 ms, test/results/ab-merge-heap-cpu-2core-2026-11-25-83cd5ca.txt; the inlined
 * heap's sifting was then the first item of the profile of runs merged,
 * 11% of rank() over TPC-H's lineitem at 4 MB; this tree took that query
 * to 0.97 of its time, test/results/ab-loser-tree-cpu-2core-2026-11-28-64ac7b4.txt.)
 */
static int
tree_build(SortedRuns *runs, int node)
{
	int			a;
	int			b;

	if (node >= runs->nleaves)
		return node - runs->nleaves;
	a = tree_build(runs, 2 * node);
	b = tree_build(runs, 2 * node + 1);
	if (cursor_before(runs, b, a))
	{
		runs->tree[node] = a;
		return b;
	}
	runs->tree[node] = b;
	return a;
}

/* Plays cursor c's new row up from its leaf: the new winner. */
static void
tree_replay(SortedRuns *runs, int c)
{
	int		   *tree = runs->tree;

	for (int node = (c + runs->nleaves) / 2; node >= 1; node /= 2)
	{
		if (cursor_before(runs, tree[node], c))
		{
			int			loser = c;

			c = tree[node];
			tree[node] = loser;
		}
	}
	tree[0] = c;
}

/* Starts merging runs[first .. first + n - 1]. */
static void
merge_open(SortedRuns *runs, int first, int n)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(runs->cxt);	/* for the
																 * tapes' buffers */

	runs->cursors = MemoryContextAllocZero(runs->cxt, sizeof(RunCursor) * n);
	if (runs->keys_only)
		runs->key_heap = MemoryContextAlloc(runs->cxt, sizeof(KeyEntry) * n);
	else
		runs->tree = MemoryContextAlloc(runs->cxt, sizeof(int) * Max(n, 1));
	runs->nleaves = n;
	runs->nheap = 0;
	runs->last = -1;
	for (int i = 0; i < n; i++)
	{
		RunCursor  *cursor = &runs->cursors[i];

		cursor->tape = runs->runs[first + i].tape;
		cursor->source = runs->runs[first + i].source;
		cursor->held = runs->runs[first + i].held;
		cursor->left = runs->runs[first + i].rows;
		if (!runs->keys_only)
		{
			cursor->ended = !cursor_read(runs, cursor);
			continue;
		}
		if (cursor->tape)
			cursor->keys = palloc(sizeof(uint64) * KEY_BATCH);
		if (key_cursor_read(runs, cursor, &runs->key_heap[runs->nheap].key))
			runs->key_heap[runs->nheap++].cursor = i;
	}
	if (runs->keys_only)
	{
		for (int i = runs->nheap / 2 - 1; i >= 0; i--)
			key_sift_down(runs->key_heap, runs->nheap, i);
	}
	else
		runs->tree[0] = n == 0 ? -1 : tree_build(runs, 1);
	MemoryContextSwitchTo(oldcxt);
	runs->merge_memory = Max(runs->merge_memory,
							 MemoryContextMemAllocated(runs->cxt, true));
}

/* The merge's next row and its cursor, or NULL at the end. */
static RunCursor *
merge_pop(SortedRuns *runs)
{
	if (runs->last >= 0)
	{
		/* the row returned last is no longer needed: replace it */
		RunCursor  *cursor = &runs->cursors[runs->last];

		cursor->ended = !cursor_read(runs, cursor);
		tree_replay(runs, runs->last);
	}
	if (runs->tree[0] < 0 || runs->cursors[runs->tree[0]].ended)
	{
		runs->last = -1;
		return NULL;
	}
	runs->last = runs->tree[0];
	if (++runs->merged % MERGE_CHECK_ROWS == 0)
		CHECK_FOR_INTERRUPTS();
	return &runs->cursors[runs->last];
}

/* Closes the tapes of a finished merge of n runs from first. */
static void
merge_close(SortedRuns *runs, int first, int n)
{
	for (int i = 0; i < n; i++)
	{
		SortedRun  *run = &runs->runs[first + i];

		if (run->held)
		{
			runs->held_bytes -= run->held_size;
			pfree(run->held);
		}
		if (run->tape == NULL)
			continue;			/* the store's run: its rows are not ours */
		if (runs->cursors[i].tuple)
			pfree(runs->cursors[i].tuple);
		if (runs->cursors[i].keys)
			pfree(runs->cursors[i].keys);
		LogicalTapeClose(run->tape);
	}
	pfree(runs->cursors);
	if (runs->tree)
		pfree(runs->tree);
	if (runs->key_heap)
		pfree(runs->key_heap);
	runs->cursors = NULL;
	runs->tree = NULL;
	runs->key_heap = NULL;
	memmove(&runs->runs[first], &runs->runs[first + n],
			sizeof(SortedRun) * (runs->nruns - first - n));
	runs->nruns -= n;
}

/* A run's place in the order that sort_runs gives. */
static inline int
run_rank(const SortedRun *run)
{
	return run->held ? 0 : run->tape ? 1 : 2;
}

/*
 * qsort: the held runs first, then the runs on tape, the smallest first,
 * then the store's run.
 */
static int
compare_runs(const void *a, const void *b)
{
	const SortedRun *ra = (const SortedRun *) a;
	const SortedRun *rb = (const SortedRun *) b;

	if (run_rank(ra) != run_rank(rb))
		return run_rank(ra) - run_rank(rb);
	return (ra->rows > rb->rows) - (ra->rows < rb->rows);
}

/* Sorts the runs as compare_runs does; returns how many are held. */
static int
sort_runs(SortedRuns *runs)
{
	int			nheld = 0;

	qsort(runs->runs, runs->nruns, sizeof(SortedRun), compare_runs);
	while (nheld < runs->nruns && runs->runs[nheld].held)
		nheld++;
	return nheld;
}

/* Merges the first n runs into one. */
static void
merge_runs(SortedRuns *runs, int n)
{
	RunCursor  *cursor;
	int64		nrows = 0;

	for (int i = 0; i < n; i++)
		nrows += runs->runs[i].rows;
	merge_open(runs, 0, n);
	sorted_runs_start_run(runs, nrows);
	if (runs->keys_only)
	{
		uint64		batch[KEY_WRITE_BATCH];
		int			nkeys = 0;
		uint64		key;

		while (key_merge_pop(runs, &key))
			batch_key(runs, batch, &nkeys, key);
		if (nkeys > 0)
			write_keys(runs, batch, nkeys);
	}
	else
		while ((cursor = merge_pop(runs)) != NULL)
			sorted_runs_put(runs, cursor->tuple, cursor->key.nwords > 0);
	merge_close(runs, 0, n);
	finish_run(runs);
}

/* Merges the held runs into a run on tape (its last rows held again). */
static void
flush_held(SortedRuns *runs)
{
	int			nheld = sort_runs(runs);

	runs->flushing = true;
	merge_runs(runs, nheld);
	runs->flushing = false;
}

void
sorted_runs_merge_begin(SortedRuns *runs, Size buffers)
{
	/*
	 * the runs on tape whose read buffers, a block each (and a batch of keys
	 * for runs of keys), fit in buffers bytes
	 */
	Size		buffer = BLCKSZ + (runs->keys_only ? KEY_BATCH * sizeof(uint64) : 0);
	int			order = Max(2, (int) Min(buffers / buffer, (Size) INT_MAX / 2));

	for (;;)
	{
		int			nheld = sort_runs(runs);
		int			ntapes = 0;

		while (nheld + ntapes < runs->nruns && runs->runs[nheld + ntapes].tape)
			ntapes++;
		if (ntapes <= order)
			break;
		/* a source's rows are merged only at the end: its run has no tapes */
		Assert(runs->runs[0].source == NULL && runs->runs[runs->nruns - 1].source == NULL);

		/*
		 * Merge the smallest runs on tape into one, just enough of them, and
		 * the held runs, which need no read buffer.
		 */
		merge_runs(runs, nheld + Min(ntapes - order + 1, order));
		runs->early_merges++;
	}

	merge_open(runs, 0, runs->nruns);
	runs->merged = 0;
	runs->nulls_left = runs->null_rows;
}

MinimalTuple
sorted_runs_merge_next(SortedRuns *runs)
{
	RunCursor  *cursor = merge_pop(runs);

	return cursor ? cursor->tuple : NULL;
}

bool
sorted_runs_merge_next_key(SortedRuns *runs, uint64 *key, bool *isnull)
{
	/* the rows of NULL, all alike, before or after the keys */
	*isnull = runs->nulls_left > 0 && (runs->nulls_first || runs->nheap == 0);
	if (*isnull)
	{
		runs->nulls_left--;
		return true;
	}
	return key_merge_pop(runs, key);
}

void
sorted_runs_end(SortedRuns *runs)
{
	if (runs->cxt == NULL)
		return;
	LogicalTapeSetClose(runs->tapes);
	MemoryContextDelete(runs->cxt);
	runs->cxt = NULL;
}
