/*
 * gs_samplesort.cu
 *	  Deterministic sample sort / GPU Bucket Sort (Dehne & Zaboli):
 *	  1. sort tiles of SS_TILE pairs locally (shared-memory bitonic sort);
 *	  2. take s equidistant samples from every sorted tile;
 *	  3. sort the samples, and take nb-1 equidistant global splitters;
 *	  4. find the splitters in every tile (binary search), scan the
 *	     (bucket, tile) counts, and relocate each tile's pieces so that
 *	     bucket b holds the pairs between splitters b-1 and b; with s = nb
 *	     no bucket exceeds about 2n/nb pairs;
 *	  5. sort each bucket (bitonic when it fits a block, else radix).
 *	  Steps 1-4 are gs_bucket_partition(), the building block for inputs
 *	  sorted piece by piece.  Splitters and searches use (key, value) order.
 */
#include <vector>

#include "gs_internal.cuh"

/* The sample sort policy (gs_tuning.cuh) by the names the kernels use */
#define SS_BUCKET_PAIRS (gs_samplesort_tuning.bucket_pairs)
#define SS_MAX_BUCKETS (gs_samplesort_tuning.max_buckets)
#define SS_THREADS (gs_samplesort_tuning.threads)

#define SS_TILE GS_BITONIC_MAX

template <typename K>
__global__ void
take_samples(const K *keys, const uint32_t *vals, uint32_t n, uint32_t m,
			 uint32_t s, K *sk, uint32_t *sv)
{
	uint64_t	i = (uint64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= (uint64_t) m * s)
		return;
	uint32_t	t = (uint32_t) (i / s),
				r = (uint32_t) (i % s);
	uint64_t	base = (uint64_t) t * SS_TILE;
	uint64_t	len = min((uint64_t) SS_TILE, n - base);
	uint64_t	pos = base + ((uint64_t) (r + 1) * len) / s - (len >= s ? 1 : 0);

	if (pos >= base + len)
		pos = base + len - 1;
	sk[i] = keys[pos];
	sv[i] = vals[pos];
}

template <typename K>
__global__ void
pick_splitters(const K *sk, const uint32_t *sv, uint64_t nsamples,
			   uint32_t nb, K *spk, uint32_t *spv)
{
	uint32_t	b = blockIdx.x * blockDim.x + threadIdx.x + 1;

	if (b >= nb)
		return;
	uint64_t	i = (uint64_t) b * nsamples / nb;

	spk[b - 1] = sk[i];
	spv[b - 1] = sv[i];
}

/* Per tile: P[t][b] = first position of bucket b in the tile; counts. */
template <typename K>
__global__ void
tile_bounds(const K *keys, const uint32_t *vals, uint32_t n, uint32_t m,
			const K *spk, const uint32_t *spv, uint32_t nb, uint32_t *P,
			uint32_t *C)
{
	const uint32_t t = blockIdx.x;
	const uint64_t base = (uint64_t) t * SS_TILE;
	const uint32_t len = (uint32_t) min((uint64_t) SS_TILE, n - base);
	uint32_t   *p = P + (uint64_t) t * (nb + 1);

	for (uint32_t b = threadIdx.x; b <= nb; b += blockDim.x)
	{
		uint32_t	pos;

		if (b == 0)
			pos = 0;
		else if (b == nb)
			pos = len;
		else
		{
			K			k = spk[b - 1];
			uint32_t	v = spv[b - 1];
			uint32_t	lo = 0,
						hi = len;

			while (lo < hi)
			{
				uint32_t	mid = (lo + hi) >> 1;

				if (gs_pair_less(keys[base + mid], vals[base + mid], k, v))
					lo = mid + 1;
				else
					hi = mid;
			}
			pos = lo;
		}
		p[b] = pos;
	}
	__syncthreads();
	for (uint32_t b = threadIdx.x; b < nb; b += blockDim.x)
		C[(uint64_t) b * m + t] = p[b + 1] - p[b];
}

__global__ void
bucket_starts(const uint32_t *C, uint32_t m, uint32_t nb, uint32_t n,
			  uint32_t *off)
{
	uint32_t	b = blockIdx.x * blockDim.x + threadIdx.x;

	if (b < nb)
		off[b] = C[(uint64_t) b * m];
	else if (b == nb)
		off[b] = n;
}

