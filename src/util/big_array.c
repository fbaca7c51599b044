/*-------------------------------------------------------------------------
 *
 * big_array.c
 *	  Large arrays that grow by remapping their pages (big_array.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>
#include <unistd.h>

#include "utils/memutils.h"

#include "util/big_array.h"
#include "util/prefault.h"

Size
big_array_bytes(Size bytes)
{
	static Size page = 0;

	if (page == 0)
		page = (Size) sysconf(_SC_PAGESIZE);
	return TYPEALIGN(page, Max(bytes, 1));
}

static void
unmap_array(void *arg)
{
	big_array_free((BigArray *) arg);
}

static void
out_of_memory(Size bytes)
{
	ereport(ERROR,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("out of memory"),
			 errdetail("Failed to map an array of %zu bytes: %m.", bytes)));
}

BigArray *
big_array_create(MemoryContext cxt, Size bytes)
{
	BigArray   *array = MemoryContextAllocZero(cxt, sizeof(BigArray));
	void	   *data;

	bytes = big_array_bytes(bytes);
	data = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (data == MAP_FAILED)
		out_of_memory(bytes);
	array->data = data;
	array->bytes = bytes;
	array->unmap.func = unmap_array;
	array->unmap.arg = array;
	MemoryContextRegisterResetCallback(cxt, &array->unmap);
	return array;
}

void
big_array_resize(BigArray *array, Size bytes)
{
	void	   *data;

	Assert(array->data != NULL);
	bytes = big_array_bytes(bytes);
	if (bytes == array->bytes)
		return;
#ifdef MREMAP_MAYMOVE
	data = mremap(array->data, array->bytes, bytes, MREMAP_MAYMOVE);
	if (data == MAP_FAILED)
		out_of_memory(bytes);
#else
	data = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (data == MAP_FAILED)
		out_of_memory(bytes);
	memcpy(data, array->data, Min(bytes, array->bytes));
	munmap(array->data, array->bytes);
#endif
	array->data = data;
	array->bytes = bytes;
}

void
big_array_free(BigArray *array)
{
	/*
	 * Nothing that the helper threads were handed may read the array once it
	 * goes: a memory context's callbacks run latest first, so when a store's
	 * context is reset or deleted (at the node's end, or an error's, while
	 * its rows are being gathered for the emit ring), its arrays are freed
	 * before the store's own cancel.
	 */
	if (array->data != NULL)
		prefault_cancel();
	/* a large mapping is unmapped by a helper thread, where one runs */
	if (array->data != NULL && !prefault_unmap(array->data, array->bytes))
		munmap(array->data, array->bytes);
	array->data = NULL;
	array->bytes = 0;
}
