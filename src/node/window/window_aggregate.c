/*-------------------------------------------------------------------------
 *
 * window_aggregate.c
 *	  An aggregate over each partition's rows, computed by the GpuSort node
 *	  in place of a WindowAgg: its transition function over the rows that
 *	  come into the frame, its inverse over those that leave it, its final
 *	  function once for each frame (the whole partition, its rows up to the
 *	  current row or its last peer, or rows a constant number around it).
 *
 * It follows nodeWindowAgg.c: the transition, inverse and final functions
 * chosen, resolved and called as there (rows that the FILTER clause leaves
 * out skipped, strict functions skip NULL inputs, a strict transition
 * function with no initial value starts from the first input, the last
 * input taken out leaves the initial state), and the node passes itself
 * to them as a WindowAggState, whose aggregate context is the state's
 * memory, so that AggCheckCallContext answers them as in a WindowAgg.  The planner
 * lets only PostgreSQL's own aggregates here, parallel safe and with a
 * final function that leaves the state as it found it (window_plan.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_aggregate.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "parser/parse_agg.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/expandeddatum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "compat.h"
#include "node/window/window_aggregate.h"

struct WindowAggregate
{
	List	   *args;			/* ExprStates */
	int			nargs;
	ExprState  *filter;			/* FILTER (WHERE ...), or NULL */
	Oid			collation;
	FmgrInfo	transfn;
	FmgrInfo	invtransfn;		/* a moving frame's inverse; fn_oid
								 * InvalidOid: none (its frames restart) */
	FmgrInfo	finalfn;		/* fn_oid InvalidOid: none */
	int			nfinalargs;
	int16		translen;
	bool		transbyval;
	Datum		initval;
	bool		initval_isnull;

	/* the partition's */
	MemoryContext cxt;			/* the state */
	MemoryContext valuecxt;		/* the value */
	Datum		trans;
	bool		trans_isnull;
	int64		nvalues;		/* inputs in the state (not skipped) */
	bool		valued;			/* the value is computed */
	Datum		value;
	bool		value_isnull;
	WindowAggState *context;	/* what AggCheckCallContext reads */
};

/*
 * The arguments as the node reads them: the WindowAgg's input, a Var of
 * which is OUTER_VAR, is the node's sorted row, its scan tuple.
 */
static Node *
read_sorted_row_walk(Node *node, void *context)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varno == OUTER_VAR)
	{
		Var		   *var = (Var *) copyObject(node);

		var->varno = INDEX_VAR;
		return (Node *) var;
	}
	return expression_tree_mutator(node, read_sorted_row_walk, context);
}

Node *
window_expr_of_sorted_row(Node *expr)
{
	return read_sorted_row_walk(expr, NULL);
}

/* The aggregate's initial value, from its text in pg_aggregate. */
static Datum
initial_value(Datum textval, Oid transtype)
{
	Oid			input;
	Oid			ioparam;
	char	   *str = TextDatumGetCString(textval);
	Datum		value;

	getTypeInputInfo(transtype, &input, &ioparam);
	value = OidInputFunctionCall(input, str, ioparam, -1);
	pfree(str);
	return value;
}

