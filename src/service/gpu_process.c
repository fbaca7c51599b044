/*-------------------------------------------------------------------------
 *
 * gpu_process.c
 *	  A process of the GPU service: it holds one GPU's CUDA context (the
 *	  GPU engine of src/gpu/, started with its device and its share of
 *	  gpusort.service_memory) and runs the jobs that backends queue, one at
 *	  a time, oldest first.
 *
 * It is a child of the supervisor, not of the postmaster (supervisor.c),
 * and so no PostgreSQL process: it runs none of the supervisor's exit
 * callbacks, takes no lock, and reports errors only to the server log and
 * to the backend whose job failed.  It dies with the supervisor.
 *
 * Nor does it map any of PostgreSQL's shared memory, where a fault of the
 * driver could write what no restart of the server repairs: right after
 * the fork, before CUDA is loaded, it unmaps what it inherited of it (the
 * main segment, the dynamic segments' control segment and any segment the
 * supervisor had mapped), and keeps only the service's state, an object
 * of gpusort's own (shm_objects.h).  What it reads and writes is there, in
 * the service's buffer and in the jobs' objects, and in its own memory; it
 * wakes backends with a signal, not through their latches.
 *
 * It maps the service's buffer at its start and pins it, so that the GPU
 * engine copies jobs from it and back with no copy of its own; the buffer,
 * and a job that came in an object of its own (service_shared.h), are
 * mapped by the object's name.  A job is sorted in place: the payload or the
 * permutation, and the sorted first key column, take the place of what went
 * up.  A backend that gives up on its job sets the slot's cancel flag,
 * which the kernels watch.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef GPUSORT_WITH_CUDA

#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/pg_shmem.h"
#include "storage/proc.h"
#include "utils/backend_status.h"
#include "utils/memutils.h"
#include "utils/ps_status.h"
#include "utils/wait_event.h"

#include "gpu/engine_gpu.h"
#include "keys/key_codec.h"
#include "service/held.h"
#include "service/service_shared.h"
#include "settings.h"
#include "util/timing.h"

/* Seconds before a GPU that failed to start is tried again. */
#define FAILED_RETRY_S		30

/* The most shared mappings that leave_postgres_memory() unmaps. */
#define MAX_INHERITED_MAPPINGS	256

/*
 * Unmaps every shared mapping to write that the fork inherited but the
 * service's state (read-only ones, such as the C library's of nscd, are
 * none of PostgreSQL's): PostgreSQL's main segment (PGSharedMemoryDetach,
 * as the syslogger leaves it: the anonymous mapping and the System V
 * segment that heads it, or the System V segment itself), then, read from
 * /proc/self/maps, its dynamic segments' control segment and any dynamic
 * segment (posix objects, System V segments, the files of mmap), with
 * munmap() alone: dsm_detach_all() would count the supervisor's own
 * mappings off in the control segment.  PostgreSQL's pointers into that
 * memory that its code follows unasked (the latch, the PGPROC, the
 * backend's status and wait event entries, which the log's prefix and the
 * wait events read) are pointed at this process's own state or cleared
 * first; and its exit path, which would walk the dynamic segments, is
 * never taken (exit_at_once).
 */
static void
leave_postgres_memory(void)
{
	uintptr_t	unmap[MAX_INHERITED_MAPPINGS][2];
	int			n = 0;
	char		line[MAXPGPATH + 128];
	bool		line_start = true;
	FILE	   *maps;

	SwitchBackToLocalLatch();
	pgstat_reset_wait_event_storage();
	MyProc = NULL;
	MyBEEntry = NULL;
	PGSharedMemoryDetach();

	maps = fopen("/proc/self/maps", "r");
	if (maps == NULL)
	{
		ereport(LOG,
				(errmsg("gpusort: a GPU process cannot read its mappings: %m")));
		_exit(1);
	}
	while (fgets(line, sizeof(line), maps) != NULL)
	{
		unsigned long start;
		unsigned long end;
		char		perms[8];
		bool		starts = line_start;

		/* (the rest of a line longer than the buffer is no mapping) */
		line_start = strchr(line, '\n') != NULL;
		/* a shared mapping to write ("rw-s"), but the service's state */
		if (!starts || sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3 ||
			perms[1] != 'w' || perms[3] != 's' ||
			((uintptr_t) service >= start && (uintptr_t) service < end))
			continue;
		if (n == MAX_INHERITED_MAPPINGS)
		{
			ereport(LOG,
					(errmsg("gpusort: a GPU process inherited over %d shared mappings",
							MAX_INHERITED_MAPPINGS)));
			_exit(1);
		}
		unmap[n][0] = start;
		unmap[n++][1] = end;
	}
	fclose(maps);
	for (int i = 0; i < n; i++)
		if (munmap((void *) unmap[i][0], unmap[i][1] - unmap[i][0]) != 0)
		{
			ereport(LOG,
					(errmsg("gpusort: a GPU process could not unmap PostgreSQL's shared memory: %m")));
			_exit(1);
		}
}

