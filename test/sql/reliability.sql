-- Cancels in every phase, memory that follows the input and stays within the
-- budget, no growth over rescans.  (Uses the helpers of node_plan.)
SET gpusort.min_rows = 0;
SET max_parallel_workers_per_gather = 0;

-- Milliseconds from a statement_timeout (set by the caller) to the
-- query_canceled it raises, for a query that runs far longer: 'prompt' when
-- the cancel took effect within 300 ms of the timeout.
CREATE FUNCTION cancel_delay(query text, timeout_ms int) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  t0 timestamptz := clock_timestamp();
  ms float8;
BEGIN
  BEGIN
    EXECUTE query;
    RETURN 'not cancelled';
  EXCEPTION WHEN query_canceled THEN
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000 - timeout_ms;
  END;
  RETURN CASE WHEN ms < 300 THEN 'prompt' ELSE format('late by %s ms', round(ms)) END;
END
$$;

-- Rows that tie on the integer key are ordered by comparators: here every
-- comparison detoasts two 5 kB values, so ordering the one group of 50 000
-- rows takes seconds, and the cancel must stop it in the middle.
CREATE TABLE rel_slow AS
  SELECT g AS id, repeat('x', 5000) || md5(g::text) AS t
  FROM generate_series(1, 50000) g;
ANALYZE rel_slow;
SET work_mem = '256MB';
SELECT uses_gpusort('SELECT * FROM rel_slow ORDER BY (id * 0)::int, t COLLATE "C"');
SET statement_timeout = '300ms';
SELECT cancel_delay('SELECT count(*) FROM (SELECT * FROM rel_slow
                     ORDER BY (id * 0)::int, t COLLATE "C" OFFSET 50000) s', 300);
RESET statement_timeout;
-- The same where the leading key is NULL: those rows are ordered by the rest.
SET statement_timeout = '300ms';
SELECT cancel_delay('SELECT count(*) FROM (SELECT * FROM rel_slow
                     ORDER BY (CASE WHEN id < 0 THEN 1 END)::int, t COLLATE "C" OFFSET 50000) s', 300);
RESET statement_timeout;

-- Tie groups are ordered with abbreviated keys where the type has them (as
-- tuplesort orders its leading key), and give Sort's order: text under "C",
-- numeric, float8, NULLs, both directions, and a text whose abbreviations
-- all tie (so that abbreviation is given up half-way).
CREATE TABLE rel_ties AS
  SELECT g AS id, g % 3 AS k, md5(g::text) AS t,
         CASE WHEN g % 7 = 0 THEN NULL ELSE (g * 7919 % 1000)::numeric / 7 END AS n,
         (g * 31 % 977)::float8 / 3 AS f, 'same prefix ' || md5(g::text) AS p
  FROM generate_series(1, 20000) g;
ANALYZE rel_ties;
SELECT same_as_native('SELECT id FROM rel_ties ORDER BY k, t COLLATE "C"');
SELECT same_as_native('SELECT id FROM rel_ties ORDER BY k DESC, t COLLATE "C" DESC');
SELECT same_as_native('SELECT id FROM rel_ties ORDER BY k, n NULLS FIRST, id');
SELECT same_as_native('SELECT id FROM rel_ties ORDER BY k, n DESC, f, id');
SELECT same_as_native('SELECT id FROM rel_ties ORDER BY k, p COLLATE "C"');
SELECT same_as_native('SELECT id FROM rel_ties ORDER BY (CASE WHEN id % 2 = 0 THEN k END), t COLLATE "C"');
SELECT same_as_native('SELECT id FROM rel_ties ORDER BY (k * 0)::int, f DESC, id');

-- Memory follows the rows that come, not the planner's estimate: 20 rows
-- estimated at 100 million (and at 4 billion, past 2^32) under a large
-- budget.
CREATE FUNCTION rel_gen() RETURNS SETOF int8 LANGUAGE sql VOLATILE ROWS 100000000
  AS $$ SELECT g::int8 FROM generate_series(1, 20) g $$;
CREATE FUNCTION rel_gen_huge() RETURNS SETOF int8 LANGUAGE sql VOLATILE ROWS 4000000000
  AS $$ SELECT g::int8 FROM generate_series(1, 20) g $$;
SET gpusort.work_mem = '8GB';
SELECT explain_kb('SELECT k, ''pad'' FROM (SELECT rel_gen() k) s ORDER BY k', 'Memory Used: ') < 4096 AS small;
SET gpusort.work_mem = '300GB';
SELECT explain_kb('SELECT k, ''pad'' FROM (SELECT rel_gen_huge() k) s ORDER BY k', 'Memory Used: ') < 4096 AS small;
SELECT same_as_native('SELECT k, ''pad'' FROM (SELECT rel_gen_huge() k) s ORDER BY k');
RESET gpusort.work_mem;

