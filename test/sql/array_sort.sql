--
-- array_sort: gpusort(arr [, descending [, nulls_first]]) and
-- gpusort_permutation(arr [, descending [, nulls_first]])
--
CREATE EXTENSION IF NOT EXISTS gpusort;
SET DateStyle = 'ISO, YMD';
SET TimeZone = 'UTC';
SET extra_float_digits = 0;

-- Every overload is STRICT, IMMUTABLE and PARALLEL SAFE: 8 types, 2 functions,
-- 1 to 3 arguments.
SELECT count(*) AS functions,
       bool_and(proisstrict) AS strict,
       bool_and(provolatile = 'i') AS immutable,
       bool_and(proparallel = 's') AS parallel_safe
FROM pg_proc
WHERE proname IN ('gpusort', 'gpusort_permutation');

-- Reference implementations: PostgreSQL's own ordering of the elements, with
-- ties (and NULLs) kept in input order.
CREATE FUNCTION ref_sort(a anyarray, d bool, nf bool) RETURNS anyarray
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  r a%TYPE;
BEGIN
  EXECUTE format('SELECT coalesce(array_agg(x ORDER BY x %s NULLS %s, o), ''{}'')
                  FROM unnest($1) WITH ORDINALITY AS u(x, o)',
                 CASE WHEN d THEN 'DESC' ELSE 'ASC' END,
                 CASE WHEN nf THEN 'FIRST' ELSE 'LAST' END)
    INTO r USING a;
  RETURN r;
END
$$;

CREATE FUNCTION ref_perm(a anyarray, d bool, nf bool) RETURNS int4[]
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  r int4[];
BEGIN
  EXECUTE format('SELECT coalesce(array_agg(o::int4 ORDER BY x %s NULLS %s, o), ''{}'')
                  FROM unnest($1) WITH ORDINALITY AS u(x, o)',
                 CASE WHEN d THEN 'DESC' ELSE 'ASC' END,
                 CASE WHEN nf THEN 'FIRST' ELSE 'LAST' END)
    INTO r USING a;
  RETURN r;
END
$$;

-- The variants of one array that disagree with the reference ({} when none).
-- Texts are compared, so that -0 and 0 must appear in the same places.
-- The 1- and 2-argument defaults are checked too.
CREATE FUNCTION check_array(a anyarray) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
  fails text[] := '{}';
  d bool;
  nf bool;
  got text;
BEGIN
  FOREACH d IN ARRAY '{f,t}'::bool[] LOOP
    FOREACH nf IN ARRAY '{f,t}'::bool[] LOOP
      EXECUTE 'SELECT gpusort($1, $2, $3)::text' INTO got USING a, d, nf;
      IF got IS DISTINCT FROM ref_sort(a, d, nf)::text THEN
        fails := fails || format('gpusort(%s,%s)', d, nf);
      END IF;
      EXECUTE 'SELECT gpusort_permutation($1, $2, $3)::text' INTO got USING a, d, nf;
      IF got IS DISTINCT FROM ref_perm(a, d, nf)::text THEN
        fails := fails || format('gpusort_permutation(%s,%s)', d, nf);
      END IF;
    END LOOP;
  END LOOP;
  -- ascending with NULLs last; descending with NULLs first
  EXECUTE 'SELECT gpusort($1)::text' INTO got USING a;
  IF got IS DISTINCT FROM ref_sort(a, false, false)::text THEN
    fails := fails || 'gpusort()'::text;
  END IF;
  EXECUTE 'SELECT gpusort($1, false)::text' INTO got USING a;
  IF got IS DISTINCT FROM ref_sort(a, false, false)::text THEN
    fails := fails || 'gpusort(f)'::text;
  END IF;
  EXECUTE 'SELECT gpusort($1, true)::text' INTO got USING a;
  IF got IS DISTINCT FROM ref_sort(a, true, true)::text THEN
    fails := fails || 'gpusort(t)'::text;
  END IF;
  EXECUTE 'SELECT gpusort_permutation($1)::text' INTO got USING a;
  IF got IS DISTINCT FROM ref_perm(a, false, false)::text THEN
    fails := fails || 'gpusort_permutation()'::text;
  END IF;
  EXECUTE 'SELECT gpusort_permutation($1, false)::text' INTO got USING a;
  IF got IS DISTINCT FROM ref_perm(a, false, false)::text THEN
    fails := fails || 'gpusort_permutation(f)'::text;
  END IF;
  EXECUTE 'SELECT gpusort_permutation($1, true)::text' INTO got USING a;
  IF got IS DISTINCT FROM ref_perm(a, true, true)::text THEN
    fails := fails || 'gpusort_permutation(t)'::text;
  END IF;
  RETURN fails;
