/*-------------------------------------------------------------------------
 *
 * mark_rows.h
 *	  The rows a merge join may go back to, kept by a GpuSort whose rows are
 *	  their one sort key, so that no Material need stand above it
 *	  (mark_rows.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MARK_ROWS_H
#define MARK_ROWS_H

#include "postgres.h"

#include "executor/tuptable.h"

typedef struct MarkRows MarkRows;

/* An empty record, in the current memory context. */
extern MarkRows *mark_rows_create(void);

/* Marks the current position: rows before it are forgotten. */
extern void mark_rows_mark(MarkRows *marks);

/* Goes back to the mark: the rows since are returned again. */
extern void mark_rows_restore(MarkRows *marks);

/* Forgets every row and the mark, for a new read of the input. */
extern void mark_rows_reset(MarkRows *marks);

/*
 * The next row given again since a restore, in slot (a virtual slot of one
 * column), or NULL when the rows are read anew.
 */
extern TupleTableSlot *mark_rows_replay(MarkRows *marks, TupleTableSlot *slot);

/* Records a row read anew (the slot's one column), once a mark is set. */
extern void mark_rows_add(MarkRows *marks, TupleTableSlot *slot);

/* The rows given again since the record was made. */
extern int64 mark_rows_replayed(const MarkRows *marks);

/* The memory the record holds. */
extern Size mark_rows_memory(const MarkRows *marks);

#endif							/* MARK_ROWS_H */
