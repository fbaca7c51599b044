/*-------------------------------------------------------------------------
 *
 * xfrm_keys.c
 *	  Prefix keys of text under libc collations other than C, made with
 *	  strxfrm(), and the check that makes their order sound (see
 *	  xfrm_keys.h).
 *
 * ICU collations' keys are made here too, from ICU's sort key as PostgreSQL
 * abbreviates text under ICU (its first 8 bytes, from ucol_nextSortKeyPart())
 * and as many bytes more as the strxfrm() keys have, each thread with its
 * own clone of PostgreSQL's collator; PostgreSQL trusts those keys, and
 * they are not checked.
 *
 * The loops run on helper threads (util/parallel.h): they read the stored
 * tuples, call the C library (or ICU) and malloc, and nothing of
 * PostgreSQL's.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <string.h>

#include "catalog/pg_type_d.h"
#include "common/hashfn.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "utils/memutils.h"

#ifdef USE_ICU
#include <unicode/ucol.h>
#include <unicode/uiter.h>
#endif

#include "keys/collation.h"
#include "keys/xfrm_keys.h"
#include "settings.h"
#include "util/parallel.h"

/* Bytes of a value that strxfrm() sees (and a copied reference holds). */
#define XFRM_INPUT_BYTES	KEY_REF_COPY_BYTES

/* Rows a loop hands out at a time. */
#define XFRM_CHUNK			(16 * 1024)

/*
 * The chunks of a store held on the GPU, of a few thousand rows at 4 MB,
 * are smaller, so that all the threads share it: at least this many rows.
 */
#define XFRM_MIN_CHUNK		1024

/* Suspect pairs each worker keeps. */
#define XFRM_FOUND_PER_PART	256

/*
 * Bytes of ICU sort keys that all values may share and keys be made past
 * (URLs, paths: their shared start gives shared sort key bytes).
 */
#define ICU_SHARED_MAX		64

/* Words of a key made at most: its columns', then any tie words. */
#define MADE_KEY_WORDS		(MAX_KEY_WORDS + COLLATION_TIE_WORDS)

/* (a first pass reads ICU_SHARED_MAX bytes, which hold every key word) */
StaticAssertDecl(8 * MAX_KEY_WORDS <= ICU_SHARED_MAX, "ICU_SHARED_MAX");

/* The text of a reference, as PostgreSQL compares it. */
static inline const char *
ref_text(uint64 ref, bool bpchar, int *len)
{
	return key_value_bytes((struct varlena *) (uintptr_t) (ref & ~KEY_REF_COPIED),
						   bpchar, len);
}

/*
 * key[0 .. nwords - 1]: the n bytes of a sort key from byte from on, 8 a
 * word, big-endian, zeros past the last.
 */
static inline void
bytes_to_words(const uint8 *bytes, size_t n, size_t from, int nwords, uint64 *key)
{
	for (int w = 0; w < nwords; w++)
	{
		key[w] = 0;
		for (size_t i = from + 8 * w; i < from + 8 * w + 8; i++)
			key[w] = (key[w] << 8) | (i < n ? bytes[i] : 0);
	}
}

/* A malloc'd buffer of a thread, grown as needed. */
typedef struct ThreadBuffer
{
	char	   *data;
	size_t		size;
} ThreadBuffer;

static bool
buffer_reserve(ThreadBuffer *buf, size_t size)
{
	if (buf->size >= size)
		return true;
	free(buf->data);
	buf->size = Max(size, 2 * buf->size);
	buf->data = malloc(buf->size);
	if (buf->data == NULL)
		buf->size = 0;
	return buf->data != NULL;
}

/* Copies len bytes of s into buf, NUL-terminated. */
static bool
buffer_cstring(ThreadBuffer *buf, const char *s, int len)
{
	if (!buffer_reserve(buf, len + 1))
		return false;
	memcpy(buf->data, s, len);
	buf->data[len] = '\0';
	return true;
}

