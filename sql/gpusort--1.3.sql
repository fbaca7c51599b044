/* gpusort--1.3.sql: the SQL objects of the gpusort extension. */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION gpusort" to load this file. \quit

-- The GpuSort plan node needs no SQL objects: it is installed by loading the
-- library (shared_preload_libraries, session_preload_libraries or LOAD).
-- Loaded only by a call of these functions, the library leaves plans alone
-- unless gpusort.enabled is set explicitly.

-- ARRAY FUNCTIONS (src/sql/array_sort.c) --

-- gpusort(arr, descending, nulls_first) returns the one-dimensional array
-- arr sorted, with its type, dimensions and lower bound.  arr is an array
-- of any type with a default btree operator class (a domain's: its base
-- type's), and its elements order as that class orders them, under arr's
-- collation.  descending defaults to false; NULL elements go first when
-- nulls_first, which defaults to descending when NULL or left out (as
-- array_sort).  The sort is stable.  gpusort_permutation(...) returns, as
-- int4[], the 1-based positions (counted from the first element whatever
-- the lower bound) of the elements in sorted order.  Multidimensional
-- arrays are rejected.  Not STRICT, so that nulls_first => NULL asks for
-- the default: a NULL arr or descending gives NULL.

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

-- GPU AND ENGINE INFORMATION (src/sql/gpu_info.c) --

-- gpusort_devices() lists the GPU service's GPUs where it runs (free memory
-- as of its start), else the GPUs this backend sees (free memory as of the
-- call; the first call in a backend starts CUDA there): none (no rows, not
-- an error) without a GPU or a driver.  Memory is in MB.
CREATE FUNCTION gpusort_devices(
    OUT id int4,
    OUT name text,
    OUT total_memory_mb int8,
    OUT free_memory_mb int8,
    OUT multiprocessors int4,
    OUT compute_capability text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpusort_devices'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

-- gpusort_gpu_start() starts the GPU in this backend (gpusort.gpu_id, within
-- gpusort.gpu_memory), as the first GPU sort would, and returns the
-- milliseconds that took: 0 when it ran already, or with a NOTICE where a GPU
-- of the GPU service is ready; NULL with a WARNING when no GPU can be used.
CREATE FUNCTION gpusort_gpu_start()
RETURNS float8
AS 'MODULE_PATHNAME', 'gpusort_gpu_start'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
-- it takes device memory: superusers, and the roles they grant it to
REVOKE EXECUTE ON FUNCTION gpusort_gpu_start() FROM PUBLIC;

-- gpusort_stats() returns one row per sort engine (cpu, gpu) with what it
-- did in this backend: sorts, rows sorted, and milliseconds spent (failed
-- GPU attempts count to the engine that finished the sort).  On the cpu row,
-- fallbacks counts the sorts that the CPU engine ran because the GPU that
-- was chosen failed or the prefix keys could not order the rows (not those
-- that gpusort.device, the cost model or a small input sent there); on the
-- gpu row, the GPU attempts that failed.
-- last_fallback_reason is the latest of those reasons.  gpusort_stats_reset()
-- zeroes the counters.
CREATE FUNCTION gpusort_stats(
    OUT engine text,
    OUT sorts int8,
    OUT rows int8,
    OUT total_ms float8,
    OUT fallbacks int8,
    OUT last_fallback_reason text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpusort_stats'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE FUNCTION gpusort_stats_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'gpusort_stats_reset'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
REVOKE EXECUTE ON FUNCTION gpusort_stats_reset() FROM PUBLIC;

-- COMMENTS (\df+ and \dx+ show them) --

COMMENT ON FUNCTION gpusort(anyarray, boolean, boolean) IS
  'Sorts a one-dimensional array by its type''s default btree order, on the GPU or the CPU engine (stable; NULLs first when descending, unless nulls_first says otherwise)';
COMMENT ON FUNCTION gpusort_permutation(anyarray, boolean, boolean) IS
  'Returns the 1-based positions of an array''s elements in sorted order (stable), as gpusort() would order them';
COMMENT ON FUNCTION gpusort_devices() IS
  'Lists the GPUs this backend sees: id, name, memory in MB, multiprocessors, compute capability (no rows without a GPU)';
COMMENT ON FUNCTION gpusort_gpu_start() IS
  'Starts the GPU in this backend now; returns the milliseconds it took (0 if started already, NULL without a GPU)';
COMMENT ON FUNCTION gpusort_stats() IS
  'What this backend sorted on each engine: sorts, rows, milliseconds, fallbacks and the last fallback reason';
COMMENT ON FUNCTION gpusort_stats_reset() IS
  'Zeroes the counters of gpusort_stats() in this backend';

-- 1.3 shows the GPU service (gpusort.service; src/sql/service_info.c): one
-- row per GPU, and the sorts that went to the CPU engine instead, by reason.
CREATE FUNCTION gpusort_service_status(
    OUT gpu int4,
    OUT device int4,
    OUT name text,
    OUT state text,
    OUT pid int4,
    OUT jobs int8,
    OUT rows int8,
    OUT busy_ms float8,
    OUT failures int8,
    OUT restarts int8,
    OUT queued_jobs int4,
    OUT memory_limit_mb int8,
    OUT memory_used_mb int8,
    OUT reason text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpusort_service_status'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE VIEW gpusort_service AS SELECT * FROM gpusort_service_status();

CREATE FUNCTION gpusort_service_fallbacks(
    OUT reason text,
    OUT sorts int8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpusort_service_fallbacks'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- The service is the server's: superusers and members of pg_read_all_stats
-- (pg_monitor's among them) read it, as they read every session's activity.
REVOKE EXECUTE ON FUNCTION gpusort_service_status() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION gpusort_service_fallbacks() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gpusort_service_status() TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION gpusort_service_fallbacks() TO pg_read_all_stats;
GRANT SELECT ON gpusort_service TO pg_read_all_stats;

COMMENT ON FUNCTION gpusort_service_status() IS
  'The GPU service''s GPUs: state, process, jobs, rows, busy time, failures, restarts, the queue and device memory (no rows without the service)';
COMMENT ON VIEW gpusort_service IS
  'The GPU service''s GPUs, one row each (gpusort_service_status())';
COMMENT ON FUNCTION gpusort_service_fallbacks() IS
  'Sorts of all backends that the GPU service did not run, by reason (no rows without the service)';