END
$$;

-- The references themselves, on known answers.
SELECT ref_sort('{2,NULL,1}'::int4[], false, false) AS asc_nulls_last,
       ref_sort('{2,NULL,1}'::int4[], true, true) AS desc_nulls_first,
       ref_perm('{2,NULL,1}'::int4[], false, true) AS perm_nulls_first,
       ref_sort('{0,-0,1,-0}'::float8[], false, false) AS stable_zeros,
       ref_sort('{}'::int2[], true, true) AS empty;

--
-- Each type, with NULLs and extremes: the four orders, then the defaults.
--
CREATE TEMP TABLE orders (d bool, nf bool);
INSERT INTO orders VALUES (false, false), (false, true), (true, false), (true, true);

SELECT d, nf, gpusort(a, d, nf), gpusort_permutation(a, d, nf)
FROM orders, (VALUES ('{3,NULL,-32768,32767,0,NULL,-1,3}'::int2[])) v(a)
ORDER BY d, nf;
SELECT d, nf, gpusort(a, d, nf), gpusort_permutation(a, d, nf)
FROM orders, (VALUES ('{3,NULL,-2147483648,2147483647,0,NULL,-1,3}'::int4[])) v(a)
ORDER BY d, nf;
SELECT d, nf, gpusort(a, d, nf), gpusort_permutation(a, d, nf)
FROM orders, (VALUES ('{3,NULL,-9223372036854775808,9223372036854775807,0,NULL,-1,3}'::int8[])) v(a)
ORDER BY d, nf;
SELECT d, nf, gpusort(a, d, nf), gpusort_permutation(a, d, nf)
FROM orders, (VALUES ('{1.5,NaN,NULL,-Infinity,-0,Infinity,0,-1.5,NaN,-0}'::float4[])) v(a)
ORDER BY d, nf;
SELECT d, nf, gpusort(a, d, nf), gpusort_permutation(a, d, nf)
FROM orders, (VALUES ('{1.5,NaN,NULL,-Infinity,-0,Infinity,0,-1.5,NaN,-0,1e308,-1e-308}'::float8[])) v(a)
ORDER BY d, nf;
SELECT d, nf, gpusort(a, d, nf), gpusort_permutation(a, d, nf)
FROM orders, (VALUES ('{2024-02-29,infinity,NULL,-infinity,1999-12-31,4713-01-01 BC,2024-02-29}'::date[])) v(a)
ORDER BY d, nf;
SELECT d, nf, gpusort(a, d, nf), gpusort_permutation(a, d, nf)
FROM orders, (VALUES ('{"2024-02-29 12:00:00",infinity,NULL,-infinity,"2024-02-29 11:59:59.999999","1999-12-31 23:59:59"}'::timestamp[])) v(a)
ORDER BY d, nf;
SELECT d, nf, gpusort(a, d, nf), gpusort_permutation(a, d, nf)
FROM orders, (VALUES ('{"2024-02-29 12:00:00+00",infinity,NULL,-infinity,"2024-02-29 13:00:00+02","1999-12-31 23:59:59+00"}'::timestamptz[])) v(a)
ORDER BY d, nf;

-- Defaults: ascending; nulls_first defaults to descending.
SELECT gpusort('{2,NULL,1,3}'::int4[]) AS dflt,
       gpusort('{2,NULL,1,3}'::int4[], false) AS asc,
       gpusort('{2,NULL,1,3}'::int4[], true) AS desc,
       gpusort_permutation('{2,NULL,1,3}'::int4[]) AS perm_dflt,
       gpusort_permutation('{2,NULL,1,3}'::int4[], false) AS perm_asc,
       gpusort_permutation('{2,NULL,1,3}'::int4[], true) AS perm_desc;

