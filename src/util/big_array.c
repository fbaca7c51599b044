/*-------------------------------------------------------------------------
 *
 * big_array.c
 *	  Large arrays that grow by remapping their pages (big_array.h).
 *
 * A freed array's mapping is kept, up to KEPT_MAPPINGS of them and
 * KEPT_BYTES in all, for the next array of its size: a row store emptied
 * for its next sorted run or held batch maps the same sizes again, and the
 * kernel would fault and zero every page anew (a third of the time a row
 * took to be added at 4 MB).  The kept mappings are unmapped when a sort
 * node ends (big_array_release_kept) and at the transaction's end.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>
#include <unistd.h>

#include "access/xact.h"
#include "utils/memutils.h"

#include "util/big_array.h"
#include "util/prefault.h"

#define KEPT_MAPPINGS		64
#define KEPT_BYTES			((Size) 64 * 1024 * 1024)

typedef struct KeptMapping
{
	char	   *data;
	Size		bytes;
} KeptMapping;

static KeptMapping kept[KEPT_MAPPINGS];
static int	nkept = 0;
static Size kept_bytes = 0;
static bool release_registered = false;

/* Unmaps a mapping: a large one on a helper thread, where one runs. */
static void
unmap_mapping(char *data, Size bytes)
{
	if (!prefault_unmap(data, bytes))
		munmap(data, bytes);
}

void
big_array_release_kept(void)
{
	while (nkept > 0)
	{
		nkept--;
		unmap_mapping(kept[nkept].data, kept[nkept].bytes);
	}
	kept_bytes = 0;
}

static void
release_at_end(XactEvent event, void *arg)
{
	big_array_release_kept();
}

/*
 * Keeps a freed mapping for reuse: false where there is no room, or where
 * the transaction is ending (an error's cleanup frees after the callback).
 */
static bool
keep_mapping(char *data, Size bytes)
{
	if (nkept == KEPT_MAPPINGS || kept_bytes + bytes > KEPT_BYTES ||
		!IsTransactionState())
		return false;
	if (!release_registered)
	{
		RegisterXactCallback(release_at_end, NULL);
		release_registered = true;
	}
	kept[nkept].data = data;
	kept[nkept].bytes = bytes;
	nkept++;
	kept_bytes += bytes;
	return true;
}

/* A kept mapping of exactly bytes (its pages mapped, not zeroed), or NULL. */
static char *
kept_mapping(Size bytes)
{
	for (int i = nkept - 1; i >= 0; i--)
		if (kept[i].bytes == bytes)
		{
			char	   *data = kept[i].data;

			kept[i] = kept[--nkept];
			kept_bytes -= bytes;
			return data;
		}
	return NULL;
}

static Size
page_size(void)
{
	static Size page = 0;

	if (page == 0)
		page = (Size) sysconf(_SC_PAGESIZE);
	return page;
}

Size
big_array_bytes(Size bytes)
{
	return TYPEALIGN(page_size(), Max(bytes, 1));
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
	data = kept_mapping(bytes);
	if (data == NULL)
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

/* The array's handle, once its mapping is gone: data NULL. */
static void
forget_mapping(BigArray *array)
{
	array->data = NULL;
	array->bytes = 0;
	array->discarded = 0;
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
	/* kept for the next array of its size, or unmapped */
	if (array->data != NULL && !keep_mapping(array->data, array->bytes))
		unmap_mapping(array->data, array->bytes);
	forget_mapping(array);
}

void
big_array_unmap(BigArray *array)
{
	if (array->data != NULL)
	{
		prefault_cancel();
		munmap(array->data, array->bytes);
	}
	forget_mapping(array);
}

void
big_array_discard(BigArray *array, Size upto)
{
	Size		end = TYPEALIGN_DOWN(page_size(), Min(upto, array->bytes));

	if (array->data == NULL || end <= array->discarded)
		return;
	madvise(array->data + array->discarded, end - array->discarded, MADV_DONTNEED);
	array->discarded = end;
}
