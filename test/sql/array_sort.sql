--
-- array_sort: gpusort(arr anyarray, descending, nulls_first) and
-- gpusort_permutation(arr anyarray, descending, nulls_first)
--
CREATE EXTENSION IF NOT EXISTS gpusort;
SET DateStyle = 'ISO, YMD';
SET TimeZone = 'UTC';
SET extra_float_digits = 0;

-- One function each, on anyarray, IMMUTABLE and PARALLEL SAFE; not STRICT,
-- so that nulls_first => NULL asks for the default.
SELECT count(*) AS functions,
       bool_or(proisstrict) AS strict,
       bool_and(proargtypes[0] = 'anyarray'::regtype) AS anyarray,
       bool_and(pronargdefaults = 2) AS defaults,
       bool_and(provolatile = 'i') AS immutable,
       bool_and(proparallel = 's') AS parallel_safe
FROM pg_proc
WHERE proname IN ('gpusort', 'gpusort_permutation');

-- Reference implementations: PostgreSQL's own ordering of the elements, with
-- ties (and NULLs) kept in input order, under the collation coll (NULL: the
-- type's).  unnest in the select list, so that composite elements stay
-- whole.
CREATE FUNCTION collate_clause(coll text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN coll IS NULL THEN '' ELSE ' COLLATE ' || quote_ident(coll) END
$$;

CREATE FUNCTION ref_sort(a anyarray, d bool, nf bool, coll text DEFAULT NULL)
RETURNS anyarray
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  r a%TYPE;
BEGIN
  EXECUTE format('SELECT coalesce(array_agg(x ORDER BY x%s %s NULLS %s, o), ''{}'')
                  FROM (SELECT unnest($1) AS x,
                               generate_series(1, cardinality($1)) AS o) AS u',
                 collate_clause(coll),
                 CASE WHEN d THEN 'DESC' ELSE 'ASC' END,
                 CASE WHEN nf THEN 'FIRST' ELSE 'LAST' END)
    INTO r USING a;
  RETURN r;
END
$$;

CREATE FUNCTION ref_perm(a anyarray, d bool, nf bool, coll text DEFAULT NULL)
RETURNS int4[]
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  r int4[];
BEGIN
  EXECUTE format('SELECT coalesce(array_agg(o::int4 ORDER BY x%s %s NULLS %s, o), ''{}'')
                  FROM (SELECT unnest($1) AS x,
                               generate_series(1, cardinality($1)) AS o) AS u',
                 collate_clause(coll),
                 CASE WHEN d THEN 'DESC' ELSE 'ASC' END,
                 CASE WHEN nf THEN 'FIRST' ELSE 'LAST' END)
    INTO r USING a;
  RETURN r;
END
$$;

-- The variants of one array that disagree with the reference ({} when none),
-- under the collation coll (NULL: the type's).  Texts are compared, so that
-- -0 and 0 (or 1.5 and 1.50) must appear in the same places.  The defaults,
-- positional and named, are checked too.
CREATE FUNCTION check_array(a anyarray, coll text DEFAULT NULL) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
  fails text[] := '{}';
  arg text := '$1' || collate_clause(coll);
  d bool;
  nf bool;
  got text;
BEGIN
  FOREACH d IN ARRAY '{f,t}'::bool[] LOOP
    FOREACH nf IN ARRAY '{f,t}'::bool[] LOOP
      EXECUTE format('SELECT gpusort(%s, $2, $3)::text', arg) INTO got USING a, d, nf;
      IF got IS DISTINCT FROM ref_sort(a, d, nf, coll)::text THEN
        fails := fails || format('gpusort(%s,%s)', d, nf);
      END IF;
      EXECUTE format('SELECT gpusort_permutation(%s, $2, $3)::text', arg) INTO got USING a, d, nf;
      IF got IS DISTINCT FROM ref_perm(a, d, nf, coll)::text THEN
        fails := fails || format('gpusort_permutation(%s,%s)', d, nf);
      END IF;
    END LOOP;
  END LOOP;
  -- ascending with NULLs last; descending with NULLs first
  EXECUTE format('SELECT gpusort(%s)::text', arg) INTO got USING a;
  IF got IS DISTINCT FROM ref_sort(a, false, false, coll)::text THEN
    fails := fails || 'gpusort()'::text;
  END IF;
  EXECUTE format('SELECT gpusort(%s, false)::text', arg) INTO got USING a;
  IF got IS DISTINCT FROM ref_sort(a, false, false, coll)::text THEN
    fails := fails || 'gpusort(f)'::text;
  END IF;
  EXECUTE format('SELECT gpusort(%s, true)::text', arg) INTO got USING a;
  IF got IS DISTINCT FROM ref_sort(a, true, true, coll)::text THEN
    fails := fails || 'gpusort(t)'::text;
  END IF;
  EXECUTE format('SELECT gpusort(%s, true, NULL)::text', arg) INTO got USING a;
  IF got IS DISTINCT FROM ref_sort(a, true, true, coll)::text THEN
    fails := fails || 'gpusort(t,NULL)'::text;
  END IF;
  EXECUTE format('SELECT gpusort(%s, nulls_first => true)::text', arg) INTO got USING a;
  IF got IS DISTINCT FROM ref_sort(a, false, true, coll)::text THEN
    fails := fails || 'gpusort(nulls_first => t)'::text;
  END IF;
  EXECUTE format('SELECT gpusort_permutation(%s)::text', arg) INTO got USING a;
  IF got IS DISTINCT FROM ref_perm(a, false, false, coll)::text THEN
    fails := fails || 'gpusort_permutation()'::text;
  END IF;
  EXECUTE format('SELECT gpusort_permutation(%s, false)::text', arg) INTO got USING a;
  IF got IS DISTINCT FROM ref_perm(a, false, false, coll)::text THEN
    fails := fails || 'gpusort_permutation(f)'::text;
  END IF;
  EXECUTE format('SELECT gpusort_permutation(%s, true)::text', arg) INTO got USING a;
  IF got IS DISTINCT FROM ref_perm(a, true, true, coll)::text THEN
    fails := fails || 'gpusort_permutation(t)'::text;
  END IF;
  EXECUTE format('SELECT gpusort_permutation(%s, descending => true, nulls_first => NULL)::text', arg)
    INTO got USING a;
  IF got IS DISTINCT FROM ref_perm(a, true, true, coll)::text THEN
    fails := fails || 'gpusort_permutation(descending => t, nulls_first => NULL)'::text;
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
-- A NULL array or descending gives NULL; a NULL nulls_first asks for the
-- default (NULLs first exactly when descending).
--
SELECT gpusort(NULL::int4[]) IS NULL AS null_array,
       gpusort(NULL::text[], true) IS NULL AS null_text_array,
       gpusort('{2,1}'::int4[], NULL) IS NULL AS null_descending,
       gpusort('{2,NULL,1}'::int4[], false, NULL) AS asc_default_nulls,
       gpusort('{2,NULL,1}'::int4[], true, NULL) AS desc_default_nulls,
       gpusort(ARRAY['b', NULL, 'a'], nulls_first => NULL) AS named_default;
SELECT gpusort_permutation(NULL::float8[]) IS NULL AS perm_null_array,
       gpusort_permutation('{2,1}'::float8[], NULL) IS NULL AS perm_null_descending,
       gpusort_permutation('{2,NULL,1}'::float8[], false, NULL) AS perm_asc_default,
       gpusort_permutation('{2,NULL,1}'::float8[], true, NULL) AS perm_desc_default,
       gpusort_permutation(ARRAY[2.5, NULL, 1.5], descending => true,
                           nulls_first => false) AS perm_named;

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
-- Every element type with a default btree operator class: exact keys (bool,
-- oid, uuid, money, time), prefix keys and their comparator (numeric, text,
-- varchar, bpchar, bytea), the comparator alone (the others, and text under
-- a libc collation other than C).  Each array has NULLs, duplicates, and
-- elements that compare equal but print differently where the type has
-- them; every variant is checked against the reference.
--
CREATE COLLATION arr_libc_c_utf8 (provider = libc, locale = 'C.UTF-8');
CREATE DOMAIN arr_posint AS int4 CHECK (VALUE > 0);
CREATE DOMAIN arr_ctext AS text COLLATE "C";
CREATE DOMAIN arr_int4s AS int4[];
CREATE TYPE arr_pair AS (k int4, t text);
CREATE TYPE arr_mood AS ENUM ('sad', 'ok', 'happy');

SELECT 'numeric' AS type, check_array('{1.5,NaN,NULL,-Infinity,0,-0.0,1.50,Infinity,-1e20,1e-20,NaN,1.5,0.00,NULL}'::numeric[]) AS fails
UNION ALL SELECT 'text', check_array('{b,a,"",B,NULL,ab,"a b",a,"",ä,é,e,ë,z}'::text[])
UNION ALL SELECT 'text C', check_array('{b,a,"",B,NULL,ab,"a b",a,"",ä,é,e,ë,z}'::text[], 'C')
UNION ALL SELECT 'text libc', check_array('{b,a,"",B,NULL,ab,"a b",a,"",ä,é,e,ë,z}'::text[], 'arr_libc_c_utf8')
UNION ALL SELECT 'text multibyte', check_array('{日本語,日本,中文,ж,Ж,😀,"",a,é,NULL,日本語,"ö ö"}'::text[])
UNION ALL SELECT 'text multibyte C', check_array('{日本語,日本,中文,ж,Ж,😀,"",a,é,NULL,日本語,"ö ö"}'::text[], 'C')
UNION ALL SELECT 'varchar', check_array('{b,a,"",B,NULL,ab,a}'::varchar[])
UNION ALL SELECT 'varchar C', check_array('{b,a,"",B,NULL,ab,a}'::varchar(3)[], 'C')
UNION ALL SELECT 'bpchar', check_array('{"a ",a," a",ab,"",NULL,"b  ",b,"  "}'::bpchar[])
UNION ALL SELECT 'bpchar C', check_array('{"a ",a," a",ab,"",NULL,"b  ",b,"  "}'::bpchar[], 'C')
UNION ALL SELECT 'char(3)', check_array('{"a",ab,NULL,"",abc,"a  "}'::char(3)[], 'C')
UNION ALL SELECT 'name', check_array('{pg_class,PG_CLASS,"",NULL,pg_am,pg_class}'::name[])
UNION ALL SELECT 'bytea', check_array('{"\\xff","\\x00","\\x","\\x0000",NULL,"\\xff00","\\x00"}'::bytea[])
UNION ALL SELECT 'uuid', check_array('{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,00000000-0000-0000-0000-000000000002,NULL,00000000-0000-0000-0000-000000000001,ffffffff-ffff-ffff-ffff-ffffffffffff,00000000-0000-0001-0000-000000000000,00000000-0000-0000-0000-000000000002,00000000-0000-0000-0000-000000000000}'::uuid[])
UNION ALL SELECT 'bool', check_array('{t,f,NULL,t,f,f,NULL}'::bool[])
UNION ALL SELECT 'oid', check_array('{4294967295,0,1,NULL,2147483648,1,2147483647}'::oid[])
UNION ALL SELECT 'money', check_array('{1.50,-2,0,NULL,92233720368547758.07,-92233720368547758.08,1.5}'::money[])
UNION ALL SELECT 'time', check_array('{24:00,00:00,12:30:00.000001,NULL,12:30,00:00:00}'::time[])
UNION ALL SELECT 'timetz', check_array('{12:00+01,11:00+00,12:00+01,NULL,00:00-12}'::timetz[])
UNION ALL SELECT 'interval', check_array('{"1 day","24 hours","1 mon","30 days",NULL,"-1 hour","1 day"}'::interval[])
UNION ALL SELECT 'inet', check_array('{10.0.0.1,9.0.0.0/8,::1,NULL,10.0.0.1/32,10.0.0.1}'::inet[])
UNION ALL SELECT 'char', check_array('{b,a,NULL,B,a}'::"char"[])
UNION ALL SELECT 'enum', check_array('{happy,sad,NULL,ok,sad}'::arr_mood[])
UNION ALL SELECT 'composite', check_array(ARRAY[(2,'a'), (1,'b'), NULL, (1,'a'), (1,NULL), (2,'a')]::arr_pair[])
UNION ALL SELECT 'domain', check_array('{3,1,NULL,2,1}'::arr_posint[])
UNION ALL SELECT 'domain text C', check_array('{b,a,B,NULL,ä}'::arr_ctext[])
UNION ALL SELECT 'domain over array', check_array('{3,1,NULL,2,1}'::arr_int4s);

-- The results themselves, with their types.
SELECT gpusort(ARRAY[1.5, 0.5, 'NaN', '-Infinity', 1.50]) AS numeric,
       pg_typeof(gpusort(ARRAY[1.5, 0.5])) AS numeric_type,
       gpusort(ARRAY['b', 'a', 'B', 'ä', ''] COLLATE "C") AS text_c,
       gpusort(ARRAY['a ', 'a', ' a']::bpchar[]) AS bpchar,
       gpusort('{"\\xff","\\x","\\x00"}'::bytea[], true) AS bytea_desc;
SELECT gpusort('{t,NULL,f,t}'::bool[]) AS bool,
       gpusort('{4294967295,0,NULL,7}'::oid[], true) AS oid_desc,
       gpusort('{1.5,-2,NULL}'::money[]) AS money,
       gpusort('{23:59,00:00,12:00}'::time[]) AS time,
       gpusort('{"1 day","24 hours","1 hour"}'::interval[]) AS interval;
SELECT gpusort('{ffffffff-0000-0000-0000-000000000000,00000000-0000-0000-0000-00000000000f,00000000-0000-0000-0000-0000000000f0}'::uuid[]) AS uuid;
SELECT gpusort(ARRAY[(2,'a'), (1,'b'), (1,'a')]::arr_pair[]) AS composite,
       gpusort('{3,1,2}'::arr_posint[]) AS domain,
       pg_typeof(gpusort('{3,1,2}'::arr_posint[])) AS domain_type,
       gpusort('{3,1,2}'::arr_int4s) AS domain_over_array,
       pg_typeof(gpusort('{3,1,2}'::arr_int4s)) AS domain_over_array_type;

-- int2vector and oidvector are arrays of int2 and oid, with lower bound 0.
SELECT gpusort('3 1 2 1'::int2vector) AS int2vector,
       pg_typeof(gpusort('3 1 2 1'::int2vector)) AS int2vector_type,
       gpusort('3 1 2 1'::int2vector, true) AS int2vector_desc,
       gpusort_permutation('3 1 2 1'::int2vector) AS int2vector_perm,
       gpusort('30 10 4294967295 20'::oidvector) AS oidvector,
       gpusort_permutation('30 10 4294967295 20'::oidvector, true) AS oidvector_perm;
SELECT gpusort(v)::text = array_to_string(ref_sort(v::int2[], false, false), ' ') AS int2vector,
       array_lower(gpusort(v), 1) = 0 AS int2vector_lower,
       gpusort_permutation(v, true) = ref_perm(v::int2[], true, true) AS int2vector_perm
FROM (SELECT array_to_string(array_agg((hashint4(g) % 1000)::int2 ORDER BY g), ' ')::int2vector AS v
      FROM generate_series(1, 200) g) s;

-- Types without an ordering operator are rejected with undefined_function.
SELECT gpusort('{"(1,2)"}'::point[]);
SELECT gpusort_permutation(ARRAY['{"a": 1}'::json]);
DO $$
BEGIN
  PERFORM gpusort(ARRAY[box '(1,2),(0,0)', box '(3,3),(2,2)']);
  RAISE EXCEPTION 'an array of box was sorted';
EXCEPTION WHEN undefined_function THEN
  RAISE NOTICE 'rejected: %', SQLERRM;
END
$$;

--
-- Arrays of 1 to 80 elements of the other types, on either side of the size
-- below which the elements are sorted without a job, from the same data:
-- texts share prefixes longer than a prefix key, so that their keys tie.
--
CREATE TEMP TABLE small_more AS
SELECT n,
       (SELECT array_agg(CASE x WHEN -10 THEN '-Infinity' WHEN 10 THEN 'Infinity'
                                WHEN 9 THEN 'NaN'
                                ELSE CASE WHEN o % 2 = 0 THEN (x / 2.0)::numeric(10, 1)
                                          ELSE (x / 2.0)::numeric(10, 4) END END::numeric
                         ORDER BY o)
        FROM unnest(a) WITH ORDINALITY u(x, o)) AS num,
       (SELECT array_agg(CASE WHEN x = 0 THEN ''
                              WHEN x = 5 THEN 'é'
                              WHEN x = 6 THEN 'E'
                              WHEN o % 3 = 0 THEN x::text
                              ELSE 'a shared prefix ' || x END ORDER BY o)
        FROM unnest(a) WITH ORDINALITY u(x, o)) AS txt,
       (SELECT array_agg(CASE WHEN o % 3 = 0 THEN x || '  ' ELSE x::text END::bpchar ORDER BY o)
        FROM unnest(a) WITH ORDINALITY u(x, o)) AS bpc,
       (SELECT array_agg(decode(CASE WHEN x = 0 THEN '' ELSE '0102030405060708' || lpad(to_hex(x + 10), 2, '0') END, 'hex')
                         ORDER BY o)
        FROM unnest(a) WITH ORDINALITY u(x, o)) AS byt,
       (SELECT array_agg((lpad(to_hex(abs(x) % 3), 8, '0') || '-0000-0000-0000-' ||
                          lpad(to_hex(x + 10), 12, '0'))::uuid ORDER BY o)
        FROM unnest(a) WITH ORDINALITY u(x, o)) AS uid,
       (SELECT array_agg(x > 0 ORDER BY o) FROM unnest(a) WITH ORDINALITY u(x, o)) AS bl,
       (SELECT array_agg(CASE WHEN x = 10 THEN 4294967295 ELSE x + 10 END::oid ORDER BY o)
        FROM unnest(a) WITH ORDINALITY u(x, o)) AS oi,
       (SELECT array_agg((x * 1.25)::numeric::money ORDER BY o)
        FROM unnest(a) WITH ORDINALITY u(x, o)) AS mny,
       (SELECT array_agg(time '12:00' + x * interval '1 minute' ORDER BY o)
        FROM unnest(a) WITH ORDINALITY u(x, o)) AS tm,
       (SELECT array_agg(CASE WHEN o % 2 = 0 THEN x * interval '24 hours'
                              ELSE x * interval '1 day' END ORDER BY o)
        FROM unnest(a) WITH ORDINALITY u(x, o)) AS ivl,
       (SELECT array_agg(ROW(x % 3, x::text)::arr_pair ORDER BY o)
        FROM unnest(a) WITH ORDINALITY u(x, o)) AS cmp,
       (SELECT array_agg((x + 11)::arr_posint ORDER BY o)
        FROM unnest(a) WITH ORDINALITY u(x, o)) AS dom
FROM small_base;
SELECT count(*) AS arrays,
       count(*) FILTER (WHERE check_array(num) = '{}') AS numeric_ok,
       count(*) FILTER (WHERE check_array(txt) = '{}') AS text_ok,
       count(*) FILTER (WHERE check_array(txt, 'C') = '{}') AS text_c_ok,
       count(*) FILTER (WHERE check_array(txt::varchar[], 'C') = '{}') AS varchar_c_ok,
       count(*) FILTER (WHERE check_array(bpc) = '{}') AS bpchar_ok,
       count(*) FILTER (WHERE check_array(bpc, 'C') = '{}') AS bpchar_c_ok,
       count(*) FILTER (WHERE check_array(byt) = '{}') AS bytea_ok
FROM small_more;
SELECT count(*) AS arrays,
       count(*) FILTER (WHERE check_array(uid) = '{}') AS uuid_ok,
       count(*) FILTER (WHERE check_array(bl) = '{}') AS bool_ok,
       count(*) FILTER (WHERE check_array(oi) = '{}') AS oid_ok,
       count(*) FILTER (WHERE check_array(mny) = '{}') AS money_ok,
       count(*) FILTER (WHERE check_array(tm) = '{}') AS time_ok,
       count(*) FILTER (WHERE check_array(ivl) = '{}') AS interval_ok,
       count(*) FILTER (WHERE check_array(cmp) = '{}') AS composite_ok,
       count(*) FILTER (WHERE check_array(dom) = '{}') AS domain_ok
FROM small_more;

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

--
-- Large arrays of the other types: 100 000 elements, with NULLs and
-- duplicates.  Texts with distinct prefixes sort by their prefix keys; texts
-- sharing long prefixes, which the keys do not tell apart, by the
-- comparator.
--
SELECT setseed(0.75);
CREATE TEMP TABLE big_more AS
SELECT array_agg(CASE WHEN r1 < 0.01 THEN NULL
                      WHEN r1 < 0.011 THEN 'NaN'::numeric
                      WHEN r1 < 0.012 THEN 'Infinity'::numeric
                      WHEN r1 < 0.013 THEN '-Infinity'::numeric
                      WHEN r1 < 0.1 THEN round((r2 * 100)::numeric, 1)
                      ELSE ((r2 - 0.5) * 1e12)::numeric(30, 3) END ORDER BY g) AS num,
       array_agg(CASE WHEN r1 < 0.01 THEN NULL
                      WHEN r1 < 0.02 THEN ''
                      WHEN r1 < 0.1 THEN chr(1000 + (r2 * 200)::int) || (r2 * 10)::int
                      ELSE md5(r2::text) END ORDER BY g) AS txt,
       array_agg(CASE WHEN r1 < 0.01 THEN NULL
                      ELSE 'https://example.com/shared/path/' || (r2 * 5000)::int END ORDER BY g) AS url,
       array_agg(CASE WHEN r1 < 0.01 THEN NULL
                      ELSE (CASE WHEN r1 < 0.5 THEN (r2 * 1000)::int || ' ' ELSE ((r2 * 1000)::int)::text END)::bpchar END ORDER BY g) AS bpc,
       array_agg(CASE WHEN r1 < 0.01 THEN NULL
                      ELSE decode(md5(((r2 * 50000)::int)::text), 'hex') END ORDER BY g) AS byt,
       array_agg(CASE WHEN r1 < 0.01 THEN NULL
                      WHEN r1 < 0.5 THEN md5(((r2 * 50000)::int)::text)::uuid
                      ELSE ('00000000-0000-0000-' || lpad(to_hex((r2 * 65535)::int), 4, '0') ||
                            '-000000000000')::uuid END ORDER BY g) AS uid,
       array_agg(CASE WHEN r1 < 0.01 THEN NULL ELSE r2 < 0.5 END ORDER BY g) AS bl,
       array_agg(CASE WHEN r1 < 0.01 THEN NULL ELSE (r2 * 4294967295)::int8::oid END ORDER BY g) AS oi,
       array_agg(CASE WHEN r1 < 0.01 THEN NULL ELSE ((r2 - 0.5) * 1e9)::numeric(20, 2)::money END ORDER BY g) AS mny,
       array_agg(CASE WHEN r1 < 0.01 THEN NULL ELSE time '00:00' + r2 * interval '24 hours' END ORDER BY g) AS tm,
       array_agg(CASE WHEN r1 < 0.01 THEN NULL
                      WHEN r1 < 0.5 THEN (r2 * 1000)::int * interval '1 day'
                      ELSE (r2 * 1000)::int * interval '24 hours' END ORDER BY g) AS ivl,
       array_agg(CASE WHEN r1 < 0.01 THEN NULL ELSE (1 + r2 * 100000)::int::arr_posint END ORDER BY g) AS dom
FROM (SELECT g, random() AS r1, random() AS r2
      FROM generate_series(1, 100000) g) s;
SELECT cardinality(num) AS n,
       (SELECT count(*) FROM unnest(txt) x WHERE x IS NULL) BETWEEN 900 AND 1100 AS txt_nulls,
       (SELECT count(DISTINCT x) FROM unnest(url) x) < 6000 AS url_duplicates
FROM big_more;

-- Each type: ascending (NULLs last) sorted, texts compared so that equal
-- elements printed differently (1.5, 1.50) must keep their input order;
-- descending (NULLs first) permutation, which must keep equal elements in
-- input order.
SELECT gpusort(num)::text = ref_sort(num, false, false)::text AS numeric,
       gpusort_permutation(num, true) = ref_perm(num, true, true) AS numeric_perm,
       gpusort(txt COLLATE "C")::text = ref_sort(txt, false, false, 'C')::text AS text_c,
       gpusort_permutation(txt COLLATE "C", true) = ref_perm(txt, true, true, 'C') AS text_c_perm,
       gpusort(txt)::text = ref_sort(txt, false, false)::text AS text,
       gpusort_permutation(txt, true) = ref_perm(txt, true, true) AS text_perm
FROM big_more;
SELECT gpusort(url COLLATE "C")::text = ref_sort(url, false, false, 'C')::text AS shared_prefix_c,
       gpusort_permutation(url COLLATE "C", true) = ref_perm(url, true, true, 'C') AS shared_prefix_c_perm,
       gpusort(url COLLATE arr_libc_c_utf8)::text = ref_sort(url, false, false, 'arr_libc_c_utf8')::text AS libc,
       gpusort_permutation(url COLLATE arr_libc_c_utf8, true) = ref_perm(url, true, true, 'arr_libc_c_utf8') AS libc_perm,
       gpusort(url::varchar[] COLLATE "C")::text = ref_sort(url::varchar[], false, false, 'C')::text AS varchar_c,
       gpusort_permutation(url::varchar[] COLLATE "C", true) = ref_perm(url::varchar[], true, true, 'C') AS varchar_c_perm
FROM big_more;
SELECT gpusort(bpc)::text = ref_sort(bpc, false, false)::text AS bpchar,
       gpusort_permutation(bpc, true) = ref_perm(bpc, true, true) AS bpchar_perm,
       gpusort(bpc COLLATE "C")::text = ref_sort(bpc, false, false, 'C')::text AS bpchar_c,
       gpusort_permutation(bpc COLLATE "C", true) = ref_perm(bpc, true, true, 'C') AS bpchar_c_perm,
       gpusort(byt)::text = ref_sort(byt, false, false)::text AS bytea,
       gpusort_permutation(byt, true) = ref_perm(byt, true, true) AS bytea_perm
FROM big_more;
SELECT gpusort(uid)::text = ref_sort(uid, false, false)::text AS uuid,
       gpusort_permutation(uid, true) = ref_perm(uid, true, true) AS uuid_perm,
       gpusort(bl)::text = ref_sort(bl, false, false)::text AS bool,
       gpusort_permutation(bl, true) = ref_perm(bl, true, true) AS bool_perm,
       gpusort(oi)::text = ref_sort(oi, false, false)::text AS oid,
       gpusort_permutation(oi, true) = ref_perm(oi, true, true) AS oid_perm
FROM big_more;
SELECT gpusort(mny)::text = ref_sort(mny, false, false)::text AS money,
       gpusort_permutation(mny, true) = ref_perm(mny, true, true) AS money_perm,
       gpusort(tm)::text = ref_sort(tm, false, false)::text AS time,
       gpusort_permutation(tm, true) = ref_perm(tm, true, true) AS time_perm,
       gpusort(ivl)::text = ref_sort(ivl, false, false)::text AS interval,
       gpusort_permutation(ivl, true) = ref_perm(ivl, true, true) AS interval_perm,
       gpusort(dom)::text = ref_sort(dom, false, false)::text AS domain,
       gpusort_permutation(dom, true) = ref_perm(dom, true, true) AS domain_perm
FROM big_more;
-- The other NULL placements, on numeric and text.
SELECT gpusort(num, false, true)::text = ref_sort(num, false, true)::text AS numeric_asc_nulls_first,
       gpusort(num, true, false)::text = ref_sort(num, true, false)::text AS numeric_desc_nulls_last,
       gpusort_permutation(txt COLLATE "C", false, true) = ref_perm(txt, false, true, 'C') AS text_perm_asc_nulls_first,
       gpusort_permutation(txt COLLATE "C", true, false) = ref_perm(txt, true, false, 'C') AS text_perm_desc_nulls_last
FROM big_more;

-- Where the engine sorts: the keys of uuid, bool, oid, money and time, the
-- prefix keys of numeric and of text under "C"; a libc collation other
-- than C and interval are sorted by the comparator alone.
SELECT gpusort_stats_reset();
SELECT cardinality(gpusort(uid)) + cardinality(gpusort_permutation(bl)) +
       cardinality(gpusort(oi)) + cardinality(gpusort(mny)) +
       cardinality(gpusort_permutation(tm)) + cardinality(gpusort(num)) +
       cardinality(gpusort_permutation(txt COLLATE "C")) AS elements
FROM big_more;
SELECT sum(sorts) AS engine_sorts FROM gpusort_stats();
SELECT gpusort_stats_reset();
SELECT cardinality(gpusort(txt COLLATE arr_libc_c_utf8)) +
       cardinality(gpusort_permutation(ivl)) AS elements
FROM big_more;
SELECT sum(sorts) AS engine_sorts FROM gpusort_stats();

DROP TABLE small_more, big_more;
DROP TYPE arr_pair;
DROP TYPE arr_mood;
DROP DOMAIN arr_posint;
DROP DOMAIN arr_ctext;
DROP DOMAIN arr_int4s;
DROP COLLATION arr_libc_c_utf8;
