/*-------------------------------------------------------------------------
 *
 * service_shared.h
 *	  The GPU service's shared memory, which backends, the supervisor and
 *	  the GPU processes share (CUDA builds only).  The service is split by
 *	  process:
 *
 *	  shared.c		the shared memory, its job slots, and what it publishes
 *	  shm_objects.c the service's own shared memory objects, in which all
 *					of it lies
 *	  supervisor.c	the start, and the background worker that starts and
 *					watches the GPU processes
 *	  gpu_process.c a GPU process: one GPU's context, running jobs
 *	  held.c		the inputs a GPU process holds for backends
 *	  client.c		the backends' side: the chooser's GPU engine
 *	  job_space.c	a backend's jobs: their memory, slots, run and end
 *	  buckets.c		a sort too large for one GPU, split into key ranges
 *	  stager.c		the rows of an input over a node's budget, held by
 *					the service
 *
 * A GPU process maps none of PostgreSQL's shared memory: this struct, the
 * service's buffer and the jobs' memory are gpusort's own objects
 * (shm_objects.h), whatever dynamic_shared_memory_type is, and nothing that
 * a GPU process reads or writes lies elsewhere.
 *
 * A job travels in shared memory: the key columns, then the payload, then
 * room for the order.  That is a run of chunks of the service's buffer
 * (which the supervisor makes once a GPU is found, and every GPU process
 * pins, so that the GPU copies it with no copy by its process), or, when
 * the buffer has no room, an object of the backend's own.  A GPU process
 * maps both by name, sorts the job in place and wakes the backend with
 * SIGUSR1, which sets a backend's latch (procsignal_sigusr1_handler), as
 * the postmaster wakes a background worker's bgw_notify_pid.
 *
 * A slot's state says who owns it, and changes only by compare-and-swap of
 * the whole word, whose upper bits count the slot's uses (so that a late
 * actor cannot act on the slot's next job):
 *
 *	  FREE --backend--> FILLING --backend--> QUEUED --GPU process--> RUNNING+g
 *	  RUNNING+g --GPU process (or, if it died, the supervisor)--> DONE
 *	  DONE --backend--> RELEASING --> FREE (its chunks given back, use + 1)
 *
 * A backend that gives up (a cancel, an error) sets abandoned and releases
 * the slot itself if it is FILLING, QUEUED or DONE; otherwise whoever ends
 * the job releases it.  The GPU processes take no lock and no PGPROC of
 * their own: they only touch slots, chunks' owners and their own GPU's
 * entry, and signal backends.  Backends allocate chunks under
 * service_pool_lock, an LWLock of PostgreSQL's that no GPU process takes.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_SERVICE_SHARED_H
#define GPUSORT_SERVICE_SHARED_H

#include "postgres.h"

#include <semaphore.h>
#include <signal.h>

#include "port/atomics.h"
#include "portability/instr_time.h"
#include "storage/lwlock.h"

#include "service/service.h"
#include "service/shm_objects.h"

#define SERVICE_SLOTS		512

typedef enum SlotState
{
	SLOT_FREE = 0,
	SLOT_FILLING,
	SLOT_QUEUED,
	SLOT_DONE,
	SLOT_RELEASING,
	SLOT_RUNNING				/* + the GPU's number */
} SlotState;

/* A slot's state word: its uses above, its SlotState in the low byte. */
#define SLOT_USE					((uint32) 0x100)
#define SLOT_STATE(word)			((word) & 0xFF)
#define SLOT_WORD(word, state)		(((word) & ~(uint32) 0xFF) | (uint32) (state))

/* The service's buffer, in chunks. */
#define POOL_CHUNK			((Size) 1024 * 1024)
#define POOL_MAX_CHUNKS		16384

/* Whether the service has a buffer: the supervisor decides, once. */
typedef enum PoolState
{
	POOL_UNDECIDED = 0,			/* no GPU found yet */
	POOL_CREATED,				/* the object "buffer" is made */
	POOL_NONE					/* no buffer: jobs travel in segments */
} PoolState;

