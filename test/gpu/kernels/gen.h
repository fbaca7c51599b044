/*
 * gen.h
 *	  Key generators shared by the kernel tests and the benchmark.
 */
#ifndef GS_TEST_GEN_H
#define GS_TEST_GEN_H

#include <stdint.h>
#include <string.h>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

static inline uint64_t
splitmix64(uint64_t &s)
{
	uint64_t	z = (s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static const char *const gen_names[] = {
	"uniform", "sorted", "reverse", "equal", "few", "zipf", "narrow",
	"tiny", "extreme", "bits24", "gap24", "skew90", "two"
};
enum { GEN_COUNT = 13 };

static inline int
gen_lookup(const std::string &name)
{
	for (int i = 0; i < GEN_COUNT; i++)
		if (name == gen_names[i])
			return i;
	return -1;
}

/*
 * Fills keys (n words of key_bits) with distribution g:
 * uniform  random over the full width
 * sorted   uniform, ascending;  reverse: descending
 * equal    one value;  few: 7 distinct values
 * zipf     Zipf(1.1) ranks over 100000 values, hashed over the width
 * narrow   base + [0, 2^20);  tiny: base + [0, 1000) (counting-sort range)
 * extreme  0, 1, max-1 and max
 * bits24   base + [0, 2^24): 24 significant bits
 * gap24    base + a * 2^16 + b, a and b in [0, 256), the first key base:
 *          24 significant bits, of which bits 8-15 are the same in every
 *          key (a radix digit pass that is skipped)
 * skew90   90 % of the keys one value, the others uniform
 * two      two values, half each
 */
static inline void
gen_keys(std::vector<uint64_t> &keys, size_t n, int key_bits, int g,
		 uint64_t seed)
{
	const uint64_t mask = key_bits == 64 ? ~0ull : 0xFFFFFFFFull;
	uint64_t	s = seed * 7919 + g * 104729 + n;
	uint64_t	base = (splitmix64(s) & mask) >> 1;

	keys.resize(n);
	switch (g)
	{
		case 0:
		case 1:
		case 2:
			for (size_t i = 0; i < n; i++)
				keys[i] = splitmix64(s) & mask;
			if (g == 1)
				std::sort(keys.begin(), keys.end());
			if (g == 2)
				std::sort(keys.begin(), keys.end(), std::greater<uint64_t>());
			break;
		case 3:
			for (size_t i = 0; i < n; i++)
				keys[i] = base;
			break;
		case 4:
			{
				uint64_t	v[7];

				for (int i = 0; i < 7; i++)
					v[i] = splitmix64(s) & mask;
				for (size_t i = 0; i < n; i++)
					keys[i] = v[splitmix64(s) % 7];
				break;
			}
		case 5:
			{
				const int	R = 100000;
				std::vector<double> cdf(R);
				double		acc = 0;

				for (int r = 0; r < R; r++)
					cdf[r] = (acc += 1.0 / std::pow(r + 1.0, 1.1));
				for (size_t i = 0; i < n; i++)
				{
					double		u = (splitmix64(s) >> 11) * (1.0 / 9007199254740992.0) * acc;
					uint64_t	r = std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
					uint64_t	h = r * 0x9E3779B97F4A7C15ull;

					keys[i] = (h ^ (h >> 29)) & mask;
				}
				break;
			}
		case 6:
		case 7:
		case 9:
			{
				uint64_t	span = g == 6 ? (1ull << 20) : g == 7 ? 1000 : (1ull << 24);

				base = (base & mask) - ((base & mask) % 3) ;	/* keep < max - span */
				if (base > mask - span)
					base = mask - span;
				for (size_t i = 0; i < n; i++)
					keys[i] = base + splitmix64(s) % span;
				break;
			}
		case 10:
			base = (base & mask) > mask - (1ull << 24) ? mask - (1ull << 24) : (base & mask);
			for (size_t i = 0; i < n; i++)
			{
				uint64_t	r = splitmix64(s);

				keys[i] = i == 0 ? base : base + ((r & 255) << 16) + ((r >> 8) & 255);
			}
			break;
		case 11:
			for (size_t i = 0; i < n; i++)
			{
				uint64_t	r = splitmix64(s);

				keys[i] = r % 10 != 0 ? base : splitmix64(s) & mask;
			}
			break;
		case 12:
			{
				uint64_t	other = splitmix64(s) & mask;

				for (size_t i = 0; i < n; i++)
					keys[i] = (splitmix64(s) & 1) ? base : other;
				break;
			}
		case 8:
			for (size_t i = 0; i < n; i++)
			{
				uint64_t	r = splitmix64(s) & 3;

				keys[i] = r == 0 ? 0 : r == 1 ? 1 : r == 2 ? mask - 1 : mask;
			}
			break;
	}
}

#endif
