/*-------------------------------------------------------------------------
 *
 * window_calc.c
 *	  The values of the ranking window functions that a GpuSort computes in
 *	  place of a WindowAgg (window_plan.c), as it returns its sorted rows.
 *
 * Each row is compared with the first row of its partition and with the
 * first row of its peer group (equality is transitive, so the first row
 * stands for all), whatever path the rows come back by: sorted in memory,
 * merged from sorted runs, handed back by an engine that held them, or
 * tuplesort.  Where every column compared has an exact codec (int8, date,
 * numeric under a typmod, ...: keys equal exactly where the values are, by
 * the sort's equality), the rows are compared by their key words, made from
 * each row as it comes and kept for the first rows, with no tuple copied
 * and no operator called; else by the window's own equality operators, as
 * WindowAgg compares them.
 * row_number(), rank() and dense_rank() need nothing more.  percent_rank(),
 * cume_dist(), ntile() and count(*) need the size of the partition,
 * cume_dist() the end of the peer group, and an aggregate over the
 * partition all its rows: the partition is then read ahead into a
 * tuplestore within the node's memory budget, as WindowAgg buffers it;
 * cume_dist() reads on to the end of each peer group through a second read
 * pointer, and the aggregates (window_aggregate.c) read the partition
 * through a third before its first row is returned.  lag() by a constant
 * of at most LAG_KEPT_ROWS rows keeps the arguments of the rows before the
 * current one instead of reading the partition ahead; lead() and the other
 * functions that take another row's value read it through a pointer of
 * their own.
 *
 * The values follow windowfuncs.c: their types, ntile()'s buckets, its NULL
 * and its error.
 *
 * Below a Gather (WINDOW_SLICES, window_path.c), the participants' rows are
 * one input that the leader sorts (shared_stage.c), and each participant
 * takes slices of its sorted rows in turn: it returns the partitions that
 * start in its slice, reading on past the slice's end to the end of the
 * last, and from the row before the slice to skip the rest of a partition
 * begun before it.  Each partition is so computed whole, by one process.
 * Where the leader did not share the input, the first participant to ask
 * reads it all and computes every value, and the others return no row.
 *
 * A run condition (top-N per group) is checked on each row with its
 * values: once a row fails it, the rest of its partition is read past and
 * not returned (the functions it may use only grow within a partition, so
 * no later row would pass), and without PARTITION BY the scan ends.  The
 * node's filter, the WindowAgg's where it had one, is checked after it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

#include "keys/key_column.h"
#include "node/collect/memory.h"
#include "node/node_state.h"
#include "node/paths/runs/runs.h"
#include "node/paths/runs/share.h"
#include "node/plan/window.h"
#include "node/window/window_aggregate.h"
#include "node/window/window_calc.h"

/* lag() by at most this many rows keeps their arguments (kept_lag_value) */
#define LAG_KEPT_ROWS 64

/* A column that the window compares by its keys: its exact codec's part. */
typedef struct WindowKeyColumn
{
	AttrNumber	attno;			/* of the sorted row */
	int			word;			/* its first word in a row's keys */
	KeyPart		part;
} WindowKeyColumn;

/*
 * The frame of the aggregates and of last_value() and nth_value(): the
 * whole partition, or its rows up to the current one (ROWS), or to its
 * last peer (RANGE, GROUPS); or, for the aggregates, rows a constant
 * number before or after the current one at either end (ROWS BETWEEN 6
 * PRECEDING AND CURRENT ROW), whose head moves.
 */
typedef enum AggregateFrame
{
	FRAME_PARTITION,
	FRAME_TO_ROW,
	FRAME_TO_PEERS,
	FRAME_ROWS_OFFSETS
} AggregateFrame;

/* Which of a row's keys to make: its partition's, its order's, or all. */
typedef enum RowKeysWanted
{
	PARTITION_KEYS,
	PEER_KEYS,
	ALL_KEYS
} RowKeysWanted;

/* One window function, and ntile()'s count in the current partition. */
typedef struct WindowFuncState
{
	WindowFuncKind kind;
	WindowAggregate *agg;		/* an aggregate's (WINFUNC_AGGREGATE) */
	ExprState  *arg;			/* ntile()'s; lag()'s and lead()'s value */

	/*
	 * lag(), lead(), first_value(), last_value(), nth_value(): the row
	 * whose value they take (for lag() and lead() offset rows after the
	 * current one, before where negative; for nth_value() the offset-th) is
	 * read by a read pointer of their own, which has read shift_read rows
	 * of the partition, the last into shift_row
	 */
	int32		offset;
	ExprState  *fallback;		/* the default, over the current row */

	/*
	 * lag() by a few rows keeps the arguments of the rows before the
	 * current one instead (the partition is then not read ahead for it):
	 * of row pos, at lag_values[pos % (lag_rows + 1)], so that the one it
	 * returns stays while the current row's is kept
	 */
	int			lag_rows;		/* 0: not so */
	Datum	   *lag_values;
	bool	   *lag_nulls;
	int16		arg_len;
	bool		arg_byval;
	int			shift_pointer;
	int64		shift_read;
	TupleTableSlot *shift_row;
	TupleTableSlot *shift_args; /* its values, as the argument reads them */
	int32		ntile;			/* 0: its first row is still to come */
	int64		rows_per_bucket;
	int64		boundary;
	int64		remainder;
} WindowFuncState;

