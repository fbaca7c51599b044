-- Composite orders: GpuSort against PostgreSQL's Sort over orders of 2 to 5
-- sort columns of every type the codecs take as a key (keys/key_codec.c),
-- with a type that has no codec as a later column; mixed directions and
-- NULL placements, NULLs in every column, many ties, edge values, text
-- under C, ICU (where built with ICU) and libc collations with long shared
-- prefixes, empty strings and 10 kB values.  Each order runs as whole rows,
-- as the keys alone and as CREATE TABLE AS, in memory and at a 64 kB budget
-- (out of core).  (Uses the helpers of node_plan.)
-- (the engine's notices differ between hosts with and without a GPU)
SET client_min_messages = warning;
SET gpusort.min_rows = 0;
-- sorted runs however few rows the 64 kB budget holds
SET gpusort.min_run_rows = 0;

DO $$
BEGIN
  CREATE COLLATION comp_icu (provider = icu, locale = 'en');
EXCEPTION WHEN OTHERS THEN
  CREATE COLLATION comp_icu FROM "C";
END
$$;
SELECT coalesce((SELECT collcollate FROM pg_collation
                 WHERE collprovider = 'c' AND collcollate IN ('en_US.utf8', 'en_US.UTF-8')
                 ORDER BY collcollate LIMIT 1), 'C.UTF-8') AS libc_locale \gset
CREATE COLLATION comp_libc (provider = libc, locale = :'libc_locale');

-- A value in 0 .. n - 1, the same on every server, for row g and column salt.
CREATE FUNCTION comp_h(g int, salt int, n int) RETURNS int
LANGUAGE sql IMMUTABLE AS $$ SELECT (hashint4(g * 64 + salt) & 2147483647) % n $$;

-- Text of few distinct values: NULL, empty, case and accents, equal 8-byte
-- prefixes, trailing spaces, a long shared prefix, and a 10 kB value (a few
-- rows) that others share all but their end with.
CREATE FUNCTION comp_text(g int, salt int) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN g % 3001 = 0 THEN repeat('x', 10000) || (g % 4)
              WHEN g % 3001 = 1 THEN repeat('x', 10240)
              ELSE (ARRAY[NULL, '', '', 'a', 'A', 'ab', 'ab ', 'Ärger', 'ärger', 'école',
                          'ecole', 'Zebra', 'zebra', 'ß', 'ss', '日本語', 'abcdefgh1', 'abcdefgh2',
                          'abcdefgh', 'https://example.com/a/long/shared/path/to/some/resource/1',
                          'https://example.com/a/long/shared/path/to/some/resource/2',
                          'https://example.com/a/long/shared/path/to/some/resource/10',
                          'https://example.com/a/long/shared/path/to/some/resource/'])
                   [1 + comp_h(g, salt, 23)] END
$$;

CREATE TABLE comp (
  id int, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, d date, ts timestamp,
  tz timestamptz, tm time, m money, b bool, o oid, u uuid, n numeric,
  tc text COLLATE "C", ti text COLLATE comp_icu, tl text COLLATE comp_libc,
  vc varchar COLLATE "C", vi varchar COLLATE comp_icu,
  cc bpchar COLLATE "C", ci bpchar COLLATE comp_icu,
  by bytea, iv interval, ip inet);
INSERT INTO comp
  SELECT g,
         CASE comp_h(g, 1, 20) WHEN 0 THEN NULL WHEN 1 THEN -32768 WHEN 2 THEN 32767
              ELSE comp_h(g, 2, 7) - 3 END,
         CASE comp_h(g, 3, 20) WHEN 0 THEN NULL WHEN 1 THEN -2147483648 WHEN 2 THEN 2147483647
              ELSE comp_h(g, 4, 9) * 1000 - 4000 END,
         CASE comp_h(g, 5, 20) WHEN 0 THEN NULL WHEN 1 THEN -9223372036854775808
              WHEN 2 THEN 9223372036854775807 ELSE (comp_h(g, 6, 6) - 3) * 1000000000000 END,
         (CASE comp_h(g, 7, 14) WHEN 0 THEN NULL WHEN 1 THEN 'NaN' WHEN 2 THEN '-0' WHEN 3 THEN '0'
              WHEN 4 THEN 'Infinity' WHEN 5 THEN '-Infinity' WHEN 6 THEN '1e-45' WHEN 7 THEN '-3.4e38'
              ELSE ((comp_h(g, 8, 8) - 4) / 4.0)::text END)::float4,
         (CASE comp_h(g, 9, 14) WHEN 0 THEN NULL WHEN 1 THEN 'NaN' WHEN 2 THEN '-0' WHEN 3 THEN '0'
              WHEN 4 THEN 'Infinity' WHEN 5 THEN '-Infinity' WHEN 6 THEN '5e-324' WHEN 7 THEN '-1.7e308'
              ELSE ((comp_h(g, 10, 10) - 5) / 3.0)::text END)::float8,
         CASE comp_h(g, 11, 15) WHEN 0 THEN NULL WHEN 1 THEN 'infinity' WHEN 2 THEN '-infinity'
              WHEN 3 THEN '4713-01-01 BC' WHEN 4 THEN '1999-12-31'
              ELSE DATE '2000-01-01' + (comp_h(g, 12, 12) - 6) * 1000 END,
         CASE comp_h(g, 13, 15) WHEN 0 THEN NULL WHEN 1 THEN 'infinity' WHEN 2 THEN '-infinity'
              WHEN 3 THEN '4714-11-24 00:00 BC' WHEN 4 THEN '1999-12-31 23:59:59.999999'
              ELSE '2000-01-01'::timestamp + (comp_h(g, 14, 12) - 6) * interval '1 day 1 hour 0.000001 s' END,
         CASE comp_h(g, 15, 15) WHEN 0 THEN NULL WHEN 1 THEN 'infinity' WHEN 2 THEN '-infinity'
              WHEN 3 THEN '2024-01-01 12:00+00' WHEN 4 THEN '2024-01-01 07:00-05'
              ELSE '2000-01-01 00:00+00'::timestamptz + (comp_h(g, 16, 12) - 6) * interval '7 hours' END,
         CASE comp_h(g, 17, 12) WHEN 0 THEN NULL WHEN 1 THEN '00:00' WHEN 2 THEN '24:00'
              WHEN 3 THEN '23:59:59.999999' ELSE time '00:00' + comp_h(g, 18, 9) * interval '37 min' END,
         CASE comp_h(g, 19, 12) WHEN 0 THEN NULL WHEN 1 THEN '-92233720368547758.08'::numeric::money
              WHEN 2 THEN '92233720368547758.07'::numeric::money WHEN 3 THEN 0::money
              ELSE ((comp_h(g, 20, 9) - 4) * 1.25)::numeric::money END,
         CASE comp_h(g, 21, 3) WHEN 0 THEN NULL ELSE comp_h(g, 22, 2) = 0 END,
         CASE comp_h(g, 23, 10) WHEN 0 THEN NULL WHEN 1 THEN 0 WHEN 2 THEN 4294967295
              WHEN 3 THEN 2147483648 WHEN 4 THEN 2147483647 ELSE comp_h(g, 24, 5) * 1000 END::oid,
         CASE comp_h(g, 25, 12) WHEN 0 THEN NULL WHEN 1 THEN '00000000-0000-0000-0000-000000000000'
              WHEN 2 THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff' WHEN 3 THEN '80000000-0000-0000-0000-000000000000'
              ELSE ('a0eebc99-9c0b-4ef8-bb6d-' || lpad(comp_h(g, 26, 6)::text, 12, '0'))::uuid END,
         CASE comp_h(g, 27, 16) WHEN 0 THEN NULL WHEN 1 THEN 'NaN' WHEN 2 THEN 'Infinity'
              WHEN 3 THEN '-Infinity' WHEN 4 THEN 0 WHEN 5 THEN 1.0 WHEN 6 THEN 1.00 WHEN 7 THEN -1
              WHEN 8 THEN 1e-300 WHEN 9 THEN -1e300 WHEN 10 THEN 123456789012345678901234567890.123
              WHEN 11 THEN 123456789012345678901234567890.124
              ELSE round((comp_h(g, 28, 20) - 10)::numeric / 7, comp_h(g, 29, 4)) END,
         comp_text(g, 30), comp_text(g, 31), comp_text(g, 32), comp_text(g, 33), comp_text(g, 34),
         comp_text(g, 35), comp_text(g, 36),
         CASE WHEN g % 3001 = 2 THEN decode(repeat('ab', 10240), 'hex')
              ELSE (ARRAY[NULL, '\x', '\x00', '\x0000', '\x00ff', '\xff', '\x7f', '\x80',
                          decode(repeat('ab', 40) || '01', 'hex'), decode(repeat('ab', 40) || '02', 'hex'),
                          decode(repeat('ab', 40), 'hex')]::bytea[])[1 + comp_h(g, 37, 11)] END,
         (ARRAY[NULL, '1 day', '24 hours', '1 mon', '30 days', '-1 day', '0', '1 year', '12 mons',
                '1 min'])[1 + comp_h(g, 38, 10)]::interval,
         (ARRAY[NULL, '10.0.0.1', '10.0.0.1/8', '::1', '192.168.0.0/16', '192.168.0.1',
                '0.0.0.0'])[1 + comp_h(g, 39, 7)]::inet
  FROM generate_series(1, 20000) g;
ANALYZE comp;
SELECT count(*) AS rows, count(*) FILTER (WHERE length(tc) >= 10000) AS long_tc,
       count(*) FILTER (WHERE tc = '') AS empty_tc
FROM comp;
-- the columns that hold NULLs: all but id
SELECT count(DISTINCT key) AS columns_with_nulls
FROM comp, jsonb_each(to_jsonb(comp)) WHERE value = 'null';

-- The orders: every key type leads one, and is a later column of another.
CREATE TABLE comp_orders (ob text);
INSERT INTO comp_orders VALUES
  ('i2, i4 DESC'),
  ('i4 NULLS FIRST, tl DESC, ip'),
  ('i8 DESC NULLS LAST, f4, b NULLS FIRST'),
  ('f4 DESC, f8 NULLS FIRST, i2 DESC NULLS LAST, d'),
  ('f8, tc DESC, ts'),
  ('d DESC NULLS LAST, ts NULLS FIRST, tz DESC, tm'),
  ('ts DESC, m, iv NULLS FIRST'),
  ('tz NULLS FIRST, o DESC, u, n DESC NULLS LAST, by'),
  ('tm DESC NULLS LAST, vi, i8'),
  ('m DESC, b, cc DESC NULLS LAST'),
  ('b, o, n NULLS FIRST, f8 DESC'),
  ('o DESC NULLS LAST, u DESC, ci'),
  ('u NULLS FIRST, i4, tc'),
  ('n, f4 NULLS FIRST, ti DESC, iv DESC'),
  ('tc, vc DESC, cc NULLS FIRST, by DESC'),
  ('ti DESC NULLS LAST, i2, ci, tz'),
  ('tl, d, ip DESC NULLS FIRST'),
  ('vc NULLS FIRST, ti, m DESC, ts, i2 DESC'),
  ('vi DESC, tc NULLS FIRST'),
  ('cc, ci DESC, i8 NULLS FIRST'),
  ('ci NULLS FIRST, vc, f8'),
  ('by NULLS FIRST, d DESC, o, tm DESC NULLS LAST');

-- The sort key columns of an order: its list without the options.
CREATE FUNCTION comp_keys(ob text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT regexp_replace(ob, '\s+(DESC|ASC|NULLS FIRST|NULLS LAST)', '', 'g')
$$;

-- The query of each form of an order: whole rows made unique by id, whole
-- rows with their ties, the sort keys alone (the rows are their keys), and
-- CREATE TABLE AS of the rows made unique by id.
CREATE FUNCTION comp_query(form text, ob text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE form
    WHEN 'rows' THEN format('SELECT * FROM comp ORDER BY %s, id', ob)
    WHEN 'ties' THEN format('SELECT * FROM comp ORDER BY %s', ob)
    WHEN 'keys' THEN format('SELECT %s FROM comp ORDER BY %s', comp_keys(ob), ob)
    WHEN 'ctas' THEN format('CREATE TABLE comp_ctas AS SELECT * FROM comp ORDER BY %s, id', ob)
  END
$$;

-- The rows of a query in the order it returns them: their position, the
-- md5 of their text, the sort key columns of the order ob and, for Sort's
-- rows (native), the md5 of the text of those keys (kt).
CREATE FUNCTION comp_rows(query text, ob text, native boolean) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT format('SELECT row_number() OVER () AS pos, md5(s::text) AS rt, %1$s%2$s FROM (%3$s) s',
                comp_keys(ob), CASE WHEN native THEN format(', md5(ROW(%s)::text) AS kt', comp_keys(ob)) END,
                query)
$$;

-- GpuSort's rows of a form of an order against Sort's (the table
-- comp_native, made by comp_run): 'ok', or how they differ.  Where the
-- order is unique (rows, ctas) the rows must be the same in the same order;
-- else at each position the sort keys must be equal (by their = operators:
-- -0 and 0, 1.0 and 1.00, '1 day' and '24 hours' are), and the rows (or
-- the keys) the same multiset.
CREATE FUNCTION comp_check(form text, ob text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  query text := comp_query(form, ob);
  keys text := comp_keys(ob);
  native_rt text := CASE form WHEN 'keys' THEN 'kt' ELSE 'rt' END;
  exact boolean := form IN ('rows', 'ctas');
  ours int8;
  native int8;
  rows_apart int8;
  keys_apart int8;
  same_multiset boolean;
BEGIN
  IF NOT uses_gpusort(query) THEN
    RETURN 'no GpuSort';
  END IF;
  IF form = 'ctas' THEN
    EXECUTE query;
    -- read back in the order of its pages, by Sort
    PERFORM set_config('gpusort.enabled', 'off', true);
    query := 'SELECT * FROM comp_ctas ORDER BY ctid';
  END IF;
  EXECUTE format($q$
    SELECT count(o.pos), count(n.pos), count(*) FILTER (WHERE o.rt IS DISTINCT FROM n.%1$s),
           count(*) FILTER (WHERE (%2$s) IS DISTINCT FROM (%3$s)),
           %4$s
    FROM (%5$s) o FULL JOIN comp_native n USING (pos)$q$,
                 native_rt, regexp_replace(keys, '(\w+)', 'o.\1', 'g'),
                 regexp_replace(keys, '(\w+)', 'n.\1', 'g'),
                 CASE WHEN exact THEN 'true' ELSE format(
                   'md5(string_agg(o.rt, '''' ORDER BY o.rt COLLATE "C")) =
                    md5(string_agg(n.%1$s, '''' ORDER BY n.%1$s COLLATE "C"))', native_rt) END,
                 comp_rows(query, ob, false))
    INTO ours, native, rows_apart, keys_apart, same_multiset;
  IF form = 'ctas' THEN
    PERFORM set_config('gpusort.enabled', 'on', true);
    DROP TABLE comp_ctas;
  END IF;
  IF ours <> native THEN
    RETURN format('%s rows, Sort %s', ours, native);
  ELSIF exact AND rows_apart > 0 THEN
    RETURN format('%s of %s rows not Sort''s', rows_apart, ours);
  ELSIF keys_apart > 0 OR NOT same_multiset THEN
    RETURN format('%s of %s keys not Sort''s, %s', keys_apart, ours,
                  CASE WHEN same_multiset THEN 'the same rows' ELSE 'other rows' END);
  END IF;
  RETURN 'ok';
END
$$;

-- Every form of an order, at each budget, against Sort's rows of the order
-- made unique by id (native_ob: of another order).
CREATE FUNCTION comp_run(ob text, budgets text[], native_ob text DEFAULT NULL)
RETURNS TABLE (budget text, form text, result text)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('gpusort.enabled', 'off', true);
  EXECUTE 'CREATE TEMP TABLE comp_native AS ' ||
          comp_rows(comp_query('rows', coalesce(native_ob, ob)), ob, true);
  PERFORM set_config('gpusort.enabled', 'on', true);
  FOREACH budget IN ARRAY budgets LOOP
    PERFORM set_config('work_mem', budget, true);
    PERFORM set_config('gpusort.work_mem', budget, true);
    FOREACH form IN ARRAY ARRAY['rows', 'ties', 'keys', 'ctas'] LOOP
      result := comp_check(form, ob);
      RETURN NEXT;
    END LOOP;
  END LOOP;
  DROP TABLE comp_native;
END
$$;

-- The plans are GpuSort's, in each form (serial plans, the same on every
-- host; the checks below take whatever plan comes).
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT * FROM comp ORDER BY tz NULLS FIRST, o DESC, u, n DESC NULLS LAST, by, id;
EXPLAIN (COSTS OFF) SELECT vc, ti, m, ts, i2 FROM comp ORDER BY vc NULLS FIRST, ti, m DESC, ts, i2 DESC;
EXPLAIN (COSTS OFF) CREATE TABLE comp_ctas AS SELECT * FROM comp ORDER BY ti DESC NULLS LAST, i2, ci, tz, id;
RESET max_parallel_workers_per_gather;

-- The check fails where the orders differ: against Sort's rows of an order
-- with one direction turned.
SELECT form, result <> 'ok' AS fails FROM comp_run('i2, i4 DESC', '{256MB}', 'i2, i4');

-- Every order in every form, in memory (256 MB) and at a 64 kB budget
-- (work_mem and gpusort.work_mem): the failures, then how many were checked.
CREATE TABLE comp_results AS
  SELECT ob, r.* FROM comp_orders, comp_run(ob, '{256MB, 64kB}') r;
SELECT budget, ob, form, result FROM comp_results WHERE result <> 'ok' ORDER BY 1, 2, 3;
SELECT budget, form, count(*) AS orders, count(*) FILTER (WHERE result = 'ok') AS same_as_sort
FROM comp_results GROUP BY 1, 2 ORDER BY pg_size_bytes(budget) DESC, 2;

DROP TABLE comp, comp_orders, comp_results;
DROP FUNCTION comp_run(text, text[], text), comp_check(text, text), comp_rows(text, text, boolean),
              comp_query(text, text), comp_keys(text), comp_text(int, int), comp_h(int, int, int);
DROP COLLATION comp_icu;
DROP COLLATION comp_libc;
RESET client_min_messages;
