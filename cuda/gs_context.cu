/*
 * gs_context.cu
 *	  Errors, device discovery, the context (stream, bounded scratch slots),
 *	  device/pinned buffers, copies and synchronisation.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <new>
#include <unordered_map>

#include "gs_internal.cuh"

typedef std::unordered_map<void *, size_t> gs_alloc_map;

static thread_local char gs_thread_msg[512];

static char *
msgbuf(gs_context *ctx)
{
	return ctx ? ctx->msg : gs_thread_msg;
}

gs_status
gs_fail(gs_context *ctx, gs_status status, const char *fmt, ...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(msgbuf(ctx), sizeof(gs_thread_msg), fmt, ap);
	va_end(ap);
	return status;
}

gs_status
gs_cuda_fail(gs_context *ctx, cudaError_t err, const char *what)
{
	gs_status	st = GS_ERR_CUDA;

	if (err == cudaErrorMemoryAllocation)
		st = GS_ERR_NO_MEMORY;
	else if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver)
		st = GS_ERR_NO_DEVICE;
	(void) cudaGetLastError();	/* clear a non-sticky error */
	return gs_fail(ctx, st, "%s: %s (%s)", what, cudaGetErrorString(err),
				   cudaGetErrorName(err));
}

gs_status
gs_after_launch(gs_context *ctx, const char *what)
{
	cudaError_t err = cudaGetLastError();

	if (err != cudaSuccess)
		return gs_cuda_fail(ctx, err, what);
	if (ctx->interrupt && *ctx->interrupt)
	{
		cudaStreamSynchronize(ctx->stream);
		return gs_fail(ctx, GS_INTERRUPTED, "sort interrupted");
	}
	return GS_OK;
}

const char *
gs_status_name(gs_status status)
{
	switch (status)
	{
		case GS_OK: return "ok";
		case GS_ERR_INVALID: return "invalid argument";
		case GS_ERR_TOO_LARGE: return "too many pairs";
		case GS_ERR_NO_MEMORY: return "out of device memory";
		case GS_ERR_NO_DEVICE: return "no CUDA device";
		case GS_ERR_CUDA: return "CUDA error";
		case GS_INTERRUPTED: return "interrupted";
	}
	return "unknown status";
}

const char *
gs_last_error(const gs_context *ctx)
{
	return ctx ? ctx->msg : gs_thread_msg;
}

/* ---- devices ---- */

/* The facts of no device in particular: the driver's and the runtime's. */
static void
driver_facts(gs_support_facts *f, cudaError_t err)
{
	memset(f, 0, sizeof(*f));
	f->device = -1;
	/* without libcuda, 0 (and the runtime says the driver is too old) */
	if (cudaDriverGetVersion(&f->driver_version) != cudaSuccess)
		f->driver_version = 0;
	(void) cudaRuntimeGetVersion(&f->runtime_version);
	f->error = (int) err;
	f->error_text = cudaGetErrorString(err);
	(void) cudaGetLastError();
}

gs_status
gs_device_count(int *count)
{
	cudaError_t err;

	if (!count)
		return gs_fail(NULL, GS_ERR_INVALID, "count is NULL");
	*count = 0;
	err = cudaGetDeviceCount(count);
	if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver)
	{
		gs_support_facts f;

		*count = 0;
		driver_facts(&f, err);
		(void) gs_support_verdict(&f, gs_thread_msg, sizeof(gs_thread_msg));
		return GS_OK;
	}
	if (err != cudaSuccess)
		return gs_cuda_fail(NULL, err, "cudaGetDeviceCount");
	return GS_OK;
}

/* The compute capabilities the device code was built for, as "7.5, 8.0". */
static const char *
built_for(void)
{
	static const int archs[] = {__CUDA_ARCH_LIST__};
	static char text[256];
	size_t		len = 0;

	if (text[0] == '\0')
		for (size_t i = 0; i < sizeof(archs) / sizeof(archs[0]) && len < sizeof(text); i++)
			len += snprintf(text + len, sizeof(text) - len, "%s%d.%d", i ? ", " : "",
							archs[i] / 100, archs[i] % 100 / 10);
	return text;
}

