-- gpusort's plan node follows an explicit choice: the library loaded by
-- shared_preload_libraries (which the other suites use),
-- session_preload_libraries or LOAD, or gpusort.enabled set explicitly; not
-- the loading of the library by a call of one of its functions.
CREATE TABLE load_t AS SELECT g AS id, g % 100 AS k FROM generate_series(1, 50000) g;
ANALYZE load_t;
SET work_mem = '64MB';
SELECT current_database() AS db \gset

-- Not loaded yet: PostgreSQL's Sort.
EXPLAIN (COSTS OFF) SELECT * FROM load_t ORDER BY k;

-- CREATE EXTENSION and a call of an array function load the library; the
-- plans stay PostgreSQL's.
CREATE EXTENSION gpusort;
SELECT gpusort('{3,1,2}'::int4[]);
EXPLAIN (COSTS OFF) SELECT * FROM load_t ORDER BY k;
SHOW gpusort.enabled;

-- gpusort.enabled set explicitly puts GpuSort in the plans; back at its
-- default (RESET, or a SET rolled back), it does not.
SET gpusort.enabled = on;
EXPLAIN (COSTS OFF) SELECT * FROM load_t ORDER BY k;
RESET gpusort.enabled;
EXPLAIN (COSTS OFF) SELECT * FROM load_t ORDER BY k;
BEGIN;
SET LOCAL gpusort.enabled = on;
EXPLAIN (COSTS OFF) SELECT * FROM load_t ORDER BY k;
ROLLBACK;
EXPLAIN (COSTS OFF) SELECT * FROM load_t ORDER BY k;

-- DROP EXTENSION removes the functions, not the library: the node stays
-- as gpusort.enabled says, and off turns it off.
SET gpusort.enabled = on;
DROP EXTENSION gpusort;
EXPLAIN (COSTS OFF) SELECT * FROM load_t ORDER BY k;
SET gpusort.enabled = off;
EXPLAIN (COSTS OFF) SELECT * FROM load_t ORDER BY k;

-- A setting of the database is explicit too, set before the library is
-- loaded (by the function call here).
ALTER DATABASE :"db" SET gpusort.enabled = on;
\c
SET work_mem = '64MB';
CREATE EXTENSION gpusort;
EXPLAIN (COSTS OFF) SELECT * FROM load_t ORDER BY k;
DROP EXTENSION gpusort;
ALTER DATABASE :"db" RESET gpusort.enabled;

-- LOAD is a choice.
\c
SET work_mem = '64MB';
LOAD 'gpusort';
EXPLAIN (COSTS OFF) SELECT * FROM load_t ORDER BY k;
SELECT count(*), sum(id) FROM (SELECT id FROM load_t ORDER BY k, id OFFSET 10) s;
SET gpusort.enabled = off;
EXPLAIN (COSTS OFF) SELECT * FROM load_t ORDER BY k;

-- So is session_preload_libraries: a new session that preloads it.
ALTER DATABASE :"db" SET session_preload_libraries = 'gpusort';
\c
SET work_mem = '64MB';
EXPLAIN (COSTS OFF) SELECT * FROM load_t ORDER BY k;
SHOW gpusort.enabled;
ALTER DATABASE :"db" RESET session_preload_libraries;

-- The extension's objects, with their definitions and comments, to compare
-- an updated extension with a fresh one.
CREATE FUNCTION gpusort_objects(OUT object text, OUT definition text, OUT comment text)
RETURNS SETOF record LANGUAGE sql AS $$
  SELECT pg_describe_object(classid, objid, objsubid),
         CASE WHEN classid = 'pg_proc'::regclass
              THEN (SELECT format('%s(%s) %s %s %s %s', proname, pg_get_function_arguments(p.oid),
                                  prorettype::regtype, proisstrict, provolatile, proparallel)
                    FROM pg_proc p WHERE p.oid = objid) END,
         obj_description(objid, classid::regclass::text)
  FROM pg_depend
  WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
    AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpusort')
    -- a view's row type is a member of its own from PostgreSQL 18 on
    AND classid <> 'pg_type'::regclass
