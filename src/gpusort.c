/*-------------------------------------------------------------------------
 *
 * gpusort.c
 *	  Module entry point of gpusort.
 *
 * _PG_init may run in the postmaster (shared_preload_libraries): it only
 * defines settings and installs hooks.  CUDA is started lazily, in the
 * backend that first sorts on the GPU, or when the library is loaded into a
 * backend (session_preload_libraries, LOAD) with gpusort.gpu_prestart on.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

#include "compat.h"
#include "engine/engine.h"
#include "gpu/engine_gpu.h"
#include "node/gpusort_node.h"
#include "node/planner.h"
#include "settings.h"

GPUSORT_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	gpusort_define_settings();
#ifdef GPUSORT_WITH_CUDA
	sort_engine_register_gpu(&gpu_sort_engine);
#endif
	gpusort_node_init();
	gpusort_planner_init();

	/* last: the settings above are in place */
	gpu_engine_prestart();
}