/*
 * The process ends at once, whatever ends it (an error outside a job, a
 * FATAL, exit()): PostgreSQL's exit path would go on to the dynamic
 * segments it no longer maps.
 */
static void
exit_at_once(int code, Datum arg)
{
	_exit(code);
}

/*
 * Leaves the supervisor's state behind: a process of its own, outside
 * PostgreSQL's shared memory.
 */
static void
become_gpu_process(int g)
{
	sigset_t	none;

	/* none of the supervisor's exit callbacks (its PGPROC, ...) */
	on_exit_reset();
	before_shmem_exit(exit_at_once, (Datum) 0);
	MyProcPid = getpid();
	service_in_gpu_process = true;
	leave_postgres_memory();
	InterruptPending = false;
	QueryCancelPending = false;
	ProcDiePending = false;
	(void) prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != service->supervisor_pid)
		_exit(1);
	pqsignal(SIGTERM, SIG_DFL);
	pqsignal(SIGQUIT, SIG_DFL);
	pqsignal(SIGCHLD, SIG_DFL);
	pqsignal(SIGINT, SIG_IGN);
	pqsignal(SIGHUP, SIG_IGN);
	pqsignal(SIGUSR1, SIG_IGN);
	pqsignal(SIGUSR2, SIG_IGN);
	pqsignal(SIGURG, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	set_ps_display(psprintf("GPU %d", g));
}

/*
 * GPU device of the host for the service, unless gpusort's kernels cannot
 * run on it (said in the log; *left_out: the first such reason).
 */
static void
add_gpu(const GpuDeviceInfo *device, int *n, const char **left_out)
{
	if (device->unsupported[0] != '\0')
	{
		ereport(LOG,
				(errmsg("gpusort: the GPU service leaves GPU %d out: %s",
						device->id, device->unsupported)));
		if (*left_out == NULL)
			*left_out = device->unsupported;
		return;
	}
	if (*n < SERVICE_MAX_GPUS)
		service->gpus[(*n)++].info = *device;
}

/*
 * The first process lists the service's GPUs: every GPU it sees, or those
 * that gpusort.service_gpus names, in its order, a GPU named twice getting
 * two processes (which share its memory, and overlap one job's copies with
 * the other's sort); not those that gpusort's kernels cannot run on (too
 * old a GPU, or no code for it in this build: gpu_list_devices).
 */
static void
list_gpus(void)
{
	GpuDeviceInfo *devices;
	List	   *ids;
	char	   *bad;
	ListCell   *lc;
	int			count;
	int			n = 0;
	const char *left_out = NULL;

	/* without one, the driver's reason */
	devices = gpu_list_devices(&count);
	if (count == 0)
		snprintf(service->gpus[0].reason, sizeof(service->gpus[0].reason),
				 "%s", gpu_no_devices_reason());
	/* its check let only a good value through (else NIL: all GPUs) */
	(void) gpusort_parse_service_gpus(gpusort_service_gpus, &ids, &bad);
	if (ids == NIL)
	{
		for (int i = 0; i < count; i++)
			add_gpu(&devices[i], &n, &left_out);
	}
	foreach(lc, ids)
	{
		for (int i = 0; i < count; i++)
			if (devices[i].id == lfirst_int(lc))
				add_gpu(&devices[i], &n, &left_out);
	}
	/* none left: why the GPU that was there is not used */
	if (n == 0 && left_out != NULL)
		snprintf(service->gpus[0].reason, sizeof(service->gpus[0].reason),
				 "%s", left_out);
	else if (count > 0 && n == 0)
		snprintf(service->gpus[0].reason, sizeof(service->gpus[0].reason),
				 "gpusort.service_gpus (\"%s\") names none of the %d GPUs",
				 gpusort_service_gpus, count);
	for (int g = 0; g < n; g++)
	{
		service->gpus[g].share = 0;
		for (int h = 0; h < n; h++)
			if (service->gpus[h].info.id == service->gpus[g].info.id)
				service->gpus[g].share++;
	}
	pg_atomic_write_u32(&service->ngpus, n);
	pg_atomic_write_u32(&service->probed, 1);
}

