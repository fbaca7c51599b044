-- GpuSort orders every integer key type, in every direction and NULL
-- placement, with trailing keys of any type, as Sort does.
SET gpusort.min_rows = 0;
SET work_mem = '64MB';

CREATE DOMAIN posint AS int4 CHECK (VALUE > 0);
CREATE TABLE types_t (i2 int2, i4 int4, i8 int8, p posint, t text, f float8, n numeric);
INSERT INTO types_t VALUES
  (0, 0, 0, 1, 'a', 0.5, 1.5),
  (-32768, -2147483648, -9223372036854775808, 2, 'b', -1, 2),
  (32767, 2147483647, 9223372036854775807, 3, 'c', 'NaN', -3),
  (NULL, NULL, NULL, 4, NULL, NULL, NULL),
  (-1, -1, -1, 5, 'e', '-Infinity', 0),
  (1, 1, 1, 6, 'f', 'Infinity', 0.001),
  (1, 1, 1, 7, 'g', -0.0, -0.001),
  (NULL, 5, NULL, 8, 'h', 2, NULL),
  (7, NULL, 7, 9, 'i', 3, 7);

SELECT i2, p FROM types_t ORDER BY i2, p;
SELECT i4, p FROM types_t ORDER BY i4 DESC, p;
SELECT i8, p FROM types_t ORDER BY i8 NULLS FIRST, p DESC;
SELECT i8, p FROM types_t ORDER BY i8 DESC NULLS LAST, p;
SELECT p, i2 FROM types_t ORDER BY p DESC;
SELECT i2, t FROM types_t ORDER BY i2 DESC, t NULLS FIRST;
SELECT i4, f FROM types_t ORDER BY i4, f DESC;
SELECT i2, i8, n FROM types_t ORDER BY i2, i8 DESC NULLS FIRST, n;
SELECT i4 % 2 AS odd, i8 FROM types_t ORDER BY i4 % 2, i8 DESC;
SELECT uses_gpusort('SELECT * FROM types_t ORDER BY i2, p');

-- Empty input and a single row.
SELECT * FROM types_t WHERE false ORDER BY i4;
SELECT i4, p FROM types_t WHERE p = 3 ORDER BY i4;

-- Larger inputs against Sort: duplicates, extremes, NULLs, many key shapes.
CREATE TABLE types_big AS
  SELECT g AS id,
         (CASE WHEN g % 17 = 0 THEN NULL ELSE (g * 31) % 200 - 100 END)::int2 AS i2,
         (CASE WHEN g % 13 = 0 THEN NULL
               WHEN g % 101 = 0 THEN -2147483648
               WHEN g % 103 = 0 THEN 2147483647
               ELSE (g::int8 * 2654435761) % 4294967296 - 2147483648 END)::int4 AS i4,
         (CASE WHEN g % 11 = 0 THEN NULL
               WHEN g % 97 = 0 THEN -9223372036854775808
               WHEN g % 89 = 0 THEN 9223372036854775807
               ELSE (g::int8 * 1000003) % 1000 END)::int8 AS i8,
         md5(g::text) AS t,
         (g % 7) / 3.0 AS f
  FROM generate_series(1, 20000) g;
ANALYZE types_big;

SELECT same_as_native('SELECT i2, id FROM types_big ORDER BY i2, id');
SELECT same_as_native('SELECT i2, id FROM types_big ORDER BY i2 DESC NULLS LAST, id');
SELECT same_as_native('SELECT i4, id FROM types_big ORDER BY i4 NULLS FIRST, id DESC');
SELECT same_as_native('SELECT i8, id FROM types_big ORDER BY i8 DESC, id');
SELECT same_as_native('SELECT i8, i4, id FROM types_big ORDER BY i8, i4 DESC, id');
SELECT same_as_native('SELECT i2, i8, id FROM types_big ORDER BY i2 NULLS FIRST, i8 NULLS FIRST, id');
SELECT same_as_native('SELECT i2, i8, id FROM types_big ORDER BY i2, i8 DESC NULLS LAST, id DESC');
SELECT same_as_native('SELECT i2, t FROM types_big ORDER BY i2, t');
SELECT same_as_native('SELECT i2, f, t FROM types_big ORDER BY i2 DESC, f DESC, t DESC');
SELECT same_as_native('SELECT i4 % 10, id FROM types_big ORDER BY i4 % 10, id');
SELECT same_as_native('SELECT * FROM types_big ORDER BY id DESC');
SELECT same_as_native('SELECT * FROM types_big ORDER BY i2, i4, i8, id');

