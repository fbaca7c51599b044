/*
 * kernel_bench.cu
 *	  Benchmark of gpusort's sorts against CUB's DeviceRadixSort::SortPairs
 *	  and DeviceMergeSort::SortPairsCopy on identical inputs in the same
 *	  run: million pairs per second, median of timed runs after a warm-up
 *	  (CUDA events), 32- and 64-bit keys, 1M/10M/100M pairs, full-range,
 *	  24-bit and narrow (1000-value) key ranges.  Every result is checked.
 *	  "partition" times gs_bucket_partition alone (the sample sort's bucket
 *	  step) into each of --buckets counts (default 64), on the same input,
 *	  and the table gives its rate against the radix sort's.
 *	  Keys of 128 and 256 bits (two and four words, as a composite order's
 *	  or a text key's): "words" sorts them as the GPU engine sorts a key of
 *	  several words (gpu_sort_by_column: a stable 64-bit radix sort of
 *	  each word, the least significant first, over the order so far),
 *	  "cub_merge" is CUB's merge sort with the lexicographic comparator;
 *	  full: every word uniform; fewlead: the first word of 7 values.
 *	  "segments" finishes tied groups (segments of 2 to 64 or 2 to 10,000
 *	  rows) by four more words against CUB's DeviceSegmentedSort.
 *	  Writes CSV (--csv FILE) and prints a short table last.
 *
 *	  kernel_bench [--csv FILE] [--runs R] [--max-n N] [--case BITS:N:DIST[,...]]
 *	               [--algo NAME[,...]]   (auto, radix, counting, warpsort,
 *	                                      samplesort, partition, words,
 *	                                      segments, cub_radix, cub_merge,
 *	                                      cub_segmented)
 *	               [--buckets NB[,...]]  (the partition's bucket counts)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include "gpusort_cuda.h"
#include "gen.h"
#include "partition_check.h"

#define CU(call) \
	do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_)); exit(2); } } while (0)

struct KeyLess
{
	template <typename K>
	__device__ bool operator()(const K &a, const K &b) const { return a < b; }
};

struct Result
{
	int			bits;
	uint64_t	n;
	std::string dist,
				algo,
				ran;
	int			passes;
	double		median_ms,
				min_ms,
				mps;
	bool		ok;
};

static gs_context *ctx;
static int	runs = 5;
static std::string algos;		/* "name[,...]": only these (ours and cub_*) */
static std::vector<int> partition_buckets = {64};

static bool
wanted(const char *name)
{
	return algos.empty() || ("," + algos + ",").find("," + std::string(name) + ",") != std::string::npos;
}

template <typename F>
static void
time_runs(F run, std::vector<double> &ms)
{
	cudaEvent_t a,
				b;

	CU(cudaEventCreate(&a));
	CU(cudaEventCreate(&b));
	run();						/* warm-up */
	CU(cudaDeviceSynchronize());
	for (int r = 0; r < runs; r++)
	{
		float		t;

		CU(cudaEventRecord(a, 0));
		run();
		CU(cudaEventRecord(b, 0));
		CU(cudaEventSynchronize(b));
		CU(cudaEventElapsedTime(&t, a, b));
		ms.push_back(t);
	}
	std::sort(ms.begin(), ms.end());
	cudaEventDestroy(a);
	cudaEventDestroy(b);
}

/* Sorted by key, values a permutation, each key paired with its row. */
template <typename K>
static bool
verify(const std::vector<uint64_t> &keys, const K *d_k, const uint32_t *d_v,
	   uint64_t n, bool stable)
{
	std::vector<K> k(n);
	std::vector<uint32_t> v(n);
	std::vector<uint8_t> seen(n, 0);

	CU(cudaMemcpy(k.data(), d_k, n * sizeof(K), cudaMemcpyDeviceToHost));
	CU(cudaMemcpy(v.data(), d_v, n * 4, cudaMemcpyDeviceToHost));
	for (uint64_t i = 0; i < n; i++)
	{
		if (v[i] >= n || seen[v[i]] || (K) keys[v[i]] != k[i])
			return false;
		seen[v[i]] = 1;
		if (i && (k[i - 1] > k[i] || (stable && k[i - 1] == k[i] && v[i - 1] > v[i])))
			return false;
	}
	return true;
}

