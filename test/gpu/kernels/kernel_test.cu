/*
 * kernel_test.cu
 *	  Tests of gpusort's CUDA library: every algorithm and the dispatcher
 *	  against std::stable_sort on many key distributions and sizes, for 32-
 *	  and 64-bit keys, plus the API's error paths and helpers.  Outputs are
 *	  poisoned before each sort; keys and row indexes are both checked.
 *	  gs_sort_values is checked against std::sort of the values in
 *	  PostgreSQL's order, bit for bit.  gs_bucket_partition is checked for
 *	  buckets in (key, value) order, every pair kept once and every bucket
 *	  within the bound of gpusort_cuda.h.  gs_sort_segments is checked
 *	  against std::sort of each segment by (key words, row number), rows
 *	  outside the segments left where they were.  gs_support_verdict (a GPU or
 *	  driver too old for the library) is checked on made-up facts first,
 *	  which needs no GPU, then gs_device_check on the GPU that runs the tests.
 *	  Prints "N passed, N failed" alone on the last line.
 *
 *	  kernel_test [--max-n N] [--dists a,b,...] [--algos a,b,...] [--seed S]
 *	              [--no-api] [--partition-only] [--support-only]
 *	              [--smem-limit BYTES]
 *	  (--support-only: the checks that need no GPU, gs_support_verdict's;
 *	  --smem-limit: the kernels choose their tiles as on a GPU with that much
 *	  shared memory per block, 65536 for Turing's, 101376 for Ada's)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <limits>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "gpusort_cuda.h"
#include "gen.h"
#include "partition_check.h"

static int	n_pass = 0,
			n_fail = 0;

#define CHECK(cond, ...) \
	do { if (cond) n_pass++; else { n_fail++; printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); fflush(stdout); } } while (0)

#define API(call) \
	do { gs_status s_ = (call); if (s_ != GS_OK) { printf("FATAL: %s: %s: %s\n", #call, gs_status_name(s_), gs_last_error(ctx)); exit(2); } } while (0)

static gs_context *ctx;

static std::vector<std::string>
split_list(const char *s)
{
	std::vector<std::string> out;
	std::stringstream ss(s);
	std::string item;

	while (std::getline(ss, item, ','))
		out.push_back(item);
	return out;
}

/* Compares device output with the reference (or checks it in O(n)). */
static bool
check_output(const std::vector<uint64_t> &keys, const std::vector<uint64_t> &ref_k,
			 const std::vector<uint32_t> &ref_v, const std::vector<uint64_t> &out_k,
			 const std::vector<uint32_t> &out_v, size_t n, std::string &why)
{
	char		buf[256];

	if (!ref_k.empty())
	{
		for (size_t i = 0; i < n; i++)
			if (out_k[i] != ref_k[i] || out_v[i] != ref_v[i])
			{
				snprintf(buf, sizeof(buf), "at %zu: got (%llx, %u), want (%llx, %u)", i,
						 (unsigned long long) out_k[i], out_v[i],
						 (unsigned long long) ref_k[i], ref_v[i]);
				why = buf;
				return false;
			}
		return true;
	}
	/* sorted by (key, value) + values a permutation + pairing = stable sort */
	std::vector<uint8_t> seen(n, 0);

	for (size_t i = 0; i < n; i++)
	{
		uint32_t	v = out_v[i];

		if (v >= n || seen[v] || keys[v] != out_k[i] ||
			(i > 0 && (out_k[i - 1] > out_k[i] ||
					   (out_k[i - 1] == out_k[i] && out_v[i - 1] >= v))))
		{
			snprintf(buf, sizeof(buf), "at %zu: (%llx, %u) wrong", i,
					 (unsigned long long) out_k[i], v);
			why = buf;
			return false;
		}
		seen[v] = 1;
	}
	return true;
}

/* Copies n device pairs (keys of bits 32 or 64) to the host, keys widened. */
static void
read_pairs(const void *d_k, const uint32_t *d_v, int bits, size_t n,
		   std::vector<uint64_t> &k, std::vector<uint32_t> &v)
{
	k.resize(n);
	v.resize(n);
	if (bits == 32)
	{
		std::vector<uint32_t> k32(n);

		API(gs_copy_to_host(ctx, k32.data(), d_k, n * 4));
		API(gs_synchronize(ctx));
		for (size_t i = 0; i < n; i++)
			k[i] = k32[i];
	}
	else
		API(gs_copy_to_host(ctx, k.data(), d_k, n * 8));
	API(gs_copy_to_host(ctx, v.data(), d_v, n * 4));
	API(gs_synchronize(ctx));
}

struct Buffers
{
	void	   *kin = NULL, *kout = NULL;
	uint32_t   *vin = NULL, *vout = NULL;
	size_t		cap = 0;
};

static void
ensure(Buffers &b, size_t n)
{
	if (n <= b.cap)
		return;
	gs_device_free(ctx, b.kin);
	gs_device_free(ctx, b.kout);
	gs_device_free(ctx, b.vin);
	gs_device_free(ctx, b.vout);
	API(gs_device_alloc(ctx, n * 8 + 8, &b.kin));
	API(gs_device_alloc(ctx, n * 8 + 8, &b.kout));
	API(gs_device_alloc(ctx, n * 4 + 4, (void **) &b.vin));
	API(gs_device_alloc(ctx, n * 4 + 4, (void **) &b.vout));
	b.cap = n;
}

static void
poison(void *p, size_t bytes)
{
	if (bytes)
	{
		cudaMemset(p, 0xA5, bytes);
		cudaDeviceSynchronize();
	}
}

/*
 * gs_gather_rows: rows of random lengths (1 to 3000 bytes, so that a warp
 * copies some in several rounds) at 8-aligned places of a source arena,
 * gathered in a random order into a layout of back-to-back 8-aligned rows,
 * against the same copy made on the host.
 */
