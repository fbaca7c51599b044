-- service: the GPU service (gpusort.service, on by default where gpusort is
-- preloaded).  Its processes hold the GPUs, backends hand them their sorts,
-- and no backend loads CUDA.  Only what holds with and without a GPU is
-- checked: on a host without one, the service reports "no device".
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
RESET client_min_messages;
SET gpusort.min_rows = 0;
SET work_mem = '64MB';
SET max_parallel_workers_per_gather = 0;
\set VERBOSITY terse

-- The objects and the settings.
SELECT proname, pg_get_function_result(oid) AS result, provolatile, proparallel
FROM pg_proc WHERE proname LIKE 'gpusort_service%' ORDER BY proname;
SELECT name, setting, unit, context FROM pg_settings
WHERE name LIKE 'gpusort.service%' ORDER BY name;

-- The service runs: one row per GPU, or one in state "no device" with the
-- reason; each GPU has a process of its own, which is no backend.
SELECT count(*) >= 1 AS listed,
       bool_and(state IN ('ready', 'no device')) AS settled,
       bool_and(pid IS NOT NULL) AS running,
       bool_and(state = 'ready' OR reason IS NOT NULL) AS reason_when_not_ready,
       bool_and(state <> 'ready' OR (name IS NOT NULL AND memory_limit_mb > 0))
         AS ready_has_memory
FROM gpusort_service;
SELECT count(*) AS backends_with_service_pids
FROM pg_stat_activity a JOIN gpusort_service s ON a.pid = s.pid;
SELECT (SELECT count(*) FROM gpusort_devices()) =
       (SELECT count(*) FROM gpusort_service WHERE state <> 'no device')
       AS devices_are_the_service_gpus;
SELECT reason FROM gpusort_service_fallbacks() ORDER BY reason COLLATE "C";

-- Sorts with gpusort.device = gpu: on the GPU through the service, or (no
-- GPU) on the CPU after a WARNING (hidden: it differs between hosts).
CREATE TABLE sv_t AS
  SELECT g AS id, (g * 7919) % 100003 AS k, md5(g::text) AS t
  FROM generate_series(1, 200000) g;