-- The result has the input's type; permutations are int4[].
SELECT pg_typeof(gpusort('{1}'::int2[])) AS t1,
       pg_typeof(gpusort('{1}'::int4[])) AS t2,
       pg_typeof(gpusort('{1}'::int8[])) AS t3,
       pg_typeof(gpusort('{1}'::float4[])) AS t4,
       pg_typeof(gpusort('{1}'::float8[])) AS t5,
       pg_typeof(gpusort('{2000-01-01}'::date[])) AS t6,
       pg_typeof(gpusort('{2000-01-01}'::timestamp[])) AS t7,
       pg_typeof(gpusort('{2000-01-01}'::timestamptz[])) AS t8,
       pg_typeof(gpusort_permutation('{1}'::int8[])) AS t9;

--
-- Floats: -0 equals 0 and keeps its place among the zeros (stable); NaN
-- after every number, Infinity before NaN.
--
SELECT gpusort('{-0,1,0,-0,-1,0}'::float8[]) AS asc,
       gpusort('{-0,1,0,-0,-1,0}'::float8[], true) AS desc,
       gpusort('{-0,1,0,-0,-1,0}'::float4[]) AS asc4,
       gpusort('{-0,1,0,-0,-1,0}'::float4[], true) AS desc4,
       gpusort_permutation('{-0,1,0,-0,-1,0}'::float8[]) AS perm_asc,
       gpusort_permutation('{-0,1,0,-0,-1,0}'::float8[], true) AS perm_desc;
SELECT gpusort('{NaN,Infinity,NULL,-Infinity,NaN,1}'::float8[]) AS asc,
       gpusort('{NaN,Infinity,NULL,-Infinity,NaN,1}'::float8[], true, false) AS desc;

--
-- Small cases: empty, one element, all equal, all NULL.
--
SELECT gpusort('{}'::int4[]) AS empty,
       gpusort('{}'::float8[], true) AS empty_desc,
       gpusort_permutation('{}'::int2[]) AS empty_perm,
       pg_typeof(gpusort('{}'::date[])) AS empty_type,
       gpusort('{7}'::int8[]) AS one,
       gpusort('{NULL}'::int8[], true) AS one_null,
       gpusort_permutation('{7}'::int8[]) AS one_perm,
       gpusort_permutation('{NULL}'::int8[]) AS one_null_perm;
SELECT gpusort('{5,5,5,5}'::int4[]) AS equal,
       gpusort_permutation('{5,5,5,5}'::int4[]) AS equal_perm,
       gpusort_permutation('{5,5,5,5}'::int4[], true) AS equal_perm_desc,
       gpusort('{NULL,NULL,NULL}'::float4[]) AS nulls,
       gpusort_permutation('{NULL,NULL,NULL}'::float4[], true) AS nulls_perm,
       gpusort_permutation('{NULL,2,NULL,1}'::int2[], false, true) AS nulls_in_order;

--
-- A NULL argument gives NULL.
--
SELECT gpusort(NULL::int4[]) IS NULL AS null_array,
       gpusort('{2,1}'::int4[], NULL) IS NULL AS null_descending,
       gpusort('{2,1}'::int4[], false, NULL) IS NULL AS null_nulls_first,
       gpusort_permutation(NULL::float8[]) IS NULL AS perm_null_array,
       gpusort_permutation('{2,1}'::float8[], NULL) IS NULL AS perm_null_descending,
       gpusort_permutation('{2,1}'::float8[], true, NULL) IS NULL AS perm_null_nulls_first;

--
-- Lower bounds: gpusort keeps them; a permutation counts positions from the
-- first element, 1-based, whatever the lower bound.
--
SELECT gpusort('[5:7]={3,1,2}'::int4[]) AS sorted,
       gpusort('[5:7]={3,1,2}'::int4[], true) AS sorted_desc,
       gpusort_permutation('[5:7]={3,1,2}'::int4[]) AS perm,
       gpusort('[-2:2]={NULL,5,NULL,1,3}'::int8[]) AS with_nulls,
       gpusort('[-2:2]={NULL,5,NULL,1,3}'::int8[], true) AS with_nulls_desc,
       gpusort_permutation('[-2:2]={NULL,5,NULL,1,3}'::int8[]) AS perm_with_nulls;
