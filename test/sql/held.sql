-- Inputs over the memory budget that the engine holds (spill_stage.c), with
-- keys that leave ties: text, numeric, keys past four words, keys that no
-- codec encodes.  The store keeps each row's key words after its tuple,
-- and the rows the engine hands back are put in order by them and by the
-- comparators (held_order.h).  gpusort.debug_hold_rows has the CPU engine
-- hold the rows in host memory, as the GPU engine holds them in device
-- memory, so that these paths run on machines without a GPU too.
SET gpusort.min_rows = 0;
SET gpusort.min_run_rows = 0;
SET gpusort.debug_hold_rows = on;
SET work_mem = '64kB';
SET max_parallel_workers_per_gather = 0;
SELECT coalesce((SELECT collcollate FROM pg_collation
                 WHERE collprovider = 'c' AND collcollate IN ('en_US.utf8', 'en_US.UTF-8')
                 ORDER BY collcollate LIMIT 1), 'C.UTF-8') AS libc_locale \gset
CREATE COLLATION held_libc (provider = libc, locale = :'libc_locale');

-- Text sharing long starts (ties of their 8-byte keys under "C" and of
-- their 32-byte strxfrm() keys), equal values, empty strings, long values,
-- NULLs in every column; numeric of no typmod (a prefix key); a key that no
-- codec encodes (an array).
CREATE TABLE held_t (id int, t text, tl text COLLATE held_libc, n numeric,
                     a int4, b int8, c int8, d int4, arr int[], late int8);
INSERT INTO held_t
  SELECT g,
         CASE WHEN g % 17 = 0 THEN NULL
              WHEN g % 13 = 0 THEN ''
              WHEN g % 5 = 0 THEN 'https://example.com/shared/start/' || (g % 97)
              WHEN g % 7 = 0 THEN repeat('z', 400) || (g % 11)
              ELSE md5((g % 300)::text) END,
         CASE WHEN g % 19 = 0 THEN NULL
              WHEN g % 30 = 0 THEN 'carefully final deposits ' || (g % 41)
              ELSE 'Carefully ' || md5((g % 50)::text) END,
         CASE WHEN g % 23 = 0 THEN NULL ELSE (g % 400) / 7.0 END,
         CASE WHEN g % 29 = 0 THEN NULL ELSE g % 3 END,
         (g * 7919) % 5, (g * 104729) % 4, g % 2,
         ARRAY[g % 3, g % 7],
         CASE WHEN g > 7000 AND g % 3 = 0 THEN NULL
              WHEN g % 5 = 0 THEN 9223372036854775807 ELSE g % 11 END
  FROM generate_series(1, 8000) g;
ANALYZE held_t;

