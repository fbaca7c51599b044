-- Under a Unique (DISTINCT ON, DISTINCT, UNION), GpuSort returns only the
-- first row of each group (window/distinct_filter.c): the rows are
-- Sort's, in memory, in sorted runs, held, through tuplesort, in parallel
-- plans and in rescans, and EXPLAIN ANALYZE counts the rows it dropped.
SET gpusort.min_rows = 0;
CREATE TABLE df AS
  SELECT g AS id, (g::int8 * 7919) % 5000 AS k,
         CASE WHEN g % 97 = 0 THEN NULL ELSE g % 13 END AS n,
         CASE WHEN g % 89 = 0 THEN NULL ELSE chr(65 + g % 7) || (g % 3) END AS t,
         (g % 250)::numeric / 4 AS x
  FROM generate_series(1, 60000) g;
ANALYZE df;

-- the plan says so; the counts of a group's rows dropped (by the node's
-- filter, or, where a GPU holds the rows, by the GPU: as one here)
EXPLAIN (COSTS OFF) SELECT DISTINCT ON (k) k, id FROM df ORDER BY k, id DESC;
SELECT regexp_replace(line, 'Rows Dropped by Distinct Filter: \d+',
                      'Rows Dropped by Distinct Filter and engine: ' ||
                      (SELECT sum(substring(l from 'Rows Dropped [^:]*: (\d+)')::int8)
                       FROM explain_analyze('SELECT DISTINCT ON (k) k, id FROM df ORDER BY k, id DESC') l))
FROM explain_analyze('SELECT DISTINCT ON (k) k, id FROM df ORDER BY k, id DESC') line
WHERE line ~ 'Unique|GpuSort|Distinct';

-- the rows are Sort's: keys of each kind, NULLs first and last, DESC,
-- several columns, text under the database's collation and "C"
SELECT same_as_native('SELECT DISTINCT ON (k) k, id, x FROM df ORDER BY k, id DESC');
SELECT same_as_native('SELECT DISTINCT ON (n) n, id FROM df ORDER BY n NULLS FIRST, id');
SELECT same_as_native('SELECT DISTINCT ON (n) n, id FROM df ORDER BY n DESC, x, id');
SELECT same_as_native('SELECT DISTINCT ON (t, n) t, n, id FROM df ORDER BY t, n, id DESC');
SELECT same_as_native('SELECT DISTINCT ON (t COLLATE "C") t, id FROM df ORDER BY t COLLATE "C" DESC, id');
SELECT same_as_native('SELECT DISTINCT ON (x) x, k, id FROM df ORDER BY x DESC, k, id');
SET enable_hashagg = off;
SELECT same_as_native('SELECT DISTINCT n, t FROM df ORDER BY n, t');
SELECT same_as_native('SELECT k FROM df WHERE id % 3 = 0 UNION SELECT k FROM df WHERE id % 5 = 0 ORDER BY k');
RESET enable_hashagg;

