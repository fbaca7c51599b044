/*-------------------------------------------------------------------------
 *
 * gpusort.c
 *	  Module entry point and settings (GUCs) of gpusort.
 *
 * _PG_init may run in the postmaster (shared_preload_libraries): it only
 * defines settings and installs hooks.  CUDA is started lazily, in the
 * backend that first sorts on the GPU.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include <limits.h>

#include "utils/guc.h"

#include "gpusort.h"

PG_MODULE_MAGIC;

bool		gpusort_enabled = true;
int			gpusort_min_rows = 20000;
int			gpusort_device = GPUSORT_DEVICE_AUTO;
int			gpusort_work_mem = -1;

static const struct config_enum_entry device_options[] = {
	{"auto", GPUSORT_DEVICE_AUTO, false},
	{"gpu", GPUSORT_DEVICE_GPU, false},
	{"cpu", GPUSORT_DEVICE_CPU, false},
	{NULL, 0, false}
};

void		_PG_init(void);

void
_PG_init(void)
{
	DefineCustomBoolVariable("gpusort.enabled",
							 "Replaces Sort plan nodes with GpuSort.",
							 NULL,
							 &gpusort_enabled,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.min_rows",
							"Inputs with fewer rows are sorted by PostgreSQL's tuplesort.",
							"Applies to the planner's estimate and to the actual input.",
							&gpusort_min_rows,
							20000, 0, INT_MAX,
							PGC_USERSET, 0,
							NULL, NULL, NULL);

	DefineCustomEnumVariable("gpusort.device",
							 "Where GpuSort sorts: auto, gpu or cpu.",
							 "auto uses a GPU when one works, else the CPU engine.",
							 &gpusort_device,
							 GPUSORT_DEVICE_AUTO,
							 device_options,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.work_mem",
							"Memory budget of one GpuSort node; -1 uses work_mem.",
							"Inputs that would exceed it are handed to tuplesort, which spills.",
							&gpusort_work_mem,
							-1, -1, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);

	MarkGUCPrefixReserved("gpusort");

	gpusort_node_init();
	gpusort_planner_init();
}
