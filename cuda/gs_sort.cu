/*
 * gs_sort.cu
 *	  gs_sort_pairs(): argument checks, the table of sort algorithms and the
 *	  dispatcher that picks one from it by n, the key width and the key range.
 *
 *	  Each entry of the table says when its algorithm takes an input (most
 *	  pairs, widest key range), whether the dispatcher may choose it, and
 *	  what runs instead when it is forced on an input it does not take (each
 *	  algorithm's kernels read their own policy, gs_tuning.cuh).  Unforced,
 *	  the dispatcher runs the first automatic entry that takes the input:
 *
 *	  n <= GS_BITONIC_MAX                 one-block bitonic sort
 *	  max - min < GS_COUNTING_MAX_RANGE   counting sort (one pass over the
 *	                                      pairs after a histogram of the keys;
 *	                                      the radix sort needs 1-2: NOTES.md),
 *	                                      where the range fits the device's
 *	                                      shared memory (all of it on Hopper)
 *	  otherwise                           LSD radix sort on the bits that
 *	                                      differ
 *	  The warpsort and the sample sort run only when forced.
 *
 *	  The key range is computed once, when an entry's limit or its run
 *	  needs it.
 */
#include <string.h>

#include "gs_internal.cuh"

/* Runs one algorithm on n >= 2 pairs; kr: the key range, if it needs one. */
typedef gs_status (*gs_sort_fn) (gs_context *ctx, int key_bits,
								 const void *kin, const uint32_t *vin,
								 void *kout, uint32_t *vout, uint32_t n,
								 const gs_keyrange *kr, gs_sort_info *info);

typedef struct gs_sort_algorithm
{
	gs_algorithm id;
	const char *name;			/* gs_algorithm_name() */
	gs_sort_fn	run;
	bool		automatic;		/* the dispatcher may choose it unforced */
	bool		needs_range;	/* run takes the key range */
	uint64_t	max_n;			/* most pairs it takes */
	uint64_t	max_range;		/* widest key range (max - min) it takes */
	/* and at that range, on the context's device (NULL: any device) */
	bool		(*fits) (const gs_context *ctx, int key_bits, uint64_t range);
	gs_algorithm instead;		/* runs when it is forced beyond those;
								 * GS_ALGO_AUTO: none, it takes any input */
} gs_sort_algorithm;

#define NO_LIMIT UINT64_MAX

static gs_status
run_bitonic(gs_context *ctx, int key_bits, const void *kin,
			const uint32_t *vin, void *kout, uint32_t *vout, uint32_t n,
			const gs_keyrange *kr, gs_sort_info *info)
{
	return gs_bitonic_segments(ctx, key_bits, kin, vin, kout, vout, n, NULL,
							   1, n, n);
}

static gs_status
run_counting(gs_context *ctx, int key_bits, const void *kin,
			 const uint32_t *vin, void *kout, uint32_t *vout, uint32_t n,
			 const gs_keyrange *kr, gs_sort_info *info)
{
	return gs_counting_sort(ctx, key_bits, kin, vin, kout, vout, n, kr);
}

static gs_status
run_warpsort(gs_context *ctx, int key_bits, const void *kin,
			 const uint32_t *vin, void *kout, uint32_t *vout, uint32_t n,
			 const gs_keyrange *kr, gs_sort_info *info)
{
	return gs_warpsort(ctx, key_bits, kin, vin, kout, vout, n);
}

static gs_status
run_samplesort(gs_context *ctx, int key_bits, const void *kin,
			   const uint32_t *vin, void *kout, uint32_t *vout, uint32_t n,
			   const gs_keyrange *kr, gs_sort_info *info)
{
	return gs_samplesort(ctx, key_bits, kin, vin, kout, vout, n);
}

/*
 * In the order the dispatcher tries the automatic ones.  Columns: id, name,
 * run, automatic, needs_range, max_n, max_range, fits, instead.
 */
static const gs_sort_algorithm sort_algorithms[] = {
	{GS_ALGO_BITONIC, "bitonic", run_bitonic, true, false,
	GS_BITONIC_MAX, NO_LIMIT, NULL, GS_ALGO_WARPSORT},
	{GS_ALGO_COUNTING, "counting", run_counting, true, true,
	NO_LIMIT, GS_COUNTING_MAX_RANGE - 1, gs_counting_fits, GS_ALGO_RADIX},
	{GS_ALGO_RADIX, "radix", gs_radix_sort, true, true,
	NO_LIMIT, NO_LIMIT, NULL, GS_ALGO_AUTO},
	{GS_ALGO_WARPSORT, "warpsort", run_warpsort, false, false,
	NO_LIMIT, NO_LIMIT, NULL, GS_ALGO_AUTO},
	{GS_ALGO_SAMPLESORT, "samplesort", run_samplesort, false, false,
	NO_LIMIT, NO_LIMIT, NULL, GS_ALGO_AUTO},
};

#define NUM_SORT_ALGORITHMS (sizeof(sort_algorithms) / sizeof(sort_algorithms[0]))
static_assert(NUM_SORT_ALGORITHMS == GS_ALGO_COUNT_ - 1,
			  "one table entry per gs_algorithm but GS_ALGO_AUTO");

static const gs_sort_algorithm *
find_algorithm(gs_algorithm id)
{
	for (size_t i = 0; i < NUM_SORT_ALGORITHMS; i++)
		if (sort_algorithms[i].id == id)
			return &sort_algorithms[i];
	return NULL;
}

const char *
gs_algorithm_name(gs_algorithm algo)
{
	const gs_sort_algorithm *a;

	if (algo == GS_ALGO_AUTO)
		return "auto";
	a = find_algorithm(algo);
	return a ? a->name : "unknown";
}

