/*-------------------------------------------------------------------------
 *
 * buffers.c
 *	  The GPU engine's device buffers (GpuBuffer), kept from job to job and
 *	  grown as jobs need, and the copies between host memory and them.
 *
 * Host memory is copied through the two pinned staging buffers, in chunks:
 * the CPU fills (or drains) one buffer while the other is being
 * transferred.  An upload stops between chunks when the job is interrupted.
 * Memory that the caller pinned (the GPU service's buffer) is copied by the
 * device directly.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef GPUSORT_WITH_CUDA

#include "gpu/gpu_state.h"

/* Makes buffer b at least bytes large (with headroom when it grows). */
gs_status
gpu_buffer_ensure(GpuBuffer b, Size bytes)
{
	gs_status	st;

	if (gpu.buf[b] && gpu.buf_bytes[b] >= bytes)
		return GS_OK;
	if (gpu.buf[b])
	{
		st = gs_device_free(gpu.ctx, gpu.buf[b]);
		gpu.buf[b] = NULL;
		gpu.buf_bytes[b] = 0;
		if (st != GS_OK)
			return st;
	}
	bytes += bytes / 8;
	st = gs_device_alloc(gpu.ctx, bytes, &gpu.buf[b]);
	if (st != GS_OK)
	{
		gpu.buf[b] = NULL;
		return st;
	}
	gpu.buf_bytes[b] = bytes;
	return GS_OK;
}

/*
 * Makes buffer b at least bytes large (with headroom when it grows), keeping
 * its first keep bytes.
 */
gs_status
gpu_buffer_grow(GpuBuffer b, Size bytes, Size keep)
{
	void	   *grown;
	gs_status	st;

	if (keep == 0 || gpu.buf[b] == NULL || gpu.buf_bytes[b] >= bytes)
		return gpu_buffer_ensure(b, bytes);
	bytes += bytes / 8;
	TRY(gs_device_alloc(gpu.ctx, bytes, &grown));
	st = gs_copy_device(gpu.ctx, grown, gpu.buf[b], keep);
	if (st == GS_OK)
		st = gs_device_free(gpu.ctx, gpu.buf[b]);	/* after the copy */
	if (st != GS_OK)
	{
		(void) gs_device_free(gpu.ctx, grown);
		return st;
	}
	gpu.buf[b] = grown;
	gpu.buf_bytes[b] = bytes;
	return GS_OK;
}

/* Frees the device buffers and the kernels' scratch, keeping the context. */
void
gpu_buffers_release(void)
{
	gpu_early_upload_drop();
	for (int i = 0; i < NUM_BUFFERS; i++)
	{
		if (gpu.buf[i])
			(void) gs_device_free(gpu.ctx, gpu.buf[i]);
		gpu.buf[i] = NULL;
		gpu.buf_bytes[i] = 0;
	}
	(void) gs_context_release_scratch(gpu.ctx);
}

bool
gpu_engine_pin_host(void *base, Size bytes, char **why)
{
	if (gs_host_register(base, bytes) != GS_OK)
	{
		*why = psprintf("%s", gs_last_error(NULL));
		return false;
	}
	gpu.pinned_base = base;
	gpu.pinned_bytes = bytes;
	return true;
}

/*
 * Does [p, p + bytes) lie in host memory pinned by the caller?  The device
 * then copies it directly, with no copy by the host.
 */
static bool
in_pinned(const void *p, Size bytes)
{
	const char *c = p;

	return gpu.pinned_base != NULL && c >= gpu.pinned_base &&
		c + bytes <= gpu.pinned_base + gpu.pinned_bytes;
}

/*
 * Copies host memory to the device through the staging buffers: while one
 * chunk is being transferred the CPU fills the other buffer.
 */
gs_status
gpu_staged_upload(void *dst, const void *src, Size bytes)
{
	const char *from = src;
	char	   *to = dst;
	int			b = 0;
	bool		pending = false;
	gs_status	st;

	if (in_pinned(src, bytes))
	{
		TRY(gs_copy_to_device(gpu.ctx, dst, src, bytes));
		return gs_synchronize(gpu.ctx);
	}

	for (Size off = 0; off < bytes; off += STAGING_BYTES, b ^= 1)
	{
		Size		len = Min(STAGING_BYTES, bytes - off);

		/* this buffer's last transfer ended at the previous synchronize */
		memcpy(gpu.staging[b], from + off, len);
		if (pending && (st = gs_synchronize(gpu.ctx)) != GS_OK)
			return st;
		if (gpu_interrupted())
			return GS_INTERRUPTED;
		if ((st = gs_copy_to_device(gpu.ctx, to + off, gpu.staging[b], len)) != GS_OK)
			return st;
		pending = true;
	}
	return pending ? gs_synchronize(gpu.ctx) : GS_OK;
}

/* Copies device memory to the host through the staging buffers. */
gs_status
gpu_staged_download(void *dst, const void *src, Size bytes)
{
	const char *from = src;
	char	   *to = dst;
	gs_status	st;
	int			b = 0;

	if (bytes == 0)
		return GS_OK;
	if (in_pinned(dst, bytes))
	{
		TRY(gs_copy_to_host(gpu.ctx, dst, src, bytes));
		return gs_synchronize(gpu.ctx);
	}
	st = gs_copy_to_host(gpu.ctx, gpu.staging[0], from, Min(STAGING_BYTES, bytes));
	if (st != GS_OK)
		return st;
	for (Size off = 0; off < bytes; off += STAGING_BYTES, b ^= 1)
	{
		Size		len = Min(STAGING_BYTES, bytes - off);
		Size		next = off + STAGING_BYTES;

		if ((st = gs_synchronize(gpu.ctx)) != GS_OK)
			return st;
		/* the other buffer was drained in the previous round */
		if (next < bytes &&
			(st = gs_copy_to_host(gpu.ctx, gpu.staging[b ^ 1], from + next,
								  Min(STAGING_BYTES, bytes - next))) != GS_OK)
			return st;
		memcpy(to + off, gpu.staging[b], len);
	}
	return GS_OK;
}

/*
 * Puts rows 0..n-1 of host array src (8-byte words) into device buffer b:
 * the first uploaded rows, uploaded during collection (upload.c), are there
 * already, the others are uploaded now.
 */
gs_status
gpu_upload_column(GpuBuffer b, const uint64 *src, uint32 n, uint32 uploaded)
{
	TRY(gpu_buffer_grow(b, (Size) n * sizeof(uint64), (Size) uploaded * sizeof(uint64)));
	return gpu_staged_upload((uint64 *) gpu.buf[b] + uploaded, src + uploaded,
							 (Size) (n - uploaded) * sizeof(uint64));
}

#endif							/* GPUSORT_WITH_CUDA */