/*
 * Keeps a timed result (ms sorted: the median, the minimum), writes its CSV
 * line and prints it.
 */
static void
record_result(std::vector<Result> &results, FILE *csv, const char *device, int bits,
			  uint64_t n, const char *dist, const char *algo, const char *ran,
			  int passes, const std::vector<double> &ms, bool ok)
{
	Result		r{bits, n, dist, algo, ran, passes, ms[ms.size() / 2], ms[0],
		n / 1e3 / ms[ms.size() / 2], ok};

	results.push_back(r);
	fprintf(csv, "%s,%d,%llu,%s,%s,%s,%d,%.4f,%.4f,%.1f,%d\n", device, bits,
			(unsigned long long) n, dist, algo, ran, passes, r.median_ms,
			r.min_ms, r.mps, ok);
	fflush(csv);
	printf("  %3d-bit n=%-10llu %-8s %-11s (%s, %d passes) %9.3f ms %9.1f Mpairs/s %s\n",
		   bits, (unsigned long long) n, dist, algo, ran, passes, r.median_ms,
		   r.mps, ok ? "ok" : "WRONG");
	fflush(stdout);
}

template <typename K>
static void
bench_case(int bits, uint64_t n, const char *dist, int g,
		   std::vector<Result> &results, FILE *csv, const char *device)
{
	std::vector<uint64_t> keys;
	std::vector<K> hk(n);

	gen_keys(keys, n, bits, g, 12345);
	for (uint64_t i = 0; i < n; i++)
		hk[i] = (K) keys[i];
	K		   *kin,
			   *kout;
	uint32_t   *vin,
			   *vout;

	CU(cudaMalloc(&kin, n * sizeof(K)));
	CU(cudaMalloc(&kout, n * sizeof(K)));
	CU(cudaMalloc(&vin, n * 4));
	CU(cudaMalloc(&vout, n * 4));
	CU(cudaMemcpy(kin, hk.data(), n * sizeof(K), cudaMemcpyHostToDevice));
	if (gs_fill_iota(ctx, vin, n) != GS_OK || gs_synchronize(ctx) != GS_OK)
		exit(2);

	auto		record = [&](const char *algo, const char *ran, int passes,
							 std::vector<double> &ms, bool ok) {
		record_result(results, csv, device, bits, n, dist, algo, ran, passes, ms, ok);
	};

	/* the dispatcher and every algorithm of its table, forced */
	for (int ai = GS_ALGO_AUTO; ai < GS_ALGO_COUNT_; ai++)
	{
		const gs_algorithm a = (gs_algorithm) ai;

		/* n > GS_BITONIC_MAX: a forced bitonic sort runs the warpsort */
		if (a == GS_ALGO_BITONIC)
			continue;
		if (a == GS_ALGO_COUNTING && g != 7)
			continue;
		if (a == GS_ALGO_SAMPLESORT && n > 10000000)
			continue;
		if (!wanted(gs_algorithm_name(a)))
			continue;
		gs_sort_info info;
		std::vector<double> ms;
		gs_status	st = GS_OK;

		time_runs([&] {
			gs_status s = gs_sort_pairs(ctx, bits, kin, vin, kout, vout, n, a, &info);

			if (s != GS_OK)
				st = s;
		}, ms);
		if (st != GS_OK)
		{
			printf("  %s failed: %s: %s\n", gs_algorithm_name(a), gs_status_name(st),
				   gs_last_error(ctx));
			continue;
		}
		record(gs_algorithm_name(a), gs_algorithm_name(info.algorithm),
			   info.radix_passes, ms, verify(keys, kout, vout, n, true));
	}
	/* the sample sort's bucket step alone, into each bucket count */
	if (wanted("partition"))
		for (size_t pi = 0; pi < partition_buckets.size(); pi++)
		{
			const int	nb = partition_buckets[pi];
			std::vector<uint64_t> off(nb + 1);
			std::vector<double> ms;
			gs_status	st = GS_OK;

			time_runs([&] {
				gs_status s = gs_bucket_partition(ctx, bits, kin, vin, kout, vout, n, nb, off.data());

				if (s != GS_OK)
					st = s;
			}, ms);
			if (st != GS_OK)
			{
				printf("  partition failed: %s: %s\n", gs_status_name(st), gs_last_error(ctx));
				continue;
			}
			std::vector<K> got_k(n);
			std::vector<uint64_t> out_k(n);
			std::vector<uint32_t> out_v(n),
						in_v(n);
			std::string why;
			uint64_t	largest;
			char		ran[32];

			CU(cudaMemcpy(got_k.data(), kout, n * sizeof(K), cudaMemcpyDeviceToHost));
			CU(cudaMemcpy(out_v.data(), vout, n * 4, cudaMemcpyDeviceToHost));
			for (uint64_t i = 0; i < n; i++)
			{
				out_k[i] = got_k[i];
				in_v[i] = (uint32_t) i;
			}
			bool		ok = check_partition(keys, in_v, out_k, out_v, off, nb, true, why, &largest);

			if (!ok)
				printf("  partition nb=%d: %s\n", nb, why.c_str());
			snprintf(ran, sizeof(ran), "buckets%d", nb);
			/* the first bucket count is the table's "partition" column; CSV passes: buckets */
			record(pi == 0 ? "partition" : ran, ran, nb, ms, ok);
		}
	/* CUB radix sort over all key bits */
	if (wanted("cub_radix"))
	{
		void	   *tmp = NULL;
		size_t		tmp_bytes = 0;
		std::vector<double> ms;

		CU(cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, kin, kout, vin, vout, (int64_t) n));
		CU(cudaMalloc(&tmp, tmp_bytes));
		time_runs([&] {
			CU(cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, kin, kout, vin, vout, (int64_t) n));
		}, ms);
		record("cub_radix", "cub_radix", (int) sizeof(K), ms, verify(keys, kout, vout, n, true));
		CU(cudaFree(tmp));
	}
	/* CUB merge sort */
	if (wanted("cub_merge"))
	{
		void	   *tmp = NULL;
		size_t		tmp_bytes = 0;
		std::vector<double> ms;

		CU(cub::DeviceMergeSort::SortPairsCopy(tmp, tmp_bytes, kin, vin, kout, vout, (int64_t) n, KeyLess()));
		CU(cudaMalloc(&tmp, tmp_bytes));
		time_runs([&] {
			CU(cub::DeviceMergeSort::SortPairsCopy(tmp, tmp_bytes, kin, vin, kout, vout, (int64_t) n, KeyLess()));
		}, ms);
		record("cub_merge", "cub_merge", 0, ms, verify(keys, kout, vout, n, true));
		CU(cudaFree(tmp));
	}
	cudaFree(kin);
	cudaFree(kout);
	cudaFree(vin);
	cudaFree(vout);
	/* the context's scratch is sized for this n: let the next case regrow */
	gs_context_release_scratch(ctx);
}

