-- Never worse than Sort: a setting changed in the middle of a query changes
-- nothing in its sorts; EXPLAIN ANALYZE's words outlive the sorted runs they
-- describe; the input goes to tuplesort's own method where the engines
-- cannot win (a plan that reads backward, a budget too small for sorted
-- runs); statistics count sorts, not runs; parallel EXPLAIN in JSON has one
-- "Workers" key per object.  (Uses the helpers of node_plan.)
SET gpusort.min_rows = 0;
SET max_parallel_workers_per_gather = 0;

-- The node takes its settings once, as it begins.  gpusort.spill turned off
-- by the query itself half-way through its input lost the rows already
-- written to sorted runs: every row comes back now.
SET gpusort.work_mem = '1MB';
SELECT count(*) AS rows, sum(g) = 500000500000 AS all_of_them
FROM (SELECT g FROM (SELECT g, CASE WHEN g = 500000
                                THEN set_config('gpusort.spill', 'off', false) END AS x
                     FROM generate_series(1, 1000000) g) s
      ORDER BY g DESC OFFSET 0) q;
SHOW gpusort.spill;
RESET gpusort.spill;
-- So with the budget, and gpusort.device (which here would have the runs
-- after it warn, each, that no GPU sorted them).
SELECT count(*) AS rows, sum(g) = 500000500000 AS all_of_them
FROM (SELECT g FROM (SELECT g, CASE WHEN g = 500000
                                THEN set_config('gpusort.work_mem', '64kB', false) END AS x
                     FROM generate_series(1, 1000000) g) s
      ORDER BY g DESC OFFSET 0) q;
SET gpusort.work_mem = '1MB';
SELECT current_setting('gpusort.device') AS device \gset
SELECT count(*) AS rows
FROM (SELECT g FROM (SELECT g, CASE WHEN g = 500000
                                THEN set_config('gpusort.device',
                                                CASE :'device' WHEN 'cpu' THEN 'gpu' ELSE 'cpu' END,
                                                false) END AS x
                     FROM generate_series(1, 1000000) g) s
      ORDER BY g DESC OFFSET 0) q;
SET gpusort.device = :'device';

