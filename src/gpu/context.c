/*-------------------------------------------------------------------------
 *
 * context.c
 *	  The GPU engine's lifecycle in a backend: starting CUDA, the context
 *	  and the staging buffers, releasing them, and knowing when there is no
 *	  GPU to start.
 *
 * CUDA is started lazily, in the backend that first needs it (a job, the
 * SQL function gpusort_gpu_start(), or gpusort.gpu_prestart when the library
 * is loaded into a backend), never in the postmaster.  The context (a
 * device, a stream, device memory bounded by a limit), the device buffers
 * and two pinned host staging buffers are then kept for the next jobs of
 * the backend, and released at its exit.  The device and the limit are the
 * engine's configuration: in a backend, gpusort.gpu_id and
 * gpusort.gpu_memory, read when a job starts the engine, whose change
 * releases everything; in a GPU process of the service, what it started
 * the engine with (gpu_engine_start_with).  A CUDA error releases
 * everything too; the next job starts afresh.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef GPUSORT_WITH_CUDA

#include "access/parallel.h"
#include "miscadmin.h"
#include "storage/ipc.h"

#include "gpu/gpu_copier.h"
#include "gpu/gpu_state.h"
#include "settings.h"
#include "util/threads.h"

/* A limit of 0 MB (gpusort.gpu_memory = 0): this share of the free memory. */
#define DEFAULT_MEMORY_SHARE	0.8

GpuEngine	gpu;

/* The configuration that gpu_engine_start_with() gave this process, if any. */
static GpuEngineConfig fixed_config;
static bool config_fixed = false;

/* What the engine is to run with now. */
static GpuEngineConfig
wanted_config(void)
{
	GpuEngineConfig config;

	if (config_fixed)
		return fixed_config;
	/* a backend's own engine */
	config.device = gpusort_gpu_id;
	config.memory_mb = gpusort_gpu_memory;
	config.memory_setting = "gpusort.gpu_memory";
	return config;
}

/* Releases everything: the next job starts the GPU again. */
void
gpu_engine_reset(void)
{
	if (gpu.ctx == NULL)
		return;
	gpu_early_upload_drop();
	copier_stop();
	(void) gs_synchronize(gpu.ctx);
	for (int i = 0; i < 2; i++)
	{
		(void) gs_host_free_pinned(gpu.staging[i]);
		gpu.staging[i] = NULL;
	}
	/* the context frees the buffers allocated through it */
	gs_context_destroy(gpu.ctx);
	gpu.ctx = NULL;
	for (int i = 0; i < NUM_BUFFERS; i++)
	{
		gpu.buf[i] = NULL;
		gpu.buf_bytes[i] = 0;
	}
}

static void
gpu_engine_exit(int code, Datum arg)
{
	gpu_engine_reset();
}

/*
 * No GPU for this backend, ever (device -1: no driver, an old one, no
 * device), or not device, whose GPU is too old or has no code in this build
 * (gs_device_check): another gpusort.gpu_id may name one that runs.
 */
static void
mark_unavailable(int device, const char *reason)
{
	gpu.unavailable = true;
	gpu.unavailable_device = device;
	snprintf(gpu.unavailable_reason, sizeof(gpu.unavailable_reason),
			 "no GPU: %s", reason);
}

/* A call that starts device failed with st: false, with the reason. */
static bool
start_failed(int device, gs_status st, char **why)
{
	*why = psprintf("%s", gs_last_error(NULL));
	if (st == GS_ERR_NO_DEVICE)
		mark_unavailable(device, *why);
	return false;
}

bool
gpu_engine_unavailable(const char **why)
{
	bool		unavailable = gpu.unavailable &&
		(gpu.unavailable_device < 0 ||
		 gpu.unavailable_device == wanted_config().device);

	if (unavailable && why)
		*why = gpu.unavailable_reason;
	return unavailable;
}

/* What the last start of the GPU took in this backend, or 0. */
double
gpu_engine_startup_ms(void)
{
	return gpu.startup_ms;
}

bool
gpu_engine_started(void)
{
	GpuEngineConfig wanted = wanted_config();

	return gpu.ctx != NULL &&
		gpu.config.device == wanted.device &&
		gpu.config.memory_mb == wanted.memory_mb;
}