/* What a loop of xfrm_make_keys works on. */
typedef struct MakeKeys
{
	KeyColumn  *column;			/* the key's first column, then nwords - 1
								 * more, each a word of it */
	int			nwords;
	uint64	   *const *ties;	/* ntie words more of each key, or NULL */
	int			ntie;
	uint64	   *refs;
	const XfrmCollation *xfrm;
	bool		bpchar;
	uint32		skip;			/* bytes all values start with, whole
								 * characters: keys are made past them */
	int			scramble;		/* gpusort.xfrm_scramble */
	uint64		min[64][MAX_KEY_WORDS]; /* per worker and word */
	uint64		max[64][MAX_KEY_WORDS];
	void	   *collators[64];	/* ICU: a clone of the collator per worker */

	/*
	 * ICU: keys are made from sort key byte icu_skip on.  The first pass
	 * (icu_skip 0) also finds, per worker, the bytes its values' sort keys
	 * share: the first value's first ICU_SHARED_MAX bytes, and how many of
	 * them every value since has (icu_shared, -1 before a value).
	 */
	uint32		icu_skip;
	int			icu_shared[64];
	uint8		icu_lead[64][ICU_SHARED_MAX];
	pg_atomic_uint32 failed;	/* a malloc failed */
} MakeKeys;

/*
 * The key of a value: its strxfrm()'s first 8 bytes per word, big-endian,
 * into key[0 .. mk->nwords + mk->ntie - 1].
 */
static bool
xfrm_key(MakeKeys *mk, uint64 ref, ThreadBuffer *in, ThreadBuffer *out,
		 uint64 *key)
{
	int			len;
	const char *s = ref_text(ref, mk->bpchar, &len);
	size_t		n;

	s += mk->skip;
	len -= mk->skip;
	if (len > XFRM_INPUT_BYTES)
		len = pg_encoding_mbcliplen(mk->xfrm->encoding, s, len, XFRM_INPUT_BYTES);
	if (!buffer_cstring(in, s, len) || !buffer_reserve(out, 4 * len + 64))
		return false;
	n = strxfrm_l(out->data, in->data, out->size, mk->xfrm->locale);
	if (n >= out->size)
	{
		if (!buffer_reserve(out, n + 1))
			return false;
		n = strxfrm_l(out->data, in->data, out->size, mk->xfrm->locale);
	}
	bytes_to_words((const uint8 *) out->data, n, 0, mk->nwords + mk->ntie, key);
	return true;
}

#ifdef USE_ICU
/*
 * The key of a value under ICU: 8 bytes of its sort key per word (the first
 * as PostgreSQL abbreviates it in a UTF-8 database), big-endian, from byte
 * mk->icu_skip on (bytes that every value's sort key has alike), into
 * key[0 .. mk->nwords - 1].  While the values of this worker have shared 8
 * bytes or more so far, the first pass reads ICU_SHARED_MAX bytes to learn
 * how many they share.  Tie words (mk->ntie) follow.
 */
static bool
icu_key(MakeKeys *mk, int part, uint64 ref, uint64 *key)
{
	int			len;
	const char *s = ref_text(ref, mk->bpchar, &len);
	UCharIterator iter;
	uint32_t	state[2] = {0, 0};
	UErrorCode	status = U_ZERO_ERROR;
	uint8_t		bytes[ICU_SHARED_MAX + 8 * MADE_KEY_WORDS];
	int32_t		want = mk->icu_skip + 8 * (mk->nwords + mk->ntie);
	int32_t		n;
	int		   *shared = &mk->icu_shared[part];
	bool		learning = mk->icu_skip == 0 && (*shared < 0 || *shared >= 8);

	if (learning)
		want = Max(want, ICU_SHARED_MAX);
	uiter_setUTF8(&iter, s, len);
	n = ucol_nextSortKeyPart(mk->collators[part], &iter, state, bytes, want,
							 &status);
	if (U_FAILURE(status))
		return false;
	if (learning)
	{
		uint8	   *lead = mk->icu_lead[part];
		int			common = 0;

		if (*shared < 0)
		{
			memcpy(lead, bytes, n);
			*shared = n;
		}
		while (common < *shared && common < n && lead[common] == bytes[common])
			common++;
		*shared = common;
	}
	bytes_to_words(bytes, n, mk->icu_skip, mk->nwords + mk->ntie, key);
	return true;
}

/*
 * The sort key bytes that all values share, from the workers' findings of
 * the first pass (at most ICU_SHARED_MAX).
 */
