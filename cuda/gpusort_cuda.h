/*
 * gpusort_cuda.h
 *	  The C interface of gpusort's CUDA library: device discovery, a context
 *	  (device, stream, bounded scratch memory), device buffers and copies,
 *	  and the sort of (key, row index) pairs that live on the device.
 *
 * Plain C, no PostgreSQL headers.  Every function returns a gs_status; on
 * failure gs_last_error() holds a message.  Library code never exits, aborts
 * or prints.
 *
 * Keys are order-preserving unsigned words of 32 or 64 bits (the caller has
 * already flipped signs or complemented for DESC); values are 32-bit row
 * indexes.  Sorts are stable: when the values are 0..n-1 in input order, the
 * output is ordered by (key, value), whichever algorithm runs.
 */
#ifndef GPUSORT_CUDA_H
#define GPUSORT_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

typedef enum gs_status
{
	GS_OK = 0,
	GS_ERR_INVALID = 1,			/* bad argument */
	GS_ERR_TOO_LARGE = 2,		/* n >= 2^32: row indexes are 32-bit */
	GS_ERR_NO_MEMORY = 3,		/* device memory, or the context's byte limit */
	GS_ERR_NO_DEVICE = 4,		/* no CUDA device, or no driver */
	GS_ERR_CUDA = 5,			/* any other CUDA error (message has details) */
	GS_INTERRUPTED = 6			/* the interrupt flag was set */
} gs_status;

/*
 * Sort algorithms, one entry each in the dispatcher's table (gs_sort.cu).
 * GS_ALGO_AUTO lets the dispatcher choose: bitonic, counting or radix; the
 * warpsort and the sample sort run only when forced.
 */
typedef enum gs_algorithm
{
	GS_ALGO_AUTO = 0,
	GS_ALGO_RADIX = 1,			/* LSD radix, onesweep style */
	GS_ALGO_WARPSORT = 2,		/* warp bitonic tiles + warp bitonic merges */
	GS_ALGO_BITONIC = 3,		/* one-block shared-memory bitonic sort */
	GS_ALGO_COUNTING = 4,		/* counting sort, for narrow key ranges */
	GS_ALGO_SAMPLESORT = 5,		/* deterministic sample sort (bucket sort) */
	GS_ALGO_COUNT_
} gs_algorithm;

typedef struct gs_device_info
{
	char		name[256];
	size_t		total_mem;		/* bytes */
	size_t		free_mem;		/* bytes, at the time of the call */
	int			multiprocessors;
	int			cc_major;
	int			cc_minor;
} gs_device_info;

typedef struct gs_sort_info
{
	gs_algorithm algorithm;		/* the algorithm that ran */
	int			radix_passes;	/* digit passes the radix sort made */
	int			key_bits;		/* significant bits after min-subtraction */
	uint64_t	key_min;		/* smallest key (0 when not computed) */
	uint64_t	key_max;		/* largest key (0 when not computed) */
} gs_sort_info;

typedef struct gs_context gs_context;

/* Largest n a sort accepts: row indexes are 32-bit. */
#define GS_MAX_PAIRS (UINT64_C(0xFFFFFFFF))

/* Inputs up to this many pairs take the one-block bitonic path. */
#define GS_BITONIC_MAX 4096
/* Counting sort takes key ranges (max - min + 1) up to this. */
#define GS_COUNTING_MAX_RANGE 4096

/* ---- errors ---- */
extern const char *gs_status_name(gs_status status);
/* Message of the last failure in this context (ctx NULL: of this thread). */
extern const char *gs_last_error(const gs_context *ctx);
extern const char *gs_algorithm_name(gs_algorithm algo);
/* The algorithm that gs_algorithm_name() calls name ("auto" included). */
extern gs_status gs_algorithm_from_name(const char *name, gs_algorithm *algo);

/* ---- devices ---- */
/* With *count 0, gs_last_error(NULL) says why: no driver, an old one, ... */
extern gs_status gs_device_count(int *count);
extern gs_status gs_device_get_info(int device, gs_device_info *info);

/* The oldest GPUs the kernels are written for: compute capability 7.5. */
#define GS_MIN_CC_MAJOR 7
#define GS_MIN_CC_MINOR 5

/* What decides whether a GPU runs this library's kernels. */
typedef struct gs_support_facts
{
	int			device;			/* the CUDA device, or -1: none in particular */
	const char *name;			/* its name */
	int			cc_major;		/* its compute capability */
	int			cc_minor;
	int			driver_version; /* the driver's CUDA (13000: 13.0), 0: no driver */
	int			runtime_version;	/* the CUDA runtime linked in */
	const char *built_for;		/* the compute capabilities built for ("7.5, 8.0") */
	int			error;			/* a cudaError_t: what starting CUDA or loading a
								 * kernel on the device gave (0: nothing wrong) */
	const char *error_text;		/* its message */
} gs_support_facts;

