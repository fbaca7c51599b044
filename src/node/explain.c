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

#include "access/parallel.h"
#include "lib/stringinfo.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"
#include "utils/tuplesort.h"
#include "utils/typcache.h"

#include "compat.h"
#include "engine/engine.h"
#include "node/mark_rows.h"
#include "node/memory.h"
#include "node/node_state.h"
#include "node/top_n_filter.h"
#include "node/window.h"
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
			return "every participant's, over slices of the one sorted input";
		case SLICES_ALONE:
			return state->sharing ?
				"all computed here: the engine refused rows midway, which came here" :
				"all computed here: the input was not shared";
		case SLICES_NO_ROWS:
			return state->sharing ?
				"all computed by the leader: the engine refused rows midway" :
				"all computed by another participant: the input was not shared";
		case SLICES_LATE:
			return "none computed here: it came after the others' rows were sorted";
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
	clause = gpusort_window_clause(cscan);
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
 * How the engine's keys ordered each sort key: exactly, by a prefix (an
 * abbreviated key, or a strxfrm() key) whose ties the comparator settled,
 * or not at all (the comparator alone).  For strxfrm() keys, also how many
 * adjacent rows the check found out of order.
 */
static void
explain_key_kinds(GpuSortState *state, ExplainState *es)
{
	List	   *kinds = NIL;
	bool		xfrm = false;

	for (int k = 0; k < state->nkeys; k++)
	{
		const char *kind = "comparator";

		for (int c = 0; c < state->radix_keys; c++)
		{
			const KeyCodec *codec = state->store.columns[c].codec;

			if (state->store.columns[c].keyno != k)
				continue;
			kind = codec->exact ? "exact" :
				codec->source == KEY_PREFIX_XFRM ? "prefix (strxfrm)" : "prefix";
			xfrm |= (!codec->exact && codec->source == KEY_PREFIX_XFRM);
		}
		kinds = lappend(kinds, (char *) kind);
	}
	ExplainPropertyList("Sort Key Kinds", kinds, es);
	for (int c = 0; c < state->radix_keys; c++)
		if (state->store.columns[c].skipped > 0)
			ExplainPropertyInteger("Shared Prefix Skipped", "bytes",
								   state->store.columns[c].skipped, es);
	if (xfrm)
		ExplainPropertyInteger("strxfrm Inversions Repaired", NULL,
							   (int64) state->xfrm_inversions, es);
}

/*
 * The engine beside the CPU's that sorted an input larger than the budget
 * (its runs, or all of it, held), or the CPU engine.
 */
static SortEngineId
spilled_on(GpuSortState *state)
{
	if (state->ran != RUN_SPILLED)
		return SORT_ENGINE_CPU;
	if (state->staged_batches > 0)
		return state->report.engine;
	return state->offloaded_runs > 0 ? sort_report_offload(&state->report) :
		SORT_ENGINE_CPU;
}

/* The engine that sorted the rows, as EXPLAIN ANALYZE names it. */
static const char *
engine_shown(GpuSortState *state)
{
	if (state->ran == RUN_TUPLESORT)
		return "tuplesort";
	if (spilled_on(state) != SORT_ENGINE_CPU)
		return sort_engine_name(spilled_on(state));
	return sort_engine_name(state->report.engine);
}

/* The engine that would hold rows over the budget, as titles name it. */
static const char *
holder_title(GpuSortState *state)
{
	char	   *why;
	const SortEngine *holder = sort_engine_holder(state->settings.device, &why);

	return holder ? holder->title : "an Engine";
}

/* How the rows were sorted: in memory, out of it, or tuplesort's method. */
static const char *
method_shown(GpuSortState *state)
{
	const char *title;

	if (state->ran == RUN_TUPLESORT)
	{
		TuplesortInstrumentation stats;

		if (state->tuplesort == NULL)
			return "tuplesort";
		tuplesort_get_stats(state->tuplesort, &stats);
		return tuplesort_method_name(stats.sortMethod);
	}
	if (state->ran != RUN_SPILLED)
		return "in memory";
	if (state->rest_handed)
		return "refused midway: handed to the leader";
	if (state->staged_batches == 0)
		return "external merge of sorted runs";
	title = sort_engine_get(spilled_on(state))->title;
	if (!node_share_active(state))
		return psprintf("rows held on the %s, sorted at once", title);
	if (node_is_slices(state))
		return IsParallelWorker() ?
			psprintf("held by the leader on the %s, read in slices", title) :
			psprintf("rows of all participants held on the %s, sorted at once, read back in slices by each", title);
	return IsParallelWorker() ?
		psprintf("rows handed to the leader, held on the %s", title) :
		psprintf("rows of all participants held on the %s, sorted at once", title);
}

