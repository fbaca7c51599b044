-- Ranking window functions computed by GpuSort in place of WindowAgg
-- (src/node/plan/window_plan.c, window_calc.c): row_number(), rank(),
-- dense_rank(), percent_rank(), cume_dist(), ntile(n) and count(*) over a
-- whole partition.  Every query's rows are compared with PostgreSQL's own
-- (gpusort.enabled off), in memory, at a 64 kB budget and in parallel plans.
SET gpusort.min_rows = 0;
SET work_mem = '64MB';
SELECT coalesce((SELECT collcollate FROM pg_collation
                 WHERE collprovider = 'c' AND collcollate IN ('en_US.utf8', 'en_US.UTF-8')
                 ORDER BY collcollate LIMIT 1), 'C.UTF-8') AS libc_locale \gset
CREATE COLLATION win_libc (provider = libc, locale = :'libc_locale');

-- Ties in every key, NULLs in partition and order keys, text with case.
CREATE TABLE win_t AS
  SELECT g AS id,
         CASE WHEN g % 13 = 0 THEN NULL ELSE g % 7 END AS grp,
         CASE WHEN g % 17 = 0 THEN NULL ELSE (g * 7919) % 23 END AS k,
         CASE WHEN g % 19 = 0 THEN NULL
              ELSE chr(65 + (g * 31) % 4 + 32 * (g % 2)) || chr(97 + g % 3) END AS t,
         (g % 11) / 4.0 AS f
  FROM generate_series(1, 3000) g;
CREATE TABLE win_empty (LIKE win_t);
-- Keys of exact codecs, by which the rows are compared: values equal under
-- their type's equality in other forms (-0 and 0, NaNs, '1 day' and '24
-- hours'), ties, NULLs.
CREATE TABLE win_x AS
  SELECT g AS id,
         ((g % 7) * 1.5)::numeric(15,2) AS price,
         CASE g % 6 WHEN 0 THEN '-0'::float8 WHEN 1 THEN 0 WHEN 2 THEN 'NaN'
                    WHEN 3 THEN NULL ELSE g % 3 END AS fl,
         date '2020-01-01' + g % 4 AS d,
         CASE WHEN g % 2 = 0 THEN interval '1 day' ELSE interval '24 hours' END * (g % 3) AS iv,
         CASE WHEN g % 9 = 0 THEN NULL ELSE g % 3 = 0 END AS b
  FROM generate_series(1, 2000) g;
ANALYZE win_t;
ANALYZE win_empty;

-- How the plan computes the window functions: the GpuSort nodes that do,
-- the WindowAgg nodes left, and whether a Gather Merge is there.
CREATE FUNCTION win_plan(query text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  line text;
  in_gpusort int := 0;
  windowagg int := 0;
  gather text := '';
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
    IF line ~ 'Window Functions:' THEN in_gpusort := in_gpusort + 1; END IF;
    IF line ~ 'WindowAgg' THEN windowagg := windowagg + 1; END IF;
    IF line ~ 'Gather Merge' THEN gather := ', Gather Merge'; END IF;
  END LOOP;
  RETURN format('GpuSort %s, WindowAgg %s%s', in_gpusort, windowagg, gather);
END
$$;

-- A line of EXPLAIN without the window's name of a window function, and
-- without whether a GpuSort below a Gather Merge is planned to share its
-- rows with the other participants' (a CUDA build's: "Parallel").
CREATE FUNCTION win_shown(line text) RETURNS text
LANGUAGE sql AS $$
  SELECT regexp_replace(regexp_replace(line, ' OVER (\(\?\)|w\d+)', '', 'g'),
                        'Parallel Custom Scan', 'Custom Scan')
$$;

-- EXPLAIN (COSTS OFF) of a query, as every release from 15 on shows it:
-- without how a window function's window is named (" OVER (?)" before 18,
-- " OVER w1" from 18 on) and without 18's "Window:" lines.
CREATE FUNCTION win_explain(query text, with_output boolean DEFAULT false) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE format('EXPLAIN (%sCOSTS OFF) %s',
                             CASE WHEN with_output THEN 'VERBOSE, ' ELSE '' END, query) LOOP
    CONTINUE WHEN line ~ '^\s*Window: ';
    RETURN NEXT win_shown(line);
  END LOOP;
END
$$;

-- A query's rows as a multiset (sorted texts).  The queries return the
-- partition and order keys and the values (or a unique order), so that the
-- order PostgreSQL leaves among peers does not matter.
CREATE FUNCTION win_rows(query text) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
  result text[];
BEGIN
  EXECUTE format('SELECT coalesce(array_agg(s::text ORDER BY s::text COLLATE "C"), ''{}'') FROM (%s) s',
                 query) INTO result;
  RETURN result;
END
$$;

