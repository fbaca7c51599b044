-- GpuSort wherever plans use Sort: merge joins, grouping, DISTINCT, window
-- functions, subqueries, CTEs, cursors, prepared statements, rescans and
-- parallel plans.
SET gpusort.min_rows = 0;
SET work_mem = '64MB';

CREATE TABLE ctx_a AS
  SELECT g AS id, (g * 7) % 1000 AS k, (g % 37)::int2 AS grp, md5(g::text) AS t
  FROM generate_series(1, 5000) g;
CREATE TABLE ctx_b AS
  SELECT g AS id, (g * 11) % 1000 AS k, g % 5 AS v
  FROM generate_series(1, 3000) g;
ANALYZE ctx_a;
ANALYZE ctx_b;

-- Merge join: both inputs sorted by GpuSort, the inner one marked and restored.
SET enable_hashjoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT a.id, b.id FROM ctx_a a JOIN ctx_b b ON a.k = b.k;
SELECT count(*), sum(a.id * b.id) FROM ctx_a a JOIN ctx_b b ON a.k = b.k;
SET gpusort.enabled = off;
SELECT count(*), sum(a.id * b.id) FROM ctx_a a JOIN ctx_b b ON a.k = b.k;
RESET gpusort.enabled;
SELECT same_as_native('SELECT a.id, b.id FROM ctx_a a FULL JOIN ctx_b b ON a.k = b.k ORDER BY a.id, b.id');
RESET enable_hashjoin;
RESET enable_nestloop;

-- GROUP BY, DISTINCT and window functions over sorted input.
SET enable_hashagg = off;
EXPLAIN (COSTS OFF) SELECT grp, count(*) FROM ctx_a GROUP BY grp;
SELECT same_as_native('SELECT grp, count(*), min(t) FROM ctx_a GROUP BY grp');
EXPLAIN (COSTS OFF) SELECT DISTINCT k FROM ctx_a;
SELECT same_as_native('SELECT DISTINCT k FROM ctx_a');
RESET enable_hashagg;
SELECT uses_gpusort('SELECT id, rank() OVER (PARTITION BY grp ORDER BY k) FROM ctx_a');
SELECT same_as_native('SELECT id, rank() OVER (PARTITION BY grp ORDER BY k), sum(id) OVER (ORDER BY k, id) FROM ctx_a ORDER BY id');

-- Subqueries and CTEs.
SELECT same_as_native('SELECT * FROM (SELECT id, k FROM ctx_a ORDER BY k DESC, id OFFSET 0) s WHERE id % 2 = 0');
SELECT same_as_native('WITH s AS MATERIALIZED (SELECT id, k FROM ctx_a ORDER BY k, id) SELECT * FROM s, (SELECT count(*) FROM s) c');
SELECT same_as_native('SELECT id, k FROM ctx_a WHERE k IN (SELECT k FROM ctx_b ORDER BY v) ORDER BY k, id');

-- Prepared statements, with a parameter, planned again and cached.
PREPARE by_grp(int) AS SELECT id, k FROM ctx_a WHERE grp < $1 ORDER BY k, id;
SELECT n, uses_gpusort(format('EXECUTE by_grp(%s)', n)) AS gpusort,
       result_text(format('EXECUTE by_grp(%s)', n)) =
         native_text(format('SELECT id, k FROM ctx_a WHERE grp < %s ORDER BY k, id', n)) AS same
FROM generate_series(5, 40, 5) n;
DEALLOCATE by_grp;

-- Cursors, forward and backward.
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id, k FROM ctx_a ORDER BY k DESC, id;
EXPLAIN (COSTS OFF) DECLARE c2 SCROLL CURSOR FOR SELECT id, k FROM ctx_a ORDER BY k DESC, id;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH 2 FROM c;
FETCH LAST FROM c;
FETCH 1 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH ABSOLUTE 100 FROM c;
FETCH RELATIVE -3 FROM c;
MOVE FORWARD ALL IN c;
FETCH PRIOR FROM c;
CLOSE c;
DECLARE kc SCROLL CURSOR FOR SELECT k FROM ctx_a ORDER BY k DESC;
FETCH 2 FROM kc;
FETCH BACKWARD 1 FROM kc;
FETCH LAST FROM kc;
FETCH BACKWARD 2 FROM kc;
MOVE ABSOLUTE 0 IN kc;
FETCH 1 FROM kc;
CLOSE kc;
DECLARE nc CURSOR FOR SELECT id FROM ctx_a ORDER BY grp, id;
FETCH 3 FROM nc;
CLOSE nc;
COMMIT;