static void
test_gather_rows(uint64_t seed)
{
	const uint64_t sizes[] = {0, 1, 2, 33, 1000, 100003};

	for (uint64_t n : sizes)
	{
		std::vector<uint64_t> src_off(n), dst_off(n);
		std::vector<uint32_t> len(n), order(n);
		std::vector<uint64_t> sorted_src(n);
		std::vector<uint32_t> sorted_len(n);
		uint64_t	s = seed + n;
		size_t		src_bytes = 0,
					dst_bytes = 0;

		for (uint64_t i = 0; i < n; i++)
		{
			len[i] = 1 + (uint32_t) (splitmix64(s) % 3000);
			src_off[i] = src_bytes;
			/* gaps between rows, as tuple blocks have */
			src_bytes += (len[i] + 7) / 8 * 8 + 8 * (splitmix64(s) % 3);
			order[i] = (uint32_t) i;
		}
		for (uint64_t i = n; i > 1; i--)
			std::swap(order[i - 1], order[splitmix64(s) % i]);
		for (uint64_t i = 0; i < n; i++)
		{
			sorted_src[i] = src_off[order[i]];
			sorted_len[i] = len[order[i]];
			dst_off[i] = dst_bytes;
			dst_bytes += (sorted_len[i] + 7) / 8 * 8;
		}
		std::vector<uint8_t> arena(src_bytes + 8), want(dst_bytes + 8, 0), got(dst_bytes + 8, 0);

		for (size_t i = 0; i < arena.size(); i++)
			arena[i] = (uint8_t) splitmix64(s);
		for (uint64_t i = 0; i < n; i++)
			memcpy(&want[dst_off[i]], &arena[sorted_src[i]], (sorted_len[i] + 7) / 8 * 8);

		void	   *d_arena, *d_out, *d_src, *d_dst, *d_len;

		API(gs_device_alloc(ctx, arena.size(), &d_arena));
		API(gs_device_alloc(ctx, got.size(), &d_out));
		API(gs_device_alloc(ctx, n * 8 + 8, &d_src));
		API(gs_device_alloc(ctx, n * 8 + 8, &d_dst));
		API(gs_device_alloc(ctx, n * 4 + 4, &d_len));
		poison(d_out, got.size());
		API(gs_copy_to_device(ctx, d_arena, arena.data(), arena.size()));
		API(gs_copy_to_device(ctx, d_src, sorted_src.data(), n * 8));
		API(gs_copy_to_device(ctx, d_dst, dst_off.data(), n * 8));
		API(gs_copy_to_device(ctx, d_len, sorted_len.data(), n * 4));
		API(gs_gather_rows(ctx, d_out, d_arena, (const uint64_t *) d_src,
						   (const uint64_t *) d_dst, (const uint32_t *) d_len, n));
		API(gs_copy_to_host(ctx, got.data(), d_out, dst_bytes));
		API(gs_synchronize(ctx));
		CHECK(memcmp(got.data(), want.data(), dst_bytes) == 0,
			  "gather rows n=%llu", (unsigned long long) n);
		gs_device_free(ctx, d_arena);
		gs_device_free(ctx, d_out);
		gs_device_free(ctx, d_src);
		gs_device_free(ctx, d_dst);
		gs_device_free(ctx, d_len);
	}
}

/*
 * gs_sort_segments against std::sort of each segment by (key words, row
 * number): segments of every size class (a warp's, one chunk, chunks merged
 * over several levels), rows between them and empty ones left alone, keys
 * of few values (ties settled by the row numbers) and of all-ones words.
 */
static void
test_segments(uint64_t seed)
{
	struct Case
	{
		const char *name;
		uint32_t	min_len,
					max_len;
		int			values;		/* distinct values of a word (0: any) */
		uint64_t	n;
	};
	const Case	cases[] = {
		{"small", 0, 40, 0, 200000},
		{"mixed", 2, 10000, 0, 3000000},
		{"mixed-ties", 2, 10000, 3, 3000000},
		{"ones", 2, 3000, 1, 500000},
		{"huge", 70001, 70001, 5, 300000},
	};

	for (const Case &c : cases)
		for (int nwords = 1; nwords <= 4; nwords++)
		{
			uint64_t	s = seed * 7919 + c.n + nwords;
			uint64_t	n = c.n;
			std::vector<uint64_t> words[4];
			std::vector<uint32_t> order(n), begins, ends;

			for (int w = 0; w < nwords; w++)
			{
				words[w].resize(n);
				for (uint64_t i = 0; i < n; i++)
				{
					uint64_t	v = splitmix64(s);

					/* "ones": every word all ones, as the padding is */
					words[w][i] = c.values == 1 ? ~(uint64_t) 0 :
						c.values ? v % c.values : v;
				}
			}
			for (uint64_t i = 0; i < n; i++)
				order[i] = (uint32_t) i;
			for (uint64_t i = n; i > 1; i--)
				std::swap(order[i - 1], order[splitmix64(s) % i]);
			/* segments, sizes log-uniform, and now and then a row between */
			for (uint64_t at = 0; at < n;)
			{
				double		u = (double) (splitmix64(s) % 1000000) / 1e6;
				uint32_t	len = c.min_len == c.max_len ? c.min_len :
					(uint32_t) (c.min_len + exp(u * log((double) c.max_len - c.min_len + 1)) - 1);

				len = (uint32_t) std::min<uint64_t>(len, n - at);
				begins.push_back((uint32_t) at);
				ends.push_back((uint32_t) (at + len));
				at += len + (splitmix64(s) % 4 == 0);
			}

			std::vector<uint32_t> want = order;
			auto		less = [&](uint32_t a, uint32_t b) {
				for (int w = 0; w < nwords; w++)
					if (words[w][a] != words[w][b])
						return words[w][a] < words[w][b];
				return a < b;
			};

			for (size_t g = 0; g < begins.size(); g++)
				std::sort(want.begin() + begins[g], want.begin() + ends[g], less);

			void	   *d_words[4] = {NULL, NULL, NULL, NULL};
			void	   *d_order, *d_begins, *d_ends;
			uint32_t	nsegs = (uint32_t) begins.size();
			std::vector<uint32_t> got(n);

			for (int w = 0; w < nwords; w++)
			{
				API(gs_device_alloc(ctx, n * 8, &d_words[w]));
				API(gs_copy_to_device(ctx, d_words[w], words[w].data(), n * 8));
			}
			API(gs_device_alloc(ctx, n * 4, &d_order));
			API(gs_device_alloc(ctx, nsegs * 4 + 4, &d_begins));
			API(gs_device_alloc(ctx, nsegs * 4 + 4, &d_ends));
			API(gs_copy_to_device(ctx, d_order, order.data(), n * 4));
			API(gs_copy_to_device(ctx, d_begins, begins.data(), nsegs * 4));
			API(gs_copy_to_device(ctx, d_ends, ends.data(), nsegs * 4));
			API(gs_sort_segments(ctx, nwords, (const uint64_t *const *) d_words,
								 (uint32_t *) d_order, n, (const uint32_t *) d_begins,
								 (const uint32_t *) d_ends, nsegs));
			API(gs_copy_to_host(ctx, got.data(), d_order, n * 4));
			API(gs_synchronize(ctx));
			CHECK(got == want, "segments %s n=%llu words=%d (%u segments)", c.name,
				  (unsigned long long) n, nwords, nsegs);
			for (int w = 0; w < nwords; w++)
				gs_device_free(ctx, d_words[w]);
			gs_device_free(ctx, d_order);
			gs_device_free(ctx, d_begins);
			gs_device_free(ctx, d_ends);
		}
	CHECK(gs_sort_segments(ctx, 5, NULL, NULL, 0, NULL, NULL, 0) == GS_ERR_INVALID,
		  "segments: five words refused");
	CHECK(gs_sort_segments(ctx, 2, NULL, NULL, 10, NULL, NULL, 0) == GS_OK,
		  "segments: none is nothing to do");
}

