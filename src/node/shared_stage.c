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
 * The planner marks such a GpuSort parallel-aware (gpusort_mark_shared), so
 * that the executor gives it shared memory of the query: a NodeShare,
 * which the leader fills before the workers start and the workers join.
 * Whether the rows are shared is decided there, by the leader, for the
 * query's whole input: where the engine cannot hold them, or the leader
 * would not read its own rows (parallel_leader_participation off), every
 * participant sorts its own, as before.  Each participant says when it
 * adds no more (node_share_done), with the stores it added; the leader
 * sorts once every worker that started has said so (node_share_wait), as
 * a parallel CREATE INDEX waits for its workers' sorts.  The shared memory
 * goes when the Gather Merge shuts down, before EXPLAIN ANALYZE reads the
 * node: only what the node copied of it (sharing) is read then.
 *
 * A parallel window (window_path.c) reads the one input in slices: once
 * the leader has sorted it (node_share_sorted), every participant takes
 * slices of its rows in turn (node_share_next_slice) and computes the
 * window's values over the partitions that start in each.  That needs
 * every row of every participant in the one input, which each says as it
 * adds no more; a row elsewhere (one led by a NULL, which the planner
 * rules out, or rows the engine refused midway) fails the query, since no
 * Gather Merge is there to merge them.  Where the leader does not share
 * the input at all, the first participant to ask does the whole window
 * alone (node_share_solo) and the others return nothing: the parallel
 * scan below hands all its pages to the one that reads it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "optimizer/optimizer.h"
#include "storage/condition_variable.h"
#include "storage/spin.h"

#include "compat.h"
#include "node/node_state.h"

typedef struct NodeShare
{
	bool		shared;			/* the participants add to one input */
	Size		tail;			/* bytes of key after each tuple held
								 * (spill_stage.c): every participant's
								 * the same */
	StageShare	stage;			/* the engine's handle on it */
	slock_t		mutex;
	int			ndone;			/* participants that add no more */
	int64		stores;			/* the stores they added */
	int64		rows;			/* and those stores' rows */
	bool		elsewhere;		/* some participant's rows are not all in
								 * the shared input */
	ConditionVariable done_cv;	/* ndone, and sorted, grow */

	/* a parallel window's slices */
	bool		solo_taken;		/* not shared: a participant does it all */
	bool		sorted;			/* the leader sorted the shared input */
	int64		held_rows;		/* its rows */
	int64		slice_rows;		/* the rows of a slice */
	int64		next_slice;		/* the next slice to take */
} NodeShare;

/* The fewest rows of a parallel window's slice, and the slices per participant. */
#define MIN_SLICE_ROWS		1024
#define SLICES_PER_PARTICIPANT	8

