/*-------------------------------------------------------------------------
 *
 * gpusort.c
 *	  Module entry point of gpusort.
 *
 * _PG_init may run in the postmaster (shared_preload_libraries): it only
 * defines settings and installs hooks.  Preloaded with gpusort.service on,
 * it also starts the GPU service (service/service.h), whose processes alone
 * run CUDA.  Otherwise CUDA is started lazily, in the
 * backend that first sorts on the GPU, or when the library is loaded into a
 * backend (session_preload_libraries, LOAD) with gpusort.gpu_prestart on.
 *
 * The planner hook puts GpuSort in plans only where the library was loaded
 * by choice: a preload setting or LOAD.  Loaded by a call of one of its SQL
 * functions (CREATE EXTENSION's checks of them too), it leaves plans alone
 * unless gpusort.enabled is set explicitly.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "tcop/pquery.h"
#include "utils/guc.h"
#include "utils/varlena.h"

#include "compat.h"
#include "engine/engine.h"
#include "gpu/engine_gpu.h"
#include "node/plan/gpusort_node.h"
#include "node/plan/planner.h"
#include "node/plan/window.h"
#include "service/service.h"
#include "settings.h"

GPUSORT_MODULE_MAGIC;

void		_PG_init(void);

/* Does a list of libraries (a preload setting's value) name gpusort? */
static bool
library_listed(const char *setting)
{
	char	   *raw;
	List	   *names;
	ListCell   *lc;
	bool		found = false;

	if (setting == NULL || setting[0] == '\0')
		return false;
	raw = pstrdup(setting);
	if (!SplitDirectoriesString(raw, ',', &names))
		return false;
	foreach(lc, names)
	{
		const char *name = lfirst(lc);
		const char *base = strrchr(name, '/');

		/* "gpusort", "$libdir/gpusort", "gpusort.so", ... */
		base = base ? base + 1 : name;
		if (strncmp(base, "gpusort", 7) == 0 &&
			(base[7] == '\0' || base[7] == '.'))
			found = true;
	}
	return found;
}

/*
 * Is the library being loaded by choice: shared_preload_libraries,
 * session_preload_libraries, local_preload_libraries, or a LOAD statement?
 * Otherwise a call of one of its functions is loading it.
 */
static bool
loaded_by_choice(void)
{
	if (process_shared_preload_libraries_in_progress)
		return true;
	if (ActivePortal != NULL && ActivePortal->commandTag == CMDTAG_LOAD)
		return true;
	return library_listed(GetConfigOption("session_preload_libraries", true, false)) ||
		library_listed(GetConfigOption("local_preload_libraries", true, false));
}

void
_PG_init(void)
{
	const char *engines[GPUSORT_MAX_ENGINES];

	gpusort_define_settings();
	gpusort_node_init();
	gpusort_loaded_by_choice = loaded_by_choice();
	gpusort_planner_init();
	gpusort_window_path_init();

	/*
	 * The engines beside the CPU's, one line each.  The GPU: the service's
	 * (gpu_service_init registers it), or each backend's own.
	 */
	if (!(process_shared_preload_libraries_in_progress && gpusort_service &&
		  gpu_service_init()))
		sort_engine_register(&gpu_sort_engine);

	/* gpusort.device names them */
	for (SortEngineId engine = 0; engine < sort_engine_count(); engine++)
		engines[engine] = sort_engine_name(engine);
	gpusort_define_device(engines, sort_engine_count());

	/* last: the settings above are in place */
	gpu_engine_prestart();
}