static uint32
icu_shared_bytes(MakeKeys *mk, int nworkers)
{
	int			shared = ICU_SHARED_MAX;
	int			first = -1;

	for (int i = 0; i < nworkers; i++)
	{
		int			common = 0;

		if (mk->icu_shared[i] < 0)
			continue;			/* the worker saw no value */
		if (first < 0)
			first = i;
		while (common < mk->icu_shared[i] && common < mk->icu_shared[first] &&
			   mk->icu_lead[i][common] == mk->icu_lead[first][common])
			common++;
		shared = Min(shared, common);
	}
	return first < 0 ? 0 : shared;
}

/* Clones of the collator for nworkers threads, or false. */
static bool
icu_clone_collators(MakeKeys *mk, int nworkers)
{
	for (int i = 0; i < nworkers; i++)
	{
		UErrorCode	status = U_ZERO_ERROR;

#if U_ICU_VERSION_MAJOR_NUM >= 71
		mk->collators[i] = ucol_clone(mk->xfrm->icu, &status);
#else
		mk->collators[i] = ucol_safeClone(mk->xfrm->icu, NULL, NULL, &status);
#endif
		if (U_FAILURE(status))
			mk->collators[i] = NULL;
		if (mk->collators[i] == NULL)
			return false;
	}
	return true;
}

static void
icu_close_collators(MakeKeys *mk, int nworkers)
{
	for (int i = 0; i < nworkers; i++)
		if (mk->collators[i])
			ucol_close(mk->collators[i]);
}
#else
static bool
icu_key(MakeKeys *mk, int part, uint64 ref, uint64 *key)
{
	return false;
}

static uint32
icu_shared_bytes(MakeKeys *mk, int nworkers)
{
	return 0;
}

static bool
icu_clone_collators(MakeKeys *mk, int nworkers)
{
	return false;
}

static void
icu_close_collators(MakeKeys *mk, int nworkers)
{
}
#endif

/* The workers' key ranges, before a pass. */
static void
clear_ranges(MakeKeys *mk)
{
	for (int i = 0; i < lengthof(mk->min); i++)
		for (int w = 0; w < MAX_KEY_WORDS; w++)
		{
			mk->min[i][w] = PG_UINT64_MAX;
			mk->max[i][w] = 0;
		}
}

static void
make_keys_body(void *arg, int part, uint64 start, uint64 end)
{
	MakeKeys   *mk = arg;
	KeyColumn  *column = mk->column;
	ThreadBuffer in = {NULL, 0};
	ThreadBuffer out = {NULL, 0};
	uint64		lo[MAX_KEY_WORDS];
	uint64		hi[MAX_KEY_WORDS];

	memcpy(lo, mk->min[part], sizeof(lo));
	memcpy(hi, mk->max[part], sizeof(hi));

	for (uint64 row = start; row < end; row++)
	{
		uint64		key[MADE_KEY_WORDS];
		uint64		ref;

		if (key_column_isnull(column, row))
			continue;
		/* a second pass (ICU) finds the references where the first left them */
		if (mk->icu_skip > 0)
			ref = mk->refs[row];
		else
			ref = mk->refs[row] = column->keys[row];
		if (!(mk->xfrm->icu ? icu_key(mk, part, ref, key) :
			  xfrm_key(mk, ref, &in, &out, key)))
		{
			pg_atomic_write_u32(&mk->failed, 1);
			break;
		}
		if (mk->scramble > 0 && row % mk->scramble == 0)
			key[0] = hash_bytes_uint32_extended((uint32) row, 0);
		for (int w = 0; w < mk->nwords + mk->ntie; w++)
			if (column->part.descending)
				key[w] = ~key[w];
		for (int w = 0; w < mk->nwords; w++)
		{
			column[w].keys[row] = key[w];
			lo[w] = Min(lo[w], key[w]);
			hi[w] = Max(hi[w], key[w]);
		}
		for (int t = 0; t < mk->ntie; t++)
			mk->ties[t][row] = key[mk->nwords + t];
	}
	memcpy(mk->min[part], lo, sizeof(lo));
	memcpy(mk->max[part], hi, sizeof(hi));
	free(in.data);
	free(out.data);
}