-- The plan of query "ours", and whether its rows are those of "native"
-- planned and run by PostgreSQL alone.
CREATE FUNCTION win_compare(ours text, native text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  plan text := win_plan(ours);
  a text[] := win_rows(ours);
  b text[];
BEGIN
  PERFORM set_config('gpusort.enabled', 'off', true);
  b := win_rows(native);
  PERFORM set_config('gpusort.enabled', 'on', true);
  IF a = b THEN
    RETURN format('%s: same %s rows', plan, cardinality(a));
  END IF;
  RETURN format('%s: DIFFERENT (%s rows, native %s): %s', plan, cardinality(a), cardinality(b),
                (SELECT x COLLATE "C" FROM unnest(a) x EXCEPT SELECT y FROM unnest(b) y ORDER BY 1 LIMIT 1));
END
$$;

CREATE FUNCTION win_check(query text) RETURNS text
LANGUAGE sql AS $$ SELECT win_compare(query, query) $$;

-- The check fails where a value is wrong (and names the first row that
-- differs, in the order of "C", whatever the database's collation).
SELECT win_compare('SELECT grp, k, rank() OVER (PARTITION BY grp ORDER BY k) FROM win_t',
                   'SELECT grp, k, rank() OVER (PARTITION BY grp ORDER BY k) + (k = 5)::int FROM win_t');
SELECT win_compare('SELECT grp, k, ntile(3) OVER (PARTITION BY grp ORDER BY k) FROM win_t',
                   'SELECT grp, k, ntile(4) OVER (PARTITION BY grp ORDER BY k) FROM win_t');

CREATE TABLE win_queries (n serial, q text);
INSERT INTO win_queries (q) VALUES
  -- every function, with and without PARTITION BY
  ('SELECT grp, k, row_number() OVER w, rank() OVER w, dense_rank() OVER w, percent_rank() OVER w,
           cume_dist() OVER w, ntile(4) OVER w, count(*) OVER (PARTITION BY grp)
    FROM win_t WINDOW w AS (PARTITION BY grp ORDER BY k)'),
  ('SELECT k, row_number() OVER w, rank() OVER w, dense_rank() OVER w, percent_rank() OVER w,
           cume_dist() OVER w, ntile(7) OVER w
    FROM win_t WINDOW w AS (ORDER BY k)'),
  ('SELECT grp, row_number() OVER w, rank() OVER w, dense_rank() OVER w, percent_rank() OVER w,
           cume_dist() OVER w, ntile(2) OVER w, count(*) OVER w
    FROM win_t WINDOW w AS (PARTITION BY grp)'),
  -- row_number in a unique order, with the rows' ids
  ('SELECT id, row_number() OVER (PARTITION BY grp ORDER BY k, id) FROM win_t'),
  ('SELECT id, row_number() OVER (ORDER BY f DESC, id) FROM win_t'),
  -- DESC, NULLS FIRST and LAST, several order keys
  ('SELECT grp, k, rank() OVER w, dense_rank() OVER w, cume_dist() OVER w
    FROM win_t WINDOW w AS (PARTITION BY grp ORDER BY k DESC)'),
  ('SELECT grp, k, f, rank() OVER w, percent_rank() OVER w, ntile(5) OVER w
    FROM win_t WINDOW w AS (PARTITION BY grp ORDER BY k NULLS FIRST, f DESC NULLS LAST)'),
  ('SELECT grp, k, rank() OVER w, cume_dist() OVER w
    FROM win_t WINDOW w AS (PARTITION BY grp ORDER BY k DESC NULLS LAST)'),
  ('SELECT grp, k, dense_rank() OVER w, count(*) OVER (PARTITION BY grp ORDER BY k
      ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
    FROM win_t WINDOW w AS (PARTITION BY grp ORDER BY k)'),
  -- the keys alone are the sorted row
  ('SELECT k, rank() OVER (ORDER BY k), cume_dist() OVER (ORDER BY k) FROM win_t'),
  -- text under C and under a libc collation, in partition and order keys
  ('SELECT t, k, rank() OVER w, ntile(3) OVER w, count(*) OVER (PARTITION BY t COLLATE "C")
    FROM win_t WINDOW w AS (PARTITION BY t COLLATE "C" ORDER BY k)'),
  ('SELECT grp, t, rank() OVER w, dense_rank() OVER w, cume_dist() OVER w
    FROM win_t WINDOW w AS (PARTITION BY grp ORDER BY t COLLATE win_libc DESC)'),
  ('SELECT t, rank() OVER w, percent_rank() OVER w FROM win_t WINDOW w AS (ORDER BY t COLLATE win_libc)'),
  -- ntile with more buckets than rows, its NULL; an empty input
  ('SELECT grp, k, ntile(1000) OVER w, ntile(NULL) OVER w FROM win_t
    WINDOW w AS (PARTITION BY grp ORDER BY k)'),
  ('SELECT grp, k, row_number() OVER w, rank() OVER w, cume_dist() OVER w, ntile(3) OVER w, count(*) OVER w
    FROM win_empty WINDOW w AS (PARTITION BY grp ORDER BY k ROWS BETWEEN UNBOUNDED PRECEDING
      AND UNBOUNDED FOLLOWING)'),
  -- expressions over the values, and the values under a filter above
  ('SELECT grp, k, rank() OVER w * 10 + dense_rank() OVER w, 1 - cume_dist() OVER w
    FROM win_t WINDOW w AS (PARTITION BY grp ORDER BY k)'),
  ('SELECT * FROM (SELECT grp, k, dense_rank() OVER (PARTITION BY grp ORDER BY k) d FROM win_t) s
    WHERE d % 3 = 0'),
  -- several window clauses: the eligible ones are computed by GpuSort
  ('SELECT id, k, t, row_number() OVER (ORDER BY k, id), rank() OVER (ORDER BY t COLLATE "C")
    FROM win_t'),
  ('SELECT grp, k, rank() OVER (PARTITION BY grp ORDER BY k),
           sum(k) OVER (PARTITION BY grp ORDER BY k), max(f) OVER (PARTITION BY grp)
    FROM win_t'),
  ('SELECT grp, k, rank() OVER (PARTITION BY grp ORDER BY k), count(*) OVER (PARTITION BY grp)
    FROM win_t'),
  -- not computed by GpuSort: other functions, frames, FILTER (and, since
  -- computed: a run condition, a running sum, a running count(*), FILTER)
  ('SELECT grp, k, sum(k) OVER (PARTITION BY grp ORDER BY k) FROM win_t'),
  ('SELECT grp, k, rank() OVER (PARTITION BY grp ORDER BY k ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)
    FROM win_t'),
  ('SELECT * FROM (SELECT grp, k, rank() OVER (PARTITION BY grp ORDER BY k) r FROM win_t) s
    WHERE r <= 3'),
  -- rescans: with a new parameter (the argument of ntile among them), and without
  ('SELECT x, (SELECT sum(r) FROM (SELECT rank() OVER (ORDER BY k) r FROM win_t WHERE grp = x) s)
    FROM generate_series(0, 7) x'),
  ('SELECT x, n, count(*) FROM generate_series(1, 4) x,
      LATERAL (SELECT ntile(x) OVER (ORDER BY k) n FROM win_t) s GROUP BY x, n'),
  -- top-N per group: the run condition ends each partition's rows in the
  -- node (N from 1 to over a partition's size; without PARTITION BY the
  -- scan ends), a filter beside it, and ties
  ('SELECT * FROM (SELECT id, grp, row_number() OVER (PARTITION BY grp ORDER BY k, id) rn
    FROM win_t) s WHERE rn <= 1'),
  ('SELECT * FROM (SELECT id, grp, row_number() OVER (PARTITION BY grp ORDER BY k DESC, id) rn
    FROM win_t) s WHERE rn < 4'),
  ('SELECT * FROM (SELECT grp, k, rank() OVER (PARTITION BY grp ORDER BY k NULLS FIRST) r
    FROM win_t) s WHERE r <= 5'),
  ('SELECT * FROM (SELECT grp, k, dense_rank() OVER (PARTITION BY grp ORDER BY k) d
    FROM win_t) s WHERE d <= 3 AND k > 1'),
  ('SELECT * FROM (SELECT id, grp, row_number() OVER (PARTITION BY grp ORDER BY id) rn
    FROM win_t) s WHERE rn <= 1000'),
  ('SELECT * FROM (SELECT id, k, row_number() OVER (ORDER BY k, id) rn FROM win_t) s
    WHERE rn <= 10'),
  ('SELECT * FROM (SELECT k, rank() OVER (ORDER BY k DESC) r FROM win_t) s WHERE 7 >= r'),
  ('SELECT * FROM (SELECT grp, k, count(*) OVER (PARTITION BY grp) c,
                          rank() OVER (PARTITION BY grp ORDER BY k) r FROM win_t) s
    WHERE r <= 2'),
  ('SELECT * FROM (SELECT t, k, rank() OVER (PARTITION BY t COLLATE win_libc ORDER BY k) r
    FROM win_t) s WHERE r <= 2'),
  -- exact keys of other types (win_x)
  ('SELECT d, price, rank() OVER w, dense_rank() OVER w, cume_dist() OVER w
    FROM win_x WINDOW w AS (PARTITION BY d ORDER BY price DESC)'),
  ('SELECT fl, rank() OVER w, dense_rank() OVER w, percent_rank() OVER w
    FROM win_x WINDOW w AS (ORDER BY fl)'),
  ('SELECT iv, b, rank() OVER w, dense_rank() OVER w, count(*) OVER (PARTITION BY iv)
    FROM win_x WINDOW w AS (PARTITION BY iv ORDER BY b NULLS FIRST)'),
  ('SELECT * FROM (SELECT id, d, price, row_number() OVER (PARTITION BY d ORDER BY price DESC, id) rn
    FROM win_x) s WHERE rn <= 3'),
  ('SELECT fl, d, dense_rank() OVER (PARTITION BY fl ORDER BY d DESC) FROM win_x'),
  -- values that a participant's rows alone cannot settle (percent_rank(),
  -- cume_dist(): a filter, in every release; count(*) of the partition: a
  -- run condition): in parallel plans no GpuSort below the WindowAgg drops
  -- rows by them
  ('SELECT * FROM (SELECT grp, k, percent_rank() OVER (PARTITION BY grp ORDER BY k) pr
    FROM win_t) s WHERE pr + 0 <= 0.3'),
  ('SELECT * FROM (SELECT grp, k, cume_dist() OVER (PARTITION BY grp ORDER BY k) cd
    FROM win_t) s WHERE cd + 0 < 0.2'),
  ('SELECT * FROM (SELECT grp, count(*) OVER (PARTITION BY grp) c FROM win_t) s WHERE c > 380'),
  -- aggregates over the whole partition (window_aggregate.c): integers,
  -- numeric and float sums, averages, min and max of text under a libc
  -- collation, count of a column with NULLs, bool_and, string_agg in a
  -- unique order; without PARTITION BY; over an empty input
  ('SELECT id, grp, sum(k) OVER w, avg(k) OVER w, min(t COLLATE win_libc) OVER w,
           max(t COLLATE win_libc) OVER w, count(k) OVER w, sum(f) OVER w, avg(f::float8) OVER w,
           bool_and(k > 2) OVER w, rank() OVER (PARTITION BY grp ORDER BY k)
    FROM win_t WINDOW w AS (PARTITION BY grp)'),
  ('SELECT id, grp, string_agg(t, '','') OVER (PARTITION BY grp ORDER BY id
      ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM win_t'),
  ('SELECT id, sum(price) OVER (), max(d) OVER (), count(fl) OVER (), bool_or(b) OVER () FROM win_x'),
  ('SELECT sum(k) OVER (PARTITION BY grp), count(t) OVER (PARTITION BY grp) FROM win_empty'),
  -- lag() and lead(): offsets 1, 2, 3, 0, negative and past every
  -- partition, defaults over the current row, without PARTITION BY
  ('SELECT id, grp, k, lag(k) OVER w, lead(k, 2, -1) OVER w, lag(t, 3, t || ''?'') OVER w,
           lead(f, 0) OVER w, lag(k, -1) OVER w, lead(id, 5000, id) OVER w
    FROM win_t WINDOW w AS (PARTITION BY grp ORDER BY k, id)'),
  ('SELECT id, lead(id, 5) OVER w, lag(f, 2000, -f) OVER w FROM win_t WINDOW w AS (ORDER BY f DESC, id)'),
  -- running aggregates: to the current row's last peer (RANGE, GROUPS, NULL
  -- keys among the peers) or to the row (ROWS)
  ('SELECT id, grp, k, sum(k) OVER w, avg(f) OVER w, count(t) OVER w, max(t COLLATE "C") OVER w
    FROM win_t WINDOW w AS (PARTITION BY grp ORDER BY k)'),
  ('SELECT id, sum(id) OVER (PARTITION BY grp ORDER BY k, id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
    FROM win_t'),
  ('SELECT id, k, min(id) OVER (ORDER BY k DESC GROUPS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
    FROM win_t'),
  ('SELECT grp, k, count(*) OVER (PARTITION BY grp ORDER BY k) FROM win_t'),
  ('SELECT id, count(*) OVER (ORDER BY k DESC, id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW),
           count(*) OVER (ORDER BY k DESC, id) FROM win_t'),
  -- frames of rows a constant number before or after the current one: a
  -- moving head taken out by inverse functions (sum, count, avg), or
  -- restarting (min, max, string_agg, a float's sum); frames empty at the
  -- ends, offsets past the partition, a FILTER, NULL inputs
  ('SELECT id, sum(k) OVER w, avg(f) OVER w, count(k) OVER w, count(*) OVER w, max(t) OVER w
    FROM win_t WINDOW w AS (PARTITION BY grp ORDER BY k, id ROWS BETWEEN 3 PRECEDING AND CURRENT ROW)'),
  ('SELECT id, sum(id) OVER w, min(k) OVER w, string_agg(t, '','') OVER w, sum(f::float8) OVER w
    FROM win_t WINDOW w AS (ORDER BY f, id ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING)'),
  ('SELECT id, sum(k) OVER w, count(*) FILTER (WHERE id % 2 = 0) OVER w FROM win_t
    WINDOW w AS (PARTITION BY grp ORDER BY id ROWS BETWEEN 1 FOLLOWING AND 3 FOLLOWING)'),
  ('SELECT id, sum(k) OVER w, avg(k) OVER w FROM win_t
    WINDOW w AS (PARTITION BY k ORDER BY id ROWS BETWEEN 5000 PRECEDING AND 1 PRECEDING)'),
  ('SELECT id, sum(id) OVER (PARTITION BY grp ORDER BY id ROWS BETWEEN 2 PRECEDING AND 2 PRECEDING),
           count(*) OVER (PARTITION BY grp ORDER BY id ROWS BETWEEN 2 FOLLOWING AND 2 FOLLOWING)
    FROM win_t'),
  ('SELECT id, sum(f) OVER (PARTITION BY grp ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 2 FOLLOWING),
           bool_and(k > 3) OVER (PARTITION BY grp ORDER BY id ROWS BETWEEN CURRENT ROW AND 4 FOLLOWING)
    FROM win_t'),
  -- FILTER: over the partition and running; NULL and false leave a row out
  ('SELECT grp, k, rank() OVER w, count(*) FILTER (WHERE k > 3) OVER w FROM win_t
    WINDOW w AS (PARTITION BY grp)'),
  ('SELECT id, count(*) FILTER (WHERE k % 2 = 0) OVER w, sum(k) FILTER (WHERE t > ''m'') OVER w,
           max(id) FILTER (WHERE f < 0.5) OVER w FROM win_t WINDOW w AS (PARTITION BY grp ORDER BY k)'),
  -- three and four window clauses over one sort
  ('SELECT id, grp, k, rank() OVER (PARTITION BY grp ORDER BY k), count(*) OVER (PARTITION BY grp),
           sum(id) OVER (PARTITION BY grp ORDER BY k, id ROWS UNBOUNDED PRECEDING),
           lag(id) OVER (PARTITION BY grp ORDER BY k, id) FROM win_t'),
  ('SELECT id, row_number() OVER (ORDER BY k, id), count(*) OVER (ORDER BY k), max(id) OVER (),
           min(t) OVER (ORDER BY k GROUPS UNBOUNDED PRECEDING) FROM win_t'),
  -- first_value(), last_value() and nth_value() over those frames and the
  -- whole partition: n within it, past the frame's end, past the partition
  ('SELECT id, first_value(id) OVER w, last_value(id) OVER w, nth_value(id, 3) OVER w,
           nth_value(t, 2000) OVER w, last_value(k) OVER (PARTITION BY grp ORDER BY k),
           nth_value(k, 2) OVER (PARTITION BY grp ORDER BY k GROUPS UNBOUNDED PRECEDING),
           last_value(id) OVER (PARTITION BY grp ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING
             AND UNBOUNDED FOLLOWING)
    FROM win_t WINDOW w AS (PARTITION BY grp ORDER BY k, id)'),
  -- top-N per group over the table's pages read by the node: past the
  -- scan's filter, and whole rows (the tuple in the scan's buffer)
  ('SELECT * FROM (SELECT id, grp, k, row_number() OVER (PARTITION BY grp ORDER BY k DESC, id) rn
    FROM win_t WHERE id % 3 <> 0) s WHERE rn <= 2'),
  ('SELECT * FROM (SELECT *, rank() OVER (PARTITION BY grp ORDER BY k) r FROM win_t) s
    WHERE r <= 2');

SELECT n, win_check(q) FROM win_queries ORDER BY n;

-- The plans: GpuSort computes the functions (no WindowAgg), or WindowAgg
-- stays above it; nodes above read its columns.
SELECT win_explain('SELECT grp, k, rank() OVER (PARTITION BY grp ORDER BY k DESC NULLS LAST),
  ntile(4) OVER (PARTITION BY grp ORDER BY k DESC NULLS LAST) FROM win_t');
SELECT win_explain('SELECT grp, k, rank() OVER (PARTITION BY grp ORDER BY k),
  sum(k) OVER (PARTITION BY grp), count(k) OVER (PARTITION BY grp) FROM win_t', true);
SELECT win_explain('SELECT id, row_number() OVER (ORDER BY k, id),
  percent_rank() OVER (ORDER BY t COLLATE "C") FROM win_t', true);
SELECT win_explain('SELECT * FROM (SELECT grp, k, row_number() OVER (PARTITION BY grp ORDER BY k) r
  FROM win_t) s WHERE r <= 3');
SELECT win_shown(line) AS line FROM explain_analyze('SELECT * FROM (SELECT grp, k, row_number()
  OVER (PARTITION BY grp ORDER BY k) r FROM win_t) s WHERE r <= 3') AS line
WHERE line ~ '(GpuSort|WindowAgg|Run Condition|actual rows)';
SELECT line FROM explain_analyze('SELECT grp, k, rank() OVER (PARTITION BY grp ORDER BY k) FROM win_t') AS line
WHERE line ~ '(GpuSort|WindowAgg|Window Functions|Sort Key|Sorted Rows)';

-- ntile's errors, as PostgreSQL raises them (at a partition's first row).
SELECT ntile(0) OVER (ORDER BY k) FROM win_t;
SELECT ntile(-1) OVER (PARTITION BY grp ORDER BY k) FROM win_t;
SELECT count(*) FROM (SELECT ntile(0) OVER (ORDER BY k) FROM win_empty) s;

-- A cursor that goes back reads a Material above the node.
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id, rank() OVER (ORDER BY k, id) FROM win_t WHERE k IS NOT NULL;
EXPLAIN (COSTS OFF) DECLARE c2 SCROLL CURSOR FOR SELECT id, rank() OVER (ORDER BY k, id) FROM win_t;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH LAST FROM c;
COMMIT;

-- gpusort.window_functions = off leaves WindowAgg above GpuSort.
SET gpusort.window_functions = off;
SELECT win_explain('SELECT grp, k, rank() OVER (PARTITION BY grp ORDER BY k) FROM win_t');
RESET gpusort.window_functions;

-- Rescans without new parameters for the node (the parameter is read
-- above it; "+ 0" keeps 17's run conditions of cume_dist() away): the rows
-- are returned again and their values computed again.
SELECT win_explain('SELECT x, (SELECT count(*) FROM (SELECT k, cume_dist() OVER (ORDER BY k) c
  FROM win_t) s WHERE s.c + 0 <= x / 4.0) FROM generate_series(1, 4) x');
SELECT win_check('SELECT x, (SELECT count(*) FROM (SELECT k, cume_dist() OVER (ORDER BY k) c
  FROM win_t) s WHERE s.c + 0 <= x / 4.0) FROM generate_series(1, 4) x');
SELECT win_check('SELECT x, (SELECT count(*) FROM (SELECT k, rank() OVER (ORDER BY k) r
  FROM win_t) s WHERE s.r % 100 = x) FROM generate_series(1, 4) x');

-- At a 64 kB budget: the sort spills to sorted runs (or rows held on a
-- GPU), the partitions to the tuplestore's temporary file.
SET work_mem = '64kB';
SET gpusort.work_mem = '64kB';
SET gpusort.min_run_rows = 0;
SELECT n, win_check(q) FROM win_queries ORDER BY n;
SELECT regexp_replace(line, '(external merge of sorted runs|rows held on the GPU, sorted at once)',
                      'out of core') AS line
FROM explain_analyze('SELECT grp, k, cume_dist() OVER (ORDER BY k) FROM win_t') AS line
WHERE line ~ '(GpuSort|WindowAgg|Window Functions|Sort Key|Sorted Rows|Sort Method)';
RESET gpusort.min_run_rows;
RESET gpusort.work_mem;
SET work_mem = '64MB';

-- Parallel plans wherever the planner can make them: a WindowAgg over a
-- Gather Merge of GpuSorts gives way to a GpuSort that computes the
-- functions over the Gather Merge's rows;
-- one whose functions GpuSort does not compute stays, and so does one with
-- a run condition (top N per group: the participants' shared sort pays
-- more there), its participants' GpuSorts returning only the rows that
-- pass it among their own.  In memory, then at a 64 kB budget.  (The
-- parallel window, where participants share their input, is off: it has
-- its own checks below.)
SET gpusort.parallel_window = off;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT win_explain('SELECT grp, k, rank() OVER (PARTITION BY grp ORDER BY k) FROM win_t');
SELECT n, win_check(q) FROM win_queries ORDER BY n;
-- over a parallel join: the Gather Merge of the participants' sorts of its rows
SELECT win_explain('SELECT a.grp, a.k, b.t, rank() OVER (PARTITION BY a.grp ORDER BY a.k, b.t COLLATE "C")
  FROM win_t a JOIN win_t b USING (id) WHERE a.k > 3');
SELECT win_check('SELECT a.grp, a.k, b.t, rank() OVER (PARTITION BY a.grp ORDER BY a.k, b.t COLLATE "C")
  FROM win_t a JOIN win_t b USING (id) WHERE a.k > 3');
-- top N per group over rows that every participant reads some of: each
-- drops the rows that its own ranks fail, and the WindowAgg ranks the rest
-- again; a count(*) of the partition, which a participant's rows alone
-- cannot settle, drops nothing below it
CREATE TABLE win_big AS
  SELECT g AS id, g % 50 AS grp, (g * 7919) % 1000 AS k FROM generate_series(1, 200000) g;
ANALYZE win_big;
SELECT win_explain('SELECT * FROM (SELECT id, grp, k, row_number() OVER (PARTITION BY grp ORDER BY k, id) rn
  FROM win_big) s WHERE rn <= 3');
SELECT win_check('SELECT * FROM (SELECT id, grp, k, row_number() OVER (PARTITION BY grp ORDER BY k, id) rn
  FROM win_big) s WHERE rn <= 3');
SELECT win_check('SELECT * FROM (SELECT grp, k, rank() OVER (PARTITION BY grp ORDER BY k DESC) r,
  dense_rank() OVER (PARTITION BY grp ORDER BY k DESC) d FROM win_big) s WHERE r <= 5 AND d < 4');
SELECT win_check('SELECT * FROM (SELECT grp, k, rank() OVER (ORDER BY k) r FROM win_big) s WHERE r <= 450');
SELECT win_check('SELECT * FROM (SELECT grp, count(*) OVER (PARTITION BY grp) c FROM win_big
  WHERE id % 1000 < 100) s WHERE c >= 400');
-- more partitions than the top N filter has room for at a 64 kB budget:
-- the rows of those it could not take are kept
SET gpusort.work_mem = '64kB';
SELECT win_check('SELECT * FROM (SELECT id, p, row_number() OVER (PARTITION BY p ORDER BY k DESC, id) rn
  FROM (SELECT id, k, id % 5000 AS p FROM win_big) b) s WHERE rn <= 2');
-- room for two partitions' heaps of 3000 rows: the others keep their rows
SELECT win_check('SELECT * FROM (SELECT id, p, row_number() OVER (PARTITION BY p ORDER BY k DESC, id) rn
  FROM (SELECT id, k, id % 10 AS p FROM win_big) b) s WHERE rn <= 3000');
RESET gpusort.work_mem;
SET gpusort.work_mem = '64kB';
SET gpusort.min_run_rows = 0;
SELECT n, win_check(q) FROM win_queries WHERE n IN (1, 2, 7, 18, 25, 30) ORDER BY n;
-- workers that never start (the leader reads the whole scan), and a
-- leader that reads none of it
SET max_parallel_workers = 0;
SELECT n, win_check(q) FROM win_queries WHERE n IN (1, 2, 18) ORDER BY n;
RESET max_parallel_workers;
SET parallel_leader_participation = off;
SELECT n, win_check(q) FROM win_queries WHERE n IN (1, 2, 18) ORDER BY n;
RESET parallel_leader_participation;
-- (the participants' shares of the rows vary from run to run: the plan's
-- shape alone)
SELECT win_shown(regexp_replace(line, ' \(actual rows=[0-9]+ loops=[0-9]+\)', '')) AS line
FROM explain_analyze('SELECT grp, k, rank() OVER (PARTITION BY grp ORDER BY k) FROM win_t') AS line
WHERE line ~ '(GpuSort|WindowAgg|Gather|Window Functions|Rows Sorted By)' AND line !~ 'Worker [0-9]';
RESET gpusort.min_run_rows;
RESET gpusort.work_mem;
RESET gpusort.parallel_window;

-- The parallel window (window_path.c): one window clause over a table's
-- parallel scan, partitioned first by a column declared NOT NULL, in a
-- subquery of a query that aggregates (in parts), is computed below the
-- Gather by every participant, each over slices of the one sorted input
-- (held here by the CPU engine, as the GPU service holds it): slices
-- within one partition, partitions across slices, partitions of a few
-- rows.  Each check sums a hash of every row with its values.
SET gpusort.debug_hold_rows = on;
SET gpusort.work_mem = '64kB';
CREATE TABLE win_pw (id int NOT NULL, g int NOT NULL, w int NOT NULL,
                     v numeric(12,2) NOT NULL, n int);
INSERT INTO win_pw
  SELECT i, i % 23, (i * 31) % 20011, ((i * 7919) % 500) / 4.0,
         CASE WHEN i % 101 = 0 THEN NULL ELSE i % 7 END
  FROM generate_series(1, 60000) i;
ANALYZE win_pw;
SELECT win_explain('SELECT sum(r), count(*) FROM (SELECT id, rank() OVER (PARTITION BY g ORDER BY v DESC) r
  FROM win_pw) s');
SELECT win_check('SELECT sum(r), count(*), sum(r::numeric * id) FROM (SELECT id, rank() OVER (PARTITION BY g ORDER BY v DESC) r
  FROM win_pw) s');
CREATE FUNCTION win_pw_hashed(query text) RETURNS text
LANGUAGE sql AS $$
  SELECT 'SELECT count(*), sum(hashtext(s::text)::numeric) FROM (' || query || ') s'
$$;
INSERT INTO win_queries (q) VALUES
  (win_pw_hashed('SELECT id, g, v, rank() OVER w, dense_rank() OVER w, percent_rank() OVER w,
           cume_dist() OVER w FROM win_pw WINDOW w AS (PARTITION BY g ORDER BY v)')),
  (win_pw_hashed('SELECT id, row_number() OVER w, ntile(3) OVER w FROM win_pw
      WINDOW w AS (PARTITION BY g ORDER BY v DESC, id)')),
  (win_pw_hashed('SELECT id, w, rank() OVER w, count(*) OVER w FROM win_pw
      WINDOW w AS (PARTITION BY w ORDER BY v ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)')),
  (win_pw_hashed('SELECT id, g, w, cume_dist() OVER (PARTITION BY g, w ORDER BY v) FROM win_pw')),
  (win_pw_hashed('SELECT id, rank() OVER (PARTITION BY g ORDER BY v) * 2 + id AS x FROM win_pw
      WHERE id % 3 <> 0')),
  ('SELECT sum(r), count(*) FROM (SELECT rank() OVER (PARTITION BY g ORDER BY v) r FROM win_pw
      WHERE id < 0) s'),
  ('SELECT g, max(r), sum(c) FROM (SELECT g, rank() OVER w r, count(*) OVER w c FROM win_pw
      WINDOW w AS (PARTITION BY g)) s GROUP BY g'),
  -- several clauses over one sort, whose keys lead with each clause's: the
  -- slices split no partition of the clause of the fewest partition columns
  (win_pw_hashed('SELECT id, rank() OVER (PARTITION BY g ORDER BY v DESC),
      count(*) OVER (PARTITION BY g) FROM win_pw')),
  (win_pw_hashed('SELECT id, cume_dist() OVER (PARTITION BY g, w ORDER BY v),
      sum(v) OVER (PARTITION BY g ORDER BY w), lag(v) OVER (PARTITION BY g ORDER BY w, v),
      max(id) OVER (PARTITION BY g, w, v) FROM win_pw'));
SELECT max(n) - 8 AS first_pw FROM win_queries \gset
SELECT n, win_plan(q), win_check(q) FROM win_queries WHERE n >= :first_pw ORDER BY n;
-- the leader alone (no worker starts), and one worker doing it all where
-- the leader reads none of the scan and shares nothing
SET max_parallel_workers = 0;
SELECT n, win_check(q) FROM win_queries WHERE n >= :first_pw ORDER BY n;
RESET max_parallel_workers;
SET parallel_leader_participation = off;
SELECT n, win_check(q) FROM win_queries WHERE n >= :first_pw ORDER BY n;
RESET parallel_leader_participation;
-- under a Parallel Append, which sends each participant into one branch
-- and may send none into another until it is done: each branch's input is
-- shared by those that come, and none waits for one that never does (two
-- branches hung until cancelled); three branches, two workers, and the
-- leader alone
SET statement_timeout = '60s';
INSERT INTO win_queries (q) VALUES
  ('SELECT sum(r), count(*), sum(r::numeric * id) FROM (
      SELECT id, rank() OVER (PARTITION BY g ORDER BY v) r FROM win_pw
      UNION ALL SELECT id, dense_rank() OVER (PARTITION BY w ORDER BY v DESC) FROM win_pw) s'),
  ('SELECT sum(r), count(*), sum(r::numeric * id) FROM (
      SELECT id, rank() OVER (PARTITION BY g ORDER BY v) r FROM win_pw
      UNION ALL SELECT id, row_number() OVER (PARTITION BY w ORDER BY v DESC, id) FROM win_pw
      UNION ALL SELECT id, count(*) OVER (PARTITION BY g, w) FROM win_pw WHERE id % 3 = 0) s');
SELECT max(n) - 1 AS first_append FROM win_queries \gset
SELECT n, line FROM win_queries, win_explain(q) WITH ORDINALITY AS e(line, i)
WHERE n >= :first_append AND line ~ '(Append|Window Functions)' ORDER BY n, i;
SELECT n, win_check(q) FROM win_queries WHERE n >= :first_append ORDER BY n;
SET max_parallel_workers = 0;
SELECT n, win_check(q) FROM win_queries WHERE n >= :first_append ORDER BY n;
RESET max_parallel_workers;
RESET statement_timeout;
-- an engine that declines a participant's rows midway (the test holder,
-- after each process's first stores): an ORDER BY's participants each sort
-- their later rows in runs of their own, and the leader the shared input
-- as a run, under the Gather Merge, whose order is Sort's; a parallel
-- window's workers hand the rows refused to the leader, which computes the
-- whole window over them, its own and the rows held: every value is
-- WindowAgg's, the leader alone too
SET gpusort.debug_hold_stores = 1;
SELECT same_as_native('SELECT * FROM win_pw ORDER BY v, id');
SELECT same_as_native('SELECT * FROM win_pw ORDER BY g, v DESC, w, id');
SELECT trim(line) AS win_values_by
FROM explain_analyze('SELECT sum(r), count(*) FROM (SELECT id, rank() OVER (PARTITION BY g ORDER BY v DESC) r
  FROM win_pw) s') AS line
WHERE line ~ 'Window Values:';
SELECT n, win_check(q) FROM win_queries WHERE n >= :first_pw ORDER BY n;
SET gpusort.debug_hold_stores = 4;
SELECT n, win_check(q) FROM win_queries WHERE n >= :first_pw ORDER BY n;
SET max_parallel_workers = 0;
SELECT n, win_check(q) FROM win_queries WHERE n >= :first_pw ORDER BY n;
RESET max_parallel_workers;
RESET gpusort.debug_hold_stores;
-- a first partition key that may be NULL: the engine holds the rows led by
-- a value, and the rows led by a NULL, partitions of their own, go from
-- each worker to the leader, which computes them after its slices; split
-- by a later partition key, with a function that reads the partition
-- ahead, every row's key NULL, top N per group, lag(), lead() and sum();
-- the leader alone, a leader that reads none of the scan, and rows refused
-- midway
INSERT INTO win_queries (q) VALUES
  (win_pw_hashed('SELECT id, n, rank() OVER (PARTITION BY n ORDER BY v, id) FROM win_pw')),
  (win_pw_hashed('SELECT id, rank() OVER w, dense_rank() OVER w FROM win_pw
      WINDOW w AS (PARTITION BY n, g ORDER BY v DESC)')),
  (win_pw_hashed('SELECT id, rank() OVER (PARTITION BY n ORDER BY g DESC, v) FROM win_pw')),
  (win_pw_hashed('SELECT id, count(*) OVER w, cume_dist() OVER w FROM win_pw
      WINDOW w AS (PARTITION BY n ORDER BY w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)')),
  (win_pw_hashed('SELECT id, percent_rank() OVER (PARTITION BY nullif(g, g) ORDER BY v, id) FROM win_pw')),
  -- top N per group: the run condition ends each partition in the
  -- participant that computes it, where only the rows that pass it leave
  ('SELECT count(*), sum(id), sum(rn) FROM (SELECT id, row_number() OVER (PARTITION BY g ORDER BY v DESC, id) rn
      FROM win_pw) s WHERE rn <= 3'),
  ('SELECT count(*), sum(id), sum(r) FROM (SELECT id, rank() OVER (PARTITION BY n ORDER BY v) r
      FROM win_pw) s WHERE r <= 2'),
  ('SELECT count(*), sum(id), sum(r) FROM (SELECT id, dense_rank() OVER (PARTITION BY n, w % 7 ORDER BY g DESC) r
      FROM win_pw) s WHERE r < 3'),
  -- lag(), lead(), first and last values, and aggregates over the partition
  (win_pw_hashed('SELECT id, lag(v) OVER w, lead(id, 3, 0) OVER w, lag(w, 2, -w) OVER w,
        first_value(id) OVER w, last_value(w) OVER w, nth_value(id, 2) OVER w FROM win_pw
      WINDOW w AS (PARTITION BY n ORDER BY v, id)')),
  (win_pw_hashed('SELECT id, sum(v) OVER w, avg(w) OVER w, max(n) OVER w, count(n) OVER w FROM win_pw
      WINDOW w AS (PARTITION BY g)')),
  -- three clauses over one sort, sliced by the first key alone
  (win_pw_hashed('SELECT id, rank() OVER (PARTITION BY n, g ORDER BY v DESC), count(*) OVER (PARTITION BY n),
        lag(v) OVER (PARTITION BY n ORDER BY g) FROM win_pw'));
SELECT max(n) - 10 AS first_null FROM win_queries \gset
SELECT n, win_plan(q), win_check(q) FROM win_queries WHERE n >= :first_null ORDER BY n;
SELECT trim(line) AS win_values_by
FROM explain_analyze('SELECT sum(r), count(*) FROM (SELECT id, rank() OVER (PARTITION BY n ORDER BY v) r
  FROM win_pw) s') AS line
WHERE line ~ 'Window Values:';
SET max_parallel_workers = 0;
SELECT n, win_check(q) FROM win_queries WHERE n >= :first_null ORDER BY n;
RESET max_parallel_workers;
SET parallel_leader_participation = off;
SELECT n, win_check(q) FROM win_queries WHERE n >= :first_null ORDER BY n;
RESET parallel_leader_participation;
SET gpusort.debug_hold_stores = 1;
SELECT n, win_check(q) FROM win_queries WHERE n >= :first_null ORDER BY n;
SET gpusort.debug_hold_stores = 4;
SELECT n, win_check(q) FROM win_queries WHERE n >= :first_null ORDER BY n;
RESET gpusort.debug_hold_stores;
-- where no aggregate in parts takes the rows, they leave the participants
-- through a Gather, with their values: the rows themselves returned, top
-- N per group, ORDER BY above (a sort of the Gather's rows)
INSERT INTO win_queries (q) VALUES
  ('SELECT * FROM (SELECT id, rank() OVER (PARTITION BY g ORDER BY v) FROM win_pw) s'),
  ('SELECT id, n, dense_rank() OVER (PARTITION BY n ORDER BY w) FROM win_pw'),
  ('SELECT * FROM (SELECT id, row_number() OVER (PARTITION BY n ORDER BY v DESC, id) rn
      FROM win_pw) s WHERE rn <= 3'),
  ('SELECT id, g, cume_dist() OVER (PARTITION BY g ORDER BY v) FROM win_pw ORDER BY id LIMIT 5000');
SELECT max(n) - 3 AS first_gather FROM win_queries \gset
SELECT n, win_plan(q), win_check(q) FROM win_queries WHERE n >= :first_gather ORDER BY n;
SELECT win_explain(q) FROM win_queries WHERE n = :first_gather + 3;
SET max_parallel_workers = 0;
SELECT n, win_check(q) FROM win_queries WHERE n >= :first_gather ORDER BY n;
RESET max_parallel_workers;
SET gpusort.debug_hold_stores = 1;
SELECT n, win_check(q) FROM win_queries WHERE n >= :first_gather ORDER BY n;
RESET gpusort.debug_hold_stores;
-- no parallel window: a later key that may be NULL, of a codec that leaves
-- no room for one, no PARTITION BY, two window clauses of two sorts,
-- gpusort.parallel_window off
SELECT win_plan(win_pw_hashed('SELECT id, rank() OVER (PARTITION BY g ORDER BY n::numeric(9,2)) FROM win_pw'));
SELECT win_plan(win_pw_hashed('SELECT id, rank() OVER (ORDER BY v) FROM win_pw'));
SELECT win_plan(win_pw_hashed('SELECT id, rank() OVER (PARTITION BY g ORDER BY v),
  rank() OVER (PARTITION BY w ORDER BY v) FROM win_pw'));
SET gpusort.parallel_window = off;
SELECT win_plan(win_pw_hashed('SELECT id, rank() OVER (PARTITION BY g ORDER BY v) FROM win_pw'));
RESET gpusort.parallel_window;
-- a later key that may be NULL, of a codec that leaves no room for one, in
-- a column whose statistics found no NULL (a table with no NOT NULL
-- declared): the parallel window; then NULLs that came after ANALYZE, in
-- the leader's rows or a worker's: the store that has one is refused, the
-- leader computes the whole window, and every value is WindowAgg's
CREATE TABLE win_pn (id int, g int, v numeric(12,2)) WITH (autovacuum_enabled = off);
INSERT INTO win_pn SELECT id, g, v FROM win_pw;
ANALYZE win_pn;
INSERT INTO win_queries (q) VALUES
  ('SELECT sum(r), count(*), sum(r::numeric * id) FROM (SELECT id, rank() OVER (PARTITION BY g ORDER BY v DESC) r
      FROM win_pn) s'),
  (win_pw_hashed('SELECT id, v, dense_rank() OVER (PARTITION BY g ORDER BY v) FROM win_pn'));
SELECT max(n) - 1 AS first_pn FROM win_queries \gset
SELECT n, win_plan(q), win_check(q) FROM win_queries WHERE n >= :first_pn ORDER BY n;
UPDATE win_pn SET v = NULL WHERE id % 997 = 0;
SELECT n, win_plan(q), win_check(q) FROM win_queries WHERE n >= :first_pn ORDER BY n;
SELECT trim(line) AS win_values_by
FROM explain_analyze('SELECT sum(r), count(*) FROM (SELECT id, rank() OVER (PARTITION BY g ORDER BY v DESC) r
  FROM win_pn) s') AS line
WHERE line ~ 'Window Values:';
SET max_parallel_workers = 0;
SELECT n, win_check(q) FROM win_queries WHERE n >= :first_pn ORDER BY n;
RESET max_parallel_workers;
ANALYZE win_pn;
SELECT win_plan(q) FROM win_queries WHERE n = :first_pn;
DROP TABLE win_pn;
-- a plan made with gpusort on, run with it off: the input is not shared,
-- and one participant computes every value
SET plan_cache_mode = force_generic_plan;
PREPARE win_pw_sum AS SELECT sum(r), count(*), sum(r::numeric * id)
  FROM (SELECT id, rank() OVER (PARTITION BY g ORDER BY v DESC) r FROM win_pw) s;
SELECT win_shown(line) FROM win_explain('EXECUTE win_pw_sum') AS line WHERE line ~ 'Aggregate';
SET gpusort.enabled = off;
EXECUTE win_pw_sum;
SELECT sum(r), count(*), sum(r::numeric * id)
  FROM (SELECT id, rank() OVER (PARTITION BY g ORDER BY v DESC) r FROM win_pw) s;
RESET gpusort.enabled;
DEALLOCATE win_pw_sum;
RESET plan_cache_mode;
-- (each participant's share of the slices varies from run to run)
SELECT win_shown(regexp_replace(line, ' \(actual rows=[0-9]+ loops=[0-9]+\)', '')) AS line
FROM explain_analyze('SELECT sum(r) FROM (SELECT rank() OVER (PARTITION BY g ORDER BY v) r FROM win_pw) s') AS line
WHERE line ~ '(GpuSort|Gather|Aggregate|Window Functions|Window Values|Sort Method)' AND line !~ 'Worker [0-9]';
RESET gpusort.work_mem;
RESET gpusort.debug_hold_rows;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

DROP TABLE win_t, win_empty, win_queries, win_x, win_big, win_pw;
DROP FUNCTION win_check, win_compare, win_rows, win_plan, win_explain, win_shown, win_pw_hashed;
DROP COLLATION win_libc;