/*
 * Starts CUDA and the context as config says.  CUDA starts threads of its
 * own, which must not run PostgreSQL's signal handlers: call with every
 * signal blocked (util/threads.h).
 */
static bool
start_context(const GpuEngineConfig *config, char **why)
{
	gs_device_info info;
	int			count = 0;
	Size		limit;
	gs_status	st;
	char		reason[256];

	st = gs_device_count(&count);
	if (st != GS_OK)
		return start_failed(-1, st, why);
	if (count == 0)
	{
		/* gs_device_count said why: no driver, an old driver, ... */
		mark_unavailable(-1, gs_last_error(NULL));
		*why = pstrdup(gpu.unavailable_reason);
		return false;
	}
	if (config->device >= count)
	{
		*why = psprintf("gpusort.gpu_id is %d, but this host has %d GPU%s",
						config->device, count, count == 1 ? "" : "s");
		return false;
	}
	st = gs_device_get_info(config->device, &info);
	if (st != GS_OK)
		return start_failed(-1, st, why);
	if (config->memory_mb > 0)
		limit = (Size) config->memory_mb * 1024 * 1024;
	else
		limit = (Size) (info.free_mem * DEFAULT_MEMORY_SHARE);

	/* GS_ERR_NO_DEVICE: a GPU too old, or no code for it (gs_device_check) */
	st = gs_context_create(config->device, limit, &gpu.ctx);
	if (st != GS_OK)
	{
		gpu.ctx = NULL;
		return start_failed(config->device, st, why);
	}
	for (int i = 0; i < 2; i++)
	{
		if (gs_host_alloc_pinned(STAGING_BYTES, &gpu.staging[i]) != GS_OK)
		{
			*why = psprintf("pinned host memory: %s", gs_last_error(NULL));
			gpu_engine_reset();
			return false;
		}
	}
	if (!copier_start(config->device, reason, sizeof(reason)))
	{
		*why = pstrdup(reason);
		gpu_engine_reset();
		return false;
	}
	gpu.config = *config;
	gpu.mem_limit = limit;
	return true;
}

bool
gpu_engine_start(char **why, double *ms)
{
	GpuEngineConfig config = wanted_config();
	instr_time	start;
	sigset_t	saved;
	bool		ok;

	*ms = 0;
	if (gpu_engine_started())
		return true;
	/* settings changed since the start: begin anew */
	gpu_engine_reset();
	if (gpu_engine_unavailable(NULL))
	{
		*why = pstrdup(gpu.unavailable_reason);
		return false;
	}
	if (!IsUnderPostmaster && IsPostmasterEnvironment)
	{
		/* CUDA does not survive fork(): never in the postmaster */
		*why = pstrdup("the GPU is not started in the postmaster");
		return false;
	}

	INSTR_TIME_SET_CURRENT(start);
	signals_block_all(&saved);
	ok = start_context(&config, why);
	signals_restore(&saved);
	*ms = ms_since(start);
	if (!ok)
		return false;

	gpu.startup_ms = *ms;
	if (!gpu.exit_callback)
	{
		on_proc_exit(gpu_engine_exit, (Datum) 0);
		gpu.exit_callback = true;
	}
	elog(DEBUG1, "gpusort: GPU %d started in %.1f ms, device memory limit %zu MB",
		 gpu.config.device, *ms, gpu.mem_limit >> 20);
	return true;
}

bool
gpu_engine_start_with(const GpuEngineConfig *config, char **why, double *ms)
{
	fixed_config = *config;
	config_fixed = true;
	return gpu_engine_start(why, ms);
}

void
gpu_engine_prestart(void)
{
	char	   *why = NULL;
	double		ms;

	/* only in a regular backend, never in the postmaster or a worker */
	if (!gpusort_gpu_prestart || !IsUnderPostmaster || IsParallelWorker() ||
		MyBackendType != B_BACKEND)
		return;
	if (gpu_engine_start(&why, &ms))
		elog(DEBUG1, "gpusort: gpusort.gpu_prestart started the GPU in %.1f ms", ms);
	else
		elog(LOG, "gpusort: gpusort.gpu_prestart: the GPU cannot be used: %s", why);
}

#endif							/* GPUSORT_WITH_CUDA */
