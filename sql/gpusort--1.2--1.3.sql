/* gpusort--1.2--1.3.sql: from 1.2 to 1.3. */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION gpusort UPDATE TO '1.3'" to load this file. \quit

-- 1.3 shows the GPU service (gpusort.service): one row per GPU, and the
-- sorts that went to the CPU engine instead, by reason.
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
