/*-------------------------------------------------------------------------
 *
 * cost.h
 *	  The cost model that chooses among the registered engines in
 *	  gpusort.device = auto.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_COST_H
#define GPUSORT_COST_H

#include "postgres.h"

#include "engine/sort_job.h"

/*
 * What a job is estimated to take on the CPU engine, in milliseconds: the
 * CPU engine's estimate_ms, which the others are weighed against.
 */
extern double cpu_estimate_ms(uint32 nrows, int nkeys);

/*
 * The engine that a sort of nrows rows and nkeys key columns goes to in
 * auto: the registered engine estimated fastest where one beats the CPU
 * engine, else the CPU engine, with *why the reason that the first engine
 * that could not take the job gave (NULL: the CPU engine is simply
 * estimated faster).
 */
extern SortEngineId sort_engine_fastest(uint32 nrows, int nkeys,
										const char **why);

#endif							/* GPUSORT_COST_H */