SELECT array_lower(gpusort('[0:3]={4,3,2,1}'::float8[]), 1) AS lower,
       array_upper(gpusort('[0:3]={4,3,2,1}'::float8[]), 1) AS upper,
       array_lower(gpusort_permutation('[0:3]={4,3,2,1}'::float8[]), 1) AS perm_lower;
-- arr[lower + p - 1] walks the array in sorted order
SELECT array_agg(a[array_lower(a, 1) + p - 1] ORDER BY i) AS walked,
       gpusort(a) AS sorted
FROM (VALUES ('[10:15]={6,NULL,-4,9,0,6}'::int2[])) v(a),
     unnest(gpusort_permutation(a)) WITH ORDINALITY u(p, i)
GROUP BY a;

--
-- The result is an ordinary array.
--
SELECT (gpusort(a))[2] AS second, cardinality(gpusort(a)) AS n,
       array_position(gpusort(a), NULL) AS first_null,
       (SELECT count(*) FROM unnest(gpusort(a)) x WHERE x IS NULL) AS nulls,
       gpusort(a) = '{-1,0,1,2,3,4,5,6,7,8,NULL,NULL,NULL}'::int4[] AS equals
FROM (VALUES ('{NULL,8,7,6,5,NULL,4,3,2,1,0,-1,NULL}'::int4[])) v(a);

--
-- Multidimensional arrays are rejected with feature_not_supported.
--
SELECT gpusort('{{3,1},{2,4}}'::int4[]);
SELECT gpusort_permutation('{{{1}}}'::float8[], true);
DO $$
BEGIN
  PERFORM gpusort('{{3,1},{2,4}}'::int8[]);
  RAISE EXCEPTION 'a two-dimensional array was sorted';
EXCEPTION WHEN feature_not_supported THEN
  RAISE NOTICE 'rejected: %', SQLERRM;
END
$$;

--
-- Arrays of 1 to 80 elements, on either side of the size below which the
-- elements are sorted without a job, with many duplicates and NULLs, in
-- every type: every variant against the reference.
--
SELECT setseed(0.25);
CREATE TEMP TABLE small_base AS
SELECT n, (SELECT array_agg(CASE WHEN random() < 0.15 THEN NULL
                                 ELSE (random() * 20)::int4 - 10 END
                            ORDER BY g)
           FROM generate_series(1, n) g) AS a
FROM generate_series(1, 80) n;
CREATE TEMP TABLE small AS
SELECT n,
       a::int2[] AS i2,
       a AS i4,
       (SELECT array_agg(x::int8 * 1000000000000 ORDER BY o)
        FROM unnest(a) WITH ORDINALITY u(x, o)) AS i8,
       (SELECT array_agg(CASE x WHEN -10 THEN '-Infinity' WHEN 10 THEN 'Infinity'
                                WHEN 9 THEN 'NaN'
                                WHEN 0 THEN CASE WHEN o % 2 = 0 THEN '-0' ELSE '0' END
                                ELSE (x / 4.0)::text END::float4 ORDER BY o)
        FROM unnest(a) WITH ORDINALITY u(x, o)) AS f4,
       (SELECT array_agg(CASE x WHEN -10 THEN '-Infinity' WHEN 10 THEN 'Infinity'
                                WHEN 9 THEN 'NaN'
                                WHEN 0 THEN CASE WHEN o % 2 = 0 THEN '-0' ELSE '0' END
                                ELSE (x / 3.0)::text END::float8 ORDER BY o)
        FROM unnest(a) WITH ORDINALITY u(x, o)) AS f8,
       (SELECT array_agg(date '2000-01-01' + x ORDER BY o)
        FROM unnest(a) WITH ORDINALITY u(x, o)) AS dt,
       (SELECT array_agg(timestamp '2000-01-01' + x * interval '1 microsecond' ORDER BY o)
        FROM unnest(a) WITH ORDINALITY u(x, o)) AS ts,
       (SELECT array_agg(timestamptz '2000-01-01 00:00+00' + x * interval '1 day' ORDER BY o)
        FROM unnest(a) WITH ORDINALITY u(x, o)) AS tstz