/*
 * An input larger than the memory budget: held on the engine that holds
 * rows (the GPU), in batches, with the disk that the tuplesorts of its tied
 * groups over the budget and of its rows led by a NULL took, if any; or in
 * sorted runs, with why that engine did
 * not hold it, how many runs another engine than the CPU's sorted, the disk
 * they took (as Sort shows an external sort's), and the runs merged into
 * one before the rows were returned.
 */
static void
explain_spill(GpuSortState *state, ExplainState *es)
{
	int64		disk_kb;

	ExplainPropertyText("Sort Method", method_shown(state), es);
	if (state->staged_batches > 0)
	{
		ExplainPropertyInteger(psprintf("Batches Held on %s",
										sort_engine_get(spilled_on(state))->title),
							   NULL, state->staged_batches, es);
		ExplainPropertyInteger("Held Key Width", "bytes",
							   state->radix_keys * sizeof(uint64), es);
		disk_kb = state->held_disk_kb + (state->stage_nulls ?
										 tie_order_tuplesort_disk_kb(state->stage_nulls) : 0);
		if (disk_kb > 0)
			ExplainPropertyInteger("Disk Used", "kB", disk_kb, es);
		return;
	}
	if (state->stage_why)
		ExplainPropertyText(psprintf("Not Held on %s", holder_title(state)),
							state->stage_why, es);
	ExplainPropertyInteger("Sorted Runs", NULL, state->runs.runs_written, es);
	ExplainPropertyInteger("Merge Key Columns", NULL, state->runs.ncolumns, es);
	if (state->runs.memory_run)
		ExplainPropertyText("Last Run", "in memory", es);
	if (state->offloaded_runs > 0)
		ExplainPropertyInteger(psprintf("Runs Sorted on %s",
										sort_engine_get(spilled_on(state))->title),
							   NULL, state->offloaded_runs, es);
	if (state->runs.early_merges > 0)
		ExplainPropertyInteger("Runs Merged Early", NULL, state->runs.early_merges, es);
	ExplainPropertyInteger("Disk Used", "kB",
						   state->runs.disk_blocks * (BLCKSZ / 1024), es);
}

/*
 * The kernel that an engine beside the CPU's ran for the (last) job, where it
 * tells one, and the width of the keys it sorted; not for rows held on it,
 * which explain_spill tells of.
 */
static void
explain_kernel(GpuSortState *state, ExplainState *es)
{
	SortJobReport *report = &state->report;

	if (report->engine == SORT_ENGINE_CPU || report->kernel[0] == '\0' ||
		state->staged_batches > 0)
		return;
	ExplainPropertyText(psprintf("%s Kernel", sort_engine_get(report->engine)->title),
						report->kernel, es);
	ExplainPropertyInteger("Key Width", "bytes", state->radix_keys * sizeof(uint64), es);
}

