/* gpusort--1.0.sql: the SQL objects of the gpusort extension. */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION gpusort" to load this file. \quit

-- The GpuSort plan node needs no SQL objects: it is installed by loading the
-- library (shared_preload_libraries, session_preload_libraries or LOAD).

-- ARRAY FUNCTIONS (src/array_sort.c) --

-- gpusort(arr [, descending [, nulls_first]]) returns the one-dimensional
-- array arr sorted, with its type, dimensions and lower bound; NULL elements
-- go first when nulls_first, which defaults to descending (as array_sort).
-- The sort is stable.  gpusort_permutation(...) returns, as int4[], the
-- 1-based positions (counted from the first element whatever the lower
-- bound) of the elements in sorted order.  Multidimensional arrays are
-- rejected.  Each overload is STRICT: a NULL argument gives NULL.

CREATE FUNCTION gpusort(arr int2[])
RETURNS int2[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr int2[], descending boolean)
RETURNS int2[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr int2[], descending boolean, nulls_first boolean)
RETURNS int2[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr int4[])
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr int4[], descending boolean)
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr int4[], descending boolean, nulls_first boolean)
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr int8[])
RETURNS int8[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr int8[], descending boolean)
RETURNS int8[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr int8[], descending boolean, nulls_first boolean)
RETURNS int8[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr float4[])
RETURNS float4[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr float4[], descending boolean)
RETURNS float4[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr float4[], descending boolean, nulls_first boolean)
RETURNS float4[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr float8[])
RETURNS float8[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr float8[], descending boolean)
RETURNS float8[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr float8[], descending boolean, nulls_first boolean)
RETURNS float8[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr date[])
RETURNS date[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr date[], descending boolean)
RETURNS date[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr date[], descending boolean, nulls_first boolean)
RETURNS date[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr timestamp[])
RETURNS timestamp[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr timestamp[], descending boolean)
RETURNS timestamp[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr timestamp[], descending boolean, nulls_first boolean)
RETURNS timestamp[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr timestamptz[])
RETURNS timestamptz[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr timestamptz[], descending boolean)
RETURNS timestamptz[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort(arr timestamptz[], descending boolean, nulls_first boolean)
RETURNS timestamptz[]
AS 'MODULE_PATHNAME', 'gpusort_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr int2[])
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr int2[], descending boolean)
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr int2[], descending boolean, nulls_first boolean)
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr int4[])
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr int4[], descending boolean)
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr int4[], descending boolean, nulls_first boolean)
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr int8[])
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr int8[], descending boolean)
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr int8[], descending boolean, nulls_first boolean)
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr float4[])
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr float4[], descending boolean)
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr float4[], descending boolean, nulls_first boolean)
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr float8[])
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr float8[], descending boolean)
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr float8[], descending boolean, nulls_first boolean)
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr date[])
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr date[], descending boolean)
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr date[], descending boolean, nulls_first boolean)
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr timestamp[])
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr timestamp[], descending boolean)
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr timestamp[], descending boolean, nulls_first boolean)
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr timestamptz[])
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr timestamptz[], descending boolean)
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpusort_permutation(arr timestamptz[], descending boolean, nulls_first boolean)
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpusort_array_permutation'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
