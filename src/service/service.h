/*-------------------------------------------------------------------------
 *
 * service.h
 *	  The GPU service: one process per GPU holds the server's CUDA contexts,
 *	  and backends hand it their sort jobs through shared memory, so that no
 *	  backend loads CUDA (service_shared.h has the layout, and the files):
 *
 *	  - gpu_service_init() (from _PG_init under shared_preload_libraries,
 *		with gpusort.service on) asks for the shared memory, registers the
 *		supervisor background worker, and makes the service the chooser's
 *		GPU engine in every backend;
 *	  - the supervisor starts one GPU process per GPU (a plain child of its
 *		own, out of the postmaster's crash handling), and starts it again
 *		when it dies;
 *	  - gpu_service_status() and gpu_service_devices() read what the
 *		service publishes, for gpusort_service and gpusort_devices().
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_SERVICE_H
#define GPUSORT_SERVICE_H

#include "postgres.h"

#include "engine/sort_job.h"
#include "gpu/engine_gpu.h"

/* The most GPU processes the service runs. */
#define SERVICE_MAX_GPUS	16

/* Sets the service up; false where it cannot run (no CUDA in this build). */
extern bool gpu_service_init(void);

/* Is the service this server's GPU engine (and no backend's CUDA)? */
extern bool gpu_service_enabled(void);

/* Its GPUs whose process is ready for jobs (0 without the service). */
extern int	gpu_service_gpus_ready(void);

/* Why a backend sorted on the CPU instead of through the service. */
typedef enum ServiceFallback
{
	SERVICE_FALLBACK_BUSY,		/* its queue made the GPU slower */
	SERVICE_FALLBACK_DOWN,		/* no GPU process ready */
	SERVICE_FALLBACK_NO_DEVICE, /* no GPU on this host */
	SERVICE_FALLBACK_TOO_LARGE, /* more device memory than the setting */
	SERVICE_FALLBACK_QUEUE_FULL,	/* every job slot taken */
	SERVICE_FALLBACK_NO_SEGMENT,	/* no shared memory for the job */
	SERVICE_FALLBACK_FAILED,	/* the GPU process failed the job */
	SERVICE_FALLBACK_LOST,		/* the GPU process died during the job */
	SERVICE_FALLBACK_NO_ROOM,	/* rows held declined: device memory full */
	SERVICE_NUM_FALLBACKS
} ServiceFallback;

extern const char *const service_fallback_names[SERVICE_NUM_FALLBACKS];

/* One GPU of the service, as the gpusort_service view shows it. */
typedef struct ServiceGpuStatus
{
	int			gpu;			/* the service's number for it */
	GpuDeviceInfo info;			/* its device */
	const char *state;			/* starting, ready, no device, failed, down */
	int			pid;			/* of its GPU process, or 0 */
	int64		jobs;
	int64		rows;
	double		busy_ms;
	int64		failures;
	int64		restarts;
	int64		memory_limit_mb;
	int64		memory_used_mb;
	char		reason[256];	/* why it is not ready, or "" */
} ServiceGpuStatus;

/*
 * The service's GPUs into out[0..max), how many there are; jobs queued now
 * in *queued.  0 without the service; a host without a GPU shows one entry,
 * in state "no device".
 */
extern int	gpu_service_status(ServiceGpuStatus *out, int max, int *queued);

/* Fallbacks of all backends since the start, by reason. */
extern void gpu_service_fallbacks(int64 *counts);

/* The GPUs the service holds (palloc'd, *count of them), for gpusort_devices(). */
extern GpuDeviceInfo *gpu_service_devices(int *count);

#endif							/* GPUSORT_SERVICE_H */