/*
 * Without a GPU to run, the process stays, idle: until the server stops
 * where there is none, or for a while where it failed to start (then the
 * supervisor starts a process to try again).
 */
static void
idle(int g, GpuProcessState state)
{
	pg_atomic_write_u32(&service->gpus[g].state, state);
	for (int s = 0; state == GPU_NO_DEVICE || s < FAILED_RETRY_S; s++)
	{
		pg_usleep(1000000L);
		if (getppid() != service->supervisor_pid)
			_exit(0);
	}
	_exit(1);
}

/* The longest a GPU process sleeps between looks at the queue. */
#define WAKE_WAIT_NS		(50 * 1000 * 1000L)

/* Looks between drops of the inputs held for backends that are gone. */
#define ORPHAN_CHECK_WAITS	20

/*
 * The oldest queued job, now GPU g's (*word: its state word, RUNNING+g);
 * NULL when none is queued.
 */
static ServiceSlot *
take_job(int g, uint32 *word)
{
	for (;;)
	{
		ServiceSlot *oldest = NULL;
		uint32		queued = 0;

		for (int s = 0; s < SERVICE_SLOTS; s++)
		{
			ServiceSlot *slot = &service->slots[s];
			uint32		w = pg_atomic_read_u32(&slot->state);

			if (SLOT_STATE(w) == SLOT_QUEUED &&
				(slot->target_gpu < 0 || slot->target_gpu == g) &&
				(oldest == NULL || slot->ticket < oldest->ticket))
			{
				oldest = slot;
				queued = w;
			}
		}
		if (oldest == NULL)
			return NULL;
		*word = SLOT_WORD(queued, SLOT_RUNNING + g);
		if (pg_atomic_compare_exchange_u32(&oldest->state, &queued, *word))
		{
			pg_read_barrier();
			pg_atomic_fetch_sub_u32(&service->queued_jobs, 1);
			pg_atomic_fetch_sub_u64(&service->queued_row_keys, oldest->row_keys);
			pg_atomic_fetch_add_u64(&service->gpus[g].running_row_keys, oldest->row_keys);
			return oldest;
		}
	}
}

/* The service's buffer in this process, pinned where CUDA could, or NULL. */
static char *pool_base = NULL;

/*
 * Maps the service's buffer, which the supervisor creates once the first
 * process found a GPU, and pins it for the GPU, which then copies jobs from
 * it directly.  Without it, every job comes in a segment of its own.
 */
static void
map_pool(int g)
{
	Size		bytes = (Size) service->pool_chunks * POOL_CHUNK;
	PoolState	state;
	char		name[SHM_OBJECT_NAME_LEN];
	void	   *p;
	char	   *why = NULL;

	while ((state = pg_atomic_read_u32(&service->pool_state)) == POOL_UNDECIDED)
	{
		pg_usleep(10000L);
		if (getppid() != service->supervisor_pid)
			_exit(0);
	}
	if (state != POOL_CREATED)
		return;
	pg_read_barrier();
	shm_object_name(name, "buffer");
	p = shm_object_map(name, bytes, true);
	if (p == MAP_FAILED)
	{
		ereport(LOG,
				(errmsg("gpusort: GPU %d: the service's buffer of %zu MB cannot be mapped: %m",
						g, bytes >> 20)));
		return;
	}
	pool_base = p;
	if (!gpu_engine_pin_host(p, bytes, &why))
		ereport(LOG,
				(errmsg("gpusort: GPU %d: the service's buffer cannot be pinned: %s",
						g, why)));
	pg_write_barrier();
	pg_atomic_write_u32(&service->pool_ready, 1);
}

