/*-------------------------------------------------------------------------
 *
 * shared_stage.c
 *	  One input held for all the participants of a parallel query: where a
 *	  Gather Merge reads GpuSort's rows from its workers and its leader,
 *	  every participant adds its rows to one input that the engine holds
 *	  (the GPU service's RowStager: begin_shared, join), and the leader
 *	  sorts all of them at once and returns them in order, while the
 *	  workers return none but the rows led by a NULL (or those the engine
 *	  would not take): the Gather Merge then merges a stream that is nearly
 *	  the whole input with short ones, instead of the sorted shares of every
 *	  participant read through the tuple queues.
 *
 * Every GpuSort below a Gather is parallel-aware (planner.c), so that the
 * executor gives it shared memory of the query: a NodeShare, which the
 * leader fills before the workers start and the workers join, followed by
 * the area where the workers leave their statistics for EXPLAIN ANALYZE
 * (worker_stats.c).  The planner marks those whose rows go to a Gather
 * Merge as ones whose participants may share their input
 * (gpusort_mark_shared).  Whether the rows are shared is decided by the
 * leader, for the
 * query's whole input: where the engine cannot hold them, or the leader
 * would not read its own rows (parallel_leader_participation off), every
 * participant sorts its own, as before.  A participant joins the input as
 * it begins to read its rows (node_share_attach), says when it adds no
 * more (node_share_done), with the stores it added, and the leader sorts
 * once every participant that joined has said so (node_share_wait).  No
 * one waits for a participant that has not joined: under a Parallel
 * Append a worker may run another branch and never reach this node, and
 * a worker may start late or not at all.  Once the leader has taken the
 * input to sort, no one may join it: a participant that comes later finds
 * its input read to the end by the others (a parallel plan hands out its
 * work to those that come, and a participant leaves it only when none is
 * left), sorts its own empty input, and, in a parallel window, reads no
 * slices.  The workers of a parallel window wait for the leader to sort;
 * the leader reaches every branch of a Parallel Append that is not done,
 * and where it stops the query early (a LIMIT above the Gather), it says
 * so as it shuts the node down (node_share_shutdown), and they stop
 * waiting.  The shared memory goes when the Gather shuts down, before
 * EXPLAIN ANALYZE reads the node: only what the node copied of it
 * (sharing, the workers' statistics, which the leader copies as the node
 * shuts down, before the Gather) is read then.
 *
 * A parallel window (window_path.c) reads the one input in slices: once
 * the leader has sorted it (node_share_sorted), every participant takes
 * slices of its rows in turn (node_share_next_slice) and computes the
 * window's values over the partitions that start in each.  That needs
 * every row of every participant in the one input, which each says as it
 * adds no more.  Where the engine refuses a participant's rows midway (its
 * device memory taken by other sorts), no Gather Merge is there to merge
 * the rest: a worker then hands the rows it could not add to the leader,
 * in a file of a shared file set that the leader made with the share
 * (node_share_put_rest), and the leader sorts them with its own and the
 * rows held, and computes the whole window alone (node_share_alone), as
 * PostgreSQL's WindowAgg would above a Gather Merge.  The rows led by a
 * NULL, which the engine does not hold, the workers hand to the leader the
 * same way, in files of their own (node_share_put_null), and the leader
 * computes their partitions after its slices.  Only rows that went nowhere
 * the leader can read (a worker that could not join the input, or map the
 * file set) fail the query.  Where the leader does not share
 * the input at all, the first participant to ask does the whole window
 * alone (node_share_solo) and the others return nothing: the parallel
 * scan below hands all its pages to the one that reads it.
 *
 * Under a Gather in the place of a Unique and a Gather Merge
 * (gpusort_distinct_gather), the participants add their rows the same way,
 * but no one reads slices: the leader returns them all, in order, the
 * first of each group only (distinct_filter.c), with those led by a NULL
 * and those the engine refused that the workers handed over; the workers
 * return none (and where the input is not shared, one participant returns
 * all, as above).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "optimizer/optimizer.h"
#include "storage/buffile.h"
#include "storage/condition_variable.h"
#include "storage/dsm.h"
#include "storage/sharedfileset.h"
#include "storage/spin.h"

#include "compat.h"
#include "node/collect/memory.h"
#include "node/node_state.h"
#include "node/parallel/worker_stats.h"
#include "node/paths/runs/runs.h"
#include "node/paths/runs/share.h"
#include "node/plan/gpusort_node.h"

typedef struct NodeShare
{
	bool		shared;			/* the participants add to one input */
	Size		tail;			/* bytes of key after each tuple held
								 * (spill_stage.c): every participant's
								 * the same */
	StageShare	stage;			/* the engine's handle on it */
	slock_t		mutex;
	int			attached;		/* participants that joined the input */
	int			ndone;			/* of those, the ones that add no more */
	bool		closed;			/* the leader took it to sort: no more join */
	bool		over;			/* the leader shut the node down */
	int64		stores;			/* the stores they added */
	int64		rows;			/* and those stores' rows */
	bool		elsewhere;		/* some participant's rows are not all in
								 * the shared input */
	ConditionVariable done_cv;	/* ndone grows, sorted or over is set */

	/* a parallel window's slices */
	bool		solo_taken;		/* not shared: a participant does it all */
	bool		sorted;			/* the leader sorted the shared input */
	int64		held_rows;		/* its rows */
	int64		slice_rows;		/* the rows of a slice */
	int64		next_slice;		/* the next slice to take */

	/* a parallel window's rows that the engine refused */
	dsm_handle	rest_files;		/* the segment of the file set that takes
								 * them to the leader (0: none) */
	bool		lost;			/* some went nowhere the leader reads */
} NodeShare;