/*
 * gs_mark_group_heads and gs_keep_group_heads: rows in a random order
 * (a permutation), keys of two words with few values each (groups of many
 * rows, and groups where the first word alone would merge two), read
 * through the permutation and, for one word, in order; the places and
 * lengths of the first row of each group against the host's, and the
 * count, including n that ends on a group's head and n of one; and
 * gs_tied_segments' bounds of the groups of two rows or more.
 */
static void
test_group_heads(uint64_t seed)
{
	const uint64_t sizes[] = {1, 2, 31, 1000, 65537, 3000001};

	for (uint64_t n : sizes)
		for (int nwords = 1; nwords <= 2; nwords++)
		{
			std::vector<uint64_t> w0(n), w1(n), places(n), out_places(n);
			std::vector<uint32_t> order(n), lengths(n), out_lengths(n);
			std::vector<uint64_t> want_places;
			std::vector<uint32_t> want_lengths;
			std::vector<uint32_t> starts,
						want_begins,
						want_ends;
			uint64_t	s = seed + n * 3 + nwords;
			uint64_t	kept = 0;

			/* sorted keys, then rows dealt out in a random order */
			for (uint64_t i = 0; i < n; i++)
				order[i] = (uint32_t) i;
			for (uint64_t i = n; i > 1; i--)
				std::swap(order[i - 1], order[splitmix64(s) % i]);
			uint64_t	a = 0,
						b = 0;

			for (uint64_t i = 0; i < n; i++)
			{
				bool		head = i == 0;

				if (i > 0 && splitmix64(s) % 5 == 0)
				{
					a += 1 + splitmix64(s) % 3;
					head = true;
				}
				if (i > 0 && nwords == 2 && splitmix64(s) % 7 == 0)
				{
					b = splitmix64(s);
					head = true;
				}
				/* row order[i] is the i-th in order */
				w0[order[i]] = a;
				w1[order[i]] = b;
				places[i] = splitmix64(s);
				lengths[i] = (uint32_t) splitmix64(s);
				if (head)
				{
					want_places.push_back(places[i]);
					want_lengths.push_back(lengths[i]);
					starts.push_back((uint32_t) i);
				}
			}
			starts.push_back((uint32_t) n);
			for (size_t g = 0; g + 1 < starts.size(); g++)
				if (starts[g + 1] - starts[g] >= 2)
				{
					want_begins.push_back(starts[g]);
					want_ends.push_back(starts[g + 1]);
				}
			if (nwords == 1)
			{
				/* one word: sorted in place, read in order */
				std::vector<uint64_t> sorted(n);

				for (uint64_t i = 0; i < n; i++)
					sorted[i] = w0[order[i]];
				w0 = sorted;
			}

			void	   *d_w0, *d_w1, *d_order, *d_heads, *d_places, *d_lengths,
					   *d_out_places, *d_out_lengths, *d_begins, *d_ends;
			uint32_t	nsegs = 0;

			API(gs_device_alloc(ctx, n * 8, &d_w0));
			API(gs_device_alloc(ctx, n * 8, &d_w1));
			API(gs_device_alloc(ctx, n * 4, &d_order));
			API(gs_device_alloc(ctx, n * 4, &d_heads));
			API(gs_device_alloc(ctx, n * 8, &d_places));
			API(gs_device_alloc(ctx, n * 4, &d_lengths));
			API(gs_device_alloc(ctx, n * 8, &d_out_places));
			API(gs_device_alloc(ctx, n * 4, &d_out_lengths));
			API(gs_device_alloc(ctx, n / 2 * 4 + 4, &d_begins));
			API(gs_device_alloc(ctx, n / 2 * 4 + 4, &d_ends));
			poison(d_heads, n * 4);
			API(gs_copy_to_device(ctx, d_w0, w0.data(), n * 8));
			API(gs_copy_to_device(ctx, d_w1, w1.data(), n * 8));
			API(gs_copy_to_device(ctx, d_order, order.data(), n * 4));
			API(gs_copy_to_device(ctx, d_places, places.data(), n * 8));
			API(gs_copy_to_device(ctx, d_lengths, lengths.data(), n * 4));
			API(gs_mark_group_heads(ctx, (uint32_t *) d_heads, (const uint64_t *) d_w0,
									nwords == 1 ? NULL : (const uint32_t *) d_order, n, 1));
			if (nwords == 2)
				API(gs_mark_group_heads(ctx, (uint32_t *) d_heads, (const uint64_t *) d_w1,
										(const uint32_t *) d_order, n, 0));
			API(gs_tied_segments(ctx, (uint32_t *) d_begins, (uint32_t *) d_ends,
								 (const uint32_t *) d_heads, n, &nsegs));
			CHECK(nsegs == want_begins.size(), "tied segments n=%llu words=%d: %u, %zu wanted",
				  (unsigned long long) n, nwords, nsegs, want_begins.size());
			if (nsegs == want_begins.size() && nsegs > 0)
			{
				std::vector<uint32_t> got_begins(nsegs), got_ends(nsegs);

				API(gs_copy_to_host(ctx, got_begins.data(), d_begins, nsegs * 4));
				API(gs_copy_to_host(ctx, got_ends.data(), d_ends, nsegs * 4));
				API(gs_synchronize(ctx));
				CHECK(got_begins == want_begins && got_ends == want_ends,
					  "tied segments n=%llu words=%d: bounds", (unsigned long long) n, nwords);
			}
			API(gs_keep_group_heads(ctx, (uint64_t *) d_out_places, (uint32_t *) d_out_lengths,
									(const uint64_t *) d_places, (const uint32_t *) d_lengths,
									(uint32_t *) d_heads, n, &kept));
			CHECK(kept == want_places.size(), "group heads n=%llu words=%d: %llu kept, %zu wanted",
				  (unsigned long long) n, nwords, (unsigned long long) kept, want_places.size());
			if (kept == want_places.size())
			{
				API(gs_copy_to_host(ctx, out_places.data(), d_out_places, kept * 8));
				API(gs_copy_to_host(ctx, out_lengths.data(), d_out_lengths, kept * 4));
				API(gs_synchronize(ctx));
				CHECK(memcmp(out_places.data(), want_places.data(), kept * 8) == 0 &&
					  memcmp(out_lengths.data(), want_lengths.data(), kept * 4) == 0,
					  "group heads n=%llu words=%d: places and lengths",
					  (unsigned long long) n, nwords);
			}
			gs_device_free(ctx, d_w0);
			gs_device_free(ctx, d_w1);
			gs_device_free(ctx, d_order);
			gs_device_free(ctx, d_heads);
			gs_device_free(ctx, d_places);
			gs_device_free(ctx, d_lengths);
			gs_device_free(ctx, d_out_places);
			gs_device_free(ctx, d_out_lengths);
			gs_device_free(ctx, d_begins);
			gs_device_free(ctx, d_ends);
		}
}