/* A key of W 64-bit words, the first the most significant. */
template <int W>
struct WideKey
{
	uint64_t	w[W];
};

struct WideLess
{
	template <int W>
	__device__ bool operator()(const WideKey<W> &a, const WideKey<W> &b) const
	{
		for (int i = 0; i < W; i++)
			if (a.w[i] != b.w[i])
				return a.w[i] < b.w[i];
		return false;
	}
};

/* Is perm a permutation that orders the keys (words[w][row]) stably? */
template <int W>
static bool
verify_wide(const std::vector<uint64_t> *words, const uint32_t *d_perm, uint64_t n)
{
	std::vector<uint32_t> perm(n);
	std::vector<uint8_t> seen(n, 0);

	CU(cudaMemcpy(perm.data(), d_perm, n * 4, cudaMemcpyDeviceToHost));
	for (uint64_t i = 0; i < n; i++)
	{
		if (perm[i] >= n || seen[perm[i]])
			return false;
		seen[perm[i]] = 1;
		if (i == 0)
			continue;
		int			c = 0;

		for (int w = 0; w < W && c == 0; w++)
			c = (words[w][perm[i - 1]] > words[w][perm[i]]) -
				(words[w][perm[i - 1]] < words[w][perm[i]]);
		if (c > 0 || (c == 0 && perm[i - 1] > perm[i]))
			return false;
	}
	return true;
}

