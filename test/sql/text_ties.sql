-- Text whose keys' first words tie: an engine sorts text by a prefix of its
-- key (C bytes, strxfrm() output, an ICU sort key), and the rows that the
-- prefix leaves tied are ordered by the rest.  Long shared prefixes (URLs,
-- paths), prefixes equal in every row, empty strings, values of 10 kB and
-- equal values, under "C", a libc collation and an ICU one (where the
-- server has ICU; else "C" again), last key and not, in memory and at a
-- 64 kB budget, and in parallel plans whose participants share one input:
-- every order is Sort's.
SET gpusort.min_rows = 0;
SELECT coalesce((SELECT collcollate FROM pg_collation
                 WHERE collprovider = 'c' AND collcollate IN ('en_US.utf8', 'en_US.UTF-8')
                 ORDER BY collcollate LIMIT 1), 'C.UTF-8') AS libc_locale \gset
CREATE COLLATION tt_libc (provider = libc, locale = :'libc_locale');
SELECT coalesce((SELECT quote_ident(collname) FROM pg_collation
                 WHERE collname = 'und-x-icu' LIMIT 1), '"C"') AS icu \gset
CREATE TABLE tt (id int, t text);
ALTER TABLE tt ALTER COLUMN t SET STORAGE EXTERNAL;
INSERT INTO tt
  SELECT g,
         CASE g % 9
           WHEN 0 THEN 'https://example.com/catalog/items/shared/section/' || (g % 97) || '/page'
           WHEN 1 THEN '/usr/local/share/doc/package-' || lpad((g % 500)::text, 5, '0') || '/README'
           WHEN 2 THEN repeat('a', 40) || md5((g % 1000)::text)
           WHEN 3 THEN ''
           WHEN 4 THEN CASE WHEN g % 90 = 4 THEN repeat('p', 10000) || (g % 17) ELSE 'p' || g % 3 END
           WHEN 5 THEN 'same'
           WHEN 6 THEN NULL
           WHEN 7 THEN 'Same ' || repeat('É', g % 4)
           ELSE md5(g::text)
         END
  FROM generate_series(1, 18000) g;
ANALYZE tt;

CREATE FUNCTION tt_orders() RETURNS TABLE (query text, result text)
LANGUAGE plpgsql AS $$
DECLARE
  colls text[] := ARRAY['"C"', 'tt_libc', current_setting('tt.icu')];
  names text[] := ARRAY['"C"', 'tt_libc', 'icu'];
  q text;
BEGIN
  FOR i IN 1 .. 3 LOOP
    FOREACH q IN ARRAY ARRAY[
      'SELECT id FROM tt ORDER BY t COLLATE %s, id',
      'SELECT id FROM tt ORDER BY t COLLATE %s DESC NULLS LAST, id DESC',
      'SELECT id FROM tt ORDER BY t COLLATE %s, id %% 7 DESC, id',
      'SELECT id FROM tt ORDER BY id %% 3, t COLLATE %s DESC, id'] LOOP
      query := format(q, names[i]);
      result := same_as_native(format(q, colls[i]));
      RETURN NEXT;
    END LOOP;
  END LOOP;
END
$$;
SELECT set_config('tt.icu', :'icu', false) IS NOT NULL AS icu_set;

-- in memory, then at a 64 kB budget (sorted runs, or rows held), then
-- held by the CPU engine as the GPU's holds them (with the tie words of
-- strxfrm() and ICU keys: engine/row_seams.h)
SELECT * FROM tt_orders();
SET gpusort.work_mem = '64kB';
SELECT * FROM tt_orders();
SET gpusort.debug_hold_rows = on;
SELECT * FROM tt_orders();

-- Values alike in their first 24 letters, more than a 32-byte strxfrm()
-- key holds (held keys are never made past a shared start): held, the
-- engine orders them by their tie words too, and the comparators order
-- none (with 32 bytes, all of them).
CREATE TABLE tt_tie AS
  SELECT g AS id, 'carefully regular packages ' || md5(g::text) AS t
  FROM generate_series(1, 20000) g;
ANALYZE tt_tie;
SELECT same_as_native('SELECT id FROM tt_tie ORDER BY t COLLATE tt_libc');
SELECT same_as_native('SELECT id FROM tt_tie ORDER BY t COLLATE tt_libc DESC');
SELECT same_as_native(format('SELECT id FROM tt_tie ORDER BY t COLLATE %s', :'icu'));
SELECT substring(line FROM 'Comparators: (\d+)')::int AS held_tied
FROM explain_analyze('SELECT id FROM tt_tie ORDER BY t COLLATE tt_libc') line
WHERE line ~ 'Rows Ordered by Comparators';
RESET gpusort.debug_hold_rows;
RESET gpusort.work_mem;
DROP TABLE tt_tie;

-- parallel plans: each participant's rows, or one input shared by all
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT * FROM tt_orders() WHERE query ~ '^SELECT id FROM tt ORDER BY t';
SET gpusort.debug_hold_rows = on;
SELECT count(*) AS shared FROM explain_analyze('SELECT id FROM tt ORDER BY t COLLATE "C", id') AS line
WHERE line ~ 'Sort Method: rows of all participants held';
SELECT * FROM tt_orders() WHERE query ~ '^SELECT id FROM tt ORDER BY t';
RESET ALL;

DROP FUNCTION tt_orders();
DROP TABLE tt;
DROP COLLATION tt_libc;
