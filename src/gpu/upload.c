/*-------------------------------------------------------------------------
 *
 * upload.c
 *	  Uploading a job's rows while they are still being collected
 *	  (gpu_upload_rows and the rest of that protocol: engine/row_seams.h's
 *	  RowStoreUploader, which the chooser installs).
 *
 * The leading key column and the payload may be uploaded while the rows are
 * still being collected: the copy thread of gpu_copier.c moves each new
 * chunk of them into BUF_LEAD and BUF_PAYLOAD while the backend reads on,
 * so that the job finds all but the last chunk on the device.  One upload
 * runs at a time in a backend, and owns those buffers until its job runs; a
 * job that needs them meanwhile (one of another node) takes them back, and
 * the upload's own job then uploads its rows itself.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef GPUSORT_WITH_CUDA

#include "utils/memutils.h"

#include "gpu/gpu_copier.h"
#include "gpu/gpu_state.h"

/*
 * Waits for the active upload's copies: true if they all succeeded, else
 * the upload ends.
 */
static bool
upload_settled(void)
{
	if (copier_wait() == GS_OK)
		return true;
	elog(DEBUG1, "gpusort: an upload during collection failed: %s", copier_error());
	gpu.active_upload = NULL;
	return false;
}

/*
 * Hands BUF_LEAD and BUF_PAYLOAD to upload's job: true if upload is the
 * active upload and its copies all succeeded.  Otherwise the job needs the
 * buffers: the active upload, if any, ends.
 */
bool
gpu_early_upload_claim(SortUpload *upload)
{
	if (upload != NULL && upload == gpu.active_upload && upload_settled())
	{
		gpu.active_upload = NULL;	/* this job owns the buffers now */
		return true;
	}
	gpu_early_upload_drop();	/* this job needs the buffers */
	return false;
}

static void
upload_context_reset(void *arg)
{
	if (gpu.active_upload == arg)
		gpu_early_upload_drop();
}

static SortUpload *
gpu_upload_rows(SortUpload *upload, int nkeys, const uint64 *keys,
				 const uint64 *payload, uint32 nrows, uint32 capacity,
				 MemoryContext cxt)
{
	if (upload != NULL && upload != gpu.active_upload)
		return NULL;			/* its buffers were taken back */
	if (upload == NULL)
	{
		MemoryContextCallback *callback;
		char	   *why;
		double		ms;

		if (gpu.active_upload != NULL ||
			!gpu_engine_start(&why, &ms) || !gpu_job_fits(capacity, nkeys))
			return NULL;
		upload = MemoryContextAllocZero(cxt, sizeof(SortUpload));
		upload->payload = (payload != NULL);
		callback = MemoryContextAlloc(cxt, sizeof(MemoryContextCallback));
		callback->func = upload_context_reset;
		callback->arg = upload;
		MemoryContextRegisterResetCallback(cxt, callback);
		gpu.active_upload = upload;
	}
	if (capacity > upload->capacity)
	{
		Size		keep = (Size) upload->queued * sizeof(uint64);
		Size		bytes = (Size) capacity * sizeof(uint64);

		if (!upload_settled() ||
			gpu_buffer_grow(BUF_LEAD, bytes, keep) != GS_OK ||
			(payload && gpu_buffer_grow(BUF_PAYLOAD, bytes, keep) != GS_OK))
		{
			gpu_early_upload_drop();
			return NULL;
		}
		upload->capacity = capacity;
	}
	copier_queue((uint64 *) gpu.buf[BUF_LEAD] + upload->queued, keys + upload->queued,
				 (Size) (nrows - upload->queued) * sizeof(uint64));
	if (payload)
		copier_queue((uint64 *) gpu.buf[BUF_PAYLOAD] + upload->queued,
					 payload + upload->queued,
					 (Size) (nrows - upload->queued) * sizeof(uint64));
	upload->queued = nrows;
	return upload;
}

static void
gpu_upload_pause(SortUpload *upload)
{
	if (upload != NULL && upload == gpu.active_upload)
		(void) upload_settled();
}

static void
gpu_upload_end(SortUpload *upload)
{
	if (upload != NULL && upload == gpu.active_upload)
		gpu_early_upload_drop();
}

const RowStoreUploader gpu_uploader = {
	.rows = gpu_upload_rows,
	.pause = gpu_upload_pause,
	.end = gpu_upload_end,
};

#endif							/* GPUSORT_WITH_CUDA */