Size
node_share_estimate(CustomScanState *node, ParallelContext *pcxt)
{
	return sizeof(NodeShare);
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

	if (!state->settings.enabled || !state->settings.spill || state->random_access ||
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
	char	   *why = NULL;

	memset(share, 0, sizeof(NodeShare));
	SpinLockInit(&share->mutex);
	ConditionVariableInit(&share->done_cv);
	state->share = share;
	state->pcxt = pcxt;
	state->share_done = false;
	state->sharing = false;
	state->held_shared = false;
	if (stager == NULL)
		return;

	/* the rows of every participant: the plan's are one's share */
	/* (a window's slices are read from one part) */
	state->shared_stage =
		stager->begin_shared((Size) state->settings.budget_kb * 1024,
							 row_store_expected_bytes(&state->store,
													  all_participants_rows(plan, pcxt->nworkers),
													  plan->plan_width),
							 node_is_slices(state) ? 1 : state->settings.held_gpus,
							 &share->stage, &why);
	if (state->shared_stage == NULL)
		return;
	state->shared_stager = stager;
	share->shared = true;
	share->tail = state->store.tail;
	state->sharing = true;
}

/* In a worker, as it starts: joins the leader's input, if it shares one. */
void
node_share_join(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	GpuSortState *state = (GpuSortState *) node;
	NodeShare  *share = coordinate;
	char	   *why = NULL;
	const RowStager *stager = sort_engine_sharing_stager();

	/*
	 * A worker that cannot join sorts its own rows, but still says when its
	 * input ends, as the leader waits for every worker that started.
	 */
	state->share = share;
	state->share_done = false;
	state->sharing = share->shared;
	state->held_shared = false;
	if (!share->shared || stager == NULL || share->tail != state->store.tail)
		return;
	state->shared_stager = stager;
	state->shared_stage = stager->join((Size) state->settings.budget_kb * 1024,
									   &share->stage, &why);
}

/* Is this participant's stage the input the participants share? */
bool
node_share_active(GpuSortState *state)
{
	return state->held_shared;
}

/* The Gather Merge shuts down: its shared memory goes. */
void
node_share_shutdown(CustomScanState *node)
{
	GpuSortState *state = (GpuSortState *) node;

	state->share = NULL;
	state->pcxt = NULL;
}

/*
 * This participant adds no more rows: stores stores of rows rows in all,
 * all its rows (all_held) or not.  Once only.
 */
void
node_share_done(GpuSortState *state, int64 stores, int64 rows, bool all_held)
{
	NodeShare  *share = state->share;

	if (state->share_done || share == NULL)
		return;
	state->share_done = true;
	SpinLockAcquire(&share->mutex);
	share->ndone++;
	share->stores += stores;
	share->rows += rows;
	share->elsewhere |= !all_held;
	SpinLockRelease(&share->mutex);
	ConditionVariableBroadcast(&share->done_cv);
}

/*
 * Sleeps until ndone participants add no more, or, where sorted, until
 * the leader has sorted the input (an error of a worker is raised here,
 * as the wait reads the workers' messages).
 */
static void
share_sleep_until(NodeShare *share, int ndone, bool sorted)
{
	ConditionVariablePrepareToSleep(&share->done_cv);
	for (;;)
	{
		bool		ready;

		SpinLockAcquire(&share->mutex);
		ready = sorted ? share->sorted : share->ndone >= ndone;
		SpinLockRelease(&share->mutex);
		if (ready)
			break;
		ConditionVariableSleep(&share->done_cv, compat_service_wait_event());
	}
	ConditionVariableCancelSleep();
}

/*
 * In the leader, once it adds no more: waits until every worker that
 * started adds no more (an error of a worker is raised here, as the wait
 * reads the workers' messages), and returns the stores and (*rows) rows
 * that all participants added.
 */
int64
node_share_wait(GpuSortState *state, int64 *rows)
{
	NodeShare  *share = state->share;

	Assert(!IsParallelWorker() && state->share_done);
	WaitForParallelWorkersToAttach(state->pcxt);
	share_sleep_until(share, state->pcxt->nworkers_launched + 1, false);
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
	NodeShare  *share = state->share;
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
 * In the leader, once it sorted the shared input of a parallel window:
 * every participant's rows must be there; the slices are made and the
 * workers woken.
 */
static void
report_rows_elsewhere(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
			 errmsg("GpuSort could not hold every row of a parallel window's input"),
			 errdetail("The engine that held the rows refused some of them midway."),
			 errhint("Set gpusort.parallel_window = off to compute such windows in the leader.")));
}

void
node_share_sorted(GpuSortState *state, int64 held_rows)
{
	NodeShare  *share = state->share;
	int			participants = state->pcxt->nworkers_launched + 1;

	if (share->elsewhere)
		report_rows_elsewhere();
	SpinLockAcquire(&share->mutex);
	share->held_rows = held_rows;
	share->slice_rows = Max(MIN_SLICE_ROWS,
							held_rows / (participants * SLICES_PER_PARTICIPANT) + 1);
	share->next_slice = 0;
	share->sorted = true;
	SpinLockRelease(&share->mutex);
	ConditionVariableBroadcast(&share->done_cv);
}

/* In a worker: waits until the leader sorted the shared input. */
void
node_share_wait_sorted(GpuSortState *state)
{
	share_sleep_until(state->share, 0, true);
}

/*
 * The next slice of the sorted shared input that this participant takes:
 * rows *first up to *end (not included); false when none is left.
 */
bool
node_share_next_slice(GpuSortState *state, int64 *first, int64 *end)
{
	NodeShare  *share = state->share;
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
 * After this participant's collect for a parallel window: may it read
 * slices of the shared input (the leader sorted it, and its stage is that
 * input)?  A leader that could not sort it fails the query here, as its
 * workers wait for the slices.
 */
bool
node_share_slices_ready(GpuSortState *state)
{
	NodeShare  *share = state->share;

	if (!IsParallelWorker() && !share->sorted)
		report_rows_elsewhere();
	return node_share_active(state);
}