/*
 * The verdict on facts, with no CUDA call (the kernel tests give it made-up
 * ones): GS_OK where the GPU runs the kernels; GS_ERR_NO_DEVICE where it
 * never will in this process, a GPU or a driver too old for this library
 * or a build without code for it; GS_ERR_CUDA for another failure (which
 * may pass).  reason (size bytes) says why, in a sentence for a NOTICE's
 * DETAIL, EXPLAIN and gpusort_service's reason ("" with GS_OK).
 */
extern gs_status gs_support_verdict(const gs_support_facts *facts,
									char *reason, size_t size);

/*
 * Whether device runs the kernels: gathers the facts (loading a small
 * kernel on it) and returns gs_support_verdict's, its reason in
 * gs_last_error(NULL).  gs_context_create checks so.
 */
extern gs_status gs_device_check(int device);

/* ---- contexts ---- */

/*
 * A context owns a device, a stream and the scratch buffers that sorts use.
 * Scratch grows on demand; all device memory the context allocates (scratch
 * and gs_device_alloc) stays under mem_limit bytes (0: no limit).  A
 * context may be used from any thread, by one thread at a time; buffers of
 * one context may be used by another on the same device.
 */
extern gs_status gs_context_create(int device, size_t mem_limit,
								   gs_context **ctx);
extern void gs_context_destroy(gs_context *ctx);
/* Bytes of device memory the context holds now. */
extern size_t gs_context_mem_used(const gs_context *ctx);
/* Frees the scratch buffers (not the caller's gs_device_alloc buffers). */
extern gs_status gs_context_release_scratch(gs_context *ctx);

/*
 * A flag the caller may set (from a signal handler, say) to stop a long
 * sort: it is checked between kernel launches, and the sort then returns
 * GS_INTERRUPTED after the stream is idle.  NULL: no flag.
 */
extern void gs_context_set_interrupt(gs_context *ctx, const volatile int *flag);

/*
 * Caps the shared memory per block that the context's kernels choose their
 * tiles by (bytes; 0: the device's own): the kernel tests take a Turing's
 * 64 KB or an Ada's 99 KB on a larger GPU, so that the smaller tiles that
 * those GPUs get run there too.
 */
extern void gs_context_limit_shared_memory(gs_context *ctx, size_t bytes);

/* ---- memory and copies (all on the context's stream) ---- */
extern gs_status gs_device_alloc(gs_context *ctx, size_t bytes, void **ptr);
extern gs_status gs_device_free(gs_context *ctx, void *ptr);
extern gs_status gs_host_alloc_pinned(size_t bytes, void **ptr);
extern gs_status gs_host_free_pinned(void *ptr);
/* Pins host memory allocated elsewhere (a shared mapping), for every GPU. */
extern gs_status gs_host_register(void *ptr, size_t bytes);
extern gs_status gs_copy_to_device(gs_context *ctx, void *dst,
								   const void *src, size_t bytes);
extern gs_status gs_copy_to_host(gs_context *ctx, void *dst,
								 const void *src, size_t bytes);
extern gs_status gs_copy_device(gs_context *ctx, void *dst,
								const void *src, size_t bytes);
/* Waits for everything queued on the context's stream. */
extern gs_status gs_synchronize(gs_context *ctx);

/* out[i] = i for i < n (device array). */
extern gs_status gs_fill_iota(gs_context *ctx, uint32_t *out, uint64_t n);
/* out[i] = in[idx[i]] for i < n (device arrays; out must not alias in). */
extern gs_status gs_gather_u64(gs_context *ctx, uint64_t *out,
							   const uint64_t *in, const uint32_t *idx,
							   uint64_t n);
extern gs_status gs_gather_u32(gs_context *ctx, uint32_t *out,
							   const uint32_t *in, const uint32_t *idx,
							   uint64_t n);
/*
 * Copies n rows of variable length on the device: row i, lengths[i] bytes
 * at in + src_offsets[i], to out + dst_offsets[i].  Offsets are multiples
 * of 8; each source may be read up to its next multiple of 8.
 */
extern gs_status gs_gather_rows(gs_context *ctx, void *out, const void *in,
								const uint64_t *src_offsets,
								const uint64_t *dst_offsets,
								const uint32_t *lengths, uint64_t n);

/*
 * Groups of equal keys in a sorted order (a Unique's: the first row of each
 * kept).  gs_mark_group_heads sets heads[i] (n device words) to 1 where row
 * i starts a group by one word of the key, words[order[i]] (words[i] where
 * order is NULL) against the row before, or to that or what earlier calls
 * found (first: 0): called once for each word.  gs_keep_group_heads then
 * writes the places and lengths of the rows that start a group, in order,
 * to out_places and out_lengths (not aliasing the inputs), and *kept (host)
 * says how many; heads is used up.
 */
extern gs_status gs_mark_group_heads(gs_context *ctx, uint32_t *heads,
									 const uint64_t *words, const uint32_t *order,
									 uint64_t n, int first);
extern gs_status gs_keep_group_heads(gs_context *ctx, uint64_t *out_places,
									 uint32_t *out_lengths, const uint64_t *places,
									 const uint32_t *lengths, uint32_t *heads,
									 uint64_t n, uint64_t *kept);