static void
test_sorts(uint64_t max_n, const std::vector<int> &dists,
		   const std::vector<gs_algorithm> &algos, uint64_t seed)
{
	const uint64_t sizes[] = {0, 1, 2, 31, 32, 33, 1023, 1024, 1025, 4097,
		65537, 1000007, 10000000, 100000000};
	Buffers		b;
	int			case_no = 0;

	for (int bits : {32, 64})
		for (uint64_t n : sizes)
		{
			if (n > max_n)
				continue;
			for (int g : dists)
			{
				/* the largest sizes: fewer distributions */
				if (n >= 100000000 && g != 0 && g != 6 && g != 9 && g != 4)
					continue;
				std::vector<uint64_t> keys;
				std::vector<uint64_t> ref_k;
				std::vector<uint32_t> ref_v;

				gen_keys(keys, n, bits, g, seed);
				if (n <= 10000000)
				{
					std::vector<uint32_t> idx(n);

					std::iota(idx.begin(), idx.end(), 0u);
					std::stable_sort(idx.begin(), idx.end(),
									 [&](uint32_t a, uint32_t c) { return keys[a] < keys[c]; });
					ref_k.resize(n);
					ref_v = idx;
					for (size_t i = 0; i < n; i++)
						ref_k[i] = keys[idx[i]];
				}
				ensure(b, n);
				std::vector<uint32_t> k32;

				if (bits == 32)
				{
					k32.resize(n);
					for (size_t i = 0; i < n; i++)
						k32[i] = (uint32_t) keys[i];
				}
				const size_t kbytes = n * (bits / 8);

				for (gs_algorithm a : algos)
				{
					if (a == GS_ALGO_BITONIC && n > GS_BITONIC_MAX)
						continue;
					if (n >= 10000000 && (a == GS_ALGO_SAMPLESORT || a == GS_ALGO_BITONIC))
						continue;
					if (n >= 100000000 && a == GS_ALGO_WARPSORT)
						continue;
					bool		in_place = (++case_no % 3) == 0;
					void	   *ko = in_place ? b.kin : b.kout;
					uint32_t   *vo = in_place ? b.vin : b.vout;

					API(gs_copy_to_device(ctx, b.kin, bits == 32 ? (void *) k32.data() : (void *) keys.data(), kbytes));
					API(gs_fill_iota(ctx, b.vin, n));
					API(gs_synchronize(ctx));
					if (!in_place)
					{
						poison(b.kout, kbytes);
						poison(b.vout, n * 4);
					}
					gs_sort_info info;
					gs_status	st = gs_sort_pairs(ctx, bits, b.kin, b.vin, ko, vo, n, a, &info);
					char		label[160];

					snprintf(label, sizeof(label), "%s %d-bit n=%llu %s%s -> %s (%d passes)",
							 gs_algorithm_name(a), bits, (unsigned long long) n,
							 gen_names[g], in_place ? " in-place" : "",
							 gs_algorithm_name(info.algorithm), info.radix_passes);
					if (st != GS_OK)
					{
						CHECK(false, "%s: %s: %s", label, gs_status_name(st), gs_last_error(ctx));
						continue;
					}
					std::vector<uint64_t> out_k;
					std::vector<uint32_t> out_v;

					read_pairs(ko, vo, bits, n, out_k, out_v);
					std::string why;
					bool		ok = check_output(keys, ref_k, ref_v, out_k, out_v, n, why);

					CHECK(ok, "%s: %s", label, why.c_str());
					/* the algorithm that ran is the one forced, bar the documented fallbacks */
					bool		algo_ok = a == GS_ALGO_AUTO || info.algorithm == a ||
						(a == GS_ALGO_COUNTING && info.algorithm == GS_ALGO_RADIX) ||
						(n <= 1);

					CHECK(algo_ok, "%s: reported algorithm", label);
					if (n >= 1000000)
						printf("  ok=%d %s\n", ok, label);
				}
			}
			printf("  %d-bit n=%llu done (%d passed, %d failed so far)\n", bits,
				   (unsigned long long) n, n_pass, n_fail);
			fflush(stdout);
		}
	gs_device_free(ctx, b.kin);
	gs_device_free(ctx, b.kout);
	gs_device_free(ctx, b.vin);
	gs_device_free(ctx, b.vout);
}

/*
 * gs_bucket_partition over the distributions, sizes around the tile sizes,
 * bucket counts from 2 to the most (8192), 32- and 64-bit keys, and three
 * kinds of values: the row numbers, a shuffled permutation (equal keys
 * then order by values that do not follow the input), and all zero (equal
 * keys are equal pairs: only the tie-break by position splits them).
 * Outputs are poisoned first; the input must come back unchanged.
 */