/*
 * n keys of W words: the GPU engine's sort by word columns ("words")
 * against CUB's merge sort of the whole keys ("cub_merge"), each giving
 * the rows' order.
 */
template <int W>
static void
bench_wide(uint64_t n, const char *dist, int lead_g, std::vector<Result> &results,
		   FILE *csv, const char *device)
{
	const int	bits = 64 * W;
	std::vector<uint64_t> words[W];
	std::vector<WideKey<W>> hk(n);
	uint64_t   *cols[W];
	uint64_t   *scratch;
	uint32_t   *perm,
			   *next,
			   *vals;

	for (int w = 0; w < W; w++)
	{
		gen_keys(words[w], n, 64, w == 0 ? lead_g : 0, 777 + w);
		CU(cudaMalloc(&cols[w], n * 8));
		CU(cudaMemcpy(cols[w], words[w].data(), n * 8, cudaMemcpyHostToDevice));
		for (uint64_t i = 0; i < n; i++)
			hk[i].w[w] = words[w][i];
	}
	CU(cudaMalloc(&scratch, n * 8));
	CU(cudaMalloc(&perm, n * 4));
	CU(cudaMalloc(&next, n * 4));
	CU(cudaMalloc(&vals, n * 4));

	/* (passes: the key's words) */
	auto		record = [&](const char *algo, std::vector<double> &ms, bool ok) {
		record_result(results, csv, device, bits, n, dist, algo, algo, W, ms, ok);
	};

	if (wanted("words"))
	{
		std::vector<double> ms;
		gs_status	st = GS_OK;

		time_runs([&] {
			gs_status s = gs_fill_iota(ctx, perm, n);

			/* gpu_sort_by_column, each word from the least significant */
			for (int w = W - 1; w >= 0 && s == GS_OK; w--)
			{
				if ((s = gs_gather_u64(ctx, scratch, cols[w], perm, n)) != GS_OK ||
					(s = gs_fill_iota(ctx, vals, n)) != GS_OK ||
					(s = gs_sort_pairs(ctx, 64, scratch, vals, scratch, vals, n,
									   GS_ALGO_AUTO, NULL)) != GS_OK ||
					(s = gs_gather_u32(ctx, next, perm, vals, n)) != GS_OK)
					break;
				std::swap(perm, next);
			}
			if (s == GS_OK)
				s = gs_synchronize(ctx);
			if (s != GS_OK)
				st = s;
		}, ms);
		if (st != GS_OK)
			printf("  words failed: %s: %s\n", gs_status_name(st), gs_last_error(ctx));
		else
			record("words", ms, verify_wide<W>(words, perm, n));
	}
	if (wanted("cub_merge"))
	{
		WideKey<W> *kin,
				   *kout;
		void	   *tmp = NULL;
		size_t		tmp_bytes = 0;
		std::vector<double> ms;

		CU(cudaMalloc(&kin, n * sizeof(WideKey<W>)));
		CU(cudaMalloc(&kout, n * sizeof(WideKey<W>)));
		CU(cudaMemcpy(kin, hk.data(), n * sizeof(WideKey<W>), cudaMemcpyHostToDevice));
		if (gs_fill_iota(ctx, vals, n) != GS_OK || gs_synchronize(ctx) != GS_OK)
			exit(2);
		CU(cub::DeviceMergeSort::SortPairsCopy(tmp, tmp_bytes, kin, vals, kout, perm,
											   (int64_t) n, WideLess()));
		CU(cudaMalloc(&tmp, tmp_bytes));
		time_runs([&] {
			CU(cub::DeviceMergeSort::SortPairsCopy(tmp, tmp_bytes, kin, vals, kout, perm,
												   (int64_t) n, WideLess()));
		}, ms);
		record("cub_merge", ms, verify_wide<W>(words, perm, n));
		CU(cudaFree(tmp));
		CU(cudaFree(kin));
		CU(cudaFree(kout));
	}
	for (int w = 0; w < W; w++)
		cudaFree(cols[w]);
	cudaFree(scratch);
	cudaFree(perm);
	cudaFree(next);
	cudaFree(vals);
	gs_context_release_scratch(ctx);
}