template <typename K>
__global__ void
relocate(const K *kin, const uint32_t *vin, K *kout, uint32_t *vout,
		 uint32_t n, uint32_t m, uint32_t nb, const uint32_t *P,
		 const uint32_t *C)
{
	extern __shared__ uint32_t sp[];
	const uint32_t t = blockIdx.x;
	const uint64_t base = (uint64_t) t * SS_TILE;
	const uint32_t len = (uint32_t) min((uint64_t) SS_TILE, n - base);

	for (uint32_t b = threadIdx.x; b <= nb; b += blockDim.x)
		sp[b] = P[(uint64_t) t * (nb + 1) + b];
	__syncthreads();
	for (uint32_t j = threadIdx.x; j < len; j += blockDim.x)
	{
		/* the last bucket b with sp[b] <= j */
		uint32_t	lo = 0,
					hi = nb;

		while (hi - lo > 1)
		{
			uint32_t	mid = (lo + hi) >> 1;

			if (sp[mid] <= j)
				lo = mid;
			else
				hi = mid;
		}
		uint64_t	dst = C[(uint64_t) lo * m + t] + (j - sp[lo]);

		kout[dst] = kin[base + j];
		vout[dst] = vin[base + j];
	}
}

static uint32_t
choose_buckets(uint32_t n)
{
	uint32_t	nb = gs_blocks(n, SS_BUCKET_PAIRS);

	return nb < 2 ? 2 : (nb > SS_MAX_BUCKETS ? SS_MAX_BUCKETS : nb);
}

/*
 * Steps 1-4: kin -> (sorted tiles in tk/tv) -> buckets in kout/vout.
 * tk/tv may equal kin/vin.  Bucket boundaries land in *d_off (device,
 * nb + 1 words) and in off (host).  Splitters are copied to host too.
 */
template <typename K>
static gs_status
partition(gs_context *ctx, const K *kin, const uint32_t *vin, K *tk,
		  uint32_t *tv, K *kout, uint32_t *vout, uint32_t n, uint32_t nb,
		  std::vector<uint32_t> &off, std::vector<K> &split_keys)
{
	const uint32_t m = gs_blocks(n, SS_TILE);
	const uint32_t s = nb;
	const uint64_t ns = (uint64_t) m * s;
	K		   *sk;
	uint32_t   *sv;
	char	   *work;

	GS_TRY(gs_bitonic_segments(ctx, sizeof(K) * 8, kin, vin, tk, tv, n, NULL,
							   m, SS_TILE, n < SS_TILE ? n : SS_TILE));
	GS_TRY(gs_scratch(ctx, GS_SLOT_SAMPLE_KEYS, ns * sizeof(K), (void **) &sk));
	GS_TRY(gs_scratch(ctx, GS_SLOT_SAMPLE_VALS, ns * 4, (void **) &sv));

	/* work: splitters | P (m x (nb+1)) | C (nb x m) | scan tmp | offsets */
	const uint64_t ncount = (uint64_t) nb * m;
	size_t		o_spk = 0,
				o_spv = o_spk + (size_t) nb * sizeof(K),
				o_P = (o_spv + (size_t) nb * 4 + 15) & ~(size_t) 15,
				o_C = o_P + (size_t) m * (nb + 1) * 4,
				o_tmp = o_C + ncount * 4,
				o_off = o_tmp + (size_t) gs_scan_tmp_words((uint32_t) ncount) * 4,
				bytes = o_off + (size_t) (nb + 1) * 4;

	if (ncount > 0xFFFFFFFFull)
		return gs_fail(ctx, GS_ERR_TOO_LARGE, "too many buckets");
	GS_TRY(gs_scratch(ctx, GS_SLOT_BUCKET_WORK, bytes, (void **) &work));
	K		   *spk = (K *) (work + o_spk);
	uint32_t   *spv = (uint32_t *) (work + o_spv);
	uint32_t   *P = (uint32_t *) (work + o_P);
	uint32_t   *C = (uint32_t *) (work + o_C);
	uint32_t   *d_off = (uint32_t *) (work + o_off);

	take_samples<K><<<gs_blocks(ns, SS_THREADS), SS_THREADS, 0, ctx->stream>>>(tk, tv, n, m, s, sk, sv);
	GS_TRY(gs_after_launch(ctx, "samplesort: samples"));
	if (ns > 1)
		GS_TRY(gs_warpsort(ctx, sizeof(K) * 8, sk, sv, sk, sv, (uint32_t) ns));
	pick_splitters<K><<<gs_blocks(nb, SS_THREADS), SS_THREADS, 0, ctx->stream>>>(sk, sv, ns, nb, spk, spv);
	GS_TRY(gs_after_launch(ctx, "samplesort: splitters"));
	tile_bounds<K><<<m, SS_THREADS, 0, ctx->stream>>>(tk, tv, n, m, spk, spv, nb, P, C);
	GS_TRY(gs_after_launch(ctx, "samplesort: tile bounds"));
	GS_TRY(gs_scan_u32(ctx, C, (uint32_t) ncount, (uint32_t *) (work + o_tmp)));
	bucket_starts<<<gs_blocks(nb + 1, SS_THREADS), SS_THREADS, 0, ctx->stream>>>(C, m, nb, n, d_off);
	GS_TRY(gs_after_launch(ctx, "samplesort: bucket starts"));
	relocate<K><<<m, SS_THREADS, (nb + 1) * 4, ctx->stream>>>(tk, tv, kout, vout, n, m, nb, P, C);
	GS_TRY(gs_after_launch(ctx, "samplesort: relocate"));

	off.resize(nb + 1);
	split_keys.resize(nb);
	GS_CHECK(ctx, cudaMemcpyAsync(off.data(), d_off, (nb + 1) * 4, cudaMemcpyDeviceToHost, ctx->stream));
	GS_CHECK(ctx, cudaMemcpyAsync(split_keys.data(), spk, (nb - 1) * sizeof(K), cudaMemcpyDeviceToHost, ctx->stream));
	GS_CHECK(ctx, cudaStreamSynchronize(ctx->stream));
	return GS_OK;
}

