/*-------------------------------------------------------------------------
 *
 * collation.h
 *	  How text under a collation can be keyed: by its bytes (libc's C and
 *	  POSIX, the builtin provider of PostgreSQL 17 on), by strxfrm() (other
 *	  libc collations), by ICU's sort keys (deterministic ICU collations of
 *	  UTF-8 databases), or else through PostgreSQL's abbreviated keys.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_COLLATION_H
#define GPUSORT_COLLATION_H

#include "postgres.h"

#include <locale.h>

/*
 * A collation whose text gpusort keys after collection, on threads: with
 * strxfrm() (libc) or with ICU's sort keys.
 */
typedef struct XfrmCollation
{
	Oid			collation;
	locale_t	locale;			/* libc: the locale strxfrm() uses */
	void	   *icu;			/* ICU: PostgreSQL's own UCollator of it */
	int			encoding;		/* of the database */
	bool		is_c;			/* "C" or "POSIX" of libc: bytes order text */
} XfrmCollation;

/*
 * The strxfrm() collation of a collation, or NULL where PostgreSQL does not
 * compare text with strcoll(): C and POSIX, ICU, the builtin provider.
 */
extern const XfrmCollation *xfrm_collation(Oid collation);

/*
 * The ICU collation of a collation, where its keys can be made on threads
 * as PostgreSQL abbreviates it (a deterministic ICU collation of a UTF-8
 * database, in a build with ICU), else NULL.
 */
extern const XfrmCollation *icu_collation(Oid collation);

/*
 * Does text under the collation order as its bytes (libc's C and POSIX,
 * the builtin provider's collations)?  Its keys are then its first bytes
 * (key_codec.h's bytes codecs).
 */
extern bool key_collation_is_c(Oid collation);

#endif							/* GPUSORT_COLLATION_H */
