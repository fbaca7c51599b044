/*-------------------------------------------------------------------------
 *
 * collation.c
 *	  How text under a collation can be keyed (see collation.h): the
 *	  catalogs read once per collation and backend.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <string.h>

#include "access/htup_details.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_database.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "keys/collation.h"

#ifdef USE_ICU
#include "utils/pg_locale.h"

/* PostgreSQL's UCollator of a collation's pg_locale_t. */
#if PG_VERSION_NUM >= 180000
#define LOCALE_UCOLLATOR(locale)	((locale)->icu.ucol)
#else
#define LOCALE_UCOLLATOR(locale)	((locale)->info.icu.ucol)
#endif
#endif

/* The collations met so far in this backend (locale 0: not keyed so). */
static XfrmCollation **known;
static int	nknown;

/* The cache entry of a collation, made on first use. */
static XfrmCollation *
collation_entry(Oid collation)
{
	HeapTuple	tuple;
	char		provider;
	bool		deterministic = true;
	bool		isnull;
	Datum		datum;
	char	   *name = NULL;
	locale_t	locale;
	bool		is_c;
	XfrmCollation *entry;

	for (int i = 0; i < nknown; i++)
		if (known[i]->collation == collation)
			return known[i];

	if (collation == DEFAULT_COLLATION_OID)
	{
		tuple = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(MyDatabaseId));
		if (!HeapTupleIsValid(tuple))
			elog(ERROR, "cache lookup failed for database %u", MyDatabaseId);
		provider = ((Form_pg_database) GETSTRUCT(tuple))->datlocprovider;
		datum = SysCacheGetAttr(DATABASEOID, tuple, Anum_pg_database_datcollate, &isnull);
	}
	else
	{
		tuple = SearchSysCache1(COLLOID, ObjectIdGetDatum(collation));
		if (!HeapTupleIsValid(tuple))
			elog(ERROR, "cache lookup failed for collation %u", collation);
		provider = ((Form_pg_collation) GETSTRUCT(tuple))->collprovider;
		deterministic = ((Form_pg_collation) GETSTRUCT(tuple))->collisdeterministic;
		datum = SysCacheGetAttr(COLLOID, tuple, Anum_pg_collation_collcollate, &isnull);
	}
	if (!isnull)
		name = TextDatumGetCString(datum);
	ReleaseSysCache(tuple);

	/* where PostgreSQL compares with strcoll(): libc, other than C */
	locale = (locale_t) 0;
	is_c = provider == COLLPROVIDER_LIBC && name != NULL &&
		(strcmp(name, "C") == 0 || strcmp(name, "POSIX") == 0);
#ifdef COLLPROVIDER_BUILTIN
	/* the builtin provider (17 on) orders by code point: by the bytes */
	if (provider == COLLPROVIDER_BUILTIN)
		is_c = true;
#endif
	if (provider == COLLPROVIDER_LIBC && deterministic && name != NULL && !is_c)
		locale = newlocale(LC_COLLATE_MASK, name, (locale_t) 0);

	entry = MemoryContextAlloc(TopMemoryContext, sizeof(XfrmCollation));
	entry->collation = collation;
	entry->locale = locale;
	entry->icu = NULL;
#ifdef USE_ICU
	if (provider == COLLPROVIDER_ICU && deterministic &&
		GetDatabaseEncoding() == PG_UTF8)
	{
		pg_locale_t pglocale = pg_newlocale_from_collation(collation);

		if (pglocale)
			entry->icu = LOCALE_UCOLLATOR(pglocale);
	}
#endif
	entry->is_c = is_c;
	entry->encoding = GetDatabaseEncoding();
	known = known ?
		repalloc(known, sizeof(XfrmCollation *) * (nknown + 1)) :
		MemoryContextAlloc(TopMemoryContext, sizeof(XfrmCollation *));
	known[nknown++] = entry;
	return entry;
}

const XfrmCollation *
xfrm_collation(Oid collation)
{
	XfrmCollation *entry = collation_entry(collation);

	return entry->locale ? entry : NULL;
}

const XfrmCollation *
icu_collation(Oid collation)
{
	XfrmCollation *entry;

	if (!OidIsValid(collation))
		return NULL;
	entry = collation_entry(collation);
	return entry->icu ? entry : NULL;
}

bool
key_collation_is_c(Oid collation)
{
	return OidIsValid(collation) && collation_entry(collation)->is_c;
}