-- Rows that are only their integer key keep no tuple: the key is decoded.
SELECT same_as_native('SELECT i2 FROM types_big ORDER BY i2');
SELECT same_as_native('SELECT i4 FROM types_big ORDER BY i4 DESC');
SELECT same_as_native('SELECT i8 FROM types_big ORDER BY i8 NULLS FIRST');
SELECT same_as_native('SELECT i8 FROM types_big ORDER BY i8 DESC NULLS LAST');
SELECT same_as_native('SELECT i4 % 7 FROM types_big ORDER BY 1');
SELECT i8 FROM types_t ORDER BY i8 DESC;

-- At run time, exactly gpusort.min_rows rows run on the engine gpusort.device
-- names, and fewer on the CPU engine (a plan made for more rows, as with
-- stale statistics).
SET gpusort.min_rows = 100;
PREPARE at_min AS SELECT id, i4 FROM types_big WHERE id > 1 ORDER BY i4, id;
SELECT uses_gpusort('EXECUTE at_min');
SET gpusort.min_rows = 19999;
SELECT explain_analyze('EXECUTE at_min');
SELECT same_as_native('EXECUTE at_min');
SET gpusort.min_rows = 20000;
SELECT explain_analyze('EXECUTE at_min');
SELECT same_as_native('EXECUTE at_min');
DEALLOCATE at_min;
RESET gpusort.min_rows;

-- Helper threads copy the sorted rows of a large input ahead of the emit
-- phase, into buffers with room for twice the average row (at least 65536
-- rows, with gpusort.prefault_threads).  A run of rows far larger than the
-- rest fills them, and those rows are read where they lie: first in the
-- order, last, and a NULL key among them.
CREATE TABLE ring_t AS
  SELECT g AS id, CASE WHEN g % 50000 <> 7 THEN hashint4(g) END AS k,
         CASE WHEN hashint4(g) < -2040109465 OR g % 50000 = 7
              THEN repeat(md5(g::text), 55) ELSE md5(g::text) END AS pad
  FROM generate_series(1, 100000) g;
SELECT count(*) FILTER (WHERE length(pad) > 32) AS large_rows FROM ring_t;
SELECT same_as_native('SELECT * FROM ring_t ORDER BY k, id');
SELECT same_as_native('SELECT * FROM ring_t ORDER BY k DESC, id');
SELECT same_as_native('SELECT id, k FROM ring_t ORDER BY k NULLS FIRST, pad, id');
DROP TABLE ring_t;

