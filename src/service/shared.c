/*-------------------------------------------------------------------------
 *
 * shared.c
 *	  The GPU service's shared memory (service_shared.h), the release of its
 *	  job slots, and what it publishes: the state of each GPU, the queue,
 *	  the fallbacks, and the device list.
 *
 * The postmaster maps the service's state as it starts (and anew at each
 * restart after a crash), in an object of gpusort's own (shm_objects.h),
 * not in PostgreSQL's shared memory: every process of the server inherits
 * the mapping, the GPU processes too, which keep it alone of what they
 * inherit.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/statvfs.h>

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"

#include "service/service.h"
#include "settings.h"

#ifdef GPUSORT_WITH_CUDA
#include "service/service_shared.h"
#endif

const char *const service_fallback_names[SERVICE_NUM_FALLBACKS] = {
	[SERVICE_FALLBACK_BUSY] = "busy",
	[SERVICE_FALLBACK_DOWN] = "service down",
	[SERVICE_FALLBACK_NO_DEVICE] = "no device",
	[SERVICE_FALLBACK_TOO_LARGE] = "too large",
	[SERVICE_FALLBACK_QUEUE_FULL] = "queue full",
	[SERVICE_FALLBACK_NO_SEGMENT] = "no shared memory",
	[SERVICE_FALLBACK_FAILED] = "job failed",
	[SERVICE_FALLBACK_LOST] = "GPU process lost",
	[SERVICE_FALLBACK_NO_ROOM] = "no room",
};

#ifdef GPUSORT_WITH_CUDA

ServiceShared *service = NULL;
LWLock	   *service_pool_lock = NULL;
bool		service_in_gpu_process = false;

/* The tranche of service_pool_lock. */
#define POOL_LOCK_TRANCHE	"gpusort GPU service buffer"

static shmem_request_hook_type prev_shmem_request = NULL;
static shmem_startup_hook_type prev_shmem_startup = NULL;

static void
service_shmem_request(void)
{
	if (prev_shmem_request)
		prev_shmem_request();
	RequestNamedLWLockTranche(POOL_LOCK_TRANCHE, 1);
}

/*
 * The service's state, in the object "control", unlinked once mapped:
 * nothing of it is left to remove, and it goes with the last process that
 * maps it.  Where /dev/shm cannot have it, an anonymous shared mapping does
 * the same, unnamed.
 */
