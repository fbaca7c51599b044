/*-------------------------------------------------------------------------
 *
 * explain.c
 *	  EXPLAIN output of the GpuSort node: its sort keys as Sort shows them;
 *	  without ANALYZE, the engine planned for the estimated input; with
 *	  ANALYZE, what sorted the rows, why, and where the time went.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"
#include "utils/typcache.h"

#include "compat.h"
#include "engine/engine.h"
#include "node/collect/memory.h"
#include "node/collect/top_n_filter.h"
#include "node/explain/explain.h"
#include "node/node_state.h"
#include "node/paths/path.h"
#include "node/paths/runs/runs.h"
#include "node/paths/runs/share.h"
#include "node/plan/window.h"
#include "node/rows/mark_rows.h"
#include "node/window/distinct_filter.h"
#include "settings.h"

/* Appends a sort key's ordering options, as EXPLAIN shows them for Sort. */
static void
append_sort_options(StringInfo buf, Node *expr, Oid sortop, Oid collation,
					bool nullsfirst)
{
	Oid			type = exprType(expr);
	TypeCacheEntry *typentry = lookup_type_cache(type, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
	bool		reverse = false;

	if (OidIsValid(collation) && collation != get_typcollation(type))
		appendStringInfo(buf, " COLLATE %s",
						 quote_identifier(get_collation_name(collation)));
	if (sortop == typentry->gt_opr)
	{
		appendStringInfoString(buf, " DESC");
		reverse = true;
	}
	else if (sortop != typentry->lt_opr)
	{
		appendStringInfo(buf, " USING %s", get_opname(sortop));
		(void) get_equality_op_for_ordering_op(sortop, &reverse);
	}
	if (nullsfirst && !reverse)
		appendStringInfoString(buf, " NULLS FIRST");
	else if (!nullsfirst && reverse)
		appendStringInfoString(buf, " NULLS LAST");
}

static void
explain_sort_keys(GpuSortState *state, List *ancestors, ExplainState *es)
{
	CustomScan *cscan = (CustomScan *) state->css.ss.ps.plan;
	List	   *context;
	List	   *keys = NIL;
	bool		useprefix = compat_explain_useprefix(es);

	context = set_deparse_context_plan(es->deparse_cxt, (Plan *) cscan, ancestors);
	for (int i = 0; i < state->nkeys; i++)
	{
		TargetEntry *tle = get_tle_by_resno(cscan->custom_scan_tlist, state->attnos[i]);
		StringInfoData buf;

		initStringInfo(&buf);
		appendStringInfoString(&buf, deparse_expression((Node *) tle->expr, context,
														useprefix, true));
		append_sort_options(&buf, (Node *) tle->expr, state->sortops[i],
							state->collations[i], state->nullsfirst[i]);
		keys = lappend(keys, buf.data);
	}
	ExplainPropertyList("Sort Key", keys, es);
}

/*
 * Who computed a parallel window's values, as this participant read its
 * rows (NULL before it decided, or for another node).
 */
static const char *
window_values_by(GpuSortState *state)
{
	switch (state->slicing)
	{
		case SLICES_READ:
			if (state->spill->null_rows > 0)
				return psprintf("every participant's, over slices of the one sorted input; "
								"the leader's over the %lld rows led by a NULL",
								(long long) state->spill->null_rows);
			return "every participant's, over slices of the one sorted input";
		case SLICES_ALONE:
			return node_share_sharing(state) ?
				"all computed here: the engine refused rows midway, which came here" :
				"all computed here: the input was not shared";
		case SLICES_NO_ROWS:
			return node_share_sharing(state) ?
				"all computed by the leader: the engine refused rows midway" :
				"all computed by another participant: the input was not shared";
		case SLICES_LATE:
			return "none computed here: it came after the others' rows were sorted";
		default:
			return NULL;
	}
}

/*
 * Who returned the rows of a node whose leader returns every row, as this
 * participant read them (NULL before it decided).
 */
static const char *
rows_returned_by(GpuSortState *state)
{
	switch (state->slicing)
	{
		case SLICES_ALONE:
			return node_share_sharing(state) ?
				"all by the leader, from the one input of every participant" :
				"all by this participant: the input was not shared";
		case SLICES_NO_ROWS:
			return node_share_sharing(state) ? "all by the leader" :
				"all by another participant: the input was not shared";
		case SLICES_LATE:
			return "none: it came after the others' rows were sorted";
		default:
			return NULL;
	}
}

/*
 * The window functions the node computes in place of a WindowAgg
 * (window_plan.c), as they are called: "Window Functions: rank(), ntile(4)",
 * and the run condition that ends a partition's rows (top-N per group),
 * which below a Gather Merge only thins the rows for the WindowAgg above.
 */
static void
explain_window_funcs(GpuSortState *state, List *ancestors, ExplainState *es)
{
	CustomScan *cscan = (CustomScan *) state->css.ss.ps.plan;
	List	   *funcs = gpusort_window_funcs(cscan);
	WindowAgg  *clause;
	List	   *context;
	List	   *calls = NIL;
	ListCell   *lc;

	if (funcs == NIL)
		return;
	context = set_deparse_context_plan(es->deparse_cxt, (Plan *) cscan, ancestors);
	foreach(lc, funcs)
	{
		WindowFunc *wfunc = lfirst_node(WindowFunc, lc);
		StringInfoData buf;
		ListCell   *arg;

		initStringInfo(&buf);
		appendStringInfo(&buf, "%s(%s", quote_identifier(get_func_name(wfunc->winfnoid)),
						 wfunc->winstar ? "*" : "");
		foreach(arg, wfunc->args)
			appendStringInfo(&buf, "%s%s", foreach_current_index(arg) > 0 ? ", " : "",
							 deparse_expression(lfirst(arg), context, false, false));
		appendStringInfoChar(&buf, ')');
		calls = lappend(calls, buf.data);
	}
	ExplainPropertyList("Window Functions", calls, es);
	/* (the run condition is the outer clause's: the last) */
	gpusort_window_clause_at(cscan, gpusort_window_nclauses(cscan) - 1, &clause, &funcs);
	if (clause->runCondition != NIL)
		ExplainPropertyText("Run Condition",
							deparse_expression((Node *) make_ands_explicit(clause->runCondition),
											   context, es->verbose, false),
							es);
	if (gpusort_window_mode(cscan) == WINDOW_TOP_N_BELOW)
		ExplainPropertyText("Rows Returned",
							"those that pass the run condition among its own, ranked again above",
							es);
	if (gpusort_window_mode(cscan) == WINDOW_OVER_SORTED)
		ExplainPropertyText("Rows Sorted By", "the Gather Merge below", es);
	if (es->analyze && window_values_by(state))
		ExplainPropertyText("Window Values", window_values_by(state), es);
}

/*
 * Without ANALYZE, with COSTS (what follows is the planner's estimate, as
 * costs are): the engine that gpusort.device and the cost model would
 * choose for the estimated rows, or tuplesort where it is chosen before
 * the first row (node_tuplesort_first), why, and whether the input is
 * expected to exceed the memory budget (it is then held by an engine, or
 * sorted in runs that spill to disk).
 */
static void
explain_plan(GpuSortState *state, ExplainState *es)
{
	Plan	   *plan = state->css.ss.ps.plan;
	RowStore   *store = &state->store;
	double		rows = plan->plan_rows;
	double		bytes;
	const char *choice;
	SortEngineId engine;

	if ((choice = node_tuplesort_first(state)) != NULL)
		ExplainPropertyText("Planned Engine", "tuplesort", es);
	else
	{
		engine = sort_engine_choose(state->settings.device,
									(uint32) Min(rows, (double) PG_UINT32_MAX),
									store->ncolumns, &choice);
		ExplainPropertyText("Planned Engine", sort_engine_name(engine), es);
	}
	ExplainPropertyText("Engine Choice", choice, es);
	if (state->settings.enabled && node_expected_over_budget(state, &bytes))
		ExplainPropertyText("Expected to Exceed Memory Budget",
							psprintf("yes (about %.0f kB, budget %zu kB)",
									 bytes / 1024, node_budget(state) / 1024), es);
}

void
gpusort_publish_worker_stats(GpuSortState *state)
{
	WorkerSortStats stats;

	if (state->ran == NULL)
		return;
	memset(&stats, 0, sizeof(stats));
	strlcpy(stats.engine, state->ran->engine_shown(state), sizeof(stats.engine));
	strlcpy(stats.method, state->ran->method_shown(state), sizeof(stats.method));
	stats.rows = state->ran == &node_tuplesort_path ? -1 : state->ntotal;
	stats.memory_kb = (state->memory_used + 1023) / 1024;
	stats.collect_ms = state->collect_ms;
	stats.top_n_dropped = state->top_n ? top_n_filter_dropped(state->top_n) : 0;
	stats.distinct_dropped = state->distinct ? distinct_filter_dropped(state->distinct) : 0;
	node_share_publish_stats(state, &stats);
}

/*
 * What each parallel worker's GpuSort did, as Sort shows its workers: a
 * "Worker N:" line each in text, otherwise a "GpuSort Workers" group (PostgreSQL
 * names its own per-worker group "Workers", with VERBOSE).
 */
static void
explain_workers(GpuSortState *state, ExplainState *es)
{
	WorkerSortStats *workers;
	int			n = node_share_worker_stats(state, &workers);

	if (n == 0)
		return;
	if (es->format != EXPLAIN_FORMAT_TEXT)
		ExplainOpenGroup("GpuSort Workers", "GpuSort Workers", false, es);
	for (int i = 0; i < n; i++)
	{
		WorkerSortStats *w = &workers[i];

		if (es->format == EXPLAIN_FORMAT_TEXT)
		{
			appendStringInfoSpaces(es->str, es->indent * 2);
			appendStringInfo(es->str, "Worker %d:  Sort Engine: %s  Sort Method: %s",
							 w->worker, w->engine, w->method);
			if (w->rows >= 0)
				appendStringInfo(es->str, "  Sorted Rows: " INT64_FORMAT, w->rows);
			appendStringInfo(es->str, "  Memory Used: " INT64_FORMAT "kB", w->memory_kb);
			if (es->timing)
				appendStringInfo(es->str, "  Collect Time: %.3f ms", w->collect_ms);
			appendStringInfoChar(es->str, '\n');
			continue;
		}
		ExplainOpenGroup("Worker", NULL, true, es);
		ExplainPropertyInteger("Worker Number", NULL, w->worker, es);
		ExplainPropertyText("Sort Engine", w->engine, es);
		ExplainPropertyText("Sort Method", w->method, es);
		if (w->rows >= 0)
			ExplainPropertyInteger("Sorted Rows", NULL, w->rows, es);
		ExplainPropertyInteger("Memory Used", "kB", w->memory_kb, es);
		if (es->timing)
			ExplainPropertyFloat("Collect Time", "ms", w->collect_ms, 3, es);
		ExplainCloseGroup("Worker", NULL, true, es);
	}
	if (es->format != EXPLAIN_FORMAT_TEXT)
		ExplainCloseGroup("GpuSort Workers", "GpuSort Workers", false, es);
}

/*
 * The rows that the filters of every participant dropped: the leader's and
 * its workers' (top_n true: the top N filter's, else the distinct filter's).
 */
static int64
rows_dropped(GpuSortState *state, bool top_n)
{
	WorkerSortStats *workers;
	int			n = node_share_worker_stats(state, &workers);
	int64		dropped = top_n ? top_n_filter_dropped(state->top_n) :
		distinct_filter_dropped(state->distinct);

	for (int i = 0; i < n; i++)
		dropped += top_n ? workers[i].top_n_dropped : workers[i].distinct_dropped;
	return dropped;
}

void
gpusort_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuSortState *state = (GpuSortState *) node;

	explain_sort_keys(state, ancestors, es);
	explain_window_funcs(state, ancestors, es);
	if (state->top_n && top_n_filter_is_distinct(state->top_n))
	{
		ExplainPropertyText("Distinct Prefilter", "rows no better than the best of their group among the rows just before them, dropped as they come", es);
		if (es->analyze)
			ExplainPropertyInteger("Rows Dropped by Prefilter", NULL, rows_dropped(state, true), es);
	}
	else if (state->top_n)
	{
		ExplainPropertyText("Top N Filter", "the rows past the run condition's N of each partition dropped as they come", es);
		if (es->analyze)
			ExplainPropertyInteger("Rows Dropped by Filter", NULL, rows_dropped(state, true), es);
	}
	if (state->distinct)
	{
		ExplainPropertyText("Distinct Filter", node_leader_returns_all(state) ?
							"the first row of each group alone, of all participants' rows, which the leader returns in order (no Unique above)" :
							"the rows after the first of each group of the Unique above dropped as they leave", es);
		if (es->analyze)
			ExplainPropertyInteger("Rows Dropped by Distinct Filter", NULL,
								   rows_dropped(state, false), es);
		if (es->analyze && node_leader_returns_all(state) && rows_returned_by(state))
			ExplainPropertyText("Rows Returned", rows_returned_by(state), es);
	}
	if (gpusort_window_mode((CustomScan *) state->css.ss.ps.plan) == WINDOW_OVER_SORTED)
		return;					/* it sorts nothing */
	if (!es->analyze)
	{
		if (es->costs)
			explain_plan(state, es);
		return;
	}
	if (state->ran == NULL)
	{
		explain_workers(state, es);	/* the leader sorted nothing itself */
		return;
	}
	state->ran->explain(state, es);
	if (node_keeps_marks(state))
		ExplainPropertyInteger("Rows Returned Again by Restores", NULL,
							   mark_rows_replayed(state->marks), es);
	if (state->heap_read)
		ExplainPropertyText("Input Read", "from the table's pages, by the node", es);
	ExplainPropertyInteger("Memory Used", "kB",
						   (state->memory_used +
							(state->top_n ? top_n_filter_memory(state->top_n) : 0) +
							(state->marks ? mark_rows_memory(state->marks) : 0) + 1023) / 1024,
						   es);
	if (es->timing)
	{
		ExplainPropertyFloat("Collect Time", "ms", state->collect_ms, 3, es);
		ExplainPropertyFloat("Sort Time", "ms", state->sort_ms, 3, es);
		state->ran->explain_times(state, es);
	}
	explain_workers(state, es);
}
