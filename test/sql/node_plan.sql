-- GpuSort plan shapes: where the node replaces Sort, and where it does not.
CREATE EXTENSION IF NOT EXISTS gpusort;
SET gpusort.min_rows = 1000;
SET work_mem = '64MB';

CREATE TABLE plan_t (id int8, a int4, b int2, c text, d float8);
INSERT INTO plan_t
  SELECT i, (i * 7919) % 1000, (i % 50)::int2, 'row ' || i, i / 3.0
  FROM generate_series(1, 10000) i;
ANALYZE plan_t;

-- EXPLAIN shows the node, its sort keys like Sort, and the input.
EXPLAIN (COSTS OFF) SELECT * FROM plan_t ORDER BY id;
EXPLAIN (COSTS OFF) SELECT * FROM plan_t ORDER BY a DESC, c;
EXPLAIN (COSTS OFF) SELECT * FROM plan_t ORDER BY b NULLS FIRST, a DESC NULLS LAST, d;
EXPLAIN (COSTS OFF) SELECT * FROM plan_t ORDER BY a + b, id;
EXPLAIN (VERBOSE, COSTS OFF) SELECT id, c FROM plan_t ORDER BY a, b;

-- "ORDER BY c COLLATE ..." makes the scan add the key as a junk column that
-- the sort does not read (it sorts c under that collation).  Where GpuSort's
-- rows are the result's (bar a LIMIT), the scan leaves it out and returns
-- its tuples as they are.
EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM plan_t ORDER BY c COLLATE "C", id;
EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM plan_t ORDER BY c COLLATE "POSIX" DESC OFFSET 10;
-- not where a node above reads the column, or where it is no column of the input
EXPLAIN (VERBOSE, COSTS OFF) SELECT DISTINCT ON (c COLLATE "C") * FROM plan_t ORDER BY c COLLATE "C", id;
EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM plan_t ORDER BY c COLLATE "C", id;
-- the rows are Sort's, read by a cursor both ways (and by PL/pgSQL, below)
BEGIN;
DECLARE collated SCROLL CURSOR FOR SELECT * FROM plan_t ORDER BY c COLLATE "C", id;
FETCH 3 FROM collated;
FETCH BACKWARD 2 FROM collated;
FETCH LAST FROM collated;
COMMIT;

-- The leading key must be of a type the engines sort (keys/key_codec.c:
-- integers, floats, date and time types, bool, oid, money, uuid exactly;
-- text, numeric, bytea by a prefix); other keys may be anything.  An array
-- leading key stays with Sort.
EXPLAIN (COSTS OFF) SELECT * FROM plan_t ORDER BY ARRAY[a], c;
EXPLAIN (COSTS OFF) SELECT * FROM plan_t ORDER BY d;

-- LIMIT (top-N) stays with the bounded Sort; OFFSET alone does not bound.
EXPLAIN (COSTS OFF) SELECT * FROM plan_t ORDER BY id LIMIT 10;
EXPLAIN (COSTS OFF) SELECT * FROM plan_t ORDER BY id OFFSET 10;

-- Estimated input below gpusort.min_rows: PostgreSQL's Sort.
EXPLAIN (COSTS OFF) SELECT * FROM plan_t WHERE id < 100 ORDER BY id;
SET gpusort.min_rows = 10000;
EXPLAIN (COSTS OFF) SELECT * FROM plan_t ORDER BY id;
SET gpusort.min_rows = 10001;
EXPLAIN (COSTS OFF) SELECT * FROM plan_t ORDER BY id;
SET gpusort.min_rows = 1000;

-- The memory budget is judged at run time (node_fallback): the plan is the same.
SET work_mem = '64kB';
EXPLAIN (COSTS OFF) SELECT * FROM plan_t ORDER BY id;
SET work_mem = '64MB';

-- gpusort.enabled = off leaves plans alone.
SET gpusort.enabled = off;
EXPLAIN (COSTS OFF) SELECT * FROM plan_t ORDER BY id;
RESET gpusort.enabled;

-- Settings and their defaults.
SELECT name, boot_val, unit, context FROM pg_settings
WHERE name LIKE 'gpusort.%' ORDER BY name;
SET gpusort.device = 'tpu';

-- EXPLAIN ANALYZE tells what ran; numbers that vary are masked.
CREATE FUNCTION explain_analyze(query text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) ' || query
  LOOP
    line := regexp_replace(line, 'Memory Used: \d+', 'Memory Used: N');
    line := regexp_replace(line, 'Space Used: \d+', 'Space Used: N');
    line := regexp_replace(line, 'Memory: \d+', 'Memory: N');
    line := regexp_replace(line, 'Disk Used: \d+', 'Disk Used: N');
    -- a GPU host sorts runs on the GPU; this machine may not
    CONTINUE WHEN line ~ 'Runs Sorted on GPU:';
    -- the GPU service's note (which GPU, the wait) is only there
    CONTINUE WHEN line ~ 'GPU Service:';
    -- the GPU's kernel, and the width of the keys it sorted, are only there
    CONTINUE WHEN line ~ '^\s*(GPU Kernel|Key Width):';
    -- the suites run with gpusort.device = cpu, or gpu on a GPU host
    line := regexp_replace(line, 'Sort Engine: (cpu|gpu)$', 'Sort Engine: <engine>');
    line := regexp_replace(line, 'Engine Choice: gpusort.device = (cpu|gpu)$',
                           'Engine Choice: gpusort.device = <engine>');
    line := regexp_replace(line, 'rows=(\d+)\.00 ', 'rows=\1 ');
    RETURN NEXT line;
  END LOOP;
END
$$;

