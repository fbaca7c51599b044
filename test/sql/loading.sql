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
