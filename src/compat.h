/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  What differs between the PostgreSQL versions gpusort supports (15, 17
 *	  and 18), in one place.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_COMPAT_H
#define GPUSORT_COMPAT_H

#include "postgres.h"

#include "access/stratnum.h"
#include "commands/explain.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/tuplesort.h"

#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif

/* PostgreSQL 18 names the module in its magic block. */
#ifdef PG_MODULE_MAGIC_EXT
#define GPUSORT_MODULE_MAGIC PG_MODULE_MAGIC_EXT(.name = "gpusort", .version = "1.3")
#else
#define GPUSORT_MODULE_MAGIC PG_MODULE_MAGIC
#endif

/*
 * The btree family and input type of an ordering operator, and whether it
 * sorts descending (PostgreSQL 18 reports a CompareType, not a strategy).
 */
static inline bool
compat_ordering_op_properties(Oid sortop, Oid *opfamily, Oid *opcintype,
							  bool *descending)
{
#if PG_VERSION_NUM >= 180000
	CompareType cmptype;

	if (!get_ordering_op_properties(sortop, opfamily, opcintype, &cmptype))
		return false;
	*descending = (cmptype == COMPARE_GT);
#else
	int16		strategy;

	if (!get_ordering_op_properties(sortop, opfamily, opcintype, &strategy))
		return false;
	*descending = (strategy == BTGreaterStrategyNumber);
#endif
	return true;
}

/*
 * Whether EXPLAIN qualifies column names with their relation, as Sort's
 * keys are shown (PostgreSQL 18 does not count the RTE of a GROUP BY).
 */
static inline bool
compat_explain_useprefix(ExplainState *es)
{
#if PG_VERSION_NUM >= 180000
	return es->rtable_size > 1 || es->verbose;
#else
	return list_length(es->rtable) > 1 || es->verbose;
#endif
}

/*
 * Memory for a setting's "extra", which the GUC machinery frees: its own
 * allocator from PostgreSQL 16 on, malloc before.
 */
static inline void *
compat_guc_malloc(size_t size)
{
#if PG_VERSION_NUM >= 160000
	return guc_malloc(LOG, size);
#else
	return malloc(size);
#endif
}

/*
 * Does Sort sort rows of desc as Datums (nodeSort.c)?  Rows of one column;
 * before PostgreSQL 16, of a type passed by value.
 */
static inline bool
compat_sort_datums(TupleDesc desc)
{
#if PG_VERSION_NUM >= 160000
	return desc->natts == 1;
#else
	return desc->natts == 1 && TupleDescAttr(desc, 0)->attbyval;
#endif
}

/*
 * The next Datum of a Datum sort, not copied: valid until the next call
 * (PostgreSQL 16 added the choice).
 */
static inline bool
compat_tuplesort_getdatum(Tuplesortstate *state, bool forward, Datum *val,
						  bool *isnull)
{
#if PG_VERSION_NUM >= 160000
	return tuplesort_getdatum(state, forward, false, val, isnull, NULL);
#else
	return tuplesort_getdatum(state, forward, val, isnull, NULL);
#endif
}

/*
 * The wait event of a backend whose sort waits for the GPU service: a
 * named one from PostgreSQL 17 on, "Extension" before.
 */
#if PG_VERSION_NUM >= 170000
#include "utils/wait_event.h"

static inline uint32
compat_service_wait_event(void)
{
	static uint32 event = 0;

	if (event == 0)
		event = WaitEventExtensionNew("GpuSortService");
	return event;
}
#else
#include "pgstat.h"

static inline uint32
compat_service_wait_event(void)
{
	return PG_WAIT_EXTENSION;
}
#endif

/* May the role execute the function (PostgreSQL 16 made the check generic)? */
#include "utils/acl.h"
#if PG_VERSION_NUM >= 160000
#include "catalog/pg_proc.h"
#define compat_proc_aclcheck(proc, role) \
	object_aclcheck(ProcedureRelationId, (proc), (role), ACL_EXECUTE)
#else
#define compat_proc_aclcheck(proc, role) pg_proc_aclcheck((proc), (role), ACL_EXECUTE)
#endif

#endif							/* GPUSORT_COMPAT_H */
