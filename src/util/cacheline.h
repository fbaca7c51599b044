/*-------------------------------------------------------------------------
 *
 * cacheline.h
 *	  The size of a CPU cache line, for the layouts that keep a row within
 *	  one (row_store.c) or give each gathered row a line (prefault.h).
 *
 * 64 bytes on the x86-64 and Arm hosts gpusort runs on.  PostgreSQL's
 * PG_CACHE_LINE_SIZE (128) is a padding against false sharing, not this.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUSORT_CACHELINE_H
#define GPUSORT_CACHELINE_H

#define GPUSORT_CACHE_LINE	64

#endif							/* GPUSORT_CACHELINE_H */