/*
 * The groups of two rows or more that heads (gs_mark_group_heads, n rows)
 * marks, as segments of the order: begins[s] their first rows and ends[s]
 * the rows past their last (device arrays of n / 2 words at most), *nsegs
 * (host) how many; the segments gs_sort_segments then orders.
 */
extern gs_status gs_tied_segments(gs_context *ctx, uint32_t *begins, uint32_t *ends,
								  const uint32_t *heads, uint64_t n, uint32_t *nsegs);

/*
 * The most key words gs_sort_segments orders by at once, and the device
 * bytes it takes at most for each row of the order.
 */
#define GS_SEGMENTS_MAX_WORDS	4
#define GS_SEGMENTS_ROW_BYTES	(2 * (GS_SEGMENTS_MAX_WORDS * 8 + 4) + 4)

/*
 * Orders each of nsegs segments of a permutation by a wider key (the
 * groups that a sort by the first words of a key left tied, finished by
 * the next): segment s is order[begins[s] .. ends[s]) (device arrays;
 * segments do not overlap), and row r's key is nwords (1 to 4) words,
 * words[w][r] (device arrays indexed by the row numbers that order holds;
 * words itself is host memory).  Each segment ends ordered by (key, row
 * number): stable where its row numbers ascend, as a stable sort leaves a
 * tied group.  The rest of order is left as it is.  GPU-Warpsort by
 * segments (gs_segments.cu): a warp sorts a segment of up to 256 rows in
 * registers, larger ones are sorted in chunks and merged.  Returns once
 * the work is queued, but for one short copy that it waits for.
 */
extern gs_status gs_sort_segments(gs_context *ctx, int nwords,
								  const uint64_t *const *words, uint32_t *order,
								  uint64_t n, const uint32_t *begins,
								  const uint32_t *ends, uint32_t nsegs);

/* ---- sorting ---- */

/*
 * Sorts n (key, value) pairs on the device: keys are key_bits (32 or 64)
 * wide.  keys_out/vals_out may equal keys_in/vals_in (in place); otherwise
 * the outputs must not overlap the inputs, and the inputs are left intact.
 * algo forces an algorithm (GS_ALGO_AUTO: the dispatcher chooses; a forced
 * counting sort whose key range is too wide runs the radix sort instead, and
 * a forced bitonic sort of more than GS_BITONIC_MAX pairs the warpsort).
 * info (may be NULL) says what ran.  The call returns once the sort is done.
 */
extern gs_status gs_sort_pairs(gs_context *ctx, int key_bits,
							   const void *keys_in, const uint32_t *vals_in,
							   void *keys_out, uint32_t *vals_out,
							   uint64_t n, gs_algorithm algo,
							   gs_sort_info *info);

/*
 * The bucket step of the sample sort, for inputs sorted piece by piece:
 * moves the n pairs into nbuckets (1 to 8192) buckets of consecutive
 * (key, value) order: no pair of bucket b is above a pair of bucket b+1
 * (every one is below when the values are distinct, as row numbers are).
 * The splitters are chosen deterministically from regular samples of
 * sorted tiles, with the position as the last sort component, so runs of
 * equal keys (and of equal pairs) are split like any other range, and
 * whatever the input every bucket holds fewer than
 *     (2n + 24576) / nbuckets
 * pairs (2n/nbuckets, plus three tiles of at most 8192 pairs shared out).
 * Writes the nbuckets+1 bucket boundaries to bucket_offsets (host memory).
 * Buckets are not sorted inside.  Out of place: the inputs are left intact.
 */
extern gs_status gs_bucket_partition(gs_context *ctx, int key_bits,
									 const void *keys_in,
									 const uint32_t *vals_in,
									 void *keys_out, uint32_t *vals_out,
									 uint64_t n, int nbuckets,
									 uint64_t *bucket_offsets);

/* ---- sorting plain values ---- */

typedef enum gs_value_type
{
	GS_VALUES_INT16,
	GS_VALUES_INT32,
	GS_VALUES_INT64,
	GS_VALUES_FLOAT32,
	GS_VALUES_FLOAT64
} gs_value_type;

/* The NaN that sorted floats come back as (PostgreSQL's on x86-64). */
#define GS_FLOAT32_NAN UINT32_C(0x7FC00000)
#define GS_FLOAT64_NAN UINT64_C(0x7FF8000000000000)

/*
 * Sorts n values of a fixed-width type in place on the device, ascending or
 * descending, in PostgreSQL's order: floats with -0 equal to 0 and NaN after
 * every number.  The values are turned into keys, sorted and turned back,
 * so -0 comes back as 0 and every NaN as GS_FLOAT*_NAN: sort a permutation
 * (gs_sort_pairs) when the values hold others.  keys (n keys of 32 bits for
 * 16- and 32-bit values, 64 for 64-bit values) and vals (n words) are device
 * scratch.
 */
extern gs_status gs_sort_values(gs_context *ctx, gs_value_type type,
								int descending, void *values, void *keys,
								uint32_t *vals, uint64_t n,
								gs_sort_info *info);

#ifdef __cplusplus
}
#endif

#endif							/* GPUSORT_CUDA_H */