void
xfrm_make_keys(KeyColumn *column, uint32 nrows, uint64 *refs, uint64 *const *ties)
{
	MakeKeys   *mk = palloc(sizeof(MakeKeys));
	int			nworkers = Min(parallel_workers(), lengthof(mk->min));
	uint64		chunk = Max(XFRM_MIN_CHUNK, Min(XFRM_CHUNK, nrows / Max(nworkers, 1) + 1));

	mk->column = column;
	mk->nwords = column->codec->words;
	mk->ties = ties;
	mk->ntie = ties ? COLLATION_TIE_WORDS : 0;
	mk->refs = refs;
	mk->xfrm = column->xfrm;
	mk->bpchar = column->codec->type == BPCHAROID;
	mk->scramble = gpusort_xfrm_scramble;

	/*
	 * Where every value starts alike (URLs, paths), strxfrm() of the rest
	 * orders them as the whole does, but for the odd contraction across the
	 * cut that the check then finds.
	 */
	mk->skip = 0;
	if (column->shared >= 4 && column->xfrm->locale && !column->fixed)
		mk->skip = pg_encoding_mbcliplen(column->xfrm->encoding, column->first,
										 column->shared, column->shared);
	column->skipped = mk->skip;
	clear_ranges(mk);
	pg_atomic_init_u32(&mk->failed, 0);
	memset(mk->collators, 0, sizeof(mk->collators));
	mk->icu_skip = 0;
	for (int i = 0; i < lengthof(mk->icu_shared); i++)
		mk->icu_shared[i] = -1;
	if (mk->xfrm->icu && !icu_clone_collators(mk, nworkers))
		pg_atomic_write_u32(&mk->failed, 1);
	else
	{
		parallel_for(nrows, chunk, nworkers, make_keys_body, mk);

		/*
		 * Where the sort keys of all values start with 8 bytes alike or
		 * more (URLs, paths), the keys told nothing: they are made again
		 * past those bytes, which order the values as the whole keys do.
		 */
		if (mk->xfrm->icu && !column->fixed && !pg_atomic_read_u32(&mk->failed) &&
			(mk->icu_skip = icu_shared_bytes(mk, nworkers)) >= 8)
		{
			column->skipped = mk->icu_skip;
			clear_ranges(mk);
			parallel_for(nrows, chunk, nworkers, make_keys_body, mk);
		}
	}
	icu_close_collators(mk, nworkers);
	if (pg_atomic_read_u32(&mk->failed))
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("Making the collation keys of a sort failed.")));
	for (int i = 0; i < nworkers; i++)
		for (int w = 0; w < mk->nwords; w++)
		{
			column[w].min = Min(column[w].min, mk->min[i][w]);
			column[w].max = Max(column[w].max, mk->max[i][w]);
		}
	pfree(mk);
}

/* Rows of the sample of xfrm_first_word_ties. */
#define XFRM_TIES_SAMPLE	2048

static int
uint64_cmp(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a;
	uint64		y = *(const uint64 *) b;

	return x < y ? -1 : x > y;
}

/*
 * Where a sample of the rows, sorted, holds many equal first words, the
 * rows gather in groups larger than about 1 / 16 of the rows over the
 * sample's: groups whose ordering by the comparators costs more than the
 * engine's passes over the other words.
 */
bool
xfrm_first_word_ties(const KeyColumn *column, uint32 nrows)
{
	uint64		sample[XFRM_TIES_SAMPLE];
	uint32		step = Max(nrows / XFRM_TIES_SAMPLE, 1);
	int			n = 0;
	int			equal = 0;

	for (uint32 row = 0; row < nrows && n < XFRM_TIES_SAMPLE; row += step)
		if (!key_column_isnull(column, row))
			sample[n++] = column->keys[row];
	qsort(sample, n, sizeof(uint64), uint64_cmp);
	for (int i = 1; i < n; i++)
		equal += sample[i] == sample[i - 1];
	return equal * 16 > n;
}