static void
test_partition(uint64_t max_n, const std::vector<int> &dists, uint64_t seed)
{
	const uint64_t sizes[] = {1, 2, 33, 4095, 4096, 4097, 8191, 8193, 65537,
		1000007, 10000000, 100000000};
	const char *const value_names[] = {"rows", "shuffled", "zero"};
	Buffers		b;
	uint64_t	worst_n = 0;
	int			worst_nb = 0;
	double		worst = 0;

	for (int bits : {32, 64})
		for (uint64_t n : sizes)
		{
			if (n > max_n)
				continue;
			std::vector<int> nbs;

			if (n <= 65537)
				nbs = {2, 3, 64, 1000, 8192};
			else if (n <= 1000007)
				nbs = {2, 64, 1000, 8192};
			else if (n <= 10000000)
				nbs = {64, 1000};
			else
				nbs = {64};
			ensure(b, n);
			for (int g : dists)
			{
				/* the largest sizes: fewer distributions */
				if (n >= 10000000 && g != 0 && g != 1 && g != 5 && g != 11)
					continue;
				if (n >= 100000000 && g != 0 && g != 11)
					continue;
				std::vector<uint64_t> keys;

				gen_keys(keys, n, bits, g, seed);
				std::vector<uint32_t> k32(bits == 32 ? n : 0);

				for (size_t i = 0; i < k32.size(); i++)
					k32[i] = (uint32_t) keys[i];
				const size_t kbytes = n * (bits / 8);

				API(gs_copy_to_device(ctx, b.kin, bits == 32 ? (void *) k32.data() : (void *) keys.data(), kbytes));
				for (int vk = 0; vk < 3; vk++)
				{
					/* shuffled and zero values: up to 10M and 1M pairs */
					if ((vk == 1 && n > 10000000) || (vk == 2 && n > 1000007))
						continue;
					std::vector<uint32_t> vals(n);
					uint64_t	s = seed * 31 + n + g;

					for (uint64_t i = 0; i < n; i++)
						vals[i] = vk == 2 ? 0 : (uint32_t) i;
					if (vk == 1)
						for (uint64_t i = n; i > 1; i--)
							std::swap(vals[i - 1], vals[splitmix64(s) % i]);
					API(gs_copy_to_device(ctx, b.vin, vals.data(), n * 4));
					for (int nb : nbs)
					{
						/* 1000 and 8192 buckets over large inputs: the shuffled values only */
						if (n >= 1000007 && nb >= 1000 && vk != 1)
							continue;
						std::vector<uint64_t> off(nb + 1, 12345);
						char		label[160];

						snprintf(label, sizeof(label), "partition %d-bit n=%llu %s values=%s nb=%d",
								 bits, (unsigned long long) n, gen_names[g], value_names[vk], nb);
						poison(b.kout, kbytes);
						poison(b.vout, n * 4);
						gs_status	st = gs_bucket_partition(ctx, bits, b.kin, b.vin, b.kout, b.vout,
															 n, nb, off.data());

						if (st != GS_OK)
						{
							CHECK(false, "%s: %s: %s", label, gs_status_name(st), gs_last_error(ctx));
							continue;
						}
						std::vector<uint64_t> out_k;
						std::vector<uint32_t> out_v;

						read_pairs(b.kout, b.vout, bits, n, out_k, out_v);
						std::string why;
						uint64_t	largest;
						bool		ok = check_partition(keys, vals, out_k, out_v, off, nb,
														 vk != 2, why, &largest);

						CHECK(ok, "%s: %s", label, why.c_str());
						if (ok && n >= 10000 && largest * (double) nb / n > worst)
						{
							worst = largest * (double) nb / n;
							worst_n = n;
							worst_nb = nb;
						}
						if (n >= 1000000)
							printf("  ok=%d %s: largest bucket %llu (%.3f n/nb)\n", ok, label,
								   (unsigned long long) largest, largest * (double) nb / n);
					}
					/* the input is left intact */
					if (n <= 65537)
					{
						std::vector<uint64_t> in_k;
						std::vector<uint32_t> in_v;

						read_pairs(b.kin, b.vin, bits, n, in_k, in_v);
						CHECK(in_k == keys && in_v == vals, "partition %d-bit n=%llu %s values=%s: input changed",
							  bits, (unsigned long long) n, gen_names[g], value_names[vk]);
					}
				}
			}
			printf("  partition %d-bit n=%llu done (%d passed, %d failed so far)\n", bits,
				   (unsigned long long) n, n_pass, n_fail);
			fflush(stdout);
		}
	printf("partition: largest bucket at n >= 10000: %.3f n/nb (n=%llu, nb=%d; bound 2 n/nb + 24576/nb)\n",
		   worst, (unsigned long long) worst_n, worst_nb);

	/* edge cases and argument errors */
	{
		std::vector<uint64_t> off(8194, 12345);

		ensure(b, 4);
		CHECK(gs_bucket_partition(ctx, 64, b.kin, b.vin, b.kout, b.vout, 0, 5, off.data()) == GS_OK &&
			  off[0] == 0 && off[5] == 0, "partition of 0 pairs");
		API(gs_fill_iota(ctx, b.vin, 4));
		CHECK(gs_bucket_partition(ctx, 64, b.kin, b.vin, b.kout, b.vout, 4, 1, off.data()) == GS_OK &&
			  off[0] == 0 && off[1] == 4, "partition into 1 bucket");
		CHECK(gs_bucket_partition(ctx, 64, b.kin, b.vin, b.kout, b.vout, 4, 0, off.data()) == GS_ERR_INVALID,
			  "partition into 0 buckets rejected");
		CHECK(gs_bucket_partition(ctx, 64, b.kin, b.vin, b.kout, b.vout, 4, 8193, off.data()) == GS_ERR_INVALID,
			  "partition into 8193 buckets rejected");
		CHECK(gs_bucket_partition(ctx, 64, b.kin, b.vin, b.kin, b.vout, 4, 2, off.data()) == GS_ERR_INVALID,
			  "partition in place rejected");
	}
	gs_device_free(ctx, b.kin);
	gs_device_free(ctx, b.kout);
	gs_device_free(ctx, b.vin);
	gs_device_free(ctx, b.vout);
}