static ServiceShared *
map_control(void)
{
	char		name[SHM_OBJECT_NAME_LEN];
	void	   *p = MAP_FAILED;
	int			rc;

	shm_object_name(name, "control");
	rc = shm_object_create(name, sizeof(ServiceShared));
	if (rc == 0)
	{
		p = shm_object_map(name, sizeof(ServiceShared), true);
		rc = p == MAP_FAILED ? errno : 0;
		(void) shm_unlink(name);
	}
	if (p != MAP_FAILED)
		return p;
	ereport(LOG,
			(errmsg("gpusort: the GPU service's state is in an anonymous mapping: %s",
					strerror(rc))));
	p = mmap(NULL, sizeof(ServiceShared), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		ereport(FATAL,
				(errmsg("gpusort: could not map the GPU service's shared memory: %m")));
	return p;
}

/*
 * The postmaster exits, or restarts after a crash (its children gone): the
 * state goes, and the server's objects.
 */
static void
unmap_control(int code, Datum arg)
{
	(void) munmap(service, sizeof(ServiceShared));
	service = NULL;
	shm_objects_sweep(false);
}

/*
 * In the postmaster (and a single backend), as it starts and after each
 * crash: the objects a crash left are removed, and the state is made anew;
 * every child inherits both the mapping and the lock's address.
 */
static void
service_shmem_startup(void)
{
	if (prev_shmem_startup)
		prev_shmem_startup();
	service_pool_lock = &(GetNamedLWLockTranche(POOL_LOCK_TRANCHE))->lock;
	if (IsUnderPostmaster)
		return;
	shm_objects_sweep(true);
	service = map_control();
	on_shmem_exit(unmap_control, (Datum) 0);
	memset(service, 0, sizeof(ServiceShared));
	pg_atomic_init_u32(&service->ngpus, 0);
	pg_atomic_init_u32(&service->probed, 0);
	pg_atomic_init_u64(&service->next_ticket, 1);
	pg_atomic_init_u32(&service->queued_jobs, 0);
	pg_atomic_init_u64(&service->queued_row_keys, 0);
	for (int i = 0; i < SERVICE_NUM_FALLBACKS; i++)
		pg_atomic_init_u64(&service->fallbacks[i], 0);
	for (int g = 0; g < SERVICE_MAX_GPUS; g++)
	{
		ServiceGpu *gpu = &service->gpus[g];

		if (sem_init(&gpu->wake, 1, 0) != 0)
			elog(FATAL, "gpusort: could not create the GPU service's semaphores: %m");

		pg_atomic_init_u32(&gpu->state, GPU_DOWN);
		pg_atomic_init_u64(&gpu->jobs, 0);
		pg_atomic_init_u64(&gpu->rows, 0);
		pg_atomic_init_u64(&gpu->busy_us, 0);
		pg_atomic_init_u64(&gpu->held_jobs, 0);
		pg_atomic_init_u64(&gpu->failures, 0);
		pg_atomic_init_u64(&gpu->running_row_keys, 0);
	}
	for (int s = 0; s < SERVICE_SLOTS; s++)
	{
		pg_atomic_init_u32(&service->slots[s].state, SLOT_FREE);
		pg_atomic_init_u32(&service->slots[s].abandoned, 0);
	}
	pg_atomic_init_u32(&service->pool_state, POOL_UNDECIDED);
	pg_atomic_init_u32(&service->pool_ready, 0);
	for (int c = 0; c < POOL_MAX_CHUNKS; c++)
		pg_atomic_init_u32(&service->chunk_owner[c], 0);
	service->pool_chunks = Min(gpusort_service_buffer, POOL_MAX_CHUNKS);
}

void
service_shmem_init(void)
{
	prev_shmem_request = shmem_request_hook;
	shmem_request_hook = service_shmem_request;
	prev_shmem_startup = shmem_startup_hook;
	shmem_startup_hook = service_shmem_startup;
}

bool
gpu_service_enabled(void)
{
	return service != NULL;
}

int
gpu_service_gpus_ready(void)
{
	int			n = service ? (int) pg_atomic_read_u32(&service->ngpus) : 0;
	int			ready = 0;

	for (int g = 0; g < n; g++)
		if (pg_atomic_read_u32(&service->gpus[g].state) == GPU_READY)
			ready++;
	return ready;
}

bool
service_room_for_segment(Size bytes)
{
	struct statvfs fs;

	if (statvfs("/dev/shm", &fs) != 0)
		return true;			/* not known: let the object's making tell */
	return (double) fs.f_bavail * fs.f_frsize > (double) bytes * 1.25;
}

bool
service_slot_release(ServiceSlot *slot, uint32 from)
{
	uint32		word = from;

	if (!pg_atomic_compare_exchange_u32(&slot->state, &word, SLOT_WORD(from, SLOT_RELEASING)))
		return false;
	for (int i = 0; i < slot->pool_count; i++)
		pg_atomic_write_u32(&service->chunk_owner[slot->pool_first + i], 0);
	slot->pool_count = 0;
	pg_atomic_write_u32(&slot->state, SLOT_WORD(from + SLOT_USE, SLOT_FREE));
	return true;
}

void
service_slot_finish(ServiceSlot *slot, uint32 running)
{
	uint32		word = running;
	int			owner = slot->owner_pid;

	Assert(SLOT_STATE(running) >= SLOT_RUNNING);
	if (!pg_atomic_compare_exchange_u32(&slot->state, &word, SLOT_WORD(running, SLOT_DONE)))
		return;
	/* the backend gave up: the slot is free (service_shared.h) */
	if (pg_atomic_read_u32(&slot->abandoned))
	{
		(void) service_slot_release(slot, SLOT_WORD(running, SLOT_DONE));
		return;
	}
	/* (its latch lies in PostgreSQL's shared memory, which GPU processes leave) */
	(void) kill(owner, SIGUSR1);
}

static const char *
gpu_state_name(GpuProcessState state)
{
	switch (state)
	{
		case GPU_DOWN:
			return "down";
		case GPU_STARTING:
			return "starting";
		case GPU_READY:
			return "ready";
		case GPU_NO_DEVICE:
			return "no device";
		case GPU_FAILED:
			return "failed";
	}
	return "unknown";
}

int
gpu_service_status(ServiceGpuStatus *out, int max, int *queued)
{
	int			n;

	*queued = 0;
	if (service == NULL)
		return 0;
	*queued = (int) pg_atomic_read_u32(&service->queued_jobs);
	/* before the probe, and without a GPU, the first process's entry */
	n = Max((int) pg_atomic_read_u32(&service->ngpus), 1);
	n = Min(n, max);
	for (int g = 0; g < n; g++)
	{
		ServiceGpu *gpu = &service->gpus[g];

		out[g].gpu = g;
		out[g].info = gpu->info;
		out[g].state = gpu_state_name(pg_atomic_read_u32(&gpu->state));
		out[g].pid = gpu->pid;
		out[g].jobs = (int64) pg_atomic_read_u64(&gpu->jobs);
		out[g].rows = (int64) pg_atomic_read_u64(&gpu->rows);
		out[g].busy_ms = (double) pg_atomic_read_u64(&gpu->busy_us) / 1000.0;
		out[g].failures = (int64) pg_atomic_read_u64(&gpu->failures);
		out[g].restarts = gpu->restarts;
		out[g].memory_limit_mb = (int64) (gpu->mem_limit >> 20);
		out[g].memory_used_mb = (int64) (gpu->mem_used >> 20);
		strlcpy(out[g].reason, gpu->reason, sizeof(out[g].reason));
	}
	return n;
}

void
gpu_service_fallbacks(int64 *counts)
{
	for (int i = 0; i < SERVICE_NUM_FALLBACKS; i++)
		counts[i] = service ? (int64) pg_atomic_read_u64(&service->fallbacks[i]) : 0;
}

GpuDeviceInfo *
gpu_service_devices(int *count)
{
	int			n = service ? (int) pg_atomic_read_u32(&service->ngpus) : 0;
	GpuDeviceInfo *devices = palloc0(sizeof(GpuDeviceInfo) * Max(n, 1));

	for (int g = 0; g < n; g++)
		devices[g] = service->gpus[g].info;
	*count = n;
	return devices;
}

#else							/* !GPUSORT_WITH_CUDA */

bool
gpu_service_init(void)
{
	return false;
}

bool
gpu_service_enabled(void)
{
	return false;
}

int
gpu_service_gpus_ready(void)
{
	return 0;
}

int
gpu_service_status(ServiceGpuStatus *out, int max, int *queued)
{
	*queued = 0;
	return 0;
}

void
gpu_service_fallbacks(int64 *counts)
{
	memset(counts, 0, sizeof(int64) * SERVICE_NUM_FALLBACKS);
}

GpuDeviceInfo *
gpu_service_devices(int *count)
{
	*count = 0;
	return NULL;
}

#endif							/* GPUSORT_WITH_CUDA */