SELECT explain_analyze('SELECT * FROM plan_t ORDER BY id');
SELECT explain_analyze('SELECT * FROM plan_t ORDER BY a DESC, c COLLATE "C"');
SELECT explain_analyze('SELECT * FROM plan_t ORDER BY id OFFSET 10000');
-- (with a filter, which the node tests on each row as the scan would)
SELECT explain_analyze('SELECT * FROM plan_t WHERE id > 5000 ORDER BY id');

-- EXPLAIN without ANALYZE, with COSTS: the engine planned for the estimated
-- rows, why, and whether they are expected to exceed the memory budget.
CREATE FUNCTION explain_planned(query text, format text DEFAULT 'text') RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  line text;
  doc jsonb;
BEGIN
  IF format = 'json' THEN
    -- the GpuSort node's object, its fields in order of name
    EXECUTE 'EXPLAIN (FORMAT json) ' || query INTO doc;
    RETURN QUERY
      SELECT key || ' = ' || regexp_replace(value, '\d+ kB', 'N kB', 'g')
      FROM jsonb_each_text(jsonb_path_query_first(doc,
             'strict $.**?(@."Custom Plan Provider" == "GpuSort")'))
      WHERE key ~ '(Planned Engine|Engine Choice|Expected to Exceed Memory Budget)'
      ORDER BY key;
    RETURN;
  END IF;
  FOR line IN EXECUTE format('EXPLAIN (FORMAT %s) %s', format, query) LOOP
    CONTINUE WHEN line !~ '(Planned Engine|Engine Choice|Expected to Exceed Memory Budget)';
    line := regexp_replace(line, '\d+ kB', 'N kB', 'g');
    RETURN NEXT trim(line);
  END LOOP;
END
$$;
SET gpusort.device = cpu;
SELECT explain_planned('SELECT * FROM plan_t ORDER BY id');
SET gpusort.work_mem = '64kB';
SELECT explain_planned('SELECT * FROM plan_t ORDER BY id');
SELECT explain_planned('SELECT * FROM plan_t ORDER BY id', 'json');
RESET gpusort.work_mem;
-- a plan made while gpusort.enabled was on, shown while it is off
PREPARE planned AS SELECT * FROM plan_t ORDER BY id;
SELECT explain_planned('EXECUTE planned');
SET gpusort.enabled = off;
SELECT explain_planned('EXECUTE planned');
RESET gpusort.enabled;
DEALLOCATE planned;
RESET gpusort.device;
-- not with COSTS OFF (the plans above), nor with ANALYZE
SELECT count(*) FROM explain_analyze('SELECT * FROM plan_t ORDER BY id')
WHERE explain_analyze ~ 'Planned Engine|Expected to Exceed';

-- Helpers for the suites that follow.
-- The first number that EXPLAIN ANALYZE of the query reports after label (a
-- regular expression), in kB, or NULL.
CREATE FUNCTION explain_kb(query text, label text) RETURNS int8
LANGUAGE plpgsql AS $$
DECLARE
  line text;
  kb text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
    kb := substring(line FROM '(?:' || label || ')(\d+)');
    IF kb IS NOT NULL THEN
      RETURN kb::int8;
    END IF;
  END LOOP;
  RETURN NULL;
END
$$;

-- A field of the backend's /proc/self/status (VmRSS, VmHWM, VmSize), in kB.
CREATE FUNCTION backend_kb(field text) RETURNS int8
LANGUAGE sql AS $$
  SELECT substring(pg_read_file('/proc/self/status') FROM field || ':\s+(\d+) kB')::int8
$$;

-- Does the query's plan use GpuSort?
CREATE FUNCTION uses_gpusort(query text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
    IF line LIKE '%GpuSort%' THEN
      RETURN true;
    END IF;
  END LOOP;
  RETURN false;
END
$$;

-- The query's rows, in order, as one text (with gpusort as it is set); run
-- as the query itself (top_level), not as a subquery, where asked and for
-- EXECUTE.
CREATE FUNCTION result_text(query text, top_level boolean DEFAULT false) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  r record;
  rows text[] := '{}';
  result text;
BEGIN
  IF top_level OR query ~* '^\s*EXECUTE' THEN
    FOR r IN EXECUTE query LOOP
      rows := rows || r::text;
    END LOOP;
    RETURN array_to_string(rows, E'\n');
  END IF;
  EXECUTE format('SELECT string_agg(r::text, E''\n'') FROM (%s) r', query) INTO result;
  RETURN coalesce(result, '');
END
$$;

-- The same, with gpusort.enabled off: what PostgreSQL alone returns.
CREATE FUNCTION native_text(query text, top_level boolean DEFAULT false) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  result text;
BEGIN
  PERFORM set_config('gpusort.enabled', 'off', true);
  result := result_text(query, top_level);
  PERFORM set_config('gpusort.enabled', 'on', true);
  RETURN result;
END
$$;

-- Does GpuSort run the query and return exactly what Sort returns?
CREATE FUNCTION same_as_native(query text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  ours text;
  native text;
BEGIN
  IF NOT uses_gpusort(query) THEN
    RETURN 'no GpuSort in plan';
  END IF;
  ours := result_text(query);
  native := native_text(query);
  IF ours = native THEN
    RETURN 'same';
  END IF;
  RETURN 'DIFFERENT';
END
$$;

-- The rows of a GpuSort whose input leaves out the junk column of ORDER BY
-- c COLLATE (above) are Sort's, read at the top of the plan (PL/pgSQL).
SELECT result_text(q, true) = native_text(q, true) AS same
FROM (VALUES ('SELECT * FROM plan_t ORDER BY c COLLATE "C" DESC, id')) v(q);