-- An input that outgrows the budget is sorted in runs that spill to disk,
-- and the backend's memory peaks (VmHWM) where it does under Sort alone,
-- within 16 MB: the row store is emptied after each run.  (Sort itself
-- peaks near twice work_mem here, in its final merge.)  On the CPU engine: a
-- GPU would add its CUDA context, once per backend, to the peak.
\c
SET max_parallel_workers_per_gather = 0;
SET work_mem = '64MB';
SET gpusort.enabled = off;
SELECT backend_kb('VmRSS') AS rss_before \gset
SELECT count(*) FROM (SELECT * FROM (SELECT generate_series(1, 1200000) AS g, repeat('y', 60) AS pad) s
                      ORDER BY g DESC OFFSET 0) s;
SELECT backend_kb('VmHWM') - :rss_before AS native_kb \gset
\c
SET max_parallel_workers_per_gather = 0;
SET work_mem = '64MB';
SET gpusort.device = cpu;
SELECT backend_kb('VmRSS') AS rss_before \gset
SELECT bool_or(line ~ 'Sort Method: external merge of sorted runs') AS spilled
FROM explain_analyze('SELECT count(*) FROM (SELECT * FROM (SELECT generate_series(1, 1200000) AS g, repeat(''y'', 60) AS pad) s
                      ORDER BY g DESC OFFSET 0) s') line;
SELECT backend_kb('VmHWM') - :rss_before < :native_kb + 16 * 1024 AS within_native_peak;
RESET work_mem;

-- The memory of a large sort is given back after it, though helper threads
-- unmap the tuple blocks and arrays while the backend goes on: the
-- backend's mapped memory (VmSize) after four more sorts of 100 MB of rows
-- is where it was after the first two, within 16 MB.
\c
SET max_parallel_workers_per_gather = 0;
SET gpusort.work_mem = '1GB';
SET gpusort.min_rows = 0;
CREATE TABLE rel_unmap AS SELECT g AS id, repeat('u', 120) AS pad FROM generate_series(1, 700000) g;
CREATE FUNCTION sorted_count() RETURNS int8
LANGUAGE sql AS $$
  SELECT count(*) FROM (SELECT * FROM rel_unmap ORDER BY id DESC OFFSET 0) s
$$;
SELECT sorted_count() + sorted_count() AS rows;
SELECT pg_sleep(0.5);
SELECT backend_kb('VmSize') AS vm_before \gset
SELECT sorted_count() + sorted_count() + sorted_count() + sorted_count() AS rows;
SELECT pg_sleep(0.5);
SELECT backend_kb('VmSize') - :vm_before < 16 * 1024 AS given_back;
RESET gpusort.work_mem;
DROP TABLE rel_unmap;

-- Rescans add nothing to the query's memory: 50 000 rescans of a sort below
-- gpusort.min_rows (and above it), read while the query's context is alive
-- (a cursor).
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_memoize = off;
SET enable_material = off;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE rel_outer AS SELECT g AS id FROM generate_series(1, 50000) g;
ANALYZE rel_outer;
CREATE FUNCTION rescans_memory() RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  c refcursor;
  r record;
  kb int8;
BEGIN
  OPEN c FOR SELECT count(*) AS n, sum(s.g) AS total FROM rel_outer o,
    LATERAL (SELECT g FROM generate_series(1, 1 + (o.id % 3)::int) g ORDER BY g DESC OFFSET 0) s;
  FETCH c INTO r;
  SELECT max(total_bytes) / 1024 INTO kb
  FROM pg_backend_memory_contexts WHERE name = 'ExecutorState';
  CLOSE c;
  RETURN format('%s rows, sum %s: %s', r.n, r.total,
                CASE WHEN kb < 1024 THEN 'small' ELSE kb || ' kB' END);
END
$$;
SET gpusort.min_rows = 1000;
SELECT rescans_memory();
SET gpusort.min_rows = 0;
SELECT rescans_memory();
RESET ALL;

-- gpusort.work_mem is -1 (work_mem) or at least 64 kB, as work_mem.
SET gpusort.work_mem = 0;
SET gpusort.work_mem = '63kB';
SET gpusort.work_mem = '64kB';
SHOW gpusort.work_mem;
RESET gpusort.work_mem;

-- A sort ended right after its first row, while the helper threads still
-- gather the next rows into the emit ring (a cursor closed, 30 times): the
-- rows' memory is freed only once they are done, and the backend stays up.
SET gpusort.min_rows = 0;
SET work_mem = '256MB';
SET max_parallel_workers_per_gather = 0;
CREATE TABLE rel_ring AS
  SELECT g AS id, (g * 7919) % 100003 AS k, md5(g::text) AS pad
  FROM generate_series(1, 200000) g;
DO $$
DECLARE
  c refcursor;
  r record;
BEGIN
  FOR i IN 1..30 LOOP
    OPEN c NO SCROLL FOR SELECT * FROM rel_ring ORDER BY k;
    FETCH c INTO r;
    CLOSE c;
  END LOOP;
END
$$;
SELECT 'up' AS backend;
RESET ALL;

DROP TABLE rel_slow, rel_ties, rel_outer, rel_ring;
DROP FUNCTION rel_gen(), rel_gen_huge(), cancel_delay(text, int),
  rescans_memory();