gs_status
gs_support_verdict(const gs_support_facts *f, char *reason, size_t size)
{
	char		gpu[320];

	reason[0] = '\0';
	snprintf(gpu, sizeof(gpu), "GPU %d (%s, compute capability %d.%d)", f->device,
			 f->name ? f->name : "?", f->cc_major, f->cc_minor);

	/* the driver: none, or one older than the runtime linked in */
	if (f->driver_version == 0)
	{
		snprintf(reason, size, "no NVIDIA driver (libcuda) found");
		return GS_ERR_NO_DEVICE;
	}
	if (f->error == cudaErrorInsufficientDriver)
	{
		snprintf(reason, size, "the NVIDIA driver supports CUDA %d.%d, older than "
				 "the CUDA runtime %d.%d that gpusort was built with",
				 f->driver_version / 1000, f->driver_version % 1000 / 10,
				 f->runtime_version / 1000, f->runtime_version % 1000 / 10);
		return GS_ERR_NO_DEVICE;
	}
	if (f->error == cudaErrorNoDevice)
	{
		snprintf(reason, size, "no CUDA device");
		return GS_ERR_NO_DEVICE;
	}
	if (f->device < 0)
		return f->error == cudaSuccess ? GS_OK :
			(snprintf(reason, size, "%s", f->error_text ? f->error_text : "CUDA error"),
			 GS_ERR_CUDA);

	/* the GPU: too old for the kernels, or none of their code for it */
	if (f->cc_major * 10 + f->cc_minor < GS_MIN_CC_MAJOR * 10 + GS_MIN_CC_MINOR)
	{
		snprintf(reason, size, "%s is older than gpusort supports (%d.%d, Turing, "
				 "and newer)", gpu, GS_MIN_CC_MAJOR, GS_MIN_CC_MINOR);
		return GS_ERR_NO_DEVICE;
	}
	switch (f->error)
	{
		case cudaSuccess:
			return GS_OK;
		case cudaErrorNoKernelImageForDevice:
		case cudaErrorInvalidDeviceFunction:
		case cudaErrorInvalidKernelImage:
			snprintf(reason, size, "%s has no code in this build of gpusort, whose GPU "
					 "code is for compute capability %s (the Makefile's CUDA_ARCH)",
					 gpu, f->built_for ? f->built_for : "?");
			return GS_ERR_NO_DEVICE;
		case cudaErrorUnsupportedPtxVersion:
			snprintf(reason, size, "the NVIDIA driver (CUDA %d.%d) cannot compile the GPU "
					 "code (PTX) of gpusort, built with CUDA %d.%d, for %s: update the driver",
					 f->driver_version / 1000, f->driver_version % 1000 / 10,
					 f->runtime_version / 1000, f->runtime_version % 1000 / 10, gpu);
			return GS_ERR_NO_DEVICE;
		case cudaErrorJitCompilerNotFound:
		case cudaErrorJitCompilationDisabled:
		case cudaErrorSystemDriverMismatch:
		case cudaErrorCompatNotSupportedOnDevice:
			snprintf(reason, size, "%s cannot run gpusort's kernels: %s", gpu,
					 f->error_text ? f->error_text : "CUDA error");
			return GS_ERR_NO_DEVICE;
		default:
			/* out of memory, a device in use by another process, ...: may pass */
			snprintf(reason, size, "%s: %s", gpu, f->error_text ? f->error_text : "CUDA error");
			return GS_ERR_CUDA;
	}
}

/* A kernel to load, as a device's first: does the library's code run there? */
__global__ void
gs_probe_kernel(int *out)
{
	if (out)
		*out = 1;
}

gs_status
gs_device_check(int device)
{
	gs_support_facts f;
	cudaDeviceProp prop;
	cudaFuncAttributes attr;
	cudaError_t err;
	int			prev = -1;
	char		reason[sizeof(gs_thread_msg)];
	gs_status	st;

	driver_facts(&f, cudaSuccess);
	f.device = device;
	f.built_for = built_for();
	if ((err = cudaGetDeviceProperties(&prop, device)) != cudaSuccess)
		return gs_cuda_fail(NULL, err, "cudaGetDeviceProperties");
	f.name = prop.name;
	f.cc_major = prop.major;
	f.cc_minor = prop.minor;
	(void) cudaGetDevice(&prev);
	err = cudaSetDevice(device);
	if (err == cudaSuccess)
		err = cudaFuncGetAttributes(&attr, (const void *) gs_probe_kernel);
	f.error = (int) err;
	f.error_text = cudaGetErrorString(err);
	(void) cudaGetLastError();
	if (prev >= 0)
		(void) cudaSetDevice(prev);
	st = gs_support_verdict(&f, reason, sizeof(reason));
	return gs_fail(NULL, st, "%s", reason);
}