-- The lines of EXPLAIN ANALYZE that tell how the rows were held.
CREATE FUNCTION held_lines(query text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
    IF line ~ '(Sort Method|Held Key Width|Not Held on \w+|Sort Key Kinds):' THEN
      RETURN NEXT regexp_replace(trim(line), 'held \d+ stores', 'held N stores');
    END IF;
  END LOOP;
END
$$;

-- Each order is Sort's, the rows held with their keys.
SELECT same_as_native('SELECT * FROM held_t ORDER BY t, id');
SELECT same_as_native('SELECT * FROM held_t ORDER BY t COLLATE "C" DESC, id');
SELECT same_as_native('SELECT * FROM held_t ORDER BY t NULLS FIRST, id DESC');
SELECT same_as_native('SELECT * FROM held_t ORDER BY tl, id');
SELECT same_as_native('SELECT * FROM held_t ORDER BY tl DESC NULLS LAST, id');
SELECT same_as_native('SELECT * FROM held_t ORDER BY n, id');
SELECT same_as_native('SELECT * FROM held_t ORDER BY n DESC NULLS LAST, t, id');
SELECT same_as_native('SELECT t, length(t) FROM held_t ORDER BY t');
SELECT held_lines('SELECT * FROM held_t ORDER BY t, id');
SELECT held_lines('SELECT * FROM held_t ORDER BY tl, id');
-- gpusort_stats() counts a sort of held rows, once, with all its rows.
SELECT gpusort_stats_reset();
SELECT count(*) FROM (SELECT * FROM held_t ORDER BY t, id OFFSET 0) s;
SELECT engine, sorts, rows FROM gpusort_stats() WHERE sorts > 0;

-- Where the tied key is the last and is text under a libc collation, the
-- tied groups are ordered in batches on threads (text_ties.h): both
-- directions, NULLs first and last, after exact keys (the queries return
-- their sort keys alone, so that rows tied on every key are alike).
SELECT same_as_native('SELECT tl, length(tl) FROM held_t ORDER BY tl');
SELECT same_as_native('SELECT tl FROM held_t ORDER BY tl DESC NULLS LAST');
SELECT same_as_native('SELECT a, tl FROM held_t ORDER BY a NULLS FIRST, tl DESC NULLS FIRST');
SELECT same_as_native('SELECT b, tl FROM held_t ORDER BY b DESC, tl NULLS LAST');

-- Rows led by a NULL, in an order of several keys, are sorted apart by
-- the later keys; a NULL in a later prefix key ties with the ends of its
-- keys, where the comparators order it.
SELECT same_as_native('SELECT * FROM held_t ORDER BY a, t, id');
SELECT same_as_native('SELECT * FROM held_t ORDER BY a NULLS FIRST, tl DESC, id');
SELECT same_as_native('SELECT * FROM held_t ORDER BY a DESC, n NULLS FIRST, id DESC');
SELECT same_as_native('SELECT * FROM held_t ORDER BY b, tl DESC NULLS LAST, id');
SELECT held_lines('SELECT * FROM held_t ORDER BY a, tl DESC NULLS LAST, id');

-- A NULL of a later int8 key before the prefix key (no key is free for
-- it) ties with the end of that key's range (int8's largest value is in
-- the data), and the comparators order the tied rows from that key on,
-- in the stores held before it came too.
SELECT same_as_native('SELECT * FROM held_t ORDER BY b, late, tl, id');
SELECT same_as_native('SELECT * FROM held_t ORDER BY b DESC, late DESC, tl, id');
SELECT held_lines('SELECT * FROM held_t ORDER BY b, late, tl, id');
-- Where every key is exact, the rows are held without their keys, and
-- such a NULL ends the holding where it comes: the rows held become the
-- first sorted run, the store's rows the next.
SELECT same_as_native('SELECT * FROM held_t ORDER BY b, late, id');
SELECT held_lines('SELECT * FROM held_t ORDER BY b, late, id');

-- Keys past four words, and a key that no codec encodes, are the
-- comparators'.  (held_skew: a third of held_t's rows alike in b and d,
-- the rest apart, so that its tied groups are not all over the budget;
-- see below.)
CREATE TABLE held_skew AS
  SELECT id, t, CASE WHEN id % 3 = 0 THEN 0 ELSE id END AS b,
         CASE WHEN id % 3 = 0 THEN 0 ELSE id END AS d, arr
  FROM held_t;
ANALYZE held_skew;
SELECT same_as_native('SELECT * FROM held_t ORDER BY b, c, d, a, id DESC');
SELECT same_as_native('SELECT * FROM held_skew ORDER BY b, arr, id');
SELECT held_lines('SELECT * FROM held_t ORDER BY b, c, d, a, id DESC');
SELECT held_lines('SELECT * FROM held_skew ORDER BY b, arr, id');

-- A group of rows tied on their keys larger than the memory budget is
-- ordered by tuplesort, whose disk EXPLAIN ANALYZE shows.
SELECT same_as_native('SELECT * FROM held_skew ORDER BY d, arr, id DESC');
SELECT count(*) AS disk_shown FROM explain_analyze('SELECT * FROM held_skew ORDER BY d, arr, id DESC')
WHERE explain_analyze ~ '^\s*Disk Used: N kB$';
SELECT held_lines('SELECT * FROM held_skew ORDER BY d, arr, id DESC');
-- Where the table's statistics expect every such group over the budget (d
-- has four values, b five), the rows are not held: tuplesort sorts them,
-- as Sort would, and says why.  Groups that the statistics expect small
-- (b and a held text key) are held.
SELECT same_as_native('SELECT * FROM held_t ORDER BY d, arr, id DESC');
SELECT same_as_native('SELECT * FROM held_t ORDER BY b, tl, id');
SELECT regexp_replace(trim(line), '\d+ rows', 'N rows')
FROM explain_analyze('SELECT * FROM held_t ORDER BY d, arr, id DESC') line
WHERE line ~ '(Sort Method|Engine Choice):';
SELECT held_lines('SELECT * FROM held_t ORDER BY b, arr, id');
SELECT held_lines('SELECT * FROM held_t ORDER BY b, tl, id');
-- EXPLAIN without ANALYZE says so too.
SELECT regexp_replace(line, '\d+ rows', 'N rows')
FROM explain_planned('SELECT * FROM held_t ORDER BY d, arr, id DESC') line;
-- So in a parallel query: the participants share no held input, and each
-- sorts its own share by tuplesort.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT same_as_native('SELECT * FROM held_t ORDER BY d, arr, id DESC');
SELECT regexp_replace(regexp_replace(trim(line), '^->  | \(actual.*', '', 'g'),
                      '\d+ rows', 'N rows')