/* The fewest rows of a parallel window's slice, and the slices per participant. */
#define MIN_SLICE_ROWS		1024
#define SLICES_PER_PARTICIPANT	8

/* The workers' statistics, after the NodeShare. */
static SharedWorkerStats *
share_worker_stats(NodeShare *share)
{
	return (SharedWorkerStats *) ((char *) share + MAXALIGN(sizeof(NodeShare)));
}

Size
node_share_estimate(CustomScanState *node, ParallelContext *pcxt)
{
	return add_size(MAXALIGN(sizeof(NodeShare)), worker_stats_size(pcxt->nworkers));
}

/*
 * May this leader's participants add to one input: the engine that holds
 * rows shares them, the order lets it hold them (can_hold, as spill_stage.c
 * judges it), and the leader reads its own rows (the Gather Merge then
 * reads the leader's stream)?
 */
static const RowStager *
share_stager(GpuSortState *state, bool can_hold)
{
	const RowStager *stager;

	if (!gpusort_shares_input((CustomScan *) state->css.ss.ps.plan) ||
		!state->settings.enabled || !state->settings.spill || state->random_access ||
		!parallel_leader_participation || !can_hold)
		return NULL;
	stager = sort_engine_sharing_stager();
	/* slices need rows ordered by their held keys alone, read from anywhere */
	if (node_is_slices(state) && stager && (state->store.tail > 0 || stager->seek == NULL))
		return NULL;
	return stager;
}

/*
 * The rows of all participants, as the planner counts them: each one's
 * share times the parallel divisor (the workers, and the leader's part,
 * which shrinks as there are more workers; cost_gather's reckoning).
 */
static double
all_participants_rows(Plan *plan, int nworkers)
{
	double		divisor = nworkers;
	double		leader = 1.0 - 0.3 * nworkers;

	if (parallel_leader_participation && leader > 0)
		divisor += leader;
	return plan->plan_rows * Max(divisor, 1.0);
}

/*
 * The segment of the file set that takes a parallel window's refused rows
 * to the leader goes with the query's memory, on error too (it is mapped
 * for the session, not the resource owner); the files go once every
 * participant has let go of it.
 */
