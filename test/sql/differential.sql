-- Differential test: many ORDER BY queries over tables of many shapes, each
-- compared with the same query under gpusort.enabled = off.
--
-- Where the ORDER BY makes the order unique (it ends with the unique id),
-- the rows must be identical.  Otherwise the sequence of sort-key values
-- must be identical (any valid order has the same one) and the rows must be
-- the same multiset.
SET gpusort.min_rows = 0;
SET work_mem = '256MB';
SELECT setseed(0.42);

CREATE TABLE diff_data (shape text, id int, a2 int2, a4 int4, a8 int8, t text, f float8);
CREATE FUNCTION diff_fill(shape text, n int, expr2 text, expr4 text, expr8 text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format($q$
    INSERT INTO diff_data
    SELECT %L, g, (%s)::int2, (%s)::int4, (%s)::int8,
           substr(md5((g %% 97)::text), 1, 4), (g %% 13) / 4.0
    FROM (SELECT g, random() AS r FROM generate_series(1, %s) g) s$q$,
    shape, expr2, expr4, expr8, n);
END
$$;
SELECT diff_fill('uniform', 30000, 'floor(r * 65536) - 32768', 'floor(r * 4294967296) - 2147483648',
                 'floor((random() - 0.5) * 1.8e19)');
SELECT diff_fill('sorted', 30000, 'g - 15000', 'g * 1000', 'g::int8 * 100000000000');
SELECT diff_fill('reverse', 30000, '15000 - g', '-g * 1000', '-g::int8 * 100000000000');
SELECT diff_fill('all_equal', 20000, '7', '7', '7');
SELECT diff_fill('few_distinct', 30000, 'g % 3', 'g % 5 - 2', '(g % 4) * 1000000000000');
SELECT diff_fill('skew', 30000, 'CASE WHEN r < 0.9 THEN 1 ELSE floor(r * 1000) END',
                 'CASE WHEN r < 0.8 THEN 0 ELSE floor(r * 1e9) END',
                 'CASE WHEN r < 0.95 THEN 42 ELSE floor(r * 1e15) END');
SELECT diff_fill('extremes', 20000,
                 'CASE g % 3 WHEN 0 THEN -32768 WHEN 1 THEN 32767 ELSE 0 END',
                 'CASE g % 3 WHEN 0 THEN -2147483648 WHEN 1 THEN 2147483647 ELSE g END',
                 'CASE g % 3 WHEN 0 THEN -9223372036854775808 WHEN 1 THEN 9223372036854775807 ELSE g END');
SELECT diff_fill('many_nulls', 30000,
                 'CASE WHEN r < 0.5 THEN NULL ELSE g % 100 END',
                 'CASE WHEN g % 3 = 0 THEN NULL ELSE floor(r * 1000) END',
                 'CASE WHEN g % 4 = 0 THEN NULL WHEN g % 4 = 1 THEN -9223372036854775808 ELSE 9223372036854775807 END');
SELECT diff_fill('narrow_range', 30000, '100 + g % 7', '1000000 + floor(r * 500)', '1700000000000 + g % 1000');
UPDATE diff_data SET t = NULL WHERE id % 10 = 0;
UPDATE diff_data SET f = NULL WHERE id % 9 = 0;
ANALYZE diff_data;
SELECT shape, count(*) FROM diff_data GROUP BY shape ORDER BY shape;

-- ORDER BY lists to try on each shape.
CREATE TABLE diff_orders (ob text);
INSERT INTO diff_orders VALUES
  ('a2'), ('a4'), ('a8'), ('a2 DESC'), ('a4 DESC'), ('a8 DESC'),
  ('a2 NULLS FIRST'), ('a4 DESC NULLS LAST'), ('a8 NULLS FIRST'), ('a8 DESC NULLS LAST'),
  ('a4, id'), ('a8 DESC, id DESC'), ('a2, a4, a8, id'),
  ('a2 DESC, a8 NULLS FIRST, id'), ('a4 NULLS FIRST, a2 DESC NULLS LAST, id'),
  ('a8, a4 DESC NULLS LAST'), ('a2, t'), ('a4 DESC, t DESC NULLS LAST'),
  ('a8, f DESC, t'), ('a2, f NULLS FIRST, a8, id'), ('a4 % 10, a8, id'),
  ('a2::int8 * 3 DESC, id'), ('a8, t, f, id');

CREATE FUNCTION diff_check(source text, ob text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  query text := format('SELECT * FROM %s ORDER BY %s', source, ob);
  keyquery text := format('SELECT %s FROM (%s) s', ob, query);
  unique_order boolean := ob LIKE '%id' OR ob LIKE '%id DESC';
  rowsum text := format('SELECT count(*), sum(hashtext(s::text)) FROM (%s) s', query);
  ours text;
  native text;
BEGIN
  -- the key sequence: the ORDER BY expressions, without their options
  keyquery := format('SELECT %s FROM (%s) s',
                     regexp_replace(ob, '\s+(DESC|ASC|NULLS FIRST|NULLS LAST)', '', 'g'), query);
  IF NOT uses_gpusort(query) THEN
    RETURN 'no GpuSort';
  END IF;
  IF unique_order THEN
    IF result_text(query) <> native_text(query) THEN
      RETURN 'rows differ';
    END IF;
  ELSE
    IF result_text(keyquery) <> native_text(keyquery) THEN
      RETURN 'key order differs';
    END IF;
    EXECUTE rowsum INTO ours;
    PERFORM set_config('gpusort.enabled', 'off', true);
    EXECUTE rowsum INTO native;
    PERFORM set_config('gpusort.enabled', 'on', true);
    IF ours <> native THEN
      RETURN 'rows differ';
    END IF;
  END IF;
  RETURN 'ok';
END
$$;

-- Every (shape, ORDER BY) pair: the failures, then how many were checked.
CREATE TABLE diff_results AS
  SELECT s.shape, o.ob,
         diff_check(format('diff_data WHERE shape = %L', s.shape), o.ob) AS result
  FROM (SELECT DISTINCT shape FROM diff_data) s, diff_orders o;
SELECT shape, ob, result FROM diff_results WHERE result <> 'ok' ORDER BY 1, 2;
SELECT result, count(*) FROM diff_results GROUP BY result ORDER BY result;

-- Every key type of the codec table, with its edge values: NaN, -0 and
-- the infinities of floats, infinite timestamps and dates, numeric from
-- 1e-300 to 1e300 and of several scales, uuids alike in their first word,
-- text empty, multibyte, with equal 8-byte prefixes and with a long shared
-- start, bpchar with trailing spaces, bytea, NULLs everywhere; under the C,
-- an ICU (where built with ICU) and the database's collation; alone and
-- mixed with other types.
DO $$
BEGIN
  CREATE COLLATION diff_icu (provider = icu, locale = 'en');
EXCEPTION WHEN OTHERS THEN
  CREATE COLLATION diff_icu FROM "C";
END
$$;
CREATE TABLE diff_types AS
  SELECT g AS id,
         CASE g % 13 WHEN 0 THEN NULL WHEN 1 THEN 'infinity'::timestamp WHEN 2 THEN '-infinity'
              ELSE '2000-01-01'::timestamp + (hashint4(g) % 100000) * interval '1 min' END AS ts,
         CASE g % 13 WHEN 3 THEN NULL WHEN 4 THEN 'infinity'::timestamptz WHEN 5 THEN '-infinity'
              ELSE '2000-01-01 00:00+00'::timestamptz + (hashint4(g + 1) % 100000) * interval '1 s' END AS tz,
         CASE g % 13 WHEN 6 THEN NULL WHEN 7 THEN 'infinity'::date WHEN 8 THEN '-infinity'
              ELSE DATE '2000-01-01' + hashint4(g + 2) % 3000 END AS d,
         CASE WHEN g % 17 = 0 THEN NULL ELSE time '00:00' + (hashint4(g + 3) % 86400) * interval '1 s' END AS tm,
         (CASE g % 11 WHEN 0 THEN NULL WHEN 1 THEN 'NaN' WHEN 2 THEN '-0' WHEN 3 THEN 'Infinity'
              WHEN 4 THEN '-Infinity' WHEN 5 THEN '0' ELSE (hashint4(g + 4) % 1000) / 7.0 END)::float4 AS f4,
         (CASE g % 11 WHEN 6 THEN NULL WHEN 7 THEN 'NaN' WHEN 8 THEN '-0' WHEN 9 THEN 'Infinity'
              WHEN 10 THEN '-Infinity' WHEN 0 THEN '0' ELSE (hashint4(g + 5) % 100000) / 7.0 END)::float8 AS f8,
         CASE WHEN g % 5 = 0 THEN NULL ELSE g % 3 = 0 END AS b,
         ((hashint4(g + 6)::int8 + 2147483648) % 4294967296)::oid AS o,
         CASE WHEN g % 19 = 0 THEN NULL ELSE ((hashint4(g + 7) % 10000000)::numeric / 100)::money END AS m,
         CASE WHEN g % 23 = 0 THEN NULL
              ELSE ('a0eebc99-9c0b-4ef8-bb6d-' || lpad(to_hex(hashint4(g + 8) % 3000 + 3000), 12, '0'))::uuid END AS u,
         CASE g % 11 WHEN 0 THEN NULL WHEN 1 THEN 'NaN' WHEN 2 THEN 'Infinity' WHEN 3 THEN '-Infinity'
              WHEN 4 THEN (hashint4(g) % 1000) * ('1e' || hashint4(g + 9) % 300)::numeric
              WHEN 5 THEN round((hashint4(g) % 100)::numeric / 8, g % 6)
              ELSE (hashint4(g + 9) % 1000000)::numeric / 999 END AS n,
         CASE g % 9 WHEN 0 THEN NULL WHEN 1 THEN '' WHEN 2 THEN 'Ärger ' || g % 50
              WHEN 3 THEN 'https://example.com/a/shared/path/' || md5(g::text)
              WHEN 4 THEN 'abcdefgh' || g % 7 WHEN 5 THEN 'ß' || g % 11 WHEN 6 THEN 'ÉCOLE' || g % 5
              ELSE md5((g % 2000)::text) END AS t,
         (CASE WHEN g % 7 = 0 THEN NULL WHEN g % 3 = 0 THEN 'ab' ELSE 'ab  ' || g % 20 END)::char(8) AS c,
         CASE WHEN g % 29 = 0 THEN NULL ELSE decode(repeat('00', g % 3) || md5((g % 700)::text), 'hex') END AS by
  FROM generate_series(1, 12000) g;
ANALYZE diff_types;
CREATE TABLE diff_type_orders (ob text);
INSERT INTO diff_type_orders
  SELECT format('%s%s, id', c, o)
  FROM unnest(ARRAY['ts', 'tz', 'd', 'tm', 'f4', 'f8', 'b', 'o', 'm', 'u', 'n',
                    't COLLATE "C"', 't COLLATE diff_icu', 't', 'c COLLATE "C"', 'c COLLATE diff_icu',
                    'c', 'by']) c,
       unnest(ARRAY['', ' DESC', ' NULLS FIRST', ' DESC NULLS LAST']) o;
INSERT INTO diff_type_orders VALUES
  ('ts'), ('d DESC'), ('u'), ('t COLLATE "C"'), ('o DESC NULLS FIRST'),
  ('d, ts DESC, id'), ('b, f8, id'), ('u DESC, t COLLATE "C", id'), ('n DESC NULLS LAST, ts, id'),
  ('t COLLATE "C", n, id'), ('t COLLATE diff_icu DESC, d, id'), ('c, f4 NULLS FIRST, id'),
  ('m, tz DESC, id'), ('by DESC, u, id'), ('tm, t, id'), ('f8 DESC, n, o, id');
CREATE TABLE diff_type_results AS
  SELECT ob, diff_check('diff_types', ob) AS result FROM diff_type_orders;
SELECT ob, result FROM diff_type_results WHERE result <> 'ok' ORDER BY 1;
SELECT result, count(*) FROM diff_type_results GROUP BY result ORDER BY result;

-- A large input, whose tuple blocks and arrays the prefault threads map
-- ahead of the backend: the same rows as PostgreSQL's, with the threads
-- and without them, with huge pages asked for or not, with NULL-led rows on
-- either side.
CREATE TABLE diff_large AS
  SELECT g AS id, CASE WHEN g % 50 = 0 THEN NULL ELSE hashint4(g) % 100000 END AS k,
         repeat('x', g % 40) AS pad
  FROM generate_series(1, 600000) g;
ANALYZE diff_large;
SELECT uses_gpusort('SELECT * FROM diff_large ORDER BY k, id') AS gpusort_used;
SELECT threads, huge, nulls,
       result_text(format('SELECT * FROM diff_large ORDER BY k %s, id', nulls)) =
       native_text(format('SELECT * FROM diff_large ORDER BY k %s, id', nulls)) AS same
FROM (VALUES (0, 'off'), (4, 'off'), (4, 'on')) t(threads, huge),
     (VALUES ('NULLS FIRST'), ('NULLS LAST')) n(nulls),
     LATERAL set_config('gpusort.prefault_threads', threads::text, false) s,
     LATERAL set_config('gpusort.huge_pages', huge, false) h
ORDER BY threads, huge, nulls;
RESET gpusort.prefault_threads;
RESET gpusort.huge_pages;

-- Keys read straight from heap tuples of several layouts: after a column of
-- variable length and a dropped one, behind NULLs, and in a column added
-- with a default, which the rows stored before it lack.
CREATE TABLE diff_layout (id int, t text, gone int8, k4 int4);
INSERT INTO diff_layout
  SELECT g, CASE WHEN g % 7 = 0 THEN NULL ELSE repeat('y', g % 30) END, g,
         CASE WHEN g % 11 = 0 THEN NULL ELSE hashint4(g) % 1000 END
  FROM generate_series(1, 20000) g;
ALTER TABLE diff_layout DROP COLUMN gone;
ALTER TABLE diff_layout ADD COLUMN k8 int8 DEFAULT -42;
INSERT INTO diff_layout
  SELECT g, repeat('z', g % 5), hashint4(g) % 1000, hashint8(g) % 100000
  FROM generate_series(20001, 40000) g;
ANALYZE diff_layout;
SELECT ob, uses_gpusort(q) AS gpusort_used, result_text(q) = native_text(q) AS same
FROM (VALUES ('k4, id'), ('k8 DESC, id'), ('k8, k4 NULLS FIRST, id')) o(ob),
     LATERAL format('SELECT * FROM diff_layout ORDER BY %s', ob) q
ORDER BY ob;

-- Some of their columns, read from the table's pages where the scan returns
-- them as they are: past the dropped column, behind the column of variable
-- length, and past a column added with a default that the rows stored
-- before it lack (not returned: its value is not needed); beside constants
-- (of the query, or the NULLs the planner puts for a subquery's columns that
-- nothing reads), and an ORDER BY column not selected (a junk column of the
-- scan's); a column with such a default that is returned is filled in by the
-- scan's projection, over the tuple.
CREATE TABLE diff_added (a int);
INSERT INTO diff_added SELECT g FROM generate_series(1, 3000) g;
ALTER TABLE diff_added ADD COLUMN b int DEFAULT 5;
ALTER TABLE diff_added ADD COLUMN c int;
INSERT INTO diff_added SELECT g, g % 3, hashint4(g) % 100 FROM generate_series(3001, 6000) g;
ANALYZE diff_added;
SELECT q, result_text(q) = native_text(q) AS same,
       EXISTS (SELECT FROM explain_analyze(q) l WHERE l ~ 'Input Read') AS from_pages
FROM (VALUES ('SELECT id, k4 FROM diff_layout ORDER BY k4, id'),
             ('SELECT k4, id FROM diff_layout ORDER BY k4 DESC, id'),
             ('SELECT id, k8 FROM diff_layout ORDER BY k8, id'),
             ('SELECT a, c FROM diff_added ORDER BY c NULLS FIRST, a'),
             ('SELECT c, a FROM diff_added ORDER BY c DESC, a'),
             ('SELECT a, b FROM diff_added ORDER BY b, a'),
             ('SELECT k4, ''x''::text AS c, id, NULL::int AS n FROM diff_layout ORDER BY k4, id'),
             ('SELECT id, k4 FROM (SELECT id, t, k4 FROM diff_layout ORDER BY k4 DESC, id OFFSET 0) s'),
             ('SELECT id FROM diff_layout ORDER BY k4 DESC, id')) v(q)
ORDER BY q COLLATE "C";

-- Keys past columns of variable length, short and long (1- and 4-byte
-- headers, then aligned), read from heap tuples as the scan returns them
-- (no dropped column: the scan does not project), in rows with and without
-- NULLs.
CREATE TABLE diff_walk (id int, t text, k4 int4, n numeric, kt text COLLATE "C", kf float8);
INSERT INTO diff_walk
  SELECT g, CASE WHEN g % 7 = 0 THEN NULL ELSE repeat('y', g % 300) END,
         CASE WHEN g % 11 = 0 THEN NULL ELSE hashint4(g) % 1000 END,
         (hashint4(g + 1) % 100000)::numeric / (1 + g % 9),
         CASE WHEN g % 5 = 0 THEN repeat(md5(g::text), 5) ELSE md5(g::text) END,
         hashint4(g + 2) / 7.0
  FROM generate_series(1, 30000) g;
ANALYZE diff_walk;
SELECT ob, uses_gpusort(q) AS gpusort_used, result_text(q) = native_text(q) AS same
FROM (VALUES ('k4, id'), ('kt, id'), ('kf DESC, id'), ('n, kt DESC, id'), ('kt, kf')) o(ob),
     LATERAL format('SELECT * FROM diff_walk ORDER BY %s', ob) q
ORDER BY ob;

-- Under the scan's filter, which GpuSort tests on each tuple as the scan
-- would (a third of the rows removed), under a filter whose parameter
-- changes between rescans (a correlated subquery: the scan is rescanned
-- before the node reads it again), and under one of system columns; where
-- the scan's projection computes a column (its own projection then runs
-- over the tuple); then the same keys read through the node below, a
-- sample scan of every page.
SELECT ob, result_text(q) = native_text(q) AS same,
       EXISTS (SELECT FROM explain_analyze(q) l WHERE l ~ 'Input Read') AS from_pages
FROM (VALUES ('k4, id'), ('kt, id'), ('n, kt DESC, id')) o(ob),
     LATERAL format('SELECT * FROM diff_walk WHERE mod(id, 3) <> 0 ORDER BY %s', ob) q
ORDER BY ob;
SET work_mem = '64kB';
SET gpusort.work_mem = '64kB';
SET gpusort.min_run_rows = 0;
SET gpusort.min_rows = 0;
SELECT result_text(q) = native_text(q) AS same,
       EXISTS (SELECT FROM explain_analyze(q) l WHERE l ~ 'Input Read') AS from_pages
FROM (VALUES ('SELECT x, (SELECT md5(string_agg(id::text, '','')) FROM
                            (SELECT id FROM diff_walk WHERE k4 < x * 200 ORDER BY kt, id) s)
               FROM generate_series(1, 4) x'),
             ('SELECT id FROM diff_walk WHERE tableoid::regclass::text = ''diff_walk''
                AND xmin::text <> ''0'' AND ctid::text > ''(3'' ORDER BY k4, id')) v(q);
RESET work_mem;
RESET gpusort.work_mem;
RESET gpusort.min_run_rows;
RESET gpusort.min_rows;
SELECT ob, result_text(q) = native_text(q) AS same,
       EXISTS (SELECT FROM explain_analyze(q) l WHERE l ~ 'Input Read') AS from_pages
FROM (VALUES ('k4, id'), ('kt, id'), ('n, kt DESC, id')) o(ob),
     LATERAL format('SELECT *, id + 1 AS id1, ctid FROM diff_walk WHERE k4 <> 5 ORDER BY %s', ob) q
ORDER BY ob;
SELECT ob, result_text(q) = native_text(q) AS same,
       NOT EXISTS (SELECT FROM explain_analyze(q) l WHERE l ~ 'Input Read') AS through_node_below
FROM (VALUES ('k4, id'), ('kt, id'), ('n, kt DESC, id')) o(ob),
     LATERAL format('SELECT * FROM diff_walk TABLESAMPLE SYSTEM (100) ORDER BY %s', ob) q
ORDER BY ob;

-- The rows GpuSort reads from the table's pages are the ones the scan
-- would return, counted as the scan's: those this transaction sees (rows
-- deleted, rows updated in their page and moved out of it); also when the
-- store fills, and its rows are spilled or handed to tuplesort, the rest
-- then read by the scan node.
BEGIN;
DELETE FROM diff_walk WHERE id % 4 = 0;
UPDATE diff_walk SET k4 = k4 + 1 WHERE id % 4 = 1;
UPDATE diff_walk SET t = repeat('w', 400) WHERE id % 8 = 2;
CREATE FUNCTION diff_read(q text) RETURNS TABLE (same boolean, explained text)
LANGUAGE sql AS $$
  SELECT result_text(q) = native_text(q),
         (SELECT string_agg(trim(l), ' / ') FROM explain_analyze(q) l
          WHERE l ~ '(Input Read|Seq Scan|Fallback Reason)')
$$;
SELECT * FROM diff_read('SELECT * FROM diff_walk ORDER BY kt, id');
SET LOCAL gpusort.work_mem = '64kB';
SELECT * FROM diff_read('SELECT * FROM diff_walk ORDER BY kt, id');
SET LOCAL gpusort.spill = off;
SELECT * FROM diff_read('SELECT * FROM diff_walk ORDER BY kt, id');
ROLLBACK;

-- No more disk than Sort: at budgets of 1 MB and more, no ORDER BY of the
-- shapes above writes more to its temporary files than Sort writes for it
-- (GpuSort's Disk Used, Sort's Sort Space Used on disk: both the blocks of
-- their temporary files), also where Sort keeps the rows in memory (GpuSort
-- then too, with tuplesort), and where the rows go to tuplesort's method.
CREATE FUNCTION diff_disk_kb(query text) RETURNS int8
LANGUAGE plpgsql AS $$
DECLARE
  doc json;
  node json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, FORMAT JSON) ' || query INTO doc;
  WITH RECURSIVE plans(p) AS (
    SELECT doc -> 0 -> 'Plan'
    UNION ALL
    SELECT json_array_elements(p -> 'Plans') FROM plans WHERE p -> 'Plans' IS NOT NULL)
  SELECT p INTO node FROM plans
  WHERE p ->> 'Node Type' = 'Sort' OR p ->> 'Custom Plan Provider' = 'GpuSort' LIMIT 1;
  IF node ->> 'Disk Used' IS NOT NULL THEN
    RETURN (node ->> 'Disk Used')::int8;
  ELSIF node ->> 'Sort Space Type' = 'Disk' THEN
    RETURN (node ->> 'Sort Space Used')::int8;
  END IF;
  RETURN 0;
END
$$;
CREATE FUNCTION diff_disk(query text, budget text, OUT ours int8, OUT native int8)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('work_mem', budget, true);
  PERFORM set_config('gpusort.work_mem', budget, true);
  ours := diff_disk_kb(query);
  PERFORM set_config('gpusort.enabled', 'off', true);
  native := diff_disk_kb(query);
  PERFORM set_config('gpusort.enabled', 'on', true);
END
$$;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE diff_disk_results AS
  SELECT b.budget, s.shape, o.ob,
         (diff_disk(format('SELECT * FROM diff_data WHERE shape = %L ORDER BY %s',
                           s.shape, o.ob), b.budget)).*
  FROM (VALUES ('1MB'), ('2MB'), ('4MB')) b(budget),
       (SELECT DISTINCT shape FROM diff_data) s, diff_orders o;
SELECT budget, shape, ob, ours, native FROM diff_disk_results WHERE ours > native
ORDER BY 1, 2, 3;
SELECT count(*) AS orders, bool_or(native > 0) AS some_spilled,
       bool_or(native = 0) AS some_in_memory
FROM diff_disk_results;
RESET max_parallel_workers_per_gather;