typedef struct WindowCalc
{
	NodeRowSource sorted_next;	/* the sorted rows, in order */
	int			nfuncs;
	WindowFuncState *funcs;
	TupleDesc	desc;			/* of a row read: the sorted row (with the
								 * values of the clauses below, for one over
								 * others) */
	int			nsorted;		/* its columns */
	TupleTableSlot *out;		/* the sorted row and the values */
	ExprContext *econtext;		/* the node's */
	ExprContext *eqcontext;		/* for the comparisons */
	ExprState  *partition_equal;	/* NULL: one partition */
	ExprState  *peer_equal;		/* NULL: no function needs peers, or all
								 * rows are */
	TupleTableSlot *partition_first;
	TupleTableSlot *peer_first;

	/*
	 * Compared by keys (nkeycolumns > 0): the partition's columns, then the
	 * order's where peers count; a row's keys are, for each column, a word
	 * that says whether it is NULL, then its codec's words.  The keys of the
	 * current row, of the first rows of its partition and peer group, and,
	 * buffered, of the next partition's first row and a row read ahead.
	 */
	int			nkeycolumns;
	WindowKeyColumn *keycolumns;
	int			partition_columns;	/* the first of them */
	int			partition_words;	/* and their words */
	int			nwords;
	uint64	   *row_keys;
	uint64	   *partition_keys;
	uint64	   *peer_keys;
	uint64	   *next_first_keys;
	uint64	   *ahead_keys;

	/* the partition read ahead, where a function needs its size */
	bool		buffered;
	bool		need_peer_end;	/* cume_dist() */
	int			naggregates;	/* aggregates over it */
	AggregateFrame frame;		/* which of its rows they read */
	int			frame_options;	/* FRAMEOPTION_ bits */
	int64		start_offset;	/* FRAME_ROWS_OFFSETS: n PRECEDING ... */
	int64		end_offset;
	int			aggregate_pointer;	/* the read pointer they read it by */
	int64		aggregate_read; /* and the rows it read */
	int			head_pointer;	/* a moving head's: the rows they took out */
	int64		aggregate_head;
	ExprContext *aggcontext;	/* and their arguments' context */
	ExprContext *shiftcontext;	/* lag()'s and lead()'s, for the row */
	TupleTableSlot *arg_slot;	/* a row as the functions' arguments read it */
	MemoryContext cxt;			/* the node's, for the rows read ahead */
	TupleTableSlot *current;	/* the row whose values are made */
	Tuplestorestate *partition;
	TupleTableSlot *read_slot;
	TupleTableSlot *ahead_slot;
	TupleTableSlot *next_first; /* the next partition's first row, or empty */
	bool		input_done;
	int64		partition_rows;

	/* the run condition (NULL: none), and where it stopped the rows */
	ExprState  *run_condition;
	bool		passed_over;	/* the rest of this partition is only read */
	bool		done;			/* no row is returned any more */

	/*
	 * A parallel window's slices (the node's slicing says how it reads
	 * them), in the clause that reads the node's rows: those rows
	 * (sorted_next reads through slice_next), the partition that no slice
	 * splits (of the clause of the fewest partition columns, which lead
	 * every clause's: its own, or its first columns), compared by keys or
	 * by slice_equal,
	 * the slice read (rows first up to end, the place of the next row read),
	 * whether its first partition started, and the partition kept to
	 * compare with, by its keys or a copy.
	 */
	NodeRowSource read_sorted;
	int			slice_columns;	/* the partition columns compared there */
	int			slice_words;	/* and their words */
	ExprState  *slice_equal;
	bool		slice_reading;
	bool		slice_emitting;
	bool		slice_have_last;
	int64		slice_first;
	int64		slice_end;
	int64		slice_pos;
	uint64	   *slice_row_keys;
	uint64	   *slice_last_keys;
	TupleTableSlot *slice_last;

	/* a clause over another: that one, whose rows with values it reads */
	struct WindowCalc *inner;

	/* the current row */
	bool		started;		/* a row of this scan returned */
	int64		pos;			/* its place in the partition, from 0 */
	int64		rank;
	int64		dense_rank;
	int64		peer_end;		/* buffered: the place after its last peer */
} WindowCalc;

/*
 * Compares the rows by their keys where every column compared has an exact
 * codec (the planner matched the window's equality with the sort's,
 * sorted_for_window): the partition's columns, then, where peers count,
 * the order's.
 */
static void
compare_by_keys(GpuSortState *state, WindowCalc *w, WindowAgg *clause,
				bool need_peers)
{
	int			ncolumns = clause->partNumCols + (need_peers ? clause->ordNumCols : 0);
	WindowKeyColumn *columns = palloc(sizeof(WindowKeyColumn) * Max(ncolumns, 1));
	int			nwords = 0;

	for (int i = 0; i < ncolumns; i++)
	{
		bool		part = i < clause->partNumCols;
		AttrNumber	attno = part ? clause->partColIdx[i] :
			clause->ordColIdx[i - clause->partNumCols];
		const KeyColumn *column = row_store_exact_column(&state->store, attno);

		if (column == NULL)
		{
			pfree(columns);
			return;
		}
		columns[i].attno = attno;
		columns[i].word = nwords;
		columns[i].part = column->part;
		nwords += 1 + column->codec->words;
		if (part)
		{
			w->partition_columns = i + 1;
			w->partition_words = nwords;
		}
	}
	w->nkeycolumns = ncolumns;
	w->keycolumns = columns;
	w->nwords = nwords;
	w->row_keys = palloc0(sizeof(uint64) * Max(nwords, 1));
	w->partition_keys = palloc0(sizeof(uint64) * Max(nwords, 1));
	w->peer_keys = palloc0(sizeof(uint64) * Max(nwords, 1));
	w->next_first_keys = palloc0(sizeof(uint64) * Max(nwords, 1));
	w->ahead_keys = palloc0(sizeof(uint64) * Max(nwords, 1));
}

/* The words of a row's key columns from to to (not included), into keys. */
static void
make_row_keys(WindowCalc *w, TupleTableSlot *row, uint64 *keys, int from, int to)
{
	uint64	   *k = keys + (from < w->nkeycolumns ? w->keycolumns[from].word : 0);

	for (int c = from; c < to; c++)
	{
		const KeyPart *part = &w->keycolumns[c].part;
		bool		isnull;
		Datum		value = slot_getattr(row, w->keycolumns[c].attno, &isnull);

		*k++ = isnull;
		for (int i = 0; i < part->codec->words; i++)
			*k++ = isnull ? 0 : part->codec->encode(part, value, i);
	}
}

