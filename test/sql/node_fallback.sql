-- GpuSort hands its input to tuplesort when it cannot sort it itself, and
-- honours cancels: the rows are always those Sort returns.  Inputs larger
-- than the budget are sorted in spilled runs (node_spill); here, with
-- gpusort.spill off, they go to tuplesort.
SET gpusort.min_rows = 0;
SET gpusort.spill = off;
SET work_mem = '64MB';

CREATE TABLE fb_t AS
  SELECT g AS id, (g * 7919) % 100000 AS k, repeat('x', 100) AS pad
  FROM generate_series(1, 50000) g;
ANALYZE fb_t;

-- The input outgrows the memory budget while it is read: everything read so
-- far and the rest go to tuplesort, which spills to disk under work_mem.
PREPARE big AS SELECT id, k FROM fb_t ORDER BY k, id;
SELECT uses_gpusort('EXECUTE big');
SET gpusort.work_mem = '1MB';
SET work_mem = '1MB';
SELECT explain_analyze('EXECUTE big');
SELECT same_as_native('EXECUTE big');
RESET gpusort.work_mem;
SET work_mem = '64MB';

-- gpusort.enabled = off at run time, in a plan made while it was on.
SET gpusort.enabled = off;
SELECT explain_analyze('EXECUTE big');
RESET gpusort.enabled;
DEALLOCATE big;

-- Tuplesort is configured as Sort's would be: rows of one column passed by
-- value are sorted as Datums, in the memory that Sort's sort takes.
PREPARE keys AS SELECT k FROM fb_t ORDER BY k;
SELECT uses_gpusort('EXECUTE keys');
SET gpusort.enabled = off;
SELECT explain_kb('EXECUTE keys', 'Sort Space Used: ') AS gpusort_kb \gset
SELECT explain_kb('SELECT k FROM fb_t ORDER BY k', 'Memory: ') = :gpusort_kb AS as_sort_memory;
RESET gpusort.enabled;
DEALLOCATE keys;

-- An input larger than the budget again, under a scrollable cursor: the
-- tuplesort fallback still goes backward.
CREATE TABLE fb_narrow AS
  SELECT g AS id, (g * 7919) % 100000 AS k FROM generate_series(1, 60000) g;
ANALYZE fb_narrow;
SET gpusort.work_mem = '1MB';
SET work_mem = '1MB';
SELECT explain_analyze('SELECT * FROM fb_narrow WHERE id + 0 > 0 AND k + 0 >= 0 ORDER BY k DESC, id');
SELECT same_as_native('SELECT * FROM fb_narrow WHERE id + 0 > 0 AND k + 0 >= 0 ORDER BY k DESC, id');
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id, k FROM fb_narrow WHERE id + 0 > 0 AND k + 0 >= 0 ORDER BY k DESC, id;
FETCH 2 FROM c;
FETCH BACKWARD 1 FROM c;
FETCH LAST FROM c;
FETCH BACKWARD 2 FROM c;
COMMIT;
-- The same with rows that are only their key.
SELECT explain_analyze('SELECT k FROM fb_narrow WHERE id + 0 > 0 ORDER BY k DESC');
SELECT same_as_native('SELECT k FROM fb_narrow WHERE id + 0 > 0 ORDER BY k DESC');
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT k FROM fb_narrow WHERE id + 0 > 0 ORDER BY k DESC;
FETCH 2 FROM c;
FETCH BACKWARD 1 FROM c;
FETCH LAST FROM c;
FETCH BACKWARD 2 FROM c;
COMMIT;
RESET gpusort.work_mem;
SET work_mem = '64MB';

-- A cancel (here statement_timeout) stops a long sort with a clean error,
-- and the session goes on.
SET gpusort.work_mem = '2GB';
SELECT uses_gpusort('SELECT g FROM generate_series(1, 10000000) g ORDER BY g DESC');
SET statement_timeout = '200ms';
SELECT count(*) FROM (
  SELECT g FROM generate_series(1, 10000000) g ORDER BY g DESC OFFSET 0
) s;
RESET statement_timeout;
RESET gpusort.work_mem;
SELECT count(*) FROM (SELECT id FROM fb_t ORDER BY k OFFSET 0) s;

-- An input that outgrows the budget goes to tuplesort with the rows read so
-- far, which leave the row store as tuplesort takes them, nothing of it
-- kept for reuse: the backend's memory peaks (VmHWM) where it does under
-- Sort alone, within 16 MB, going forward (gpusort.spill off) and under a
-- SCROLL cursor, which reads backward.  (The planner expects a third of
-- the rows, which would fit.)  On the CPU engine: a GPU would add its CUDA
-- context, once per backend, to the peak.
CREATE TABLE fb_mem AS
  SELECT g AS id, hashint4(g)::int8 * 1000 AS k, md5(g::text) || md5((g + 1)::text) AS s
  FROM generate_series(1, 600000) g;
ANALYZE fb_mem;
\set forward 'SELECT count(*) FROM (SELECT * FROM fb_mem WHERE id + 0 > 0 ORDER BY k OFFSET 0) s'
\set scroll 'BEGIN; DECLARE c SCROLL CURSOR FOR SELECT * FROM fb_mem WHERE id + 0 > 0 ORDER BY k; MOVE LAST IN c; MOVE BACKWARD ALL IN c; COMMIT'
\set session 'SET jit = off; SET max_parallel_workers_per_gather = 0; SET work_mem = ''64MB''; SET gpusort.device = cpu; SET gpusort.spill = off'
\c
:session;
SET gpusort.enabled = off;
SELECT backend_kb('VmRSS') AS rss_before \gset
:forward;
SELECT backend_kb('VmHWM') - :rss_before AS native_kb \gset
\c
:session;
SELECT backend_kb('VmRSS') AS rss_before \gset
SELECT bool_or(line ~ 'Fallback Reason: memory budget exceeded') AS to_tuplesort
FROM explain_analyze(:'forward') line;
SELECT backend_kb('VmHWM') - :rss_before < :native_kb + 16 * 1024 AS within_native_peak;
\c
:session;
SET gpusort.enabled = off;
SELECT backend_kb('VmRSS') AS rss_before \gset
:scroll;
SELECT backend_kb('VmHWM') - :rss_before AS native_kb \gset
\c
:session;
RESET gpusort.spill;
SELECT backend_kb('VmRSS') AS rss_before \gset
:scroll;
SELECT backend_kb('VmHWM') - :rss_before < :native_kb + 16 * 1024 AS within_native_peak;
DROP TABLE fb_mem;
