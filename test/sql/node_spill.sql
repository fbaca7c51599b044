-- Inputs larger than the memory budget: GpuSort sorts them in runs on its
-- engine, spills the runs to temporary files and merges them on the way
-- out.  The rows are always those Sort returns; cancels and errors leave no
-- temporary file behind.  (Uses the helpers of node_plan.)
SET gpusort.min_rows = 0;
-- sorted runs however few rows the budget holds (tuplesort's otherwise)
SET gpusort.min_run_rows = 0;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '64MB';
SELECT coalesce((SELECT collcollate FROM pg_collation
                 WHERE collprovider = 'c' AND collcollate IN ('en_US.utf8', 'en_US.UTF-8')
                 ORDER BY collcollate LIMIT 1), 'C.UTF-8') AS libc_locale \gset
CREATE COLLATION sp_libc (provider = libc, locale = :'libc_locale');

CREATE TABLE sp AS
  SELECT g AS id, (g * 7919) % 10007 AS k, md5(g::text) AS t,
         CASE WHEN g % 11 = 0 THEN NULL ELSE ((g * 31) % 1000) / 7.0 END AS n,
         timestamp '2020-01-01' + ((g * 13) % 5000) * interval '1 hour' AS ts,
         CASE WHEN g % 10 = 0 THEN g ELSE 42 END AS skew,
         repeat('x', 60) AS pad
  FROM generate_series(1, 30000) g;
ANALYZE sp;

-- Temporary files of this cluster (the suites run alone).
CREATE FUNCTION temp_files() RETURNS bigint
LANGUAGE sql AS $$ SELECT count(*) FROM pg_ls_tmpdir() $$;

SET gpusort.work_mem = 64;
-- (orders explained here are sorted on the CPU engine, where a GPU would
-- hold their rows, so that EXPLAIN shows the same runs on every host; the
-- rows are compared with Sort's on the suite's engine)
SET gpusort.device = cpu;
SELECT regexp_replace(line, '(Sorted Runs|Runs Merged Early): \d+', '\1: N') AS line
FROM explain_analyze('SELECT * FROM sp ORDER BY k, id') line;
SELECT substring(line FROM 'Sorted Runs: (\d+)')::int > 10 AS many_runs
FROM explain_analyze('SELECT * FROM sp ORDER BY k, id') line WHERE line ~ 'Sorted Runs:';
RESET gpusort.device;
-- rows that are their one key have no tuples for the GPU to hold: runs
SELECT line FROM explain_analyze('SELECT k FROM sp ORDER BY k') line
WHERE line ~ 'Sort Method|Not Held';

-- Every kind of key, both directions, NULLs first and last, multi-key
-- orders: exact keys (merged by their keys), prefix keys (merged by their
-- keys, ties by the comparators), keys that runs make differently (a
-- shared start, strxfrm(): merged by the comparators alone).
SELECT q, same_as_native(q) FROM (VALUES
  ('SELECT * FROM sp ORDER BY k, id'),
  ('SELECT id, k FROM sp ORDER BY k DESC, id DESC'),
  ('SELECT k FROM sp ORDER BY k'),
  ('SELECT k FROM sp ORDER BY k DESC'),
  ('SELECT id, n FROM sp ORDER BY n NULLS FIRST, id'),
  ('SELECT id, n FROM sp ORDER BY n DESC, id'),
  ('SELECT id, ts FROM sp ORDER BY ts DESC, id'),
  ('SELECT id, t FROM sp ORDER BY t COLLATE "C"'),
  ('SELECT id FROM sp ORDER BY k % 3, t COLLATE "C" DESC'),
  ('SELECT id FROM sp ORDER BY ''https://example.com/a/long/shared/path/'' || t COLLATE "C", id'),
  ('SELECT id FROM sp ORDER BY t COLLATE sp_libc DESC, id'),
  ('SELECT id FROM sp ORDER BY md5(t)::uuid'),
  ('SELECT id, skew FROM sp ORDER BY skew, id'),
  ('SELECT id FROM sp ORDER BY id DESC'),
  ('SELECT id FROM sp ORDER BY 1 - 1, id'),
  ('SELECT id, n FROM sp ORDER BY n NULLS FIRST, t COLLATE "C"'),
  ('SELECT id FROM sp ORDER BY skew, NULLIF(k % 4, 0) DESC NULLS FIRST, ts, id')
) v(q);

-- Composite orders merged on the keys of several sort keys (Merge Key
-- Columns): NULLs in the keys after the first, both directions, more exact
-- keys than a merge key holds, an exact key before a prefix key, exact keys
-- of two words.
SET gpusort.device = cpu;
SELECT q, same_as_native(q), (SELECT line FROM explain_analyze(q) line
                              WHERE line ~ 'Merge Key Columns') AS merged FROM (VALUES
  ('SELECT id FROM sp ORDER BY skew, NULLIF(k % 4, 0) DESC NULLS FIRST, ts, id'),
  ('SELECT id FROM sp ORDER BY skew DESC, NULLIF(k % 4, 0) NULLS LAST, k % 7, n, id'),
  ('SELECT id FROM sp ORDER BY k % 5, ts DESC, skew, k, id'),
  ('SELECT id FROM sp ORDER BY k % 3, NULLIF(k % 4, 1), t COLLATE "C", id'),
  -- exact keys of two words: numeric(p,s) with NULLs, uuid, interval, and
  -- one whose second word the merge key has no room for
  ('SELECT id FROM sp ORDER BY skew, n::numeric(10,2) DESC NULLS FIRST, id'),
  ('SELECT id FROM sp ORDER BY k % 3, md5(t)::uuid, id'),
  ('SELECT id FROM sp ORDER BY skew DESC, ts - timestamp ''2020-01-01'', id'),
  ('SELECT id FROM sp ORDER BY skew, k % 7, k % 5, (''00000000-0000-0000-'' || left(t, 4) || ''-'' || right(t, 12))::uuid DESC, id')
) v(q);

-- With a budget of 1 MB, the last run stays in memory and is merged with
-- the runs on disk from there.
SET gpusort.work_mem = '1MB';
SELECT line FROM explain_analyze('SELECT * FROM sp ORDER BY k, id') line
WHERE line ~ 'Sort Method|Last Run';
RESET gpusort.device;
SELECT q, same_as_native(q) FROM (VALUES
  ('SELECT * FROM sp ORDER BY k, id'),
  ('SELECT id, k FROM sp ORDER BY k DESC, id DESC'),
  ('SELECT id, n FROM sp ORDER BY n NULLS FIRST, id'),
  ('SELECT id, n FROM sp ORDER BY n DESC, id'),
  ('SELECT id, t FROM sp ORDER BY t COLLATE "C"'),
  ('SELECT id FROM sp ORDER BY ''https://example.com/a/long/shared/path/'' || t COLLATE "C", id'),
  ('SELECT id FROM sp ORDER BY t COLLATE sp_libc DESC, id'),
  ('SELECT id, skew FROM sp ORDER BY skew, id'),
  ('SELECT id FROM sp ORDER BY skew, NULLIF(k % 4, 0) DESC NULLS FIRST, ts, id')
) v(q);
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id, k FROM sp ORDER BY k, id;
FETCH LAST c;
FETCH BACKWARD 2 c;
FETCH ABSOLUTE 3 c;
COMMIT;
SET gpusort.work_mem = 64;

-- Rows that alone are larger than the budget are runs of their own.
SELECT same_as_native('SELECT id, md5(big) FROM (SELECT id, repeat(md5(id::text), 3000) AS big
                       FROM generate_series(1, 40) id ORDER BY big DESC OFFSET 0) s');

-- Going back: a scrollable cursor, a merge join's mark and restore, and a
-- nested loop's rescans of its inner sort read the merged rows again.
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id, k FROM sp ORDER BY k, id;
FETCH LAST c;
FETCH BACKWARD 2 c;
FETCH ABSOLUTE 3 c;
FETCH RELATIVE 10000 c;
FETCH FIRST c;
COMMIT;
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT same_as_native('SELECT a.id, b.id FROM sp a JOIN sp b ON a.skew = b.skew
                       WHERE a.id % 100 = 0 ORDER BY a.id, b.id');
RESET enable_nestloop;
SET enable_mergejoin = off;
SET enable_material = off;
SELECT same_as_native('SELECT x.id, y.k, y.id FROM (SELECT id FROM sp WHERE id <= 3) x
                       CROSS JOIN LATERAL (SELECT k, id FROM sp ORDER BY k, id OFFSET 0) y');
-- and with a parameter, which reads the input again
SELECT same_as_native('SELECT x.id, y.id FROM (SELECT id FROM sp WHERE id <= 3) x
                       CROSS JOIN LATERAL (SELECT id FROM sp WHERE k > x.id ORDER BY t COLLATE "C", id OFFSET 0) y');
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

-- Rows that are their one key go to runs of keys, their NULLs counted (all
-- alike): merged early at 64kB, with the last run in memory at 384kB; in
-- both directions, NULLs first and last.  In a merge join, directly below
-- it (the planner's Materialize dropped), the node keeping the rows since
-- the join's mark (64kB, with and without enable_material; the sorted keys
-- in memory, gone back to by their place).
CREATE TABLE sp_keys AS
  SELECT CASE WHEN g % 13 = 0 THEN NULL ELSE (g * 7919) % 5003 - 2500 END::int8 AS k,
         date '2020-01-01' + (g * 31) % 3000 AS d
  FROM generate_series(1, 30000) g;
ANALYZE sp_keys;
SELECT regexp_replace(line, '(Sorted Runs|Runs Merged Early): \d+', '\1: N') AS line
FROM explain_analyze('SELECT k FROM sp_keys ORDER BY k') line
WHERE line ~ 'Sort Method|Not Held|Sorted Runs|Runs Merged Early|Last Run';
SET gpusort.work_mem = 384;
SELECT line FROM explain_analyze('SELECT k FROM sp_keys ORDER BY k DESC') line
WHERE line ~ 'Sort Method|Last Run';
SELECT q, same_as_native(q) FROM (VALUES
  ('SELECT k FROM sp_keys ORDER BY k'),
  ('SELECT k FROM sp_keys ORDER BY k DESC NULLS LAST'),
  ('SELECT d FROM sp_keys ORDER BY d DESC')
) v(q);
SET gpusort.work_mem = 64;
SELECT q, same_as_native(q) FROM (VALUES
  ('SELECT k FROM sp_keys ORDER BY k'),
  ('SELECT k FROM sp_keys ORDER BY k DESC'),
  ('SELECT k FROM sp_keys ORDER BY k NULLS FIRST'),
  ('SELECT k FROM sp_keys ORDER BY k DESC NULLS LAST'),
  ('SELECT d FROM sp_keys ORDER BY d')
) v(q);
SET enable_hashjoin = off;
SET enable_nestloop = off;
\set keys_join 'SELECT count(*), sum(a.k), sum(b.k * 3) FROM sp_keys a JOIN (SELECT k FROM sp_keys WHERE k % 3 <> 0) b ON a.k = b.k'
SET work_mem = '64kB';
SELECT line FROM explain_analyze(:'keys_join') line
WHERE line ~ 'Merge Join|Materialize|GpuSort|Sort Method|Last Run|Engine Choice: the';
SELECT same_as_native(:'keys_join');
SET enable_material = off;
SELECT line FROM explain_analyze(:'keys_join') line
WHERE line ~ 'Merge Join|Materialize|GpuSort|Sort Method|Engine Choice: the';
SELECT same_as_native(:'keys_join');
RESET enable_material;
-- groups of 8,500 rows (int4 keys), each given again to the three rows of
-- the outer group after the first
CREATE TABLE sp_groups AS
  SELECT CASE WHEN g % 7 = 0 THEN NULL ELSE g % 3 END::int4 AS k
  FROM generate_series(1, 30000) g;
ANALYZE sp_groups;
\set groups_join 'SELECT count(*), sum(a.k * 10 + b.k) FROM (SELECT (g % 4)::int4 AS k FROM generate_series(1, 16) g) a JOIN (SELECT k FROM sp_groups WHERE k > 0) b ON a.k = b.k'
SELECT line FROM explain_analyze(:'groups_join') line
WHERE line ~ 'Merge Join|Materialize|GpuSort|Sort Method|Returned Again';
SELECT same_as_native(:'groups_join');
-- a thousand distinct inner keys between two matches (the node stops
-- keeping them: the join never goes back so far), each match's rows given
-- again to the outer rows of its key after the first
CREATE TABLE sp_sparse AS
  SELECT g AS k FROM generate_series(1, 30000, 2) g
  UNION ALL SELECT g * 1000 FROM generate_series(0, 29) g, generate_series(1, 2);
CREATE TABLE sp_dups AS
  SELECT (g % 30) * 1000 AS k FROM generate_series(1, 3000) g
  UNION ALL SELECT g FROM generate_series(2, 30000, 2) g WHERE g % 1000 <> 0;
ANALYZE sp_sparse, sp_dups;
\set sparse_join 'SELECT count(*), sum(a.k + b.k) FROM sp_dups a JOIN sp_sparse b ON a.k = b.k'
SELECT line FROM explain_analyze(:'sparse_join') line
WHERE line ~ 'Merge Join|Materialize|GpuSort|Sort Method|Returned Again';
SELECT same_as_native(:'sparse_join');
DROP TABLE sp_sparse, sp_dups;
SET enable_material = off;
SET work_mem = '64MB';
RESET gpusort.work_mem;
SELECT line FROM explain_analyze(:'keys_join') line
WHERE line ~ 'Merge Join|Materialize|GpuSort|Sort Method';
SELECT same_as_native(:'keys_join');
SET gpusort.work_mem = 64;
RESET enable_material;
DROP TABLE sp_groups;
RESET enable_hashjoin;
RESET enable_nestloop;

-- Parallel workers each sort and spill their part.
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT same_as_native('SELECT id, k FROM sp ORDER BY k, id');
-- whole rows of a parallel scan: each participant reads its pages of the
-- table itself, every row once
SELECT same_as_native('SELECT * FROM sp ORDER BY k, id');
SELECT count(*) > 0 AS pages_read_by_node
FROM explain_analyze('SELECT * FROM sp ORDER BY k, id') line
WHERE line ~ 'Input Read: from the table''s pages';
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- Cancels at varied moments (reading, sorting runs, writing them, merging)
-- and an error raised by a later key's expression leave no temporary files,
-- and the session sorts correctly afterwards.
CREATE TABLE sp_big AS SELECT g AS id, (g::int8 * 7919) % 100003 AS k, repeat('y', 80) AS pad
  FROM generate_series(1, 300000) g;
\set spill_query 'SELECT count(*) FROM (SELECT * FROM sp_big ORDER BY k, id OFFSET 0) s'
CREATE FUNCTION cancelled(query text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN 'not cancelled';
EXCEPTION WHEN query_canceled THEN
  RETURN 'cancelled';
END
$$;
SELECT temp_files() AS temp_files_before;
-- the timeouts: from 1/25 to 20/25 of the time the query takes uncancelled
CREATE FUNCTION run_ms(query text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
  t0 timestamptz := clock_timestamp();
BEGIN
  EXECUTE query;
  RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END
$$;
SELECT least(run_ms(:'spill_query'), run_ms(:'spill_query')) AS spill_ms \gset
SELECT greatest(1, round(1 * :spill_ms / 25)) AS t1, greatest(1, round(2 * :spill_ms / 25)) AS t2, greatest(1, round(3 * :spill_ms / 25)) AS t3, greatest(1, round(4 * :spill_ms / 25)) AS t4, greatest(1, round(5 * :spill_ms / 25)) AS t5, greatest(1, round(6 * :spill_ms / 25)) AS t6, greatest(1, round(7 * :spill_ms / 25)) AS t7, greatest(1, round(8 * :spill_ms / 25)) AS t8, greatest(1, round(9 * :spill_ms / 25)) AS t9, greatest(1, round(10 * :spill_ms / 25)) AS t10, greatest(1, round(11 * :spill_ms / 25)) AS t11, greatest(1, round(12 * :spill_ms / 25)) AS t12, greatest(1, round(13 * :spill_ms / 25)) AS t13, greatest(1, round(14 * :spill_ms / 25)) AS t14, greatest(1, round(15 * :spill_ms / 25)) AS t15, greatest(1, round(16 * :spill_ms / 25)) AS t16, greatest(1, round(17 * :spill_ms / 25)) AS t17, greatest(1, round(18 * :spill_ms / 25)) AS t18, greatest(1, round(19 * :spill_ms / 25)) AS t19, greatest(1, round(20 * :spill_ms / 25)) AS t20 \gset
CREATE TABLE sp_cancels (r text);
SET statement_timeout = :t1;
INSERT INTO sp_cancels SELECT cancelled(:'spill_query');
SET statement_timeout = :t2;
INSERT INTO sp_cancels SELECT cancelled(:'spill_query');
SET statement_timeout = :t3;
INSERT INTO sp_cancels SELECT cancelled(:'spill_query');
SET statement_timeout = :t4;
INSERT INTO sp_cancels SELECT cancelled(:'spill_query');
SET statement_timeout = :t5;
INSERT INTO sp_cancels SELECT cancelled(:'spill_query');
SET statement_timeout = :t6;
INSERT INTO sp_cancels SELECT cancelled(:'spill_query');
SET statement_timeout = :t7;
INSERT INTO sp_cancels SELECT cancelled(:'spill_query');
SET statement_timeout = :t8;
INSERT INTO sp_cancels SELECT cancelled(:'spill_query');
SET statement_timeout = :t9;
INSERT INTO sp_cancels SELECT cancelled(:'spill_query');
SET statement_timeout = :t10;
INSERT INTO sp_cancels SELECT cancelled(:'spill_query');
SET statement_timeout = :t11;
INSERT INTO sp_cancels SELECT cancelled(:'spill_query');
SET statement_timeout = :t12;
INSERT INTO sp_cancels SELECT cancelled(:'spill_query');
SET statement_timeout = :t13;
INSERT INTO sp_cancels SELECT cancelled(:'spill_query');
SET statement_timeout = :t14;
INSERT INTO sp_cancels SELECT cancelled(:'spill_query');
SET statement_timeout = :t15;
INSERT INTO sp_cancels SELECT cancelled(:'spill_query');
SET statement_timeout = :t16;
INSERT INTO sp_cancels SELECT cancelled(:'spill_query');
SET statement_timeout = :t17;
INSERT INTO sp_cancels SELECT cancelled(:'spill_query');
SET statement_timeout = :t18;
INSERT INTO sp_cancels SELECT cancelled(:'spill_query');
SET statement_timeout = :t19;
INSERT INTO sp_cancels SELECT cancelled(:'spill_query');
SET statement_timeout = :t20;
INSERT INTO sp_cancels SELECT cancelled(:'spill_query');
RESET statement_timeout;
SELECT count(*) FILTER (WHERE r = 'cancelled') >= 15 AS cancelled FROM sp_cancels;
SELECT temp_files() AS temp_files_after_cancels;
SELECT * FROM sp ORDER BY k, 1 / (id - 25000);
SELECT temp_files() AS temp_files_after_error;
SELECT same_as_native('SELECT * FROM sp ORDER BY k, id');

-- temp_file_limit below what the runs need gives PostgreSQL's error (whose
-- quotes differ between versions).
CREATE FUNCTION limit_error(query text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN 'no error';
EXCEPTION WHEN configuration_limit_exceeded THEN
  RETURN replace(SQLERRM, '"', '');
END
$$;
-- (on the CPU engine: a GPU would hold the rows, writing no file)
SET temp_file_limit = '200kB';
SET gpusort.device = cpu;
SELECT limit_error('SELECT count(*) FROM (SELECT * FROM sp ORDER BY k, id OFFSET 0) s');
RESET gpusort.device;
RESET temp_file_limit;
SELECT temp_files() AS temp_files_after_limit;

-- The runs take no more disk than Sort's (tuplesort's tapes) at the same
-- budget: a row on tape is what tuplesort writes for it, and each run's tape
-- ends within a row of a full block.  pg_stat_database counts the bytes of
-- each temporary file as it is removed; the forced flushes make the counts
-- current between statements.
SET work_mem = '1MB';
SET gpusort.work_mem = '1MB';
CREATE TABLE sp_disk AS
  SELECT g::int8 AS id, (g::int8 * 7919) % 1000003 AS k, md5(g::text) AS t,
         repeat('p', 20) AS pad
  FROM generate_series(1, 300000) g;
ANALYZE sp_disk;
CREATE FUNCTION temp_bytes() RETURNS bigint
LANGUAGE sql AS $$
  SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()
$$;
\set by_int8 'SELECT count(s.*), pg_stat_force_next_flush() FROM (SELECT * FROM sp_disk ORDER BY k OFFSET 0) s'
\set by_text 'SELECT count(s.*), pg_stat_force_next_flush() FROM (SELECT * FROM sp_disk ORDER BY t COLLATE "C" OFFSET 0) s'
SELECT pg_stat_force_next_flush() \gset
SELECT temp_bytes() AS bytes0 \gset
:by_int8 \gset
SELECT temp_bytes() AS bytes1 \gset
:by_text \gset
SELECT temp_bytes() AS bytes2 \gset
SET gpusort.enabled = off;
:by_int8 \gset
SELECT temp_bytes() AS bytes3 \gset
:by_text \gset
SELECT temp_bytes() AS bytes4 \gset
RESET gpusort.enabled;
-- (Sort spills the text order; a GPU holds GpuSort's rows, which then
-- write nothing)
SELECT :bytes4 - :bytes3 > 0 AS spilled,
       :bytes1 - :bytes0 <= :bytes3 - :bytes2 AS int8_gpusort_bytes_le_sort_bytes,
       :bytes2 - :bytes1 <= :bytes4 - :bytes3 AS text_gpusort_bytes_le_sort_bytes;
-- so a query that Sort completes under temp_file_limit completes with GpuSort
-- (the runs' former format, 16 bytes more a row, needed more than this)
SET temp_file_limit = '26MB';
SELECT limit_error('SELECT * FROM sp_disk ORDER BY k OFFSET 1000000') AS gpusort;
SET gpusort.enabled = off;
SELECT limit_error('SELECT * FROM sp_disk ORDER BY k OFFSET 1000000') AS sort;
RESET gpusort.enabled;
RESET temp_file_limit;
SET work_mem = '64MB';
SET gpusort.work_mem = 64;

-- With gpusort.spill off, such inputs go to tuplesort.
SET gpusort.spill = off;
SELECT line FROM explain_analyze('SELECT * FROM sp ORDER BY k, id') line
WHERE line ~ 'Sort Engine|Fallback Reason';
RESET gpusort.spill;
RESET gpusort.work_mem;