static void
detach_rest_files(void *arg)
{
	GpuSortState *state = arg;

	if (state->parallel->rest_seg)
		dsm_detach(state->parallel->rest_seg);
	state->parallel->rest_seg = NULL;
	/* (their buffers went with the resource owner) */
	state->parallel->rest.file = state->parallel->nulls.file = NULL;
	state->parallel->rest.read = state->parallel->nulls.read = NULL;
}

/* Keeps seg, mapped for the session, until the query's memory goes. */
static void
keep_rest_files(GpuSortState *state, dsm_segment *seg)
{
	dsm_pin_mapping(seg);
	detach_rest_files(state);	/* a rescan's: the last scan's */
	state->parallel->rest_seg = seg;
	if (!state->parallel->rest_detach.func)
	{
		state->parallel->rest_detach.func = detach_rest_files;
		state->parallel->rest_detach.arg = state;
		MemoryContextRegisterResetCallback(state->css.ss.ps.state->es_query_cxt,
										   &state->parallel->rest_detach);
	}
}

static SharedFileSet *
rest_fileset(GpuSortState *state)
{
	return (SharedFileSet *) dsm_segment_address(state->parallel->rest_seg);
}

/* Makes the node's ShareState, as it begins: no parallel query yet. */
void
node_share_create(GpuSortState *state)
{
	state->parallel = palloc0(sizeof(ShareState));
	state->parallel->rest.kind = "rest";
	state->parallel->nulls.kind = "nulls";
}

/*
 * In the leader, before the workers start (again, on a rescan, once the
 * input of the last scan is let go): the input they share, if any.
 */
void
node_share_init(GpuSortState *state, ParallelContext *pcxt, void *coordinate,
				bool can_hold)
{
	NodeShare  *share = coordinate;
	const RowStager *stager = share_stager(state, can_hold);
	Plan	   *plan = state->css.ss.ps.plan;
	double		rows = all_participants_rows(plan, pcxt->nworkers);
	char	   *why = NULL;

	memset(share, 0, sizeof(NodeShare));
	SpinLockInit(&share->mutex);
	ConditionVariableInit(&share->done_cv);
	worker_stats_init(share_worker_stats(share), pcxt->nworkers);
	state->parallel->share = share;
	state->parallel->worker_stats = share_worker_stats(share);
	state->parallel->nworkers_kept = -1;	/* a rescan's: the last run's to come */
	state->parallel->pcxt = pcxt;
	state->parallel->share_done = false;
	state->parallel->share_attached = false;
	state->parallel->sharing = false;
	state->parallel->held_shared = false;
	state->parallel->rest.next_worker = state->parallel->nulls.next_worker = 0;
	if (stager == NULL)
		return;

	/* the rows of every participant: the plan's are one's share */
	/* (a window's slices are read from one part) */
	state->parallel->shared_stage =
		stager->begin_shared(node_budget(state), rows,
							 row_store_expected_bytes(&state->store, rows,
													  plan->plan_width),
							 node_is_slices(state) ? 1 : state->settings.held_gpus,
							 &share->stage, &why);
	if (state->parallel->shared_stage == NULL)
		return;
	state->parallel->shared_stager = stager;
	share->shared = true;
	share->tail = state->store.tail;
	state->parallel->sharing = true;

	/* a parallel window's: the files for rows the engine may refuse */
	if (node_is_slices(state) && !state->store.keys_only)
	{
		dsm_segment *seg = dsm_create(sizeof(SharedFileSet), 0);

		SharedFileSetInit(dsm_segment_address(seg), seg);
		keep_rest_files(state, seg);
		share->rest_files = dsm_segment_handle(seg);
	}
}

/*
 * In a worker, as it starts: the leader's share.  It joins the input only
 * as it begins to read its rows (node_share_attach), if it ever does.
 */
void
node_share_join(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	GpuSortState *state = (GpuSortState *) node;
	NodeShare  *share = coordinate;

	state->parallel->share = share;
	state->parallel->worker_stats = share_worker_stats(share);
	state->parallel->share_done = false;
	state->parallel->share_attached = false;
	state->parallel->sharing = share->shared;
	state->parallel->held_shared = false;
}