static volatile int stop_flag = 0;

/*
 * gs_support_verdict on made-up GPUs, drivers and errors: its status and
 * its reason, word for word (the NOTICE, EXPLAIN and gpusort_service show
 * it).  Pure: no GPU needed.
 */
static void
test_support(void)
{
	static const struct
	{
		const char *what;
		gs_support_facts f;
		gs_status	want;
		const char *reason;
	}			cases[] = {
		{"a V100 (7.0)", {0, "Tesla V100-SXM2-16GB", 7, 0, 13000, 13000, "7.5, 12.1", 0, "no error"},
			GS_ERR_NO_DEVICE,
		"GPU 0 (Tesla V100-SXM2-16GB, compute capability 7.0) is older than gpusort supports (7.5, Turing, and newer)"},
		{"a P100 with no code for it", {1, "Tesla P100", 6, 0, 13000, 13000, "7.5", cudaErrorNoKernelImageForDevice, "x"},
			GS_ERR_NO_DEVICE,
		"GPU 1 (Tesla P100, compute capability 6.0) is older than gpusort supports (7.5, Turing, and newer)"},
		{"a T4 (7.5)", {0, "Tesla T4", 7, 5, 13000, 13000, "7.5, 12.1", 0, "no error"}, GS_OK, ""},
		{"an H200 (9.0), a newer driver", {3, "NVIDIA H200", 9, 0, 13010, 13000, "7.5, 12.1", 0, "no error"}, GS_OK, ""},
		{"a T4 and a build for 8.0 alone", {1, "Tesla T4", 7, 5, 13000, 13000, "8.0", cudaErrorNoKernelImageForDevice, "x"},
			GS_ERR_NO_DEVICE,
		"GPU 1 (Tesla T4, compute capability 7.5) has no code in this build of gpusort, whose GPU code is for compute capability 8.0 (the Makefile's CUDA_ARCH)"},
		{"a driver older than the runtime", {-1, NULL, 0, 0, 12080, 13000, NULL, cudaErrorInsufficientDriver, "x"},
			GS_ERR_NO_DEVICE,
		"the NVIDIA driver supports CUDA 12.8, older than the CUDA runtime 13.0 that gpusort was built with"},
		{"no driver", {-1, NULL, 0, 0, 0, 13000, NULL, cudaErrorInsufficientDriver, "x"},
			GS_ERR_NO_DEVICE, "no NVIDIA driver (libcuda) found"},
		{"no device", {-1, NULL, 0, 0, 13000, 13000, NULL, cudaErrorNoDevice, "x"},
			GS_ERR_NO_DEVICE, "no CUDA device"},
		{"PTX newer than the driver", {0, "NVIDIA GB10", 12, 1, 12090, 13000, "12.1", cudaErrorUnsupportedPtxVersion, "x"},
			GS_ERR_NO_DEVICE,
		"the NVIDIA driver (CUDA 12.9) cannot compile the GPU code (PTX) of gpusort, built with CUDA 13.0, for GPU 0 (NVIDIA GB10, compute capability 12.1): update the driver"},
		{"out of memory (may pass)", {0, "NVIDIA L4", 8, 9, 13000, 13000, "8.9", cudaErrorMemoryAllocation, "out of memory"},
			GS_ERR_CUDA, "GPU 0 (NVIDIA L4, compute capability 8.9): out of memory"},
	};
	char		reason[512];

	for (const auto &c : cases)
	{
		gs_status	st = gs_support_verdict(&c.f, reason, sizeof(reason));

		CHECK(st == c.want && strcmp(reason, c.reason) == 0,
			  "support verdict, %s: %s \"%s\", want %s \"%s\"", c.what,
			  gs_status_name(st), reason, gs_status_name(c.want), c.reason);
	}
	/* a short buffer gets the start of the reason, terminated */
	memset(reason, 'x', sizeof(reason));
	(void) gs_support_verdict(&cases[0].f, reason, 12);
	CHECK(strcmp(reason, "GPU 0 (Tesl") == 0, "support verdict, short buffer: \"%.12s\"", reason);
}