FROM small_base;
-- the data is not sorted already, and has NULLs
SELECT count(*) FILTER (WHERE i4 <> ref_sort(i4, false, false)) AS unsorted,
       count(*) FILTER (WHERE array_position(i4, NULL) IS NOT NULL) AS with_nulls
FROM small;
SELECT count(*) AS arrays,
       count(*) FILTER (WHERE check_array(i2) = '{}') AS int2_ok,
       count(*) FILTER (WHERE check_array(i4) = '{}') AS int4_ok,
       count(*) FILTER (WHERE check_array(i8) = '{}') AS int8_ok,
       count(*) FILTER (WHERE check_array(f4) = '{}') AS float4_ok,
       count(*) FILTER (WHERE check_array(f8) = '{}') AS float8_ok,
       count(*) FILTER (WHERE check_array(dt) = '{}') AS date_ok,
       count(*) FILTER (WHERE check_array(ts) = '{}') AS timestamp_ok,
       count(*) FILTER (WHERE check_array(tstz) = '{}') AS timestamptz_ok
FROM small;

-- An array built in PL/pgSQL (an expanded array) is sorted as well.
DO $$
DECLARE
  a int4[] := '{}';
BEGIN
  FOR i IN 1..100 LOOP
    a := a || ((i * 37) % 101);
  END LOOP;
  RAISE NOTICE 'expanded array: sorted %, permutation %, all variants %',
    gpusort(a) = ref_sort(a, false, false),
    gpusort_permutation(a, true) = ref_perm(a, true, true),
    check_array(a);
END
$$;

--
-- Large arrays: 1M elements, stored in a table (so toasted), with NULLs,
-- duplicates and the special float values.
--
SELECT setseed(0.5);
CREATE TEMP TABLE big AS
SELECT array_agg(CASE WHEN r1 < 0.01 THEN NULL
                      ELSE (r2 * 60000)::int4 - 30000 END ORDER BY g)::int2[] AS i2,
       array_agg(CASE WHEN r1 < 0.01 THEN NULL
                      WHEN r1 < 0.011 THEN -2147483648
                      WHEN r1 < 0.012 THEN 2147483647
                      ELSE (r2 * 4e9 - 2e9)::int4 END ORDER BY g) AS i4,
       array_agg(CASE WHEN r1 < 0.01 THEN NULL
                      ELSE ((r2 - 0.5) * 9e18)::int8 END ORDER BY g) AS i8,
       array_agg(CASE WHEN r1 < 0.01 THEN NULL
                      ELSE (r2 * 2e6 - 1e6)::float4 END ORDER BY g) AS f4,
       array_agg(CASE WHEN r1 < 0.01 THEN NULL
                      WHEN r1 < 0.02 THEN '-0'::float8
                      WHEN r1 < 0.03 THEN '0'::float8
                      WHEN r1 < 0.031 THEN 'NaN'::float8
                      WHEN r1 < 0.032 THEN 'Infinity'::float8
                      WHEN r1 < 0.033 THEN '-Infinity'::float8
                      ELSE (r2 - 0.5) * 1e10 END ORDER BY g) AS f8,
       array_agg(CASE WHEN r1 < 0.01 THEN NULL
                      ELSE date '2000-01-01' + (r2 * 20000)::int4 END ORDER BY g) AS dt,
       array_agg(CASE WHEN r1 < 0.01 THEN NULL
                      ELSE timestamp '2000-01-01' + r2 * interval '10000 days' END ORDER BY g) AS ts,
       array_agg(CASE WHEN r1 < 0.01 THEN NULL
                      ELSE timestamptz '2000-01-01 00:00+00' + r2 * interval '10000 days' END ORDER BY g) AS tstz
FROM (SELECT g, random() AS r1, random() AS r2
      FROM generate_series(1, 1000000) g) s;
SELECT cardinality(i4) AS n,
       i4 <> gpusort(i4) AS i4_unsorted,
       (SELECT count(*) FROM unnest(i4) x WHERE x IS NULL) BETWEEN 9000 AND 11000 AS i4_nulls,
       (SELECT count(DISTINCT x) FROM unnest(i2) x) < 70000 AS i2_duplicates,
       (SELECT count(*) FROM unnest(f8) x WHERE x = 0) > 15000 AS f8_zeros
