/*-------------------------------------------------------------------------
 *
 * held.c
 *	  The inputs that a GPU process holds for backends (CUDA builds only):
 *	  the rows of GpuSort nodes whose input outgrew their memory budget,
 *	  kept in this process's device memory (gpu/stage.c) from the first
 *	  store the backend hands over to the end of the sort (stager.c is the
 *	  backend's side).
 *
 * Each input has a number that its backend chose, and lives in a memory
 * context of its own, deleted at its end.  An input whose backend is gone
 * without saying so is dropped at the next look.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef GPUSORT_WITH_CUDA

#include "utils/memutils.h"

#include "gpu/engine_gpu.h"
#include "service/held.h"

/* The most inputs a GPU process holds at once. */
#define MAX_HELD_INPUTS		64

typedef struct HeldInput
{
	uint32		id;				/* 0: a free entry */
	int			owner_pid;
	MemoryContext cxt;
	SortStage  *stage;
} HeldInput;

static HeldInput inputs[MAX_HELD_INPUTS];

static HeldInput *
find_input(uint32 id)
{
	for (int i = 0; i < MAX_HELD_INPUTS; i++)
		if (inputs[i].id == id)
			return &inputs[i];
	return NULL;
}

static void
drop_input(HeldInput *input)
{
	gpu_stage_end(input->stage);
	MemoryContextDelete(input->cxt);
	memset(input, 0, sizeof(HeldInput));
}

/* A new input, for the slot's backend, or NULL with the reason. */
static HeldInput *
new_input(ServiceSlot *slot, char **why)
{
	HeldInput  *input = find_input(0);
	MemoryContext oldcxt;

	if (input == NULL)
	{
		*why = psprintf("the GPU process holds %d inputs already", MAX_HELD_INPUTS);
		return NULL;
	}
	input->cxt = AllocSetContextCreate(TopMemoryContext, "gpusort held input",
									   ALLOCSET_SMALL_SIZES);
	oldcxt = MemoryContextSwitchTo(input->cxt);
	input->stage = gpu_stage_begin(slot->held_budget, slot->held_expected, why);
	MemoryContextSwitchTo(oldcxt);
	if (input->stage == NULL)
	{
		MemoryContextDelete(input->cxt);
		input->cxt = NULL;
		return NULL;
	}
	input->id = slot->held_id;
	input->owner_pid = slot->held_owner;
	return input;
}

/* Adds a store laid out flat at base (service_held_layout). */
static bool
add_rows(HeldInput *input, ServiceSlot *slot, char *base, char **why)
{
	Size		keys;
	Size		places;
	Size		lengths;
	MemoryContext oldcxt = MemoryContextSwitchTo(input->cxt);
	bool		ok;

	(void) service_held_layout(slot->nrows, slot->nkeys, slot->held_bytes,
							   &keys, &places, &lengths);
	ok = gpu_stage_add_flat(input->stage, base, slot->held_bytes,
							(const uint64 *) (base + keys), slot->nkeys,
							(uint64 *) (base + places),
							(const uint32 *) (base + lengths), slot->nrows, why);
	MemoryContextSwitchTo(oldcxt);
	return ok;
}

static bool held_run_job(ServiceSlot *slot, char *base, char **why);

/*
 * Runs a job on held rows; slot->declined says whether a store that failed
 * was declined for want of room (a choice: its rows go to sorted runs), and
 * slot->busy whether only the room kept for other inputs left it out.
 */
bool
held_run(ServiceSlot *slot, char *base, char **why)
{
	bool		ok = held_run_job(slot, base, why);

	slot->declined = !ok && slot->kind == SERVICE_JOB_HOLD_ADD && gpu_stage_declined();
	slot->busy = slot->declined && gpu_stage_declined_busy();
	return ok;
}

static bool
held_run_job(ServiceSlot *slot, char *base, char **why)
{
	HeldInput  *input = find_input(slot->held_id);
	MemoryContext oldcxt;
	bool		ok;

	if (slot->kind == SERVICE_JOB_HOLD_END)
	{
		if (input)
			drop_input(input);
		return true;
	}
	if (input == NULL && slot->kind == SERVICE_JOB_HOLD_ADD)
		input = new_input(slot, why);
	else if (input == NULL)
		*why = "the GPU process no longer holds the rows (it was restarted)";
	if (input == NULL)
		return false;

	switch (slot->kind)
	{
		case SERVICE_JOB_HOLD_ADD:
			return add_rows(input, slot, base, why);
		case SERVICE_JOB_HOLD_SORT:
			oldcxt = MemoryContextSwitchTo(input->cxt);
			ok = gpu_stage_sort(input->stage, slot->held_group_words, why);
			MemoryContextSwitchTo(oldcxt);
			slot->held_rows = (int64) gpu_stage_rows(input->stage);
			return ok;
		case SERVICE_JOB_HOLD_NEXT:
			slot->held_rows = gpu_stage_next_into(input->stage, (uint64) slot->held_from,
												  base, slot->held_bytes,
												  &slot->held_need, why);
			return slot->held_rows >= 0;
		default:
			*why = "not a job on held rows";
			return false;
	}
}

void
held_drop_orphans(void)
{
	for (int i = 0; i < MAX_HELD_INPUTS; i++)
		if (inputs[i].id != 0 && service_process_gone(inputs[i].owner_pid))
			drop_input(&inputs[i]);
}

#endif							/* GPUSORT_WITH_CUDA */