/*
 * A worker that joined the participants: the engine's stage of the input
 * they share, and a parallel window's files for the rows the engine may
 * refuse.  The leader keeps both until this worker adds no more.  A worker
 * that cannot join the stage sorts its own rows, but still says when its
 * input ends, as the leader waits for it.
 */
static void
join_stage(GpuSortState *state)
{
	NodeShare  *share = state->parallel->share;
	const RowStager *stager = sort_engine_sharing_stager();
	char	   *why = NULL;

	if (stager == NULL || share->tail != state->store.tail)
		return;
	state->parallel->shared_stager = stager;
	state->parallel->shared_stage = stager->join(node_budget(state),
									   &share->stage, &why);
	if (share->rest_files != 0 && state->parallel->shared_stage)
	{
		dsm_segment *seg = dsm_attach(share->rest_files);

		/* (none: the rows the engine may refuse are lost, and say so) */
		if (seg)
		{
			keep_rest_files(state, seg);
			SharedFileSetAttach(rest_fileset(state), seg);
		}
	}
}

/*
 * A rescan's new workers, in the leader: the last scan's input, if unused,
 * is let go, and a new one begun.
 */
void
node_share_reinit(GpuSortState *state, ParallelContext *pcxt, void *coordinate,
				  bool can_hold)
{
	if (state->parallel->shared_stage)
		state->parallel->shared_stager->end(state->parallel->shared_stage);
	state->parallel->shared_stage = NULL;
	node_share_init(state, pcxt, coordinate, can_hold);
}

/* Is this participant's stage the input the participants share? */
bool
node_share_active(GpuSortState *state)
{
	return state->parallel->held_shared;
}

/*
 * This participant begins to read its rows: it joins the input they share
 * (once), or, where the leader has already taken it to sort, it shares
 * nothing (the others read all there was: see the head of the file) and
 * false.
 */
bool
node_share_attach(GpuSortState *state)
{
	NodeShare  *share = state->parallel->share;

	if (state->parallel->share_attached)
		return true;
	SpinLockAcquire(&share->mutex);
	state->parallel->share_attached = !share->closed;
	if (state->parallel->share_attached)
		share->attached++;
	SpinLockRelease(&share->mutex);
	if (!state->parallel->share_attached)
	{
		Assert(IsParallelWorker());
		state->parallel->sharing = false;
		return false;
	}
	if (IsParallelWorker())
		join_stage(state);
	return true;
}

/*
 * A parallel window's participant that came after the leader took the
 * input to sort: it reads no slices, and its input has no rows left.
 */
SliceReading
node_share_late_slices(GpuSortState *state)
{
	if (!TupIsNull(ExecProcNode(outerPlanState(state))))
		elog(ERROR, "GpuSort found rows of a parallel window's input after it was sorted");
	return SLICES_LATE;
}

/*
 * The node shuts down, and then the Gather, whose shared memory goes: the
 * leader keeps a copy of its workers' statistics.  That may be before it
 * sorted the input (the query stopped early): the workers that wait for it
 * stop waiting.
 */
void
node_share_shutdown(GpuSortState *state)
{
	NodeShare  *share = state->parallel->share;

	if (share != NULL && !IsParallelWorker())
	{
		SpinLockAcquire(&share->mutex);
		share->closed = true;
		share->over = true;
		SpinLockRelease(&share->mutex);
		ConditionVariableBroadcast(&share->done_cv);
	}
	if (state->parallel->worker_stats && !IsParallelWorker())
		(void) node_share_worker_stats(state, NULL);
	state->parallel->share = NULL;
	state->parallel->worker_stats = NULL;
	state->parallel->pcxt = NULL;
}

/*
 * In the leader: its workers' statistics (*workers, in worker order), and
 * how many; copied from the query's shared memory the first time after
 * each run of the Gather.
 */