/*
 * Segments of a permutation finished by a key of four more words (the
 * groups a sort by a text's first words left tied): gs_sort_segments
 * ("segments", GPU-Warpsort by segments) against CUB's
 * DeviceSegmentedSort::StableSortPairs of each word, the least significant
 * first, over the order so far ("cub_segmented": the four words gathered
 * in that order, then sorted with the positions).  n rows in segments of
 * min_len to max_len rows, their sizes log-uniform, back to back; each
 * segment's row numbers ascend, as a stable sort leaves a tied group.
 */
static void
bench_segments(uint64_t n, const char *dist, uint32_t min_len, uint32_t max_len,
			   std::vector<Result> &results, FILE *csv, const char *device)
{
	const int	W = 4;
	std::vector<uint64_t> words[W];
	std::vector<uint32_t> begins, ends;
	uint64_t	s = 4242;
	uint64_t   *cols[W];
	uint64_t   *kin,
			   *kout;
	uint32_t   *order,
			   *perm,
			   *next,
			   *vals,
			   *d_begins,
			   *d_ends;

	for (uint64_t at = 0; at < n;)
	{
		double		u = (double) (splitmix64(s) % 1000000) / 1e6;
		uint32_t	len = (uint32_t) (min_len + exp(u * log((double) max_len - min_len + 1)) - 1);

		len = (uint32_t) std::min<uint64_t>(len, n - at);
		begins.push_back((uint32_t) at);
		ends.push_back((uint32_t) (at + len));
		at += len;
	}
	uint32_t	nsegs = (uint32_t) begins.size();

	for (int w = 0; w < W; w++)
	{
		gen_keys(words[w], n, 64, 0, 911 + w);
		CU(cudaMalloc(&cols[w], n * 8));
		CU(cudaMemcpy(cols[w], words[w].data(), n * 8, cudaMemcpyHostToDevice));
	}
	CU(cudaMalloc(&kin, n * 8));
	CU(cudaMalloc(&kout, n * 8));
	CU(cudaMalloc(&order, n * 4));
	CU(cudaMalloc(&perm, n * 4));
	CU(cudaMalloc(&next, n * 4));
	CU(cudaMalloc(&vals, n * 4));
	CU(cudaMalloc(&d_begins, nsegs * 4));
	CU(cudaMalloc(&d_ends, nsegs * 4));
	CU(cudaMemcpy(d_begins, begins.data(), nsegs * 4, cudaMemcpyHostToDevice));
	CU(cudaMemcpy(d_ends, ends.data(), nsegs * 4, cudaMemcpyHostToDevice));

	/* the reference: each segment by (words, row number), on the host */
	std::vector<uint32_t> want(n);

	for (uint64_t i = 0; i < n; i++)
		want[i] = (uint32_t) i;
	for (uint32_t g = 0; g < nsegs; g++)
		std::sort(want.begin() + begins[g], want.begin() + ends[g], [&](uint32_t a, uint32_t b) {
			for (int w = 0; w < W; w++)
				if (words[w][a] != words[w][b])
					return words[w][a] < words[w][b];
			return a < b;
		});
	auto		check = [&](const uint32_t *d) {
		std::vector<uint32_t> got(n);

		CU(cudaMemcpy(got.data(), d, n * 4, cudaMemcpyDeviceToHost));
		return got == want;
	};
	auto		record = [&](const char *algo, std::vector<double> &ms, bool ok) {
		record_result(results, csv, device, 64 * W, n, dist, algo, algo, W, ms, ok);
	};

	if (wanted("segments"))
	{
		std::vector<double> ms;
		gs_status	st = GS_OK;

		time_runs([&] {
			gs_status	r = gs_fill_iota(ctx, order, n);

			if (r == GS_OK)
				r = gs_sort_segments(ctx, W, cols, order, n, d_begins, d_ends, nsegs);
			if (r == GS_OK)
				r = gs_synchronize(ctx);
			if (r != GS_OK)
				st = r;
		}, ms);
		if (st != GS_OK)
			printf("  segments failed: %s: %s\n", gs_status_name(st), gs_last_error(ctx));
		else
			record("segments", ms, check(order));
	}
	if (wanted("cub_segmented"))
	{
		void	   *tmp = NULL;
		size_t		tmp_bytes = 0;
		std::vector<double> ms;

		CU(cub::DeviceSegmentedSort::StableSortPairs(tmp, tmp_bytes, kin, kout, perm, next,
													 (int64_t) n, (int64_t) nsegs,
													 d_begins, d_ends));
		CU(cudaMalloc(&tmp, tmp_bytes));
		time_runs([&] {
			gs_status	r = gs_fill_iota(ctx, perm, n);

			for (int w = W - 1; w >= 0 && r == GS_OK; w--)
			{
				if ((r = gs_gather_u64(ctx, kin, cols[w], perm, n)) != GS_OK ||
					(r = gs_synchronize(ctx)) != GS_OK)
					break;
				CU(cub::DeviceSegmentedSort::StableSortPairs(tmp, tmp_bytes, kin, kout, perm, next,
															 (int64_t) n, (int64_t) nsegs,
															 d_begins, d_ends));
				/* (CUB runs on the default stream, the gather on the context's) */
				CU(cudaDeviceSynchronize());
				std::swap(perm, next);
			}
			if (r != GS_OK)
				exit(2);
		}, ms);
		record("cub_segmented", ms, check(perm));
		CU(cudaFree(tmp));
	}
	for (int w = 0; w < W; w++)
		cudaFree(cols[w]);
	cudaFree(kin);
	cudaFree(kout);
	cudaFree(order);
	cudaFree(perm);
	cudaFree(next);
	cudaFree(vals);
	cudaFree(d_begins);
	cudaFree(d_ends);
	gs_context_release_scratch(ctx);
}