/* Are words from to to (not included) of keys a and b the same? */
static inline bool
keys_equal(const uint64 *a, const uint64 *b, int from, int to)
{
	for (int i = from; i < to; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/*
 * A function that takes another row's value (lag() and the others above):
 * its value and lag's or lead's default over the sorted row, its offset or
 * n (a constant, window_plan.c), and its read pointer's slot; its pointer
 * is made with the partition's tuplestore.
 */
static void
shift_begin(GpuSortState *state, WindowCalc *w, WindowFuncState *f, WindowFunc *wfunc)
{
	PlanState  *ps = &state->css.ss.ps;
	int32		offset = 1;

	f->arg = ExecInitExpr((Expr *) window_expr_of_sorted_row(linitial(wfunc->args)), ps);
	if (list_length(wfunc->args) >= 2)
		offset = DatumGetInt32(lsecond_node(Const, wfunc->args)->constvalue);
	if (list_length(wfunc->args) >= 3)
		f->fallback = ExecInitExpr((Expr *) window_expr_of_sorted_row(lthird(wfunc->args)), ps);
	f->offset = f->kind == WINFUNC_LEAD ? offset :
		f->kind == WINFUNC_LAG ? -offset : offset - 1;
	if (f->kind == WINFUNC_LAG && offset >= 1 && offset <= LAG_KEPT_ROWS)
	{
		f->lag_rows = offset;
		f->lag_values = palloc0(sizeof(Datum) * (offset + 1));
		f->lag_nulls = palloc(sizeof(bool) * (offset + 1));
		memset(f->lag_nulls, true, sizeof(bool) * (offset + 1));
		get_typlenbyval(exprType(linitial(wfunc->args)), &f->arg_len, &f->arg_byval);
	}
	else
	{
		f->shift_row = MakeSingleTupleTableSlot(w->desc, &TTSOpsMinimalTuple);
		f->shift_args = MakeSingleTupleTableSlot(w->desc, &TTSOpsVirtual);
	}
	if (w->shiftcontext == NULL)
		w->shiftcontext = CreateExprContext(ps->state);
}

/*
 * A row read back (a minimal tuple) as the node's expressions read their
 * scan tuple: a virtual one, into, its values the row's.
 */
static TupleTableSlot *
virtual_row(TupleTableSlot *into, TupleTableSlot *row)
{
	int			natts = row->tts_tupleDescriptor->natts;

	slot_getallattrs(row);
	ExecClearTuple(into);
	memcpy(into->tts_values, row->tts_values, sizeof(Datum) * natts);
	memcpy(into->tts_isnull, row->tts_isnull, sizeof(bool) * natts);
	return ExecStoreVirtualTuple(into);
}

/*
 * The end of the current row's frame in its partition (the row after its
 * last): the partition's, the row's, or its last peer's.
 */
static inline int64
frame_end(WindowCalc *w)
{
	return w->frame == FRAME_PARTITION ? w->partition_rows :
		w->frame == FRAME_TO_ROW ? w->pos + 1 : w->peer_end;
}

/*
 * The place in the partition of the row whose value f takes at the current
 * row: offset rows from it (lag, lead), the frame's first or last, its
 * offset-th (nth_value); -1 where there is none.
 */
static int64
shift_target(WindowCalc *w, WindowFuncState *f)
{
	int64		target;

	switch (f->kind)
	{
		case WINFUNC_FIRST_VALUE:
			return 0;
		case WINFUNC_LAST_VALUE:
			return frame_end(w) - 1;
		case WINFUNC_NTH_VALUE:
			return f->offset < frame_end(w) ? f->offset : -1;
		default:
			target = w->pos + f->offset;
			return target >= 0 && target < w->partition_rows ? target : -1;
	}
}

/*
 * The value at the current row of a function that takes another row's:
 * its argument over that row, read by its pointer (which only goes
 * forward, as the current row does), or, where there is none, lag()'s or
 * lead()'s default over the current row, else NULL.
 */
static Datum
shift_value(WindowCalc *w, WindowFuncState *f, bool *isnull)
{
	int64		target = shift_target(w, f);
	ExprContext *econtext = w->shiftcontext;

	if (target < 0)
	{
		*isnull = true;
		if (f->fallback == NULL)
			return (Datum) 0;
		econtext->ecxt_scantuple = virtual_row(w->arg_slot, w->current);
		return ExecEvalExpr(f->fallback, econtext, isnull);
	}
	if (f->shift_read <= target)
	{
		/* (a row read from disk is the slot's, in the node's memory) */
		MemoryContext oldcxt = MemoryContextSwitchTo(w->cxt);

		tuplestore_select_read_pointer(w->partition, f->shift_pointer);
		while (f->shift_read <= target)
		{
			if (!tuplestore_gettupleslot(w->partition, true, false, f->shift_row))
				elog(ERROR, "GpuSort lost a row of a window partition");
			f->shift_read++;
		}
		tuplestore_select_read_pointer(w->partition, 0);
		MemoryContextSwitchTo(oldcxt);
		(void) virtual_row(f->shift_args, f->shift_row);
	}
	econtext->ecxt_scantuple = f->shift_args;
	return ExecEvalExpr(f->arg, econtext, isnull);
}

/*
 * lag() by lag_rows at the current row, from the arguments kept of the rows
 * before it (none: its default, or NULL), then the current row's argument
 * kept in the place of the row before those, which no later row returns
 * (the value returned stays until the next row, as per-tuple memory does).
 */
static Datum
kept_lag_value(WindowCalc *w, WindowFuncState *f, bool *isnull)
{
	ExprContext *econtext = w->shiftcontext;
	int			places = f->lag_rows + 1;
	int			from = (w->pos - f->lag_rows) % places;
	int			into = w->pos % places;
	Datum		value = (Datum) 0;
	Datum		arg;
	bool		argnull;
	MemoryContext oldcxt;

	econtext->ecxt_scantuple = virtual_row(w->arg_slot, w->current);
	*isnull = true;
	if (w->pos >= f->lag_rows)
	{
		*isnull = f->lag_nulls[from];
		value = f->lag_values[from];
	}
	else if (f->fallback != NULL)
		value = ExecEvalExpr(f->fallback, econtext, isnull);

	arg = ExecEvalExpr(f->arg, econtext, &argnull);
	if (!f->arg_byval && !f->lag_nulls[into])
		pfree(DatumGetPointer(f->lag_values[into]));
	oldcxt = MemoryContextSwitchTo(w->cxt);
	f->lag_values[into] = argnull ? (Datum) 0 : datumCopy(arg, f->arg_byval, f->arg_len);
	f->lag_nulls[into] = argnull;
	MemoryContextSwitchTo(oldcxt);
	return value;
}

/* The frame of the clause (window_plan.c allowed these). */
static AggregateFrame
clause_frame(WindowAgg *clause)
{
	int			options = clause->frameOptions;

	if ((options & FRAMEOPTION_ROWS) &&
		(options & (FRAMEOPTION_START_OFFSET | FRAMEOPTION_END_OFFSET)))
		return FRAME_ROWS_OFFSETS;
	if ((options & FRAMEOPTION_END_UNBOUNDED_FOLLOWING))
		return FRAME_PARTITION;
	if ((options & FRAMEOPTION_ROWS))
		return FRAME_TO_ROW;
	return clause->ordNumCols == 0 ? FRAME_PARTITION : FRAME_TO_PEERS;
}

static TupleTableSlot *slice_next(GpuSortState *state);
static bool rows_equal(WindowCalc *w, ExprState *equal, TupleTableSlot *a,
					   TupleTableSlot *b);

/*
 * The values of one window clause's functions, of the rows (of desc) that
 * sorted_next returns in order, into out after their columns.
 */
static WindowCalc *
clause_begin(GpuSortState *state, WindowAgg *clause, List *funcs, TupleDesc desc,
			 TupleTableSlot *window_slot, NodeRowSource sorted_next,
			 int slice_columns)
{
	CustomScan *cscan = (CustomScan *) state->css.ss.ps.plan;
	WindowCalc *w = palloc0(sizeof(WindowCalc));
	bool		need_peers = false;
	ListCell   *lc;

	w->desc = desc;
	w->arg_slot = MakeSingleTupleTableSlot(desc, &TTSOpsVirtual);
	w->frame = clause_frame(clause);
	w->frame_options = clause->frameOptions;
	if (clause->frameOptions & FRAMEOPTION_START_OFFSET)
		w->start_offset = DatumGetInt64(castNode(Const, clause->startOffset)->constvalue);
	if (clause->frameOptions & FRAMEOPTION_END_OFFSET)
		w->end_offset = DatumGetInt64(castNode(Const, clause->endOffset)->constvalue);
	w->sorted_next = sorted_next;
	w->cxt = CurrentMemoryContext;
	w->nfuncs = list_length(funcs);
	w->funcs = palloc0(sizeof(WindowFuncState) * w->nfuncs);
	foreach(lc, funcs)
	{
		WindowFunc *wfunc = lfirst_node(WindowFunc, lc);
		WindowFuncState *f = &w->funcs[foreach_current_index(lc)];

		f->kind = window_func_kind(wfunc);
		if (f->kind == WINFUNC_COUNT &&
			(w->frame != FRAME_PARTITION || wfunc->aggfilter != NULL))
			f->kind = WINFUNC_AGGREGATE;	/* count(*) filtered or running */
		if (f->kind == WINFUNC_NTILE)
			f->arg = ExecInitExpr(linitial(wfunc->args), &state->css.ss.ps);
		if (f->kind == WINFUNC_AGGREGATE)
		{
			f->agg = window_aggregate_begin(wfunc, &state->css.ss.ps,
											w->frame == FRAME_ROWS_OFFSETS &&
											!(clause->frameOptions &
											  FRAMEOPTION_START_UNBOUNDED_PRECEDING));
			w->naggregates++;
		}
		if (f->kind == WINFUNC_LAG || f->kind == WINFUNC_LEAD ||
			f->kind == WINFUNC_FIRST_VALUE || f->kind == WINFUNC_LAST_VALUE ||
			f->kind == WINFUNC_NTH_VALUE)
			shift_begin(state, w, f, wfunc);
		if ((f->kind == WINFUNC_AGGREGATE || f->kind == WINFUNC_LAST_VALUE ||
			 f->kind == WINFUNC_NTH_VALUE) && w->frame == FRAME_TO_PEERS)
		{
			/* a frame to the last peer: the peers, and where they end */
			need_peers = true;
			w->need_peer_end = true;
		}
		need_peers |= (f->kind == WINFUNC_RANK || f->kind == WINFUNC_DENSE_RANK ||
					   f->kind == WINFUNC_PERCENT_RANK || f->kind == WINFUNC_CUME_DIST);
		w->need_peer_end |= (f->kind == WINFUNC_CUME_DIST);
		w->buffered |= (f->kind == WINFUNC_PERCENT_RANK || f->kind == WINFUNC_CUME_DIST ||
						f->kind == WINFUNC_NTILE || f->kind == WINFUNC_COUNT ||
						f->kind == WINFUNC_AGGREGATE || f->shift_row != NULL);
	}
	w->nsorted = desc->natts;
	w->out = window_slot;
	w->econtext = state->css.ss.ps.ps_ExprContext;
	w->eqcontext = CreateExprContext(state->css.ss.ps.state);
	w->partition_equal = execTuplesMatchPrepare(desc, clause->partNumCols,
												clause->partColIdx,
												clause->partOperators,
												clause->partCollations,
												&state->css.ss.ps);
	if (need_peers)
		w->peer_equal = execTuplesMatchPrepare(desc, clause->ordNumCols,
											   clause->ordColIdx,
											   clause->ordOperators,
											   clause->ordCollations,
											   &state->css.ss.ps);
	compare_by_keys(state, w, clause, need_peers);
	w->run_condition = ExecInitQual(clause->runCondition, &state->css.ss.ps);
	w->partition_first = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	w->peer_first = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	if (w->buffered)
	{
		w->partition = tuplestore_begin_heap(false, false, node_budget_kb(state));
		if (w->need_peer_end)
			(void) tuplestore_alloc_read_pointer(w->partition, EXEC_FLAG_REWIND);
		if (w->naggregates > 0)
		{
			w->aggregate_pointer = tuplestore_alloc_read_pointer(w->partition,
																 EXEC_FLAG_REWIND);
			if (w->frame == FRAME_ROWS_OFFSETS)
				w->head_pointer = tuplestore_alloc_read_pointer(w->partition,
																EXEC_FLAG_REWIND);
			w->aggcontext = CreateExprContext(state->css.ss.ps.state);
		}
		for (int i = 0; i < w->nfuncs; i++)
			if (w->funcs[i].shift_row)
				w->funcs[i].shift_pointer =
					tuplestore_alloc_read_pointer(w->partition, EXEC_FLAG_REWIND);
		w->read_slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
		w->ahead_slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
		w->next_first = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	}
	if (gpusort_window_mode(cscan) == WINDOW_SLICES && sorted_next != NULL)
	{
		w->read_sorted = sorted_next;
		w->sorted_next = slice_next;
		Assert(slice_columns > 0);
		w->slice_columns = slice_columns;
		if (w->nkeycolumns > 0)
			w->slice_words = w->keycolumns[slice_columns - 1].word + 1 +
				w->keycolumns[slice_columns - 1].part.codec->words;
		else if (slice_columns == clause->partNumCols)
			w->slice_equal = w->partition_equal;
		else
			w->slice_equal = execTuplesMatchPrepare(desc, slice_columns,
													clause->partColIdx,
													clause->partOperators,
													clause->partCollations,
													&state->css.ss.ps);
		w->slice_row_keys = palloc0(sizeof(uint64) * Max(w->nwords, 1));
		w->slice_last_keys = palloc0(sizeof(uint64) * Max(w->nwords, 1));
		w->slice_last = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	}
	return w;
}

static bool next_row_values(GpuSortState *state, WindowCalc *w);

/*
 * The next row that a clause reads: the node's sorted rows, or for a clause
 * over another, that one's rows with its values.
 */
static TupleTableSlot *
clause_input_next(GpuSortState *state, WindowCalc *w)
{
	if (w->inner)
		return next_row_values(state, w->inner) ? w->inner->out : NULL;
	return w->sorted_next(state);
}

WindowCalc *
node_window_begin(GpuSortState *state, TupleTableSlot *window_slot,
				  NodeRowSource sorted_next)
{
	CustomScan *cscan = (CustomScan *) state->css.ss.ps.plan;
	TupleDesc	window_desc = window_slot->tts_tupleDescriptor;
	int			nclauses = gpusort_window_nclauses(cscan);
	TupleDesc	desc = state->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor;
	WindowCalc *w = NULL;
	int			slice_columns = INT_MAX;

	/* a parallel window's slices split no partition of any clause */
	for (int n = 0; n < nclauses; n++)
	{
		WindowAgg  *clause;
		List	   *funcs;

		gpusort_window_clause_at(cscan, n, &clause, &funcs);
		slice_columns = Min(slice_columns, clause->partNumCols);
	}

	/* each clause over the one before: its rows, with their values after */
	for (int n = 0; n < nclauses; n++)
	{
		WindowAgg  *clause;
		List	   *funcs;
		TupleTableSlot *out = window_slot;
		WindowCalc *below = w;

		gpusort_window_clause_at(cscan, n, &clause, &funcs);
		if (n < nclauses - 1)
		{
			TupleDesc	out_desc = CreateTemplateTupleDesc(desc->natts + list_length(funcs));

			for (int i = 1; i <= out_desc->natts; i++)
				TupleDescCopyEntry(out_desc, i, window_desc, i);
			out = MakeSingleTupleTableSlot(out_desc, &TTSOpsVirtual);
		}
		w = clause_begin(state, clause, funcs, desc, out, below ? NULL : sorted_next,
						 slice_columns);
		w->inner = below;
		desc = out->tts_tupleDescriptor;
	}
	return w;
}

/*
 * Is row of the partition kept (slice_keep_partition)?  (None kept: no.)
 */
static bool
slice_same_partition(WindowCalc *w, TupleTableSlot *row)
{
	if (!w->slice_have_last)
		return false;
	if (w->nkeycolumns > 0)
	{
		make_row_keys(w, row, w->slice_row_keys, 0, w->slice_columns);
		return keys_equal(w->slice_row_keys, w->slice_last_keys, 0, w->slice_words);
	}
	return rows_equal(w, w->slice_equal, row, w->slice_last);
}

/* Keeps row's partition, to compare later rows with. */
static void
slice_keep_partition(WindowCalc *w, TupleTableSlot *row)
{
	if (w->nkeycolumns > 0)
		make_row_keys(w, row, w->slice_last_keys, 0, w->slice_columns);
	else
		ExecCopySlot(w->slice_last, row);
	w->slice_have_last = true;
}

/*
 * The next row of this participant's slices, in order (NULL after the
 * last): the rows of each partition that starts in a slice it takes.  Rows
 * are compared by partition only where a slice begins and ends: with the
 * row before it, to skip a partition begun in an earlier slice, and with
 * its last row, to read on to the end of the partition that goes past it.
 */
static TupleTableSlot *
slice_next(GpuSortState *state)
{
	WindowCalc *w = state->window;

	while (w->inner)
		w = w->inner;			/* the clause that reads the sorted rows */

	if (state->slicing == SLICES_ALONE)
		return w->read_sorted(state);
	if (state->slicing != SLICES_READ)
		return NULL;
	for (;;)
	{
		TupleTableSlot *row;
		int64		pos;

		if (!w->slice_reading)
		{
			if (!node_share_next_slice(state, &w->slice_first, &w->slice_end))
			{
				/* then, in the leader, the rows led by a NULL: all here */
				TupleTableSlot *slot = state->css.ss.ss_ScanTupleSlot;

				return node_stage_next_null(state, slot) ? slot : NULL;
			}
			/* from the row before, whose partition may go on in the slice */
			w->slice_pos = Max(w->slice_first - 1, 0);
			node_stage_seek(state, w->slice_pos);
			w->slice_reading = true;
			w->slice_emitting = false;
			w->slice_have_last = false;
		}
		row = w->read_sorted(state);
		if (TupIsNull(row))
		{
			w->slice_reading = false;
			continue;
		}
		pos = w->slice_pos++;
		if (pos < w->slice_first)
		{
			slice_keep_partition(w, row);
			continue;
		}
		if (!w->slice_emitting)
		{
			/* a partition begun before the slice is another's */
			if (pos >= w->slice_end)
			{
				w->slice_reading = false;
				continue;
			}
			if (slice_same_partition(w, row))
				continue;
			w->slice_emitting = true;
		}
		else if (pos >= w->slice_end && !slice_same_partition(w, row))
		{
			/* past its end, only the rest of the partition it returns */
			w->slice_reading = false;
			continue;
		}
		if (pos == w->slice_end - 1)
			slice_keep_partition(w, row);
		return row;
	}
}

/* Are rows a and b equal by the comparison "equal" (none: they are)? */
static bool
rows_equal(WindowCalc *w, ExprState *equal, TupleTableSlot *a, TupleTableSlot *b)
{
	if (equal == NULL)
		return true;
	w->eqcontext->ecxt_outertuple = a;
	w->eqcontext->ecxt_innertuple = b;
	return ExecQualAndReset(equal, w->eqcontext);
}

/*
 * Is row, whose keys are keys when compared by keys, of the partition that
 * partition_first (or partition_keys) starts?
 */
static bool
same_partition(WindowCalc *w, TupleTableSlot *row, const uint64 *keys)
{
	if (w->nkeycolumns > 0)
		return keys_equal(keys, w->partition_keys, 0, w->partition_words);
	return rows_equal(w, w->partition_equal, row, w->partition_first);
}

/* The same for the peer group that peer_first (or peer_keys) starts. */
static bool
same_peers(WindowCalc *w, TupleTableSlot *row, const uint64 *keys)
{
	if (w->nkeycolumns > 0)
		return keys_equal(keys, w->peer_keys, w->partition_words, w->nwords);
	return rows_equal(w, w->peer_equal, row, w->peer_first);
}

/*
 * Where rows are compared by keys, the words of the row's partition columns
 * (which same_partition compares), its order columns (same_peers), or all,
 * into keys.
 */
static inline void
row_keys_if_compared(WindowCalc *w, TupleTableSlot *row, uint64 *keys,
					 RowKeysWanted wanted)
{
	if (w->nkeycolumns > 0)
		make_row_keys(w, row, keys,
					  wanted == PEER_KEYS ? w->partition_columns : 0,
					  wanted == PARTITION_KEYS ? w->partition_columns : w->nkeycolumns);
}

/*
 * The aggregates' frames grow to the frame's end: their states advance over
 * the rows up to end (not included), read once for all.
 */
static void
aggregate_to(WindowCalc *w, int64 end)
{
	if (w->aggregate_read >= end)
		return;
	tuplestore_select_read_pointer(w->partition, w->aggregate_pointer);
	for (; w->aggregate_read < end; w->aggregate_read++)
	{
		CHECK_FOR_INTERRUPTS();
		if (!tuplestore_gettupleslot(w->partition, true, false, w->ahead_slot))
			elog(ERROR, "GpuSort lost a row of a window partition");
		w->aggcontext->ecxt_scantuple = virtual_row(w->arg_slot, w->ahead_slot);
		for (int i = 0; i < w->nfuncs; i++)
			if (w->funcs[i].agg)
				window_aggregate_advance(w->funcs[i].agg, w->aggcontext);
		ResetExprContext(w->aggcontext);
	}
	tuplestore_select_read_pointer(w->partition, 0);
}

/*
 * A new partition: the aggregates from their initial states, over all its
 * rows where the frame is the partition.
 */
static void
aggregate_partition(WindowCalc *w)
{
	for (int i = 0; i < w->nfuncs; i++)
		if (w->funcs[i].agg)
			window_aggregate_reset(w->funcs[i].agg);
	w->aggregate_read = 0;
	w->aggregate_head = 0;
	if (w->frame == FRAME_PARTITION)
		aggregate_to(w, w->partition_rows);
}

/*
 * The current row's frame of rows offsets before or after it: rows head to
 * tail (not included) of the partition, none where tail is not past head.
 */
static void
rows_frame(WindowCalc *w, int64 *head, int64 *tail)
{
	int			options = w->frame_options;
	int64		n = w->partition_rows;
	int64		start = Min(w->start_offset, n);	/* (no overflow) */
	int64		end = Min(w->end_offset, n);

	if (options & FRAMEOPTION_START_UNBOUNDED_PRECEDING)
		*head = 0;
	else if (options & FRAMEOPTION_START_CURRENT_ROW)
		*head = w->pos;
	else if (options & FRAMEOPTION_START_OFFSET_PRECEDING)
		*head = w->pos - start;
	else
		*head = w->pos + start;
	if (options & FRAMEOPTION_END_UNBOUNDED_FOLLOWING)
		*tail = n;
	else if (options & FRAMEOPTION_END_CURRENT_ROW)
		*tail = w->pos + 1;
	else if (options & FRAMEOPTION_END_OFFSET_PRECEDING)
		*tail = w->pos - end + 1;
	else
		*tail = w->pos + end + 1;
	*head = Max(Min(*head, n), 0);
	*tail = Max(Min(*tail, n), *head);
}

/*
 * Moves the read pointer of the rows taken out to place to (from
 * aggregate_head), each row taken out of every aggregate on the way where
 * take_out: false once one cannot take one out, the rest only passed.
 */
static bool
head_to(WindowCalc *w, int64 to, bool take_out)
{
	tuplestore_select_read_pointer(w->partition, w->head_pointer);
	for (; w->aggregate_head < to; w->aggregate_head++)
	{
		CHECK_FOR_INTERRUPTS();
		if (!take_out)
		{
			if (!tuplestore_advance(w->partition, true))
				elog(ERROR, "GpuSort lost a row of a window partition");
			continue;
		}
		if (!tuplestore_gettupleslot(w->partition, true, false, w->ahead_slot))
			elog(ERROR, "GpuSort lost a row of a window partition");
		w->aggcontext->ecxt_scantuple = virtual_row(w->arg_slot, w->ahead_slot);
		for (int i = 0; i < w->nfuncs && take_out; i++)
			if (w->funcs[i].agg)
				take_out = window_aggregate_retreat(w->funcs[i].agg, w->aggcontext);
		ResetExprContext(w->aggcontext);
	}
	tuplestore_select_read_pointer(w->partition, 0);
	return take_out;
}

/*
 * The aggregates over the current row's frame of rows offsets before or
 * after it: the rows that left it taken out by the aggregates' inverse
 * transition functions, those that came in added, as nodeWindowAgg.c
 * does; where one has no inverse (min, max) or it declines, or where no
 * row of the last frame stays, they all start again from the frame's head.
 */
static void
aggregate_moving(WindowCalc *w)
{
	int64		head;
	int64		tail;

	rows_frame(w, &head, &tail);
	if (head > w->aggregate_head)
	{
		bool		restart = head >= w->aggregate_read;

		if (!restart)
			restart = !head_to(w, head, true);
		if (restart)
		{
			/* the frame's rows added again from its head */
			(void) head_to(w, head, false);
			for (int i = 0; i < w->nfuncs; i++)
				if (w->funcs[i].agg)
					window_aggregate_reset(w->funcs[i].agg);
			tuplestore_copy_read_pointer(w->partition, w->head_pointer, w->aggregate_pointer);
			w->aggregate_read = head;
		}
	}
	aggregate_to(w, tail);
}

/*
 * Reads the next partition into the tuplestore, and the first row of the
 * one after into next_first, and aggregates it.  False at the end of the
 * input.
 */
static bool
read_partition(GpuSortState *state, WindowCalc *w)
{
	TupleTableSlot *row;

	tuplestore_clear(w->partition);
	for (int i = 0; i < w->nfuncs; i++)
		w->funcs[i].shift_read = 0;
	if (TupIsNull(w->next_first))
	{
		row = w->input_done ? NULL : clause_input_next(state, w);
		if (TupIsNull(row))
		{
			w->input_done = true;
			return false;
		}
		ExecCopySlot(w->partition_first, row);
		row_keys_if_compared(w, row, w->partition_keys, PARTITION_KEYS);
	}
	else
	{
		ExecCopySlot(w->partition_first, w->next_first);
		if (w->nkeycolumns > 0)
			memcpy(w->partition_keys, w->next_first_keys, sizeof(uint64) * w->partition_words);
	}
	ExecClearTuple(w->next_first);
	tuplestore_puttupleslot(w->partition, w->partition_first);
	w->partition_rows = 1;
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		row = clause_input_next(state, w);
		if (TupIsNull(row))
		{
			w->input_done = true;
			break;
		}
		row_keys_if_compared(w, row, w->row_keys, PARTITION_KEYS);
		if (!same_partition(w, row, w->row_keys))
		{
			ExecCopySlot(w->next_first, row);
			if (w->nkeycolumns > 0)
				memcpy(w->next_first_keys, w->row_keys, sizeof(uint64) * w->partition_words);
			break;
		}
		tuplestore_puttupleslot(w->partition, row);
		w->partition_rows++;
	}
	if (w->naggregates > 0)
		aggregate_partition(w);
	return true;
}

/* The row after the current one's last peer, reading ahead (cume_dist()). */
static int64
peer_group_end(WindowCalc *w)
{
	int64		end = w->pos + 1;

	if (w->peer_equal == NULL)
		return w->partition_rows;
	tuplestore_copy_read_pointer(w->partition, 0, 1);
	tuplestore_select_read_pointer(w->partition, 1);
	while (end < w->partition_rows &&
		   tuplestore_gettupleslot(w->partition, true, false, w->ahead_slot))
	{
		row_keys_if_compared(w, w->ahead_slot, w->ahead_keys, PEER_KEYS);
		if (!same_peers(w, w->ahead_slot, w->ahead_keys))
			break;
		end++;
	}
	tuplestore_select_read_pointer(w->partition, 0);
	return end;
}

/* ntile()'s bucket of the current row, counted as window_ntile() counts. */
static Datum
ntile_value(WindowCalc *w, WindowFuncState *f, bool *isnull)
{
	if (f->ntile == 0)
	{
		int32		nbuckets;
		bool		argnull;

		nbuckets = DatumGetInt32(ExecEvalExpr(f->arg, w->econtext, &argnull));
		if (argnull)
		{
			*isnull = true;
			return (Datum) 0;
		}
		if (nbuckets <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_ARGUMENT_FOR_NTILE),
					 errmsg("argument of ntile must be greater than zero")));
		f->ntile = 1;
		f->rows_per_bucket = 0;
		f->remainder = 0;
		f->boundary = w->partition_rows / nbuckets;
		if (f->boundary <= 0)
			f->boundary = 1;
		else
		{
			/* the first partition_rows % nbuckets buckets take a row more */
			f->remainder = w->partition_rows % nbuckets;
			if (f->remainder != 0)
				f->boundary++;
		}
	}
	f->rows_per_bucket++;
	if (f->boundary < f->rows_per_bucket)
	{
		if (f->remainder != 0 && f->ntile == f->remainder)
		{
			f->remainder = 0;
			f->boundary -= 1;
		}
		f->ntile += 1;
		f->rows_per_bucket = 1;
	}
	*isnull = false;
	return Int32GetDatum(f->ntile);
}

