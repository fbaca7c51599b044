/*-------------------------------------------------------------------------
 *
 * worker_stats.c
 *	  Parallel workers' GpuSort statistics in shared memory (worker_stats.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"

#include "node/worker_stats.h"

/* Slots: enough for every worker of many concurrent queries. */
#define WORKER_STATS_SLOTS	256

typedef struct WorkerStatsShared
{
	slock_t		mutex;
	int			next;			/* where to write when none is free */
	WorkerSortStats slots[WORKER_STATS_SLOTS];
} WorkerStatsShared;

static WorkerStatsShared *shared = NULL;
static shmem_request_hook_type prev_shmem_request = NULL;
static shmem_startup_hook_type prev_shmem_startup = NULL;

static void
worker_stats_shmem_request(void)
{
	if (prev_shmem_request)
		prev_shmem_request();
	RequestAddinShmemSpace(sizeof(WorkerStatsShared));
}

static void
worker_stats_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup)
		prev_shmem_startup();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared = ShmemInitStruct("gpusort worker statistics", sizeof(WorkerStatsShared), &found);
	if (!found)
	{
		memset(shared, 0, sizeof(WorkerStatsShared));
		SpinLockInit(&shared->mutex);
	}
	LWLockRelease(AddinShmemInitLock);
}

void
worker_stats_init(void)
{
	prev_shmem_request = shmem_request_hook;
	shmem_request_hook = worker_stats_shmem_request;
	prev_shmem_startup = shmem_startup_hook;
	shmem_startup_hook = worker_stats_shmem_startup;
}

/* The pid of this parallel worker's leader. */
static int
leader_pid(void)
{
	return MyProc->lockGroupLeader ? MyProc->lockGroupLeader->pid : MyProcPid;
}

void
worker_stats_publish(const WorkerSortStats *stats)
{
	int			slot = -1;

	if (shared == NULL)
		return;
	SpinLockAcquire(&shared->mutex);
	for (int i = 0; i < WORKER_STATS_SLOTS && slot < 0; i++)
		if (shared->slots[i].leader_pid == 0)
			slot = i;
	if (slot < 0)
	{
		/* all taken (leaders that never explained): overwrite in turn */
		slot = shared->next;
		shared->next = (shared->next + 1) % WORKER_STATS_SLOTS;
	}
	shared->slots[slot] = *stats;
	shared->slots[slot].leader_pid = leader_pid();
	SpinLockRelease(&shared->mutex);
}

int
worker_stats_read(int plan_node_id, WorkerSortStats *out, int max)
{
	int			n = 0;

	if (shared == NULL)
		return 0;
	SpinLockAcquire(&shared->mutex);
	for (int i = 0; i < WORKER_STATS_SLOTS && n < max; i++)
		if (shared->slots[i].leader_pid == MyProcPid &&
			shared->slots[i].plan_node_id == plan_node_id)
			out[n++] = shared->slots[i];
	SpinLockRelease(&shared->mutex);

	/* in worker order (insertion sort: a few entries) */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && out[j - 1].worker > out[j].worker; j--)
		{
			WorkerSortStats tmp = out[j];

			out[j] = out[j - 1];
			out[j - 1] = tmp;
		}
	return n;
}

void
worker_stats_forget(int plan_node_id)
{
	if (shared == NULL)
		return;
	SpinLockAcquire(&shared->mutex);
	for (int i = 0; i < WORKER_STATS_SLOTS; i++)
		if (shared->slots[i].leader_pid == MyProcPid &&
			shared->slots[i].plan_node_id == plan_node_id)
			shared->slots[i].leader_pid = 0;
	SpinLockRelease(&shared->mutex);
}
