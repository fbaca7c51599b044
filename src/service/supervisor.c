/*-------------------------------------------------------------------------
 *
 * supervisor.c
 *	  The GPU service's start under shared_preload_libraries, and its
 *	  background worker: it starts one GPU process per GPU (gpu_process.c),
 *	  and starts a process again when it dies.
 *
 * The GPU processes are the supervisor's children, forked without the
 * postmaster's knowledge: the postmaster does not restart the server when
 * one of them crashes, which is the point, since CUDA and the driver run in
 * them.  Nor can they harm the server's shared memory: each unmaps what the
 * fork gave it of it before it loads CUDA (gpu_process.c), and all it
 * shares with the server is the service's own (shm_objects.h).  The
 * supervisor, a regular background worker that never loads CUDA,
 * fails the job a dead process was running (its backend then sorts on the
 * CPU) and starts a new process a second later.  A GPU process dies with
 * the supervisor (PR_SET_PDEATHSIG), and the supervisor with the
 * postmaster.
 *
 * The first process lists the GPUs (gpusort.service_gpus names some, or
 * all) before it takes the first; the supervisor then creates the
 * service's buffer (where a GPU was found) and starts one process for each
 * of the others.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef GPUSORT_WITH_CUDA

#include <signal.h>
#include <sys/wait.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/fork_process.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/timestamp.h"

#include "engine/engine.h"
#include "service/service_shared.h"

/*
 * How long a GPU process that died stays down before it starts again: a
 * second, doubled (up to a minute) each time it dies within a minute of its
 * start, so that a broken driver does not fill the log.
 */
#define RESTART_DELAY_MS	1000
#define RESTART_DELAY_MAX_MS	60000
#define STABLE_AFTER_MS		60000

PGDLLEXPORT void gpusort_service_main(Datum arg);

static volatile sig_atomic_t got_sigterm = false;

/* When each GPU's process may start (again), started, and its delay. */
static TimestampTz start_after[SERVICE_MAX_GPUS];
static TimestampTz started_at[SERVICE_MAX_GPUS];
static int	restart_delay_ms[SERVICE_MAX_GPUS];