/* The value of function f at the current row. */
static Datum
func_value(WindowCalc *w, WindowFuncState *f, bool *isnull)
{
	*isnull = false;
	switch (f->kind)
	{
		case WINFUNC_ROW_NUMBER:
			return Int64GetDatum(w->pos + 1);
		case WINFUNC_RANK:
			return Int64GetDatum(w->rank);
		case WINFUNC_DENSE_RANK:
			return Int64GetDatum(w->dense_rank);
		case WINFUNC_PERCENT_RANK:
			if (w->partition_rows <= 1)
				return Float8GetDatum(0.0);
			return Float8GetDatum((float8) (w->rank - 1) /
								  (float8) (w->partition_rows - 1));
		case WINFUNC_CUME_DIST:
			return Float8GetDatum((float8) w->peer_end / (float8) w->partition_rows);
		case WINFUNC_NTILE:
			return ntile_value(w, f, isnull);
		case WINFUNC_COUNT:
			return Int64GetDatum(w->partition_rows);
		case WINFUNC_AGGREGATE:
			return window_aggregate_value(f->agg, isnull);
		case WINFUNC_LAG:
		case WINFUNC_LEAD:
		case WINFUNC_FIRST_VALUE:
		case WINFUNC_LAST_VALUE:
		case WINFUNC_NTH_VALUE:
			if (f->lag_rows > 0)
				return kept_lag_value(w, f, isnull);
			return shift_value(w, f, isnull);
		case WINFUNC_OTHER:
			break;
	}
	elog(ERROR, "GpuSort cannot compute this window function");
	return (Datum) 0;
}

