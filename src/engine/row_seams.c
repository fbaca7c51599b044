/*-------------------------------------------------------------------------
 *
 * row_seams.c
 *	  How an engine that holds rows (row_seams.h's RowStager) lays out the
 *	  tuples of a full store: the place of each block, and of each row.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "engine/row_seams.h"

Size
stored_rows_block_places(const StoredRows *rows, Size from, Size *block_places)
{
	for (int b = 0; b < rows->nblocks; b++)
	{
		block_places[b] = from;
		from = TYPEALIGN(8, from + rows->block_used[b]);
	}
	return from;
}

void
stored_rows_places(const StoredRows *rows, const Size *block_places, uint32 first,
				   uint32 n, int *block, uint64 *places, uint32 *lengths)
{
	for (uint32 i = 0; i < n; i++)
	{
		const char *tuple = (const char *) rows->rows[first + i];
		int			tried = 0;

		/* the rows lie in the blocks in the order they came */
		while (tuple < rows->block_start[*block] ||
			   tuple >= rows->block_start[*block] + rows->block_used[*block])
		{
			if (++tried > rows->nblocks)
				elog(ERROR, "GpuSort row outside its store's blocks");
			*block = (*block + 1) % rows->nblocks;
		}
		places[i] = block_places[*block] + (tuple - rows->block_start[*block]);
		lengths[i] = rows->rows[first + i]->t_len;
		if (rows->tail > 0)
			lengths[i] = MAXALIGN(lengths[i]) + rows->tail;
	}
}