int
node_share_worker_stats(GpuSortState *state, WorkerSortStats **workers)
{
	if (state->parallel->nworkers_kept < 0 && state->parallel->worker_stats)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(state->css.ss.ps.state->es_query_cxt);

		state->parallel->nworkers_kept = worker_stats_copy(state->parallel->worker_stats, &state->parallel->workers_kept);
		MemoryContextSwitchTo(oldcxt);
	}
	if (workers)
		*workers = state->parallel->workers_kept;
	return Max(state->parallel->nworkers_kept, 0);
}

/* In a worker: what it did, where the leader's EXPLAIN ANALYZE reads it. */
void
node_share_publish_stats(GpuSortState *state, const WorkerSortStats *stats)
{
	if (state->parallel->worker_stats)
		worker_stats_publish(state->parallel->worker_stats, stats);
}

/*
 * This participant adds no more rows: stores stores of rows rows in all,
 * all its rows (all_held) or not.  Once only.
 */
void
node_share_done(GpuSortState *state, int64 stores, int64 rows, bool all_held)
{
	NodeShare  *share = state->parallel->share;

	if (state->parallel->share_done || share == NULL)
		return;
	state->parallel->share_done = true;
	SpinLockAcquire(&share->mutex);
	share->ndone++;
	share->stores += stores;
	share->rows += rows;
	share->elsewhere |= !all_held;
	/* the leader reads its own rows elsewhere, and those handed over */
	share->lost |= !all_held && IsParallelWorker() && !state->parallel->rest_handed;
	SpinLockRelease(&share->mutex);
	ConditionVariableBroadcast(&share->done_cv);
}

/*
 * Sleeps until, in the leader (sorted false), every participant that
 * joined the input adds no more, and then closes it to others; in a
 * worker, until the leader has sorted the input or shut the node down.
 * An error of a worker is raised here, as the leader's wait reads the
 * workers' messages.
 */
static void
share_sleep_until(NodeShare *share, bool sorted)
{
	ConditionVariablePrepareToSleep(&share->done_cv);
	for (;;)
	{
		bool		ready;

		SpinLockAcquire(&share->mutex);
		ready = sorted ? share->sorted || share->over :
			share->ndone >= share->attached;
		if (ready && !sorted)
			share->closed = true;
		SpinLockRelease(&share->mutex);
		if (ready)
			break;
		ConditionVariableSleep(&share->done_cv, compat_service_wait_event());
	}
	ConditionVariableCancelSleep();
}

/*
 * In the leader, once it adds no more: waits until every participant that
 * joined adds no more, closes the input to those that have not, and
 * returns the stores and (*rows) rows that all participants added.
 */
int64
node_share_wait(GpuSortState *state, int64 *rows)
{
	NodeShare  *share = state->parallel->share;

	Assert(!IsParallelWorker() && state->parallel->share_done);
	share_sleep_until(share, false);
	*rows = share->rows;
	return share->stores;
}

/*
 * A parallel window whose input is not shared: is this participant the one
 * that does it all (the first to ask)?
 */
bool
node_share_solo(GpuSortState *state)
{
	NodeShare  *share = state->parallel->share;
	bool		mine;

	if (share == NULL)
		return true;			/* no parallel query after all */
	SpinLockAcquire(&share->mutex);
	mine = !share->solo_taken;
	share->solo_taken = true;
	SpinLockRelease(&share->mutex);
	return mine;
}

/*
 * A participant's rows went nowhere the leader of a parallel window (or of
 * a node whose leader returns every row) reads.
 */
static void
report_rows_elsewhere(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
			 errmsg("GpuSort could not hold every row of its participants' one input"),
			 errdetail("The engine that held the rows refused some of them midway."),
			 errhint("Set gpusort.parallel_window = off to compute such windows (or DISTINCT) in the leader over a Gather Merge.")));
}

/*
 * In the leader, once it sorted the shared input of a parallel window: the
 * slices are made (none where rows went elsewhere: the leader then does it
 * all) and the workers woken.
 */
