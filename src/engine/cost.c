/*-------------------------------------------------------------------------
 *
 * cost.c
 *	  The cost model that chooses among the registered engines in
 *	  gpusort.device = auto.
 *
 * A job goes to another engine than the CPU's only when that is estimated
 * to pay: each engine estimates what the job would take on it (its
 * estimate_ms, sort_job.h), its start included where it has not started
 * yet, and the fastest one that beats the CPU engine takes it.  The GPU's
 * estimate is gpu/cost.c's.
 *
 * The CPU engine's LSD radix sort costs 10-45 ns per row and key column:
 * fewer for narrow key ranges and inputs that fit the caches; on the H200
 * host it took 29-46 ns at 1M-10M rows (EXPLAIN ANALYZE's Sort Time less
 * the reordering of the rows).  Hence CPU_NS_PER_ROW_KEY.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "engine/cost.h"
#include "engine/engine.h"

/* The CPU engine's cost per row and key column, in nanoseconds. */
#define CPU_NS_PER_ROW_KEY	30.0

double
cpu_estimate_ms(uint32 nrows, int nkeys)
{
	return (double) nrows * nkeys * CPU_NS_PER_ROW_KEY / 1e6;
}

SortEngineId
sort_engine_fastest(uint32 nrows, int nkeys, const char **why)
{
	SortEngineId fastest = SORT_ENGINE_CPU;
	double		fastest_ms = sort_engine_get(SORT_ENGINE_CPU)->estimate_ms(nrows, nkeys,
																		   why);

	*why = NULL;
	for (SortEngineId id = SORT_ENGINE_CPU + 1; id < sort_engine_count(); id++)
	{
		const SortEngine *engine = sort_engine_get(id);
		const char *declined = sort_engine_missing(engine);
		double		ms = -1;

		if (declined == NULL)
		{
			/* an engine without an estimate runs only when named */
			if (engine->estimate_ms == NULL)
				continue;
			ms = engine->estimate_ms(nrows, nkeys, &declined);
		}
		if (ms < 0)
		{
			if (*why == NULL)
				*why = declined;
			continue;
		}
		if (ms < fastest_ms)
		{
			fastest = id;
			fastest_ms = ms;
		}
	}
	return fastest;
}
