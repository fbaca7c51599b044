/*-------------------------------------------------------------------------
 *
 * stager.h
 *	  The rows that the GPU service holds for GpuSort nodes whose input
 *	  outgrew their memory budget (stager.c; CUDA builds only).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_STAGER_H
#define GPUSORT_STAGER_H

#include "postgres.h"

#include "engine/row_seams.h"

extern const RowStager service_stager;

#endif							/* GPUSORT_STAGER_H */