FROM explain_analyze('SELECT * FROM held_t ORDER BY d, arr, id DESC') line
WHERE line ~ '(Custom Scan|^\s*Sort Method:|^\s*Engine Choice:)';
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;
-- And over a join, whose columns the statistics of their tables describe.
SELECT same_as_native('SELECT a.* FROM held_t a JOIN held_t b USING (id) ORDER BY a.d, a.arr, a.id DESC');
SELECT regexp_replace(trim(line), '\d+ rows', 'N rows')
FROM explain_analyze('SELECT a.* FROM held_t a JOIN held_t b USING (id) ORDER BY a.d, a.arr, a.id DESC') line
WHERE line ~ '^\s*(Sort Method|Engine Choice):';
-- And over a partitioned table's partitions, each with statistics.
CREATE TABLE held_parts (LIKE held_t) PARTITION BY RANGE (id);
CREATE TABLE held_parts_1 PARTITION OF held_parts FOR VALUES FROM (MINVALUE) TO (4000);
CREATE TABLE held_parts_2 PARTITION OF held_parts FOR VALUES FROM (4000) TO (MAXVALUE);
INSERT INTO held_parts SELECT * FROM held_t;
ANALYZE held_parts_1, held_parts_2;
SELECT same_as_native('SELECT * FROM held_parts ORDER BY d, arr, id DESC');
SELECT regexp_replace(trim(line), '\d+ rows', 'N rows')
FROM explain_analyze('SELECT * FROM held_parts ORDER BY d, arr, id DESC') line
WHERE line ~ '^\s*(Sort Method|Engine Choice):';
-- Where no statistics tell (a table never analyzed), a sample of the first
-- store's rows does: held_nostats has the rows of held_t.
CREATE TABLE held_nostats WITH (autovacuum_enabled = off) AS SELECT * FROM held_t;
SELECT same_as_native('SELECT * FROM held_nostats ORDER BY d, arr, id DESC');
SELECT regexp_replace(trim(line), '\d+ rows', 'N rows', 'g')
FROM explain_analyze('SELECT * FROM held_nostats ORDER BY d, arr, id DESC') line
WHERE line ~ '^\s*(Sort Method|Engine Choice):';
SELECT same_as_native('SELECT id, repeat(t, 40) FROM held_t ORDER BY b, t, id');
-- (two groups of some 3,800 rows tied on their strxfrm() keys, checked
-- with strcoll() where one ends and the next begins)
SELECT same_as_native('SELECT * FROM held_t ORDER BY lower(substr(tl, 1, 8)) || (id % 2), id DESC');

-- Where strxfrm() and strcoll() disagree (wrong keys put in by
-- gpusort.xfrm_scramble), the check between groups stops the query before
-- it returns the pair: rows returned cannot be ordered again.
SET gpusort.xfrm_scramble = 3;
SELECT count(*) FROM (SELECT * FROM held_t ORDER BY tl, id OFFSET 0) s;
-- (and where the threads order the ties, text_ties.h)
SELECT count(*) FROM (SELECT tl FROM held_t ORDER BY tl OFFSET 0) s;
RESET gpusort.xfrm_scramble;

-- Without room kept for the keys (the planner expected the input to fit),
-- the input is sorted as if no engine held rows: here by tuplesort.
CREATE TABLE held_small (id int, t text);
INSERT INTO held_small VALUES (1, 'a');
ANALYZE held_small;
INSERT INTO held_small SELECT g, md5(g::text) FROM generate_series(2, 5000) g;
SELECT held_lines('SELECT * FROM held_small ORDER BY t');
SELECT same_as_native('SELECT * FROM held_small ORDER BY t');

-- An engine that declines a store midway, as a GPU short of device memory
-- does (gpusort.debug_hold_stores: the test holder declines each process's
-- stores after the first N): the rows it holds become the first sorted
-- run and the rest go to runs; with keys that leave ties too.
SET gpusort.debug_hold_stores = 3;
SELECT held_lines('SELECT * FROM held_t ORDER BY b, c, id');
SELECT same_as_native('SELECT * FROM held_t ORDER BY b, c, id');
SELECT same_as_native('SELECT * FROM held_t ORDER BY t, id');
SELECT same_as_native('SELECT * FROM held_t ORDER BY n DESC, tl, id');
RESET gpusort.debug_hold_stores;

DROP TABLE held_t, held_skew, held_parts, held_nostats, held_small;
DROP FUNCTION held_lines;
DROP COLLATION held_libc;
RESET ALL;