template <typename K>
static gs_status
samplesort(gs_context *ctx, const K *kin, const uint32_t *vin, K *kout,
		   uint32_t *vout, uint32_t n)
{
	const uint32_t nb = choose_buckets(n);
	std::vector<uint32_t> off;
	std::vector<K> spl;
	gs_keyrange kr;
	K		   *bk;
	uint32_t   *bv;
	uint32_t	maxb = 0;

	GS_TRY(gs_key_range(ctx, sizeof(K) * 8, kin, n, &kr));
	GS_TRY(gs_scratch(ctx, GS_SLOT_BUCKET_KEYS, (size_t) n * sizeof(K), (void **) &bk));
	GS_TRY(gs_scratch(ctx, GS_SLOT_BUCKET_VALS, (size_t) n * 4, (void **) &bv));
	/* sorted tiles in the output, buckets in scratch, sorted into output */
	GS_TRY(partition(ctx, kin, vin, kout, vout, bk, bv, n, nb, off, spl));
	for (uint32_t b = 0; b < nb; b++)
		maxb = off[b + 1] - off[b] > maxb ? off[b + 1] - off[b] : maxb;
	if (maxb <= GS_BITONIC_MAX)
	{
		uint32_t   *d_off = NULL;

		/* bucket boundaries for the segmented sort: upper half of SMALL */
		GS_TRY(gs_scratch(ctx, GS_SLOT_SMALL, GS_SMALL_BYTES, (void **) &d_off));
		d_off = (uint32_t *) ((char *) d_off + 32 * 1024);
		GS_CHECK(ctx, cudaMemcpyAsync(d_off, off.data(), (nb + 1) * 4, cudaMemcpyHostToDevice, ctx->stream));
		GS_TRY(gs_bitonic_segments(ctx, sizeof(K) * 8, bk, bv, kout, vout, n,
								   d_off, nb, 0, maxb));
		/* off is a host vector: wait before it goes away */
		GS_CHECK(ctx, cudaStreamSynchronize(ctx->stream));
		return GS_OK;
	}
	for (uint32_t b = 0; b < nb; b++)
	{
		uint32_t	lo = off[b],
					len = off[b + 1] - off[b];

		if (len == 0)
			continue;
		if (len <= GS_BITONIC_MAX)
		{
			GS_TRY(gs_bitonic_segments(ctx, sizeof(K) * 8, bk + lo, bv + lo,
									   kout + lo, vout + lo, len, NULL, 1,
									   len, len));
			continue;
		}
		gs_keyrange bkr;
		gs_sort_info info;

		bkr.min = b == 0 ? kr.min : (uint64_t) spl[b - 1];
		bkr.max = b == nb - 1 ? kr.max : (uint64_t) spl[b];
		bkr.diff = kr.diff;
		bkr.low_hist = NULL;	/* the whole input's, not the bucket's */
		GS_TRY(gs_radix_sort(ctx, sizeof(K) * 8, bk + lo, bv + lo, kout + lo,
							 vout + lo, len, &bkr, &info));
	}
	return GS_OK;
}

