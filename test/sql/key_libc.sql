-- Text under a libc collation other than C: PostgreSQL compares it with
-- strcoll() and makes no abbreviated keys; GpuSort keys it with strxfrm(),
-- checks the order those keys give with strcoll(), and repairs it with the
-- comparator where it is wrong (keys/xfrm_keys.h).  The collation is
-- en_US.utf8 where the system has it, else C.UTF-8 (libc, but not "C" to
-- PostgreSQL); every check compares with Sort, so the output is the same.
SET gpusort.min_rows = 0;
SET work_mem = '64MB';
SELECT coalesce((SELECT collcollate FROM pg_collation
                 WHERE collprovider = 'c' AND collcollate IN ('en_US.utf8', 'en_US.UTF-8')
                 ORDER BY collcollate LIMIT 1), 'C.UTF-8') AS libc_locale \gset
CREATE COLLATION kl (provider = libc, locale = :'libc_locale');

-- Edge values: empty strings, case and accents (equal at the first level
-- of en_US), punctuation (ignored there at the first level), multibyte
-- text, long shared prefixes, values longer than the 256 bytes strxfrm()
-- sees, compressed and out-of-line values that differ only at their end,
-- bpchar's trailing spaces, NULLs.
CREATE TABLE kl_t (id int, t text COLLATE kl, c char(6) COLLATE kl, v varchar(40) COLLATE kl);
ALTER TABLE kl_t ALTER COLUMN t SET STORAGE EXTERNAL;
INSERT INTO kl_t
  SELECT g,
         CASE g % 16
           WHEN 0 THEN NULL
           WHEN 1 THEN ''
           WHEN 2 THEN upper(md5((g % 50)::text))
           WHEN 3 THEN md5((g % 50)::text)
           WHEN 4 THEN '-' || md5((g % 50)::text)
           WHEN 5 THEN 'é' || (g % 7)
           WHEN 6 THEN 'e' || (g % 7)
           WHEN 7 THEN 'É' || (g % 7)
           WHEN 8 THEN 'straße ' || (g % 9)
           WHEN 9 THEN '日本語 ' || (g % 9)
           WHEN 10 THEN 'https://example.com/a/shared/path/' || md5((g % 40)::text)
           WHEN 11 THEN repeat('x', 300) || (g % 13)
           WHEN 12 THEN repeat('y', 3000) || (g % 13)
           WHEN 13 THEN 'a b ' || g % 5
           WHEN 14 THEN 'ab' || g % 5
           ELSE md5(g::text)
         END,
         CASE WHEN g % 11 = 0 THEN NULL ELSE substr(md5((g % 30)::text), 1, g % 4) || repeat(' ', g % 3) END,
         CASE WHEN g % 9 = 0 THEN NULL ELSE initcap(md5((g % 200)::text)) END
  FROM generate_series(1, 6000) g;
ANALYZE kl_t;