/*
 * The next sorted row with the window functions' values, in w->out (not
 * for a row of a partition passed over: nothing is made of it); false
 * after the last.
 */
static bool
next_row_values(GpuSortState *state, WindowCalc *w)
{
	TupleTableSlot *row;
	bool		new_partition;
	MemoryContext oldcxt;

	ResetExprContext(w->econtext);
	if (w->shiftcontext)
		ResetExprContext(w->shiftcontext);
	if (w->buffered)
	{
		new_partition = !w->started || w->pos + 1 >= w->partition_rows;
		if (new_partition && !read_partition(state, w))
			return false;
		if (!tuplestore_gettupleslot(w->partition, true, false, w->read_slot))
			elog(ERROR, "GpuSort lost a row of a window partition");
		row = w->read_slot;
		/* (its partition is known by its place in it) */
		row_keys_if_compared(w, row, w->row_keys, PEER_KEYS);
	}
	else
	{
		row = clause_input_next(state, w);
		if (TupIsNull(row))
			return false;
		row_keys_if_compared(w, row, w->row_keys, ALL_KEYS);
		new_partition = !w->started || !same_partition(w, row, w->row_keys);
		if (new_partition && w->nkeycolumns > 0)
			memcpy(w->partition_keys, w->row_keys, sizeof(uint64) * w->partition_words);
		else if (new_partition && w->partition_equal != NULL)
			ExecCopySlot(w->partition_first, row);
	}

	if (new_partition)
	{
		w->started = true;
		w->passed_over = false;
		w->pos = 0;
		w->rank = 1;
		w->dense_rank = 1;
		for (int i = 0; i < w->nfuncs; i++)
			w->funcs[i].ntile = 0;
	}
	else
		w->pos++;

	/* the rest of a partition that the run condition ended: only read */
	if (w->passed_over)
		return true;

	if (new_partition || !same_peers(w, row, w->row_keys))
	{
		if (!new_partition)
		{
			w->rank = w->pos + 1;
			w->dense_rank++;
		}
		if (w->nkeycolumns > 0)
			memcpy(w->peer_keys, w->row_keys, sizeof(uint64) * w->nwords);
		else if (w->peer_equal != NULL)
			ExecCopySlot(w->peer_first, row);
		if (w->need_peer_end)
			w->peer_end = peer_group_end(w);
	}

	/* the aggregates' frames, up to this row or its last peer, or moving */
	if (w->naggregates > 0 && w->frame == FRAME_ROWS_OFFSETS)
		aggregate_moving(w);
	else if (w->naggregates > 0 && w->frame != FRAME_PARTITION)
		aggregate_to(w, frame_end(w));

	/* the sorted row's columns, then the values */
	slot_getallattrs(row);
	w->current = row;
	ExecClearTuple(w->out);
	memcpy(w->out->tts_values, row->tts_values, sizeof(Datum) * w->nsorted);
	memcpy(w->out->tts_isnull, row->tts_isnull, sizeof(bool) * w->nsorted);
	oldcxt = MemoryContextSwitchTo(w->econtext->ecxt_per_tuple_memory);
	for (int i = 0; i < w->nfuncs; i++)
		w->out->tts_values[w->nsorted + i] =
			func_value(w, &w->funcs[i], &w->out->tts_isnull[w->nsorted + i]);
	MemoryContextSwitchTo(oldcxt);
	ExecStoreVirtualTuple(w->out);
	return true;
}