gs_status
gs_samplesort(gs_context *ctx, int key_bits, const void *kin,
			  const uint32_t *vin, void *kout, uint32_t *vout, uint32_t n)
{
	if (key_bits == 32)
		return samplesort(ctx, (const uint32_t *) kin, vin, (uint32_t *) kout,
						  vout, n);
	return samplesort(ctx, (const uint64_t *) kin, vin, (uint64_t *) kout,
					  vout, n);
}

template <typename K>
static gs_status
bucket_partition(gs_context *ctx, const K *kin, const uint32_t *vin,
				 K *kout, uint32_t *vout, uint32_t n, uint32_t nb,
				 uint64_t *offsets)
{
	std::vector<uint32_t> off;
	std::vector<K> spl;
	K		   *tk;
	uint32_t   *tv;

	GS_TRY(gs_scratch(ctx, GS_SLOT_BUCKET_KEYS, (size_t) n * sizeof(K), (void **) &tk));
	GS_TRY(gs_scratch(ctx, GS_SLOT_BUCKET_VALS, (size_t) n * 4, (void **) &tv));
	GS_TRY(partition(ctx, kin, vin, tk, tv, kout, vout, n, nb, off, spl));
	for (uint32_t b = 0; b <= nb; b++)
		offsets[b] = off[b];
	return GS_OK;
}

gs_status
gs_bucket_partition(gs_context *ctx, int key_bits, const void *keys_in,
					const uint32_t *vals_in, void *keys_out,
					uint32_t *vals_out, uint64_t n, int nbuckets,
					uint64_t *bucket_offsets)
{
	if (!ctx || !bucket_offsets || nbuckets < 1 || nbuckets > 8192 ||
		(key_bits != 32 && key_bits != 64) ||
		(n && (!keys_in || !vals_in || !keys_out || !vals_out)))
		return gs_fail(ctx, GS_ERR_INVALID, "invalid argument");
	if (n > GS_MAX_PAIRS)
		return gs_fail(ctx, GS_ERR_TOO_LARGE, "n = %llu: at most 2^32 - 1 "
					   "pairs", (unsigned long long) n);
	if (keys_in == keys_out || (const void *) vals_in == (void *) vals_out)
		return gs_fail(ctx, GS_ERR_INVALID, "bucket partition is out of place");
	GS_CHECK(ctx, cudaSetDevice(ctx->device));
	if (n == 0 || nbuckets == 1)
	{
		size_t		kb = n * (key_bits / 8);

		GS_CHECK(ctx, cudaMemcpyAsync(keys_out, keys_in, kb, cudaMemcpyDeviceToDevice, ctx->stream));
		GS_CHECK(ctx, cudaMemcpyAsync(vals_out, vals_in, n * 4, cudaMemcpyDeviceToDevice, ctx->stream));
		for (int b = 0; b <= nbuckets; b++)
			bucket_offsets[b] = b == 0 ? 0 : n;
		return gs_synchronize(ctx);
	}
	if (key_bits == 32)
		return bucket_partition(ctx, (const uint32_t *) keys_in, vals_in,
								(uint32_t *) keys_out, vals_out, (uint32_t) n,
								(uint32_t) nbuckets, bucket_offsets);
	return bucket_partition(ctx, (const uint64_t *) keys_in, vals_in,
							(uint64_t *) keys_out, vals_out, (uint32_t) n,
							(uint32_t) nbuckets, bucket_offsets);
}
