/*
 * partition_check.h
 *	  Checks a gs_bucket_partition() result on the host, for the kernel tests
 *	  and the benchmark: the boundaries, the buckets in (key, value) order,
 *	  every pair kept exactly once, and every bucket within the bound that
 *	  gpusort_cuda.h states.
 */
#ifndef GS_TEST_PARTITION_CHECK_H
#define GS_TEST_PARTITION_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

/* The bound of gpusort_cuda.h: every bucket holds fewer than (2n + 24576) / nbuckets pairs */
static inline bool
partition_bound_ok(uint64_t size, uint64_t n, int nbuckets)
{
	return size * (uint64_t) nbuckets < 2 * n + 24576;
}

/*
 * in_k/in_v: the input pairs; out_k/out_v: the partition's output; off: its
 * nbuckets + 1 boundaries.  distinct_values: the input's values are a
 * permutation of 0..n-1 (an O(n) check of the pairs; else both sides are
 * sorted and compared).  *largest gets the largest bucket.
 */
static bool
check_partition(const std::vector<uint64_t> &in_k, const std::vector<uint32_t> &in_v,
				const std::vector<uint64_t> &out_k, const std::vector<uint32_t> &out_v,
				const std::vector<uint64_t> &off, int nbuckets, bool distinct_values,
				std::string &why, uint64_t *largest)
{
	const uint64_t n = in_k.size();
	char		buf[256];

	*largest = 0;
	if (off[0] != 0 || off[nbuckets] != n)
	{
		snprintf(buf, sizeof(buf), "boundaries [%llu, %llu], want [0, %llu]",
				 (unsigned long long) off[0], (unsigned long long) off[nbuckets],
				 (unsigned long long) n);
		why = buf;
		return false;
	}
	/* sizes: boundaries ascending, each bucket within the bound */
	for (int b = 0; b < nbuckets; b++)
	{
		if (off[b + 1] < off[b])
		{
			snprintf(buf, sizeof(buf), "boundary %d (%llu) after boundary %d (%llu)", b,
					 (unsigned long long) off[b], b + 1, (unsigned long long) off[b + 1]);
			why = buf;
			return false;
		}
		*largest = std::max(*largest, off[b + 1] - off[b]);
		if (!partition_bound_ok(off[b + 1] - off[b], n, nbuckets))
		{
			snprintf(buf, sizeof(buf), "bucket %d holds %llu pairs: not below (2n + 24576) / %d = %.1f",
					 b, (unsigned long long) (off[b + 1] - off[b]), nbuckets,
					 (2.0 * n + 24576) / nbuckets);
			why = buf;
			return false;
		}
	}
	/* order: the largest pair of a bucket <= the smallest of every later one */
	std::pair<uint64_t, uint32_t> prev_max(0, 0);
	int			prev_b = -1;

	for (int b = 0; b < nbuckets; b++)
	{
		if (off[b + 1] == off[b])
			continue;
		std::pair<uint64_t, uint32_t> mn(out_k[off[b]], out_v[off[b]]),
					mx = mn;

		for (uint64_t i = off[b]; i < off[b + 1]; i++)
		{
			std::pair<uint64_t, uint32_t> p(out_k[i], out_v[i]);

			mn = std::min(mn, p);
			mx = std::max(mx, p);
		}
		if (prev_b >= 0 && mn < prev_max)
		{
			snprintf(buf, sizeof(buf), "bucket %d holds (%llx, %u), below (%llx, %u) of bucket %d",
					 b, (unsigned long long) mn.first, mn.second,
					 (unsigned long long) prev_max.first, prev_max.second, prev_b);
			why = buf;
			return false;
		}
		prev_max = mx;
		prev_b = b;
	}
	/* every pair kept exactly once */
	if (distinct_values)
	{
		std::vector<uint64_t> where(n, ~(uint64_t) 0);

		for (uint64_t i = 0; i < n; i++)
			where[in_v[i]] = i;
		std::vector<uint8_t> seen(n, 0);

		for (uint64_t i = 0; i < n; i++)
		{
			uint32_t	v = out_v[i];

			if (v >= n || seen[v] || in_k[where[v]] != out_k[i])
			{
				snprintf(buf, sizeof(buf), "at %llu: (%llx, %u) is not an input pair, or twice",
						 (unsigned long long) i, (unsigned long long) out_k[i], v);
				why = buf;
				return false;
			}
			seen[v] = 1;
		}
		return true;
	}
	std::vector<std::pair<uint64_t, uint32_t>> a(n), c(n);

	for (uint64_t i = 0; i < n; i++)
	{
		a[i] = std::make_pair(in_k[i], in_v[i]);
		c[i] = std::make_pair(out_k[i], out_v[i]);
	}
	std::sort(a.begin(), a.end());
	std::sort(c.begin(), c.end());
	for (uint64_t i = 0; i < n; i++)
		if (a[i] != c[i])
		{
			snprintf(buf, sizeof(buf), "pairs differ from the input's: sorted, at %llu (%llx, %u) "
					 "for (%llx, %u)", (unsigned long long) i,
					 (unsigned long long) c[i].first, c[i].second,
					 (unsigned long long) a[i].first, a[i].second);
			why = buf;
			return false;
		}
	return true;
}

#endif