typedef enum ServiceJobKind
{
	SERVICE_JOB_KEYS,			/* a SortJob */
	SERVICE_JOB_VALUES,			/* a SortValues */

	/*
	 * An input larger than a node's budget, held by one GPU process
	 * (stager.c): a store's rows laid out flat (service_held_layout), the
	 * sort, the next rows in order into the job's memory, the end.
	 */
	SERVICE_JOB_HOLD_ADD,
	SERVICE_JOB_HOLD_SORT,
	SERVICE_JOB_HOLD_NEXT,
	SERVICE_JOB_HOLD_END
} ServiceJobKind;

typedef struct ServiceSlot
{
	pg_atomic_uint32 state;
	pg_atomic_uint32 abandoned;
	volatile int cancel;		/* what the GPU's kernels watch */
	uint64		ticket;			/* the order of the queue */
	int			pool_first;		/* its chunks of the buffer, if pool_count */
	int			pool_count;
	char		segment[SHM_OBJECT_NAME_LEN];	/* else its object */
	Size		segment_bytes;
	int			target_gpu;		/* the GPU process that must run it, or -1 */
	int			owner_pid;		/* the backend's, woken when it ends */
	uint64		row_keys;		/* rows times key columns, for the wait */
	instr_time	queued_at;		/* when its backend queued it */

	/* the job */
	ServiceJobKind kind;
	uint32		nrows;
	int			nkeys;			/* a SortJob's key columns; held rows: the
								 * words of their keys */
	bool		payload;		/* a payload follows the keys */
	bool		want_sorted_keys;
	SortValueType value_type;
	bool		descending;
	uint32		held_id;		/* held rows: the input's number */
	int			held_owner;		/* the backend whose input it is (it may
								 * be another's: a parallel query's) */
	Size		held_budget;	/* the node's memory budget */
	double		held_expected;	/* first ADD: the bytes the input is
								 * expected to take (0: not known) */
	Size		held_bytes;		/* ADD: the blocks' bytes; NEXT: room */
	int64		held_from;		/* NEXT: the place in the sorted order of
								 * the first row to lay out */
	int			held_group_words;	/* SORT: a Unique's leading key words,
									 * whose groups' first rows alone are
									 * kept (0: every row) */

	/* its result */
	bool		ok;
	bool		declined;		/* not ok: held rows declined for want of
								 * device memory, no failure */
	bool		busy;			/* declined: a new input that would fit
								 * but for the room other inputs keep */
	bool		lost;			/* its GPU process died during the job */
	bool		payload_sorted;
	bool		keys_sorted;	/* in place of the first key column */
	int64		held_rows;		/* NEXT: rows laid out in the job's memory;
								 * SORT: the rows the input holds, in order */
	Size		held_need;		/* NEXT: room the next row needs, if more */
	int			gpu;			/* the GPU process that ran it */
	double		wait_ms;		/* in the queue */
	double		run_ms;			/* on that process */
	char		kernel[SORT_KERNEL_LEN];	/* a SortJob's (sort_job.h) */
	char		why[256];
} ServiceSlot;

typedef enum GpuProcessState
{
	GPU_DOWN = 0,				/* no process (yet, or it died) */
	GPU_STARTING,
	GPU_READY,
	GPU_NO_DEVICE,				/* no GPU on this host: the process idles */
	GPU_FAILED					/* its GPU cannot be started */
} GpuProcessState;

typedef struct ServiceGpu
{
	sem_t		wake;			/* posted for each job it may run */
	pg_atomic_uint32 state;
	int			pid;
	GpuDeviceInfo info;			/* info.id: the CUDA device */
	int			share;			/* processes on that device */
	Size		mem_limit;
	Size		mem_used;		/* device memory allocated, caches too */
	Size		mem_committed;	/* kept for held inputs (a new one's room:
								 * mem_limit - mem_committed) */
	pg_atomic_uint64 jobs;
	pg_atomic_uint64 rows;
	pg_atomic_uint64 busy_us;
	pg_atomic_uint64 held_jobs;	/* jobs on held rows run (not declined):
								 * inputs waiting for room see the others
								 * go on */
	pg_atomic_uint64 failures;
	pg_atomic_uint64 running_row_keys;
	int64		restarts;		/* the supervisor's */
	double		ns_per_row_key; /* what its jobs took, lately */
	char		reason[256];
} ServiceGpu;

