-- What a host without a usable GPU hears, and counts: in auto, "no GPU"
-- once per session; with gpusort.device = gpu, one WARNING per statement
-- however many sorted runs it sorts; gpusort_stats() counts the sort and
-- its fallback once.  (Not run on GPU hosts: test/gpu/gpu-tests.sh leaves it
-- out.  Uses the helpers of node_plan.)
SET gpusort.min_rows = 0;
SET max_parallel_workers_per_gather = 0;
-- the DETAIL says why (no driver, a build without CUDA, ...): not here
\set VERBOSITY terse
CREATE TABLE ng_t AS SELECT g AS id, md5(g::text) AS s FROM generate_series(1, 200000) g;
ANALYZE ng_t;

-- With gpusort.device = gpu, a sort of many runs warns once.
SET gpusort.device = gpu;
SET gpusort.work_mem = '1MB';
SELECT gpusort_stats_reset();
SELECT count(*) FROM (SELECT * FROM ng_t ORDER BY s COLLATE "C" OFFSET 0) q;
SELECT engine, sorts, fallbacks FROM gpusort_stats();
-- and again in the next statement
SELECT count(*) FROM (SELECT * FROM ng_t ORDER BY id OFFSET 0) q;
-- and once for a parallel query, not once for each of its participants
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT count(*) FROM (SELECT * FROM ng_t ORDER BY s COLLATE "C" OFFSET 0) q;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- In auto, once per session, whatever sorts.
SET gpusort.device = auto;
SELECT count(*) FROM (SELECT * FROM ng_t ORDER BY id OFFSET 0) q;
SELECT count(*) FROM (SELECT * FROM ng_t ORDER BY s COLLATE "C" OFFSET 0) q;

-- EXPLAIN says why the GPU held nothing once, not "no GPU: no GPU: ...".
SELECT count(*) AS said_twice
FROM explain_analyze('SELECT * FROM ng_t ORDER BY id') line
WHERE line ~ 'no GPU: no GPU';

\set VERBOSITY default
RESET gpusort.work_mem;
RESET gpusort.device;
DROP TABLE ng_t;
RESET gpusort.min_rows;
