-- gpu_info: the functions that show the GPU and what the sort engines did,
-- the GPU settings, and the fallbacks to the CPU engine.  Only shapes are
-- checked, so that the suite passes on hosts with and without a GPU.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
RESET client_min_messages;
SET gpusort.min_rows = 0;
SET work_mem = '64MB';
\set VERBOSITY terse

-- The functions and their results.
SELECT proname, pg_get_function_arguments(oid) AS arguments,
       pg_get_function_result(oid) AS result, provolatile, proparallel
FROM pg_proc
WHERE proname IN ('gpusort_devices', 'gpusort_gpu_start', 'gpusort_stats',
                  'gpusort_stats_reset')
ORDER BY proname;

-- The GPU settings and their defaults.
SELECT name, boot_val, unit, context, vartype FROM pg_settings
WHERE name LIKE 'gpusort.gpu%' ORDER BY name;
SET gpusort.gpu_id = -1;

-- gpusort_devices(): one row per GPU, none without one, never an error.
SELECT count(*) >= 0 AS listed FROM gpusort_devices();
SELECT coalesce(bool_and(id >= 0 AND name <> '' AND total_memory_mb > 0 AND
                         free_memory_mb BETWEEN 0 AND total_memory_mb AND
                         multiprocessors > 0 AND
                         compute_capability ~ '^[0-9]+\.[0-9]+$'), true) AS sane
FROM gpusort_devices();

CREATE TABLE gi_t AS
  SELECT g AS id, (g * 7919) % 1000 AS k FROM generate_series(1, 5000) g;
ANALYZE gi_t;

-- Is the query's result ordered as PostgreSQL's Sort orders it?
CREATE FUNCTION gi_sorted(query text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  got text;
  want text;
  enabled text := current_setting('gpusort.enabled');
BEGIN
  EXECUTE 'SELECT string_agg(id::text, '','') FROM (' || query || ') s' INTO got;
  PERFORM set_config('gpusort.enabled', 'off', true);
  EXECUTE 'SELECT string_agg(id::text, '','') FROM (' || query || ') s' INTO want;
  PERFORM set_config('gpusort.enabled', enabled, true);
  RETURN got = want;
END
$$;

-- The statistics, as a check of where the last sorts ran (a row per
-- engine, cpu first; not ORDER BY, which would be a sort of its own).
CREATE VIEW gi_stats AS
  SELECT engine, sorts, rows, fallbacks, last_fallback_reason IS NOT NULL AS has_reason
  FROM gpusort_stats();

-- gpusort_stats(): a row per engine; a reset zeroes them.
SELECT gpusort_stats_reset();
SELECT * FROM gi_stats;
SELECT count(*) AS rows, bool_and(total_ms = 0) AS no_time FROM gpusort_stats();

-- gpusort.device = cpu: the CPU engine, without a fallback.
SET gpusort.device = cpu;
SELECT gi_sorted('SELECT id FROM gi_t ORDER BY k, id OFFSET 0');
SELECT * FROM gi_stats;
SELECT bool_and(total_ms >= 0) AS timed FROM gpusort_stats();

-- gpusort.device = gpu: the GPU sorts, or the CPU after a WARNING (none
-- here: the messages differ between hosts with and without a GPU).
SELECT gpusort_stats_reset();
SET gpusort.device = gpu;
SET client_min_messages = error;
SELECT gi_sorted('SELECT id FROM gi_t ORDER BY k, id OFFSET 0');
SELECT gi_sorted('SELECT id FROM gi_t ORDER BY k DESC, id DESC OFFSET 0');
SELECT gi_sorted('SELECT id FROM gi_t ORDER BY id OFFSET 0');
SELECT sum(sorts) AS sorts, sum(rows) AS rows FROM gpusort_stats();
SELECT (g.sorts = 3 AND c.sorts = 0) OR
       (c.sorts = 3 AND c.fallbacks = 3 AND c.has_reason AND g.fallbacks = 3)
       AS gpu_or_fallback
FROM gi_stats c, gi_stats g WHERE c.engine = 'cpu' AND g.engine = 'gpu';
RESET client_min_messages;

-- What the GPU cannot do goes to the CPU engine, with one WARNING.
SELECT gpusort_stats_reset();
SET gpusort.gpu_memory = 1;
SELECT gi_sorted('SELECT id FROM gi_t ORDER BY k, id OFFSET 0');
RESET gpusort.gpu_memory;
SET gpusort.gpu_id = 1023;
SELECT gi_sorted('SELECT id FROM gi_t ORDER BY k, id OFFSET 0');
RESET gpusort.gpu_id;
SELECT * FROM gi_stats;

-- EXPLAIN ANALYZE shows the engine and why the GPU was not used.
CREATE FUNCTION gi_explain(query text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query
  LOOP
    CONTINUE WHEN line !~ 'Sort Engine|Engine Choice|Fallback Reason';
    line := regexp_replace(line, 'Sort Engine: (cpu|gpu)$', 'Sort Engine: <engine>');
    line := regexp_replace(line, 'Fallback Reason: .*', 'Fallback Reason: <reason>');
    RETURN NEXT line;
  END LOOP;
END
$$;
SET gpusort.gpu_memory = 1;
SELECT gi_explain('SELECT id FROM gi_t ORDER BY k');
RESET gpusort.gpu_memory;

-- gpusort.device = auto: small sorts, and small arrays, stay on the CPU.
-- (A host without a GPU says so once per session: the no_gpu suite.)
SELECT gpusort_stats_reset();
SET gpusort.device = auto;
SET client_min_messages = warning;
SELECT gi_sorted('SELECT id FROM gi_t ORDER BY k, id OFFSET 0');
RESET client_min_messages;
SELECT array_length(gpusort(array_agg(k)), 1) FROM gi_t;
SELECT * FROM gi_stats;

-- gpusort_gpu_start(): the milliseconds the start took (0 once started), or
-- NULL with a WARNING without a GPU.
SET client_min_messages = error;
SELECT coalesce(gpusort_gpu_start() >= 0, true) AS started_or_null;
SELECT coalesce(gpusort_gpu_start() = 0, true) AS second_start_free;
RESET client_min_messages;

DROP FUNCTION gi_explain(text);
DROP VIEW gi_stats;
DROP FUNCTION gi_sorted(text);
DROP TABLE gi_t;

-- Who may do what: settings that spend the server's GPU, threads or memory
-- are for superusers, as are the functions that act beyond one's own sorts;
-- a device-memory setting that would round to 0 MB is refused.
SET gpusort.gpu_memory = '1kB';
SET gpusort.gpu_memory = 0;
CREATE ROLE gi_user;
SET ROLE gi_user;
SET gpusort.gpu_memory = '64MB';
SET gpusort.gpu_id = 0;
SET gpusort.prefault_threads = 64;
SET gpusort.key_threads = 1;
SET gpusort.huge_pages = on;
SELECT gpusort_stats_reset();
SELECT gpusort_gpu_start();
SET gpusort.device = cpu;
SET gpusort.work_mem = '1MB';
SELECT count(*) FROM gpusort_stats();
RESET ROLE;
DROP ROLE gi_user;
