/*-------------------------------------------------------------------------
 *
 * text_ties.c
 *	  Rows tied on text under a libc collation, ordered by strcoll() on
 *	  threads (text_ties.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <string.h>

#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "port/atomics.h"

#include "keys/xfrm_keys.h"
#include "node/rows/text_ties.h"
#include "util/minimal_tuple.h"
#include "util/parallel.h"

/* Groups that a thread takes at a time. */
#define GROUP_CHUNK		64

/* A row's value: NUL-terminated bytes, or NULL for SQL's NULL. */
typedef struct TextValue
{
	const char *s;
	int			len;
	uint32		row;
} TextValue;

/* What the threads work on. */
typedef struct TextLoop
{
	const TextTies *text;
	locale_t	locale;
	TextValue  *values;
	const uint32 *starts;
	const bool *check;
	pg_atomic_uint32 first_bad;	/* the first pair out of order, or 0 */
} TextLoop;

bool
text_ties_init(TextTies *text, const TieOrder *ties, const KeyColumn *columns,
			   int nwords, int tie_key)
{
	const KeyColumn *column = NULL;

	if (tie_key != ties->nkeys - 1)
		return false;
	for (int w = 0; w < nwords; w++)
		if (columns[w].keyno == tie_key && columns[w].word == 0)
			column = &columns[w];
	if (column == NULL || column->xfrm == NULL || column->xfrm->icu != NULL ||
		column->xfrm->locale == (locale_t) 0)
		return false;
	text->column = column;
	text->desc = ties->desc;
	text->bpchar = column->codec->type == BPCHAROID;
	text->descending = ties->ssups[tie_key].ssup_reverse;
	text->nulls_first = ties->nullsfirst[tie_key];
	return true;
}

/* As ApplySortComparator with varstr_cmp would compare a and b. */
static int
text_cmp(const TextValue *a, const TextValue *b, TextLoop *loop)
{
	int			cmp;

	if (a->s == NULL || b->s == NULL)
	{
		if (a->s == NULL && b->s == NULL)
			return 0;
		return (a->s == NULL) == loop->text->nulls_first ? -1 : 1;
	}
	cmp = xfrm_varstr_cmp(a->s, a->len, b->s, b->len, loop->locale);
	return loop->text->descending ? -cmp : cmp;
}

#define ST_SORT sort_text_values
#define ST_ELEMENT_TYPE TextValue
#define ST_COMPARE_ARG_TYPE TextLoop
#define ST_COMPARE(a, b, arg) text_cmp(a, b, arg)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/* Sorts groups start..end-1, and checks the pair before each. */
static void
order_groups_body(void *arg, int part, uint64 start, uint64 end)
{
	TextLoop   *loop = arg;

	for (uint64 g = start; g < end; g++)
	{
		uint32		from = loop->starts[g];
		uint32		n = loop->starts[g + 1] - from;

		if (n > 1)
			sort_text_values(loop->values + from, n, loop);
	}
}

static void
check_pairs_body(void *arg, int part, uint64 start, uint64 end)
{
	TextLoop   *loop = arg;

	for (uint64 g = Max(start, 1); g < end; g++)
	{
		uint32		i = loop->starts[g];
		uint32		bad;

		if (!loop->check[g] ||
			text_cmp(&loop->values[i - 1], &loop->values[i], loop) <= 0)
			continue;
		bad = pg_atomic_read_u32(&loop->first_bad);
		while ((bad == 0 || i < bad) &&
			   !pg_atomic_compare_exchange_u32(&loop->first_bad, &bad, i))
			;
	}
}

uint32
text_ties_order(const TextTies *text, MinimalTuple *rows, uint32 n,
				const uint32 *starts, const bool *check, uint32 ngroups,
				MemoryContext cxt)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(cxt);
	TextLoop	loop;
	MinimalTuple *copy;
	int			nworkers = parallel_workers();

	loop.text = text;
	loop.locale = text->column->xfrm->locale;
	loop.starts = starts;
	loop.check = check;
	pg_atomic_init_u32(&loop.first_bad, 0);
	loop.values = palloc(sizeof(TextValue) * Max(n, 1));

	/* the values, found on the backend (the tuple descriptor caches) */
	for (uint32 i = 0; i < n; i++)
	{
		bool		isnull;
		Datum		value = minimal_tuple_getattr(rows[i], text->column->attno,
												  text->desc, &isnull);
		char	   *s = NULL;
		int			len = 0;

		if (!isnull)
		{
			const char *bytes = key_value_bytes((struct varlena *) PG_DETOAST_DATUM_PACKED(value),
												text->bpchar, &len);

			s = palloc(len + 1);
			memcpy(s, bytes, len);
			s[len] = '\0';
		}
		loop.values[i].s = s;
		loop.values[i].len = len;
		loop.values[i].row = i;
	}
	MemoryContextSwitchTo(oldcxt);

	parallel_for(ngroups, GROUP_CHUNK, nworkers, order_groups_body, &loop);
	parallel_for(ngroups, GROUP_CHUNK, nworkers, check_pairs_body, &loop);

	copy = MemoryContextAlloc(cxt, sizeof(MinimalTuple) * Max(n, 1));
	memcpy(copy, rows, sizeof(MinimalTuple) * n);
	for (uint32 i = 0; i < n; i++)
		rows[i] = copy[loop.values[i].row];
	return pg_atomic_read_u32(&loop.first_bad);
}