static void
test_api(void)
{
	gs_sort_info info;
	void	   *k;
	uint32_t   *v;
	const uint64_t n = 1 << 20;

	/* device info */
	int			count = 0;

	CHECK(gs_device_count(&count) == GS_OK && count > 0, "device count");
	gs_device_info di;

	CHECK(gs_device_get_info(0, &di) == GS_OK && di.multiprocessors > 0 &&
		  di.total_mem > 0 && di.free_mem > 0 && di.cc_major >= 1, "device info");
	printf("device 0: %s, cc %d.%d, %d SMs, %zu MiB total, %zu MiB free\n",
		   di.name, di.cc_major, di.cc_minor, di.multiprocessors,
		   di.total_mem >> 20, di.free_mem >> 20);

	/* argument errors */
	CHECK(gs_sort_pairs(ctx, 64, (void *) 8, (uint32_t *) 8, (void *) 8,
						(uint32_t *) 8, 1ull << 32, GS_ALGO_AUTO, &info) == GS_ERR_TOO_LARGE,
		  "n = 2^32 rejected with GS_ERR_TOO_LARGE");
	CHECK(gs_sort_pairs(ctx, 16, NULL, NULL, NULL, NULL, 0, GS_ALGO_AUTO, &info) == GS_ERR_INVALID,
		  "key_bits 16 rejected");
	CHECK(strlen(gs_last_error(ctx)) > 0, "error message set");
	gs_context *bad = NULL;

	CHECK(gs_context_create(99, 0, &bad) == GS_ERR_INVALID && bad == NULL, "bad device index rejected");

	/* iota and gathers */
	API(gs_device_alloc(ctx, n * 8, &k));
	API(gs_device_alloc(ctx, n * 4, (void **) &v));
	{
		std::vector<uint64_t> src(n), got(n);
		std::vector<uint32_t> idx(n), got32(n);
		uint64_t	s = 42;
		void	   *d_src,
				   *d_out;

		for (size_t i = 0; i < n; i++)
		{
			src[i] = splitmix64(s);
			idx[i] = (uint32_t) (splitmix64(s) % n);
		}
		API(gs_device_alloc(ctx, n * 8, &d_src));
		API(gs_device_alloc(ctx, n * 8, &d_out));
		API(gs_fill_iota(ctx, v, n));
		API(gs_copy_to_host(ctx, got32.data(), v, n * 4));
		API(gs_synchronize(ctx));
		bool		ok = true;

		for (size_t i = 0; i < n; i++)
			ok &= got32[i] == i;
		CHECK(ok, "iota");
		API(gs_copy_to_device(ctx, d_src, src.data(), n * 8));
		API(gs_copy_to_device(ctx, v, idx.data(), n * 4));
		API(gs_gather_u64(ctx, (uint64_t *) d_out, (uint64_t *) d_src, v, n));
		API(gs_copy_to_host(ctx, got.data(), d_out, n * 8));
		API(gs_synchronize(ctx));
		ok = true;
		for (size_t i = 0; i < n; i++)
			ok &= got[i] == src[idx[i]];
		CHECK(ok, "gather u64");
		API(gs_gather_u32(ctx, (uint32_t *) d_out, (uint32_t *) d_src, v, n));
		API(gs_copy_to_host(ctx, got32.data(), d_out, n * 4));
		API(gs_synchronize(ctx));
		ok = true;
		for (size_t i = 0; i < n; i++)
			ok &= got32[i] == ((uint32_t *) src.data())[idx[i]];
		CHECK(ok, "gather u32");

		/* pinned round trip */
		void	   *pin;

		API(gs_host_alloc_pinned(n * 8, &pin));
		API(gs_copy_to_host(ctx, pin, d_src, n * 8));
		API(gs_synchronize(ctx));
		CHECK(memcmp(pin, src.data(), n * 8) == 0, "pinned copy");
		API(gs_host_free_pinned(pin));

		API(gs_device_free(ctx, d_src));
		API(gs_device_free(ctx, d_out));
	}

	/* interrupt: a set flag stops a sort with GS_INTERRUPTED */
	{
		std::vector<uint64_t> keys;

		gen_keys(keys, n, 64, 0, 7);
		API(gs_copy_to_device(ctx, k, keys.data(), n * 8));
		API(gs_fill_iota(ctx, v, n));
		stop_flag = 1;
		gs_context_set_interrupt(ctx, &stop_flag);
		gs_status	st = gs_sort_pairs(ctx, 64, k, v, k, v, n, GS_ALGO_RADIX, &info);

		CHECK(st == GS_INTERRUPTED, "interrupt flag: got %s", gs_status_name(st));
		stop_flag = 0;
		st = gs_sort_pairs(ctx, 64, k, v, k, v, n, GS_ALGO_RADIX, &info);
		CHECK(st == GS_OK, "sort after interrupt cleared");
		gs_context_set_interrupt(ctx, NULL);

		/* the dispatcher's table: uniform 64-bit keys, 2^20 of them */
		const struct
		{
			gs_algorithm forced,
						runs;
		}			picks[] = {{GS_ALGO_AUTO, GS_ALGO_RADIX},
			{GS_ALGO_BITONIC, GS_ALGO_WARPSORT},	/* more than GS_BITONIC_MAX */
			{GS_ALGO_COUNTING, GS_ALGO_RADIX}};	/* range too wide */

		for (auto &p : picks)
		{
			API(gs_copy_to_device(ctx, k, keys.data(), n * 8));
			API(gs_fill_iota(ctx, v, n));
			st = gs_sort_pairs(ctx, 64, k, v, k, v, n, p.forced, &info);
			CHECK(st == GS_OK && info.algorithm == p.runs, "forced %s runs %s, not %s",
				  gs_algorithm_name(p.forced), gs_algorithm_name(p.runs),
				  gs_algorithm_name(info.algorithm));
		}
	}

	/* algorithm names: each finds its algorithm again, others none */
	for (int a = GS_ALGO_AUTO; a < GS_ALGO_COUNT_; a++)
	{
		gs_algorithm found = GS_ALGO_COUNT_;

		CHECK(gs_algorithm_from_name(gs_algorithm_name((gs_algorithm) a), &found) == GS_OK &&
			  found == a, "algorithm name %s", gs_algorithm_name((gs_algorithm) a));
	}
	{
		gs_algorithm found;

		CHECK(gs_algorithm_from_name("quicksort", &found) == GS_ERR_INVALID,
			  "unknown algorithm name rejected");
	}
	API(gs_device_free(ctx, k));
	API(gs_device_free(ctx, v));

	/* a context capped at 1 MiB cannot sort 1M pairs, and says so */
	{
		gs_context *small;
		void	   *kk;
		uint32_t   *vv;

		API(gs_context_create(0, 20u << 20, &small));
		CHECK(gs_device_alloc(small, n * 8, &kk) == GS_OK, "alloc under limit");
		CHECK(gs_device_alloc(small, n * 4, (void **) &vv) == GS_OK, "alloc under limit");
		gs_status	st = gs_sort_pairs(small, 64, kk, vv, kk, vv, n, GS_ALGO_WARPSORT, &info);

		CHECK(st == GS_ERR_NO_MEMORY, "memory limit honoured: got %s", gs_status_name(st));
		CHECK(gs_context_mem_used(small) <= (20u << 20), "memory used under limit");
		printf("limit message: %s\n", gs_last_error(small));
		gs_context_destroy(small);
	}
}

/* PostgreSQL's order of floats: NaN after every number. */
template <typename T>
static bool
pg_less(T a, T b)
{
	if (a != a)
		return false;
	if (b != b)
		return true;
	return a < b;
}

/*
 * gs_sort_values on one type: random values, few distinct values, the
 * extremes and, for floats, the infinities and PostgreSQL's NaN (no -0 and
 * no other NaN: the caller keeps those away), both directions.
 */