WindowAggregate *
window_aggregate_begin(WindowFunc *wfunc, PlanState *parent, bool moving)
{
	WindowAggregate *agg = palloc0(sizeof(WindowAggregate));
	Oid			types[FUNC_MAX_ARGS];
	HeapTuple	tuple;
	Form_pg_aggregate form;
	Oid			transtype;
	Oid			transfn;
	Oid			invtransfn = InvalidOid;
	Oid			finalfn;
	bool		finalextra;
	AttrNumber	initval_attno;
	Expr	   *transexpr;
	Expr	   *invtransexpr;
	Expr	   *finalexpr;
	Datum		initval;
	ListCell   *lc;

	if (compat_proc_aclcheck(wfunc->winfnoid, GetUserId()) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_AGGREGATE, get_func_name(wfunc->winfnoid));
	agg->nargs = list_length(wfunc->args);
	foreach(lc, wfunc->args)
		types[foreach_current_index(lc)] = exprType(lfirst(lc));
	tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(wfunc->winfnoid));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for aggregate %u", wfunc->winfnoid);
	form = (Form_pg_aggregate) GETSTRUCT(tuple);

	/*
	 * Where the frame's head moves, the moving-aggregate functions, whose
	 * inverse takes the rows that leave the frame out, as nodeWindowAgg.c
	 * chooses them: not where the arguments are volatile or hold subplans
	 * (restarting or not would show), nor where the final function would
	 * change the state.  Else the frame restarts as its head moves.
	 */
	if (moving && OidIsValid(form->aggminvtransfn) &&
		form->aggmfinalmodify == AGGMODIFY_READ_ONLY &&
		!contain_volatile_functions((Node *) wfunc) && !contain_subplans((Node *) wfunc))
	{
		transtype = form->aggmtranstype;
		transfn = form->aggmtransfn;
		invtransfn = form->aggminvtransfn;
		finalfn = form->aggmfinalfn;
		finalextra = form->aggmfinalextra;
		initval_attno = Anum_pg_aggregate_aggminitval;
	}
	else
	{
		transtype = form->aggtranstype;
		transfn = form->aggtransfn;
		finalfn = form->aggfinalfn;
		finalextra = form->aggfinalextra;
		initval_attno = Anum_pg_aggregate_agginitval;
	}
	transtype = resolve_aggregate_transtype(wfunc->winfnoid, transtype, types, agg->nargs);
	build_aggregate_transfn_expr(types, agg->nargs, 0, false, transtype,
								 wfunc->inputcollid, transfn, invtransfn,
								 &transexpr, &invtransexpr);
	fmgr_info(transfn, &agg->transfn);
	fmgr_info_set_expr((Node *) transexpr, &agg->transfn);
	agg->invtransfn.fn_oid = InvalidOid;
	if (OidIsValid(invtransfn))
	{
		fmgr_info(invtransfn, &agg->invtransfn);
		fmgr_info_set_expr((Node *) invtransexpr, &agg->invtransfn);
	}
	agg->finalfn.fn_oid = InvalidOid;
	if (OidIsValid(finalfn))
	{
		agg->nfinalargs = finalextra ? agg->nargs + 1 : 1;
		build_aggregate_finalfn_expr(types, agg->nfinalargs, transtype, wfunc->wintype,
									 wfunc->inputcollid, finalfn, &finalexpr);
		fmgr_info(finalfn, &agg->finalfn);
		fmgr_info_set_expr((Node *) finalexpr, &agg->finalfn);
	}
	get_typlenbyval(transtype, &agg->translen, &agg->transbyval);
	initval = SysCacheGetAttr(AGGFNOID, tuple, initval_attno, &agg->initval_isnull);
	if (!agg->initval_isnull)
		agg->initval = initial_value(initval, transtype);
	ReleaseSysCache(tuple);

	agg->collation = wfunc->inputcollid;
	agg->args = ExecInitExprList((List *) window_expr_of_sorted_row((Node *) wfunc->args),
								 parent);
	agg->filter = ExecInitExpr((Expr *) window_expr_of_sorted_row((Node *) wfunc->aggfilter),
							   parent);
	agg->cxt = AllocSetContextCreate(CurrentMemoryContext, "GpuSort window aggregate",
									 ALLOCSET_DEFAULT_SIZES);
	agg->valuecxt = AllocSetContextCreate(CurrentMemoryContext, "GpuSort window aggregate value",
										  ALLOCSET_SMALL_SIZES);
	agg->context = makeNode(WindowAggState);
	agg->context->curaggcontext = agg->cxt;
	window_aggregate_reset(agg);
	return agg;
}

void
window_aggregate_reset(WindowAggregate *agg)
{
	MemoryContextReset(agg->cxt);
	agg->trans_isnull = agg->initval_isnull;
	agg->trans = (Datum) 0;
	if (!agg->initval_isnull)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(agg->cxt);

		agg->trans = datumCopy(agg->initval, agg->transbyval, agg->translen);
		MemoryContextSwitchTo(oldcxt);
	}
	agg->valued = false;
	agg->nvalues = 0;
}

/*
 * The row's inputs into fcinfo->args[1..]: false where the row changes
 * nothing, left out by the FILTER, or with a NULL input of a strict
 * function.
 */
static bool
row_inputs(WindowAggregate *agg, ExprContext *econtext, FunctionCallInfo fcinfo,
		   bool strict)
{
	ListCell   *lc;

	if (agg->filter)
	{
		bool		isnull;
		Datum		keep = ExecEvalExpr(agg->filter, econtext, &isnull);

		if (isnull || !DatumGetBool(keep))
			return false;
	}
	foreach(lc, agg->args)
	{
		int			i = foreach_current_index(lc) + 1;

		fcinfo->args[i].value = ExecEvalExpr(lfirst(lc), econtext, &fcinfo->args[i].isnull);
		if (strict && fcinfo->args[i].isnull)
			return false;
	}
	return true;
}

/* The transition's result as the state: by reference, into its memory. */
static void
set_state(WindowAggregate *agg, Datum value, bool isnull)
{
	if (!agg->transbyval && DatumGetPointer(value) != DatumGetPointer(agg->trans))
	{
		if (!isnull)
		{
			MemoryContext oldcxt = MemoryContextSwitchTo(agg->cxt);

			if (!(DatumIsReadWriteExpandedObject(value, false, agg->translen) &&
				  MemoryContextGetParent(DatumGetEOHP(value)->eoh_context) == agg->cxt))
				value = datumCopy(value, false, agg->translen);
			MemoryContextSwitchTo(oldcxt);
		}
		if (!agg->trans_isnull)
		{
			if (DatumIsReadWriteExpandedObject(agg->trans, false, agg->translen))
				DeleteExpandedObject(agg->trans);
			else
				pfree(DatumGetPointer(agg->trans));
		}
	}
	agg->trans = value;
	agg->trans_isnull = isnull;
	agg->valued = false;
}

