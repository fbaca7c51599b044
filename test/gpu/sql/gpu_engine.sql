-- The GPU engine on 1M rows.  Runs only on a GPU host, through
-- test/gpu/gpu-tests.sh, with gpusort.device = gpu (after node_plan, whose
-- helpers it uses); it is not in the Makefile's REGRESS.
SET work_mem = '2GB';
SET gpusort.work_mem = '2GB';
SET max_parallel_workers_per_gather = 0;

CREATE UNLOGGED TABLE g1m AS
  SELECT g AS id, hashint8extended(g, 1) AS k8, hashint8(g) AS k4,
         ((hashint8extended(g, 2) & 1023) % 1000)::int4 AS a,
         CASE WHEN (hashint8extended(g, 3) & 1023) < 102 THEN NULL ELSE g * 7 END AS kn,
         'row ' || g AS txt
  FROM generate_series(1, 1000000) g;
VACUUM ANALYZE g1m;

-- The engine and fallback reason that EXPLAIN ANALYZE reports (or its lines
-- of other names).
CREATE FUNCTION engine_of(query text,
                          names text DEFAULT 'Sort Engine|Fallback Reason') RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  line text;
  result text := '';
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
    IF line ~ ('(' || names || '):') THEN
      result := result || regexp_replace(trim(line), '\d+ MB', 'N MB', 'g') || '; ';
    END IF;
  END LOOP;
  RETURN result;
END
$$;