/*
 * The next row that the run condition and the filter let through: the
 * sorted row with the window functions' values, projected through the
 * WindowAgg's targetlist.
 */
TupleTableSlot *
node_window_next(GpuSortState *state)
{
	WindowCalc *w = state->window;
	ExprState  *qual = state->css.ss.ps.qual;

	for (;;)
	{
		if (w->done || !next_row_values(state, w))
			return ExecClearTuple(w->out);
		w->econtext->ecxt_scantuple = w->out;
		if (w->run_condition && !w->passed_over &&
			!ExecQual(w->run_condition, w->econtext))
		{
			w->done = (w->partition_equal == NULL);	/* no PARTITION BY */
			w->passed_over = true;
		}
		if (w->passed_over)
			continue;
		if (qual && !ExecQual(qual, w->econtext))
		{
			InstrCountFiltered1(state, 1);
			continue;
		}
		break;
	}
	if (state->css.ss.ps.ps_ProjInfo == NULL)
		return w->out;
	return ExecProject(state->css.ss.ps.ps_ProjInfo);
}

/* A rescan returns the rows again: their values are computed again. */
void
node_window_rescan(WindowCalc *w)
{
	if (w->inner)
		node_window_rescan(w->inner);
	w->started = false;
	w->input_done = false;
	w->done = false;
	w->slice_reading = false;
	if (w->buffered)
	{
		tuplestore_clear(w->partition);
		ExecClearTuple(w->next_first);
	}
}

void
node_window_end(WindowCalc *w)
{
	if (w->inner)
		node_window_end(w->inner);
	ExecDropSingleTupleTableSlot(w->arg_slot);
	for (int i = 0; i < w->nfuncs; i++)
	{
		if (w->funcs[i].agg)
			window_aggregate_end(w->funcs[i].agg);
		if (w->funcs[i].shift_row)
		{
			ExecDropSingleTupleTableSlot(w->funcs[i].shift_row);
			ExecDropSingleTupleTableSlot(w->funcs[i].shift_args);
		}
	}
	ExecDropSingleTupleTableSlot(w->partition_first);
	ExecDropSingleTupleTableSlot(w->peer_first);
	if (w->slice_last)
		ExecDropSingleTupleTableSlot(w->slice_last);
	if (w->buffered)
	{
		tuplestore_end(w->partition);
		ExecDropSingleTupleTableSlot(w->read_slot);
		ExecDropSingleTupleTableSlot(w->ahead_slot);
		ExecDropSingleTupleTableSlot(w->next_first);
	}
}