-- Every order is Sort's, and the strxfrm() keys sort it.
SELECT same_as_native('SELECT id FROM kl_t ORDER BY t, id');
SELECT same_as_native('SELECT id FROM kl_t ORDER BY t DESC, id');
SELECT same_as_native('SELECT id FROM kl_t ORDER BY t NULLS FIRST, id DESC');
SELECT same_as_native('SELECT id FROM kl_t ORDER BY t DESC NULLS LAST, id');
SELECT same_as_native('SELECT id FROM kl_t ORDER BY c, id');
SELECT same_as_native('SELECT id FROM kl_t ORDER BY c DESC, id');
SELECT same_as_native('SELECT id FROM kl_t ORDER BY v, id');
SELECT same_as_native('SELECT id FROM kl_t ORDER BY id % 5, t, id');
SELECT same_as_native('SELECT id FROM kl_t ORDER BY id % 5 DESC, t DESC NULLS LAST, id');
SELECT same_as_native('SELECT id FROM kl_t ORDER BY t, c, v, id');
SELECT same_as_native('SELECT t FROM kl_t ORDER BY t');
-- (How many rows tie on their keys depends on the locale's data: not shown.)
SELECT line FROM explain_analyze('SELECT id FROM kl_t WHERE id <= 100 ORDER BY t') AS line
WHERE line ~ 'Sort Key|Inversions';

-- strxfrm() keys that disagree with strcoll(): every third key is made
-- wrong on purpose.  The check finds the inversions and the comparator
-- repairs them: the rows still come in Sort's order.
SET gpusort.xfrm_scramble = 3;
SELECT same_as_native('SELECT id FROM kl_t ORDER BY t, id');
SELECT same_as_native('SELECT id FROM kl_t ORDER BY t DESC NULLS LAST, id');
SELECT same_as_native('SELECT id FROM kl_t ORDER BY id % 5, t, id');
SELECT same_as_native('SELECT id FROM kl_t ORDER BY c, id');
SELECT line ~ 'strxfrm Inversions Repaired: [1-9]' AS repaired
FROM explain_analyze('SELECT id FROM kl_t ORDER BY t') AS line
WHERE line ~ 'Inversions';
SET gpusort.xfrm_scramble = 1;
SELECT same_as_native('SELECT id FROM kl_t ORDER BY t, id');
RESET gpusort.xfrm_scramble;
-- Only superusers may scramble keys.
CREATE ROLE kl_user;
SET ROLE kl_user;
SET gpusort.xfrm_scramble = 3;
RESET ROLE;
DROP ROLE kl_user;

-- Values that all start alike (URLs, paths) are keyed past that start, cut
-- at a whole character (é and è share their first byte in UTF-8): the keys
-- then tell them apart.  A value that is only the start sorts first.
CREATE TABLE kl_url AS
  SELECT g AS id,
         CASE WHEN g % 50 = 0 THEN NULL
              WHEN g % 49 = 0 THEN 'https://example.com/é'
              ELSE 'https://example.com/' || CASE WHEN g % 2 = 0 THEN 'é' ELSE 'è' END
                   || md5(g::text) END AS url
  FROM generate_series(1, 5000) g;
ANALYZE kl_url;
SELECT same_as_native('SELECT id FROM kl_url ORDER BY url COLLATE kl, id');
SELECT same_as_native('SELECT id FROM kl_url ORDER BY url COLLATE kl DESC NULLS LAST, id');
SELECT same_as_native('SELECT id FROM kl_url ORDER BY url COLLATE "C", id');
SELECT same_as_native('SELECT id FROM kl_url ORDER BY url COLLATE "C" DESC, id');
SELECT same_as_native('SELECT id FROM kl_url ORDER BY id % 3, url COLLATE kl, id');
SELECT line FROM explain_analyze('SELECT id FROM kl_url ORDER BY url COLLATE kl') AS line
WHERE line ~ 'Kinds|Skipped';

-- Text whose first characters repeat (as TPC-H's comments): the keys' words
-- after the first (32 bytes of strxfrm() in all) tell the rows apart, and
-- few are left to the comparator; keys made wrong are still repaired.
CREATE TABLE kl_words AS
  SELECT g AS id, (ARRAY['ab', 'cd', 'ef'])[1 + g % 3] || ' ' ||
                  (ARRAY['gh', 'ij', 'kl', 'mn'])[1 + g / 3 % 4] || ' ' || md5(g::text) AS w
  FROM generate_series(1, 20000) g;
ANALYZE kl_words;
SELECT same_as_native('SELECT id FROM kl_words ORDER BY w COLLATE kl, id');
SELECT same_as_native('SELECT id FROM kl_words ORDER BY w COLLATE kl DESC, id');
SELECT same_as_native('SELECT id FROM kl_words ORDER BY id % 2, w COLLATE kl, id');
SELECT substring(line FROM 'Comparators: (\d+)')::int < 2000 AS few_left
FROM explain_analyze('SELECT id FROM kl_words ORDER BY w COLLATE kl') line
WHERE line ~ 'Rows Ordered by Comparators';
SET gpusort.xfrm_scramble = 3;
SELECT same_as_native('SELECT id FROM kl_words ORDER BY w COLLATE kl, id');
RESET gpusort.xfrm_scramble;
SELECT line FROM explain_analyze('SELECT id FROM kl_url ORDER BY url COLLATE "C"') AS line
WHERE line ~ 'Kinds|Skipped';
DROP TABLE kl_url;

-- With no helper threads, the backend makes and checks the keys alone.
SET gpusort.key_threads = 0;
SELECT same_as_native('SELECT id FROM kl_t ORDER BY t, id');
RESET gpusort.key_threads;

-- A cancel while keys are made or checked ends the statement at once.
CREATE TABLE kl_big AS
  SELECT g AS id, repeat(md5(g::text), 8) AS t FROM generate_series(1, 200000) g;
ANALYZE kl_big;
SET statement_timeout = '50ms';
SELECT count(*) FROM (SELECT * FROM kl_big ORDER BY t COLLATE kl OFFSET 0) s;
RESET statement_timeout;
SELECT same_as_native('SELECT id FROM kl_big WHERE id % 20 = 0 ORDER BY t COLLATE kl');

-- The database's default collation, where it is a libc one other than C.
SELECT current_database() AS regress_db \gset
CREATE DATABASE kl_db TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER libc
  LC_COLLATE :'libc_locale' LC_CTYPE :'libc_locale';
\c kl_db
SET gpusort.min_rows = 0;
SELECT datlocprovider = 'c' AND datcollate NOT IN ('C', 'POSIX') AS libc_default FROM pg_database
WHERE datname = current_database();
CREATE TABLE d AS SELECT g AS id, md5(g::text) || CASE WHEN g % 3 = 0 THEN 'A' ELSE 'a' END AS t
  FROM generate_series(1, 5000) g;
SET gpusort.enabled = off;
CREATE TABLE d_native AS SELECT row_number() OVER () AS n, id FROM (SELECT id FROM d ORDER BY t, id OFFSET 0) s;
SET gpusort.enabled = on;
CREATE TABLE d_ours AS SELECT row_number() OVER () AS n, id FROM (SELECT id FROM d ORDER BY t, id OFFSET 0) s;
SELECT count(*) AS rows, count(*) FILTER (WHERE o.id = n.id) AS same
FROM d_ours o JOIN d_native n USING (n);
CREATE FUNCTION key_kinds(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
    IF line ~ 'Sort Key' THEN
      RETURN NEXT line;
    END IF;
  END LOOP;
END
$$;
SELECT key_kinds('SELECT * FROM d ORDER BY t');
\c :regress_db
DROP DATABASE kl_db;

DROP TABLE kl_t, kl_big;
DROP COLLATION kl;
