/*-------------------------------------------------------------------------
 *
 * radix_template.h
 *	  LSD radix sort of an array of one element type, instantiated by
 *	  engine_cpu.c for each element layout it sorts.
 *
 * Before including, define:
 *	RT_NAME		the function to define
 *	RT_ELEMENT	the element type
 *	RT_KEY(e)	the element's key, a uint64 expression
 *
 * The function sorts the key bits [lobit, lobit + nbits) of n elements,
 * stably, 8 bits a pass.  One upfront pass counts every digit; a digit that
 * all keys share needs no pass and is skipped.  Elements move between src
 * and tmp; the function returns the one that holds the result.
 *
 *-------------------------------------------------------------------------
 */

#define RT_DIGIT_BITS	8
#define RT_BUCKETS		(1 << RT_DIGIT_BITS)
#define RT_CHUNK		(1 << 16)	/* elements between interrupt checks */

static RT_ELEMENT *
RT_NAME(RT_ELEMENT *src, RT_ELEMENT *tmp, size_t n, int lobit, int nbits)
{
	int			ndigits = (nbits + RT_DIGIT_BITS - 1) / RT_DIGIT_BITS;
	size_t	   *counts = palloc0(sizeof(size_t) * RT_BUCKETS * ndigits);

	/* One pass counts the occurrences of every digit value. */
	for (size_t start = 0; start < n; start += RT_CHUNK)
	{
		size_t		end = Min(n, start + RT_CHUNK);

		CHECK_FOR_INTERRUPTS();
		for (size_t i = start; i < end; i++)
		{
			uint64		key = RT_KEY(src[i]) >> lobit;

			for (int d = 0; d < ndigits; d++)
				counts[d * RT_BUCKETS + ((key >> (d * RT_DIGIT_BITS)) & (RT_BUCKETS - 1))]++;
		}
	}

	for (int d = 0; d < ndigits; d++)
	{
		size_t	   *count = counts + d * RT_BUCKETS;
		size_t		offset[RT_BUCKETS];
		size_t		sum = 0;
		int			shift = lobit + d * RT_DIGIT_BITS;
		bool		shared = false;
		RT_ELEMENT *swap;

		for (int b = 0; b < RT_BUCKETS; b++)
		{
			if (count[b] == n)
				shared = true;	/* every key has this digit: no pass */
			offset[b] = sum;
			sum += count[b];
		}
		if (shared)
			continue;

		for (size_t start = 0; start < n; start += RT_CHUNK)
		{
			size_t		end = Min(n, start + RT_CHUNK);

			CHECK_FOR_INTERRUPTS();
			for (size_t i = start; i < end; i++)
				tmp[offset[(RT_KEY(src[i]) >> shift) & (RT_BUCKETS - 1)]++] = src[i];
		}
		swap = src;
		src = tmp;
		tmp = swap;
	}

	pfree(counts);
	return src;
}

#undef RT_NAME
#undef RT_ELEMENT
#undef RT_KEY
#undef RT_DIGIT_BITS
#undef RT_BUCKETS
#undef RT_CHUNK
