-- gpusort loads with LOAD and session_preload_libraries as well as with
-- shared_preload_libraries (which the other suites use).
CREATE TABLE load_t AS SELECT g AS id, g % 100 AS k FROM generate_series(1, 50000) g;
ANALYZE load_t;
SET work_mem = '64MB';

-- Not loaded yet: PostgreSQL's Sort.
EXPLAIN (COSTS OFF) SELECT * FROM load_t ORDER BY k;

LOAD 'gpusort';
EXPLAIN (COSTS OFF) SELECT * FROM load_t ORDER BY k;
SELECT count(*), sum(id) FROM (SELECT id FROM load_t ORDER BY k, id OFFSET 10) s;

-- A new session that preloads it.
SELECT current_database() AS db \gset
ALTER DATABASE :"db" SET session_preload_libraries = 'gpusort';
\c
SET work_mem = '64MB';
EXPLAIN (COSTS OFF) SELECT * FROM load_t ORDER BY k;
SHOW gpusort.enabled;
ALTER DATABASE :"db" RESET session_preload_libraries;

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
CREATE TEMP TABLE updated_objects AS
SELECT pg_describe_object(classid, objid, objsubid) AS object,
       CASE WHEN classid = 'pg_proc'::regclass
            THEN (SELECT format('%s(%s) %s %s %s %s', proname, pg_get_function_arguments(p.oid),
                                prorettype::regtype, proisstrict, provolatile, proparallel)
                  FROM pg_proc p WHERE p.oid = objid) END AS definition
FROM pg_depend
WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpusort');
SELECT definition FROM updated_objects ORDER BY definition;
SELECT gpusort('{3,NULL,1,2}'::int4[]) AS sorted,
       gpusort_permutation('{3,NULL,1,2}'::float8[], true) AS perm,
       gpusort(ARRAY[1.5, 0.5]) AS numeric,
       gpusort(ARRAY['b', NULL, 'a'] COLLATE "C", true, nulls_first => NULL) AS text;
-- A fresh 1.1 has the same objects.
DROP EXTENSION gpusort;
CREATE EXTENSION gpusort;
SELECT extversion FROM pg_extension WHERE extname = 'gpusort';
SELECT count(*) AS objects,
       count(*) FILTER (WHERE (object, definition) IN (SELECT * FROM updated_objects)) AS same
FROM (SELECT pg_describe_object(classid, objid, objsubid) AS object,
             CASE WHEN classid = 'pg_proc'::regclass
                  THEN (SELECT format('%s(%s) %s %s %s %s', proname, pg_get_function_arguments(p.oid),
                                      prorettype::regtype, proisstrict, provolatile, proparallel)
                        FROM pg_proc p WHERE p.oid = objid) END AS definition
      FROM pg_depend
      WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
        AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpusort')) o;
SELECT count(*) AS updated_objects FROM updated_objects;
DROP EXTENSION gpusort;
