/* gpusort--1.0--1.1.sql: from 1.0 to 1.1. */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION gpusort UPDATE TO '1.1'" to load this file. \quit

-- The array functions: one anyarray function each, for every type with a
-- default btree operator class, instead of the overloads for eight types.

DROP FUNCTION gpusort(int2[]);
DROP FUNCTION gpusort(int2[], boolean);
DROP FUNCTION gpusort(int2[], boolean, boolean);
DROP FUNCTION gpusort(int4[]);
DROP FUNCTION gpusort(int4[], boolean);
DROP FUNCTION gpusort(int4[], boolean, boolean);
DROP FUNCTION gpusort(int8[]);
DROP FUNCTION gpusort(int8[], boolean);
DROP FUNCTION gpusort(int8[], boolean, boolean);
DROP FUNCTION gpusort(float4[]);
DROP FUNCTION gpusort(float4[], boolean);
DROP FUNCTION gpusort(float4[], boolean, boolean);
DROP FUNCTION gpusort(float8[]);
DROP FUNCTION gpusort(float8[], boolean);
DROP FUNCTION gpusort(float8[], boolean, boolean);
DROP FUNCTION gpusort(date[]);
DROP FUNCTION gpusort(date[], boolean);
DROP FUNCTION gpusort(date[], boolean, boolean);
DROP FUNCTION gpusort(timestamp[]);
DROP FUNCTION gpusort(timestamp[], boolean);
DROP FUNCTION gpusort(timestamp[], boolean, boolean);
DROP FUNCTION gpusort(timestamptz[]);
DROP FUNCTION gpusort(timestamptz[], boolean);
DROP FUNCTION gpusort(timestamptz[], boolean, boolean);

DROP FUNCTION gpusort_permutation(int2[]);
DROP FUNCTION gpusort_permutation(int2[], boolean);
DROP FUNCTION gpusort_permutation(int2[], boolean, boolean);
DROP FUNCTION gpusort_permutation(int4[]);
DROP FUNCTION gpusort_permutation(int4[], boolean);
DROP FUNCTION gpusort_permutation(int4[], boolean, boolean);
DROP FUNCTION gpusort_permutation(int8[]);
DROP FUNCTION gpusort_permutation(int8[], boolean);
DROP FUNCTION gpusort_permutation(int8[], boolean, boolean);
DROP FUNCTION gpusort_permutation(float4[]);
DROP FUNCTION gpusort_permutation(float4[], boolean);
DROP FUNCTION gpusort_permutation(float4[], boolean, boolean);
DROP FUNCTION gpusort_permutation(float8[]);
DROP FUNCTION gpusort_permutation(float8[], boolean);
DROP FUNCTION gpusort_permutation(float8[], boolean, boolean);
DROP FUNCTION gpusort_permutation(date[]);
DROP FUNCTION gpusort_permutation(date[], boolean);
DROP FUNCTION gpusort_permutation(date[], boolean, boolean);
DROP FUNCTION gpusort_permutation(timestamp[]);
DROP FUNCTION gpusort_permutation(timestamp[], boolean);
DROP FUNCTION gpusort_permutation(timestamp[], boolean, boolean);
DROP FUNCTION gpusort_permutation(timestamptz[]);
DROP FUNCTION gpusort_permutation(timestamptz[], boolean);
DROP FUNCTION gpusort_permutation(timestamptz[], boolean, boolean);

CREATE FUNCTION gpusort(arr anyarray, descending boolean DEFAULT false,
                        nulls_first boolean DEFAULT NULL)
RETURNS anyarray
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr anyarray, descending boolean DEFAULT false,
                                    nulls_first boolean DEFAULT NULL)
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- Functions that act beyond the caller's own sorts: superusers, and the
-- roles they grant them to.
REVOKE EXECUTE ON FUNCTION gpusort_gpu_start() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION gpusort_stats_reset() FROM PUBLIC;
