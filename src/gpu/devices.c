/*-------------------------------------------------------------------------
 *
 * devices.c
 *	  The GPUs this backend can see, for gpusort_devices() (gpu_info.c)
 *	  and the GPU service.
 *
 * Listing them starts CUDA in the backend, but no context: the listing
 * neither needs nor changes the engine's state (context.c).  Each says
 * whether gpusort's kernels run on it (gs_device_check: a GPU or driver
 * too old for the library, or a build without code for it, is listed with
 * the reason).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef GPUSORT_WITH_CUDA

#include "miscadmin.h"

#include "gpu/engine_gpu.h"
#include "gpusort_cuda.h"
#include "util/threads.h"

GpuDeviceInfo *
gpu_list_devices(int *count)
{
	GpuDeviceInfo *devices;
	sigset_t	saved;
	int			n = 0;
	int			found = 0;

	*count = 0;
	if (!IsUnderPostmaster && IsPostmasterEnvironment)
		return NULL;
	/* CUDA's threads must not run PostgreSQL's signal handlers */
	signals_block_all(&saved);
	if (gs_device_count(&n) != GS_OK)
		n = 0;
	devices = palloc0(sizeof(GpuDeviceInfo) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		gs_device_info info;

		if (gs_device_get_info(i, &info) != GS_OK)
			continue;
		devices[found].id = i;
		strlcpy(devices[found].name, info.name, sizeof(devices[found].name));
		devices[found].total_mb = (int64) (info.total_mem >> 20);
		devices[found].free_mb = (int64) (info.free_mem >> 20);
		devices[found].multiprocessors = info.multiprocessors;
		devices[found].cc_major = info.cc_major;
		devices[found].cc_minor = info.cc_minor;
		if (gs_device_check(i) == GS_ERR_NO_DEVICE)
			strlcpy(devices[found].unsupported, gs_last_error(NULL),
					sizeof(devices[found].unsupported));
		found++;
	}
	signals_restore(&saved);
	*count = found;
	return devices;
}

const char *
gpu_no_devices_reason(void)
{
	return gs_last_error(NULL);
}

#endif							/* GPUSORT_WITH_CUDA */