/* The supervisor, started by the postmaster and again if it dies. */
static void
register_supervisor(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_PostmasterStart;
	worker.bgw_restart_time = 1;
	strlcpy(worker.bgw_library_name, "gpusort", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "gpusort_service_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "gpusort GPU service", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "gpusort GPU service", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}

bool
gpu_service_init(void)
{
#ifdef EXEC_BACKEND
	/* the children of the postmaster inherit the service's state by fork() */
	return false;
#else
	service_shmem_init();
	register_supervisor();
	sort_engine_register(&service_sort_engine);
	return true;
#endif
}

static void
handle_sigterm(SIGNAL_ARGS)
{
	int			save_errno = errno;

	got_sigterm = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

static void
handle_sigchld(SIGNAL_ARGS)
{
	int			save_errno = errno;

	SetLatch(MyLatch);
	errno = save_errno;
}

/* Starts the process of GPU g. */
static void
start_gpu_process(int g)
{
	ServiceGpu *gpu = &service->gpus[g];
	pid_t		pid;

	pg_atomic_write_u32(&gpu->state, GPU_STARTING);
	pid = fork_process();
	if (pid == 0)
	{
		gpu_process_main(g);
		_exit(1);				/* not reached */
	}
	if (pid < 0)
	{
		ereport(LOG,
				(errmsg("gpusort: could not start the process of GPU %d: %m", g)));
		pg_atomic_write_u32(&gpu->state, GPU_DOWN);
		start_after[g] = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													  RESTART_DELAY_MS);
		return;
	}
	gpu->pid = (int) pid;
	started_at[g] = GetCurrentTimestamp();
}

/* When GPU g's process, which just died, may start again. */
static int
next_restart_delay(int g)
{
	TimestampTz now = GetCurrentTimestamp();

	if (restart_delay_ms[g] == 0 ||
		now > TimestampTzPlusMilliseconds(started_at[g], STABLE_AFTER_MS))
		restart_delay_ms[g] = RESTART_DELAY_MS;
	else
		restart_delay_ms[g] = Min(restart_delay_ms[g] * 2, RESTART_DELAY_MAX_MS);
	start_after[g] = TimestampTzPlusMilliseconds(now, restart_delay_ms[g]);
	return restart_delay_ms[g];
}

/* The jobs that GPU g's process was running when it died fail. */
static void
fail_running_jobs(int g, const char *how)
{
	for (int s = 0; s < SERVICE_SLOTS; s++)
	{
		ServiceSlot *slot = &service->slots[s];
		uint32		word = pg_atomic_read_u32(&slot->state);

		if (SLOT_STATE(word) != SLOT_RUNNING + g)
			continue;
		slot->ok = false;
		slot->lost = true;
		slot->gpu = g;
		snprintf(slot->why, sizeof(slot->why),
				 "the process of GPU %d %s during the sort", g, how);
		service_slot_finish(slot, word);
	}
	pg_atomic_write_u64(&service->gpus[g].running_row_keys, 0);
}

/* Collects the GPU processes that ended, and fails their jobs. */
static void
reap_gpu_processes(void)
{
	pid_t		pid;
	int			status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
	{
		for (int g = 0; g < SERVICE_MAX_GPUS; g++)
		{
			ServiceGpu *gpu = &service->gpus[g];
			char		how[64];
			int			delay;

			if (gpu->pid != (int) pid)
				continue;
			if (WIFSIGNALED(status))
				snprintf(how, sizeof(how), "was killed by signal %d", WTERMSIG(status));
			else
				snprintf(how, sizeof(how), "exited with code %d", WEXITSTATUS(status));
			gpu->pid = 0;
			pg_atomic_write_u32(&gpu->state, GPU_DOWN);
			fail_running_jobs(g, how);
			gpu->restarts++;
			delay = next_restart_delay(g);
			ereport(LOG,
					(errmsg("gpusort: the process of GPU %d (pid %d) %s; it starts again in %d ms",
							g, (int) pid, how, delay)));
		}
	}
}

/* Starts the processes that should run and do not. */
static void
start_gpu_processes(void)
{
	TimestampTz now = GetCurrentTimestamp();
	int			n = 1;

	/* the first lists the GPUs; after that, one per GPU */
	if (pg_atomic_read_u32(&service->probed))
		n = Max((int) pg_atomic_read_u32(&service->ngpus), 1);
	for (int g = 0; g < n; g++)
		if (service->gpus[g].pid == 0 && now >= start_after[g])
			start_gpu_process(g);
}

static void
stop_gpu_processes(void)
{
	for (int g = 0; g < SERVICE_MAX_GPUS; g++)
		if (service->gpus[g].pid != 0)
			(void) kill(service->gpus[g].pid, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0)
		;
	for (int g = 0; g < SERVICE_MAX_GPUS; g++)
	{
		fail_running_jobs(g, "stopped with the server");
		service->gpus[g].pid = 0;
		pg_atomic_write_u32(&service->gpus[g].state, GPU_DOWN);
	}
}

/*
 * The service's buffer, made once the first GPU process has found a GPU
 * (none without one): the object "buffer" of gpusort's own (shm_objects.h),
 * which backends and the GPU processes map by its name, and the GPU
 * processes pin for the GPU.  It lasts as long as the server: the
 * postmaster removes it when it exits or restarts after a crash (an
 * immediate stop included, which kills the supervisor before any exit
 * callback of its own), and at the next start what a postmaster killed
 * outright left.  The supervisor itself does not map it.
 *
 * Its pages are reserved as it is made: where /dev/shm cannot hold it (a
 * container's 64 MB), or its making fails otherwise, the service has no
 * buffer, and jobs travel in objects of their own.
 */
static void
create_pool(void)
{
	Size		bytes = (Size) service->pool_chunks * POOL_CHUNK;
	char		name[SHM_OBJECT_NAME_LEN];
	const char *why = NULL;
	int			rc;

	if (pg_atomic_read_u32(&service->pool_state) != POOL_UNDECIDED ||
		!pg_atomic_read_u32(&service->probed) ||
		pg_atomic_read_u32(&service->ngpus) == 0)
		return;
	shm_object_name(name, "buffer");
	if (bytes == 0)
		why = "";
	else if (!service_room_for_segment(bytes))
		why = "/dev/shm has no room for it";
	else if ((rc = shm_object_create(name, bytes)) != 0)
		why = strerror(rc);
	if (why)
	{
		if (bytes > 0)
			ereport(LOG,
					(errmsg("gpusort: the GPU service has no buffer of %zu MB, and jobs travel in objects of their own: %s",
							bytes >> 20, why)));
		pg_atomic_write_u32(&service->pool_state, POOL_NONE);
		return;
	}
	pg_write_barrier();
	pg_atomic_write_u32(&service->pool_state, POOL_CREATED);
}

void
gpusort_service_main(Datum arg)
{
	pqsignal(SIGTERM, handle_sigterm);
	pqsignal(SIGCHLD, handle_sigchld);
	BackgroundWorkerUnblockSignals();

	/*
	 * Its GPU processes are none: at a crash the server restarts with
	 * shared memory anew, and an exit stops them (stop_gpu_processes)
	 */
	service->supervisor_pid = MyProcPid;

	for (;;)
	{
		reap_gpu_processes();
		create_pool();
		if (got_sigterm)
		{
			/*
			 * exit code 1: the postmaster starts the service again a
			 * second later, unless the server is stopping (0 would end it
			 * for good, after a SIGTERM of its own)
			 */
			stop_gpu_processes();
			proc_exit(1);
		}
		start_gpu_processes();
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 250L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

#endif							/* GPUSORT_WITH_CUDA */