gs_status
gs_device_get_info(int device, gs_device_info *info)
{
	cudaDeviceProp prop;
	int			prev = -1;
	size_t		free_b = 0,
				total_b = 0;
	cudaError_t err;

	if (!info)
		return gs_fail(NULL, GS_ERR_INVALID, "info is NULL");
	memset(info, 0, sizeof(*info));
	if ((err = cudaGetDeviceProperties(&prop, device)) != cudaSuccess)
		return gs_cuda_fail(NULL, err, "cudaGetDeviceProperties");
	snprintf(info->name, sizeof(info->name), "%s", prop.name);
	info->total_mem = prop.totalGlobalMem;
	info->multiprocessors = prop.multiProcessorCount;
	info->cc_major = prop.major;
	info->cc_minor = prop.minor;
	cudaGetDevice(&prev);
	if ((err = cudaSetDevice(device)) != cudaSuccess)
		return gs_cuda_fail(NULL, err, "cudaSetDevice");
	err = cudaMemGetInfo(&free_b, &total_b);
	if (prev >= 0)
		cudaSetDevice(prev);
	if (err != cudaSuccess)
		return gs_cuda_fail(NULL, err, "cudaMemGetInfo");
	info->free_mem = free_b;
	info->total_mem = total_b;
	return GS_OK;
}

/* ---- contexts ---- */

gs_status
gs_context_create(int device, size_t mem_limit, gs_context **out)
{
	gs_context *ctx;
	cudaError_t err;
	int			count = 0;
	int			smem_optin = 0;

	if (!out)
		return gs_fail(NULL, GS_ERR_INVALID, "ctx is NULL");
	*out = NULL;
	GS_TRY(gs_device_count(&count));
	if (count == 0)
		return GS_ERR_NO_DEVICE;	/* gs_device_count said why */
	if (device < 0 || device >= count)
		return gs_fail(NULL, GS_ERR_INVALID, "device %d out of range (0..%d)",
					   device, count - 1);
	GS_TRY(gs_device_check(device));	/* it says why not */
	ctx = new (std::nothrow) gs_context();
	if (!ctx)
		return gs_fail(NULL, GS_ERR_NO_MEMORY, "out of host memory");
	ctx->device = device;
	ctx->mem_limit = mem_limit;
	ctx->allocs = new (std::nothrow) gs_alloc_map();
	if ((err = cudaSetDevice(device)) != cudaSuccess ||
		(err = cudaDeviceGetAttribute(&ctx->sm_count,
									  cudaDevAttrMultiProcessorCount,
									  device)) != cudaSuccess ||
		(err = cudaDeviceGetAttribute(&ctx->threads_per_sm,
									  cudaDevAttrMaxThreadsPerMultiProcessor,
									  device)) != cudaSuccess ||
		(err = cudaDeviceGetAttribute(&smem_optin,
									  cudaDevAttrMaxSharedMemoryPerBlockOptin,
									  device)) != cudaSuccess ||
		(err = cudaStreamCreateWithFlags(&ctx->stream,
										 cudaStreamNonBlocking)) != cudaSuccess)
	{
		gs_status	st = gs_cuda_fail(NULL, err, "creating the context");

		delete (gs_alloc_map *) ctx->allocs;
		delete ctx;
		return st;
	}
	ctx->smem_optin = ctx->smem_device = (size_t) smem_optin;
	*out = ctx;
	return GS_OK;
}

