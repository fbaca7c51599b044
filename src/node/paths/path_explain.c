/*-------------------------------------------------------------------------
 *
 * path_explain.c
 *	  What the engine paths of the GpuSort node (in memory, sorted runs)
 *	  show alike in EXPLAIN ANALYZE: the engine that sorted the rows and
 *	  why, the kernel it ran, how its keys ordered each sort key, and the
 *	  rows the comparators then ordered.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/explain.h"

#include "engine/engine.h"
#include "node/node_state.h"
#include "node/paths/path.h"

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
 * The kernel that an engine beside the CPU's ran for the (last) job, where it
 * tells one, and the width of the keys it sorted.
 */
static void
explain_kernel(GpuSortState *state, ExplainState *es)
{
	SortJobReport *report = &state->report;

	if (report->engine == SORT_ENGINE_CPU || report->kernel[0] == '\0')
		return;
	ExplainPropertyText(psprintf("%s Kernel", sort_engine_get(report->engine)->title),
						report->kernel, es);
	ExplainPropertyInteger("Key Width", "bytes", state->radix_keys * sizeof(uint64), es);
}

void
node_path_explain_engine(GpuSortState *state, ExplainState *es,
						 bool fallback_shown, bool kernel_shown,
						 int64 compared_nulls)
{
	ExplainPropertyText("Sort Engine", state->ran->engine_shown(state), es);
	if (state->report.choice)
		ExplainPropertyText("Engine Choice", state->report.choice, es);
	if (state->report.fallback_reason && fallback_shown)
		ExplainPropertyText("Fallback Reason", state->report.fallback_reason, es);
	if (state->report.engine_note)
	{
		const SortEngine *engine = sort_engine_get(state->report.engine);

		ExplainPropertyText(engine->note_name ? engine->note_name : engine->title,
							state->report.engine_note, es);
	}
	if (kernel_shown)
		explain_kernel(state, es);
	ExplainPropertyInteger("Sorted Rows", NULL, state->ntotal, es);
	explain_key_kinds(state, es);
	if (state->engine_keys < state->nkeys)
		ExplainPropertyInteger("Rows Ordered by Comparators", NULL,
							   state->tied_rows + compared_nulls, es);
}
