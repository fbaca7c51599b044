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

CREATE FUNCTION diff_check(shape text, ob text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  query text := format('SELECT * FROM diff_data WHERE shape = %L ORDER BY %s', shape, ob);
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
  SELECT s.shape, o.ob, diff_check(s.shape, o.ob) AS result
  FROM (SELECT DISTINCT shape FROM diff_data) s, diff_orders o;
SELECT shape, ob, result FROM diff_results WHERE result <> 'ok' ORDER BY 1, 2;
SELECT result, count(*) FROM diff_results GROUP BY result ORDER BY result;

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