gs_status
gs_algorithm_from_name(const char *name, gs_algorithm *algo)
{
	if (name && strcmp(name, "auto") == 0)
	{
		*algo = GS_ALGO_AUTO;
		return GS_OK;
	}
	for (size_t i = 0; i < NUM_SORT_ALGORITHMS; i++)
		if (name && strcmp(name, sort_algorithms[i].name) == 0)
		{
			*algo = sort_algorithms[i].id;
			return GS_OK;
		}
	return gs_fail(NULL, GS_ERR_INVALID, "unknown algorithm \"%s\"",
				   name ? name : "(null)");
}

/* The input as the dispatcher sees it; the key range once computed. */
typedef struct sort_input
{
	int			key_bits;
	const void *keys;
	uint32_t	n;
	bool		have_range;
	gs_keyrange kr;
} sort_input;

static gs_status
need_range(gs_context *ctx, sort_input *in, gs_sort_info *info)
{
	if (in->have_range)
		return GS_OK;
	GS_TRY(gs_key_range(ctx, in->key_bits, in->keys, in->n, &in->kr));
	in->have_range = true;
	info->key_min = in->kr.min;
	info->key_max = in->kr.max;
	return GS_OK;
}

/* Whether algorithm a takes the input (its key range computed if it asks). */
static gs_status
takes(gs_context *ctx, const gs_sort_algorithm *a, sort_input *in,
	  gs_sort_info *info, bool *yes)
{
	*yes = in->n <= a->max_n;
	if (*yes && a->max_range != NO_LIMIT)
	{
		GS_TRY(need_range(ctx, in, info));
		*yes = in->kr.max - in->kr.min <= a->max_range &&
			(a->fits == NULL || a->fits(ctx, in->key_bits, in->kr.max - in->kr.min));
	}
	return GS_OK;
}

/*
 * Forced: that algorithm, or what runs instead where it does not take the
 * input.  Unforced: the first automatic one that takes it (the last
 * automatic entry takes any input).
 */
static gs_status
choose(gs_context *ctx, gs_algorithm algo, sort_input *in,
	   gs_sort_info *info, const gs_sort_algorithm **chosen)
{
	bool		yes = false;

	if (algo != GS_ALGO_AUTO)
	{
		const gs_sort_algorithm *a = find_algorithm(algo);

		for (;;)
		{
			GS_TRY(takes(ctx, a, in, info, &yes));
			if (yes)
				break;
			a = find_algorithm(a->instead); /* one with limits has one */
		}
		*chosen = a;
		return GS_OK;
	}
	for (size_t i = 0; i < NUM_SORT_ALGORITHMS; i++)
	{
		if (!sort_algorithms[i].automatic)
			continue;
		*chosen = &sort_algorithms[i];
		GS_TRY(takes(ctx, *chosen, in, info, &yes));
		if (yes)
			break;
	}
	return GS_OK;
}

gs_status
gs_sort_pairs(gs_context *ctx, int key_bits, const void *keys_in,
			  const uint32_t *vals_in, void *keys_out, uint32_t *vals_out,
			  uint64_t n, gs_algorithm algo, gs_sort_info *info)
{
	gs_sort_info dummy;
	sort_input	in;
	const gs_sort_algorithm *a = NULL;

	if (!info)
		info = &dummy;
	memset(info, 0, sizeof(*info));
	if (!ctx)
		return gs_fail(NULL, GS_ERR_INVALID, "ctx is NULL");
	if (key_bits != 32 && key_bits != 64)
		return gs_fail(ctx, GS_ERR_INVALID, "key_bits must be 32 or 64, not %d",
					   key_bits);
	if (algo != GS_ALGO_AUTO && !find_algorithm(algo))
		return gs_fail(ctx, GS_ERR_INVALID, "unknown algorithm %d", (int) algo);
	if (n > GS_MAX_PAIRS)
		return gs_fail(ctx, GS_ERR_TOO_LARGE, "n = %llu: row indexes are 32-bit, "
					   "at most %llu pairs", (unsigned long long) n,
					   (unsigned long long) GS_MAX_PAIRS);
	if (n && (!keys_in || !vals_in || !keys_out || !vals_out))
		return gs_fail(ctx, GS_ERR_INVALID, "NULL buffer");
	if ((keys_in == keys_out) != ((const void *) vals_in == (void *) vals_out))
		return gs_fail(ctx, GS_ERR_INVALID, "keys and values must both be in "
					   "place or both out of place");
	GS_CHECK(ctx, cudaSetDevice(ctx->device));

	info->algorithm = algo;
	if (n <= 1)
	{
		const size_t kb = (size_t) n * (key_bits / 8);

		info->algorithm = algo == GS_ALGO_AUTO ? GS_ALGO_BITONIC : algo;
		if (n == 1 && keys_in != keys_out)
		{
			GS_CHECK(ctx, cudaMemcpyAsync(keys_out, keys_in, kb, cudaMemcpyDeviceToDevice, ctx->stream));
			GS_CHECK(ctx, cudaMemcpyAsync(vals_out, vals_in, 4, cudaMemcpyDeviceToDevice, ctx->stream));
		}
		return gs_synchronize(ctx);
	}
	in.key_bits = key_bits;
	in.keys = keys_in;
	in.n = (uint32_t) n;
	in.have_range = false;
	GS_TRY(choose(ctx, algo, &in, info, &a));
	if (a->needs_range)
		GS_TRY(need_range(ctx, &in, info));
	info->algorithm = a->id;
	GS_TRY(a->run(ctx, key_bits, keys_in, vals_in, keys_out, vals_out, in.n,
				  in.have_range ? &in.kr : NULL, info));
	return gs_synchronize(ctx);
}