-- numeric under a typmod whose values have at most 8 base-10000 digits
-- (numeric(15,2), TPC-H's prices) takes exact keys of every digit; without
-- one, or wider, prefix keys whose ties the comparator settles.  NaN,
-- zero, the extremes of each typmod, negatives, NULLs; in memory and at a
-- 64 kB budget.
CREATE TABLE num_t (id int, a numeric(15,2), b numeric(4,4), c numeric(30,0),
                    d numeric(12,6), w numeric(40,2), e numeric);
INSERT INTO num_t
  SELECT g,
         CASE WHEN g % 17 = 0 THEN NULL WHEN g % 19 = 0 THEN 'NaN'
              ELSE round((hashint4(g) % 100000000)::numeric / 100 * (1 - 2 * (g % 3 = 0)::int), 2) END,
         (hashint4(g * 7) % 10000)::numeric / 10000,
         (hashint8(g) % 1000000000000000)::numeric * 1000000000000000,
         round((hashint4(g * 3) % 1000000)::numeric / 1000003, 6),
         (hashint8(g) % 1000000000000000)::numeric * 100000000000000 + 0.01,
         g::numeric / 7
  FROM generate_series(1, 20000) g;
INSERT INTO num_t VALUES
  (-1, 0, 0, 0, 0, 0, 0), (-2, -0.01, -0.0001, -1, -0.000001, -0.01, 0),
  (-3, 9999999999999.99, 0.9999, 999999999999999999999999999999, 999999.999999,
   99999999999999999999999999999999999999.99, 1),
  (-4, -9999999999999.99, -0.9999, -999999999999999999999999999999, -999999.999999,
   -99999999999999999999999999999999999999.99, 1),
  (-5, 1.5, 0.5, 15, 1.5, 1.5, 1.5), (-6, 1.50, 0.50, 15, 1.500000, 1.50, 1.50);
ANALYZE num_t;
SELECT regexp_replace(line, '^ +', '') AS kinds
FROM explain_analyze('SELECT * FROM num_t ORDER BY a, b DESC, c, d, w, e') line
WHERE line ~ 'Sort Key Kinds';
SELECT same_as_native('SELECT id, a FROM num_t ORDER BY a, id');
SELECT same_as_native('SELECT id, a FROM num_t ORDER BY a DESC NULLS LAST, id');
SELECT same_as_native('SELECT id, b FROM num_t ORDER BY b NULLS FIRST, id DESC');
SELECT same_as_native('SELECT id, c FROM num_t ORDER BY c DESC, id');
SELECT same_as_native('SELECT id, d, a FROM num_t ORDER BY d, a DESC, id');
SELECT same_as_native('SELECT id, w FROM num_t ORDER BY w, id');
SELECT same_as_native('SELECT a, b FROM num_t ORDER BY a, b');
SET gpusort.work_mem = '64kB';
SET work_mem = '64kB';
SELECT same_as_native('SELECT * FROM num_t ORDER BY a, id');
SELECT same_as_native('SELECT * FROM num_t ORDER BY a DESC, d NULLS FIRST, id');
RESET gpusort.work_mem;
SET work_mem = '64MB';
DROP TABLE num_t;

-- interval takes exact keys of its span (months of 30 days, days of 24
-- hours): intervals of one span ('1 mon', '30 days', '720 hours') are
-- equal, as PostgreSQL compares them, and the next key orders them.
CREATE TABLE iv_t AS
  SELECT g AS id,
         CASE WHEN g % 13 = 0 THEN NULL
              WHEN g % 7 = 0 THEN (ARRAY['1 mon', '30 days', '720 hours', '-1 mon', '0',
                                         '178000000 years', '-178000000 years',
                                         '1 day -24 hours 0.000001 sec'])[1 + g % 8]::interval
              ELSE make_interval(months => (hashint4(g) % 1000), days => (hashint4(g * 3) % 100),
                                 secs => (hashint4(g * 7) % 100000) / 1000.0) END AS iv
  FROM generate_series(1, 20000) g;
ANALYZE iv_t;
SELECT regexp_replace(line, '^ +', '') AS kinds
FROM explain_analyze('SELECT * FROM iv_t ORDER BY iv, id') line
WHERE line ~ 'Sort Key Kinds';
SELECT same_as_native('SELECT id, iv FROM iv_t ORDER BY iv, id');
SELECT same_as_native('SELECT id, iv FROM iv_t ORDER BY iv DESC NULLS LAST, id DESC');
SELECT same_as_native('SELECT id FROM iv_t ORDER BY iv NULLS FIRST, id');
DROP TABLE iv_t;