int
main(int argc, char **argv)
{
	const char *csv_path = "kernel_bench.csv";
	uint64_t	max_n = 100000000;
	std::string only;			/* "bits:n:dist[,...]": only these cases */

	for (int i = 1; i < argc; i++)
	{
		if (!strcmp(argv[i], "--csv") && i + 1 < argc)
			csv_path = argv[++i];
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--max-n") && i + 1 < argc)
			max_n = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--case") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--buckets") && i + 1 < argc)
		{
			partition_buckets.clear();
			for (char *nb = strtok(argv[++i], ","); nb; nb = strtok(NULL, ","))
				if (atoi(nb) >= 1 && atoi(nb) <= 8192)
					partition_buckets.push_back(atoi(nb));
			if (partition_buckets.empty())
			{
				fprintf(stderr, "--buckets: counts from 1 to 8192\n");
				return 2;
			}
		}
		else if (!strcmp(argv[i], "--algo") && i + 1 < argc)
		{
			char	   *list = strdup(argv[++i]);

			algos = list;
			for (char *name = strtok(list, ","); name; name = strtok(NULL, ","))
			{
				gs_algorithm a;

				if (strncmp(name, "cub_", 4) != 0 && strcmp(name, "partition") != 0 &&
					strcmp(name, "words") != 0 && strcmp(name, "segments") != 0 &&
					gs_algorithm_from_name(name, &a) != GS_OK)
				{
					fprintf(stderr, "%s\n", gs_last_error(NULL));
					return 2;
				}
			}
			free(list);
		}
		else
		{
			fprintf(stderr, "usage: %s [--csv FILE] [--runs R] [--max-n N] [--case BITS:N:DIST[,...]] [--algo NAME[,...]] [--buckets NB[,...]]\n", argv[0]);
			return 2;
		}
	}
	int			count = 0;

	if (gs_device_count(&count) != GS_OK || count == 0)
	{
		printf("kernel benchmark skipped: no CUDA device\n");
		return 0;
	}
	gs_device_info di;

	gs_device_get_info(0, &di);
	if (gs_context_create(0, 0, &ctx) != GS_OK)
	{
		fprintf(stderr, "context: %s\n", gs_last_error(NULL));
		return 2;
	}
	FILE	   *csv = fopen(csv_path, "w");

	if (!csv)
	{
		perror(csv_path);
		return 2;
	}
	fprintf(csv, "device,key_bits,n,dist,algo,ran,passes,median_ms,min_ms,mpairs_per_s,ok\n");
	printf("benchmark on %s (%d SMs), median of %d runs after a warm-up\n",
		   di.name, di.multiprocessors, runs);

	std::vector<Result> res;
	struct Dist
	{
		const char *name;
		int			g;
	};
	const std::vector<Dist> dists = {{"full", 0}, {"bits24", 9}, {"range1k", 7}};
	const std::vector<Dist> wide_dists = {{"full", 0}, {"fewlead", 4}};
	/* segments of 2 to g rows (log-uniform sizes) */
	const std::vector<Dist> seg_dists = {{"groups64", 64}, {"groups10k", 10000}};

	/* runs bench(bits, n, dist) over the sizes and dists --case and --max-n let */
	auto		each_case = [&](int bits, const std::vector<Dist> &ds, auto bench) {
		for (uint64_t n : {1000000ull, 10000000ull, 100000000ull})
			for (auto &d : ds)
			{
				if (n > max_n)
					continue;
				if (!only.empty() && ("," + only + ",").find("," + std::to_string(bits) + ":" +
														   std::to_string(n) + ":" + d.name + ",") == std::string::npos)
					continue;
				bench(n, d);
			}
	};

	each_case(32, dists, [&](uint64_t n, const Dist &d) {
		bench_case<uint32_t>(32, n, d.name, d.g, res, csv, di.name);
	});
	each_case(64, dists, [&](uint64_t n, const Dist &d) {
		bench_case<uint64_t>(64, n, d.name, d.g, res, csv, di.name);
	});
	each_case(128, wide_dists, [&](uint64_t n, const Dist &d) {
		bench_wide<2>(n, d.name, d.g, res, csv, di.name);
	});
	each_case(256, wide_dists, [&](uint64_t n, const Dist &d) {
		bench_wide<4>(n, d.name, d.g, res, csv, di.name);
	});
	each_case(256, seg_dists, [&](uint64_t n, const Dist &d) {
		bench_segments(n, d.name, 2, d.g, res, csv, di.name);
	});
	fclose(csv);

	/* the table: Mpairs/s per algorithm, and the ratios the targets name */
	const char *cols[] = {"auto", "radix", "counting", "warpsort", "samplesort",
		"partition", "cub_radix", "cub_merge"};
	std::map<std::string, double> m;
	bool		all_ok = true;

	for (auto &r : res)
	{
		m[std::to_string(r.bits) + "/" + std::to_string(r.n) + "/" + r.dist + "/" + r.algo] = r.mps;
		all_ok &= r.ok;
	}
	printf("\nMpairs/s on %s (CSV: %s)\n", di.name, csv_path);
	printf("%-4s %-10s %-8s", "bits", "n", "keys");
	for (auto c : cols)
		printf(" %10s", c);
	printf(" %8s %8s %8s\n", "rdx/cub", "ws/merge", "part/rdx");
	/* a ratio of two columns of the row, or "-" */
	auto		ratio = [&](const std::string &key, const char *a, const char *c) {
		if (m.count(key + a) && m.count(key + c))
			printf(" %8.2f", m[key + a] / m[key + c]);
		else
			printf(" %8s", "-");
	};

	for (int bits : {32, 64})
		for (uint64_t n : {1000000ull, 10000000ull, 100000000ull})
			for (auto &d : dists)
			{
				std::string key = std::to_string(bits) + "/" + std::to_string(n) + "/" + d.name + "/";
				bool		any = false;

				for (auto c : cols)
					any |= m.count(key + c) > 0;
				if (!any)
					continue;
				printf("%-4d %-10llu %-8s", bits, (unsigned long long) n, d.name);
				for (auto c : cols)
					if (m.count(key + c))
						printf(" %10.0f", m[key + c]);
					else
						printf(" %10s", "-");
				if (m.count(key + "counting") && m[key + "counting"] > m[key + "radix"])
					ratio(key, "counting", "cub_radix");
				else
					ratio(key, "radix", "cub_radix");
				ratio(key, "warpsort", "cub_merge");
				ratio(key, "partition", "radix");
				printf("\n");
			}
	/* the partition against the radix sort, each bucket count */
	for (auto &r : res)
	{
		std::string key = std::to_string(r.bits) + "/" + std::to_string(r.n) + "/" + r.dist + "/";

		if (r.ran.compare(0, 7, "buckets") == 0 && m.count(key + "radix"))
			printf("partition %d-bit n=%llu %s into %d buckets: %.0f Mpairs/s, %.3f ms; "
				   "radix %.0f Mpairs/s; partition/radix %.3f\n", r.bits,
				   (unsigned long long) r.n, r.dist.c_str(), r.passes, r.mps, r.median_ms,
				   m[key + "radix"], r.mps / m[key + "radix"]);
	}
	/* the wide keys: ours against CUB's merge sort */
	for (auto &r : res)
	{
		std::string key = std::to_string(r.bits) + "/" + std::to_string(r.n) + "/" + r.dist + "/";

		if (r.bits > 64 && r.algo == "words" && m.count(key + "cub_merge"))
			printf("%d-bit keys n=%llu %s: words %.0f Mkeys/s, cub_merge %.0f Mkeys/s; "
				   "words/cub_merge %.2f\n", r.bits, (unsigned long long) r.n,
				   r.dist.c_str(), r.mps, m[key + "cub_merge"], r.mps / m[key + "cub_merge"]);
	}
	/* the segments: ours against CUB's segmented sort */
	for (auto &r : res)
	{
		std::string key = std::to_string(r.bits) + "/" + std::to_string(r.n) + "/" + r.dist + "/";

		if (r.algo == "segments" && m.count(key + "cub_segmented"))
			printf("segments of %s, %d-bit keys n=%llu: segments %.0f Mrows/s, cub_segmented %.0f "
				   "Mrows/s; segments/cub_segmented %.2f\n", r.dist.c_str(), r.bits,
				   (unsigned long long) r.n, r.mps, m[key + "cub_segmented"],
				   r.mps / m[key + "cub_segmented"]);
	}
	printf("benchmark results %s\n", all_ok ? "all verified" : "HAVE WRONG OUTPUTS");
	gs_context_destroy(ctx);
	return all_ok ? 0 : 1;
}