/*
 * Without ANALYZE, with COSTS (what follows is the planner's estimate, as
 * costs are): the engine that gpusort.device and the cost model would
 * choose for the estimated rows, why, and whether the input is expected to
 * exceed the memory budget (it is then sorted in runs that spill to disk).
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

	if (!state->settings.enabled)
	{
		ExplainPropertyText("Planned Engine", "tuplesort", es);
		ExplainPropertyText("Engine Choice", "gpusort.enabled = off", es);
		return;
	}
	engine = sort_engine_choose(state->settings.device,
								(uint32) Min(rows, (double) PG_UINT32_MAX),
								store->ncolumns, &choice);
	ExplainPropertyText("Planned Engine", sort_engine_name(engine), es);
	ExplainPropertyText("Engine Choice", choice, es);
	if (node_expected_over_budget(state, &bytes))
		ExplainPropertyText("Expected to Exceed Memory Budget",
							psprintf("yes (about %.0f kB, budget %zu kB)",
									 bytes / 1024, node_budget(state) / 1024), es);
}

void
gpusort_publish_worker_stats(GpuSortState *state)
{
	WorkerSortStats stats;

	if (state->ran == RUN_NONE || state->worker_stats == NULL)
		return;
	memset(&stats, 0, sizeof(stats));
	strlcpy(stats.engine, engine_shown(state), sizeof(stats.engine));
	strlcpy(stats.method, method_shown(state), sizeof(stats.method));
	stats.rows = state->ran == RUN_TUPLESORT ? -1 : state->ntotal;
	stats.memory_kb = (state->memory_used + 1023) / 1024;
	stats.collect_ms = state->collect_ms;
	worker_stats_publish(state->worker_stats, &stats);
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

void
gpusort_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuSortState *state = (GpuSortState *) node;

	explain_sort_keys(state, ancestors, es);
	explain_window_funcs(state, ancestors, es);
	if (state->top_n)
	{
		ExplainPropertyText("Top N Filter", "the rows past the run condition's N of each partition dropped as they come", es);
		if (es->analyze)
			ExplainPropertyInteger("Rows Dropped by Filter", NULL,
								   top_n_filter_dropped(state->top_n), es);
	}
	if (gpusort_window_mode((CustomScan *) state->css.ss.ps.plan) == WINDOW_OVER_SORTED)
		return;					/* it sorts nothing */
	if (!es->analyze)
	{
		if (es->costs)
			explain_plan(state, es);
		return;
	}
	if (state->ran == RUN_NONE)
	{
		explain_workers(state, es);	/* the leader sorted nothing itself */
		return;
	}

	if (state->ran == RUN_TUPLESORT)
	{
		TuplesortInstrumentation stats;

		ExplainPropertyText("Sort Engine", "tuplesort", es);
		if (state->tuplesort_choice)
			ExplainPropertyText("Engine Choice", state->tuplesort_choice, es);
		if (state->tuplesort_reason)
			ExplainPropertyText("Fallback Reason", state->tuplesort_reason, es);
		if (state->tuplesort)
		{
			tuplesort_get_stats(state->tuplesort, &stats);
			ExplainPropertyText("Sort Method", tuplesort_method_name(stats.sortMethod), es);
			ExplainPropertyInteger("Sort Space Used", "kB", stats.spaceUsed, es);
			ExplainPropertyText("Sort Space Type", tuplesort_space_type_name(stats.spaceType), es);
		}
	}
	else
	{
		ExplainPropertyText("Sort Engine", engine_shown(state), es);
		if (state->report.choice)
			ExplainPropertyText("Engine Choice", state->report.choice, es);
		if (state->report.fallback_reason && spilled_on(state) == SORT_ENGINE_CPU)
			ExplainPropertyText("Fallback Reason", state->report.fallback_reason, es);
		if (state->report.engine_note)
		{
			const SortEngine *engine = sort_engine_get(state->report.engine);

			ExplainPropertyText(engine->note_name ? engine->note_name : engine->title,
								state->report.engine_note, es);
		}
		explain_kernel(state, es);
		ExplainPropertyInteger("Sorted Rows", NULL, state->ntotal, es);
		explain_key_kinds(state, es);
		if (state->engine_keys < state->nkeys)
			ExplainPropertyInteger("Rows Ordered by Comparators", NULL,
								   state->tied_rows + (state->ran == RUN_SPILLED ?
													   0 : state->store.nnullrows), es);
		if (state->ran == RUN_SPILLED)
			explain_spill(state, es);
	}
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
		if (state->ran == RUN_SPILLED)
		{
			ExplainPropertyFloat("Spill Time", "ms", state->spill_ms, 3, es);
			ExplainPropertyFloat("Merge Time", "ms", state->merge_ms, 3, es);
		}
		if (state->staged_batches > 0)
		{
			/* what the engine that held the rows took of collect and emit */
			ExplainPropertyFloat("Hold Time", "ms", state->hold_ms, 3, es);
			ExplainPropertyFloat("Read Back Time", "ms", state->read_back_ms, 3, es);
		}
		if (state->ran != RUN_TUPLESORT)
			ExplainPropertyFloat("Emit Time", "ms", state->emit_ms, 3, es);
	}
	explain_workers(state, es);
}