-- Rescans: with new parameters (correlated subquery) and without (nested loop).
SELECT same_as_native($$
  SELECT b.id, (SELECT string_agg(s.id::text, ',') FROM
                  (SELECT a.id FROM ctx_a a WHERE a.grp = b.v ORDER BY a.k DESC, a.id) s)
  FROM ctx_b b WHERE b.id <= 20 ORDER BY b.id$$);
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
EXPLAIN (COSTS OFF)
  SELECT b.id, s.id FROM ctx_b b,
    LATERAL (SELECT id FROM (SELECT a.id, a.k FROM ctx_a a WHERE a.id <= 300 ORDER BY a.k OFFSET 0) x WHERE x.k = b.k) s
  WHERE b.id <= 50;
SELECT same_as_native($$
  SELECT b.id, s.id FROM ctx_b b,
    LATERAL (SELECT id FROM (SELECT a.id, a.k FROM ctx_a a WHERE a.id <= 300 ORDER BY a.k OFFSET 0) x WHERE x.k = b.k) s
  WHERE b.id <= 50 ORDER BY 1, 2$$);
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

-- Parallel plans: GpuSort runs in the workers, under Gather Merge (a
-- "Parallel" one where the GPU service of a CUDA build could hold all the
-- participants' rows: the plan is shown without the word, the same in
-- every build).
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
CREATE OR REPLACE FUNCTION plan_of(query text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
    RETURN NEXT replace(line, 'Parallel Custom Scan (GpuSort)', 'Custom Scan (GpuSort)');
  END LOOP;
END
$$;
SELECT plan_of('SELECT id, k FROM ctx_a ORDER BY k, id');
SELECT same_as_native('SELECT id, k FROM ctx_a ORDER BY k, id');
SELECT same_as_native('SELECT grp, count(*) FROM ctx_a GROUP BY grp ORDER BY grp');
-- EXPLAIN ANALYZE shows what each worker's GpuSort did, as Sort does: here
-- the workers sorted every row (how they split them varies).
SELECT count(*) > 0 AS worker_lines,
       sum(substring(line FROM 'Sorted Rows: (\d+)')::int) = (SELECT count(*) FROM ctx_a)
         AS workers_sorted_all
FROM explain_analyze('SELECT id, k FROM ctx_a ORDER BY k, id') line
WHERE line ~ '^ *Worker \d+:  Sort Engine: (cpu|gpu)  Sort Method: .*  Sorted Rows: \d+  Memory Used: ';
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;

-- Forward reads of large inputs: helper threads gather the sorted rows into
-- a ring ahead of the emit phase.  Rows too wide for a slot are read where
-- they lie; a sort that reads another's output makes it drop queued
-- gathers when its own arrays grow; a LIMIT stops reading midway.
CREATE TABLE ctx_big AS
  SELECT g AS id, hashint8(g) AS k,
         CASE WHEN g % 20 = 0 THEN repeat(md5(g::text), 3) ELSE md5(g::text) END AS t
  FROM generate_series(1, 200000) g;
ANALYZE ctx_big;
SELECT same_as_native('SELECT id, t FROM ctx_big ORDER BY k, id');
SELECT same_as_native('SELECT id, k FROM (SELECT * FROM ctx_big ORDER BY k, id OFFSET 0) s
                       WHERE length(t) > 0 ORDER BY id DESC');
EXPLAIN (COSTS OFF) SELECT id, k FROM ctx_big ORDER BY k DESC, id;
BEGIN;
DECLARE ring_cursor CURSOR FOR SELECT id, k FROM ctx_big ORDER BY k DESC, id;
FETCH 3 FROM ring_cursor;
CLOSE ring_cursor;
COMMIT;
SELECT id, k FROM ctx_big ORDER BY k DESC, id LIMIT 3;
SET gpusort.prefault_threads = 0;
SELECT same_as_native('SELECT id, t FROM ctx_big ORDER BY k, id');
RESET gpusort.prefault_threads;