void
gs_context_destroy(gs_context *ctx)
{
	gs_alloc_map *m;

	if (!ctx)
		return;
	cudaSetDevice(ctx->device);
	cudaStreamSynchronize(ctx->stream);
	for (int i = 0; i < GS_NSLOTS; i++)
		if (ctx->slot[i])
			cudaFree(ctx->slot[i]);
	m = (gs_alloc_map *) ctx->allocs;
	if (m)
	{
		for (auto &kv : *m)
			cudaFree(kv.first);
		delete m;
	}
	cudaStreamDestroy(ctx->stream);
	delete ctx;
}

size_t
gs_context_mem_used(const gs_context *ctx)
{
	return ctx ? ctx->mem_used : 0;
}

void
gs_context_set_interrupt(gs_context *ctx, const volatile int *flag)
{
	if (ctx)
		ctx->interrupt = flag;
}

void
gs_context_limit_shared_memory(gs_context *ctx, size_t bytes)
{
	if (ctx)
		ctx->smem_optin = bytes > 0 && bytes < ctx->smem_device ? bytes : ctx->smem_device;
}

gs_status
gs_context_release_scratch(gs_context *ctx)
{
	if (!ctx)
		return gs_fail(NULL, GS_ERR_INVALID, "ctx is NULL");
	cudaSetDevice(ctx->device);
	GS_CHECK(ctx, cudaStreamSynchronize(ctx->stream));
	for (int i = 0; i < GS_NSLOTS; i++)
	{
		if (ctx->slot[i])
			GS_CHECK(ctx, cudaFree(ctx->slot[i]));
		ctx->mem_used -= ctx->slot_bytes[i];
		ctx->slot[i] = NULL;
		ctx->slot_bytes[i] = 0;
	}
	return GS_OK;
}

/* Allocates bytes of device memory within the context's limit. */
static gs_status
bounded_malloc(gs_context *ctx, size_t bytes, void **ptr)
{
	cudaError_t err;

	*ptr = NULL;
	if (ctx->mem_limit && ctx->mem_used + bytes > ctx->mem_limit)
		return gs_fail(ctx, GS_ERR_NO_MEMORY,
					   "device memory limit reached: %zu bytes in use, %zu more "
					   "requested, limit %zu", ctx->mem_used, bytes,
					   ctx->mem_limit);
	err = cudaMalloc(ptr, bytes ? bytes : 1);
	if (err != cudaSuccess)
	{
		*ptr = NULL;
		return gs_cuda_fail(ctx, err, "cudaMalloc");
	}
	ctx->mem_used += bytes;
	return GS_OK;
}

gs_status
gs_scratch(gs_context *ctx, int slot, size_t bytes, void **ptr)
{
	if (ctx->slot_bytes[slot] >= bytes && ctx->slot[slot])
	{
		*ptr = ctx->slot[slot];
		return GS_OK;
	}
	/* grow: a little headroom so that slightly larger sorts reuse it */
	bytes = bytes + bytes / 8 + 256;
	bytes = (bytes + 255) & ~(size_t) 255;
	if (ctx->slot[slot])
	{
		GS_CHECK(ctx, cudaStreamSynchronize(ctx->stream));
		GS_CHECK(ctx, cudaFree(ctx->slot[slot]));
		ctx->mem_used -= ctx->slot_bytes[slot];
		ctx->slot[slot] = NULL;
		ctx->slot_bytes[slot] = 0;
		if (slot == GS_SLOT_STATUS)
			ctx->epoch = 0;
	}
	GS_TRY(bounded_malloc(ctx, bytes, &ctx->slot[slot]));
	ctx->slot_bytes[slot] = bytes;
	if (slot == GS_SLOT_STATUS)
	{
		/*
		 * Look-back status words must start at generation 0; the slot holds
		 * nothing else, so a stale word never carries a live generation.
		 */
		GS_CHECK(ctx, cudaMemsetAsync(ctx->slot[slot], 0, bytes, ctx->stream));
		ctx->epoch = 0;
	}
	*ptr = ctx->slot[slot];
	return GS_OK;
}

uint32_t
gs_next_epoch(gs_context *ctx)
{
	/* 30 bits of generation in a status word; 0 means "never written" */
	ctx->epoch++;
	if (ctx->epoch >= (1u << 30))
	{
		cudaMemsetAsync(ctx->slot[GS_SLOT_STATUS], 0,
						ctx->slot_bytes[GS_SLOT_STATUS], ctx->stream);
		ctx->epoch = 1;
	}
	return ctx->epoch;
}