$$;

-- The extension at version 1.0, updated to 1.1: the array functions'
-- overloads for eight types become one anyarray function each.
CREATE EXTENSION gpusort VERSION '1.0';
SELECT count(*) AS overloads, bool_and(proisstrict) AS strict
FROM pg_proc WHERE proname IN ('gpusort', 'gpusort_permutation');
SELECT gpusort('{3,NULL,1,2}'::int4[]) AS sorted,
       gpusort_permutation('{3,NULL,1,2}'::float8[], true) AS perm;
SELECT gpusort(ARRAY[1.5, 0.5]);
ALTER EXTENSION gpusort UPDATE TO '1.1';
SELECT extversion FROM pg_extension WHERE extname = 'gpusort';
CREATE TEMP TABLE updated_objects AS SELECT * FROM gpusort_objects();
SELECT definition FROM updated_objects ORDER BY definition;
SELECT gpusort('{3,NULL,1,2}'::int4[]) AS sorted,
       gpusort_permutation('{3,NULL,1,2}'::float8[], true) AS perm,
       gpusort(ARRAY[1.5, 0.5]) AS numeric,
       gpusort(ARRAY['b', NULL, 'a'] COLLATE "C", true, nulls_first => NULL) AS text;
-- A fresh 1.1 has the same objects.
DROP EXTENSION gpusort;
CREATE EXTENSION gpusort VERSION '1.1';
SELECT extversion FROM pg_extension WHERE extname = 'gpusort';
SELECT count(*) AS objects,
       count(*) FILTER (WHERE EXISTS (SELECT FROM updated_objects u
                                      WHERE (u.*) IS NOT DISTINCT FROM (o.*))) AS same
FROM gpusort_objects() o;
SELECT count(*) AS updated_objects FROM updated_objects;

-- 1.1 updated to 1.3 (the default version): every function has a comment.
ALTER EXTENSION gpusort UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'gpusort';
SELECT object, comment IS NOT NULL AS commented FROM gpusort_objects() ORDER BY object;
DROP TABLE updated_objects;
CREATE TEMP TABLE updated_objects AS SELECT * FROM gpusort_objects();

-- 1.0 updated to 1.3 through 1.1 and 1.2, and a fresh 1.3: the same
-- objects and comments.
DROP EXTENSION gpusort;
CREATE EXTENSION gpusort VERSION '1.0';
ALTER EXTENSION gpusort UPDATE TO '1.3';
SELECT extversion FROM pg_extension WHERE extname = 'gpusort';
-- The GPU service is for superusers and pg_read_all_stats, view and
-- functions alike.
SELECT has_table_privilege('pg_read_all_stats', 'gpusort_service', 'SELECT') AS view,
       bool_and(has_function_privilege('pg_read_all_stats', f, 'EXECUTE')) AS functions,
       bool_and(NOT has_function_privilege('public', f, 'EXECUTE')) AS not_public
FROM unnest(ARRAY['gpusort_service_status()', 'gpusort_service_fallbacks()']) AS f;
SELECT count(*) AS objects,
       count(*) FILTER (WHERE EXISTS (SELECT FROM updated_objects u
                                      WHERE (u.*) IS NOT DISTINCT FROM (o.*))) AS same
FROM gpusort_objects() o;
DROP EXTENSION gpusort;
CREATE EXTENSION gpusort;
SELECT extversion FROM pg_extension WHERE extname = 'gpusort';
SELECT count(*) AS objects,
       count(*) FILTER (WHERE EXISTS (SELECT FROM updated_objects u
                                      WHERE (u.*) IS NOT DISTINCT FROM (o.*))) AS same
FROM gpusort_objects() o;
SELECT count(*) AS updated_objects FROM updated_objects;
SELECT gpusort('{3,NULL,1,2}'::int4[], true) AS sorted;
DROP EXTENSION gpusort;
DROP FUNCTION gpusort_objects();