/* Runs a job on the segment at base (service_shared.h's layout). */
static bool
run_on_gpu(ServiceSlot *slot, char *base, char **why)
{
	uint32		n = slot->nrows;

	if (slot->kind == SERVICE_JOB_VALUES)
	{
		SortValues	values;

		values.type = slot->value_type;
		values.descending = slot->descending;
		values.n = n;
		values.in = base;
		values.out = base + (Size) n * key_value_width(slot->value_type);
		return gpu_sort_engine.sort_values(&values, why);
	}
	else
	{
		SortJob		job;
		const uint64 **keys = palloc(sizeof(uint64 *) * Max(slot->nkeys, 1));
		bool		ok;

		for (int c = 0; c < slot->nkeys; c++)
			keys[c] = (const uint64 *) (base + service_keys_bytes(n, c));
		memset(&job, 0, sizeof(job));
		job.nrows = n;
		job.nkeys = slot->nkeys;
		job.keys = keys;
		if (slot->payload)
		{
			job.payload = (const uint64 *) (base + service_keys_bytes(n, slot->nkeys));
			job.payload_out = (uint64 *) job.payload;
			job.want_sorted_keys = slot->want_sorted_keys;
			if (job.want_sorted_keys)
				job.keys_sorted = (uint64 *) keys[0];
		}
		else
			job.perm = (uint32 *) (base + service_perm_offset(n, slot->nkeys, false));
		ok = gpu_sort_engine.sort_job(&job, why);
		slot->payload_sorted = ok && job.payload_sorted;
		slot->keys_sorted = ok && job.keys_sorted != NULL;
		strlcpy(slot->kernel, job.kernel, sizeof(slot->kernel));
		return ok;
	}
}

/* Runs a slot's job and ends it. */
static void
run_slot(int g, ServiceSlot *slot, uint32 word, MemoryContext cxt)
{
	ServiceGpu *gpu_entry = &service->gpus[g];
	MemoryContext oldcxt = MemoryContextSwitchTo(cxt);
	char	   *why = NULL;
	void	   *base = MAP_FAILED;
	bool		ok = false;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	slot->gpu = g;
	slot->wait_ms = ms_since(slot->queued_at);
	slot->why[0] = '\0';
	slot->kernel[0] = '\0';
	slot->declined = false;
	slot->busy = false;
	if (held_job(slot->kind) && !held_job_has_memory(slot->kind))
		base = NULL;
	else if (slot->pool_count > 0)
	{
		if (pool_base)
			base = pool_base + (Size) slot->pool_first * POOL_CHUNK;
		else
			why = "the GPU process has no map of the service's buffer";
	}
	else
	{
		base = shm_object_map(slot->segment, slot->segment_bytes, true);
		if (base == MAP_FAILED)
			why = psprintf("the GPU process could not map the job's object %s: %m",
						   slot->segment);
	}
	if (base != MAP_FAILED)
	{
		gpu_engine_set_cancel_flag(&slot->cancel);
		PG_TRY();
		{
			ok = held_job(slot->kind) ? held_run(slot, base, &why) :
				run_on_gpu(slot, base, &why);
		}
		PG_CATCH();
		{
			ErrorData  *edata;

			MemoryContextSwitchTo(cxt);
			edata = CopyErrorData();
			FlushErrorState();
			why = psprintf("the GPU process failed: %s", edata->message);
			ok = false;
		}
		PG_END_TRY();
		gpu_engine_set_cancel_flag(NULL);
		if (base && slot->pool_count == 0)
			munmap(base, slot->segment_bytes);
	}
	slot->ok = ok;
	if (!ok)
	{
		strlcpy(slot->why, why ? why : "unknown", sizeof(slot->why));
		/*
		 * a cancel is the backend's doing, and held rows declined for room
		 * a choice; anything else is worth a line
		 */
		if (!slot->cancel && !slot->declined)
			ereport(LOG,
					(errmsg("gpusort: GPU %d failed a job of %u rows for process %d: %s",
							g, slot->nrows, slot->owner_pid, slot->why)));
	}

	/* what the service shows, and what backends expect of its queue */
	{
		double		ms = ms_since(start);

		slot->run_ms = ms;
		pg_atomic_fetch_add_u64(&gpu_entry->jobs, 1);
		pg_atomic_fetch_add_u64(&gpu_entry->rows, slot->nrows);
		pg_atomic_fetch_add_u64(&gpu_entry->busy_us, (uint64) (ms * 1000.0));
		if (slot->kind >= SERVICE_JOB_HOLD_ADD && slot->kind <= SERVICE_JOB_HOLD_END &&
			!slot->declined)
			pg_atomic_fetch_add_u64(&gpu_entry->held_jobs, 1);
		if (!ok && !slot->cancel && !slot->declined)
			pg_atomic_fetch_add_u64(&gpu_entry->failures, 1);
		else if (slot->row_keys >= TIMED_ROW_KEYS)
			gpu_entry->ns_per_row_key =
				service_pace(gpu_entry->ns_per_row_key, ms, slot->row_keys);
		gpu_entry->mem_used = gpu_engine_mem_used();
		gpu_entry->mem_committed = (Size) gpu_stage_committed_bytes();
		pg_atomic_fetch_sub_u64(&gpu_entry->running_row_keys, slot->row_keys);
	}
	service_slot_finish(slot, word);
	MemoryContextSwitchTo(oldcxt);
	MemoryContextReset(cxt);
}

