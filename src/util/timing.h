/*-------------------------------------------------------------------------
 *
 * timing.h
 *	  Milliseconds elapsed, for the phase times that DEBUG1 and EXPLAIN
 *	  report.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_TIMING_H
#define GPUSORT_TIMING_H

#include "postgres.h"

#include "portability/instr_time.h"

/* Milliseconds since start (taken with INSTR_TIME_SET_CURRENT). */
static inline double
ms_since(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

#endif							/* GPUSORT_TIMING_H */