/* ---- memory and copies ---- */

gs_status
gs_device_alloc(gs_context *ctx, size_t bytes, void **ptr)
{
	if (!ctx || !ptr)
		return gs_fail(ctx, GS_ERR_INVALID, "NULL argument");
	GS_CHECK(ctx, cudaSetDevice(ctx->device));
	GS_TRY(bounded_malloc(ctx, bytes, ptr));
	(*(gs_alloc_map *) ctx->allocs)[*ptr] = bytes;
	return GS_OK;
}

gs_status
gs_device_free(gs_context *ctx, void *ptr)
{
	gs_alloc_map *m;

	if (!ctx)
		return gs_fail(NULL, GS_ERR_INVALID, "ctx is NULL");
	if (!ptr)
		return GS_OK;
	m = (gs_alloc_map *) ctx->allocs;
	auto		it = m->find(ptr);

	if (it == m->end())
		return gs_fail(ctx, GS_ERR_INVALID, "pointer %p was not allocated "
					   "by this context", ptr);
	GS_CHECK(ctx, cudaStreamSynchronize(ctx->stream));
	GS_CHECK(ctx, cudaFree(ptr));
	ctx->mem_used -= it->second;
	m->erase(it);
	return GS_OK;
}

gs_status
gs_host_alloc_pinned(size_t bytes, void **ptr)
{
	cudaError_t err;

	if (!ptr)
		return gs_fail(NULL, GS_ERR_INVALID, "ptr is NULL");
	err = cudaMallocHost(ptr, bytes ? bytes : 1);
	if (err != cudaSuccess)
	{
		*ptr = NULL;
		return gs_cuda_fail(NULL, err, "cudaMallocHost");
	}
	return GS_OK;
}

gs_status
gs_host_free_pinned(void *ptr)
{
	cudaError_t err;

	if (!ptr)
		return GS_OK;
	if ((err = cudaFreeHost(ptr)) != cudaSuccess)
		return gs_cuda_fail(NULL, err, "cudaFreeHost");
	return GS_OK;
}

gs_status
gs_host_register(void *ptr, size_t bytes)
{
	cudaError_t err;

	if (!ptr || bytes == 0)
		return gs_fail(NULL, GS_ERR_INVALID, "nothing to register");
	err = cudaHostRegister(ptr, bytes, cudaHostRegisterPortable);
	if (err != cudaSuccess)
		return gs_cuda_fail(NULL, err, "cudaHostRegister");
	return GS_OK;
}

static gs_status
copy(gs_context *ctx, void *dst, const void *src, size_t bytes,
	 cudaMemcpyKind kind)
{
	if (!ctx || (bytes && (!dst || !src)))
		return gs_fail(ctx, GS_ERR_INVALID, "NULL argument");
	if (bytes == 0)
		return GS_OK;
	/* the calling thread may be another than the one that made ctx */
	GS_CHECK(ctx, cudaSetDevice(ctx->device));
	GS_CHECK(ctx, cudaMemcpyAsync(dst, src, bytes, kind, ctx->stream));
	return GS_OK;
}

gs_status
gs_copy_to_device(gs_context *ctx, void *dst, const void *src, size_t bytes)
{
	return copy(ctx, dst, src, bytes, cudaMemcpyHostToDevice);
}

gs_status
gs_copy_to_host(gs_context *ctx, void *dst, const void *src, size_t bytes)
{
	return copy(ctx, dst, src, bytes, cudaMemcpyDeviceToHost);
}

gs_status
gs_copy_device(gs_context *ctx, void *dst, const void *src, size_t bytes)
{
	return copy(ctx, dst, src, bytes, cudaMemcpyDeviceToDevice);
}

gs_status
gs_synchronize(gs_context *ctx)
{
	if (!ctx)
		return gs_fail(NULL, GS_ERR_INVALID, "ctx is NULL");
	GS_CHECK(ctx, cudaSetDevice(ctx->device));
	GS_CHECK(ctx, cudaStreamSynchronize(ctx->stream));
	return GS_OK;
}