-- rows of a group that come together (a table stored in the order of the
-- Unique's columns): those no better than the best before them in their
-- group are dropped as they come ("Distinct Prefilter"); where a later key
-- has prefix keys, only those that come after it by their words; after
-- 65536 rows of which it dropped too few, it stops looking
SET max_parallel_workers_per_gather = 0;
CREATE TABLE dc AS
  SELECT g / 4 AS o, (g * 37) % 11 AS d, g AS id, repeat('p', 20) || (g * 7) % 5 AS t
  FROM generate_series(1, 40000) g;
SELECT line FROM explain_analyze('SELECT DISTINCT ON (o) o, d, id FROM dc ORDER BY o, d DESC, id') line
WHERE line ~ 'Prefilter|Distinct Filter';
SELECT same_as_native('SELECT DISTINCT ON (o) o, d, id FROM dc ORDER BY o, d DESC, id');
SELECT same_as_native('SELECT DISTINCT ON (o) o, t, id FROM dc ORDER BY o, t DESC, id');
SELECT same_as_native('SELECT DISTINCT ON (o) o, t, id FROM dc ORDER BY o, t COLLATE "C", id DESC');
SET enable_hashagg = off;
SELECT same_as_native('SELECT DISTINCT o, d FROM dc ORDER BY o, d');
RESET enable_hashagg;
SET gpusort.work_mem = '256kB';
SELECT same_as_native('SELECT DISTINCT ON (o) o, d, id FROM dc ORDER BY o, d DESC, id');
RESET gpusort.work_mem;
CREATE TABLE dg AS
  SELECT CASE WHEN g <= 70000 THEN g ELSE 70000 + g / 2 END AS o, g AS id
  FROM generate_series(1, 100000) g;
SELECT line FROM explain_analyze('SELECT DISTINCT ON (o) o, id FROM dg ORDER BY o, id DESC') line
WHERE line ~ 'Prefilter';
SELECT same_as_native('SELECT DISTINCT ON (o) o, id FROM dg ORDER BY o, id DESC');
DROP TABLE dc, dg;
RESET max_parallel_workers_per_gather;

-- over the budget: sorted runs, rows held by the CPU engine, tuplesort
SET gpusort.work_mem = '256kB';
SELECT same_as_native('SELECT DISTINCT ON (k) k, id FROM df ORDER BY k, id DESC');
-- runs keep the first row of each group alone where the keys tell the
-- groups apart: each group's rows are dropped once, in the runs or by the
-- filter ("Rows Dropped from Runs"); not where a key of the groups has
-- prefix keys (this numeric, text), or a later one a NULL in the run
CREATE FUNCTION df_runs(query text) RETURNS TABLE (same text, from_runs boolean, dropped int8)
LANGUAGE sql AS $$
  SELECT same_as_native(query),
         bool_or(line ~ 'Rows Dropped from Runs'),
         sum(substring(line from 'Rows Dropped [^:]*: (\d+)')::int8)
  FROM explain_analyze(query) line
$$;
-- (on the CPU engine: a GPU would hold these rows rather than write runs)
SET gpusort.device = cpu;
SELECT * FROM df_runs('SELECT DISTINCT ON (k % 100) k % 100 AS m, id FROM df ORDER BY 1, id DESC');
SELECT * FROM df_runs('SELECT DISTINCT ON (x) x, k FROM df ORDER BY x DESC, k');
SELECT * FROM df_runs('SELECT DISTINCT ON (k % 50, id % 3) k % 50, id % 3 FROM df ORDER BY 1 DESC, 2');
SET enable_hashagg = off;
SELECT * FROM df_runs('SELECT DISTINCT k % 50, id % 3 FROM df ORDER BY 1, 2 DESC');
RESET enable_hashagg;
SELECT * FROM df_runs('SELECT DISTINCT ON (n) n, id FROM df ORDER BY n NULLS FIRST, id');
SELECT * FROM df_runs('SELECT DISTINCT ON (k % 100, n) k % 100, n, id FROM df ORDER BY 1, n, id');
SELECT * FROM df_runs('SELECT DISTINCT ON (t) t, id FROM df ORDER BY t, id');
BEGIN;
DECLARE dfr SCROLL CURSOR FOR SELECT DISTINCT ON (k % 100) k % 100 AS m, id FROM df ORDER BY 1 DESC, id;
FETCH 3 FROM dfr;
FETCH BACKWARD 2 FROM dfr;
MOVE LAST IN dfr;
FETCH BACKWARD 3 FROM dfr;
COMMIT;
RESET gpusort.device;
SET gpusort.debug_hold_rows = on;
SELECT same_as_native('SELECT DISTINCT ON (t) t, id FROM df ORDER BY t, id');
-- the engine that holds the rows keeps the first of each group alone as
-- it sorts, where the Unique's columns are the leading sort keys, with
-- exact keys whose words order the rows: "Rows Dropped on CPU" (or GPU,
-- shown here as by the engine); not where
-- a text key, a NULL of a later int8 key or an inexact numeric leaves ties
-- for the comparators, or the groups are all of two or more words
ALTER TABLE df ADD COLUMN b int8;
UPDATE df SET b = CASE WHEN id % 101 = 0 THEN NULL ELSE id % 17 END;
CREATE FUNCTION df_held(query text, dropped_by text DEFAULT 'Rows Dropped',
                        summed boolean DEFAULT false)
RETURNS TABLE (same text, dropped text)
LANGUAGE sql AS $$
  SELECT same_as_native(query),
         (SELECT CASE WHEN summed
                 THEN string_agg(regexp_replace(substring(line from '(Rows Dropped [^:]*):'),
                                                'on [CG]PU', 'by the engine'), ', ') ||
                      ': ' || sum(substring(line from 'Rows Dropped [^:]*: (\d+)')::int8)
                 ELSE string_agg(regexp_replace(substring(line from '(Rows Dropped [^:]*: \d+)'),
                                                'on [CG]PU', 'by the engine'), ', ') END
          FROM explain_analyze(query) line WHERE line ~ dropped_by)
$$;
SELECT * FROM df_held('SELECT DISTINCT ON (k) k, id FROM df ORDER BY k, id DESC');
SELECT * FROM df_held('SELECT DISTINCT ON (k) k, k % 11 AS m FROM df ORDER BY k');
SET enable_hashagg = off;
SELECT * FROM df_held('SELECT DISTINCT k, id % 7 FROM df ORDER BY k, id % 7');
RESET enable_hashagg;
SELECT * FROM df_held('SELECT DISTINCT ON (n) n, id FROM df ORDER BY n NULLS FIRST, id');
SELECT * FROM df_held('SELECT DISTINCT ON (k, n) k, n, id FROM df ORDER BY k DESC, n, id');
SELECT * FROM df_held('SELECT DISTINCT ON (n, k) n, k, id FROM df ORDER BY n, k, id');
SELECT * FROM df_held('SELECT DISTINCT ON (k) k, b, id FROM df ORDER BY k, b, id');
SELECT * FROM df_held('SELECT DISTINCT ON (k) k, t, id FROM df ORDER BY k, t, id');
SELECT * FROM df_held('SELECT DISTINCT ON (x) x, id FROM df ORDER BY x, id');
-- a cursor that goes back: the rows, NULL's group first, read from the
-- store of them all, each group once
BEGIN;
DECLARE dfs SCROLL CURSOR FOR SELECT DISTINCT ON (n) n, id FROM df ORDER BY n NULLS FIRST, id;
FETCH 3 FROM dfs;
FETCH BACKWARD 2 FROM dfs;
MOVE LAST IN dfs;
FETCH BACKWARD 3 FROM dfs;
COMMIT;
RESET gpusort.debug_hold_rows;
SET gpusort.spill = off;
SELECT same_as_native('SELECT DISTINCT ON (k) k, id FROM df ORDER BY k, id DESC');
RESET gpusort.spill;
RESET gpusort.work_mem;

-- parallel plans: each participant returns the first of its groups, the
-- Unique above the Gather Merge the first of all
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
-- (no engine that shares the participants' input: see below for one)
SET gpusort.device = cpu;
EXPLAIN (COSTS OFF) SELECT DISTINCT ON (k) k, id FROM df ORDER BY k, id DESC;
SELECT same_as_native('SELECT DISTINCT ON (k) k, id FROM df ORDER BY k, id DESC');
SELECT same_as_native('SELECT DISTINCT ON (n) n, id FROM df ORDER BY n, id');
-- the rows dropped are every participant's: with those that went up to
-- the Gather Merge (and those a GPU that held them dropped), the table's
-- (however the participants shared it)
SELECT sum(coalesce(substring(line from 'Rows Dropped [^:]*: (\d+)')::int8, 0) +
           coalesce(substring(line from 'Gather Merge \(actual rows=(\d+)')::int8, 0)) AS input_rows
FROM explain_analyze('SELECT DISTINCT ON (k) k, id FROM df ORDER BY k, id DESC') line;
RESET gpusort.device;
SET gpusort.debug_hold_rows = on;
SET gpusort.work_mem = '256kB';
-- one input held for all participants, sorted by the leader, which keeps
-- the first row of each group alone (the rows led by a NULL, each
-- participant's own, go through the filters)
SELECT * FROM df_held('SELECT DISTINCT ON (k) k, id FROM df ORDER BY k, id DESC', 'Rows Dropped', true);
SELECT * FROM df_held('SELECT DISTINCT ON (n) n, id FROM df ORDER BY n, id', 'Rows Dropped', true);
-- and where the engine declines stores midway (the CPU's test holder):
-- runs beside the rows held
SET gpusort.debug_hold_stores = 2;
SELECT same_as_native('SELECT DISTINCT ON (k) k, id FROM df ORDER BY k, id DESC');
RESET gpusort.debug_hold_stores;

-- with an engine that shares held inputs (here the CPU's test holder, set
-- as the query is planned) and keys it holds whole, a Gather takes the
-- place of the Unique and the Gather Merge: the leader returns the first
-- row of each group of every participant's rows, in order, and the
-- workers none; the workers hand it their rows led by a NULL, and those
-- the engine refused
EXPLAIN (COSTS OFF) SELECT DISTINCT ON (k) k, id FROM df ORDER BY k, id DESC;
SELECT line FROM explain_analyze('SELECT DISTINCT ON (k) k, id FROM df ORDER BY k, id DESC') line
WHERE line ~ 'Gather|Unique|Distinct|Returned|Dropped on|Workers Planned';
SELECT * FROM df_held('SELECT DISTINCT ON (k) k, id FROM df ORDER BY k, id DESC', 'Rows Dropped', true);
SELECT * FROM df_held('SELECT DISTINCT ON (n) n, id FROM df ORDER BY n, id', 'Rows Dropped', true);
SELECT * FROM df_held('SELECT DISTINCT ON (n) n, id FROM df ORDER BY n DESC NULLS LAST, id', 'Rows Dropped', true);
SELECT * FROM df_held('SELECT DISTINCT ON (n, k) n, k, id FROM df ORDER BY n NULLS FIRST, k DESC, id', 'Rows Dropped', true);
SET enable_hashagg = off;
-- (from PostgreSQL 16 on, a Unique below the Gather Merge too: the counts differ)
SELECT same_as_native('SELECT DISTINCT n, k % 3 FROM df ORDER BY n, k % 3');
RESET enable_hashagg;
-- a NULL in a later int8 key that its words leave no room for: the
-- engine refuses the store, and the leader merges what came to it
SELECT same_as_native('SELECT DISTINCT ON (k) k, b, id FROM df ORDER BY k, b, id');
SELECT line FROM explain_analyze('SELECT DISTINCT ON (k) k, b, id FROM df ORDER BY k, b, id') line
WHERE line ~ 'Gather|Returned';
SET gpusort.debug_hold_stores = 2;
SELECT same_as_native('SELECT DISTINCT ON (n) n, id FROM df ORDER BY n NULLS FIRST, id DESC');
RESET gpusort.debug_hold_stores;
-- a LIMIT that stops the leader early; the leader not reading its own
-- rows (one participant then returns all of them); groups of a text key,
-- which the engine leaves to the comparators: the Unique stays
SELECT same_as_native('SELECT DISTINCT ON (k) k, id FROM df ORDER BY k, id DESC LIMIT 7');
SET parallel_leader_participation = off;
SELECT same_as_native('SELECT DISTINCT ON (n) n, id FROM df ORDER BY n, id');
RESET parallel_leader_participation;
EXPLAIN (COSTS OFF) SELECT DISTINCT ON (t) t, id FROM df ORDER BY t, id;
SET gpusort.parallel_window = off;
EXPLAIN (COSTS OFF) SELECT DISTINCT ON (k) k, id FROM df ORDER BY k, id DESC;
RESET ALL;
SET gpusort.min_rows = 0;

-- rescans: a lateral subquery read again for each outer row, and a cursor
SELECT same_as_native('SELECT o.m, s.k, s.id FROM (VALUES (1), (2), (3)) o(m),
  LATERAL (SELECT DISTINCT ON (k) k, id FROM df WHERE id % 4 = o.m ORDER BY k, id DESC OFFSET 0) s');
BEGIN;
DECLARE dfc CURSOR FOR SELECT DISTINCT ON (n) n, id FROM df ORDER BY n, id;
FETCH 3 FROM dfc;
MOVE 5 FROM dfc;
FETCH 2 FROM dfc;
COMMIT;
DROP FUNCTION df_held(text, text, boolean);
DROP FUNCTION df_runs(text);
DROP TABLE df;