typedef struct ServiceShared
{
	int			supervisor_pid;
	pg_atomic_uint32 ngpus;		/* entries of gpus[] once probed */
	pg_atomic_uint32 probed;	/* the first GPU process listed them */
	pg_atomic_uint64 next_ticket;
	pg_atomic_uint32 next_held_id;
	pg_atomic_uint32 queued_jobs;
	pg_atomic_uint64 queued_row_keys;
	pg_atomic_uint64 fallbacks[SERVICE_NUM_FALLBACKS];
	double		cpu_ns_per_row_key; /* what backends' CPU sorts took lately
									 * (0: none yet), updated without a lock */
	ServiceGpu	gpus[SERVICE_MAX_GPUS];
	ServiceSlot slots[SERVICE_SLOTS];

	/*
	 * the buffer: the object "buffer" once pool_state is POOL_CREATED,
	 * ready once a GPU process has mapped it; its chunks are taken under
	 * service_pool_lock, and given back without it
	 */
	pg_atomic_uint32 pool_state;	/* a PoolState */
	pg_atomic_uint32 pool_ready;
	int			pool_chunks;
	pg_atomic_uint32 chunk_owner[POOL_MAX_CHUNKS];	/* slot + 1, or 0: free */
} ServiceShared;

/* Is process pid gone?  (Its buffer or its held rows can go too.) */
static inline bool
service_process_gone(int pid)
{
	return kill(pid, 0) != 0 && errno == ESRCH;
}

/* Jobs of fewer row-keys do not count in the paces of the engines. */
#define TIMED_ROW_KEYS		100000

/* A pace (ns per row-key) moved toward a new job's, or that job's if none. */
static inline double
service_pace(double pace, double ms, uint64 row_keys)
{
	double		ns = ms * 1e6 / (double) row_keys;

	return pace > 0 ? 0.8 * pace + 0.2 * ns : ns;
}

/* shared.c */
extern ServiceShared *service;
extern LWLock *service_pool_lock;	/* backends': the buffer's chunks */
extern bool service_in_gpu_process; /* is this process a GPU process? */
extern void service_shmem_init(void);	/* asks for it (_PG_init) */

/* Is there room in /dev/shm for an object of bytes? */
extern bool service_room_for_segment(Size bytes);

/*
 * Ends a slot's job, from the state word running (GPU process, supervisor),
 * and wakes its backend (SIGUSR1), or releases the slot if the backend
 * gave up.
 */
extern void service_slot_finish(ServiceSlot *slot, uint32 running);

/* Releases a slot in the state word from (its owner's): false if not so. */
extern bool service_slot_release(ServiceSlot *slot, uint32 from);


/* The layout of a job's segment. */
static inline Size
service_keys_bytes(uint32 nrows, int nkeys)
{
	return (Size) nrows * nkeys * sizeof(uint64);
}

static inline Size
service_perm_offset(uint32 nrows, int nkeys, bool payload)
{
	return service_keys_bytes(nrows, nkeys) + (payload ? (Size) nrows * sizeof(uint64) : 0);
}

/*
 * The layout of a store's rows that a GPU process is to hold: the tuple
 * blocks back to back (bytes in all), then the nwords words of the rows'
 * keys (word 0 of every row first), each row's place in the blocks and its
 * length; the offset of each part into *keys, *places and *lengths.
 */
static inline Size
service_held_layout(uint32 nrows, int nwords, Size bytes, Size *keys,
					Size *places, Size *lengths)
{
	*keys = TYPEALIGN(8, bytes);
	*places = *keys + (Size) nrows * nwords * sizeof(uint64);
	*lengths = *places + (Size) nrows * sizeof(uint64);
	return *lengths + (Size) nrows * sizeof(uint32);
}

/* gpu_process.c: the body of a GPU process; it never returns */
extern void gpu_process_main(int gpu);

/* client.c */
extern const SortEngine service_sort_engine;

#endif							/* GPUSORT_SERVICE_SHARED_H */