-- EXPLAIN ANALYZE after many sorted runs: the engine's choice is read from
-- memory that outlives them (it was made in the row store, reset at each
-- run, and printed whatever lay there later), and is not the last, short
-- run's "input below gpusort.min_rows".
CREATE TABLE nw_r AS SELECT g AS id, md5(g::text) AS s FROM generate_series(1, 300000) g;
ANALYZE nw_r;
-- (These are the choices of sorted runs, the CPU engine's: an engine that
-- holds rows, a GPU's, holds such inputs instead, as the suite held checks.)
SET gpusort.device = cpu;
RESET gpusort.min_rows;
SELECT gpusort_stats_reset();
SELECT regexp_replace(line, '\m(cpu|gpu)\M', '<engine>', 'g') AS line
FROM explain_analyze('SELECT * FROM nw_r ORDER BY s COLLATE "C"') line
WHERE line ~ '(Sort Engine|Engine Choice|Sort Method|Fallback Reason):';
-- gpusort_stats() counts that query's sort once, not once per run.
SELECT sum(sorts) AS sorts FROM gpusort_stats();
SET gpusort.min_rows = 0;

-- Where the budget holds too few rows for sorted runs to pay, the input goes
-- to tuplesort (gpusort.min_run_rows), rows already read included.
SET gpusort.work_mem = '64kB';
SELECT line FROM explain_analyze('SELECT * FROM nw_r ORDER BY s COLLATE "C"') line
WHERE line ~ '(Sort Engine|Engine Choice):';
SELECT same_as_native('SELECT * FROM nw_r ORDER BY s COLLATE "C"');
-- Where tuplesort would hold the input in memory and the store, which keeps
-- more for each row, would not, tuplesort sorts it: sorted runs would write
-- to disk what Sort keeps in memory.
SET gpusort.work_mem = '30MB';
SET work_mem = '30MB';
SELECT line FROM explain_analyze('SELECT * FROM nw_r ORDER BY s COLLATE "C"') line
WHERE line ~ '(Sort Engine|Engine Choice|Sort Method):';
RESET work_mem;
SET gpusort.work_mem = '64kB';
SET gpusort.min_run_rows = 0;
SELECT line ~ 'sorted runs' AS in_runs
FROM explain_analyze('SELECT * FROM nw_r ORDER BY s COLLATE "C"') line
WHERE line ~ 'Sort Method:';
-- Text under a collation other than C, libc's or ICU's, over the budget:
-- runs of its keys would merge by the collation's comparison, as tuplesort
-- merges, after the cost of the keys, so tuplesort sorts it (the C
-- collation's keys merge).
SELECT coalesce((SELECT collcollate FROM pg_collation
                 WHERE collprovider = 'c' AND collcollate IN ('en_US.utf8', 'en_US.UTF-8')
                 ORDER BY collcollate LIMIT 1), 'C.UTF-8') AS libc_locale \gset
CREATE COLLATION nw_libc (provider = libc, locale = :'libc_locale');
SELECT line FROM explain_analyze('SELECT * FROM nw_r ORDER BY s COLLATE nw_libc') line
WHERE line ~ '(Sort Engine|Engine Choice):';
-- (chosen from the planner's estimate before any row is read: no store of
-- rows and their keys is filled first; nw_memory_kb: the most memory a
-- GpuSort of the plan used, in kB, of those whose Engine Choice matches
-- choice)
CREATE FUNCTION nw_memory_kb(query text, choice text DEFAULT '') RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
  line text;
  chosen text := '';
  most int := 0;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ' || query LOOP
    IF line ~ 'Engine Choice:' THEN
      chosen := line;
    END IF;
    IF chosen ~ choice THEN
      most := greatest(most, substring(line FROM 'Memory Used: (\d+)')::int);
    END IF;
  END LOOP;
  RETURN most;
END
$$;
SELECT nw_memory_kb('SELECT * FROM nw_r ORDER BY s COLLATE nw_libc') < 32 AS chosen_before_reading;
SELECT same_as_native('SELECT * FROM nw_r ORDER BY s COLLATE nw_libc DESC, id');
-- (ICU where the server was built with it)
DO $$
BEGIN
  CREATE COLLATION nw_icu (provider = icu, locale = 'en-US');
EXCEPTION WHEN OTHERS THEN
  CREATE COLLATION nw_icu FROM "C";
END
$$;
SELECT (SELECT collprovider FROM pg_collation WHERE collname = 'nw_icu') <> 'i' OR
       line ~ 'runs of collation keys' AS icu_to_tuplesort
FROM explain_analyze('SELECT * FROM nw_r ORDER BY s COLLATE nw_icu') line
WHERE line ~ 'Engine Choice:';
RESET gpusort.min_run_rows;

-- A plan that reads the sorted rows backward, and is over the budget (the
-- inner side of a merge join, which marks and restores, where the planner
-- expected the sort to fit in work_mem; a SCROLL cursor): tuplesort's
-- method, within the budget, rather than sorted runs merged into a
-- tuplestore as large as the budget beside the last run in memory.
SET gpusort.work_mem = '1MB';
SET work_mem = '64MB';
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT regexp_replace(line, '\m(cpu|gpu)\M', '<engine>', 'g') AS line
FROM explain_analyze('SELECT count(*) FROM nw_r a JOIN nw_r b ON a.s COLLATE "C" = b.s') line
WHERE line ~ '(Merge Join|Sort Engine|Engine Choice):';
SELECT nw_memory_kb('SELECT count(*) FROM nw_r a JOIN nw_r b ON a.s COLLATE "C" = b.s') <= 1024
  AS within_budget;
-- The planner expected the inner input over the budget: tuplesort took it
-- from its first row, the row store never filled to hand it over.
SELECT nw_memory_kb('SELECT count(*) FROM nw_r a JOIN nw_r b ON a.s COLLATE "C" = b.s',
                    'reads it backward') < 64 AS store_unused;
SELECT count(*) FROM nw_r a JOIN nw_r b ON a.s = b.s;
RESET enable_hashjoin;
RESET enable_nestloop;
RESET work_mem;
-- (the rows a SCROLL cursor finds going back and forth, with gpusort on
-- and off)
CREATE FUNCTION nw_scroll(gpusort text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  c refcursor;
  r record;
  found_ids text := '';
BEGIN
  PERFORM set_config('gpusort.enabled', gpusort, true);
  OPEN c SCROLL FOR SELECT id FROM nw_r ORDER BY s COLLATE "C", id;
  FETCH LAST FROM c INTO r;
  found_ids := found_ids || r.id || ' ';
  FETCH PRIOR FROM c INTO r;
  found_ids := found_ids || r.id || ' ';
  FETCH ABSOLUTE 100000 FROM c INTO r;
  found_ids := found_ids || r.id || ' ';
  FETCH RELATIVE -2 FROM c INTO r;
  found_ids := found_ids || r.id;
  CLOSE c;
  PERFORM set_config('gpusort.enabled', 'on', true);
  RETURN found_ids;
END
$$;
SELECT nw_scroll('on') AS gpusort, nw_scroll('on') = nw_scroll('off') AS same_as_sort;
RESET gpusort.work_mem;
SET gpusort.device = :'device';

-- Parallel EXPLAIN (VERBOSE, FORMAT JSON): what each worker's GpuSort did
-- is the node's "GpuSort Workers", not a second "Workers" key beside
-- PostgreSQL's own (readers of the JSON keep one of the two).
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
CREATE FUNCTION nw_gpusort_json(query text) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  doc json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, FORMAT JSON) ' || query INTO doc;
  RETURN (WITH RECURSIVE plans(p) AS (
            SELECT doc -> 0 -> 'Plan'
            UNION ALL
            SELECT json_array_elements(p -> 'Plans') FROM plans WHERE p -> 'Plans' IS NOT NULL)
          SELECT p FROM plans WHERE p ->> 'Custom Plan Provider' = 'GpuSort' LIMIT 1);
END
$$;
SELECT count(*) FILTER (WHERE k = 'Workers') <= 1 AS one_workers_key,
       count(*) FILTER (WHERE k = 'GpuSort Workers') AS gpusort_workers_keys
FROM json_object_keys(nw_gpusort_json('SELECT * FROM nw_r ORDER BY id')) k;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;

DROP FUNCTION nw_gpusort_json(text);
DROP FUNCTION nw_memory_kb(text, text);
DROP FUNCTION nw_scroll(text);
DROP TABLE nw_r;
RESET gpusort.min_rows;