FROM big;

-- Each type: ascending (NULLs last) sorted, descending (NULLs first)
-- permutation, which must keep equal elements in input order.
SELECT gpusort(i2) = ref_sort(i2, false, false) AS int2,
       gpusort_permutation(i2, true) = ref_perm(i2, true, true) AS int2_perm,
       gpusort(i4) = ref_sort(i4, false, false) AS int4,
       gpusort_permutation(i4, true) = ref_perm(i4, true, true) AS int4_perm,
       gpusort(i8) = ref_sort(i8, false, false) AS int8,
       gpusort_permutation(i8, true) = ref_perm(i8, true, true) AS int8_perm
FROM big;
SELECT gpusort(f4)::text = ref_sort(f4, false, false)::text AS float4,
       gpusort_permutation(f4, true) = ref_perm(f4, true, true) AS float4_perm,
       gpusort(f8)::text = ref_sort(f8, false, false)::text AS float8,
       gpusort_permutation(f8, true) = ref_perm(f8, true, true) AS float8_perm
FROM big;

-- Floats without -0 are sorted as values and come back bit for bit: the
-- NaN that PostgreSQL makes of 'NaN' through the keys, the other one that
-- Infinity - Infinity makes (its sign bit set) through a permutation.
SELECT nan, d,
       (SELECT array_agg(float8send(x)) FROM unnest(gpusort(a, d)) x) =
       (SELECT array_agg(float8send(x)) FROM unnest(ref_sort(a, d, d)) x) AS same_bits,
       (SELECT array_agg(float4send(x)) FROM unnest(gpusort(a::float4[], d)) x) =
       (SELECT array_agg(float4send(x)) FROM unnest(ref_sort(a::float4[], d, d)) x) AS same_bits4
FROM (VALUES ('canonical', 'NaN'::float8),
             ('computed', 'Infinity'::float8 - 'Infinity'::float8)) n(nan, nanval),
     LATERAL (SELECT array_agg(CASE WHEN g % 97 = 0 THEN nanval
                                    WHEN g % 101 = 0 THEN 'Infinity'::float8
                                    WHEN g % 103 = 0 THEN '-Infinity'::float8
                                    WHEN g % 7 = 0 THEN NULL
                                    ELSE hashint4(g) / 7.0 END ORDER BY g) AS a
              FROM generate_series(1, 200000) g) s,
     (VALUES (false), (true)) v(d)
ORDER BY nan, d;
SELECT gpusort(dt) = ref_sort(dt, false, false) AS date,
       gpusort_permutation(dt, true) = ref_perm(dt, true, true) AS date_perm,
       gpusort(ts) = ref_sort(ts, false, false) AS timestamp,
       gpusort_permutation(ts, true) = ref_perm(ts, true, true) AS timestamp_perm,
       gpusort(tstz) = ref_sort(tstz, false, false) AS timestamptz,
       gpusort_permutation(tstz, true) = ref_perm(tstz, true, true) AS timestamptz_perm
FROM big;

-- The other NULL placements, on float8 with -0, NaN and infinities (texts
-- compared: -0 and 0 must keep their input order).
SELECT gpusort(f8, false, true)::text = ref_sort(f8, false, true)::text AS asc_nulls_first,
       gpusort(f8, true, false)::text = ref_sort(f8, true, false)::text AS desc_nulls_last,
       gpusort_permutation(f8, false, true) = ref_perm(f8, false, true) AS perm_asc_nulls_first,
       gpusort_permutation(f8, true, false) = ref_perm(f8, true, false) AS perm_desc_nulls_last
FROM big;

-- Without NULLs, and with a lower bound other than 1.
SELECT gpusort(a, true)::text = '[-5:999994]=' || ref_sort(a, true, true)::text AS sorted,
       gpusort_permutation(a) = ref_perm(a, false, false) AS perm
FROM (SELECT ('[-5:999994]=' || array_replace(i4, NULL, 7)::text)::int4[] AS a
      FROM big) s;