void
gpu_process_main(int g)
{
	ServiceGpu *gpu_entry = &service->gpus[g];
	GpuEngineConfig config;
	MemoryContext cxt;
	char	   *why = NULL;
	double		ms;

	become_gpu_process(g);
	cxt = AllocSetContextCreate(TopMemoryContext, "gpusort GPU process",
								ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(cxt);

	if (g == 0)
		list_gpus();
	if (pg_atomic_read_u32(&service->ngpus) == 0)
		idle(g, GPU_NO_DEVICE);

	/*
	 * the GPU, with its share of gpusort.service_memory, or of 80% of its
	 * memory free when listed
	 */
	config.device = gpu_entry->info.id;
	config.memory_setting = "gpusort.service_memory";
	if (gpusort_service_memory > 0)
		config.memory_mb = Max(gpusort_service_memory / gpu_entry->share, 1);
	else
		config.memory_mb = (int) Max(gpu_entry->info.free_mb * 0.8 / gpu_entry->share, 1);
	if (!gpu_engine_start_with(&config, &why, &ms))
	{
		strlcpy(gpu_entry->reason, why, sizeof(gpu_entry->reason));
		ereport(LOG, (errmsg("gpusort: GPU %d cannot be started: %s", g, why)));
		idle(g, GPU_FAILED);
	}
	map_pool(g);
	gpu_entry->reason[0] = '\0';
	gpu_entry->mem_limit = gpu_engine_mem_limit();
	gpu_entry->mem_used = gpu_engine_mem_used();
	gpu_entry->mem_committed = (Size) gpu_stage_committed_bytes();
	if (gpu_entry->ns_per_row_key <= 0)
		gpu_entry->ns_per_row_key = 2.0;
	pg_atomic_write_u32(&gpu_entry->state, GPU_READY);
	ereport(LOG,
			(errmsg("gpusort: GPU %d (%s) ready in %.0f ms, device memory limit %zu MB",
					g, gpu_entry->info.name, ms, gpu_engine_mem_limit() >> 20)));
	MemoryContextReset(cxt);

	for (int wait = 0;; wait++)
	{
		struct timespec until;
		ServiceSlot *slot;
		uint32		word;

		/* woken by each job it may run, or after a while, to look around */
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += WAKE_WAIT_NS;
		if (until.tv_nsec >= 1000000000L)
		{
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		(void) sem_timedwait(&service->gpus[g].wake, &until);
		if (getppid() != service->supervisor_pid)
			_exit(0);
		while ((slot = take_job(g, &word)) != NULL)
			run_slot(g, slot, word, cxt);
		if (wait % ORPHAN_CHECK_WAITS == 0)
			held_drop_orphans();
	}
}

#endif							/* GPUSORT_WITH_CUDA */
