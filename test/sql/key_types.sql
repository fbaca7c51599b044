-- Every exact key type of the codec table (keys/key_codec.c) as a leading
-- and as a later key, both directions, both NULL placements, edge values,
-- domains, the keys-only path, and larger inputs against Sort.
SET gpusort.min_rows = 0;
SET work_mem = '64MB';

CREATE DOMAIN stamp AS timestamp CHECK (VALUE > '1900-01-01');
CREATE TABLE kt (id int, ts timestamp, tz timestamptz, d date, tm time,
                 f4 float4, f8 float8, b bool, o oid, m money, u uuid, s stamp);
INSERT INTO kt VALUES
  (1, '2024-01-01 12:00', '2024-01-01 12:00+00', '2024-01-01', '12:00', 1.5, 1.5, true, 1, 1.5, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '2024-01-01'),
  (2, 'infinity', 'infinity', 'infinity', '24:00', 'Infinity', 'Infinity', false, 4294967295, '92233720368547758.07', 'ffffffff-ffff-ffff-ffff-ffffffffffff', 'infinity'),
  (3, '-infinity', '-infinity', '-infinity', '00:00', '-Infinity', '-Infinity', true, 0, '-92233720368547758.08', '00000000-0000-0000-0000-000000000000', '1900-01-02'),
  (4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (5, '1999-12-31 23:59:59.999999', '1999-12-31 23:59:59.999999+05', '1999-12-31', '23:59:59.999999', 'NaN', 'NaN', false, 7, 0, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12', '1999-12-31'),
  (6, '2024-01-01 12:00', '2024-01-01 07:00-05', '2024-01-01', '12:00', '-0', '-0', true, 1, -1.5, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '2024-01-01'),
  (7, '1970-01-01', '1970-01-01 00:00+00', '1970-01-01', '00:00:00.000001', 0, 0, NULL, 2, 0.01, 'a0eebc99-0000-4ef8-bb6d-6bb9bd380a11', NULL),
  (8, '4714-11-24 00:00 BC', '4714-11-24 00:00+00 BC', '4714-11-24 BC', '06:00', 3.4e38, 1.7e308, false, 3, 2, '00000000-0000-0000-0000-000000000001', '2000-01-01');
ANALYZE kt;

-- Each type leads a GpuSort; the orders are Sort's, rows in full.
CREATE FUNCTION each_order(col text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  o text;
BEGIN
  FOREACH o IN ARRAY ARRAY['', ' DESC', ' NULLS FIRST', ' DESC NULLS LAST'] LOOP
    RETURN NEXT format('%s%s: %s', col, o,
      same_as_native(format('SELECT id, %s FROM kt ORDER BY %s%s, id', col, col, o)));
    RETURN NEXT format('id, %s%s: %s', col, o,
      same_as_native(format('SELECT id, %s FROM kt ORDER BY (id > 4)::int, %s%s, id', col, col, o)));
  END LOOP;
END
$$;
SELECT each_order(c) FROM unnest(ARRAY['ts', 'tz', 'd', 'tm', 'f4', 'f8', 'b', 'o', 'm', 'u', 's']) c;

-- What the rows look like, for the eye: uuid's two words, floats' NaN and -0.
SELECT id, u FROM kt ORDER BY u DESC NULLS LAST, id;
SELECT id, f8 FROM kt ORDER BY f8, id;
-- A row that is only its key: timestamps come back from their keys; floats
-- and uuids keep their tuples.
SELECT explain_analyze('SELECT ts FROM kt ORDER BY ts');
SELECT ts FROM kt ORDER BY ts DESC;
SELECT f8 FROM kt ORDER BY f8 DESC;
SELECT u FROM kt ORDER BY u;

-- Larger inputs against Sort, with ties and NULLs, mixing types.
CREATE TABLE kt_big AS
  SELECT g AS id,
         CASE WHEN g % 13 = 0 THEN NULL
              ELSE '2000-01-01'::timestamp + (hashint4(g) % 100000) * interval '1 minute' END AS ts,
         CASE WHEN g % 11 = 0 THEN NULL ELSE (hashint4(g + 1) % 1000) / 7.0 END::float8 AS f8,
         CASE WHEN g % 17 = 0 THEN 'NaN'::float4 ELSE (hashint4(g + 2) % 100)::float4 END AS f4,
         CASE WHEN g % 7 = 0 THEN NULL
              ELSE md5((g % 5000)::text)::uuid END AS u,
         (DATE '2020-01-01' + (g % 400)) AS d,
         (g % 3 = 0) AS b
  FROM generate_series(1, 20000) g;
ANALYZE kt_big;
SELECT same_as_native('SELECT id FROM kt_big ORDER BY ts, id');
SELECT same_as_native('SELECT id FROM kt_big ORDER BY ts DESC NULLS LAST, id DESC');
SELECT same_as_native('SELECT id FROM kt_big ORDER BY f8 NULLS FIRST, id');
SELECT same_as_native('SELECT id FROM kt_big ORDER BY f4 DESC, id');
SELECT same_as_native('SELECT id FROM kt_big ORDER BY u, id');
SELECT same_as_native('SELECT id FROM kt_big ORDER BY u DESC NULLS LAST, id');
SELECT same_as_native('SELECT id FROM kt_big ORDER BY d, ts DESC, u, id');
SELECT same_as_native('SELECT id FROM kt_big ORDER BY b, f8, id');
SELECT same_as_native('SELECT id FROM kt_big ORDER BY d DESC, f4, id');
SELECT same_as_native('SELECT id FROM kt_big ORDER BY id % 10, u NULLS FIRST, id');

DROP TABLE kt, kt_big;
DROP FUNCTION each_order(text);
DROP DOMAIN stamp;

-- Prefix keys: text, varchar, bpchar and numeric sort on PostgreSQL's own
-- abbreviated keys, and the rows whose keys tie are ordered by the type's
-- comparator.  C and ICU collations; a libc collation other than C gives no
-- abbreviated keys, and has strxfrm() keys instead (key_libc).
-- An ICU collation where PostgreSQL was built with ICU, else "C" again.
DO $$
BEGIN
  CREATE COLLATION kt_icu (provider = icu, locale = 'en');
EXCEPTION WHEN OTHERS THEN
  CREATE COLLATION kt_icu FROM "C";
END
$$;
CREATE TABLE kp AS
  SELECT g AS id,
         CASE WHEN g % 23 = 0 THEN NULL
              WHEN g % 5 = 0 THEN 'shared prefix of thirty-four bytes ' || md5(g::text)
              WHEN g % 7 = 0 THEN ''
              WHEN g % 11 = 0 THEN 'Ärger ' || g
              ELSE md5((g % 3000)::text) END AS t,
         (md5(g::text))::varchar(20) AS v,
         (CASE WHEN g % 3 = 0 THEN 'ab' ELSE 'ab  ' END || (g % 50))::char(8) AS c,
         CASE WHEN g % 29 = 0 THEN 'NaN'::numeric
              WHEN g % 31 = 0 THEN 'Infinity'::numeric
              WHEN g % 37 = 0 THEN '-Infinity'::numeric
              WHEN g % 13 = 0 THEN NULL
              ELSE (hashint4(g) % 100000)::numeric / 1000 END AS n
  FROM generate_series(1, 20000) g;
ANALYZE kp;
-- The builtin provider (PostgreSQL 17 on; "C" again before) orders by code
-- point, as the bytes of UTF-8 do: its text is keyed by its bytes.
DO $$
BEGIN
  CREATE COLLATION kt_builtin (provider = builtin, locale = 'C.UTF-8');
EXCEPTION WHEN OTHERS THEN
  CREATE COLLATION kt_builtin FROM "C";
END
$$;
SELECT same_as_native('SELECT id FROM kp ORDER BY t COLLATE kt_builtin, id');
SELECT same_as_native('SELECT id FROM kp ORDER BY t COLLATE kt_builtin DESC NULLS LAST, c COLLATE kt_builtin, id');
SELECT same_as_native('SELECT id FROM kp ORDER BY t COLLATE "C", id');
SELECT same_as_native('SELECT id FROM kp ORDER BY t COLLATE "C" DESC NULLS LAST, id');
SELECT same_as_native('SELECT id FROM kp ORDER BY t COLLATE kt_icu, id');
SELECT same_as_native('SELECT id FROM kp ORDER BY t COLLATE kt_icu DESC, id DESC');
SELECT same_as_native('SELECT id FROM kp ORDER BY v COLLATE "C", id');
SELECT same_as_native('SELECT id FROM kp ORDER BY c COLLATE "C", id');
SELECT same_as_native('SELECT id FROM kp ORDER BY n, id');
SELECT same_as_native('SELECT id FROM kp ORDER BY n DESC NULLS LAST, id');
-- numeric is keyed by its sign, weight and first three base-10000 digits,
-- read from the stored value (key_encode_numeric): magnitudes from 1e-300
-- to 1e300 (the short and the long stored forms), values alike in their
-- first twelve digits, equal values of different scales, zero, NaN, the
-- infinities and long values stored out of line.
CREATE TABLE kn (id int, n numeric);
ALTER TABLE kn ALTER COLUMN n SET STORAGE EXTERNAL;
INSERT INTO kn
  SELECT g, CASE g % 11
              WHEN 0 THEN NULL
              WHEN 1 THEN (hashint4(g) % 1000) * ('1e' || hashint4(g + 1) % 300)::numeric
              WHEN 2 THEN -(hashint4(g) % 1000) * ('1e' || hashint4(g + 1) % 300)::numeric
              WHEN 3 THEN 123456789012 + (hashint4(g) % 100)::numeric / 1000000000
              WHEN 4 THEN round((hashint4(g) % 100)::numeric / 8, g % 6)
              WHEN 5 THEN round(0::numeric, g % 4)
              WHEN 6 THEN 'NaN'
              WHEN 7 THEN 'Infinity'
              WHEN 8 THEN '-Infinity'
              WHEN 9 THEN (repeat('9', 5000 + g % 3) || '.5')::numeric * sign(hashint4(g))::numeric
              ELSE (hashint4(g) % 100000)::numeric / 999 END
  FROM generate_series(1, 5000) g;
ANALYZE kn;
SELECT same_as_native('SELECT id FROM kn ORDER BY n, id');
SELECT same_as_native('SELECT id FROM kn ORDER BY n DESC NULLS LAST, id');
SELECT same_as_native('SELECT id FROM kn ORDER BY id % 3, n NULLS FIRST, id');
SELECT id, CASE WHEN length(n::text) > 24 THEN left(n::text, 8) || '... (' || length(n::text) || ' characters)'
               ELSE n::text END AS n
FROM kn WHERE id % 11 IN (1, 2, 3, 5) AND id < 60 ORDER BY kn.n, id;
SELECT same_as_native('SELECT id FROM kp ORDER BY id % 7, t COLLATE "C" NULLS FIRST, id');
SELECT same_as_native('SELECT id FROM kp ORDER BY id % 7, n, id');
SELECT same_as_native('SELECT id FROM kp ORDER BY t COLLATE "C", n, id');
CREATE COLLATION libc_c_utf8 (provider = libc, locale = 'C.UTF-8');
SELECT uses_gpusort('SELECT * FROM kp ORDER BY t COLLATE "POSIX"') AS posix,
       uses_gpusort('SELECT * FROM kp ORDER BY t COLLATE libc_c_utf8') AS libc_c_utf8;
-- EXPLAIN: no key the engine orders completely; the comparators order the
-- rows whose prefixes tie, and those led by NULL.
SELECT explain_analyze('SELECT id FROM kp WHERE id <= 100 ORDER BY t COLLATE "C"');

-- Prefix keys that do not tell the rows apart (every URL shares its first
-- 34 bytes) are given up as the rows come, as tuplesort gives up its
-- abbreviated keys: the comparators order the rows, as under Sort.
CREATE TABLE kp_url AS
  SELECT g AS id, 'https://example.com/a/shared/path/' || md5(g::text) AS url
  FROM generate_series(1, 5000) g;
ANALYZE kp_url;
SELECT same_as_native('SELECT id FROM kp_url ORDER BY url COLLATE "C", id');
SELECT same_as_native('SELECT id FROM kp_url ORDER BY url COLLATE kt_icu DESC, id');
-- Under ICU, keys are made past the sort key bytes that all values share:
-- URLs alike up to their last characters, multibyte ones among them.
CREATE TABLE kp_url_icu AS
  SELECT g AS id, 'https://example.com/a/shared/path/' ||
         (ARRAY['Ärger', 'ecole', 'École', 'z', '', 'ß', 'ss', 'Z'])[1 + g % 8] || g % 50 AS url
  FROM generate_series(1, 3000) g;
SELECT same_as_native('SELECT id FROM kp_url_icu ORDER BY url COLLATE kt_icu, id');
SELECT same_as_native('SELECT id FROM kp_url_icu ORDER BY url COLLATE kt_icu DESC NULLS FIRST, id DESC');
SELECT explain_analyze('SELECT id FROM kp_url ORDER BY url COLLATE "C"');

-- Text under C and bytea are keyed by their first 8 bytes (and EXPLAIN
-- calls them prefix keys too): zero bytes, values shorter than 8 bytes and
-- equal to a longer one's start, compressed and out-of-line values.
CREATE TABLE kb (id int, b bytea, t text COLLATE "C");
ALTER TABLE kb ALTER COLUMN t SET STORAGE EXTERNAL;
INSERT INTO kb
  SELECT g,
         CASE g % 9
           WHEN 0 THEN NULL
           WHEN 1 THEN ''::bytea
           WHEN 2 THEN '\x00'::bytea
           WHEN 3 THEN '\x0000'::bytea
           WHEN 4 THEN decode(md5((g % 40)::text), 'hex')
           WHEN 5 THEN substring(decode(md5((g % 40)::text), 'hex') from 1 for 3)
           WHEN 6 THEN '\xffffffffffffffff'::bytea || int4send(g % 17)
           WHEN 7 THEN decode(repeat(md5((g % 7)::text), 200), 'hex')
           ELSE int8send(hashint8(g))
         END,
         CASE g % 5
           WHEN 0 THEN NULL
           WHEN 1 THEN repeat(md5((g % 11)::text), 100) || g % 3
           WHEN 2 THEN 'abcdefgh' || g % 13
           WHEN 3 THEN 'abcdefg'
           ELSE md5(g::text)
         END
  FROM generate_series(1, 4000) g;
ANALYZE kb;
SELECT same_as_native('SELECT id FROM kb ORDER BY b, id');
SELECT same_as_native('SELECT id FROM kb ORDER BY b DESC NULLS LAST, id');
SELECT same_as_native('SELECT id FROM kb ORDER BY id % 3, b, id');
SELECT same_as_native('SELECT id FROM kb ORDER BY t, id');
SELECT same_as_native('SELECT id FROM kb ORDER BY t DESC, b, id');
SELECT line FROM explain_analyze('SELECT id FROM kb ORDER BY b, t') AS line
WHERE line ~ 'Sort Key';

DROP TABLE kp, kp_url, kb;
DROP COLLATION libc_c_utf8;
DROP COLLATION kt_icu;