void
window_aggregate_advance(WindowAggregate *agg, ExprContext *econtext)
{
	LOCAL_FCINFO(fcinfo, FUNC_MAX_ARGS);
	MemoryContext oldcxt = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
	Datum		value;

	if (!row_inputs(agg, econtext, fcinfo, agg->transfn.fn_strict))
	{
		MemoryContextSwitchTo(oldcxt);
		return;
	}
	if (agg->transfn.fn_strict && agg->trans_isnull)
	{
		/* no initial value: the first input is the state */
		if (agg->nvalues == 0)
		{
			MemoryContextSwitchTo(agg->cxt);
			agg->trans = datumCopy(fcinfo->args[1].value, agg->transbyval, agg->translen);
			agg->trans_isnull = false;
			agg->valued = false;
			agg->nvalues = 1;
		}
		/* (else a strict function that returned NULL: NULL to the end) */
		MemoryContextSwitchTo(oldcxt);
		return;
	}
	InitFunctionCallInfoData(*fcinfo, &agg->transfn, agg->nargs + 1, agg->collation,
							 (Node *) agg->context, NULL);
	fcinfo->args[0].value = agg->trans;
	fcinfo->args[0].isnull = agg->trans_isnull;
	value = FunctionCallInvoke(fcinfo);
	if (fcinfo->isnull && OidIsValid(agg->invtransfn.fn_oid))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("moving-aggregate transition function must not return null")));
	agg->nvalues++;
	set_state(agg, value, fcinfo->isnull);
	MemoryContextSwitchTo(oldcxt);
}

bool
window_aggregate_retreat(WindowAggregate *agg, ExprContext *econtext)
{
	LOCAL_FCINFO(fcinfo, FUNC_MAX_ARGS);
	MemoryContext oldcxt;
	Datum		value;

	if (!OidIsValid(agg->invtransfn.fn_oid))
		return false;
	oldcxt = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
	if (!row_inputs(agg, econtext, fcinfo, agg->invtransfn.fn_strict))
	{
		/* (it was not added either) */
		MemoryContextSwitchTo(oldcxt);
		return true;
	}
	if (agg->nvalues <= 1)
	{
		/* the last input out: the initial state, which may be NULL */
		MemoryContextSwitchTo(oldcxt);
		window_aggregate_reset(agg);
		return true;
	}
	/* (a moving aggregate's state is never NULL once it has an input) */
	if (agg->trans_isnull)
		elog(ERROR, "aggregate transition value is NULL before inverse transition");
	InitFunctionCallInfoData(*fcinfo, &agg->invtransfn, agg->nargs + 1, agg->collation,
							 (Node *) agg->context, NULL);
	fcinfo->args[0].value = agg->trans;
	fcinfo->args[0].isnull = agg->trans_isnull;
	value = FunctionCallInvoke(fcinfo);
	if (fcinfo->isnull)
	{
		/* it cannot take this input out: the frame restarts */
		MemoryContextSwitchTo(oldcxt);
		return false;
	}
	agg->nvalues--;
	set_state(agg, value, false);
	MemoryContextSwitchTo(oldcxt);
	return true;
}

Datum
window_aggregate_value(WindowAggregate *agg, bool *isnull)
{
	LOCAL_FCINFO(fcinfo, FUNC_MAX_ARGS);
	MemoryContext oldcxt;
	bool		anynull = agg->trans_isnull;

	if (agg->valued)
	{
		*isnull = agg->value_isnull;
		return agg->value;
	}
	agg->valued = true;
	MemoryContextReset(agg->valuecxt);
	if (!OidIsValid(agg->finalfn.fn_oid))
	{
		agg->value = agg->trans;
		agg->value_isnull = agg->trans_isnull;
		*isnull = agg->value_isnull;
		return agg->value;
	}
	InitFunctionCallInfoData(*fcinfo, &agg->finalfn, agg->nfinalargs, agg->collation,
							 (Node *) agg->context, NULL);
	fcinfo->args[0].value = MakeExpandedObjectReadOnly(agg->trans, agg->trans_isnull,
													   agg->translen);
	fcinfo->args[0].isnull = agg->trans_isnull;
	for (int i = 1; i < agg->nfinalargs; i++)
	{
		fcinfo->args[i].value = (Datum) 0;
		fcinfo->args[i].isnull = true;
		anynull = true;
	}
	if (agg->finalfn.fn_strict && anynull)
	{
		agg->value = (Datum) 0;
		agg->value_isnull = true;
	}
	else
	{
		/* (the value lasts until the state changes) */
		oldcxt = MemoryContextSwitchTo(agg->valuecxt);
		agg->value = FunctionCallInvoke(fcinfo);
		agg->value_isnull = fcinfo->isnull;
		MemoryContextSwitchTo(oldcxt);
	}
	*isnull = agg->value_isnull;
	return agg->value;
}

void
window_aggregate_end(WindowAggregate *agg)
{
	MemoryContextDelete(agg->cxt);
	MemoryContextDelete(agg->valuecxt);
}