void
node_share_sorted(GpuSortState *state, int64 held_rows)
{
	NodeShare  *share = state->parallel->share;
	int			participants = state->parallel->pcxt->nworkers_launched + 1;

	if (share->lost)
		report_rows_elsewhere();
	SpinLockAcquire(&share->mutex);
	share->held_rows = share->elsewhere ? 0 : held_rows;
	share->slice_rows = Max(MIN_SLICE_ROWS,
							held_rows / (participants * SLICES_PER_PARTICIPANT) + 1);
	share->next_slice = 0;
	share->sorted = true;
	SpinLockRelease(&share->mutex);
	ConditionVariableBroadcast(&share->done_cv);
}

/*
 * In a worker: waits until the leader sorted the shared input, or stopped
 * the query before it did.
 */
void
node_share_wait_sorted(GpuSortState *state)
{
	share_sleep_until(state->parallel->share, true);
}

/*
 * The next slice of the sorted shared input that this participant takes:
 * rows *first up to *end (not included); false when none is left.
 */
bool
node_share_next_slice(GpuSortState *state, int64 *first, int64 *end)
{
	NodeShare  *share = state->parallel->share;
	int64		slice;

	SpinLockAcquire(&share->mutex);
	slice = share->next_slice++;
	SpinLockRelease(&share->mutex);
	*first = slice * share->slice_rows;
	if (*first >= share->held_rows)
		return false;
	*end = Min(*first + share->slice_rows, share->held_rows);
	return true;
}

/*
 * After this participant's collect for a parallel window, how it reads its
 * rows: slices of the shared input once the leader sorted it (and its
 * stage is that input); or, where the engine refused rows midway or the
 * leader returns every row (a Unique's, gpusort_distinct_gather), all of
 * them in the leader and none in the workers.  A leader that could not
 * sort the input fails the query here, as its workers wait for the slices.
 */
SliceReading
node_share_slice_reading(GpuSortState *state)
{
	NodeShare  *share = state->parallel->share;

	if (IsParallelWorker())
		node_share_wait_sorted(state);
	else if (!share->sorted)
		report_rows_elsewhere();
	if (!share->sorted)
		return SLICES_NO_ROWS;	/* the query stopped before */
	if (share->elsewhere || node_leader_returns_all(state))
		return IsParallelWorker() ? SLICES_NO_ROWS : SLICES_ALONE;
	return node_share_active(state) ? SLICES_READ : SLICES_NO_ROWS;
}

/*
 * Does the leader compute the whole parallel window (it sorted the input,
 * and rows the engine refused are elsewhere)?
 */
bool
node_share_alone(GpuSortState *state)
{
	return state->parallel->share != NULL && !IsParallelWorker() && state->parallel->share->sorted &&
		state->parallel->share->elsewhere;
}

/*
 * May this worker of a parallel window hand the rows that the engine
 * refuses to the leader (it added to the shared input, and has the files)?
 */
bool
node_share_can_hand_rest(GpuSortState *state)
{
	/* (only a parallel window's share has the files) */
	return IsParallelWorker() && node_share_active(state) && state->parallel->rest_seg != NULL;
}

/*
 * A row that this worker hands to the leader, to its file of their kind,
 * made as the first comes.
 */
static void
hand_row(GpuSortState *state, HandedRows *handed, MinimalTuple tuple)
{
	if (handed->file == NULL)
	{
		char		name[MAXPGPATH];
		MemoryContext oldcxt = MemoryContextSwitchTo(state->css.ss.ps.state->es_query_cxt);

		snprintf(name, MAXPGPATH, "%s.%d", handed->kind, ParallelWorkerNumber);
		handed->file = BufFileCreateFileSet(&rest_fileset(state)->fs, name);
		MemoryContextSwitchTo(oldcxt);
	}
	BufFileWrite(handed->file, &tuple->t_len, sizeof(uint32));
	BufFileWrite(handed->file, tuple, tuple->t_len);
}

/* This worker hands no more rows of the kind: its file is whole. */
static void
hand_rows_done(HandedRows *handed)
{
	if (handed->file)
		BufFileClose(handed->file);
	handed->file = NULL;
}

