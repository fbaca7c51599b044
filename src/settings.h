/*-------------------------------------------------------------------------
 *
 * settings.h
 *	  gpusort's settings (GUCs), read by every layer.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_SETTINGS_H
#define GPUSORT_SETTINGS_H

#include "postgres.h"

#include "miscadmin.h"
#include "nodes/pg_list.h"

/*
 * Where sort jobs run: gpusort.device, auto or the number of the registered
 * engine that it names (engine.h: "cpu" is 0, "gpu" 1).
 */
#define GPUSORT_DEVICE_AUTO		(-1)
#define GPUSORT_MAX_ENGINES		4

/* GUC variables (settings.c) */
extern bool gpusort_enabled;

/*
 * Was gpusort.enabled's value set by someone (the configuration file, ALTER
 * ROLE/DATABASE/SYSTEM, a connection option, SET) rather than left at its
 * default?  The planner hook then acts however the library was loaded.
 */
extern bool gpusort_enabled_explicit;

/*
 * Was the library loaded by choice (a preload setting or LOAD), rather than
 * by a call of one of its functions (_PG_init sets it)?
 */
extern bool gpusort_loaded_by_choice;

/*
 * Do gpusort's planner hooks act on the plans made now: gpusort.enabled on,
 * and the library loaded by choice or gpusort.enabled set explicitly (so
 * that sorting an array does not change how the session's queries run)?
 */
extern bool gpusort_planner_acts(void);
extern int	gpusort_min_rows;
extern int	gpusort_device;
extern int	gpusort_work_mem;
extern bool gpusort_spill;
extern bool gpusort_window_functions;
extern bool gpusort_parallel_window;
extern int	gpusort_min_run_rows;
extern int	gpusort_gpu_id;
extern int	gpusort_gpu_memory;
extern bool gpusort_gpu_prestart;
extern bool gpusort_service;
extern char *gpusort_service_gpus;
extern int	gpusort_service_memory;
extern int	gpusort_service_buffer;
extern int	gpusort_held_gpus;
extern int	gpusort_service_wait;
extern int	gpusort_prefault_threads;
extern int	gpusort_key_threads;
extern int	gpusort_xfrm_scramble;
extern bool gpusort_debug_hold_rows;
extern int	gpusort_debug_hold_stores;
extern bool gpusort_huge_pages;

/* Memory budget of one GpuSort node, in kilobytes. */
static inline int
gpusort_memory_budget_kb(void)
{
	return gpusort_work_mem >= 0 ? gpusort_work_mem : work_mem;
}

/*
 * The CUDA device numbers that a value of gpusort.service_gpus names, in its
 * order, into *ids (a List of int; NIL: none named, so all).  False where
 * the value is not a list of non-negative integers, with the entry that is
 * not one in *bad (palloc'd; NULL where the list itself is malformed: an
 * empty entry, an unbalanced quote).
 */
extern bool gpusort_parse_service_gpus(const char *value, List **ids, char **bad);

/* Defines them (_PG_init), all but gpusort.device. */
extern void gpusort_define_settings(void);

/*
 * Defines gpusort.device, whose values are auto and the names of the n
 * registered engines (engines[i] is engine i's), the CPU engine's last, and
 * reserves the prefix gpusort: last, once the engines are registered.
 */
extern void gpusort_define_device(const char *const *engines, int n);

#endif							/* GPUSORT_SETTINGS_H */
