/*-------------------------------------------------------------------------
 *
 * distinct_filter.c
 *	  Under a Unique (DISTINCT, DISTINCT ON, UNION), the GpuSort node returns
 *	  the first row of each group of the Unique's columns and drops the
 *	  others as they leave it, so that they cross no Gather Merge and no
 *	  Unique: DISTINCT ON (l_orderkey) over TPC-H's lineitem returns one row
 *	  in four.
 *
 * The rows leave in order, so a group's rows come together; each row is
 * compared with the first of its group, kept, by the Unique's own equality
 * operators and collations, as the Unique compares them (execGrouping.c's
 * execTuplesMatchPrepare).  The Unique above stays: in a parallel query
 * each participant returns the first row of its own groups, and the Gather
 * Merge brings a group's first rows of every participant together, which
 * the Unique then reduces to the first, as it would reduce all of them.
 * Where the Unique's columns are the leading sort keys
 * (distinct_filter_leading_keys) and an engine holds the rows, ordered by
 * their keys' words alone, the engine keeps only the first row of each
 * group as it sorts (spill_stage.c), and the filter sees few others.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "utils/lsyscache.h"

#include "node/window/distinct_filter.h"

struct DistinctFilter
{
	int			ncols;			/* the Unique's columns */
	AttrNumber *colidx;
	Oid		   *eqops;
	ExprState  *equal;			/* those columns equal */
	ExprContext *context;		/* which equal is evaluated in */
	TupleTableSlot *first;		/* the first row of the last group */
	bool		have_first;
	int64		dropped;
};

DistinctFilter *
distinct_filter_begin(PlanState *node, TupleDesc desc, List *columns)
{
	DistinctFilter *f = palloc0(sizeof(DistinctFilter));
	List	   *cols = linitial(columns);
	List	   *ops = lsecond(columns);
	List	   *colls = lthird(columns);
	int			ncols = list_length(cols);
	AttrNumber *colidx = palloc(sizeof(AttrNumber) * ncols);
	Oid		   *eqops = palloc(sizeof(Oid) * ncols);
	Oid		   *collations = palloc(sizeof(Oid) * ncols);

	for (int i = 0; i < ncols; i++)
	{
		colidx[i] = (AttrNumber) list_nth_int(cols, i);
		eqops[i] = list_nth_oid(ops, i);
		collations[i] = list_nth_oid(colls, i);
	}
	f->ncols = ncols;
	f->colidx = colidx;
	f->eqops = eqops;
	f->equal = execTuplesMatchPrepare(desc, ncols, colidx, eqops, collations, node);
	f->context = CreateExprContext(node->state);
	f->first = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	return f;
}

bool
distinct_filter_first(DistinctFilter *f, TupleTableSlot *row)
{
	if (f->have_first)
	{
		f->context->ecxt_outertuple = row;
		f->context->ecxt_innertuple = f->first;
		if (ExecQualAndReset(f->equal, f->context))
		{
			f->dropped++;
			return false;
		}
	}
	ExecCopySlot(f->first, row);
	f->have_first = true;
	return true;
}

int
distinct_filter_leading_keys(const DistinctFilter *f, int nkeys, const AttrNumber *attnos,
							 const Oid *sortops)
{
	if (f->ncols > nkeys)
		return 0;
	for (int k = 0; k < f->ncols; k++)
	{
		int			c = 0;

		while (c < f->ncols && f->colidx[c] != attnos[k])
			c++;
		if (c == f->ncols ||
			f->eqops[c] != get_equality_op_for_ordering_op(sortops[k], NULL))
			return 0;
	}
	return f->ncols;
}

void
distinct_filter_reset(DistinctFilter *f)
{
	ExecClearTuple(f->first);
	f->have_first = false;
}

int64
distinct_filter_dropped(const DistinctFilter *f)
{
	return f->dropped;
}