template <typename T>
static void
test_values_of(gs_value_type type, const char *name, uint64_t max_n, uint64_t seed)
{
	const uint64_t sizes[] = {0, 1, 2, 33, 4097, 65537, 1000007, 10000000};
	const bool	is_float = (T) 0.5 != 0;
	void	   *dvals = NULL;
	void	   *dkeys = NULL;
	uint32_t   *dscratch = NULL;

	for (uint64_t n : sizes)
	{
		if (n > max_n)
			break;
		API(gs_device_alloc(ctx, n * sizeof(T) + 8, &dvals));
		API(gs_device_alloc(ctx, n * 8 + 8, &dkeys));
		API(gs_device_alloc(ctx, n * 4 + 4, (void **) &dscratch));
		for (int shape = 0; shape < 3; shape++)
			for (int desc = 0; desc <= 1; desc++)
			{
				std::vector<T> in(n), out(n);
				uint64_t	x = seed * 7919 + n * 31 + shape;

				for (uint64_t i = 0; i < n; i++)
				{
					x = x * 6364136223846793005ULL + 1442695040888963407ULL;
					uint64_t	r = x >> 11;

					if (shape == 1)
						r %= 7;		/* few distinct */
					if (is_float)
					{
						double		v = ((double) (r % 2000001) - 1000000.0) / 7.0;

						if (shape == 2 && r % 5 == 0)
							v = (r % 3 == 0) ? INFINITY : (r % 3 == 1) ? -INFINITY : NAN;
						in[i] = (T) v;
					}
					else if (shape == 2 && r % 3 != 2)
						in[i] = (r % 3 == 0) ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
					else
						in[i] = (T) (shape == 1 ? (int64_t) r - 3 : (int64_t) x);
				}
				std::vector<T> ref(in);

				if (desc)
					std::stable_sort(ref.begin(), ref.end(), [](T a, T b) { return pg_less(b, a); });
				else
					std::stable_sort(ref.begin(), ref.end(), [](T a, T b) { return pg_less(a, b); });
				if (n)
					cudaMemcpy(dvals, in.data(), n * sizeof(T), cudaMemcpyHostToDevice);
				poison(dkeys, n * 8);
				gs_status	st = gs_sort_values(ctx, type, desc, dvals, dkeys, dscratch, n, NULL);

				if (n)
					cudaMemcpy(out.data(), dvals, n * sizeof(T), cudaMemcpyDeviceToHost);
				CHECK(st == GS_OK && memcmp(out.data(), ref.data(), n * sizeof(T)) == 0,
					  "gs_sort_values %s n=%llu shape=%d %s: %s", name,
					  (unsigned long long) n, shape, desc ? "desc" : "asc",
					  st == GS_OK ? "values differ from the reference" : gs_last_error(ctx));
			}
		gs_device_free(ctx, dvals);
		gs_device_free(ctx, dkeys);
		gs_device_free(ctx, dscratch);
	}
}

static void
test_values(uint64_t max_n, uint64_t seed)
{
	test_values_of<int16_t>(GS_VALUES_INT16, "int16", max_n, seed);
	test_values_of<int32_t>(GS_VALUES_INT32, "int32", max_n, seed);
	test_values_of<int64_t>(GS_VALUES_INT64, "int64", max_n, seed);
	test_values_of<float>(GS_VALUES_FLOAT32, "float32", max_n, seed);
	test_values_of<double>(GS_VALUES_FLOAT64, "float64", max_n, seed);
}

int
main(int argc, char **argv)
{
	uint64_t	max_n = 100000000,
				seed = 1;
	std::vector<int> dists;
	std::vector<gs_algorithm> algos;
	bool		api = true,
				partition_only = false,
				support_only = false;
	size_t		smem_limit = 0;

	/* the dispatcher and every algorithm of its table, forced */
	for (int a = GS_ALGO_AUTO; a < GS_ALGO_COUNT_; a++)
		algos.push_back((gs_algorithm) a);
	for (int i = 0; i < GEN_COUNT; i++)
		if (i != 9)
			dists.push_back(i);
	for (int i = 1; i < argc; i++)
	{
		if (!strcmp(argv[i], "--max-n") && i + 1 < argc)
			max_n = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--no-api"))
			api = false;
		else if (!strcmp(argv[i], "--partition-only"))
			partition_only = true;
		else if (!strcmp(argv[i], "--support-only"))
			support_only = true;
		else if (!strcmp(argv[i], "--smem-limit") && i + 1 < argc)
			smem_limit = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--dists") && i + 1 < argc)
		{
			dists.clear();
			for (auto &d : split_list(argv[++i]))
				if (gen_lookup(d) >= 0)
					dists.push_back(gen_lookup(d));
		}
		else if (!strcmp(argv[i], "--algos") && i + 1 < argc)
		{
			algos.clear();
			for (auto &name : split_list(argv[++i]))
			{
				gs_algorithm a;

				if (gs_algorithm_from_name(name.c_str(), &a) != GS_OK)
				{
					fprintf(stderr, "%s\n", gs_last_error(NULL));
					return 2;
				}
				algos.push_back(a);
			}
		}
		else
		{
			fprintf(stderr, "usage: %s [--max-n N] [--dists a,b] [--algos a,b] [--seed S] [--no-api] [--partition-only] [--support-only] [--smem-limit BYTES]\n", argv[0]);
			return 2;
		}
	}
	int			count = 0;

	if (api || support_only)
		test_support();
	if (support_only)
	{
		printf("%d passed, %d failed\n", n_pass, n_fail);
		return n_fail ? 1 : 0;
	}
	if (gs_device_count(&count) != GS_OK || count == 0)
	{
		printf("kernel tests skipped: no CUDA device (%s)\n", gs_last_error(NULL));
		printf("%d passed, %d failed\n", n_pass, n_fail);
		return n_fail ? 1 : 0;
	}
	/* the GPU under test runs the kernels, from PTX too (CUDA_FORCE_PTX_JIT) */
	CHECK(gs_device_check(0) == GS_OK, "device 0 runs the kernels: %s", gs_last_error(NULL));
	if (gs_context_create(0, 0, &ctx) != GS_OK)
	{
		printf("FATAL: context: %s\n", gs_last_error(NULL));
		printf("0 passed, 1 failed\n");
		return 1;
	}
	if (smem_limit > 0)
	{
		gs_context_limit_shared_memory(ctx, smem_limit);
		printf("tiles chosen as for %zu bytes of shared memory per block\n", smem_limit);
	}
	if (api && !partition_only)
	{
		test_api();
		test_gather_rows(seed);
		test_group_heads(seed);
		test_segments(seed);
	}
	test_partition(max_n, dists, seed);
	if (!partition_only)
		test_sorts(max_n, dists, algos, seed);
	if (api && !partition_only)
		test_values(max_n, seed);
	gs_context_destroy(ctx);
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