-- Do the query's ids come in the order Sort gives?  (A digest: 1M rows.)
CREATE FUNCTION same_ids(query text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  got text;
  want text;
BEGIN
  EXECUTE 'SELECT md5(string_agg(id::text, '','')) FROM (' || query || ' OFFSET 0) s' INTO got;
  PERFORM set_config('gpusort.enabled', 'off', true);
  EXECUTE 'SELECT md5(string_agg(id::text, '','')) FROM (' || query || ' OFFSET 0) s' INTO want;
  PERFORM set_config('gpusort.enabled', 'on', true);
  RETURN got = want;
END
$$;

SELECT engine_of('SELECT * FROM g1m ORDER BY k8 OFFSET 1000000');

-- The kernel that the GPU ran (its passes vary with the keys), and the
-- width of the keys it sorted: one int8 column.
SELECT engine_of('SELECT * FROM g1m ORDER BY k8 OFFSET 1000000', 'GPU Kernel|Key Width')
       ~ '^GPU Kernel: [a-z]+.*; Key Width: 8 bytes; $' AS kernel_and_width;

SELECT gpusort_stats_reset();
SELECT same_ids('SELECT id FROM g1m ORDER BY k8') AS k8,
       same_ids('SELECT id FROM g1m ORDER BY a, id') AS a_id,
       same_ids('SELECT id FROM g1m ORDER BY a DESC, k4, id') AS a_desc_k4_id,
       same_ids('SELECT id FROM g1m ORDER BY kn DESC NULLS FIRST, id') AS kn_desc_nf,
       same_ids('SELECT id FROM g1m ORDER BY k4 NULLS FIRST, id DESC') AS k4_id_desc;
SELECT gpusort(array_agg(k8)) = array_agg(k8 ORDER BY k8) AS array_k8 FROM g1m;
SELECT engine, sorts >= 6 AS sorted, fallbacks FROM gpusort_stats() ORDER BY engine;

-- An input planned at 5000 rows that brings 1M grows the upload's buffers.
CREATE FUNCTION g1m_rows() RETURNS SETOF g1m LANGUAGE plpgsql ROWS 5000
  AS 'BEGIN RETURN QUERY SELECT * FROM g1m; END';
SELECT same_ids('SELECT id FROM g1m_rows() ORDER BY k8') AS grown;
-- Sorts of a subquery that run while the outer sort collects take the
-- upload's buffers.
SELECT same_ids('SELECT id FROM (SELECT id, k8, CASE WHEN id IN (400000, 600000, 900000) THEN
  (SELECT max(k4) FROM (SELECT k4 FROM g1m g2 WHERE g2.id <= 20000 + g1m.id * 0
   ORDER BY k4 OFFSET 0) q) END AS x FROM g1m OFFSET 0) s ORDER BY k8, x') AS taken_back;
-- A cancel during the upload, then the same sort again.
SET statement_timeout = '150ms';
SELECT count(*) FROM (SELECT a.* FROM g1m a, generate_series(1, 8) ORDER BY a.k8 OFFSET 0) s;
RESET statement_timeout;
SELECT same_ids('SELECT id FROM g1m ORDER BY k8') AS after_cancel;

-- Too little device memory allowed: the CPU engine sorts (each time with a
-- WARNING, whose numbers vary: not shown).
SET gpusort.gpu_memory = 1;
SET client_min_messages = error;
SELECT engine_of('SELECT * FROM g1m ORDER BY k8 OFFSET 1000000');
SELECT same_ids('SELECT id FROM g1m ORDER BY a DESC, k4, id') AS a_desc_k4_id;
RESET client_min_messages;
RESET gpusort.gpu_memory;

-- Inputs larger than the memory budget, ordered by keys that the keys order
-- completely, are held on the GPU and sorted at once: the rows are Sort's,
-- NULLs first or last, going back too; a row larger than the budget comes
-- along.  Other orders, and too little device memory, sort in runs.
CREATE FUNCTION spill_lines(query text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  line text;
  result text := '';
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
    IF line ~ '(Sort Method|Not Held on GPU):' THEN
      result := result || regexp_replace(trim(line), '\d+ MB', 'N MB', 'g') || '; ';
    END IF;
  END LOOP;
  RETURN result;
END
$$;
SET gpusort.work_mem = '4MB';
SELECT spill_lines('SELECT * FROM g1m ORDER BY k8');
SELECT spill_lines('SELECT * FROM g1m ORDER BY a, id');
-- (rows led by a NULL tie: the same keys in order, and the same rows)
CREATE FUNCTION same_kn(query text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  got text;
  want text;
  q text := 'SELECT md5(string_agg(coalesce(kn::text, ''-''), '','')) || sum(id)
             FROM (' || query || ' OFFSET 0) s';
BEGIN
  EXECUTE q INTO got;
  PERFORM set_config('gpusort.enabled', 'off', true);
  EXECUTE q INTO want;
  PERFORM set_config('gpusort.enabled', 'on', true);
  RETURN got = want;
END
$$;
SELECT same_ids('SELECT id FROM g1m ORDER BY k8') AS k8,
       same_ids('SELECT id FROM g1m ORDER BY k8 DESC') AS k8_desc,
       same_kn('SELECT id, kn FROM g1m ORDER BY kn NULLS FIRST') AS kn_nulls_first,
       same_kn('SELECT id, kn FROM g1m ORDER BY kn DESC') AS kn_desc_nulls_first,
       same_kn('SELECT id, kn FROM g1m ORDER BY kn DESC NULLS LAST') AS kn_desc_nulls_last,
       same_ids('SELECT id FROM g1m ORDER BY a, id') AS a_id_runs;
SELECT spill_lines('SELECT id, kn FROM g1m ORDER BY kn NULLS FIRST');
-- Orders of several such keys are held too, the NULLs of a later int4 key
-- given keys of their own in every direction, the rows led by a NULL
-- sorted apart by the later keys, the keys past 4 words left to the
-- comparators.  A NULL of a later int8 key (no key is free for it) ends the
-- holding: from the first store, or after some (those held become the
-- first sorted run); and the rows are still Sort's.
SELECT same_ids('SELECT id FROM g1m ORDER BY a, k8, id') AS a_k8_id,
       same_ids('SELECT id FROM g1m ORDER BY a DESC, kn, id') AS kn_last,
       same_ids('SELECT id FROM g1m ORDER BY a, kn DESC, id') AS kn_desc_first,
       same_ids('SELECT id FROM g1m ORDER BY a, kn NULLS FIRST, id DESC') AS kn_first,
       same_ids('SELECT id FROM g1m ORDER BY a, kn DESC NULLS LAST, k4, id') AS kn_desc_last,
       same_ids('SELECT id FROM g1m ORDER BY a, kn::int8, id') AS kn8,
       same_ids('SELECT id FROM g1m ORDER BY kn, a, id') AS kn_a_id,
       same_ids('SELECT id FROM g1m ORDER BY a, CASE WHEN id > 900000 AND kn IS NULL
                 THEN NULL ELSE k8 END, id') AS late_null;
SELECT spill_lines('SELECT * FROM g1m ORDER BY a, k8, id');
SELECT spill_lines('SELECT * FROM g1m ORDER BY a, kn::int8, id');
SELECT spill_lines('SELECT * FROM g1m ORDER BY kn, a, id');
SELECT spill_lines('SELECT * FROM g1m ORDER BY a, k4, kn, k8, id');
SELECT regexp_replace(spill_lines('SELECT * FROM g1m ORDER BY a, CASE WHEN id > 900000
                      AND kn IS NULL THEN NULL ELSE k8 END, id'),
                      'held \d+ stores', 'held N stores') AS late_null;
SELECT same_ids('SELECT id FROM (SELECT id, k8, CASE WHEN id = 500000 THEN repeat(''x'', 5000000) END AS big
                 FROM g1m) s ORDER BY k8') AS big_row;
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id, k8 FROM g1m ORDER BY k8;
FETCH LAST c;
FETCH BACKWARD 1 c;
FETCH ABSOLUTE 2 c;
COMMIT;
SET gpusort.enabled = off;
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id, k8 FROM g1m ORDER BY k8;
FETCH LAST c;
FETCH BACKWARD 1 c;
FETCH ABSOLUTE 2 c;
COMMIT;
RESET gpusort.enabled;
SET gpusort.gpu_memory = 1;
SET client_min_messages = error;
SELECT spill_lines('SELECT * FROM g1m ORDER BY k8');
SELECT same_ids('SELECT id FROM g1m ORDER BY k8') AS k8_in_runs;
RESET client_min_messages;
RESET gpusort.gpu_memory;
-- Where the planner expects far fewer rows than come (a function's 1000),
-- the GPU takes the first stores, then no more: what it holds comes back
-- sorted as the first sorted run, and the rows are Sort's.
CREATE FUNCTION ge_rows(n int) RETURNS TABLE (id int, pad text)
LANGUAGE plpgsql ROWS 1000 AS $$
BEGIN
  RETURN QUERY SELECT g, md5(g::text) FROM generate_series(1, n) g;
END
$$;
SET gpusort.gpu_memory = 48;
SET client_min_messages = error;
SELECT regexp_replace(spill_lines('SELECT * FROM ge_rows(2000000) ORDER BY id'),
                      'held \d+ stores', 'held N stores') AS held_then_runs;
SELECT same_ids('SELECT id FROM ge_rows(2000000) ORDER BY id') AS id_after_held;
RESET client_min_messages;
RESET gpusort.gpu_memory;
DROP FUNCTION ge_rows(int);
SET gpusort.work_mem = '2GB';

DROP TABLE g1m CASCADE;
DROP FUNCTION engine_of(text, text), same_ids(text), same_kn(text), spill_lines(text);