ANALYZE sv_t;
CREATE FUNCTION sv_same(query text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  got text;
  want text;
BEGIN
  EXECUTE 'SELECT md5(string_agg(id::text, '','')) FROM (' || query || ') s' INTO got;
  PERFORM set_config('gpusort.enabled', 'off', true);
  EXECUTE 'SELECT md5(string_agg(id::text, '','')) FROM (' || query || ') s' INTO want;
  PERFORM set_config('gpusort.enabled', 'on', true);
  RETURN got = want;
END
$$;
-- What EXPLAIN ANALYZE says of a query's sort under a name.
CREATE FUNCTION sv_explained(query text, name text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query
  LOOP
    IF line ~ (name || ':') THEN
      RETURN substring(line FROM name || ': (.*)$');
    END IF;
  END LOOP;
  RETURN NULL;
END
$$;
SET gpusort.device = gpu;
SET client_min_messages = error;
SELECT gpusort_stats_reset();
SELECT sv_same('SELECT id FROM sv_t ORDER BY k, id OFFSET 0') AS k_id,
       sv_same('SELECT id FROM sv_t ORDER BY k DESC, t OFFSET 0') AS k_desc_t,
       sv_same('SELECT id FROM sv_t ORDER BY t OFFSET 0') AS t,
       (SELECT gpusort(array_agg(k)) = array_agg(k ORDER BY k) FROM sv_t) AS array_k;
SELECT sv_explained('SELECT * FROM sv_t ORDER BY k', 'Sort Engine') =
       CASE WHEN EXISTS (SELECT FROM gpusort_service WHERE state = 'ready')
            THEN 'gpu' ELSE 'cpu' END AS engine_as_expected;
-- A job the service ran says which GPU, and how long it was queued.
SELECT coalesce(sv_explained('SELECT * FROM sv_t ORDER BY k', 'GPU Service')
                ~ '^GPU \d+, queued \d+\.\d ms, ran \d+\.\d ms$',
                NOT EXISTS (SELECT FROM gpusort_service WHERE state = 'ready'))
       AS note_as_expected;
-- It says which kernel ran too.
SELECT (sv_explained('SELECT * FROM sv_t ORDER BY k', 'GPU Kernel') IS NOT NULL) =
       EXISTS (SELECT FROM gpusort_service WHERE state = 'ready') AS kernel_as_expected;
-- An input over the memory budget: the service holds its rows (a GPU) and
-- sorts them at once, or (none) it is sorted in runs.  A row larger than
-- the room the rows come back in, a row led by a NULL, and rows led by
-- NULLs alone (the service then holds none).
SET gpusort.work_mem = '1MB';
SELECT sv_same('SELECT id FROM sv_t ORDER BY id DESC OFFSET 0') AS held_desc,
       sv_same('SELECT id FROM (SELECT id, CASE WHEN id = 1000 THEN repeat(''x'', 3000000) END AS big
                FROM sv_t) s ORDER BY id OFFSET 0') AS held_big_row,
       sv_same('SELECT id FROM (SELECT id, CASE WHEN id = 777 THEN NULL ELSE id END AS n
                FROM sv_t) s ORDER BY n NULLS FIRST OFFSET 0') AS held_null,
       sv_same('SELECT id * 0 AS id, n FROM (SELECT id, CASE WHEN id < 0 THEN id END AS n
                FROM sv_t) s ORDER BY n OFFSET 0') AS held_nulls_only;
SELECT sv_explained('SELECT * FROM sv_t ORDER BY id DESC', 'Sort Method') =
       CASE WHEN EXISTS (SELECT FROM gpusort_service WHERE state = 'ready')
            THEN 'rows held on the GPU, sorted at once'
            ELSE 'external merge of sorted runs' END AS method_as_expected;
-- A parallel query: the participants add their rows to one input that the
-- service holds (the GpuSort under the Gather Merge is parallel-aware); the
-- leader sorts and returns them all, the workers only their rows led by a
-- NULL.  A row led by a NULL in an order of two keys ends the holding of
-- its participant, which sorts the rest in runs.  Without a GPU, each
-- participant sorts its own rows in runs.
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT sv_same('SELECT id FROM sv_t ORDER BY k DESC, id OFFSET 0') AS shared_k_id,
       sv_same('SELECT id FROM (SELECT id, CASE WHEN id = 777 THEN NULL ELSE id END AS n
                FROM sv_t) s ORDER BY n NULLS FIRST OFFSET 0') AS shared_null,
       sv_same('SELECT id FROM (SELECT id, CASE WHEN id = 777 THEN NULL ELSE k END AS n
                FROM sv_t) s ORDER BY n, id OFFSET 0') AS shared_ended;
-- (no worker starts: the leader adds, sorts and returns every row alone)
SET max_parallel_workers = 0;
SELECT sv_same('SELECT id FROM sv_t ORDER BY k DESC, id OFFSET 0') AS no_worker_started;
RESET max_parallel_workers;
SELECT sv_explained('SELECT * FROM sv_t ORDER BY k, id', 'Sort Method') =
       CASE WHEN EXISTS (SELECT FROM gpusort_service WHERE state = 'ready')
            THEN 'rows of all participants held on the GPU, sorted at once'
            ELSE 'external merge of sorted runs' END AS shared_method_as_expected;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET gpusort.work_mem;
RESET client_min_messages;

-- No backend maps CUDA's driver: this one has just sorted on the GPU.
SELECT count(*) AS libcuda_mappings
FROM regexp_split_to_table(pg_read_file('/proc/self/maps'), E'\n') AS line
WHERE line ~ 'libcuda';

-- Backends start no GPU of their own: gpusort_gpu_start() returns 0 where a
-- GPU of the service is ready (with a NOTICE), NULL where none is (with a
-- WARNING; both hidden: which one differs between hosts).
SET client_min_messages = error;
SELECT gpusort_gpu_start() IS NULL =
       NOT EXISTS (SELECT FROM gpusort_service WHERE state = 'ready') AS null_without_gpu,
       coalesce(gpusort_gpu_start() = 0, true) AS zero_with_gpu;
RESET client_min_messages;

-- Jobs the service ran are counted per GPU.
SELECT bool_and(state <> 'ready' OR (jobs > 0 AND rows > 0 AND busy_ms > 0))
       AS counted
FROM gpusort_service;

-- The settings are the server's: not changed in a session.
SET gpusort.service = off;
SET gpusort.service_memory = '1GB';

-- gpusort.service_gpus takes CUDA device numbers only.  ALTER SYSTEM checks
-- a value as the server's start does (which keeps the default, all GPUs,
-- with a WARNING), and writes only a good one.
\set VERBOSITY default
ALTER SYSTEM SET gpusort.service_gpus = 'banana,7';
ALTER SYSTEM SET gpusort.service_gpus = '-1';
ALTER SYSTEM SET gpusort.service_gpus = '0,,1';
ALTER SYSTEM SET gpusort.service_gpus = '0, 2,2';
ALTER SYSTEM RESET gpusort.service_gpus;
\set VERBOSITY terse

-- Who may read the service: superusers and members of pg_read_all_stats
-- (pg_monitor's among them), through the view and its functions alike.
CREATE ROLE sv_reader;
CREATE ROLE sv_monitor IN ROLE pg_monitor;
SET ROLE sv_reader;
SELECT count(*) >= 0 AS readable FROM gpusort_service;
SELECT count(*) >= 0 AS readable FROM gpusort_service_status();
SELECT count(*) >= 0 AS readable FROM gpusort_service_fallbacks();
SET ROLE sv_monitor;
SELECT count(*) >= 0 AS readable FROM gpusort_service;
SELECT count(*) >= 0 AS readable FROM gpusort_service_status();
SELECT count(*) >= 0 AS readable FROM gpusort_service_fallbacks();
RESET ROLE;
DROP ROLE sv_reader;
DROP ROLE sv_monitor;

DROP FUNCTION sv_explained(text, text);
DROP FUNCTION sv_same(text);
DROP TABLE sv_t;