/*
 * In the leader: the next row of the kind that the workers handed over,
 * worker by worker, in slot, or NULL after the last.
 */
static TupleTableSlot *
next_handed_row(GpuSortState *state, HandedRows *handed, TupleTableSlot *slot)
{
	for (;;)
	{
		uint32		len;
		MinimalTuple tuple;

		if (handed->read == NULL)
		{
			char		name[MAXPGPATH];
			MemoryContext oldcxt;

			/* (no file set: no worker could hand any) */
			if (state->parallel->rest_seg == NULL ||
				handed->next_worker >= state->parallel->pcxt->nworkers_launched)
				return NULL;
			snprintf(name, MAXPGPATH, "%s.%d", handed->kind, handed->next_worker++);
			oldcxt = MemoryContextSwitchTo(state->css.ss.ps.state->es_query_cxt);
			handed->read = BufFileOpenFileSet(&rest_fileset(state)->fs, name,
											  O_RDONLY, true);
			MemoryContextSwitchTo(oldcxt);
			continue;			/* (none: that worker handed none) */
		}
		if (BufFileRead(handed->read, &len, sizeof(len)) != sizeof(len))
		{
			BufFileClose(handed->read);
			handed->read = NULL;
			continue;
		}
		tuple = palloc(len);
		if (BufFileRead(handed->read, tuple, len) != len)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("GpuSort could not read a worker's rows back from its temporary file")));
		return ExecStoreMinimalTuple(tuple, slot, true);
	}
}

/*
 * A worker whose rows the engine refused: the rows in the store, and row
 * where not NULL (one larger than the store), go to its file for the
 * leader; the store is emptied for the next.
 */
void
node_share_put_rest(GpuSortState *state, TupleTableSlot *row)
{
	RowStore   *store = &state->store;
	HandedRows *rest = &state->parallel->rest;

	Assert(node_share_can_hand_rest(state) && !store->keys_only);
	state->parallel->rest_handed = true;
	for (uint32 i = 0; i < store->nnullrows; i++)
		hand_row(state, rest, store->nullrows[i]);
	for (uint32 i = 0; i < store->nrows; i++)
		hand_row(state, rest, store->rows[i]);
	row_store_reset(store);
	if (row)
	{
		bool		shouldfree;
		MinimalTuple tuple = ExecFetchSlotMinimalTuple(row, &shouldfree);

		hand_row(state, rest, tuple);
		if (shouldfree)
			pfree(tuple);
	}
}

/*
 * The worker's input ended: its file is whole, and it adds no more (the
 * stores the engine took from it, and their rows).
 */
void
node_share_rest_done(GpuSortState *state)
{
	hand_rows_done(&state->parallel->rest);
	node_share_done(state, state->spill->staged_batches, state->spill->staged_rows, false);
}

/*
 * In the leader of a parallel window that it computes alone: the next of
 * the rows that the workers handed over, in the scan slot, or NULL after
 * the last.
 */
TupleTableSlot *
node_share_next_rest(GpuSortState *state)
{
	return next_handed_row(state, &state->parallel->rest, state->css.ss.ss_ScanTupleSlot);
}

/*
 * A parallel window's worker, before it says it adds no more: a row led by
 * a NULL, which goes to the leader (node_share_can_hand_rest says whether
 * it may).  Such rows are partitions of their own that no other process
 * has rows of, and the leader computes them whole, after its slices.
 */
void
node_share_put_null(GpuSortState *state, MinimalTuple tuple)
{
	Assert(node_share_can_hand_rest(state));
	hand_row(state, &state->parallel->nulls, tuple);
}

/* The worker has handed all its rows led by a NULL. */
void
node_share_nulls_done(GpuSortState *state)
{
	hand_rows_done(&state->parallel->nulls);
}

/*
 * In the leader, once every worker adds no more: the next row led by a
 * NULL that they handed over, in slot, or NULL after the last.
 */
TupleTableSlot *
node_share_next_null(GpuSortState *state, TupleTableSlot *slot)
{
	return next_handed_row(state, &state->parallel->nulls, slot);
}
