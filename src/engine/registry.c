/*-------------------------------------------------------------------------
 *
 * registry.c
 *	  The sort engines that this backend can use: the CPU engine, always
 *	  there as number 0, and those registered after it as the library
 *	  loads (sort_engine_register: the backend's GPU engine in _PG_init,
 *	  the GPU service's in gpu_service_init).  The chooser, the cost model, the statistics and EXPLAIN
 *	  go through them by number; gpusort.device selects one by its name.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "engine/engine.h"

static const SortEngine *engines[GPUSORT_MAX_ENGINES] = {&cpu_sort_engine};
static int	nengines = 1;

void
sort_engine_register(const SortEngine *engine)
{
	if (sort_engine_named(engine->name) >= 0)
		elog(ERROR, "gpusort: a sort engine named \"%s\" is registered already",
			 engine->name);
	if (nengines == GPUSORT_MAX_ENGINES)
		elog(ERROR, "gpusort: more than %d sort engines", GPUSORT_MAX_ENGINES);
	engines[nengines++] = engine;
}

int
sort_engine_count(void)
{
	return nengines;
}

const SortEngine *
sort_engine_get(SortEngineId id)
{
	Assert(id >= 0 && id < nengines);
	return engines[id];
}

const char *
sort_engine_name(SortEngineId id)
{
	return id >= 0 && id < nengines ? engines[id]->name : "unknown";
}

SortEngineId
sort_engine_named(const char *name)
{
	for (int id = 0; id < nengines; id++)
		if (strcmp(engines[id]->name, name) == 0)
			return id;
	return -1;
}

const char *
sort_engine_missing(const SortEngine *engine)
{
	const char *missing = NULL;

	if (engine->unavailable && engine->unavailable(&missing))
		return missing;
	return NULL;
}

SortEngineId
sort_engine_holding(const RowStager *stager)
{
	for (int id = 1; id < nengines; id++)
		if (engines[id]->stager == stager)
			return id;
	return SORT_ENGINE_CPU;
}
