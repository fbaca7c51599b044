/* gpusort--1.1--1.2.sql: from 1.1 to 1.2. */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION gpusort UPDATE TO '1.2'" to load this file. \quit

-- 1.2 describes every function (COMMENT ON FUNCTION); nothing else changes.

-- COMMENTS (\df+ and \dx+ show them) --

COMMENT ON FUNCTION gpusort(anyarray, boolean, boolean) IS
  'Sorts a one-dimensional array by its type''s default btree order, on the GPU or the CPU engine (stable; NULLs first when descending, unless nulls_first says otherwise)';
COMMENT ON FUNCTION gpusort_permutation(anyarray, boolean, boolean) IS
  'Returns the 1-based positions of an array''s elements in sorted order (stable), as gpusort() would order them';
COMMENT ON FUNCTION gpusort_devices() IS
  'Lists the GPUs this backend sees: id, name, memory in MB, multiprocessors, compute capability (no rows without a GPU)';
COMMENT ON FUNCTION gpusort_gpu_start() IS
  'Starts the GPU in this backend now; returns the milliseconds it took (0 if started already, NULL without a GPU)';
COMMENT ON FUNCTION gpusort_stats() IS
  'What this backend sorted on each engine: sorts, rows, milliseconds, fallbacks and the last fallback reason';
COMMENT ON FUNCTION gpusort_stats_reset() IS
  'Zeroes the counters of gpusort_stats() in this backend';