/* What a loop of xfrm_suspect_pairs works on. */
typedef struct FindSuspects
{
	const KeyColumn *columns;
	int			column;
	const uint64 *refs;
	const uint32 *perm;
	bool		bpchar;
	locale_t	locale;
	uint32	   *found;			/* XFRM_FOUND_PER_PART per worker */
	uint64		nfound[64];
} FindSuspects;

int
xfrm_varstr_cmp(const char *a, int alen, const char *b, int blen, locale_t locale)
{
	int			cmp;

	if (alen == blen && memcmp(a, b, alen) == 0)
		return 0;
	cmp = strcoll_l(a, b, locale);
	if (cmp == 0)
		cmp = strcmp(a, b);
	return cmp;
}

/*
 * Compares two values by reference as xfrm_varstr_cmp() does; 0 where it
 * cannot tell (no memory for their copies with a NUL).
 */
static int
xfrm_compare(FindSuspects *fs, uint64 a, uint64 b, ThreadBuffer *abuf,
			 ThreadBuffer *bbuf)
{
	int			alen;
	int			blen;
	const char *as = ref_text(a, fs->bpchar, &alen);
	const char *bs = ref_text(b, fs->bpchar, &blen);

	if (!buffer_cstring(abuf, as, alen) || !buffer_cstring(bbuf, bs, blen))
		return 0;
	return xfrm_varstr_cmp(abuf->data, alen, bbuf->data, blen, fs->locale);
}

static void
find_suspects_body(void *arg, int part, uint64 start, uint64 end)
{
	FindSuspects *fs = arg;
	const KeyColumn *column = &fs->columns[fs->column];
	ThreadBuffer abuf = {NULL, 0};
	ThreadBuffer bbuf = {NULL, 0};

	for (uint64 i = Max(start, 1); i < end; i++)
	{
		uint32		a = fs->perm[i - 1];
		uint32		b = fs->perm[i];
		bool		decided = false;
		bool		differ = false;
		int			cmp;

		/* rows the earlier columns order, or that tie in this key's words */
		for (int c = 0; c < fs->column && !decided; c++)
			decided = fs->columns[c].keys[a] != fs->columns[c].keys[b];
		if (decided || key_column_isnull(column, a) || key_column_isnull(column, b))
			continue;
		for (int w = 0; w < column->codec->words && !differ; w++)
			differ = column[w].keys[a] != column[w].keys[b];
		if (!differ)
			continue;
		if (((fs->refs[a] | fs->refs[b]) & KEY_REF_COPIED) == 0)
		{
			cmp = xfrm_compare(fs, fs->refs[a], fs->refs[b], &abuf, &bbuf);
			if (column->part.descending ? cmp > 0 : cmp < 0)
				continue;
		}
		if (fs->nfound[part] < XFRM_FOUND_PER_PART)
			fs->found[part * XFRM_FOUND_PER_PART + fs->nfound[part]] = (uint32) i;
		fs->nfound[part]++;
	}
	free(abuf.data);
	free(bbuf.data);
}

uint64
xfrm_suspect_pairs(const KeyColumn *columns, int column, const uint64 *refs,
				   const uint32 *perm, uint32 n, uint32 *found, uint32 maxfound,
				   uint32 *nfound)
{
	FindSuspects *fs = palloc0(sizeof(FindSuspects));
	int			nworkers = Min(parallel_workers(), lengthof(fs->nfound));
	uint64		total = 0;
	uint32		kept = 0;

	fs->columns = columns;
	fs->column = column;
	fs->refs = refs;
	fs->perm = perm;
	fs->bpchar = columns[column].codec->type == BPCHAROID;
	fs->locale = columns[column].xfrm->locale;
	fs->found = palloc(sizeof(uint32) * XFRM_FOUND_PER_PART * nworkers);

	/* a chunk starts at its first pair: (start - 1, start) */
	parallel_for(n, XFRM_CHUNK, nworkers, find_suspects_body, fs);

	for (int p = 0; p < nworkers; p++)
	{
		total += fs->nfound[p];
		for (uint64 j = 0; j < Min(fs->nfound[p], XFRM_FOUND_PER_PART) && kept < maxfound; j++)
			found[kept++] = fs->found[p * XFRM_FOUND_PER_PART + j];
	}
	pfree(fs->found);
	pfree(fs);
	*nfound = kept;
	return total;
}
