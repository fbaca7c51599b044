/*
 * gs_values.cu
 *	  gs_sort_values(): sorts an array of plain values (integers, floats)
 *	  on the device by turning them into order-preserving keys, sorting
 *	  the keys and turning them back, so that no permutation is needed.
 *
 * The keys are those of the engine's encoders (src/sort_keys.h): integers
 * with the sign bit flipped, floats mapped so that -0 equals 0 and NaN sorts
 * after every number, complemented within their width for descending
 * order.  16- and 32-bit values get 32-bit keys, 64-bit values 64-bit keys.
 * Decoding gives -0 back as 0 and every NaN as GS_FLOAT*_NAN: callers whose
 * values hold -0 or another NaN must sort a permutation instead.
 */
#include "gs_internal.cuh"

template <typename V, typename K>
struct value_traits;

template <>
struct value_traits<int16_t, uint32_t>
{
	__device__ static uint32_t encode(int16_t v) { return (uint16_t) v ^ 0x8000u; }
	__device__ static int16_t decode(uint32_t k) { return (int16_t) (uint16_t) (k ^ 0x8000u); }
	static const int bits = 16;
};

template <>
struct value_traits<int32_t, uint32_t>
{
	__device__ static uint32_t encode(int32_t v) { return (uint32_t) v ^ 0x80000000u; }
	__device__ static int32_t decode(uint32_t k) { return (int32_t) (k ^ 0x80000000u); }
	static const int bits = 32;
};

template <>
struct value_traits<int64_t, uint64_t>
{
	__device__ static uint64_t encode(int64_t v) { return (uint64_t) v ^ (1ull << 63); }
	__device__ static int64_t decode(uint64_t k) { return (int64_t) (k ^ (1ull << 63)); }
	static const int bits = 64;
};

template <>
struct value_traits<float, uint32_t>
{
	__device__ static uint32_t encode(float v)
	{
		uint32_t	u = __float_as_uint(v == 0.0f ? 0.0f : v);

		if (v != v)
			return 0xFFFFFFFFu;
		return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
	}
	__device__ static float decode(uint32_t k)
	{
		if (k == 0xFFFFFFFFu)
			return __uint_as_float(GS_FLOAT32_NAN);
		return __uint_as_float((k & 0x80000000u) ? (k & 0x7FFFFFFFu) : ~k);
	}
	static const int bits = 32;
};

template <>
struct value_traits<double, uint64_t>
{
	__device__ static uint64_t encode(double v)
	{
		uint64_t	u = (uint64_t) __double_as_longlong(v == 0.0 ? 0.0 : v);

		if (v != v)
			return ~0ull;
		return (u >> 63) ? ~u : (u | (1ull << 63));
	}
	__device__ static double decode(uint64_t k)
	{
		if (k == ~0ull)
			return __longlong_as_double((long long) GS_FLOAT64_NAN);
		return __longlong_as_double((long long) ((k >> 63) ? (k & ~(1ull << 63)) : ~k));
	}
	static const int bits = 64;
};

/* Complements a key within its type's width: descending order. */
template <typename K>
__device__ static inline K
flip(K key, int bits, bool descending)
{
	K			mask = (bits >= (int) (8 * sizeof(K))) ? (K) ~(K) 0 : (K) ((((K) 1) << bits) - 1);

	return descending ? (K) (mask - key) : key;
}

template <typename V, typename K>
__global__ void
encode_kernel(const V *__restrict__ values, K *__restrict__ keys, uint64_t n,
			  bool descending)
{
	typedef value_traits<V, K> T;

	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
		keys[i] = flip<K>(T::encode(values[i]), T::bits, descending);
}

template <typename V, typename K>
__global__ void
decode_kernel(const K *__restrict__ keys, V *__restrict__ values, uint64_t n,
			  bool descending)
{
	typedef value_traits<V, K> T;

	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
		values[i] = T::decode(flip<K>(keys[i], T::bits, descending));
}

template <typename V, typename K>
static gs_status
sort_values(gs_context *ctx, void *values, void *keys, uint32_t *vals,
			uint64_t n, bool descending, gs_sort_info *info)
{
	const uint32_t grid = gs_stride_grid(ctx, n);

	encode_kernel<V, K><<<grid, GS_STRIDE_THREADS, 0, ctx->stream>>>((const V *) values, (K *) keys, n, descending);
	GS_TRY(gs_after_launch(ctx, "encode values"));
	GS_TRY(gs_fill_iota(ctx, vals, n));
	GS_TRY(gs_sort_pairs(ctx, 8 * sizeof(K), keys, vals, keys, vals, n, GS_ALGO_AUTO, info));
	decode_kernel<V, K><<<grid, GS_STRIDE_THREADS, 0, ctx->stream>>>((const K *) keys, (V *) values, n, descending);
	GS_TRY(gs_after_launch(ctx, "decode values"));
	return gs_synchronize(ctx);
}

gs_status
gs_sort_values(gs_context *ctx, gs_value_type type, int descending,
			   void *values, void *keys, uint32_t *vals, uint64_t n,
			   gs_sort_info *info)
{
	if (!ctx)
		return gs_fail(NULL, GS_ERR_INVALID, "ctx is NULL");
	if (n > GS_MAX_PAIRS)
		return gs_fail(ctx, GS_ERR_TOO_LARGE, "n = %llu: at most %llu values",
					   (unsigned long long) n, (unsigned long long) GS_MAX_PAIRS);
	if (n < 2)
		return GS_OK;
	if (!values || !keys || !vals)
		return gs_fail(ctx, GS_ERR_INVALID, "NULL buffer");
	GS_CHECK(ctx, cudaSetDevice(ctx->device));

	switch (type)
	{
		case GS_VALUES_INT16:
			return sort_values<int16_t, uint32_t>(ctx, values, keys, vals, n, descending, info);
		case GS_VALUES_INT32:
			return sort_values<int32_t, uint32_t>(ctx, values, keys, vals, n, descending, info);
		case GS_VALUES_INT64:
			return sort_values<int64_t, uint64_t>(ctx, values, keys, vals, n, descending, info);
		case GS_VALUES_FLOAT32:
			return sort_values<float, uint32_t>(ctx, values, keys, vals, n, descending, info);
		case GS_VALUES_FLOAT64:
			return sort_values<double, uint64_t>(ctx, values, keys, vals, n, descending, info);
	}
	return gs_fail(ctx, GS_ERR_INVALID, "unknown value type %d", (int) type);
}
